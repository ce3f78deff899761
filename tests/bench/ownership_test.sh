#!/usr/bin/env bash
# ownership_test.sh COMMITLAB -- the commands never delete what they did not
# make, and never run twice in one directory:
#  1. bench --dir D over a real commitlab database at D/commitlab.db (and a
#     file of the user's): refused with exit 2, nothing in D changed, D kept;
#     crash --dir D over an existing D/crash the same; a symbolic link where
#     a run directory would go is refused and its target untouched;
#  2. bench in an existing D with a file of the user's: runs, leaves the
#     file, and keeps D; in a D it made: removes D afterwards;
#  3. two benches with --reuse at once in one D: the second is refused with
#     exit 2, naming the first one's pid, and the first finishes;
#  4. a SIGKILLed bench's marked run directory is removed by the next run;
#  5. SIGINT or SIGTERM during bench, and during crash in each of its modes:
#     exit 130 or 143, no run directory, journal or child process left,
#     --out holding only whole JSON lines: the finished runs' and one for
#     the run the signal stopped, status "interrupted" (interrupt_test.sh
#     checks what those say);
#  6. outputs are checked before the work: probe --json, crash --out,
#     matrix --out and report -o at an unwritable path exit 2 at once;
#  7. --reuse of a database made with another segment size records the
#     size the run used, not the one asked for.
set -u
bin=${1:?usage: ownership_test.sh COMMITLAB}
fail() { echo "FAIL: $*" >&2; exit 1; }
work=$(mktemp -d)
pids=()
trap 'for p in "${pids[@]}"; do kill -9 "$p" 2>/dev/null; done; rm -rf "$work"' EXIT
cd "$work" || exit 1
sum() { (cd "$1" && find . -type f -print0 | sort -z | xargs -0 sha256sum); }

# 1. a real database in the way
"$bin" bench --reuse --no-preload --txns 20 --dir prod --quiet >/dev/null || fail "making the database"
echo "the user's notes" >prod/notes.txt
[ -f prod/commitlab.db/data.clp ] || fail "no database at prod/commitlab.db"
before=$(sum prod)
err=$("$bin" bench --txns 10 --dir prod --quiet 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] || fail "bench over a database: exit $rc: $err"
[ "$(wc -l <<<"$err")" -eq 1 ] || fail "want one line: $err"
grep -q "prod/commitlab.db exists and was not made by commitlab bench; nothing was removed" <<<"$err" \
    || fail "the refusal does not name the database: $err"
[ "$(sum prod)" = "$before" ] || fail "bench changed the directory it refused"
"$bin" inspect --verify prod/commitlab.db >/dev/null || fail "the database does not verify after the refusal"
mkdir -p c/crash && echo keep >c/crash/mine
err=$("$bin" crash --sync commit --model drop --iterations 2 --quiet --dir c 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "c/crash exists and was not made by commitlab crash" <<<"$err" \
    || fail "crash over an existing D/crash: exit $rc: $err"
[ "$(cat c/crash/mine)" = keep ] || fail "crash touched D/crash"
mkdir -p target l && echo precious >target/file && ln -s "$work/target" l/commitlab.db
err=$("$bin" bench --txns 10 --dir l --quiet 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q "l/commitlab.db exists" <<<"$err" || fail "a link as the run directory: exit $rc: $err"
[ "$(cat target/file)" = precious ] && [ -L l/commitlab.db ] || fail "the link or its target changed"

# 2. an existing D is kept, one bench made is removed
mkdir -p mine && echo note >mine/notes.txt
"$bin" bench --txns 10 --dir mine --quiet >/dev/null || fail "bench in an existing directory"
[ "$(ls -A mine)" = notes.txt ] || fail "bench left or removed something in mine/: $(ls -A mine)"
"$bin" bench --txns 10 --dir fresh.d --quiet >/dev/null || fail "bench in a new directory"
[ ! -e fresh.d ] || fail "bench left the directory it made"

# 3. two benches in one D at once
"$bin" bench --reuse --duration 4 --warmup 0 --dir shared --quiet >/dev/null 2>first.err &
first=$!
pids+=("$first")
for _ in $(seq 50); do grep -q FLOCK /proc/locks && [ -d shared/commitlab.db ] && break; sleep 0.1; done
sleep 0.5
err=$("$bin" bench --reuse --txns 10 --dir shared --quiet 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -qx "commitlab bench: --dir shared is in use by another run (process $first)" <<<"$err" \
    || fail "a second bench in the same directory: exit $rc: $err"
wait "$first" || { cat first.err; fail "the first bench failed beside the refused one"; }

# 4. a killed bench's leftover is its own
"$bin" bench --duration 30 --warmup 0 --dir killed --quiet >/dev/null 2>&1 &
victim=$!
pids+=("$victim")
for _ in $(seq 50); do [ -f killed/commitlab.db/data.clp ] && break; sleep 0.1; done
kill -9 "$victim"; wait "$victim" 2>/dev/null
[ -f killed/commitlab.db/.commitlab-scratch ] || fail "the killed run left no marked directory"
"$bin" bench --txns 10 --dir killed --quiet >/dev/null || fail "bench after a killed one"
[ ! -e killed/commitlab.db ] || fail "the leftover is still there"

# 5. interrupted runs clean up
"$bin" bench --duration 3 --warmup 0 --clients 1,2 --dir intr --out intr.jsonl --quiet >/dev/null 2>&1 &
b=$!
pids+=("$b")
# the signal comes in the second run: once the first one's line is out
for _ in $(seq 600); do [ -s intr.jsonl ] && break; sleep 0.1; done
sleep 0.5
kill -INT "$b"; wait "$b"; rc=$?
[ $rc -eq 130 ] || fail "bench after SIGINT: exit $rc"
[ ! -e intr ] || fail "SIGINT left $(find intr)"
# whole lines: the finished run, then the interrupted one
statuses() { python3 -c 'import json,sys; print(" ".join(json.loads(l)["status"] for l in open(sys.argv[1])))' "$1"; }
[ -f intr.jsonl ] && [ "$(statuses intr.jsonl)" = "ok interrupted" ] \
    || fail "want the finished run and the interrupted one in --out: $(cat intr.jsonl)"
"$bin" bench --duration 30 --warmup 0 --dir intr2 --out intr2.jsonl --quiet >/dev/null 2>&1 &
b=$!
pids+=("$b")
sleep 1.5
kill -INT "$b"; wait "$b"; rc=$?
[ $rc -eq 130 ] && [ ! -e intr2 ] && [ "$(statuses intr2.jsonl)" = interrupted ] \
    || fail "SIGINT in the first run: exit $rc, left $(ls -d intr2* 2>/dev/null)"
"$bin" crash --sync commit --model drop --iterations 1000000 --quiet --dir cr --out cr.jsonl >/dev/null 2>&1 &
b=$!
pids+=("$b")
sleep 2
kill -TERM "$b"; wait "$b"; rc=$?
[ $rc -eq 143 ] || fail "crash after SIGTERM: exit $rc"
[ ! -e cr ] && [ "$(statuses cr.jsonl)" = interrupted ] || fail "SIGTERM left $(ls -d cr* 2>/dev/null)"
"$bin" bench --duration 30 --warmup 0 --dir intr3 --out intr3.jsonl --quiet >/dev/null 2>&1 &
b=$!
pids+=("$b")
sleep 1.5
kill -TERM "$b"; wait "$b"; rc=$?
[ $rc -eq 143 ] && [ ! -e intr3 ] && [ "$(statuses intr3.jsonl)" = interrupted ] \
    || fail "bench after SIGTERM: exit $rc, left $(ls -d intr3* 2>/dev/null)"
# crash's kill and cut modes run children: they go too, and with them the
# database directories and the cut's undo journal beside them
for mode in kill cut; do
    "$bin" crash --mode $mode --engine commitlab --sync commit --iterations 100000 --quiet --dir c$mode \
        --out c$mode.jsonl >/dev/null 2>&1 &
    b=$!
    pids+=("$b")
    # the parent runs a child per iteration and recovers between them, so
    # look for a child until one is there (a loaded machine may take long)
    kids=
    for _ in $(seq 600); do
        kids=$(pgrep -P "$b" | tr '\n' ' ')
        [ -n "$kids" ] && break
        sleep 0.05
    done
    [ -n "$kids" ] || fail "crash --mode $mode had no child process to check after 30 s"
    kill -INT "$b"; wait "$b"; rc=$?
    [ $rc -eq 130 ] || fail "crash --mode $mode after SIGINT: exit $rc"
    [ "$(statuses c$mode.jsonl)" = interrupted ] || fail "crash --mode $mode: --out: $(cat c$mode.jsonl)"
    rm c$mode.jsonl
    [ -z "$(ls -d c$mode* 2>/dev/null)" ] || fail "crash --mode $mode after SIGINT left $(ls -d c$mode*)"
    for k in $kids; do kill -0 "$k" 2>/dev/null && fail "crash --mode $mode left its child $k running"; done
done

# 6. outputs checked before the work
start=$(date +%s%N)
err=$("$bin" probe --dir "$work" --seconds 2 --json "$work/no/such/dir/p.json" 2>&1 >/dev/null); rc=$?
ms=$((($(date +%s%N) - start) / 1000000))
[ $rc -eq 2 ] && grep -q -- '--json' <<<"$err" && [ $ms -lt 1500 ] || fail "probe --json unwritable: exit $rc after $ms ms: $err"
err=$("$bin" crash --sync commit --iterations 2 --quiet --dir c2 --out "$work/no/such/c.jsonl" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q -- '--out' <<<"$err" && [ ! -e c2 ] || fail "crash --out unwritable: exit $rc: $err"
if [ "$(id -u)" -eq 0 ]; then # matrix refuses to start without root first
    err=$("$bin" matrix --fs tmpfs --workdir m2 --out "$work/no/such/m.jsonl" 2>&1 >/dev/null); rc=$?
    [ $rc -eq 2 ] && grep -q -- '--out' <<<"$err" && [ ! -e m2 ] || fail "matrix --out unwritable: exit $rc: $err"
fi
printf '{"schema":"commitlab-bench/1"}\n' >r.jsonl
err=$("$bin" report r.jsonl -o "$work/no/such/r.html" 2>&1 >/dev/null); rc=$?
[ $rc -eq 2 ] && grep -q -- '-o' <<<"$err" || fail "report -o unwritable: exit $rc: $err"

# 7. --reuse records what ran
"$bin" bench --reuse --no-preload --txns 10 --segment-size 1M --dir seg --quiet >/dev/null || fail "making seg"
"$bin" bench --reuse --no-preload --txns 10 --segment-size 4M --dir seg --quiet --out seg.jsonl >/dev/null \
    || fail "reusing seg"
python3 - seg.jsonl <<'PY' || fail "--reuse recorded the size asked for, not the one used"
import json, sys
r = json.loads(open(sys.argv[1]).readline())
assert r["config"]["segment_size"] == 1 << 20, r["config"]["segment_size"]
assert "stored" in r["engine_settings"], r["engine_settings"]
PY

echo "ownership: 7 cases passed"
