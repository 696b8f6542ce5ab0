/* SPDX-License-Identifier: MIT */
/* The pages' STREAMS AND CAPTURE cannot drift from the composition
 * matrix: the table of man 3 cuxfer's STREAMS AND CAPTURE (its `.It call
 * Ta word ...` rows) equals tests/lib/composition-table.h, from which
 * tests/composition/matrix.c takes what each cell must do, row for row
 * and cell for cell; and every call of the table is named in the STREAMS
 * AND CAPTURE section of a family page (the page that says what each
 * stream kind does in words).  No device needed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"
#include "composition-table.h"

#define MAXROWS 64
#define LINE 1024

#include "read-file.h"

/* The text of section `sh` of a page (from its .Sh line to the next). */
static char *section(const char *page, const char *sh)
{
    char head[128];
    const char *a, *b;
    char *out;
    (void)snprintf(head, sizeof head, "\n.Sh %s\n", sh);
    a = strstr(page, head);
    if (!a)
        return NULL;
    a += strlen(head);
    b = strstr(a, "\n.Sh ");
    if (!b)
        b = a + strlen(a);
    out = (char *)malloc((size_t)(b - a) + 1);
    if (!out)
        bail("out of memory");
    memcpy(out, a, (size_t)(b - a));
    out[b - a] = '\0';
    return out;
}

int main(void)
{
    const char *top = getenv("top_srcdir");
    static const char *const pages[] = {
        "cuxfer_check", "cuxfer_copy", "cuxfer_copy2d_async", "cuxfer_graph",
        "cuxfer_host_alloc", "cuxfer_managed_alloc", "cuxfer_memory_kind",
        "cuxfer_on_complete", "cuxfer_on_done",
        "cuxfer_pinned_pool", "cuxfer_plan2d", "cuxfer_ring", "cuxfer_rois",
        "cuxfer_stager", "cuxfer_stream_pool", "cuxfer_timer", "cuxfer_view"};
    char path[4096], *page, *sec, *line, *save = NULL;
    char *fam[sizeof pages / sizeof pages[0]];
    char rows[MAXROWS][1 + COL_COUNT][64];
    int nrows = 0, i, j, c, bad;
    plan(0);
    if (!top)
        top = ".";
    (void)snprintf(path, sizeof path, "%s/man/cuxfer.3", top);
    page = read_file(path);
    if (!page)
        bail("cannot read %s", path);
    sec = section(page, "STREAMS AND CAPTURE");
    ok(sec != NULL, "cuxfer.3 has a STREAMS AND CAPTURE section");
    if (!sec)
        done_testing();
    for (line = strtok_r(sec, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *p, *q;
        int n = 0;
        if (strncmp(line, ".It cuxfer_", 11) != 0 || !strstr(line, " Ta "))
            continue;
        if (nrows == MAXROWS)
            bail("more than %d rows", MAXROWS);
        p = line + 4;
        while (p && n <= COL_COUNT) {
            q = strstr(p, " Ta ");
            if (q)
                *q = '\0';
            (void)snprintf(rows[nrows][n++], sizeof rows[0][0], "%s", p);
            p = q ? q + 4 : NULL;
        }
        if (n != 1 + COL_COUNT || p) {
            ok(0, "cuxfer.3: the row of %s has %d cells, want %d", rows[nrows][0], n,
               1 + COL_COUNT);
            continue;
        }
        ++nrows;
    }
    is_int(COMPOSITION_ROWS, nrows, "cuxfer.3's table has the matrix table's %d rows",
           COMPOSITION_ROWS);
    for (i = 0; i < nrows; ++i) {
        const char *const *want = composition_row(rows[i][0]);
        if (!want || strcmp(want[0], rows[i][0]) != 0) {
            ok(0, "cuxfer.3 row %s is not in the matrix table", rows[i][0]);
            continue;
        }
        for (bad = 0, c = 0; c < COL_COUNT; ++c)
            if (strcmp(want[1 + c], rows[i][1 + c]) != 0) {
                diag("  %s / %s: the page says \"%s\", the matrix expects \"%s\"", rows[i][0],
                     composition_columns[c], rows[i][1 + c], want[1 + c]);
                ++bad;
            }
        ok(bad == 0, "cuxfer.3 row %s equals the matrix table", rows[i][0]);
    }
    for (i = 0; i < COMPOSITION_ROWS; ++i) {
        for (j = 0; j < nrows && strcmp(rows[j][0], composition_table[i][0]) != 0; ++j)
            ;
        if (j == nrows)
            ok(0, "matrix row %s is missing from cuxfer.3", composition_table[i][0]);
    }
    free(sec);
    free(page);

    /* every call is named in a family page's STREAMS AND CAPTURE */
    for (i = 0; i < (int)(sizeof pages / sizeof pages[0]); ++i) {
        (void)snprintf(path, sizeof path, "%s/man/%s.3", top, pages[i]);
        page = read_file(path);
        if (!page)
            bail("cannot read %s", path);
        fam[i] = section(page, "STREAMS AND CAPTURE");
        free(page);
    }
    for (i = 0; i < COMPOSITION_ROWS; ++i) {
        const char *name = composition_table[i][0];
        const char *where = NULL;
        for (j = 0; j < (int)(sizeof pages / sizeof pages[0]) && !where; ++j) {
            const char *s = fam[j];
            size_t n = strlen(name);
            while (s && (s = strstr(s, name)) != NULL) {
                char after = s[n];
                if (!(after == '_' || (after >= 'a' && after <= 'z'))) {
                    where = pages[j];
                    break;
                }
                s += n;
            }
        }
        ok(where != NULL, "%s: its stream kinds are in words in %s%s", name,
           where ? where : "no page's STREAMS AND CAPTURE", where ? "(3)" : "");
    }
    for (i = 0; i < (int)(sizeof pages / sizeof pages[0]); ++i)
        free(fam[i]);
    done_testing();
}
