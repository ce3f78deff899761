#!/usr/bin/env bash
# fuzz.sh BUILD FUZZ_BUILD SECONDS -- builds the libFuzzer targets of
# tests/fuzz with clang (ASan+UBSan) in FUZZ_BUILD, makes a corpus of real
# files with BUILD's commitlab (segments, meta pages and page files of
# crashed, recovered and cleanly closed databases), and runs each target
# for SECONDS.  Any crash, sanitizer report, leak or timeout fails; the
# input that caused it is kept in FUZZ_BUILD/fuzz-artifacts/ (add it to
# tests/fuzz/regress/<target>/ with the fix, and the test suite replays it).
set -euo pipefail
trap 'echo "fuzz: scripts/fuzz.sh failed at line $LINENO (exit $?)" >&2' ERR
build=$1 fbuild=$2 secs=$3
cli=$build/commitlab
targets="segment_header meta_page wal_reader page_file"

[ -x "$cli" ] || { echo "fuzz: $cli missing: run make first" >&2; exit 1; }
command -v clang >/dev/null || { echo "fuzz: clang missing: apt-get install -y clang libclang-rt-14-dev" >&2; exit 1; }
cmake -S . -B "$fbuild" -DCMAKE_C_COMPILER=clang -DCL_FUZZ=ON -DCL_BUILD_CLI=OFF -DCL_BUILD_TESTS=OFF >/dev/null
cmake --build "$fbuild" -j "$(nproc 2>/dev/null || echo 2)" >/dev/null

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for t in $targets; do mkdir -p "$work/corpus-$t" "$work/run-$t"; done

# prefix MODE FILE [BYTES] -- writes the mode byte, then FILE (its first BYTES).
prefix() {
    printf "\\$(printf '%03o' "$1")"
    if [ $# -gt 2 ]; then head -c "$3" "$2"; else cat "$2"; fi
}

# Real files: crashed directories (torn tails, several segments), the same
# after recovery, and a cleanly closed database with a tree of some depth.
n=0
for seed in 1 2 3 4 5 6; do
    d=$work/db$seed
    "$cli" crash --replay "$seed" --sync none --model torn --clients 2 --txns 60 --dir "$d" >/dev/null 2>&1 || true
    for dir in "$d/crash.crashed" "$d/crash"; do
        [ -f "$dir/data.clp" ] || continue
        n=$((n + 1))
        prefix 0 "$dir/data.clp" >"$work/corpus-page_file/p$n"
        prefix 1 "$dir/data.clp" >"$work/corpus-page_file/s$n"
        prefix 0 "$dir/data.clp" 4096 >"$work/corpus-meta_page/m0-$n"
        dd if="$dir/data.clp" of="$work/page1" bs=4096 skip=1 count=1 status=none
        prefix 2 "$work/page1" >"$work/corpus-meta_page/m1-$n"
        segs=("$dir"/wal-*.log)
        [ -f "${segs[0]}" ] || continue
        prefix 0 "${segs[0]}" 4096 >"$work/corpus-segment_header/h$n"
        prefix 0 "${segs[0]}" >"$work/corpus-wal_reader/w$n"
        if [ ${#segs[@]} -gt 1 ]; then
            { prefix 2 "${segs[0]}"; cat "${segs[1]}"; } >"$work/corpus-wal_reader/ww$n"
        fi
    done
done
"$cli" bench --engine commitlab --no-preload --txns 2000 --keys 2000 --warmup 0 --dir "$work/bench" --reuse \
    --quiet >/dev/null 2>&1 || true
if [ -f "$work/bench/commitlab.db/data.clp" ]; then
    prefix 0 "$work/bench/commitlab.db/data.clp" >"$work/corpus-page_file/bench"
fi
for t in $targets; do
    [ -n "$(ls -A "$work/corpus-$t")" ] || { echo "fuzz: no corpus for $t: $cli made no database" >&2; exit 1; }
done

mkdir -p "$fbuild/fuzz-artifacts"
fail=0
for t in $targets; do
    max_len=4200
    case $t in wal_reader) max_len=131073 ;; page_file) max_len=1048577 ;; esac
    log=$work/run-$t/log
    seeds=$(ls "$work/corpus-$t" | wc -l)
    if (cd "$work/run-$t" && "$OLDPWD/$fbuild/tests/fuzz/fuzz_$t" -max_total_time="$secs" -timeout=10 \
            -rss_limit_mb=2048 -max_len=$max_len -print_final_stats=1 \
            -artifact_prefix="$OLDPWD/$fbuild/fuzz-artifacts/$t-" "$work/corpus-$t") >"$log" 2>&1; then
        runs=$(awk '/stat::number_of_executed_units/ {print $2}' "$log")
        cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1)
        echo "fuzz: $t: ok, ${runs:-?} inputs in ${secs} s ($cov), from $seeds real files"
    else
        tail -40 "$log" >&2
        echo "fuzz: $t FAILED; the input is in $fbuild/fuzz-artifacts/" >&2
        fail=1
    fi
done
exit $fail
