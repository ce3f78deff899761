#!/usr/bin/env bash
# exports_test.sh LIBCOMMITLAB.so COMMITLAB.H [LIBCOMMITLAB.a] -- the shared library's
# dynamic symbols are exactly the functions the public header declares
# with CL_API: no internal wal_*, store_*, pg_*, vfs_* or crc32c_* leaks;
# and the header names no internal type; neither library holds the
# fault-injecting layer or other code only tests use.
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
# The installed libraries hold no code only tests use: the fault-injecting
# file layer and its helpers (storage/fault) are a library of their own.
for l in "$lib" ${3:+"$3"}; do
    leaked=$(nm "$l" 2>/dev/null | grep -E ' [TtDdBbRr] (vfs_fault_|fault_|vfs_submit_sequential|vfs_write_file_durable|vfs_posix_fail_)' | head -5)
    [ -z "$leaked" ] || fail "$(basename "$l") holds test-only code: $leaked"
    nm "$l" 2>/dev/null | grep -q ' [Tt] cl_open' || fail "$(basename "$l"): no symbols to check (stripped?)"
done
echo "exports: $(echo "$exported" | wc -l) functions, all public, all exported; the header names nothing internal;" \
     "no test-only code in the libraries"
