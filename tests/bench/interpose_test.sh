#!/usr/bin/env bash
# interpose_test.sh LIST OBJECTS PROGRAM... -- the file calls the program
# defines for the whole process (bench/interpose/sync_latency.c,
# cut_journal.c and file_calls.c, OBJECTS joined by ':') are exactly the names of the
# dynamic list LIST (bench/interpose/interposed.list), and each PROGRAM
# exports every one of them (nm -D): a plugin loaded at run time binds
# its calls to them whatever else is linked in, so no call it makes
# bypasses --sync-latency or the cut's journal.  One PROGRAM links the
# interposer alone, so nothing but the list can make it export a name.
set -u
list=${1:?usage: interpose_test.sh LIST OBJECTS PROGRAM...}
objs=${2:?usage: interpose_test.sh LIST OBJECTS PROGRAM...}
shift 2
[ $# -ge 1 ] || { echo "usage: interpose_test.sh LIST OBJECTS PROGRAM..."; exit 2; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# What the objects define for the process: global functions, less the
# harness's own entry points (bench_*), which no library calls.
IFS=: read -r -a ofiles <<<"$objs"
[ "${#ofiles[@]}" -ge 3 ] || fail "expected the interposer's three objects, got: $objs"
defined=$(nm --defined-only "${ofiles[@]}" | awk '$2 ~ /^[TWi]$/ {print $3}' | grep -v '^bench_' | sort -u)
[ -n "$defined" ] || fail "no function defined in $objs (stripped?)"
for must in open openat rename unlink ftruncate copy_file_range fsync pwritev2 close sync_file_range; do
    grep -qx "$must" <<<"$defined" || fail "the interposer defines no $must: is this the right object?"
done
# The names of the list: between its braces, each followed by ';', comments out.
listed=$(perl -0777 -pe 's{/\*.*?\*/}{}gs' "$list" | tr -s ' \t\n{};' '\n' | grep -E '^[A-Za-z_][A-Za-z0-9_]*$' | sort -u)
unlisted=$(comm -23 <(echo "$defined") <(echo "$listed"))
stale=$(comm -13 <(echo "$defined") <(echo "$listed"))
[ -z "$unlisted" ] || fail "defined by the interposer but not in $(basename "$list") (exported, if at all, only by the chance of the link): $(echo $unlisted)"
[ -z "$stale" ] || fail "in $(basename "$list") but defined by neither file: $(echo $stale)"

for prog in "$@"; do
    exported=$(nm -D --defined-only "$prog" | awk '{print $NF}' | sed 's/@.*//' | sort -u)
    missing=$(comm -23 <(echo "$defined") <(echo "$exported"))
    [ -z "$missing" ] || fail "$(basename "$prog") does not export what its interposer defines: $(echo $missing)"
done
echo "interpose: $(echo "$defined" | wc -l) calls defined, listed, and exported by $(for p in "$@"; do basename "$p"; done | tr '\n' ' ')"
