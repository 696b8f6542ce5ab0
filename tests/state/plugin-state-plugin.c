/* SPDX-License-Identifier: MIT */
/* The plugin of plugin-state.sh: built -fvisibility=hidden, loaded
 * RTLD_LOCAL by a host linked without -rdynamic, so no weak symbol of the
 * header is shared with the host.  It exports only these functions, and
 * uses public calls only: the address of the calling thread's reason text
 * stands for the state (one state, one address). */
#include <cuxfer.h>

#define PLUGIN_API __attribute__((visibility("default")))

PLUGIN_API const void *plugin_state(void);
PLUGIN_API const char *plugin_reason(void);
PLUGIN_API void plugin_fail(size_t width);
PLUGIN_API cudaError_t plugin_register(void *p, size_t bytes);
PLUGIN_API int plugin_classify(const void *p);
PLUGIN_API cudaError_t plugin_host_alloc(void **p, size_t bytes);

const void *plugin_state(void) { return cuxfer_last_reason(); }
const char *plugin_reason(void) { return cuxfer_last_reason(); }
/* A refused call whose reason names `width` ("row of WIDTH bytes"). */
void plugin_fail(size_t width)
{
    static char buf[8];
    cuxfer_view v;
    (void)cuxfer_view_wrap(&v, buf, 8, width, 1, 1);
}
cudaError_t plugin_register(void *p, size_t bytes)
{
    return cuxfer_host_register(p, bytes, cudaHostRegisterDefault);
}
int plugin_classify(const void *p) { return (int)cuxfer_memory_kind(p); }
cudaError_t plugin_host_alloc(void **p, size_t bytes)
{
    return cuxfer_host_alloc(p, bytes, 1, cudaHostAllocDefault);
}
