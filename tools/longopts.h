/* SPDX-License-Identifier: MIT */
/*
 * longopts.h - what getopt_long leaves roicopy and xferbench to say
 * themselves: a prefix of several long options ("--dev") comes back as
 * an unknown option, and the tools name the options it could mean.
 */
#ifndef LONGOPTS_H
#define LONGOPTS_H

#include <getopt.h>
#include <stddef.h>

/* The long options of opts that tok ("--dev", without "=VALUE") is a
 * prefix of: how many, and their names in names ("--device, --devices",
 * cut to fit cap bytes).  0 for a token that is not a long option. */
size_t longopts_matching(const struct option *opts, const char *tok, char *names,
                         size_t cap);

#endif
