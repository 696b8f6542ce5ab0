#!/bin/sh
# SPDX-License-Identifier: MIT
# The layering of include/cuxfer.h (doc/DESIGN.md, "The header's layers"),
# checked (TAP):
#   - every cuxfer_/CUXFER_ name a section's code uses is defined in that
#     section or an earlier one: the header reads top-down;
#   - section 4 (Geometry) is pure CPU arithmetic: none of its functions
#     calls the CUDA runtime, directly or through another cuxfer function.
# Comments and string literals are ignored.
: "${top_srcdir:=$(dirname "$0")/../..}"
h="$top_srcdir/include/cuxfer.h"
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP python3 not found"; exit 0; }
exec python3 - "$h" "$top_srcdir/tests/lib" <<'EOF'
import re, sys

sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[2])
from c_strip import strip  # comments and literals out, lines kept

src = open(sys.argv[1], encoding="utf-8").read()
lines = src.split("\n")

# Sections: the banner "/* ----" then " * N. Title".  The block "The API"
# (in section 1, up to "(end of the API)") only declares: it belongs to no
# section, so a name counts as defined where its definition is.
sec_of_line, sections, cur, api = [], [], None, False
for i, l in enumerate(lines):
    m = re.match(r"^ \* (\d+[a-z]?)\. (.*)", l)
    if m and i > 0 and lines[i - 1].startswith("/* ----"):
        cur = len(sections)
        sections.append((m.group(1), m.group(2).strip()))
    if l.startswith(" * The API:") and i > 0 and lines[i - 1].startswith("/* ----"):
        api = True
        sec_of_line[-1] = None
    sec_of_line.append(None if api else cur)
    if l.strip() == "/* (end of the API) */":
        api = False

code = strip(src).split("\n")
ident = re.compile(r"\b(cuxfer_\w+|CUXFER_\w+)\b")

# Definitions: functions (CUXFER_API ... name( at the start of a line),
# macros, typedef'd structs and enums, enumerators of cuxfer enums.
defined, bodies = {}, {}
i = 0
while i < len(code):
    l, s = code[i], sec_of_line[i]
    if s is not None:
        m = re.match(r"^CUXFER_API\b[^(]*?\b(cuxfer_\w+)\s*\(", l)
        if m:
            name = m.group(1)
            defined.setdefault(name, s)
            j, brace = i, False
            while j < len(code) and not code[j].startswith("}"):
                brace = brace or "{" in code[j]
                if not brace and code[j].rstrip().endswith(";"):
                    break  # a prototype, no body
                j += 1
            bodies[name] = "\n".join(code[i:j + 1])
        for m in re.finditer(r"^\s*#\s*define\s+(\w+)", l):
            defined.setdefault(m.group(1), s)
        for m in re.finditer(r"\b(?:typedef\s+)?(?:struct|enum|union)\s+(cuxfer_\w+)", l):
            defined.setdefault(m.group(1), s)
        for m in re.finditer(r"^\s*}\s*(cuxfer_\w+)\s*;", l):
            defined.setdefault(m.group(1), s)
        for m in re.finditer(r"^\s*typedef\b.*\b(cuxfer_\w+)\s*;", l):
            defined.setdefault(m.group(1), s)
        for m in re.finditer(r"^\s*(CUXFER_\w+)\s*(?:=[^,]*)?,?\s*$", l):
            defined.setdefault(m.group(1), s)
        for m in re.finditer(r"\benum\s*{([^}]*)}", l):
            for e in re.findall(r"\b(CUXFER_\w+)\b", m.group(1)):
                defined.setdefault(e, s)
    i += 1

tests = []
# 1. No section uses a later one.
late = []
for i, l in enumerate(code):
    s = sec_of_line[i]
    if s is None:
        continue
    for m in ident.finditer(l):
        d = defined.get(m.group(1))
        if d is not None and d > s:
            late.append("line %d (section %s) uses %s of section %s"
                        % (i + 1, sections[s][0], m.group(1), sections[d][0]))
tests.append((not late, "every section uses only names of itself and earlier sections "
              "(%d sections, %d names)" % (len(sections), len(defined)), late))

# 2. Geometry is pure: no CUDA runtime call, transitively.
calls_cuda = {}
def cuda_path(name, seen=()):
    if name in calls_cuda:
        return calls_cuda[name]
    body = bodies.get(name, "")
    body = body[body.find("(") :]  # not the return type
    m = re.search(r"\b(cuda[A-Z]\w*)\s*\(", body)
    if m and m.group(1) not in ("cudaGetErrorName", "cudaGetErrorString"):
        calls_cuda[name] = [name, m.group(1)]
        return calls_cuda[name]
    for callee in set(re.findall(r"\b(cuxfer_\w+)\s*\(", body)):
        if callee != name and callee in bodies and callee not in seen:
            p = cuda_path(callee, seen + (name,))
            if p:
                calls_cuda[name] = [name] + p
                return calls_cuda[name]
    calls_cuda[name] = None
    return None

geo = [k for k, (num, title) in enumerate(sections) if title.startswith("Geometry")]
if len(geo) != 1:
    tests.append((False, "one Geometry section", ["found %d" % len(geo)]))
else:
    g = geo[0]
    funcs = sorted(n for n, s in defined.items() if s == g and n in bodies)
    impure = [" -> ".join(cuda_path(n)) for n in funcs if cuda_path(n)]
    tests.append((bool(funcs) and not impure,
                  "section %s (Geometry) is pure: its %d functions call no CUDA runtime function"
                  % (sections[g][0], len(funcs)), impure))
    # the check can fail: a function known to call CUDA is seen as such
    probe = cuda_path("cuxfer_view_wrap") or []
    tests.append((len(probe) >= 2, "the purity check sees CUDA calls (cuxfer_view_wrap: %s)"
                  % " -> ".join(probe), []))

print("1..%d" % len(tests))
bad = 0
for k, (ok, what, detail) in enumerate(tests, 1):
    print("%s %d - %s" % ("ok" if ok else "not ok", k, what))
    for d in detail[:30]:
        print("#   " + d)
    bad += not ok
sys.exit(1 if bad else 0)
EOF
