/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Declarative command-line options: one table per verb drives parsing,
 * validation, defaults and the usage text (the idea of xdp-tools'
 * lib/util/params.c).  Each entry names a field of the verb's options
 * struct by offset; parsing fills it and, when asked, a "given" flag.
 */
#ifndef PACER_OPTS_H
#define PACER_OPTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "cli_values.h"

enum opt_type {
	OPT_END = 0,
	OPT_SECTION,  /* a heading (help) in the usage text; parses nothing */
	OPT_INCLUDE,  /* the entries of .sub, their offsets relative to .off */
	OPT_BOOL,     /* a flag without value: bool */
	OPT_U32,      /* integer in [min, max]: uint32_t */
	OPT_U64,      /* integer in [min, max]: uint64_t */
	OPT_DURATION, /* positive duration of at most max ns: uint64_t */
	OPT_DECIMAL,  /* decimal number within dmin..dmax (see OPT_*_OPEN): double */
	OPT_ENUM,     /* one of .choices, or a name .lookup knows (.arg lists them): uint32_t */
	OPT_STRING,   /* any non-empty text: const char * */
	OPT_IFNAME,   /* an interface name: const char * */
	OPT_ADDRESS,  /* IPv4 or IPv6 address: struct opt_address */
	OPT_SAMPLING, /* "1/N", "N" or "off": uint64_t 32-bit hash threshold (0: off) */
	OPT_CUSTOM,   /* .parse decides */
};

/* Flags of an entry. */
#define OPT_POSITIONAL (1u << 0) /* an argument, not an option; .name is its metavar */
#define OPT_OPTIONAL   (1u << 1) /* positional that may be missing */
#define OPT_REQUIRED   (1u << 2) /* option that must be given */
#define OPT_POW2       (1u << 3) /* integer must be a power of two */
#define OPT_OFF        (1u << 4) /* "off" is accepted and stores 0 */
#define OPT_MIN_OPEN   (1u << 5) /* decimal: dmin itself is refused */
#define OPT_MAX_OPEN   (1u << 6) /* decimal: dmax itself is refused */
#define OPT_CONF       (1u << 7) /* a key of the --config file (load's table) */
#define OPT_LIVE       (1u << 8) /* ... that `set` can change */
#define OPT_HIDDEN     (1u << 9) /* left out of the usage (refused options) */

struct opt_choice {
	const char *name;
	uint32_t value;
};

struct opt_address {
	const char *text; /* as given; NULL while not given */
	struct pacer_addr addr;
};

struct opt_spec;
/* A custom value parser: 0, or non-zero with why (what was expected) in why. */
typedef int (*opt_parse_fn)(const struct opt_spec *s, const char *arg, void *field, char *why,
			    size_t len);

struct opt_spec {
	const char *name;   /* long name without "--"; metavar for a positional */
	char short_name;    /* 'o' for -o, or 0 */
	enum opt_type type;
	unsigned flags;
	const char *arg;    /* metavar ("DUR"); enums default to "a|b|c" */
	const char *help;   /* usage text; '\n' continues on an indented line */
	const char *dflt;   /* value before the command line, shown in the usage */
	size_t off;         /* field, from the start of the options struct */
	size_t given;       /* OPT_GIVEN(): a bool set when the option is given; 0: none */
	uint64_t min, max;  /* integers; max for durations */
	double dmin, dmax;  /* decimals */
	const struct opt_choice *choices; /* enums: NULL-name terminated */
	int (*lookup)(const char *name, uint32_t *value); /* enums without .choices */
	const char *why;    /* what a bad value should have been; derived from the type if NULL */
	opt_parse_fn parse; /* OPT_CUSTOM */
	const struct opt_spec *sub; /* OPT_INCLUDE */
};

#define OPT_FIELD(type, member) .off = offsetof(type, member)
#define OPT_GIVEN(type, member) .given = offsetof(type, member) + 1

struct opt_verb {
	const char *program;  /* a tool's own name for the usage line; NULL: "xdp-pacer VERB" */
	const char *name;     /* "load" */
	const char *synopsis; /* after "Usage: xdp-pacer load " */
	const char *intro;    /* what the verb does, before the options */
	const char *args;     /* the positionals as a phrase: "an interface name" */
	const struct opt_spec *opts; /* OPT_END-terminated */
	const char *epilog;   /* after the options */
	bool hide_defaults;   /* the usage leaves them out (set: only what is given changes) */
};

/* What was wrong with a command line. */
struct opt_error {
	char opt[64];      /* "--rows" or "IFNAME"; empty: msg is the whole message */
	const char *value; /* the bad value as given (argv or --config storage) */
	char why[256];
	char msg[640];     /* the whole message */
	bool hint;         /* worth pointing at --help */
};

#define OPTS_HELP (-1) /* -h/--help: the usage was printed */

/*
 * Apply the defaults, then parse argv (argv[0] is the verb) into opts.
 * 0; OPTS_HELP after printing the usage to help_out; 2 with e filled.
 */
int opts_parse(const struct opt_verb *v, int argc, char **argv, void *opts, FILE *help_out,
	       struct opt_error *e);

/* The usage text, from the table. */
void opts_usage(const struct opt_verb *v, FILE *f);

/* One value for s into opts, as parsing would: 0, or 2 with e filled. */
int opts_parse_value(const struct opt_spec *s, const char *arg, void *opts, struct opt_error *e);

/* The entry named name (including included tables), or NULL.  *base: its struct offset. */
const struct opt_spec *opts_find(const struct opt_spec *t, const char *name, size_t *base);

/*
 * Number written as decimal ("0.001", "1e-3", "2"), nothing else around
 * it: 0 or -EINVAL / -ERANGE (overflow).
 */
int parse_decimal(const char *s, double *out);

/* "1/N", "N" or "off" into a 1/N sampling threshold (0 for off). 0 or -EINVAL. */
int parse_sampling(const char *s, uint64_t *thresh);

#endif
