#!/usr/bin/env python3
"""ctest `format`: every C++ source follows the repository's .clang-format.

    format_check.py SOURCE_DIR [--fix]

Runs Debian's clang-format (scripts/setup.sh installs it) on every .cpp and
.hpp under src/, models/, library/, workloads/ and tests/ and lists the files
it would change (exit 1). --fix rewrites them in place.
"""
import os
import re
import shutil
import subprocess
import sys

FOLDERS = ('src', 'models', 'library', 'workloads', 'tests')


def main():
    root = sys.argv[1] if len(sys.argv) > 1 and not sys.argv[1].startswith('-') else \
        os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..')
    fix = '--fix' in sys.argv
    exe = shutil.which('clang-format') or shutil.which('clang-format-14')
    if exe is None:
        print('format: clang-format not found (scripts/setup.sh installs Debian\'s clang-format)')
        return 1
    files = []
    for top in FOLDERS:
        for dirpath, _, names in os.walk(os.path.join(root, top)):
            files += [os.path.join(dirpath, n) for n in sorted(names) if n.endswith(('.cpp', '.hpp'))]
    # One clang-format for many files (--dry-run: each replacement it would
    # make is a warning naming the file), not one a file: its start-up was
    # nine tenths of this test's time.
    differ = set()
    for i in range(0, len(files), 200):
        chunk = sorted(files)[i:i + 200]
        p = subprocess.run([exe, '--style=file', '--dry-run', *chunk], capture_output=True, text=True)
        if p.returncode != 0:
            print(p.stderr)
            return 1
        for line in p.stderr.splitlines():
            m = re.match(r'(.*?):\d+:\d+: warning: code should be clang-formatted', line)
            if m:
                differ.add(m.group(1))
    differ = sorted(os.path.relpath(f, root) for f in differ)
    if fix:
        for i in range(0, len(differ), 200):
            subprocess.run([exe, '--style=file', '-i', *[os.path.join(root, d) for d in differ[i:i + 200]]],
                           check=True)
    for d in differ:
        print(f'{d}: not as .clang-format has it' + (' (rewritten)' if fix else ' (clang-format -i fixes it)'))
    print(f'{len(files)} sources, {len(differ)} not formatted')
    return 1 if differ and not fix else 0


if __name__ == '__main__':
    sys.exit(main())
