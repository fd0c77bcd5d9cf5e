#!/bin/sh
# Packs what a device call needs into ignored folders of the checkout, all
# under the 64 MiB a call may carry (measured 2026-11-27: 15 + 8 + 7 + 18
# MiB, with the tracked tree about 4):
#   .gpu/build.tar.xz  the CUDA build (krylov, libkrylov.so, test programs,
#                      examples), debug info stripped, xz-compressed
#   .matrices/         ../shared/matrices, gzipped (gpu_check.sh unpacks)
#   .graphs/           ../shared/graphs as they are (.gra.gz)
#   .large/            ../shared/matrices-large recompressed with xz
#                      (LARGE=1 only: about 3 minutes of xz here)
# On the device: (cd .gpu && xz -dc build.tar.xz | tar -xf -), then
#   BUILD=.gpu/build sh bench/gpu_check.sh PART ...
# with carry [".gpu", ".matrices", ".graphs"] (".large" when needed:
#   mkdir -p .ml && for f in .large/*.xz; do xz -dc $f > .ml/$(basename $f .xz); done
#   SPMM_LARGE=.ml BUILD=.gpu/build sh bench/gpu_check.sh spmm).
set -eu
shared=${SHARED:-../shared}
exclude=$(git rev-parse --git-path info/exclude)
mkdir -p "$(dirname "$exclude")" .gpu .matrices .graphs
for d in .gpu .matrices .graphs .large; do
    grep -qx "/$d/" "$exclude" 2>/dev/null || echo "/$d/" >>"$exclude"
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/build"
cp -a build/krylov build/libkrylov.so build/examples build/test "$tmp/build/"
rm -f "$tmp"/build/test/*.o "$tmp"/build/test/*.d "$tmp"/build/examples/*.o \
    "$tmp"/build/examples/*.d
strip --strip-debug "$tmp/build/krylov" "$tmp/build/libkrylov.so" \
    "$tmp"/build/test/test_* "$tmp"/build/examples/*
# a dictionary past the largest binary (about 9 MiB): the test programs
# share their CUDA code, which xz then stores once (72 MiB at -6 alone)
tar -C "$tmp" -cf - build | xz -T2 --lzma2=preset=6,dict=64MiB >.gpu/build.tar.xz
rm -f .matrices/*.mtx # unpacked by an earlier gpu_check.sh run here
for f in "$shared"/matrices/*.mtx; do
    [ -f ".matrices/$(basename "$f").gz" ] || gzip -c "$f" >".matrices/$(basename "$f").gz"
done
cp -n "$shared"/graphs/*.gra.gz .graphs/ 2>/dev/null || true
if [ "${LARGE:-0}" = 1 ]; then
    mkdir -p .large
    for f in "$shared"/matrices-large/*.mtx.gz; do
        out=".large/$(basename "$f" .gz).xz"
        [ -f "$out" ] || gunzip -c "$f" | xz -T2 -9 >"$out"
    done
fi
du -sh .gpu .matrices .graphs .large 2>/dev/null || true
