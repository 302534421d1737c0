// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * grace_probe: whether this kernel's map-in-map update returns only after
 * every XDP program that was running when it began has returned, the wait
 * pacer_classes_install relies on before it rewrites a bank of classes
 * (docs/design.md, Live changes).  Starts updates while a program it runs
 * is in flight (tests/grace_check.h), whatever the grace period's length;
 * first plain array updates, which do not wait, to show the probe sees
 * one return before the program's end.  Root, two CPUs.
 *
 *   grace_probe [--plain]   (--plain: a plain update in place of the
 *                            map-in-map one, a kernel that does not wait)
 *
 * Prints one line; exit 0 when every map-in-map update returned after the
 * program's end, 1 when one returned before it, 2 on an error or when it
 * cannot tell.  Run on the booted kernels by tests/qemu_guest.sh.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include "classes_map.h"
#include "grace_check.h"

#define ROUNDS 5         /* map-in-map updates that must return after the program's end */
#define CONTROL_ROUNDS 3 /* plain updates, of which one must return before it */
#define TRIES 30         /* rounds at most, those begun too late included */


int main(int argc, char **argv)
{
	int plain_only = argc == 2 && !strcmp(argv[1], "--plain"), fd, e, rc;
	struct grace_result control, res;
	char err[160], line[2][256];
	struct grace_probe_bpf *skel;

	if (argc > 2 || (argc == 2 && !plain_only)) {
		fprintf(stderr, "usage: grace_probe [--plain]\n");
		return 2;
	}
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "grace_plain", 4, 4, 1, NULL);
	if (fd < 0) {
		fprintf(stderr, "grace_probe: cannot make an array map: %s\n", strerror(errno));
		return 2;
	}
	skel = grace_probe_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "grace_probe: cannot load bpf/grace_probe.bpf.c: %s\n", strerror(errno));
		return 2;
	}
	e = grace_check(skel, grace_plain_update, &fd, CONTROL_ROUNDS, TRIES, &control, err, sizeof(err));
	if (!e)
		e = grace_check(skel, plain_only ? grace_plain_update : grace_map_in_map_update, &fd, ROUNDS, TRIES, &res,
				err, sizeof(err));
	grace_probe_bpf__destroy(skel);
	close(fd);
	if (e) {
		fprintf(stderr, "grace_probe: %s\n", err);
		return 2;
	}
	grace_format(&res, line[0], sizeof(line[0]));
	grace_format(&control, line[1], sizeof(line[1]));
	printf("map-in-map update%s: %s; plain update: %s\n", plain_only ? " (--plain: a plain one)" : "",
	       line[0], line[1]);
	if (res.before)
		rc = 1;
	else if (!control.before) {
		fprintf(stderr, "grace_probe: cannot tell: a plain update returned after the program's end too\n");
		rc = 2;
	} else if (res.after < ROUNDS) {
		fprintf(stderr, "grace_probe: cannot tell: %d of %d updates begun %.0f ms before the program's end\n",
			res.after, ROUNDS, GRACE_LEAD_MIN_NS / 1e6);
		rc = 2;
	} else
		rc = 0;
	return rc;
}
