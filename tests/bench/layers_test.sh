#!/usr/bin/env bash
# layers_test.sh NAME=ARCHIVE=PARTS... -- the parts of bench/ call one way.
# Each argument is one part: its name, its static library, and the parts
# it declares it calls (comma-separated; bench/CMakeLists.txt passes what
# cl_bench_part was given).  Every symbol a part's objects use that
# another part defines must be defined by a declared part: a call up (the
# harness calling a command, util calling the harness) or sideways (one
# command calling another) fails here even where the program's link order
# would happen to resolve it.
set -u
[ $# -gt 0 ] || { echo "usage: layers_test.sh NAME=ARCHIVE=PARTS..." >&2; exit 2; }
fail=0
defs=$(mktemp)
trap 'rm -f "$defs"' EXIT
for spec in "$@"; do
    name=${spec%%=*}
    rest=${spec#*=}
    ar=${rest%%=*}
    [ -f "$ar" ] || { echo "FAIL: $name: no library $ar" >&2; exit 1; }
    nm -g --defined-only "$ar" | awk -v p="$name" 'NF == 3 && $2 ~ /^[TDBRCVWGS]$/ { print $3, p }' >>"$defs"
done
calls=0
for spec in "$@"; do
    name=${spec%%=*}
    rest=${spec#*=}
    ar=${rest%%=*}
    parts=${rest#*=}
    # member: symbol, for each undefined symbol of each object
    while read -r member sym; do
        owner=$(awk -v s="$sym" '$1 == s { print $2; exit }' "$defs")
        [ -n "$owner" ] && [ "$owner" != "$name" ] || continue
        calls=$((calls + 1))
        case ",$parts," in
        *",$owner,"*) ;;
        *)
            echo "FAIL: bench/$name calls bench/$owner, which it does not declare: $member uses $sym" >&2
            fail=1
            ;;
        esac
    done < <(nm -A -u "$ar" | awk '{ n = split($1, a, ":"); print a[n - 1], $NF }')
done
[ $fail -eq 0 ] || exit 1
echo "layers: $# parts, $calls calls between them, every one to a part below that its caller declares"
