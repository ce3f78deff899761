#!/bin/sh
# example.sh BUILD -- installs the build into a scratch prefix, builds
# examples/hello.c against it through pkg-config (as an embedding user
# would), and runs it.
set -eu
build=$1
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
pc=$(find "$tmp/prefix" -name commitlab.pc -print -quit)
export PKG_CONFIG_PATH="$(dirname "$pc")"
libdir=$(pkg-config --variable=libdir commitlab)
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror "$top/examples/hello.c" $(pkg-config --cflags --libs commitlab) -o "$tmp/hello"
LD_LIBRARY_PATH="$libdir" "$tmp/hello" "$tmp/hello.db"
echo "example: built through pkg-config and ran: ok"
