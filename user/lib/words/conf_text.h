/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * How configuration text appears in messages.  Below both the config
 * file's parser (pacer_conf.h) and the sections' (class_conf.h), so the
 * two depend in one direction only: pacer_conf -> class_conf -> conf_text.
 */
#ifndef PACER_CONF_TEXT_H
#define PACER_CONF_TEXT_H

#include <stddef.h>

/*
 * text as a message shows it: bytes outside printable ASCII (a file's
 * UTF-8 or Latin-1, which may encode terminal controls such as U+009B) as
 * \xNN, cut to fit out.  Returns out.
 */
const char *pacer_conf_shown(const char *text, char *out, size_t len);

#endif
