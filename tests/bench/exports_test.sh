#!/usr/bin/env bash
# exports_test.sh LIBCOMMITLAB.so COMMITLAB.H -- the shared library's
# dynamic symbols are exactly the functions the public header declares
# with CL_API: no internal wal_*, store_*, pg_*, vfs_* or crc32c_* leaks;
# and the header names no internal type.
set -u
lib=${1:?usage: exports_test.sh LIB HEADER}
hdr=${2:?usage: exports_test.sh LIB HEADER}
fail() { echo "FAIL: $*" >&2; exit 1; }
exported=$(nm -D --defined-only "$lib" | awk '$2 ~ /^[TDBRVW]$/ {print $3}' | grep -v '^_' | sort -u)
declared=$(grep -oE '^CL_API [^(]*\b(cl_[a-z_]+)\(' "$hdr" | grep -oE 'cl_[a-z_]+\($' | tr -d '(' | sort -u)
[ -n "$declared" ] || fail "no CL_API function found in $hdr"
extra=$(comm -23 <(echo "$exported") <(echo "$declared"))
missing=$(comm -13 <(echo "$exported") <(echo "$declared"))
[ -z "$extra" ] || fail "exported but not public: $(echo $extra)"
[ -z "$missing" ] || fail "public but not exported: $(echo $missing)"
internal=$(grep -nE 'struct (vfs|wal|store|pg_|page)[a-z_]*\b|\b(vfs|wal|store|pg)_[a-z_]+\(' "$hdr")
[ -z "$internal" ] || fail "the public header names internal types or functions: $internal"
echo "exports: $(echo "$exported" | wc -l) functions, all public, all exported; the header names nothing internal"
