/* SPDX-License-Identifier: MIT */
/* The second host of plugin-state.sh: it does not include cuxfer.h.  It
 * loads three copies of the plugin (three objects), lets the first make
 * the state, unloads it, and checks that the third still finds the state
 * the second uses.  argv[1..3]: the three copies. */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

#include "tap.h"

typedef const void *(*state_fn)(void);
typedef const char *(*reason_fn)(void);
typedef void (*fail_fn)(size_t);

static void *load(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h)
        bail("dlopen %s: %s", path, dlerror());
    return h;
}

static void *sym(void *h, const char *name)
{
    void *f = dlsym(h, name);
    if (!f)
        bail("dlsym %s: %s", name, dlerror());
    return f;
}

int main(int argc, char **argv)
{
    void *a, *b, *c;
    const void *state_b;
    if (argc != 4)
        bail("usage: plugin-state-bare A.so B.so C.so");
    plan(4);
    a = load(argv[1]);
    b = load(argv[2]);
    ((fail_fn)sym(a, "plugin_fail"))(3333); /* "row of 3333 bytes" */
    contains(((reason_fn)sym(b, "plugin_reason"))(), "row of 3333 bytes", "B reads A's reason");
    state_b = ((state_fn)sym(b, "plugin_state"))();
    ok(state_b == ((state_fn)sym(a, "plugin_state"))(), "A and B share one state");
    if (dlclose(a) != 0)
        bail("dlclose: %s", dlerror());
    {
        /* Say whether A really left the address space (it should). */
        char line[4096];
        int mapped = 0;
        FILE *maps = fopen("/proc/self/maps", "r");
        while (maps && fgets(line, sizeof line, maps))
            if (strstr(line, argv[1]))
                mapped = 1;
        if (maps)
            fclose(maps);
        diag("A is %s after dlclose", mapped ? "still mapped" : "unloaded");
    }
    c = load(argv[3]);
    ok(((state_fn)sym(c, "plugin_state"))() == state_b,
       "with A (which made it) unloaded, C finds B's state");
    contains(((reason_fn)sym(c, "plugin_reason"))(), "row of 3333 bytes",
             "and the same reason text");
    (void)c;
    done_testing();
}
