// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "time_now.h"

uint64_t timespec_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000ULL + (uint64_t)ts->tv_nsec;
}

uint64_t clock_now_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return timespec_ns(&ts);
}

uint64_t mono_ns(void)
{
	return clock_now_ns(CLOCK_MONOTONIC);
}

double mono_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

uint64_t clock_res_ns(clockid_t id)
{
	struct timespec ts;

	return clock_getres(id, &ts) ? 0 : timespec_ns(&ts);
}
