/* SPDX-License-Identifier: MIT */
/* The host of plugin-state.sh, linked without -rdynamic: it and the plugin
 * it dlopens RTLD_LOCAL share one process-wide state - one reason text per
 * thread, one registry - so a range the plugin pinned and the host
 * unpinned or freed is not taken for pinned memory afterwards.  Public
 * calls only: the registry half needs a device (the same without one, by
 * the private calls, is in tests/state/internals.c for two units).
 * argv[1]: the plugin. */
#include <dlfcn.h>
#include <stdio.h>

#include "gpu.h"

typedef const void *(*state_fn)(void);
typedef const char *(*reason_fn)(void);
typedef void (*fail_fn)(size_t);
typedef cudaError_t (*register_fn)(void *, size_t);
typedef int (*kind_fn)(const void *);
typedef cudaError_t (*alloc_fn)(void **, size_t);

static void *sym(void *h, const char *name)
{
    void *f = dlsym(h, name);
    if (!f)
        bail("dlsym %s: %s", name, dlerror());
    return f;
}

/* A refused call here, whose reason names `width`. */
static void host_fail(size_t width)
{
    static char buf[8];
    cuxfer_view v;
    (void)cuxfer_view_wrap(&v, buf, 8, width, 1, 1);
}

static char buffer[1 << 16] __attribute__((aligned(4096)));

int main(int argc, char **argv)
{
    void *h;
    state_fn p_state;
    reason_fn p_reason;
    fail_fn p_fail;
    register_fn p_register;
    kind_fn p_classify;
    alloc_fn p_alloc;
    void *pinned = NULL;
    if (argc != 2)
        bail("usage: plugin-state-host PLUGIN.so");
    plan(12);
    host_fail(1111); /* the host, before the plugin */
    h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
    if (!h)
        bail("dlopen %s: %s", argv[1], dlerror());
    p_state = (state_fn)sym(h, "plugin_state");
    p_reason = (reason_fn)sym(h, "plugin_reason");
    p_fail = (fail_fn)sym(h, "plugin_fail");
    p_register = (register_fn)sym(h, "plugin_register");
    p_classify = (kind_fn)sym(h, "plugin_classify");
    p_alloc = (alloc_fn)sym(h, "plugin_host_alloc");

    ok(p_state() == (const void *)cuxfer_last_reason(),
       "host and plugin find this thread's reason at one address: one state");
    contains(p_reason(), "row of 1111 bytes", "the plugin reads the host's reason");
    p_fail(2222);
    contains(cuxfer_last_reason(), "row of 2222 bytes", "the host reads the plugin's reason");

    /* The registry: the plugin pins, the host unpins or frees, and the
     * address is asked again on both sides. */
    if (!gpu_present(9))
        done_testing();
    is_int(cudaSuccess, p_register(buffer, sizeof buffer), "the plugin pins a 64 KiB range");
    is_int(CUXFER_MEMORY_PINNED, cuxfer_memory_kind(buffer + 100),
           "a range the plugin registered is known to the host");
    is_int(cudaSuccess, cuxfer_host_unregister(buffer), "the host unpins it");
    ok(cuxfer_memory_kind(buffer + 100) != CUXFER_MEMORY_PINNED,
       "unpinned by the host: the host no longer calls it pinned");
    ok(p_classify(buffer + 100) != CUXFER_MEMORY_PINNED,
       "unpinned by the host: neither does the plugin");
    ok(p_classify(buffer) != CUXFER_MEMORY_PINNED &&
           p_classify(buffer + sizeof buffer - 1) != CUXFER_MEMORY_PINNED,
       "nor at either end of the range");

    /* The same with memory the plugin allocates pinned and the host frees. */
    is_int(cudaSuccess, p_alloc(&pinned, 1 << 20), "the plugin pins 1 MiB");
    is_int(CUXFER_MEMORY_PINNED, cuxfer_memory_kind(pinned), "the host knows it is pinned");
    if (cuxfer_host_free(pinned) != cudaSuccess)
        diag("cuxfer_host_free: %s", cuxfer_last_reason());
    /* 12 with this one. */
    ok(p_classify(pinned) != CUXFER_MEMORY_PINNED,
       "freed by the host: the plugin no longer calls the address pinned (got %d)",
       p_classify(pinned));
    done_testing();
}
