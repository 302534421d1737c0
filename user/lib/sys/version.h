/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The release this build is (the Makefile's VERSION, CHANGELOG.md's latest entry). */
#ifndef PACER_VERSION_H
#define PACER_VERSION_H

extern const char pacer_version[];

#endif
