/* SPDX-License-Identifier: MIT */
/* The plugin of plugin-state.sh: built -fvisibility=hidden, loaded
 * RTLD_LOCAL by a host linked without -rdynamic, so no weak symbol of the
 * header is shared with the host.  It exports only these functions. */
#include <cuxfer.h>

#define PLUGIN_API __attribute__((visibility("default")))

PLUGIN_API void *plugin_state(void);
PLUGIN_API const char *plugin_reason(void);
PLUGIN_API void plugin_fail(const char *text);
PLUGIN_API void plugin_register(void *p, size_t bytes);
PLUGIN_API int plugin_lookup(const void *p);
PLUGIN_API int plugin_classify(const void *p);
PLUGIN_API cudaError_t plugin_host_alloc(void **p, size_t bytes);

void *plugin_state(void) { return cuxfer_impl_state_get(); }
const char *plugin_reason(void) { return cuxfer_last_reason(); }
void plugin_fail(const char *text) { (void)cuxfer_impl_fail(cudaErrorInvalidValue, "%s", text); }
/* What cuxfer_host_alloc and cuxfer_host_register record, without a GPU. */
void plugin_register(void *p, size_t bytes) { cuxfer_impl_reg_add(p, bytes, CUXFER_MEMORY_PINNED, -1); }
int plugin_lookup(const void *p) { return (int)cuxfer_impl_lookup(p, NULL); }
int plugin_classify(const void *p) { return (int)cuxfer_impl_classify_cached(p, NULL); }
cudaError_t plugin_host_alloc(void **p, size_t bytes)
{
    return cuxfer_host_alloc(p, bytes, 1, cudaHostAllocDefault);
}
