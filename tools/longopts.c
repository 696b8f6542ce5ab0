/* SPDX-License-Identifier: MIT */
/* longopts.c - the long options a prefix names (longopts.h). */
#include "longopts.h"

#include <stdio.h>
#include <string.h>

size_t longopts_matching(const struct option *opts, const char *tok, char *names,
                         size_t cap)
{
    size_t i, len, n = 0, used = 0;
    if (cap)
        names[0] = '\0';
    if (strncmp(tok, "--", 2) != 0 || !tok[2])
        return 0;
    len = strlen(tok + 2);
    for (i = 0; opts[i].name; ++i)
        if (!strncmp(opts[i].name, tok + 2, len)) {
            int k = used < cap ? snprintf(names + used, cap - used, "%s--%s",
                                          n ? ", " : "", opts[i].name)
                               : -1;
            if (k > 0 && (size_t)k < cap - used)
                used += (size_t)k;
            ++n;
        }
    return n;
}
