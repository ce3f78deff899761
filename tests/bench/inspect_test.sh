#!/usr/bin/env bash
# inspect_test.sh COMMITLAB -- `commitlab inspect --verify` on a real
# database: exit 0 after a clean close; after one byte of the root page is
# changed, exit 1 naming that page; bad arguments exit 2 naming the flag;
# --help (of inspect and of tour) prints usage and exits 0; a directory
# that is not a database, or none, is one line and exit 3; a database in
# use is refused with exit 4, naming the process that holds it; a lost or
# cut newest segment is corruption naming the file (exit 1); a FIFO in place
# of a segment is refused at once; a file that is not a directory, exit 3;
# --records says when there is no record after the checkpoint; a
# directory holding databases (bench's --dir) names them and the command
# to inspect one; bench --no-final-checkpoint leaves its records in the
# log for --records (n/a for lmdb), and the next open recovers them.
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
# not a database, no such directory: one line, no header, exit 3
mkdir -p "$work/empty"
out=$("$bin" inspect "$work/empty" 2>&1); rc=$?
[ $rc -eq 3 ] && [ "$out" = "commitlab inspect: $work/empty: not a commitlab database (no data.clp)" ] \
    || fail "inspect of a directory that is not a database: exit $rc: $out"
out=$("$bin" inspect "$work/none" 2>&1); rc=$?
[ $rc -eq 3 ] && [ "$(wc -l <<<"$out")" -eq 1 ] && grep -q "^commitlab inspect: $work/none: " <<<"$out" \
    || fail "inspect of a missing directory: exit $rc: $out"
# --records on a database whose close checkpointed: says there is none
out=$("$bin" inspect "$db" --records 2>&1); rc=$?
[ $rc -eq 0 ] && grep -qx 'records: none after the checkpoint' <<<"$out" \
    || fail "inspect --records with no record after the checkpoint: exit $rc: $out"
# the directory bench --dir D --reuse was given is not a database, but holds
# one: named, with the command that inspects it (one line, exit 3)
out=$("$bin" inspect "$work" 2>&1); rc=$?
[ $rc -eq 3 ] && [ "$out" = "commitlab inspect: $work: not a commitlab database (no data.clp); $work/commitlab.db is one: commitlab inspect $work/commitlab.db" ] \
    || fail "inspect of bench's --dir: exit $rc: $out"
mkdir -p "$work/multi/plain"
for d in d.db b.db a.db c.db; do cp -r "$db" "$work/multi/$d"; done
out=$("$bin" inspect "$work/multi" 2>&1); rc=$?
[ $rc -eq 3 ] && [ "$out" = "commitlab inspect: $work/multi: not a commitlab database (no data.clp); $work/multi/a.db, $work/multi/b.db, $work/multi/c.db and 1 more are databases: commitlab inspect $work/multi/a.db" ] \
    || fail "inspect of a directory holding four databases: exit $rc: $out"
rm -rf "$work/multi/c.db" "$work/multi/d.db"
out=$("$bin" inspect "$work/multi" 2>&1); rc=$?
[ $rc -eq 3 ] && [ "$out" = "commitlab inspect: $work/multi: not a commitlab database (no data.clp); $work/multi/a.db and $work/multi/b.db are databases: commitlab inspect $work/multi/a.db" ] \
    || fail "inspect of a directory holding two databases: exit $rc: $out"
rm -rf "$work/multi"
# bench --no-final-checkpoint: the close leaves the run's log, so --records
# lists its commits; the next open recovers them (and checkpoints)
rm -rf "$db"
"$bin" bench --engine commitlab --no-preload --txns 100 --warmup 0 --dir "$work" --reuse --no-final-checkpoint \
    --quiet >"$work/bench.out" 2>&1 || { cat "$work/bench.out"; fail "bench --no-final-checkpoint"; }
out=$("$bin" inspect "$db" --records --verify 2>&1); rc=$?
commits=$(grep -Ec '^ +[0-9]+ +[0-9]+ COMMIT ' <<<"$out")
[ $rc -eq 0 ] && [ "$commits" -ge 100 ] && grep -Eq "^  commit records +$commits$" <<<"$out" \
    && ! grep -q 'records: none' <<<"$out" \
    || fail "inspect --records after bench --no-final-checkpoint: exit $rc, $commits commits: $out"
out=$("$bin" bench --engine lmdb --no-preload --txns 10 --warmup 0 --dir "$work/lmdb" --no-final-checkpoint 2>&1)
grep -q 'n/a  (--no-final-checkpoint on: ' <<<"$out" || fail "lmdb with --no-final-checkpoint is not n/a with a reason: $out"
"$bin" bench --engine commitlab --no-preload --txns 1 --warmup 0 --dir "$work" --reuse --quiet >/dev/null 2>&1 \
    || fail "bench --reuse after --no-final-checkpoint"
out=$("$bin" inspect "$db" --records 2>&1); rc=$?
entries=$(awk '/^  entries/ {print $2}' <<<"$out")
[ $rc -eq 0 ] && grep -qx 'records: none after the checkpoint' <<<"$out" && [ "${entries:-0}" -ge 100 ] \
    || fail "the records left by --no-final-checkpoint were not recovered: exit $rc: $out"
# a database in use: refused (exit 4) naming the process, never read under a live writer
rm -rf "$db"
"$bin" bench --engine commitlab --no-preload --duration 3 --warmup 0 --dir "$work" --reuse --quiet >/dev/null 2>&1 &
holder=$!
for _ in $(seq 50); do [ -f "$db/data.clp" ] && break; sleep 0.1; done
sleep 0.3
out=$("$bin" inspect "$db" --verify 2>&1); rc=$?
wait "$holder" || fail "the bench holding the database failed"
[ $rc -eq 4 ] && [ "$out" = "commitlab inspect: database $db is in use (process $holder)" ] \
    || fail "inspect of a database in use: exit $rc: $out"
"$bin" inspect "$db" --verify >/dev/null || fail "verify after the holder closed"
# the newest segment lost after a clean close: the log's own evidence (the
# checkpoint's segment, or a SWITCH into it) makes it corruption, exit 1,
# and the one-line error names the file
rm -rf "$db"
"$bin" bench --engine commitlab --no-preload --txns 100 --warmup 0 --segment-size 64K \
    --dir "$work" --reuse --quiet >/dev/null 2>&1 || fail "bench with 64 KiB segments"
newest=$(cd "$db" && ls wal-*.log | sort | tail -n 1)
cp "$db/$newest" "$work/keep.log"
for cut in missing 0 4096; do
    if [ $cut = missing ]; then rm -f "$db/$newest"; else cp "$work/keep.log" "$db/$newest"; truncate -s $cut "$db/$newest"; fi
    out=$("$bin" inspect "$db" --verify 2>&1 >/dev/null); rc=$?
    [ $rc -eq 1 ] && grep -q "CORRUPT at LSN .*($newest)" <<<"$out" && [ "$(wc -l <<<"$out")" -eq 1 ] \
        || fail "inspect --verify with $newest $cut: exit $rc: $out"
done
# a FIFO where a segment should be: refused at once, never a hang
rm -f "$db/$newest"; mkfifo "$db/$newest"
out=$(timeout 10 "$bin" inspect "$db" 2>&1 >/dev/null); rc=$?
[ $rc -ne 124 ] || fail "inspect hangs on a FIFO in place of $newest"
[ $rc -eq 1 ] && grep -q "$newest" <<<"$out" || fail "a FIFO in place of $newest: exit $rc: $out"
# a file, not a directory: one line, exit 3
out=$("$bin" inspect "$work/keep.log" 2>&1); rc=$?
[ $rc -eq 3 ] && [ "$out" = "commitlab inspect: $work/keep.log: not a directory" ] \
    || fail "inspect of a file: exit $rc: $out"
echo "inspect: 13 cases passed"
