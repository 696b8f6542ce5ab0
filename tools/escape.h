/* SPDX-License-Identifier: MIT */
/*
 * escape.h - untrusted text (file names, tuple types) for messages and
 * JSON, in one place: every message and report of roicopy escapes
 * through these.
 */
#ifndef ROICOPY_ESCAPE_H
#define ROICOPY_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* Untrusted text (file names, tuple types) for a message: valid UTF-8
 * is kept, a backslash doubled, control characters (C1 ones too, each
 * of their two bytes) and bytes that are not UTF-8 written \xNN; cut
 * with "..." to fit n.  Returns buf. */
const char *image_escape(const char *text, char *buf, size_t n);

/* text as a JSON string literal on f: valid UTF-8 kept, '"' and '\\'
 * escaped, control characters (C1 ones too) and each byte that is not
 * part of valid UTF-8 written \u00XX (the byte's value, or the C1
 * control's, as a code point). */
void image_json_string(FILE *f, const char *text);

/* image_escape into a buffer of its own, for roicopy's messages: the
 * result lives until four more calls on the same thread. */
const char *roicopy_esc(const char *text);

#endif
