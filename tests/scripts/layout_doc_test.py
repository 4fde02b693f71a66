#!/usr/bin/env python3
"""ctest `layout_doc`: docs/layout.md's layout against the tree.

    layout_doc_test.py SOURCE_DIR

The layout is the first code block of docs/layout.md: an entry per folder (a
line starting with the folder's path and a slash), its files named on that
line and the indented lines below. Every folder of src/, models/, library/,
workloads/ and scripts/ has an entry; every entry names a folder that exists;
every source file of a folder (its name without the extension) is named in
its folder's entry, and every `name.*` / `name.cpp` / `name.hpp` an entry
names is a file of its folder. Exit 1 naming each difference.
"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
SOURCE_EXT = ('.cpp', '.hpp', '.py', '.sh')


def entries(text):
    block = text.split('```\n', 2)[1]
    out, cur = {}, None
    for line in block.split('\n'):
        m = re.match(r'^([A-Za-z0-9_./-]+)/\s', line + ' ')
        if m and not line.startswith(' '):
            cur = m.group(1)
            out[cur] = line[len(cur) + 1:]
        elif cur is not None:
            out[cur] += '\n' + line
    return out


def folders():
    found = ['workloads', 'scripts']
    for top in ('src', 'models', 'library'):
        for name in sorted(os.listdir(os.path.join(ROOT, top))):
            if os.path.isdir(os.path.join(ROOT, top, name)):
                found.append(f'{top}/{name}')
                # a folder of its own inside one (src/sim/parallel), tests/ aside
                for sub in sorted(os.listdir(os.path.join(ROOT, top, name))):
                    if sub != 'tests' and os.path.isdir(os.path.join(ROOT, top, name, sub)):
                        found.append(f'{top}/{name}/{sub}')
    return found


def main():
    doc = entries(open(os.path.join(ROOT, 'docs', 'layout.md'), encoding='utf-8').read())
    errors, named = [], 0
    for folder in folders():
        if folder not in doc:
            errors.append(f'{folder}/: no entry in docs/layout.md\'s layout')
            continue
        text = doc[folder]
        stems = sorted({os.path.splitext(n)[0] for n in os.listdir(os.path.join(ROOT, folder))
                        if n.endswith(SOURCE_EXT) or (folder == 'scripts' and os.path.isfile(
                            os.path.join(ROOT, folder, n)) and os.access(os.path.join(ROOT, folder, n), os.X_OK))})
        for stem in stems:
            named += 1
            if not re.search(r'(?<![\w/])' + re.escape(stem) + r'(?![\w-])', text):
                errors.append(f'{folder}/: {stem} is not named in its entry of docs/layout.md')
        for ref in re.findall(r'(?<![\w/.])([a-z_0-9]+)\.(\*|cpp|hpp|py|sh)\b', text):
            stem, ext = ref
            if ext == '*':
                ok = any(os.path.exists(os.path.join(ROOT, folder, stem + e)) for e in SOURCE_EXT)
            else:
                ok = os.path.exists(os.path.join(ROOT, folder, stem + '.' + ext))
            if not ok and not any(os.path.exists(os.path.join(ROOT, d, stem + '.' + ext)) for d in ('docs',)):
                errors.append(f'{folder}/: its entry names {stem}.{ext}, which is not a file of the folder')
    for folder in doc:
        if not os.path.isdir(os.path.join(ROOT, folder)):
            errors.append(f'docs/layout.md names {folder}/, which does not exist')
    for e in errors:
        print(e)
    print(f'docs/layout.md: {len(doc)} entries, {named} files of {len(folders())} folders checked, '
          f'{len(errors)} difference(s)')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
