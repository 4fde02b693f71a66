#!/usr/bin/env python3
"""Every Catch2 test case must run as the ctest test of its name.

catch_discover_tests (CMakeLists.txt, vrdmasim_test) hands each case's name
to CMake as a list element: a name with a ';' in it becomes two ctest tests
whose filters match no case, and both pass without running anything (32
cases did, until 2026-11). This test finds such names in the sources.

usage: test_names_test.py SOURCE_DIR
"""
import glob
import os
import re
import sys

NAME = re.compile(r'TEST_CASE\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)', re.S)


def main():
    root = sys.argv[1]
    bad = []
    count = 0
    for folder in ("src", "library", "models", "tests", "workloads"):
        for path in glob.glob(os.path.join(root, folder, "**", "*.cpp"), recursive=True):
            with open(path, encoding="utf-8") as f:
                text = f.read()
            for m in NAME.finditer(text):
                count += 1
                name = "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', m.group(1)))
                if ";" in name:
                    bad.append("%s: %r" % (os.path.relpath(path, root), name))
    for b in bad:
        print("a ';' in a test case's name (ctest would split it and run nothing):", b)
    print("test_names: %d test cases, %d with a ';'" % (count, len(bad)))
    if count < 500:
        print("test_names: fewer test cases than expected: is %s the source folder?" % root)
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
