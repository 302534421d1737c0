/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* One function per CLI verb; each lives in user/verbs/<verb>.c (gen: user/verbs/gen/). argv[0] is the verb. */
#ifndef PACER_VERBS_H
#define PACER_VERBS_H

int cmd_load(int argc, char **argv);
int cmd_unload(int argc, char **argv);
int cmd_status(int argc, char **argv);
int cmd_set(int argc, char **argv);
int cmd_stats(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_gen(int argc, char **argv);
int cmd_model(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_analyze(int argc, char **argv);
int cmd_exporter(int argc, char **argv);
int cmd_deny(int argc, char **argv);   /* lists.c */
int cmd_exempt(int argc, char **argv); /* lists.c */
int cmd_top(int argc, char **argv);
int cmd_events(int argc, char **argv);

#endif
