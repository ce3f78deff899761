#!/usr/bin/env bash
# inspect_test.sh COMMITLAB -- `commitlab inspect --verify` on a real
# database: exit 0 after a clean close; after one byte of the root page is
# changed, exit 1 naming that page; bad arguments exit 2 naming the flag;
# --help (of inspect and of tour) prints usage and exits 0.
set -u
bin=$1
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

"$bin" bench --engine commitlab --no-preload --txns 3000 --warmup 0 --dir "$work" --reuse --quiet \
    >"$work/bench.out" 2>&1 || { cat "$work/bench.out"; fail "bench could not build a database"; }
db="$work/commitlab.db"
[ -f "$db/data.clp" ] || fail "no database at $db"

out=$("$bin" inspect "$db" --verify 2>&1); rc=$?
[ $rc -eq 0 ] || { echo "$out"; fail "verify of a cleanly closed database exited $rc"; }
grep -q '^verify: ok' <<<"$out" || fail "no 'verify: ok' line"
grep -q 'checkpoint LSN' <<<"$out" || fail "no checkpoint LSN line"
grep -Eq 'wal-[0-9a-f]{16}\.log' <<<"$out" || fail "no segment listed"
root=$(awk '/root page/ {print $3}' <<<"$out")
psize=$(awk '/page size/ {print $3}' <<<"$out")
[ -n "$root" ] && [ "$root" -gt 1 ] || fail "no root page in: $out"

printf '\377\376\375\374' | dd of="$db/data.clp" bs=1 seek=$((root * psize + 100)) conv=notrunc status=none
out=$("$bin" inspect "$db" --verify 2>&1); rc=$?
[ $rc -eq 1 ] || { echo "$out"; fail "verify of a damaged page exited $rc, want 1"; }
grep -q "corrupt page $root" <<<"$out" || { echo "$out"; fail "the damaged page $root is not named"; }

"$bin" inspect >/dev/null 2>&1; [ $? -eq 2 ] || fail "inspect without DIR should exit 2"
err=$("$bin" inspect "$db" --bogus 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "unknown flag should exit 2, got $rc"
grep -q -- '--bogus' <<<"$err" || fail "the error should name --bogus: $err"
# --help: usage on stdout, exit 0 (inspect and tour)
out=$("$bin" inspect --help); rc=$?
[ $rc -eq 0 ] && grep -q '^usage: commitlab inspect' <<<"$out" || fail "inspect --help: exit $rc: $out"
out=$("$bin" tour --help); rc=$?
[ $rc -eq 0 ] && grep -q '^usage: commitlab tour' <<<"$out" || fail "tour --help: exit $rc: $out"
echo "inspect: 4 cases passed"
