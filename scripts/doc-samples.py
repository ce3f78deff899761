#!/usr/bin/env python3
"""doc-samples.py [options] DOC.md... -- regenerates the sample outputs the
docs quote, each from a real run of the command it names.

A sample is a fenced block between two markers in the Markdown:

    <!-- sample: commitlab crash --mode kill --sync commit,none --iterations 20 -->
    ```
    $ commitlab crash --mode kill --sync commit,none --iterations 20
    ...its output...
    ```
    <!-- end sample -->

The marker names the commands, each starting with `commitlab`; several are
joined with ` && ` and run one after the other in the same directory (a
crash --replay and then an inspect of the directory it kept).  The block
is rewritten with each command as a `$ ` line followed by its output,
stdout and stderr as they came.  Options after ` | `:

    from TEXT    keep the output from its first line holding TEXT on,
                 with a `...` line for what was left out

Between `sample` and the colon, in parentheses, what a run needs beyond
seconds on an ordinary directory; such a sample is left as it is, and
said so, unless its option is given:

    needs root   root, loop devices, mkfs (matrix): run only with --root
    slow         minutes: run only with --slow

`<!-- sample: environment -->` is no command: its block gets the commit
of the code that ran (the last one that changed anything but the docs,
tests and scripts), the kernel, cores, filesystem and date of the run, so
the docs can say where their samples come from.  It is rewritten by every run without --match,
and by one with --match that ran a sample of the same file.

    scripts/doc-samples.py docs/durability.md docs/exercises.md    # all
    scripts/doc-samples.py --root docs/exercises.md                # and matrix
    scripts/doc-samples.py --match 'crash --replay' docs/durability.md
    scripts/doc-samples.py --list docs/*.md

Each sample runs in a directory of its own inside a scratch directory made
in --dir (the current directory unless given: the samples measure its
filesystem) and removed at the end with anything mounted or attached
there.  That directory and the binary's path are removed from the output,
so the docs speak only of themselves.  A command must exit 0 (1 with
--lying-device, where the campaign must fail); otherwise its block is left
as it was and the script exits 1.  Output is never invented: a sample
that cannot run keeps its old text.

tests/docs/samples_test.py imports this file (markers, header lines) and
checks every sample's table headers against what the binary prints today.
"""

import argparse
import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(HERE)

MARKER = re.compile(r'^<!-- sample(?: \((?P<needs>[^)]*)\))?: (?P<spec>.+?) -->\s*$')
END = '<!-- end sample -->'
FENCE = '```'
NEEDS = ('needs root', 'slow')


class Sample:
    """One marked block: where it is, what it runs, what it holds now."""

    def __init__(self, path, line, needs, commands, start_from, body, first, last):
        self.path = path            # the Markdown file
        self.line = line            # 1-based line of the marker
        self.needs = needs          # '' or one of NEEDS
        self.commands = commands    # list of argv lists, each starting 'commitlab'; [] for environment
        self.start_from = start_from  # the `from` option's text, or None
        self.body = body            # the block's text between the fences
        self.first = first          # 0-based index of the marker line
        self.last = last            # 0-based index of the end marker line

    @property
    def environment(self):
        return not self.commands

    def where(self):
        return '%s:%d' % (os.path.relpath(self.path), self.line)

    def spec(self):
        return ' && '.join(shlex.join(c) for c in self.commands) or 'environment'


class MarkupError(Exception):
    pass


def parse(path):
    """The samples of one Markdown file, in order; MarkupError when a
    marker, its fence or its end marker is malformed."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    samples = []
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith('<!-- sample') and not line.startswith('<!-- sample-'):
            m = MARKER.match(line)
            where = '%s:%d' % (os.path.relpath(path), i + 1)
            if not m:
                raise MarkupError('%s: not a sample marker: %s' % (where, line))
            needs = (m.group('needs') or '').strip()
            if needs and needs not in NEEDS:
                raise MarkupError('%s: unknown need "%s" (accepted: %s)' % (where, needs, ', '.join(NEEDS)))
            spec, _, options = m.group('spec').partition(' | ')
            start_from = None
            if options:
                key, _, value = options.partition(' ')
                if key != 'from' or not value:
                    raise MarkupError('%s: unknown option "%s" (accepted: from TEXT)' % (where, options))
                start_from = value
            commands = []
            if spec.strip() != 'environment':
                for part in spec.split(' && '):
                    argv = shlex.split(part)
                    if not argv or argv[0] != 'commitlab' or len(argv) < 2:
                        raise MarkupError('%s: "%s" is not a commitlab command' % (where, part))
                    commands.append(argv)
            try:
                end = lines.index(END, i + 1)
            except ValueError:
                raise MarkupError('%s: no %s after the marker' % (where, END)) from None
            block = lines[i + 1:end]
            if len(block) < 2 or block[0] != FENCE or block[-1] != FENCE:
                raise MarkupError('%s: the lines between the markers must be one ``` block' % where)
            if any(MARKER.match(b) for b in block):
                raise MarkupError('%s: a sample marker inside the block' % where)
            samples.append(Sample(path, i + 1, needs, commands, start_from,
                                  '\n'.join(block[1:-1]), i, end))
            i = end
        i += 1
    return samples


# ---- what the output's header lines are ------------------------------------
#
# The lines of a command's output that do not depend on what it measured:
# a table's column headers, a section's title, a row's label and units.
# The test compares them, as a set, between a sample and today's binary.
# Numbers in them become '#' ("summary of 3 rounds" and "summary of 2
# rounds" are the same header), and runs of spaces one space (a column
# widened by its data is the same column).

NUMBER = re.compile(r'(?<![\w.])[-+]?\d+(?:[.,]\d+)*%?(?![\w.])')


def _norm(text):
    return NUMBER.sub('#', ' '.join(text.split()))


def _numeric_tokens(line):
    return sum(1 for t in line.split() if NUMBER.fullmatch(t))


ROW = re.compile(r'\S\s{2,}[-+]?\d[\d.,]*\s+[A-Za-z]+/[A-Za-z]')   # "label  123.4 ops/sec"
FIELD = re.compile(r'^\s+(\S(?:.*?\S)?)\s{2,}\S')                   # "  label   value"


def headers(text):
    """The header lines of a command's output, normalised, as a set:
    - a line with three or more words, no number, no ':' and no
      parenthesis around it, directly above a line with three or more
      numbers: a table's column headers;
    - a line at the left margin that ends with ':': a section's title;
    - an indented line with a label, two or more spaces, then a number and
      a unit (ops/sec ...): the whole line, its numbers as '#' (the probe's
      rows: their label and units);
    - any other indented line of the form 'label  value': its label, when
      the label has a letter and no number (a verdict's or inspect's fields).
    Lines starting with '$ ' (the command) and '...' are none."""
    lines = [l.rstrip() for l in text.split('\n')]
    found = set()
    for i, line in enumerate(lines):
        if not line.strip() or line.startswith('$ ') or line.strip() == '...':
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ''
        if (len(line.split()) >= 3 and ':' not in line and not line.startswith('(')
                and not line.endswith(')') and _numeric_tokens(line) == 0 and _numeric_tokens(nxt) >= 3):
            found.add('columns: ' + _norm(line))
        elif not line[0].isspace():
            if line.endswith(':'):
                found.add('title: ' + _norm(line))
        elif ROW.search(line):
            found.add('row: ' + _norm(line))
        else:
            m = FIELD.match(line)
            if m and re.search(r'[A-Za-z]', m.group(1)) and not re.search(r'\d', m.group(1)):
                found.add('label: ' + _norm(m.group(1)))
    return found


def keep_from(output, start_from):
    """The output from its first line holding start_from on; before it,
    the '$ ' lines and one '...' line for what was left out.  None when no
    line holds start_from; the whole output when start_from is None."""
    if start_from is None:
        return output
    lines = output.split('\n')
    for i, line in enumerate(lines):
        if start_from in line and not line.startswith('$ '):
            return '\n'.join([l for l in lines[:i] if l.startswith('$ ')] + ['...'] + lines[i:])
    return None


def expected_exit(argv):
    """A campaign on a lying device must fail (exit 1); everything else
    must succeed."""
    return 1 if '--lying-device' in argv else 0


def scrub(output, paths, binary):
    """The output without this machine's paths: each of paths (longest
    first) and the binary's, as the command would print them when run as
    `commitlab` in the current directory."""
    output = output.replace(binary, 'commitlab')
    for p in sorted(paths, key=len, reverse=True):
        output = output.replace(p + '/', '').replace(p, '.')
    return '\n'.join(l.rstrip() for l in output.split('\n')).strip('\n')


def run_commands(commands, binary, workdir, timeout=600):
    """Runs each command in workdir; returns (text, error): text holds
    '$ command' and the scrubbed output of each, error is None or says
    which command exited how."""
    parts = []
    for argv in commands:
        t0 = time.monotonic()
        try:
            p = subprocess.run([binary] + argv[1:], cwd=workdir, stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
            out = p.stdout.decode('utf-8', 'replace')
            rc = p.returncode
        except subprocess.TimeoutExpired as e:
            out = (e.stdout or b'').decode('utf-8', 'replace')
            rc = 'timeout after %d s' % timeout
        parts.append('$ ' + shlex.join(argv))
        parts.append(scrub(out, [workdir, os.path.dirname(workdir)], binary))
        if rc != expected_exit(argv):
            tail = '\n'.join(out.rstrip().split('\n')[-5:])
            return '\n'.join(parts), '%s: exit %s, want %d (after %.1f s)\n%s' % (
                shlex.join(argv), rc, expected_exit(argv), time.monotonic() - t0, tail)
    return '\n'.join(parts), None


def release(scratch):
    """Unmounts and detaches anything under scratch (a matrix cleans up
    after itself; this is for one that was killed), then removes it."""
    try:
        with open('/proc/mounts') as f:
            mounts = [l.split()[1] for l in f]
    except OSError:
        mounts = []
    for m in sorted((m for m in mounts if m.startswith(scratch + '/')), reverse=True):
        subprocess.run(['umount', m], stderr=subprocess.DEVNULL)
    if shutil.which('losetup'):
        p = subprocess.run(['losetup', '-a'], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        for l in p.stdout.decode(errors='replace').split('\n'):
            if scratch + '/' in l:
                subprocess.run(['losetup', '-d', l.split(':')[0]])
    shutil.rmtree(scratch, ignore_errors=True)


def environment(scratch):
    """The lines of an environment block: what produced the samples."""
    def git(*a):
        p = subprocess.run(['git', '-C', TOP] + list(a), stdout=subprocess.PIPE,
                           stderr=subprocess.DEVNULL)
        return p.returncode, p.stdout.decode().strip()
    # The commit of the code the binary was built from: the last one that
    # changed anything but the docs, the tests and the scripts (a commit
    # that only regenerates the docs is not it).
    code = ['--', '.', ':(exclude)docs', ':(exclude)tests', ':(exclude)scripts', ':(exclude)*.md']
    rc, commit = git('log', '-1', '--format=%h', *code)
    if rc != 0 or not commit:
        commit = 'unknown'
    elif git('diff', '--quiet', 'HEAD', *code)[0] != 0:
        commit += ' (with local changes)'
    fs = '?'
    p = subprocess.run(['df', '-PT', scratch], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    rows = p.stdout.decode().split('\n')
    if p.returncode == 0 and len(rows) > 1 and len(rows[1].split()) > 1:
        f = rows[1].split()
        fs = '%s on %s' % (f[1], f[0])
    return '\n'.join([
        'code         commit %s' % commit,
        'kernel       %s %s' % (platform.system(), platform.release()),
        'cores        %d' % os.cpu_count(),
        'filesystem   %s' % fs,
        'date         %s' % time.strftime('%Y-%m-%d', time.gmtime()),
    ])


def rewrite(path, replacements):
    """Replaces the blocks of path's samples: replacements maps a sample's
    marker index to its new body."""
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    for s in sorted(replacements, key=lambda s: s.first, reverse=True):
        lines[s.first + 1:s.last] = [FENCE] + replacements[s].split('\n') + [FENCE]
    text = '\n'.join(lines)
    with open(path + '.tmp', 'w', encoding='utf-8') as f:
        f.write(text)
    os.replace(path + '.tmp', path)


def main():
    ap = argparse.ArgumentParser(
        description='Regenerate the sample outputs between <!-- sample: ... --> markers from real runs.')
    ap.add_argument('docs', nargs='+', metavar='DOC.md')
    ap.add_argument('--binary', default=os.path.join(TOP, 'build', 'commitlab'),
                    help='the commitlab to run (default: build/commitlab of this tree)')
    ap.add_argument('--dir', default='.', help='where to make the scratch directory (default: .)')
    ap.add_argument('--root', action='store_true', help='also run the samples that need root')
    ap.add_argument('--slow', action='store_true', help='also run the slow samples')
    ap.add_argument('--match', default=None, help='only the samples whose command holds this text')
    ap.add_argument('--list', action='store_true', help='list the samples; run nothing')
    a = ap.parse_args()

    binary = os.path.abspath(a.binary)
    if not a.list and not os.access(binary, os.X_OK):
        print('doc-samples: %s is not executable (build first, or give --binary)' % binary, file=sys.stderr)
        return 2
    if a.root and os.geteuid() != 0:
        print('doc-samples: --root: not running as root', file=sys.stderr)
        return 2
    if not os.path.isdir(a.dir):
        print('doc-samples: --dir %s: no such directory' % a.dir, file=sys.stderr)
        return 2
    try:
        parsed = [(d, parse(d)) for d in a.docs]
    except (OSError, MarkupError) as e:
        print('doc-samples: %s' % e, file=sys.stderr)
        return 2

    if a.list:
        signal.signal(signal.SIGPIPE, signal.SIG_DFL)   # | head
        for _, samples in parsed:
            for s in samples:
                print('%s%s %s' % (s.where(), ' (%s)' % s.needs if s.needs else '', s.spec()))
        return 0

    scratch = tempfile.mkdtemp(prefix='doc-samples.', dir=os.path.abspath(a.dir))
    os.chmod(scratch, 0o755)  # as root a PostgreSQL server runs as postgres, which must enter it
    failed = 0
    try:
        for doc, samples in parsed:
            new = {}
            for n, s in enumerate(samples):
                if s.environment or (a.match is not None and a.match not in s.spec()):
                    continue
                if (s.needs == 'needs root' and not a.root) or (s.needs == 'slow' and not a.slow):
                    print('%s: skipped (%s; run with --%s): %s' % (
                        s.where(), s.needs, 'root' if s.needs == 'needs root' else 'slow', s.spec()))
                    continue
                work = os.path.join(scratch, '%s-%d' % (os.path.basename(doc), n))
                os.mkdir(work)
                t0 = time.monotonic()
                text, error = run_commands(s.commands, binary, work)
                if error:
                    print('%s: FAILED, left as it was: %s' % (s.where(), error))
                    failed += 1
                    continue
                text = keep_from(text, s.start_from)
                if text is None:
                    print('%s: FAILED, left as it was: no line holds "%s"' % (s.where(), s.start_from))
                    failed += 1
                    continue
                new[s] = text
                print('%s: %s in %.1f s: %s' % (s.where(), 'unchanged' if text == s.body else 'rewritten',
                                               time.monotonic() - t0, s.spec()))
            if new or a.match is None:      # the environment of what ran
                for s in samples:
                    if s.environment:
                        new[s] = environment(scratch)
                        print('%s: environment: %s' % (s.where(), new[s].split('\n')[0]))
            changed = {s: t for s, t in new.items() if t != s.body}
            if changed:
                rewrite(doc, changed)
    except KeyboardInterrupt:
        print('doc-samples: interrupted; the docs keep what was written so far', file=sys.stderr)
        failed += 1
    finally:
        release(scratch)
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
