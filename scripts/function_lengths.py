#!/usr/bin/env python3
"""No function longer than a page: every function of the simulator (src/,
models/, library/, workloads/; tests aside) at most --limit lines (80 by
default), from the first line of its signature to its closing brace.

    scripts/function_lengths.py [--limit 80] [--list N]

Reads the C++ sources with a small scanner (comments, strings and character
literals blanked; a brace opens a function body when the text before it,
back to the last ';', '{' or '}', ends with a parameter list or what may
follow one: const, noexcept, override, final, a trailing return type, a
constructor's member initializers; not a control statement's). Lambdas and
local classes count as part of the function they are in. Prints each
function over the limit with its file and line; exit status 1 if any. The
ctest `function_lengths` runs it (issue #58: a function a reader can hold
at once).

DEBT names the functions that were longer when the rule came (2026-11-28),
each at most its length then: one may shrink (and must leave the list once
within the limit: the script says so), none may grow, and no other may
pass the limit.
"""
import argparse
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FOLDERS = ["src", "models", "library", "workloads"]
CONTROL = re.compile(r"^(if|for|while|switch|catch|else\s+if)\b")
# What may follow a function's parameter list before its body.
TAIL = re.compile(r"\)\s*(const\b\s*)?(noexcept\b\s*(\([^()]*\))?\s*)?((override|final)\b\s*)*(->[^{};]*)?$")


# (file, function name): its length when the rule came; to be split.
DEBT = {
}


def name_of(signature):
    """The function's (qualified) name: the identifier before its parameter list."""
    m = re.search(r"([\w:~]+)\s*(<[^()]*>)?\s*\(", signature)
    return m.group(1) if m else signature


def blank(text):
    """Comments, string and character literals replaced by spaces (newlines kept)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            end = text.find(")" + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            # a digit separator (1'000) is not a literal
            if c == "'" and i > 0 and text[i - 1].isalnum() and i + 1 < n and text[i + 1].isalnum():
                out.append(c)
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if j - i >= 2 else c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(path):
    """(first line, last line, signature) of every function defined in the file."""
    with open(path, errors="replace") as f:
        text = blank(f.read())
    # Preprocessor lines are not code here.
    text = re.sub(r"(?m)^[ \t]*#.*$", lambda m: " " * len(m.group(0)), text)
    found = []
    stack = []   # per open brace: (is a function body, first line)
    last = 0   # where the current head starts: after the last ';', '{' or '}'
    inside = 0   # open function bodies
    for i, c in enumerate(text):
        if c == "{":
            head = text[last:i]
            h = " ".join(head.split())
            is_fn = False
            if not inside and h and not CONTROL.match(h) and not h.startswith(("namespace", "extern")):
                # a constructor's member initializers: `) : a_(x), b_(y)`
                # (whose last closes with `)` or `}` right before the body)
                core = h
                if h[-1] in ")}" and re.search(r"\)\s*:[^:]", h):
                    core = re.sub(r"\)\s*:\s*[\w:]+\s*[({].*$", ")", h)
                is_fn = bool(TAIL.search(core)) and not re.search(r"\b(class|struct|union|enum)\b[^(]*$", h)
            first = text.count("\n", 0, last + len(head) - len(head.lstrip())) + 1
            # A brace in an expression (`a_{x}` among a constructor's
            # initializers, `= {1, 2}`, `f({...})`): the head goes on past it.
            expr = (not is_fn and bool(h) and (h[-1].isalnum() or h[-1] in "_=,(>") and
                    not re.search(r"\b(class|struct|union|enum|namespace|extern)\b", h))
            stack.append((is_fn, first, h[:100], expr))
            inside += is_fn
            if not expr:
                last = i + 1
        elif c == "}":
            expr = False
            if stack:
                is_fn, first, h, expr = stack.pop()
                if is_fn:
                    inside -= 1
                    found.append((first, text.count("\n", 0, i) + 1, h))
            if not expr:
                last = i + 1
        elif c == ";":
            last = i + 1
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--limit", type=int, default=80)
    ap.add_argument("--list", type=int, default=0, metavar="N", help="also print the N longest functions")
    args = ap.parse_args()
    lengths = []
    for folder in FOLDERS:
        for dirpath, dirnames, filenames in os.walk(os.path.join(ROOT, folder)):
            dirnames[:] = sorted(d for d in dirnames if d != "tests")
            for name in sorted(filenames):
                if name.endswith((".cpp", ".hpp")):
                    path = os.path.join(dirpath, name)
                    for first, end, sig in functions(path):
                        lengths.append((end - first + 1, os.path.relpath(path, ROOT), first, sig))
    lengths.sort(key=lambda x: (-x[0], x[1], x[2]))
    for n, path, line, sig in lengths[:args.list]:
        print(f"{n:5d}  {path}:{line}  {sig}")
    problems, owed = [], 0
    seen = {}
    for n, path, line, sig in lengths:
        key = (path, name_of(sig))
        if key in DEBT:
            seen[key] = max(seen.get(key, 0), n)
        if n <= args.limit:
            continue
        if key in DEBT and n <= DEBT[key]:
            owed += 1
            continue
        why = f"longer than its {DEBT[key]} lines when the rule came" if key in DEBT else f"limit {args.limit}"
        problems.append(f"TOO LONG {path}:{line}: {n} lines ({why}): {sig}")
    for key, n in DEBT.items():
        if seen.get(key, 0) <= args.limit:
            problems.append(f"PAID {key[0]}: {key[1]} is within {args.limit} lines now (or gone): take it off DEBT "
                            f"in scripts/function_lengths.py")
    for p in problems:
        print(p)
    print(f"function_lengths: {len(lengths)} functions, {owed} over {args.limit} lines still owed (DEBT), "
          f"{len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
