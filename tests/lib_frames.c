// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>
#include "frame.h"
#include "lib_frames.h"

void frame_v4(uint8_t *f, uint32_t src)
{
	struct frame_spec s = { .src.family = 4, .dst = { .family = 4, .bytes = { 10, 0, 0, 1 } },
				.payload = 64 - 14 - 20 - 8 };

	memcpy(s.src.bytes, &src, 4);
	frame_build(f, 64, &s, NULL);
}
