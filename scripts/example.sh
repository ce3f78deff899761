#!/bin/sh
# example.sh BUILD -- installs the build into a scratch prefix and builds
# the examples against it through pkg-config, as a user would:
# examples/hello.c (embedding the library), run; and examples/applog.c
# (an engine plugin, against the installed commitlab_engine.h) and its
# early-acknowledging variant, each benchmarked by the installed
# commitlab beside LMDB, in `commitlab report`, and kill-crashed: the
# example holds, the variant is FAILED.
set -eu
build=$1
top=$(cd "$(dirname "$0")/.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
pc=$(find "$tmp/prefix" -name commitlab.pc -print -quit)
[ -f "$(dirname "$pc")/commitlab-engine.pc" ] || { echo "example: no commitlab-engine.pc beside commitlab.pc"; exit 1; }
export PKG_CONFIG_PATH="$(dirname "$pc")"
libdir=$(pkg-config --variable=libdir commitlab)
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror "$top/examples/hello.c" $(pkg-config --cflags --libs commitlab) -o "$tmp/hello"
LD_LIBRARY_PATH="$libdir" "$tmp/hello" "$tmp/hello.db"
echo "example: hello built through pkg-config and ran: ok"

# The plugin: the installed header only, no library of commitlab's --
# pkg-config's commitlab-engine module gives the header's directory, and
# neither a library to link nor another module to find; the header is C99.
[ -z "$(pkg-config --libs commitlab-engine)" ] ||
    { echo "example: commitlab-engine.pc names libraries: $(pkg-config --libs commitlab-engine)"; exit 1; }
[ -z "$(pkg-config --print-requires commitlab-engine; pkg-config --print-requires-private commitlab-engine)" ] ||
    { echo "example: commitlab-engine.pc requires other modules"; exit 1; }
printf '#include <commitlab_engine.h>\nint main(void) { return CL_ENGINE_ABI_VERSION > 0 ? 0 : 1; }\n' >"$tmp/c99.c"
# shellcheck disable=SC2046
cc -std=c99 -pedantic -Wall -Wextra -Werror $(pkg-config --cflags commitlab-engine) "$tmp/c99.c" -o "$tmp/c99" ||
    { echo "example: commitlab_engine.h is not C99"; exit 1; }
mkdir "$tmp/plugins"
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror -O2 -shared -fPIC "$top/examples/applog.c" $(pkg-config --cflags commitlab-engine) \
    -lpthread -o "$tmp/plugins/libapplog.so"
# shellcheck disable=SC2046
cc -Wall -Wextra -Werror -O2 -shared -fPIC -DAPPLOG_EARLY_ACK "$top/examples/applog.c" \
    $(pkg-config --cflags commitlab-engine) -lpthread -o "$tmp/plugins/libapplog_early.so"
cl="$tmp/prefix/bin/commitlab"
cd "$tmp"
"$cl" bench --engine plugin:applog,lmdb --plugin-dir plugins --workload kv,tpcb --txns 200 --warmup 0 \
    --keys 2000 --verify --quiet --dir b --out bench.jsonl >bench.txt
grep -q '^applog .*read back' bench.txt || { cat bench.txt; echo "example: applog did not run"; exit 1; }
"$cl" report bench.jsonl -o report.html >/dev/null
grep -q applog report.html || { echo "example: applog is not in the report"; exit 1; }
"$cl" crash --mode kill --engine plugin:applog --plugin-dir plugins --sync commit --iterations 10 --quiet \
    --dir c >crash.txt || { cat crash.txt; echo "example: applog's kill campaign failed"; exit 1; }
if "$cl" crash --mode kill --engine plugin:applog_early --plugin-dir plugins --sync commit --iterations 30 \
    --quiet --dir c >early.txt; then
    cat early.txt
    echo "example: the early-acknowledging variant passed its kill campaign"
    exit 1
fi
grep -q '^applog_early commit .*FAILED$' early.txt || { cat early.txt; exit 1; }
echo "example: the applog plugin built through pkg-config, benchmarked, reported and kill-crashed: ok;"
echo "         its early-acknowledging variant FAILED the kill campaign, as it must"
