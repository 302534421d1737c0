// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <string.h>
#include "lib_frames.h"

void frame_v4(uint8_t *f, uint32_t src)
{
	memset(f, 0, 64);
	f[12] = 0x08; /* IPv4 */
	f[14] = 0x45;
	f[17] = 50;    /* total length */
	f[22] = 64;
	f[23] = 17;
	memcpy(&f[26], &src, 4);
	f[30] = 10;
	f[33] = 1;
}
