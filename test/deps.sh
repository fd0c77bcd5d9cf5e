#!/bin/sh
# Makes sure the test dependencies are installed: Check and zlib (and PETSc
# once the comparison tests exist). As root it installs them with apt-get;
# otherwise it prints the exact command and fails.
set -u
missing=""
pkg-config --exists check 2>/dev/null || missing="$missing check"
pkg-config --exists zlib 2>/dev/null || missing="$missing zlib1g-dev"
command -v pkg-config >/dev/null 2>&1 || missing="pkg-config $missing"
[ -z "$missing" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing test dependencies:$missing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >/dev/null &&
        apt-get install -y -qq $missing >/dev/null || {
        echo "error: apt-get install$missing failed" >&2
        exit 1
    }
    exit 0
fi
echo "error: missing test dependencies:$missing" >&2
echo "install them with: sudo apt-get install$missing" >&2
exit 1
