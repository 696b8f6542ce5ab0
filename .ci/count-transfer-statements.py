#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Count the "transfer statements" of CUDA programs: statements that call a
CUDA memory, copy, stream, event, callback, synchronization or peer-access
function, or any cuxfer function or macro but its device queries (a launch
check such as cudaGetLastError, helper_cuda's getLastCudaError or
CUXFER_CHECK_LAUNCH counts too; the checking wrappers CUXFER_CHECK and
CUXFER_TRY count only for what they wrap, as NVIDIA's checkCudaErrors).
Comments, string literals and printing (printf, fprintf, puts) are
excluded; device queries (cudaGetDeviceCount, cudaSetDevice,
cudaGetDeviceProperties, cudaDeviceGetAttribute, ...; cuxfer_device_count,
cuxfer_device_max_pitch, cuxfer_managed_concurrent) and kernel launches
are not transfer statements.  A statement is the text up
to a ';', '{' or '}' outside parentheses, so `while (cudaEventQuery(e) ==
cudaErrorNotReady)` counts once, and a statement counts once however many
such calls it holds.  The count is static: a call inside a loop counts once.

  count-transfer-statements.py FILE...           one line per file
  count-transfer-statements.py --pairs ORIG PORT [ORIG PORT]...
                                                 a table, original vs port,
                                                 and the ratio of the totals
"""
import re
import sys

TRANSFER = re.compile(
    r"\b(?:"
    r"cuda(?:Malloc\w*|Free\w*|HostAlloc|HostRegister|HostUnregister|HostGetDevicePointer"
    r"|Memcpy\w*|Memset\w*|MemPrefetch\w*|MemAdvise"
    r"|Stream\w*|Event\w*|LaunchHostFunc|DeviceSynchronize|ThreadSynchronize"
    r"|Graph\w*|UserObject\w*|GetLastError|PeekAtLastError"
    r"|DeviceCanAccessPeer|DeviceEnablePeerAccess|DeviceDisablePeerAccess)"
    r"|getLastCudaError"
    r"|cuxfer_(?!(?:device_count|device_max_pitch|managed_concurrent)\b)\w+"
    r"|CUXFER_(?!CHECK\s*\(|TRY\s*\()[A-Z_]+"
    r")\s*\(")
PRINTING = re.compile(r"^\s*(?:printf|fprintf|puts|fputs|snprintf)\s*\(")


def strip(src):
    """Remove comments, string and character literals, preprocessor lines."""
    src = re.sub(r"/\*.*?\*/", " ", src, flags=re.S)
    src = re.sub(r"//[^\n]*", " ", src)
    src = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', src)
    src = re.sub(r"'(?:\\.|[^'\\\n])*'", "''", src)
    src = re.sub(r"^\s*#.*?(?<!\\)$", " ", src, flags=re.M | re.S)
    return src


def statements(src):
    depth, cur = 0, []
    for ch in src:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if depth == 0 and ch in ";{}":
            yield "".join(cur).strip()
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        yield "".join(cur).strip()


def count(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        src = strip(f.read())
    n = 0
    for st in statements(src):
        if PRINTING.match(st):
            continue
        if TRANSFER.search(st):
            n += 1
    return n


def main(argv):
    if len(argv) > 1 and argv[1] == "--pairs":
        files = argv[2:]
        if not files or len(files) % 2:
            sys.exit("usage: count-transfer-statements.py --pairs ORIG PORT [ORIG PORT]...")
        to, tp = 0, 0
        print("%-28s %8s %6s %6s" % ("sample", "original", "port", "ratio"))
        for o, p in zip(files[::2], files[1::2]):
            no, np_ = count(o), count(p)
            to += no
            tp += np_
            name = p.rsplit("/", 1)[-1]
            print("%-28s %8d %6d %6.2f" % (name, no, np_, np_ / no if no else 0.0))
        print("%-28s %8d %6d %6.2f" % ("all", to, tp, tp / to if to else 0.0))
        return
    for path in argv[1:]:
        print("%6d %s" % (count(path), path))


if __name__ == "__main__":
    main(sys.argv)
