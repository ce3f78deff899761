#!/usr/bin/env python3
"""links_test.py TOP -- no link in README.md or docs/ is broken.

Every Markdown link and image, [text](target) and ![alt](target) (also
written ](<target>)), that is not a URL must name a file that exists,
relative to the document; a #fragment must name a heading of the target
(GitHub's anchors: lower case, punctuation dropped, spaces to hyphens) or
an explicit <a id>.  Every path written out as docs/NAME.md or
docs/.../NAME.svg in prose, or in a comment of a code block, must exist
from the top of the tree.  Inline code and the rest of code blocks are
examples (`-o docs/run.md`), not references, and are skipped.
"""
import os
import re
import sys

LINK = re.compile(r'!?\[(?:[^\[\]]|\[[^\]]*\])*\]\((<[^>]+>|[^)\s]+)(?:\s+"[^"]*")?\)')
PATH = re.compile(r'(?<![\w/.-])(docs/[\w./-]+\.(?:md|svg|png))')
HEADING = re.compile(r'^(#{1,6})\s+(.*?)\s*#*\s*$')
ANCHOR = re.compile(r'<a\s+(?:id|name)="([^"]+)"')


def slug(text):
    text = re.sub(r'<[^>]+>', '', text)           # inline HTML
    text = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', text)  # links keep their text
    text = text.strip().lower()
    text = re.sub(r'[^\w\- ]', '', text)          # punctuation, backticks
    return text.replace(' ', '-')


CODE_SPAN = re.compile(r'(`+).*?\1')
COMMENT = re.compile(r'(?:^|\s)#\s.*$')


def prose_lines(path):
    """(number, line) outside fenced code blocks, and (number, comment) of
    the shell comments inside them."""
    out, comments, fenced = [], [], False
    with open(path, encoding='utf-8') as f:
        lines = f.read().split('\n')
    for n, line in enumerate(lines, 1):
        if line.lstrip().startswith('```'):
            fenced = not fenced
            continue
        if not fenced:
            out.append((n, line))
        else:
            m = COMMENT.search(line)
            if m:
                comments.append((n, m.group(0)))
    return out, comments


_anchors = {}


def anchors(path):
    if path not in _anchors:
        seen, names = {}, set()
        prose, _ = prose_lines(path)
        for _, line in prose:
            m = HEADING.match(line)
            if m:
                s = slug(m.group(2))
                k = seen.get(s, 0)
                seen[s] = k + 1
                names.add(s if k == 0 else '%s-%d' % (s, k))
            for a in ANCHOR.findall(line):
                names.add(a)
        _anchors[path] = names
    return _anchors[path]


def main():
    top = sys.argv[1]
    docs = [os.path.join(top, 'README.md')]
    for d, _, files in os.walk(os.path.join(top, 'docs')):
        docs += [os.path.join(d, f) for f in sorted(files) if f.endswith('.md')]
    bad, links = [], 0
    for doc in sorted(docs):
        rel = os.path.relpath(doc, top)
        prose, comments = prose_lines(doc)
        for n, line in prose:
            for m in LINK.finditer(CODE_SPAN.sub('', line)):
                target = m.group(1).strip('<>')
                if re.match(r'^[a-z][a-z0-9+.-]*:', target):  # http:, mailto:
                    continue
                links += 1
                file, _, frag = target.partition('#')
                dest = os.path.normpath(os.path.join(os.path.dirname(doc), file)) if file else doc
                if not os.path.exists(dest):
                    bad.append('%s:%d: %s: no such file' % (rel, n, target))
                elif frag and dest.endswith('.md') and frag not in anchors(dest):
                    bad.append('%s:%d: %s: no heading #%s in %s' % (rel, n, target, frag,
                                                                  os.path.relpath(dest, top)))
        for n, line in [(n, CODE_SPAN.sub('', l)) for n, l in prose] + comments:
            for m in PATH.finditer(line):
                links += 1
                if not os.path.exists(os.path.join(top, m.group(1))):
                    bad.append('%s:%d: %s: no such file' % (rel, n, m.group(1)))
    for b in bad:
        print('FAIL: ' + b)
    if bad:
        return 1
    print('ok: %d links and paths in %d documents lead somewhere' % (links, len(docs)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
