/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Frames for BPF_PROG_TEST_RUN tests. */
#ifndef PACER_TEST_FRAMES_H
#define PACER_TEST_FRAMES_H

#include <stdint.h>

/* A 64-byte Ethernet + IPv4/UDP frame from src (network byte order) to 10.0.0.1. */
void frame_v4(uint8_t *f, uint32_t src);

#endif
