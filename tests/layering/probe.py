#!/usr/bin/env python3
"""ctest `layering`: every library against the one list of the layering.

    probe.py --source DIR --libraries LIBRARIES.txt --compiler CXX --work DIR

LIBRARIES.txt (written by tests/layering/CMakeLists.txt) names each library
of the build (its folder and target; the executable is src/cli), the
libraries it links and its include directories as a file of its folder is
compiled with them. Against tests/layering/layers.txt:

1. links: a library links only libraries of folders the list allows it;
2. right way: for each folder a library may include, one of its headers (the
   header the list names, or the folder's first) preprocesses with the
   library's include directories;
3. wrong way: for each library folder it may not include, a header of that
   folder fails to preprocess, "No such file or directory": the include
   trees refuse it. A forbidden folder the library reaches through one it
   links (its headers include it) cannot be refused by the compiler; those
   pairs are counted, and `layering_includes` checks that no source includes them.

Exit 1 naming each failure.
"""
import argparse
import concurrent.futures
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check_includes  # noqa: E402


def read_libraries(path):
    libs, cur = {}, None
    for line in open(path):
        key, _, rest = line.rstrip('\n').partition(' ')
        if key == 'library':
            folder, target = rest.split()
            cur = libs[folder] = {'target': target, 'links': [], 'include': []}
        elif key == 'links':
            cur['links'] = rest.split()
        elif key == 'include':
            cur['include'] = [d for d in rest.split('|') if d]
    return libs


def first_header(source, folder):
    names = sorted(n for n in os.listdir(os.path.join(source, folder)) if n.endswith('.hpp'))
    return f'{folder}/{names[0]}' if names else None


def preprocess(compiler, dirs, header, work, name):
    path = os.path.join(work, name + '.cpp')
    with open(path, 'w') as f:
        f.write(f'#include "{header}"\n')
    r = subprocess.run([compiler, '-std=c++17', '-E', '-o', os.devnull] + [f'-I{d}' for d in dirs] + [path],
                       capture_output=True, text=True)
    return r.returncode, r.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--source', required=True)
    ap.add_argument('--libraries', required=True)
    ap.add_argument('--compiler', required=True)
    ap.add_argument('--work', required=True)
    a = ap.parse_args()
    check_includes.ROOT = a.source
    layers = check_includes.read_layers(os.path.join(a.source, 'tests', 'layering', 'layers.txt'))
    libs = read_libraries(a.libraries)
    os.makedirs(a.work, exist_ok=True)
    folder_of_target = {v['target']: f for f, v in libs.items()}
    errors = []

    def closure(folder):
        seen, todo = set(), list(libs[folder]['links'])
        while todo:
            t = todo.pop()
            f = folder_of_target.get(t)
            if f is None or f in seen:
                continue
            seen.add(f)
            todo += libs[f]['links']
        return seen

    listed = set(layers)
    for folder in libs:
        if folder not in listed:
            errors.append(f'{folder}: a library of the build, not in tests/layering/layers.txt')
    links_checked = right = refused = through = 0
    jobs = []
    for folder, lib in sorted(libs.items()):
        if folder not in listed:
            continue
        rules = layers[folder]
        for t in lib['links']:
            g = folder_of_target.get(t)
            if g is None:
                errors.append(f'{folder}: links {t}, which no folder of the layering builds')
                continue
            links_checked += 1
            # A rule naming one header of g (a library's API) allows linking g.
            if not (check_includes.allowed(g, folder, rules) or any(r.startswith(g + '/') for r in rules)):
                errors.append(f'{folder} ({lib["target"]}) links {t} ({g}): tests/layering/layers.txt does not allow it')
        reach = closure(folder)
        for g in sorted(libs):
            if g == folder:
                continue
            named = [r for r in rules if r.startswith(g + '/') and r.endswith('.hpp')]
            header = named[0] if named else first_header(a.source, g)
            if header is None:
                continue
            name = (folder + '__' + g).replace('/', '_')
            if check_includes.allowed(header, folder, rules):
                jobs.append(('right', folder, g, header, lib, 'right_' + name))
                right += 1
            elif g in reach:
                through += 1
            else:
                jobs.append(('wrong', folder, g, header, lib, 'wrong_' + name))
                refused += 1
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as pool:
        results = list(pool.map(lambda j: preprocess(a.compiler, j[4]['include'], j[3], a.work, j[5]), jobs))
    for (kind, folder, g, header, lib, _), (rc, err) in zip(jobs, results):
        if kind == 'right' and rc != 0:
            errors.append(f'{folder} may include {header}, but it does not preprocess with '
                          f'{lib["target"]}\'s include directories:\n{err}')
        elif kind == 'wrong' and rc == 0:
            errors.append(f'{folder} may not include {g}, yet {header} preprocesses with '
                          f'{lib["target"]}\'s include directories')
        elif kind == 'wrong' and f'{header}: No such file or directory' not in err:
            errors.append(f'{folder} including {header}: failed, but not for want of the header:\n{err}')
    for e in errors:
        print(e)
    print(f'{len(libs)} libraries: {links_checked} links allowed by the list; {right} allowed folders '
          f'preprocess; {refused} forbidden folders refused by the include trees, {through} reached '
          f'through a library built on (checked by layering_includes); {len(errors)} failure(s)')
    return 1 if errors or refused == 0 or right == 0 else 0


if __name__ == '__main__':
    sys.exit(main())
