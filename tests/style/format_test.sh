#!/bin/sh
# format_test.sh SRCDIR -- the C lines changed since .clang-format was added
# are formatted as it says.  The files older than it keep their history:
# only what a commit (or the working tree) changes from then on is held to
# it, by git clang-format, which formats the changed lines alone.
# Exit code 77 means "skipped": no git checkout with that commit, or no
# clang-format.
set -u
src=$1
cd "$src" || exit 1
command -v git-clang-format >/dev/null 2>&1 && command -v clang-format >/dev/null 2>&1 ||
    { echo "skipped: no clang-format (apt-get install clang-format)"; exit 77; }
git rev-parse --is-inside-work-tree >/dev/null 2>&1 || { echo "skipped: not a git checkout"; exit 77; }
base=$(git log --diff-filter=A --format=%H -- .clang-format | tail -n 1)
[ -n "$base" ] || { echo "skipped: .clang-format is not in this checkout's history"; exit 77; }
# --diff prints the changes it would make, or a line saying there are none.
out=$(git clang-format --diff --extensions c,h "$base" -- 2>&1)
case $out in
    "no modified files to format"*|"clang-format did not modify any files"*) echo "ok: the C lines changed since $(git rev-parse --short "$base") follow .clang-format"; exit 0 ;;
esac
printf '%s\n' "$out" | head -n 60
echo "FAIL: lines changed since $(git rev-parse --short "$base") do not follow .clang-format; 'git clang-format $base' formats them"
exit 1
