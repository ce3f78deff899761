#!/usr/bin/env bash
# option_edit_test.sh SOURCE_DIR -- adding an option a sync policy reads
# takes three files, as docs/design.md ("Adding a knob") says: its field
# in include/commitlab.h, its row in engine/options.c and the line of
# wal/ that reads it.  The tracked tree is copied (git ls-files) to a
# scratch directory, a numeric option of the group policy is added there
# in those three files and nowhere else, and the copy's commitlab (Release,
# that target alone) is built: `commitlab bench --help` lists its flag
# with the library's help and default, a run's JSON config records it,
# a value beyond its range is refused (one line naming the flag, exit 2),
# and `git diff --stat` of the copy counts three files.
# Exit 77 (skipped) without git, cmake or a C compiler.
set -u
src=${1:?usage: option_edit_test.sh SOURCE_DIR}
fail() { echo "FAIL: $*" >&2; exit 1; }
skip() { echo "skipped: $*"; exit 77; }
for t in git cmake cc; do
    command -v "$t" >/dev/null 2>&1 || skip "no $t"
done
git -C "$src" rev-parse --is-inside-work-tree >/dev/null 2>&1 || skip "$src is not a git checkout"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
copy=$tmp/src
mkdir "$copy"
# the tracked files as they are in the working tree, uncommitted edits included
(cd "$src" && git ls-files -z | xargs -0 cp --parents -t "$copy") || fail "copying the tree"
(cd "$copy" && git init -q && git add -A && git -c user.name=t -c user.email=t@t commit -qm base) ||
    fail "git init of the copy"

# ---- the option: three edits, each a line the file already has beside it ----
edit() { # FILE ANCHOR-REGEX AWK-INSERTION: inserts after the first line matching
    local f=$copy/$1
    grep -Eq -- "$2" "$f" || fail "$1: no line matching '$2' to add the option beside"
    awk -v re="$2" -v add="$3" '{print} !done && $0 ~ re {print add; done=1}' "$f" >"$f.new" && mv "$f.new" "$f"
}
# include/commitlab.h: the field, at the end of struct cl_options
edit include/commitlab.h '^    uint32_t wait_spin_us;' \
    '    uint32_t group_pause_us;         /* group policy: us a leader pauses before it writes, 0..5000, default 0 */'
# the comment of wait_spin_us goes on for a few lines: move the field below them
awk '
    /^    uint32_t group_pause_us;/ {held=$0; next}
    held && /^};/ {print held; held=""}
    {print}' "$copy/include/commitlab.h" >"$copy/h.new" && mv "$copy/h.new" "$copy/include/commitlab.h"
# engine/options.c: its row, after wait_spin_us's
edit engine/options.c '^    OPT\(wait_spin_us,' \
    '    OPT(group_pause_us, CL_SYNC_GROUP, NUMBER, 0, 5000, 0, "us", NULL, "us a leader pauses before it writes"),'
# wal/policy_group.c: the group leader reads it
edit wal/policy_group.c '^    pthread_mutex_lock\(&w->io_mu\);' \
    '    if (w->opt.group_pause_us) sleep_us(w->opt.group_pause_us);'
# ...before it takes io_mu, not after: swap the two lines
awk '
    /^    pthread_mutex_lock\(&w->io_mu\);/ && !seen {held=$0; seen=1; next}
    held {print; print held; held=""; next}
    {print}' "$copy/wal/policy_group.c" >"$copy/g.new" && mv "$copy/g.new" "$copy/wal/policy_group.c"

files=$(cd "$copy" && git diff --name-only)
n=$(cd "$copy" && git diff --stat | tail -1 | awk '{print $1}')
[ "$n" = 3 ] || fail "the option touched $n files, not 3: $(echo $files)"
echo "the option's edit: $(echo $files)"

# ---- build the copy's commitlab: Release, that target alone ----
build=$tmp/build
# (warnings not errors: -O3 finds a possible truncation in pg_server.c that
# the RelWithDebInfo build CI holds to -Werror does not)
cmake -S "$copy" -B "$build" -DCMAKE_BUILD_TYPE=Release -DCL_BUILD_TESTS=OFF -DCL_WERROR=OFF >"$tmp/cmake.log" 2>&1 ||
    { tail -20 "$tmp/cmake.log" >&2; fail "cmake of the copy"; }
cmake --build "$build" --target commitlab -j2 >"$tmp/build.log" 2>&1 ||
    { grep -E 'error|warning' "$tmp/build.log" | head -20 >&2; fail "the copy with the option does not build"; }
! grep -E 'warning' "$tmp/build.log" | grep -E 'options\.c|commitlab\.h|policy_group\.c' >&2 ||
    fail "the option's edit made a warning"
cl=$build/commitlab
[ -x "$cl" ] || fail "no commitlab built in $build"

# ---- --help lists it, with the library's help, policy and default ----
help=$("$cl" bench --help) || fail "commitlab bench --help"
line=$(echo "$help" | grep -A1 -- '--group-pause-us')
[ -n "$line" ] || fail "--help does not list --group-pause-us"
echo "$line" | grep -q 'group: us a leader pauses before it writes' || fail "--help's line is not the library's: $line"
echo "$line" | grep -q '(default 0)' || fail "--help does not give the default: $line"

# ---- commitlab maps it by its name ----
"$cl" bench --list-engines 2>/dev/null | grep -q -- '--group-pause-us -> cl_options.group_pause_us' ||
    fail "--list-engines does not map --group-pause-us on commitlab"

# ---- a run records it in its JSON config, one line per value of the list ----
out=$tmp/run.jsonl
"$cl" bench --engine commitlab --sync group --group-pause-us 100,200 --txns 20 --warmup 0 --clients 2 \
    --dir "$tmp/runs" --out "$out" --quiet >"$tmp/run.log" 2>&1 || { cat "$tmp/run.log" >&2; fail "a run with --group-pause-us"; }
[ "$(wc -l <"$out")" = 2 ] || fail "--group-pause-us 100,200 made $(wc -l <"$out") runs, not 2 (a list)"
for v in 100 200; do
    grep -q "\"group_pause_us\": *$v\b" "$out" || fail "no JSON line records group_pause_us $v: $(head -c 600 "$out")"
done
grep -q '"status": *"ok"' "$out" || fail "the runs did not succeed: $(head -c 600 "$out")"

# ---- beyond its range: one line naming the flag and its range, exit 2 ----
err=$("$cl" bench --engine commitlab --sync group --group-pause-us 5001 --txns 1 --dir "$tmp/runs" 2>&1 >/dev/null)
rc=$?
[ "$rc" = 2 ] || fail "--group-pause-us 5001 exited $rc, not 2"
[ "$(echo "$err" | wc -l)" = 1 ] || fail "more than one line for a bad value: $err"
echo "$err" | grep -q -- '--group-pause-us.*5001.*\[0, 5000\]' || fail "the error does not name the flag and range: $err"

echo "option_edit: an option of the group policy in $(echo $files | wc -w) files; --help, the JSON config and the" \
     "range check have it"
