/* SPDX-License-Identifier: MIT */
/*
 * views.h - views and ROIs filled in by hand, as the validation
 * tests need them: view_of builds a view without cuxfer_view_wrap's
 * checks (kind unknown, device -1), so that a test can hand cuxfer a view
 * that wrap would refuse and see the call under test refuse it.  C99 (the
 * validation tests are C).
 */
#ifndef CUXFER_TESTS_VIEWS_H
#define CUXFER_TESTS_VIEWS_H

#include "tap.h"
#include <cuxfer.h>

static TAP_UNUSED cuxfer_view view_of(void *p, size_t w, size_t h, size_t elem,
                                      size_t pitch)
{
    cuxfer_view v = {.ptr = p, .pitch = pitch, .width = w, .height = h, .elem_size = elem,
                     .device = -1};
    return v;
}

static TAP_UNUSED cuxfer_roi roi_of(size_t x, size_t y, size_t w, size_t h)
{
    cuxfer_roi r = {x, y, w, h};
    return r;
}

#endif
