/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Reading the clocks the CLI measures with, in ns or s. */
#ifndef PACER_TIME_NOW_H
#define PACER_TIME_NOW_H

#include <stdint.h>
#include <time.h>

/* ts in ns (a clock's reading, not a negative span). */
uint64_t timespec_ns(const struct timespec *ts);
/* Clock id now in ns (CLOCK_MONOTONIC_COARSE for the datapath's coarse clock). */
uint64_t clock_now_ns(clockid_t id);
/* The clock's resolution in ns (a jiffy for the coarse clocks). */
uint64_t clock_res_ns(clockid_t id);
/* CLOCK_MONOTONIC now: ns for timestamps, s for measuring spans. */
uint64_t mono_ns(void);
double mono_s(void);

#endif
