#!/usr/bin/env bash
# exercises_test.sh COMMITLAB MANUAL [--full OUTDIR] [--only N[,N...]]
#
# Keeps docs/exercises.md, the lab manual, true.  Every command of an
# exercise is written once, in the manual, in a fenced block tagged
# ```sh exercise-N; this script extracts those blocks, runs every command
# with COMMITLAB in place of the leading `commitlab`, and checks that the
# output holds what the exercise tells the reader to look at: each string
# of the EXPECT table below must appear both in the exercise's text (the
# manual names it) and in the output of the exercise's commands of that
# kind (the command still prints it).  A command with --lying-device must
# exit 1 (the check must fail on a device that lies); every other, 0.
#
# Short (the default, for the test suite): each command shortened by these
# substitutions, and nothing else changed --
#   probe          --seconds S   -> --seconds 0.05;  --files N -> --files 200
#                                   (added to --only appends when absent)
#   bench, matrix  --duration S  -> --duration 0.1;  --warmup S -> --warmup 0
#                                   (added when absent);  --repeat N -> --repeat 2;
#                                   --keys 1000 added when absent (a smaller preload)
#   crash          --iterations N -> --iterations 2
# Each exercise runs in a directory of its own under a temporary one, which
# is removed at the end (with any mount or loop device a matrix left).
#
# --full OUTDIR: every command at full length, as the manual gives it, in
# OUTDIR/run; each exercise's commands and their whole output are saved in
# OUTDIR/exercise-N.txt, and the commit, machine and filesystem in
# OUTDIR/environment.txt: the manual's answers are copied from these, so a
# quiet machine can produce them again.  The expectations are checked too.
# --only N,M: only those exercises.
#
# A matrix command needs root, loop devices and each filesystem's mkfs;
# without them it prints "skipped: needs root ..." and the rest still run.
# Exit 0: passed; 1: failed; 77: nothing could run.
set -u

BIN=${1:?usage: exercises_test.sh COMMITLAB MANUAL [--full OUTDIR] [--only N,...]}
MANUAL=${2:?usage: exercises_test.sh COMMITLAB MANUAL [--full OUTDIR] [--only N,...]}
shift 2
FULL=""
ONLY=""
while [ $# -gt 0 ]; do
    case $1 in
    --full) FULL=${2:?--full needs OUTDIR}; shift 2 ;;
    --only) ONLY=${2:?--only needs a list of exercise numbers}; shift 2 ;;
    *) echo "exercises_test.sh: unknown argument '$1' (accepted: --full OUTDIR, --only N,...)" >&2; exit 2 ;;
    esac
done
case $BIN in /*) ;; *) BIN=$PWD/$BIN ;; esac
case $MANUAL in /*) ;; *) MANUAL=$PWD/$MANUAL ;; esac
[ -x "$BIN" ] || { echo "exercises_test.sh: $BIN is not executable" >&2; exit 2; }
[ -r "$MANUAL" ] || { echo "exercises_test.sh: cannot read $MANUAL" >&2; exit 2; }
SRC=$(cd "$(dirname "$MANUAL")/.." && pwd)

# What each exercise tells the reader to look at: "N KIND|string", KIND the
# subcommand whose output must hold it (probe, bench, crash, inspect,
# matrix), or file:PATH for a file of the source tree the exercise quotes.
EXPECT='
1 probe|Compare file sync methods using one 8kB write:
1 probe|usecs/op
1 probe|Compare open_sync with different write sizes:
1 probe| 1 * 16kB open_sync write
1 probe|16 *  1kB open_sync writes
1 probe|sync cost
2 probe|Syncs per transaction (the ZODB FileStorage experiment):
2 probe|0 fsyncs per transaction
2 probe|1 fsync per transaction
2 probe|2 fsyncs per transaction
2 probe|ops/sec
3 probe|fsync_writethrough
3 probe|Non-sync'"'"'ed 8kB writes:
3 probe|Verdict:
3 probe|sync cost
3 probe|write cache
3 crash|acks lost
3 crash|LYING
3 crash|FAILED
3 crash|first failure: seed
4 bench|ops/sec
4 bench|usecs/op
4 bench|commits/sync
4 bench|clients
5 probe|fdatasync
5 bench|summary of
5 bench|commits/sync
5 bench|commit-delay=
5 bench|commit-siblings=
5 bench|best per engine
6 bench|elr=on
6 bench|elr=off
6 bench|commits/sync
6 bench|lock
6 file:include/commitlab.h|a reader may see a commit that is not yet durable
6 file:include/commitlab.h|With elr off a reader sees
7 crash|acks lost
7 crash|worst
7 crash|ok (may lose: not durable)
7 crash|processes killed (SIGKILL)
7 crash|simulated power failures
7 crash|every unsynced write and name dropped
8 crash|the directory as the crash left it
8 inspect|records:
8 inspect|sync_lsn
8 inspect|why the log ends
8 inspect|torn tail
9 bench|segments=recycle
9 bench|new
9 bench|reused
9 bench|waits
9 bench|max commit at a switch
9 matrix|verdict: native ext4
9 matrix|verdict: btrfs
9 matrix|wait ms
10 probe|open_datasync
10 probe|overwrite, fdatasync
10 probe|overwrite, O_DSYNC
10 probe|append, fdatasync
10 bench|sync-method=dsync
10 bench|sync-method=rwf-dsync
11 probe|Many small appends
11 probe|create file + first append
11 probe|append to existing file
11 probe|usecs/op/thread
12 probe|8 in flight
12 probe|1 in flight
12 probe|usecs/op/chain
12 bench|uring-depth=1
12 bench|uring-depth=8
12 bench|commits per sync p50/p99/max
12 bench|sync-latency=2000
13 bench|pipeline=1
13 bench|pipeline=64
13 bench|commits/sync
13 bench|usecs/op
14 crash|every unsynced write and name dropped
14 crash|lmdb
14 crash|rocksdb
14 crash|sqlite
14 crash|acks lost
14 crash|unacked+
14 crash|ok (may lose: no survival claimed)
15 crash|postgres
15 crash|acks lost
15 crash|worst
15 crash|with --interval 200
15 crash|a power failure
'

FAILS=0
RAN=0
fail() { echo "FAIL: $*"; FAILS=$((FAILS + 1)); }
pass() { echo "ok: $*"; }

if [ -n "$FULL" ]; then
    mkdir -p "$FULL/run" || exit 1
    FULL=$(cd "$FULL" && pwd)
    WORK=$FULL/run
else
    WORK=$(mktemp -d "${TMPDIR:-/tmp}/exercises_test.XXXXXX") || exit 1
fi
chmod 755 "$WORK" # as root a PostgreSQL server runs as postgres, which must enter it

# Nothing of ours stays mounted or attached; in short mode nothing stays.
cleanup() {
    local m
    for m in $(awk -v w="$WORK" 'index($2, w) == 1 { print $2 }' /proc/mounts 2>/dev/null | sort -r); do
        umount "$m" 2>/dev/null || umount -l "$m" 2>/dev/null
    done
    losetup -a 2>/dev/null | grep -F "$WORK" | cut -d: -f1 | while read -r d; do losetup -d "$d"; done
    [ -z "$FULL" ] && rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

# ---- the manual's structure --------------------------------------------------
# An exercise is a section "## Exercise N. ..." up to the next "## ".
section() {
    awk -v n="$1" '
        /^## / { on = ($0 ~ "^## Exercise " n "\\.") }
        on' "$MANUAL"
}
EXERCISES=$(grep -oE '^## Exercise [0-9]+\.' "$MANUAL" | grep -oE '[0-9]+')
COUNT=$(echo "$EXERCISES" | grep -c .)
[ "$COUNT" -ge 13 ] || fail "the manual has $COUNT exercises, want at least 13"
for n in $EXERCISES; do
    s=$(section "$n")
    for part in '**Question.**' '**Run.**' '**Look at.**' '**Answer' '**Try next.**'; do
        grep -qF -- "$part" <<<"$s" || fail "exercise $n has no $part"
    done
    grep -q "^\`\`\`sh exercise-$n\$" <<<"$s" || fail "exercise $n has no \`\`\`sh exercise-$n block"
    grep -q "^$n " <<<"$EXPECT" || fail "exercise $n has no expectations in this script"
done
for n in $(awk '{print $1}' <<<"$EXPECT" | sort -un); do
    grep -qx "$n" <<<"$EXERCISES" || fail "the expectations name exercise $n, which the manual does not have"
done
# A command block outside its exercise would run unchecked.
for tag in $(grep -oE '^```sh exercise-[0-9]+$' "$MANUAL" | grep -oE '[0-9]+$'); do
    section "$tag" | grep -q "^\`\`\`sh exercise-$tag\$" || fail "a block exercise-$tag is outside exercise $tag"
done

# The commands of exercise N, one a line: continuation lines joined, blank
# lines and comments dropped.
commands() {
    awk -v tag="\`\`\`sh exercise-$1" '
        $0 == tag { on = 1; next }
        on && /^```/ { on = 0; next }
        on' "$MANUAL" |
        sed -e 's/[[:space:]]#.*$//' -e 's/^#.*$//' |
        awk '{ if (sub(/\\[[:space:]]*$/, "")) { buf = buf $0; next } print buf $0; buf = "" }' |
        sed -e 's/[[:space:]]\+/ /g' -e 's/^ //' -e 's/ $//' | grep -v '^$'
}

# The short form of one command (see the header).
shorten() {
    local c=$1 sub
    sub=$(awk '{print $2}' <<<"$c")
    case $sub in
    probe)
        c=$(sed -E -e 's/--seconds [^ ]+/--seconds 0.05/' -e 's/--files [^ ]+/--files 200/' <<<"$c")
        if grep -q -- '--only [^ ]*appends' <<<"$c" && ! grep -q -- '--files ' <<<"$c"; then
            c="$c --files 200"
        fi ;;
    bench | matrix)
        c=$(sed -E -e 's/--duration [^ ]+/--duration 0.1/' -e 's/--warmup [^ ]+/--warmup 0/' \
                   -e 's/--repeat [^ ]+/--repeat 2/' <<<"$c")
        grep -q -- '--warmup ' <<<"$c" || c="$c --warmup 0"
        grep -q -- '--keys ' <<<"$c" || c="$c --keys 1000" ;;
    crash)
        c=$(sed -E -e 's/--iterations [^ ]+/--iterations 2/' <<<"$c") ;;
    esac
    echo "$c"
}

# Whether this machine can run a matrix command: root, loop devices and the
# mkfs of every filesystem it names.
matrix_possible() {
    local fs
    [ "$(id -u)" -eq 0 ] && [ -w /dev/loop-control ] || return 1
    for fs in $(grep -oE -- '--fs [^ ]+' <<<"$1" | cut -d' ' -f2 | tr ',' ' '); do
        case $fs in
        tmpfs) ;;
        btrfs-nodatacow) PATH="$PATH:/usr/sbin:/sbin" command -v mkfs.btrfs >/dev/null || return 1 ;;
        *) PATH="$PATH:/usr/sbin:/sbin" command -v "mkfs.$fs" >/dev/null || return 1 ;;
        esac
    done
    return 0
}

# Whether this machine can run a command of --engine postgres: the server's
# binaries, libpq in the binary, and as root the postgres account (the
# server runs as it).
postgres_possible() {
    case $("$BIN" bench --list-engines | grep '^postgres ') in
    *"not built"* | *"no PostgreSQL server binaries"*) return 1 ;;
    esac
    [ "$(id -u)" -ne 0 ] || id postgres >/dev/null 2>&1
}

if [ -n "$FULL" ]; then
    {
        echo "date         $(date -u +%Y-%m-%dT%H:%M:%SZ)"
        echo "commit       $(git -C "$SRC" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$SRC" diff --quiet HEAD -- . 2>/dev/null || echo ' (with local changes)')"
        echo "binary       $BIN"
        echo "kernel       $(uname -sr)"
        echo "cores        $(nproc)"
        echo "filesystem   $(df -PT "$WORK" | awk 'NR == 2 { print $2 " on " $1 }')"
    } >"$FULL/environment.txt"
fi

# ---- run each exercise -------------------------------------------------------
for n in $EXERCISES; do
    if [ -n "$ONLY" ] && ! tr ',' '\n' <<<"$ONLY" | grep -qx "$n"; then
        continue
    fi
    dir=$WORK/exercise-$n      # where its commands run
    log=$WORK/log-$n           # its output: all of it, and by kind
    rm -rf "$dir" "$log"
    mkdir -p "$dir" "$log"
    out=$log/all
    skipped_kinds=""
    ran_here=0
    while IFS= read -r cmd; do
        case $cmd in
        "commitlab "*) ;;
        *) fail "exercise $n: '$cmd' is not a commitlab command"; continue ;;
        esac
        kind=$(awk '{print $2}' <<<"$cmd")
        [ -z "$FULL" ] && cmd=$(shorten "$cmd")
        if [ "$kind" = matrix ] && ! matrix_possible "$cmd"; then
            echo "exercise $n: skipped: needs root, loop devices and mkfs for: $cmd"
            skipped_kinds="$skipped_kinds $kind"
            continue
        fi
        if grep -q -- '--engine postgres' <<<"$cmd" && ! postgres_possible; then
            echo "exercise $n: skipped: needs PostgreSQL's server binaries and libpq for: $cmd"
            skipped_kinds="$skipped_kinds $kind"
            continue
        fi
        read -r -a argv <<<"${cmd#commitlab }"
        want=0
        grep -q -- '--lying-device' <<<"$cmd" && want=1
        echo "\$ $cmd" >>"$out"
        echo "exercise $n: $cmd"
        start=$(date +%s)
        (cd "$dir" && exec timeout 600 "$BIN" "${argv[@]}") >"$log/cmd" 2>&1
        rc=$?
        cat "$log/cmd" >>"$out"
        echo "[exit $rc, $(($(date +%s) - start)) s]" | tee -a "$out"
        echo >>"$out"
        cat "$log/cmd" >>"$log/$kind"
        if [ $rc -ne $want ]; then
            fail "exercise $n: exit $rc, want $want: $cmd"
            tail -5 "$log/cmd"
        fi
        ran_here=1
        RAN=$((RAN + 1))
    done < <(commands "$n")
    [ -n "$FULL" ] && cp "$out" "$FULL/exercise-$n.txt"
    [ $ran_here -eq 1 ] || [ -n "$skipped_kinds" ] || fail "exercise $n: no command"

    # What the exercise tells the reader to look at: named in its text
    # (lines joined, as a wrapped paragraph reads; not in its sample
    # outputs, which name everything they print), and in the output of its
    # commands of that kind.
    text=$(section "$n" | awk '/^<!-- sample/ { s = 1 } !s; /^<!-- end sample -->/ { s = 0 }' | tr '\n' ' ')
    while IFS='|' read -r key want_str; do
        [ -n "$key" ] || continue
        k=${key#* }
        [ "${key%% *}" = "$n" ] || continue
        grep -qF -- "$want_str" <<<"$text" ||
            fail "exercise $n: the manual does not name '$want_str', which this test expects it to"
        case $k in
        file:*)
            grep -qF -- "$want_str" "$SRC/${k#file:}" ||
                fail "exercise $n: ${k#file:} no longer says '$want_str'" ;;
        *)
            if grep -qw "$k" <<<"$skipped_kinds"; then
                continue
            fi
            if grep -qF -- "$want_str" "$log/$k" 2>/dev/null; then
                pass "exercise $n: $k prints '$want_str'"
            else
                fail "exercise $n: the output of its $k commands has no '$want_str'"
            fi ;;
        esac
    done <<<"$EXPECT"
done

# a failure of the manual's own structure counts even when nothing ran
if [ $FAILS -ne 0 ]; then
    echo "$FAILS failure(s)"
    exit 1
fi
if [ $RAN -eq 0 ]; then
    echo "skipped: no exercise could run"
    exit 77
fi
echo "all exercises' commands ran ($RAN) and print what the manual says to look at"
exit 0
