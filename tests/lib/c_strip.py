# SPDX-License-Identifier: MIT
"""strip(text): C source with its comments (/* */ and //) blanked and the
insides of its string and character literals blanked, the line structure
kept, so that a line number still points at the same line.  What the
header's checks (tests/header/api.sh, tests/header/layers.sh) read code
from; they import it with sys.dont_write_bytecode set (no __pycache__ in
the source tree)."""
import re


def strip(text):
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j]) + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)
