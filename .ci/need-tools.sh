#!/bin/sh
# SPDX-License-Identifier: MIT
# .ci/need-tools.sh - make sure the hardening steps of .ci/run have their
# tools: valgrind, clang with its libFuzzer/sanitizer runtime, pip.  What
# is missing is installed with apt-get when running as root (CI), else
# the command is printed and the script fails.  Nothing is assumed: each
# tool is probed, the fuzzer runtime by linking a one-line target.
set -u
missing=
command -v valgrind >/dev/null 2>&1 || missing="$missing valgrind"
command -v clang >/dev/null 2>&1 || missing="$missing clang"
python3 -m pip --version >/dev/null 2>&1 || missing="$missing python3-pip"

fuzzer_links() {
    command -v clang >/dev/null 2>&1 || return 1
    d=$(mktemp -d "${TMPDIR:-/tmp}/cuxfer-need.XXXXXX") || return 1
    printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n)\n{ (void)d; (void)n; return 0; }\n' >"$d/t.c"
    clang -fsanitize=fuzzer,address,undefined "$d/t.c" -o "$d/t" >/dev/null 2>&1
    rc=$?
    rm -rf "$d"
    return $rc
}

apt_install() {
    if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
        echo "need-tools: missing:$*; install with: sudo apt-get install$*" >&2
        return 1
    fi
    echo "need-tools: installing$*" >&2
    # shellcheck disable=SC2068
    DEBIAN_FRONTEND=noninteractive apt-get install -y -q $@ >&2 ||
        { apt-get update -q >&2 &&
          DEBIAN_FRONTEND=noninteractive apt-get install -y -q $@ >&2; }
}

if [ -n "$missing" ]; then
    apt_install $missing || exit 1
fi
if ! fuzzer_links; then
    # Debian's metapackage follows the default clang; the versioned one
    # matches the clang actually installed.
    major=$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' | head -n 1)
    apt_install libclang-rt-dev || apt_install "libclang-rt-$major-dev" || exit 1
    fuzzer_links || {
        echo "need-tools: clang still cannot link -fsanitize=fuzzer" >&2
        exit 1
    }
fi
echo "need-tools: valgrind, clang (libFuzzer), pip present"
