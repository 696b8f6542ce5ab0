#!/bin/sh
# SPDX-License-Identifier: MIT
# The block "The API" of include/cuxfer.h (doc/DESIGN.md, "The header's
# layers") declares every public type and function, grouped by man page.
# The compiler checks that each declaration agrees with its definition and
# (-Wall: "declared static but never defined") that nothing declared is
# missing; this checks what the compiler cannot (TAP):
#   1. every public function defined in the header is declared in the
#      block, before its definition, and every function declared there is
#      defined;
#   2. every public type is declared there;
#   3. every public macro and constant (not the settings, which the top
#      comment's CONFIGURATION lists) is named there, and every name the
#      block mentions exists;
#   4. each name sits under a page (`man 3 PAGE`) that documents it.
# Comments and string literals are ignored outside the block.
: "${top_srcdir:=$(dirname "$0")/../..}"
h="$top_srcdir/include/cuxfer.h"
command -v python3 >/dev/null 2>&1 || { echo "1..0 # SKIP python3 not found"; exit 0; }
exec python3 - "$h" "$top_srcdir/man" "$top_srcdir/tests/lib" <<'EOF'
import os, re, sys

sys.dont_write_bytecode = True
sys.path.insert(0, sys.argv[3])
from c_strip import strip  # comments and literals out, lines kept

hdr, mandir = sys.argv[1], sys.argv[2]
src = open(hdr, encoding="utf-8").read()
lines = src.split("\n")
P, M = "cuxfer_" "impl_", "CUXFER_" "IMPL_"  # private prefixes, in pieces

# The block: from its banner to "(end of the API)".
begin = end = None
for i, l in enumerate(lines):
    if l.startswith(" * The API:") and i > 0 and lines[i - 1].startswith("/* ----"):
        begin = i - 1
    if l.strip() == "/* (end of the API) */" and begin is not None:
        end = i
        break
if begin is None or end is None:
    print("1..1\nnot ok 1 - the header has the block \"The API\" (banner and \"(end of the API)\")")
    sys.exit(0)
code = strip(src).split("\n")

# The settings: CONFIGURATION in the top comment.
settings, on = {"CUXFER_H"}, False
for l in lines:
    if l.startswith(" * CONFIGURATION"):
        on = True
    elif on and l == " *":
        break
    elif on:
        m = re.match(r"^ \*  (CUXFER_[A-Z0-9_]+)", l)
        if m:
            settings.add(m.group(1))

# Outside the block: public definitions, with their first line.
funcs, types, consts = {}, {}, {}
for i, l in enumerate(code):
    if begin <= i <= end:
        continue
    m = re.match(r"^CUXFER_API\b[^(]*?\b(cuxfer_[a-z0-9_]+)\s*\(", l)
    if m and not m.group(1).startswith(P):
        j = i
        while j < len(code) and "{" not in code[j] and not code[j].rstrip().endswith(";"):
            j += 1
        if j < len(code) and "{" in code[j]:
            funcs.setdefault(m.group(1), i)
    m = re.match(r"^(?:typedef\s+)?(?:struct|enum)\s+(cuxfer_[a-z0-9_]+)\s*\{", l)
    if m and not m.group(1).startswith(P):
        types.setdefault(m.group(1), i)
    m = re.match(r"^\s*#\s*define\s+(CUXFER_[A-Z0-9_]+)", l)
    if m and not m.group(1).startswith(M) and m.group(1) not in settings:
        consts.setdefault(m.group(1), i)
    m = re.match(r"^\s+(CUXFER_[A-Z0-9_]+)\s*(?:=[^,]*)?,?\s*$", l)
    if m and not m.group(1).startswith(M):
        consts.setdefault(m.group(1), i)

# Inside the block: the groups, what each declares, defines and names.
groups, page = [], None
declared, block_types, named, defined_in_block = {}, {}, {}, set()
bcode = code[begin:end + 1]
for k, l in enumerate(lines[begin:end + 1]):
    m = re.match(r"^/\* man 3 (cuxfer\w*)\b", l)
    if m:
        page = m.group(1)
        groups.append(page)
    for n in re.findall(r"\b(cuxfer_[a-z0-9_]+|CUXFER_[A-Z0-9_]+)\b", re.sub(r"man 3 \w+", "", l)):
        if n != "CUXFER_API":
            named.setdefault(n, (page, begin + k))
    c = bcode[k]
    m = re.match(r"^CUXFER_API\b[^(]*?\b(cuxfer_[a-z0-9_]+)\s*\(", c)
    if m:
        declared[m.group(1)] = (page, begin + k)
    m = re.match(r"^typedef\s+(?:struct|enum)\s+(cuxfer_[a-z0-9_]+)\b", c)
    if m:
        block_types[m.group(1)] = (page, begin + k)
    m = re.match(r"^typedef\s+enum\s+(cuxfer_[a-z0-9_]+)\s*\{", c)
    if m:
        defined_in_block.add(m.group(1))
    m = re.match(r"^\s+(CUXFER_[A-Z0-9_]+)\s*(?:=[^,]*)?,?\s*$", c)
    if m:
        defined_in_block.add(m.group(1))

tests = []
bad = ["%s (line %d) is not declared in the block" % (f, i + 1)
       for f, i in sorted(funcs.items()) if f not in declared]
bad += ["%s is declared (line %d) but defined nowhere" % (f, d[1] + 1)
        for f, d in sorted(declared.items()) if f not in funcs]
bad += ["%s is defined (line %d) before the block" % (f, i + 1)
        for f, i in sorted(funcs.items()) if f in declared and i < begin]
tests.append((not bad, "every public function (%d) is declared in the block before its "
              "definition, and defined" % len(funcs), bad))
bad = ["%s (line %d) is not declared in the block" % (t, i + 1)
       for t, i in sorted(types.items()) if t not in block_types]
bad += ["%s is declared but has no definition" % t for t in sorted(block_types)
        if t not in types and t not in defined_in_block]
tests.append((not bad, "every public type (%d) is declared in the block"
              % (len(types) + len(defined_in_block & set(block_types))), bad))
bad = ["%s (line %d) is not named in the block" % (c, i + 1)
       for c, i in sorted(consts.items()) if c not in named]
bad += ["%s, named in the block (line %d), is not in the header" % (n, w[1] + 1)
        for n, w in sorted(named.items())
        if n not in funcs and n not in types and n not in consts and n not in defined_in_block
        and n not in settings]
tests.append((not bad, "every public macro and constant is named in the block, and every "
              "name there exists", bad))
pages = {}
bad = []
for n, (pg, i) in sorted(named.items()):
    if pg is None:
        if n in funcs or n in types:
            bad.append("%s (line %d) is in no `man 3` group" % (n, i + 1))
        continue
    if pg not in pages:
        f = os.path.join(mandir, pg + ".3")
        pages[pg] = open(f, encoding="utf-8").read() if os.path.exists(f) else None
    if pages[pg] is None:
        bad.append("group `man 3 %s` (line %d): no such page" % (pg, i + 1))
    elif not re.search(r"(?<![A-Za-z0-9_])" + re.escape(n) + r"(?![A-Za-z0-9_])", pages[pg]):
        bad.append("%s (line %d) is under `man 3 %s`, which does not document it"
                   % (n, i + 1, pg))
tests.append((not bad, "each name is under a page that documents it (%d pages)" % len(groups),
              bad))

print("1..%d" % len(tests))
for k, (good, what, details) in enumerate(tests, 1):
    print("%s %d - %s" % ("ok" if good else "not ok", k, what))
    for d in details[:40]:
        print("#   " + d)
EOF
