/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * What a load keeps of the one before it: the maps of the running limiter
 * it replaces (`load --replace`), or the pins a stopped one left (`unload
 * --keep-maps`, `systemctl stop`).  Map by map (pins.h: STATE, DATA, LOAD)
 * each is kept as it is, carried into a map of this release's definition
 * (a release that changed it), or made afresh; the stamp says which
 * release's definitions the earlier maps have, so none is read under
 * another meaning.
 */
#ifndef PACER_PIN_KEEP_H
#define PACER_PIN_KEEP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "pacer_abi.h"
#include "pins.h"

struct bpf_object;

enum pin_keep_how {
	PIN_KEEP_NONE,   /* no earlier map: made afresh, nothing lost */
	PIN_KEEP_REUSE,  /* the earlier map itself, given to the new program */
	PIN_KEEP_CARRY,  /* a map of this release's definition, the earlier one's contents copied in */
	PIN_KEEP_FRESH,  /* made afresh, the earlier one's contents dropped (why[] says why) */
};

struct pin_keep {
	bool have;                       /* there was an earlier load */
	int fd[PACER_MAP_MAX];           /* its maps; -1: none */
	int meta_fd;                     /* its stamp's map; -1: unstamped */
	struct pacer_pin_meta meta;      /* its stamp (unstamped: 0.1.0's) */
	struct pacer_layout layout;      /* its fixed layout */
	bool layout_ok;                  /* the layout map was read and is this ABI's */
	enum pin_keep_how how[PACER_MAP_MAX];
	char why[PACER_MAP_MAX][96];
	uint64_t added4, added6;         /* the lists' added (not from a file) entries it holds */
};

void pin_keep_init(struct pin_keep *k);

/* The maps of the program prog_fd (a running limiter); the stamp from dir, if there. */
int pin_keep_from_prog(struct pin_keep *k, int prog_fd, const char *dir);

/* The pins in dir (a stopped limiter's): 0 with k->have false when there are none. */
int pin_keep_from_dir(struct pin_keep *k, const char *dir);

void pin_keep_close(struct pin_keep *k);

/*
 * Whether the sources' state can be kept under the new layout: an empty
 * differ, or the fixed settings that differ, each with both values.
 */
void pin_keep_state_differs(const struct pin_keep *k, const struct pacer_layout *lay,
			    char *differ, size_t len);

/*
 * Decide map by map against obj (opened, configured, not loaded) and give
 * it the maps kept as they are (bpf_map__reuse_fd); the live settings'
 * .data images carried into its initial values.  keep_state: the sources'
 * state may be kept (same geometry, no --reset-state).  0 or -errno after
 * saying why.
 */
int pin_keep_plan(struct pin_keep *k, struct bpf_object *obj, bool keep_state);

/* After obj is loaded: copy the earlier contents into the maps carried.  0 or -errno (said). */
int pin_keep_carry(struct pin_keep *k, struct bpf_object *obj);

/*
 * Pin obj's maps, its program prog_fd and this release's stamp in dir,
 * each over what is there (a new name, then a rename: no moment without a
 * pin).  0 or -errno after saying why.
 */
int pin_keep_pin(struct bpf_object *obj, int prog_fd, const char *dir, const char *release);

/* One line each: what was kept, carried and made afresh. */
void pin_keep_report(const struct pin_keep *k, const char *source);

#endif
