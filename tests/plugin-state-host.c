/* SPDX-License-Identifier: MIT */
/* The host of plugin-state.sh, linked without -rdynamic: it and the plugin
 * it dlopens RTLD_LOCAL share one process-wide state - one reason text per
 * thread, one registry - so a range the plugin registered and the host
 * freed is not taken for pinned memory afterwards.  argv[1]: the plugin. */
#include <dlfcn.h>

#include "tap.h"
#include <cuxfer.h>

typedef void *(*state_fn)(void);
typedef const char *(*reason_fn)(void);
typedef void (*fail_fn)(const char *);
typedef void (*register_fn)(void *, size_t);
typedef int (*kind_fn)(const void *);
typedef cudaError_t (*alloc_fn)(void **, size_t);

static void *sym(void *h, const char *name)
{
    void *f = dlsym(h, name);
    if (!f)
        bail("dlsym %s: %s", name, dlerror());
    return f;
}

static char buffer[1 << 16];

int main(int argc, char **argv)
{
    void *h;
    state_fn p_state;
    reason_fn p_reason;
    fail_fn p_fail;
    register_fn p_register;
    kind_fn p_lookup, p_classify;
    alloc_fn p_alloc;
    int n = 0;
    void *pinned = NULL;
    if (argc != 2)
        bail("usage: plugin-state-host PLUGIN.so");
    plan(10);
    (void)cuxfer_impl_fail(cudaErrorInvalidValue, "host, before the plugin");
    h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h)
        bail("dlopen %s: %s", argv[1], dlerror());
    p_state = (state_fn)sym(h, "plugin_state");
    p_reason = (reason_fn)sym(h, "plugin_reason");
    p_fail = (fail_fn)sym(h, "plugin_fail");
    p_register = (register_fn)sym(h, "plugin_register");
    p_lookup = (kind_fn)sym(h, "plugin_lookup");
    p_classify = (kind_fn)sym(h, "plugin_classify");
    p_alloc = (alloc_fn)sym(h, "plugin_host_alloc");

    ok(p_state() == (void *)cuxfer_impl_state_get(), "host and plugin find one state");
    is_string("host, before the plugin", p_reason(), "the plugin reads the host's reason");
    p_fail("written in the plugin");
    is_string("written in the plugin", cuxfer_last_reason(), "the host reads the plugin's reason");

    p_register(buffer, sizeof buffer);
    is_int(CUXFER_MEMORY_PINNED, cuxfer_impl_lookup(buffer + 100, NULL),
           "a range the plugin registered is known to the host");
    cuxfer_impl_reg_remove(buffer); /* what cuxfer_host_free does first */
    is_int(CUXFER_MEMORY_UNKNOWN, cuxfer_impl_lookup(buffer + 100, NULL),
           "freed by the host: the host no longer calls it pinned");
    is_int(CUXFER_MEMORY_UNKNOWN, p_lookup(buffer + 100),
           "freed by the host: neither does the plugin");
    ok(p_lookup(buffer) != CUXFER_MEMORY_PINNED && p_lookup(buffer + sizeof buffer - 1) != CUXFER_MEMORY_PINNED,
       "nor at either end of the range");

    /* The same with real pinned memory: the plugin allocates, the host
     * frees, and the address is asked again. */
    if (cuxfer_device_count(&n) != cudaSuccess) {
        const char *req = getenv("CUXFER_REQUIRE_GPU");
        if (req && atoi(req) > 0)
            bail("CUXFER_REQUIRE_GPU=%s but no CUDA device: %s", req, cuxfer_last_reason());
        skip(3, "no CUDA device: %s", cuxfer_last_reason());
        done_testing();
    }
    is_int(cudaSuccess, p_alloc(&pinned, 1 << 20), "the plugin pins 1 MiB");
    is_int(CUXFER_MEMORY_PINNED, cuxfer_impl_lookup(pinned, NULL), "the host knows it is pinned");
    if (cuxfer_host_free(pinned) != cudaSuccess)
        diag("cuxfer_host_free: %s", cuxfer_last_reason());
    ok(p_classify(pinned) != CUXFER_MEMORY_PINNED,
       "freed by the host: the plugin no longer calls the address pinned (got %d)",
       p_classify(pinned));
    done_testing();
}
