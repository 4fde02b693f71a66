#!/usr/bin/env python3
"""Checks every #include "..." of every source file against the layering in
tests/layering/layers.txt (one list: each folder, what it may include).

Usage: check_includes.py <source dir>     exit 1 naming each violation.
"""
import os
import re
import sys

ROOT = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', '..')
SOURCE_DIRS = ['src', 'models', 'library', 'workloads']
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def read_layers(path):
    layers = {}
    for n, line in enumerate(open(path), 1):
        line = line.split('#', 1)[0].strip()
        if not line:
            continue
        folder, _, rest = line.partition(':')
        if folder.strip() in layers:
            sys.exit(f'{path}:{n}: {folder.strip()} listed twice')
        layers[folder.strip()] = rest.split()
    return layers


def folder_of(path, layers):
    """The listed folder a repository path belongs to (the longest match)."""
    best = None
    for f in layers:
        pattern = re.escape(f).replace(r'\*', '[^/]+')   # models/*/tests: any model's tests
        if re.match(pattern + '(/|$)', path):
            if best is None or len(f) > len(best):
                best = f
    return best


def resolve(include, including_dir):
    """The repository path an #include names. Every source names one
    ("src/core/params.hpp", "models/os/vm.hpp"); only a test may name a
    helper of its own folder or of tests/ by its bare name."""
    if os.path.exists(os.path.join(ROOT, include)) and '/' in include:
        return include
    if '/' not in include and '/tests' in '/' + including_dir:
        for cand in (os.path.join(including_dir, include), os.path.join('tests', include)):
            if os.path.exists(os.path.join(ROOT, cand)):
                return os.path.normpath(cand)
    return None


def allowed(target, own, rules):
    """Whether `own` may include `target`: the longest rule that covers it
    decides (a rule `-folder` forbids what a wider rule allows)."""
    if target == own or target.startswith(own + '/'):
        return True
    best, verdict = -1, False
    for r in rules:
        deny = r.startswith('-')
        path = r[1:] if deny else r
        if path.endswith('/*'):
            covers, length = target.startswith(path[:-1]), len(path) - 1
        else:
            covers, length = target == path or target.startswith(path + '/'), len(path)
        if covers and length > best:
            best, verdict = length, not deny
    return verdict


def main():
    layers = read_layers(os.path.join(ROOT, 'tests', 'layering', 'layers.txt'))
    errors, files = [], 0
    for top in SOURCE_DIRS:
        for dirpath, _, names in os.walk(os.path.join(ROOT, top)):
            rel_dir = os.path.relpath(dirpath, ROOT)
            for name in sorted(names):
                if not name.endswith(('.cpp', '.hpp')):
                    continue
                rel = os.path.join(rel_dir, name)
                own = folder_of(rel, layers)
                if own is None:
                    errors.append(f'{rel}: its folder is not in tests/layering/layers.txt')
                    continue
                files += 1
                for n, line in enumerate(open(os.path.join(ROOT, rel), encoding='utf-8'), 1):
                    m = INCLUDE.match(line)
                    if not m:
                        continue
                    target = resolve(m.group(1), rel_dir)
                    if target is None:
                        errors.append(f'{rel}:{n}: #include "{m.group(1)}" names no file of the repository '
                                      '(give its path from the repository root)')
                        continue
                    if target.startswith('tests/') and '/tests/' in '/' + rel:
                        continue   # a model's or library's tests use the shared test helpers
                    if not allowed(target, own, layers[own]):
                        errors.append(f'{rel}:{n}: #include "{m.group(1)}": {own} may not include {target} '
                                      f'(tests/layering/layers.txt)')
    for e in errors:
        print(e)
    print(f'{files} files checked against tests/layering/layers.txt: {len(errors)} violation(s)')
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
