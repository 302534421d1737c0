// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include "version.h"

/* The Makefile passes it, so the release number has one home. */
const char pacer_version[] = PACER_VERSION;
