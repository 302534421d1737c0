// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * xdp-pacer gen: a line-rate traffic generator.  An engine sends (an XDP
 * program run with BPF_PROG_TEST_RUN live frames, AF_XDP or AF_PACKET
 * sockets; gen.h), every one the same frames (include/gen_draw.h).  One
 * thread per CPU; each CPU has its own share of the structured sources, so
 * a source always leaves from the same CPU (as RSS would deliver it).
 */
#include <stdlib.h>
#include "common.h"
#include "verbs/verbs.h"
#include "gen.h"

int cmd_gen(int argc, char **argv)
{
	struct gen_ctx *g = calloc(1, sizeof(*g));
	int err;

	if (!g) {
		pr_err("out of memory");
		return 1;
	}
	err = gen_parse(argc, argv, g);
	if (err) {
		free(g);
		return err == OPTS_HELP ? 0 : err;
	}
	err = gen_setup(g);
	if (!err)
		err = gen_open_engine(g);
	if (!err)
		err = gen_run(g);
	if (!err)
		gen_report(g);
	gen_teardown(g);
	free(g);
	return err;
}
