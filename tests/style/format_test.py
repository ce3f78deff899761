#!/usr/bin/env python3
"""format_test.py TOP -- the C lines changed since .clang-format was added
are formatted as it says.

Files older than .clang-format keep their history: only the lines a change
adds or alters from then on (the working tree against the commit that added
it, renames followed) are held to it, each file through clang-format
--lines over its changed ranges.  A moved file is not a new one.  Exit code
77 means "skipped": no git checkout holding that commit, or no clang-format.
"""
import os
import re
import shutil
import subprocess
import sys


def git(*args):
    return subprocess.run(['git'] + list(args), capture_output=True, text=True)


def main():
    os.chdir(sys.argv[1])
    cf = shutil.which('clang-format')
    if not cf:
        print('skipped: no clang-format (apt-get install clang-format)')
        return 77
    if git('rev-parse', '--is-inside-work-tree').returncode != 0:
        print('skipped: not a git checkout')
        return 77
    log = git('log', '--diff-filter=A', '--format=%H', '--', '.clang-format').stdout.split()
    if not log:
        print('skipped: .clang-format is not in this checkout\'s history')
        return 77
    base = log[-1]
    diff = git('diff', '-M', '-U0', '--no-color', base, '--', '*.c', '*.h')
    if diff.returncode != 0:
        print('FAIL: git diff: ' + diff.stderr.strip())
        return 1
    ranges, path = {}, None
    for line in diff.stdout.split('\n'):
        if line.startswith('+++ '):
            path = None if line == '+++ /dev/null' else line[6:]
        m = re.match(r'^@@ -\S+ \+(\d+)(?:,(\d+))? @@', line)
        if m and path:
            start, count = int(m.group(1)), int(m.group(2) or 1)
            if count:
                ranges.setdefault(path, []).append((start, start + count - 1))
    bad = []
    for path, rs in sorted(ranges.items()):
        args = [cf, '--style=file'] + ['--lines=%d:%d' % r for r in rs] + [path]
        out = subprocess.run(args, capture_output=True, text=True)
        with open(path) as f:
            text = f.read()
        if out.returncode != 0 or out.stdout != text:
            d = subprocess.run(['diff', '-u', path, '-'], input=out.stdout, capture_output=True, text=True)
            print(d.stdout[:3000] + out.stderr)
            bad.append(' '.join(['clang-format', '-i'] + args[2:]))
    short = base[:7]
    if bad:
        print('FAIL: lines changed since %s do not follow .clang-format; this formats them:\n  %s'
              % (short, '\n  '.join(bad)))
        return 1
    print('ok: the C lines changed since %s in %d files follow .clang-format' % (short, len(ranges)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
