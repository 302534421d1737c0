/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The pacer's counters and configuration in the Prometheus text exposition
 * format (version 0.0.4): what `stats --format prometheus` writes and the
 * exporter serves.  Pure formatting, no libbpf.
 */
#ifndef PACER_PROM_H
#define PACER_PROM_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include "pacer_abi.h"
#include "pacer_budget.h"

#define PROM_CONTENT_TYPE "text/plain; version=0.0.4; charset=utf-8"

/* A traffic class of a pacer (pacer_class.h) and its counters, summed over CPUs. */
struct prom_class {
	struct pacer_class c;
	uint64_t counters[PACER_CSTAT_MAX];
};

/* One interface's pacer, as read from its maps. */
struct prom_pacer {
	char ifname[16];
	uint32_t prog_id;
	uint64_t counters[PACER_STAT_MAX]; /* summed over CPUs */
	struct pacer_config cfg;
	struct pacer_layout layout;
	struct pacer_budget_cfg budget; /* limit 0: off */
	uint64_t map_bytes;
	int nclasses; /* 0: no classes */
	/* The exempt (0) and deny (1) lists' live entries by origin (enum pacer_list_origin). */
	uint64_t list_entries[2][PACER_LIST_ORIGIN_MAX];
	uint64_t list_timed[2]; /* of them, with a timeout */
	struct prom_class classes[PACER_MAX_CLASSES];
};

/* The counter family a counter (enum pacer_stat) is exported under; NULL for none. */
const char *prom_counter_family(unsigned stat);

/* A label value escaped as the format requires: \\, \" and \n. */
void prom_label_value(FILE *f, const char *s);

/*
 * Every metric family for n interfaces (samples of a family grouped under
 * one HELP/TYPE pair, as the format requires), after xdp_pacer_build_info.
 * Every counter of `stats --json` is exported.  0 or -EIO.
 */
int prom_write(FILE *f, const struct prom_pacer *p, size_t n);

#endif
