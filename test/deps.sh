#!/bin/sh
# Makes sure the test dependencies are installed: Check and zlib, and PETSc
# (petsc-dev, with mpicc) for the krylov-vs-PETSc comparison tests. As root
# it installs them with apt-get; otherwise it prints the exact command and
# fails for Check and zlib, while without PETSc it only says so (the
# comparison tests then skip visibly).
# With the argument "fuzz": the libFuzzer toolchain instead (clang-14, its
# fuzzer runtime libclang-rt-14-dev, and libomp-14-dev for -fopenmp).
set -u
if [ "${1:-}" = fuzz ]; then
    missing=""
    command -v clang-14 >/dev/null 2>&1 || missing="$missing clang-14"
    rt=$(clang-14 -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null)
    [ -f "$rt" ] || missing="$missing libclang-rt-14-dev"
    tmp=$(mktemp -d)
    echo 'int main(void) { return 0; }' >"$tmp/omp.c"
    clang-14 -fopenmp "$tmp/omp.c" -o "$tmp/omp" >/dev/null 2>&1 ||
        missing="$missing libomp-14-dev"
    rm -rf "$tmp"
    [ -z "$missing" ] && exit 0
    if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
        echo "installing fuzzing dependencies:$missing"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >/dev/null &&
            apt-get install -y -qq $missing >/dev/null && exit 0
        echo "error: apt-get install$missing failed" >&2
        exit 1
    fi
    echo "error: missing fuzzing dependencies:$missing" >&2
    echo "install them with: sudo apt-get install$missing" >&2
    exit 1
fi
missing=""
pkg-config --exists check 2>/dev/null || missing="$missing check"
pkg-config --exists zlib 2>/dev/null || missing="$missing zlib1g-dev"
command -v pkg-config >/dev/null 2>&1 || missing="pkg-config $missing"
petsc=""
{ pkg-config --exists PETSc 2>/dev/null && command -v mpicc >/dev/null 2>&1; } ||
    petsc=" petsc-dev"
[ -z "$missing$petsc" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing test dependencies:$missing$petsc"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null &&
        apt-get install -y -qq $missing $petsc >/dev/null || {
        echo "error: apt-get install$missing$petsc failed" >&2
        exit 1
    }
    exit 0
fi
if [ -n "$petsc" ]; then
    echo "note: PETSc is not installed, so the PETSc comparison tests will" \
        "skip; install it with: sudo apt-get install petsc-dev" >&2
fi
[ -z "$missing" ] && exit 0
echo "error: missing test dependencies:$missing" >&2
echo "install them with: sudo apt-get install$missing$petsc" >&2
exit 1
