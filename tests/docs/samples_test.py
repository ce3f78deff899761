#!/usr/bin/env python3
"""samples_test.py COMMITLAB DOC.md... -- the docs' sample outputs have
today's headers.

Every sample block between <!-- sample: ... --> and <!-- end sample -->
(scripts/doc-samples.py regenerates them from real runs) must show the
header lines that the command prints today: each table's column headers,
each section's title, each probe row's label and units, each field label
of a verdict or an inspection (doc-samples.py's headers() says which
lines those are).  A column added to a table, a row relabelled or a unit
renamed without running doc-samples.py again fails here, naming the
sample and the lines that differ.

Nothing long runs: each sample's commands run once more with the same
flags, shortened where only the time or the count of repetitions changes
(shorten() below), in a scratch directory removed at the end -- the header
lines do not depend on how long a command measured.  A sample that needs
root runs only as root with loop devices and each filesystem's mkfs, and
one of --engine postgres only where the server and libpq are; otherwise
it is skipped, and said so.  Samples that shorten to the same
commands run once.

Exit 0: every sample's headers match; 1: some differ, or a sample is
malformed or shows no header line at all (then it checks nothing); 77:
nothing could run.
"""

import importlib.util
import os
import shlex
import shutil
import sys
import tempfile
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location('doc_samples', os.path.join(TOP, 'scripts', 'doc-samples.py'))
ds = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(ds)

# The short form of each flag that sets only how long, how often or on
# how much data a command measures, per subcommand: flag -> the value it
# gets.  ADDED: flags added when the command lacks them (their defaults
# are long or large); a --keys the command gives is kept (it may vary).
SHORT = {
    'probe': {'--seconds': '0.02', '--files': '200', '--repeat': '2'},
    'bench': {'--duration': '0.05', '--warmup': '0', '--repeat': '2'},
    'matrix': {'--duration': '0.05', '--warmup': '0', '--repeat': '2', '--image-size': '256M'},
    'crash': {'--iterations': '1'},
}
ADDED = {
    'probe': {'--seconds': '0.02', '--files': '200'},
    'bench': {'--duration': '0.05', '--warmup': '0', '--keys': '1000'},
    'matrix': {'--duration': '0.05', '--warmup': '0', '--keys': '1000'},
}


def shorten(argv):
    """argv with its timing and repetition flags at their smallest: a
    --repeat above 1 stays above 1 (a summary table is printed only then),
    one of 1 stays 1."""
    sub = argv[1]
    short = SHORT.get(sub, {})
    out = list(argv)
    for i, a in enumerate(out[:-1]):
        if a in short:
            value = short[a]
            if a == '--repeat' and out[i + 1] == '1':
                value = '1'
            out[i + 1] = value
    for a, value in ADDED.get(sub, {}).items():
        if a not in out:
            out += [a, value]
    return out


def matrix_possible(argv):
    """Root, loop devices, and the mkfs of each filesystem --fs names."""
    if os.geteuid() != 0 or not os.access('/dev/loop-control', os.W_OK):
        return False
    path = os.environ.get('PATH', '') + ':/usr/sbin:/sbin'
    fss = argv[argv.index('--fs') + 1].split(',') if '--fs' in argv else []
    for fs in fss:
        if fs == 'tmpfs':
            continue
        tool = 'mkfs.btrfs' if fs.startswith('btrfs') else 'mkfs.' + fs
        if not shutil.which(tool, path=path):
            return False
    return True


def postgres_possible(binary):
    """The server's binaries, libpq in the binary, and as root the postgres
    account, which the server runs as."""
    import pwd
    import subprocess
    out = subprocess.run([binary, 'bench', '--list-engines'], capture_output=True, text=True).stdout
    line = next((l for l in out.split('\n') if l.startswith('postgres ')), '')
    if not line or 'not built' in line or 'no PostgreSQL server binaries' in line:
        return False
    if os.geteuid() == 0:
        try:
            pwd.getpwnam('postgres')
        except KeyError:
            return False
    return True


def main():
    if len(sys.argv) < 3:
        print('usage: samples_test.py COMMITLAB DOC.md...', file=sys.stderr)
        return 2
    binary = os.path.abspath(sys.argv[1])
    if not os.access(binary, os.X_OK):
        print('samples_test: %s is not executable' % binary, file=sys.stderr)
        return 2
    fails = 0
    ran = 0
    checked = 0
    cache = {}          # the shortened commands -> (output, error)

    def fail(msg):
        nonlocal fails
        fails += 1
        print('FAIL: ' + msg)

    samples = []
    for doc in sys.argv[2:]:
        try:
            samples += ds.parse(doc)
        except (OSError, ds.MarkupError) as e:
            fail(str(e))
    if not any(not s.environment for s in samples):
        fail('no sample in %s' % ' '.join(sys.argv[2:]))

    scratch = tempfile.mkdtemp(prefix='samples_test.', dir=os.environ.get('TMPDIR', '/tmp'))
    os.chmod(scratch, 0o755)  # as root a PostgreSQL server runs as postgres, which must enter it
    t_start = time.monotonic()
    try:
        for n, s in enumerate(samples):
            if s.environment:
                if not s.body.strip():
                    fail('%s: the environment block is empty: run scripts/doc-samples.py' % s.where())
                continue
            if not s.body.strip():
                fail('%s: the sample is empty: run scripts/doc-samples.py' % s.where())
                continue
            want = ds.headers(s.body)
            if not want:
                fail('%s: no header line in the sample, so nothing to check: %s' % (s.where(), s.spec()))
                continue
            for argv in s.commands:
                if '$ ' + shlex.join(argv) not in s.body.split('\n'):
                    fail('%s: the block does not begin its output with "$ %s": run scripts/doc-samples.py'
                         % (s.where(), shlex.join(argv)))
            commands = [shorten(c) for c in s.commands]
            if s.needs == 'needs root' and not all(matrix_possible(c) for c in commands if c[1] == 'matrix'):
                print('skipped %s: needs root, loop devices and mkfs: %s' % (s.where(), s.spec()))
                continue
            if s.needs == 'needs root' and os.geteuid() != 0:
                print('skipped %s: needs root: %s' % (s.where(), s.spec()))
                continue
            if any('postgres' in c[c.index('--engine') + 1].split(',') for c in commands if '--engine' in c) \
                    and not postgres_possible(binary):
                print('skipped %s: needs PostgreSQL\'s server binaries and libpq: %s' % (s.where(), s.spec()))
                continue
            key = tuple(tuple(c) for c in commands)
            t0 = time.monotonic()
            if key not in cache:
                work = os.path.join(scratch, 'sample-%d' % n)
                os.mkdir(work)
                cache[key] = ds.run_commands(commands, binary, work, timeout=120)
                ran += 1
            text, error = cache[key]
            if error:
                fail('%s: %s' % (s.where(), error))
                continue
            # the output as the sample keeps it ($ lines are no header)
            text = ds.keep_from(text, s.start_from)
            if text is None:
                fail('%s: today\'s output has no line holding "%s"' % (s.where(), s.start_from))
                continue
            have = ds.headers(text)
            checked += 1
            if have == want:
                print('ok %s: %d header line(s) as today (%.1f s): %s' % (
                    s.where(), len(want), time.monotonic() - t0, s.spec()))
                continue
            fail('%s: the sample\'s headers are not today\'s; run scripts/doc-samples.py %s: %s'
                 % (s.where(), os.path.relpath(s.path), s.spec()))
            for h in sorted(want - have):
                print('    only in the sample: %s' % h)
            for h in sorted(have - want):
                print('    only today:         %s' % h)
    finally:
        ds.release(scratch)

    print('%d samples checked, %d command runs, %.1f s' % (checked, ran, time.monotonic() - t_start))
    if fails:
        print('%d failure(s)' % fails)
        return 1
    if checked == 0:
        print('skipped: no sample could run')
        return 77
    return 0


if __name__ == '__main__':
    sys.exit(main())
