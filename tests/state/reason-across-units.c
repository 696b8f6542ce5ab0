/* SPDX-License-Identifier: MIT */
/* The reason text is one per thread for the whole program: a failure in one
 * translation unit is explained in another, and threads do not see each
 * other's reasons.  Linking this with reason-unit-b.c also proves that two
 * units including the header make one program (no duplicate symbols). */
#include <pthread.h>

#include "tap.h"
#include <cuxfer.h>

cudaError_t unit_b_fail(void);
const char *unit_b_reason(void);

static char seen_in_thread[CUXFER_REASON_MAX];

static void *other_thread(void *arg)
{
    (void)arg;
    snprintf(seen_in_thread, sizeof seen_in_thread, "%s", cuxfer_last_reason());
    (void)cuxfer_view_check(NULL, "thread's own"); /* "thread's own view is NULL" */
    return NULL;
}

int main(void)
{
    pthread_t t;
    char longer[600];
    plan(8);
    is_string("", cuxfer_last_reason(), "no reason at start");
    is_int(cudaErrorInvalidValue, unit_b_fail(), "unit b's call fails");
    is_string("ROI x+width 1930 exceeds view width 1920", cuxfer_last_reason(),
              "unit a reads unit b's reason");
    ok(cuxfer_last_reason() == unit_b_reason(), "both units see one buffer");
    if (pthread_create(&t, NULL, other_thread, NULL) != 0)
        bail("pthread_create");
    pthread_join(t, NULL);
    is_string("", seen_in_thread, "another thread does not see it");
    is_string("ROI x+width 1930 exceeds view width 1920", cuxfer_last_reason(),
              "nor overwrite it");
    memset(longer, 'x', sizeof longer - 1);
    longer[sizeof longer - 1] = '\0';
    /* The `what` of a check starts its reason: a 599-byte one. */
    is_int(cudaErrorInvalidValue, cuxfer_view_check(NULL, longer), "a failure with a long reason");
    is_int(CUXFER_REASON_MAX - 1, (long long)strlen(cuxfer_last_reason()),
           "an over-long reason is truncated, never overflows");
    done_testing();
}
