#!/usr/bin/env python3
"""ctest `draft_markers`: no page of the documentation ships a writer's note to self.

    draft_markers_test.py SOURCE_DIR

Every Markdown file of the repository (its README.md files, docs/, the
configs' and models' pages) is read for the markers a writer leaves where
a figure or a sentence is still to come: XXX (alone or as a prefix, such as
XXX16K), TODO, FIXME and TBD as words. A page that holds one says less than
it seems to, so each is listed with its file and line (exit 1).
"""
import os
import re
import sys

MARKER = re.compile(r'\b(XXX\w*|TODO|FIXME|TBD)\b')
SKIP = {'.git', 'node_modules', '__pycache__'}


def markdown_files(root):
    for dirpath, dirnames, names in os.walk(root):
        # Build trees (build/, build-asan/, a fresh clone's) hold no page of ours.
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP and not d.startswith('build')
                             and not os.path.exists(os.path.join(dirpath, d, 'CMakeCache.txt')))
        for n in sorted(names):
            if n.endswith('.md'):
                yield os.path.join(dirpath, n)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
    found, pages = [], 0
    for path in markdown_files(root):
        pages += 1
        with open(path, encoding='utf-8') as fh:
            for number, line in enumerate(fh, 1):
                for m in MARKER.finditer(line):
                    found.append(f'{os.path.relpath(path, root)}:{number}: draft marker "{m.group(1)}"')
    for f in found:
        print(f)
    print(f'{pages} pages, {len(found)} draft markers')
    return 1 if found or pages == 0 else 0


if __name__ == '__main__':
    sys.exit(main())
