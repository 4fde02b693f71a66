#!/usr/bin/env python3
"""ctest: docs/trace.md's track table lists every trace track, and only those.

    trace_tracks_test.py --exe VRDMASIM --source SOURCE_DIR

Three sets of track names are compared:
  - documented: the first column of the table between <!-- BEGIN TRACK TABLE -->
    and <!-- END TRACK TABLE --> in docs/trace.md (patterns: `cpu<N>`,
    `link-><node>`);
  - declared: the names the sources give Tracer::track(group, name) in
    models/, library/, workloads/ and src/ (tests aside): a string literal, a literal
    plus a number (`"cpu" + std::to_string(k)` -> cpu<N>) or plus a node's
    name (`"link->" + b.group` -> link-><node>), or a constructor parameter
    passed on, followed to the places that construct the class (Link's
    `track`);
  - produced: the thread_name metadata of the traces of shipped
    configurations covering the features (faults, several processes, swap
    under memory pressure, file serving (two requests at once), messaging, NetVM's shadow table,
    atomics and locks, a torus), shortened where long; a track's lanes
    (`<track> lane <N>`, its spans that overlap) count as the track.
Every declared or produced track must be documented, every documented one
declared and produced; each miss fails with the track's name. Process names
must be nodes (node<N>, x<X>y<Y>z<Z>f<F>) or their extra processes
(<node>.proc<K>), as the same page says.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

RUNS = [
    ("one write", ["configs/tutorial/01-one-write.ini"]),
    ("page faults", ["configs/tutorial/03-faults-terminate.ini"]),
    ("stall, two processes a node", ["configs/tutorial/04-stall.ini"]),
    ("memory pressure and swap", ["configs/tutorial/08-pressure.ini", "--workload.total-bytes=8MiB"]),
    ("memory-pressure.ini", ["configs/memory-pressure.ini", "--workload.total-bytes=16MiB", "--workload.window=2"]),
    ("file serving", ["configs/tutorial/14-fileserve.ini"]),
    ("file server, two requests at once", ["configs/fileserve/base.ini", "--fileserve.server-depth=2"]),
    ("messaging", ["configs/pingpong.ini", "--workload.kind=sendrecv", "--workload.iterations=10"]),
    ("NetVM shadow table", ["configs/pingpong.ini", "--ni.translation=shadow", "--rdma.strategy=netvm",
                            "--workload.iterations=10"]),
    ("atomics and locks", ["configs/locks.ini"]),
    ("torus", ["configs/exanest-prototype.ini"]),
]
NODE = r"(?:node\d+|x\d+y\d+z\d+f\d+)"
PROCESS = re.compile(r"^%s(?:\.proc\d+)?$" % NODE)
SOURCE_DIRS = ["models", "library", "workloads", "src"]


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


# --- the documented table ---------------------------------------------------
def documented(source):
    path = os.path.join(source, "docs", "trace.md")
    with open(path) as f:
        text = f.read()
    m = re.search(r"<!-- BEGIN TRACK TABLE -->\n(.*?)<!-- END TRACK TABLE -->", text, re.S)
    if not m:
        fail("docs/trace.md has no <!-- BEGIN TRACK TABLE --> ... <!-- END TRACK TABLE -->")
    names = []
    for line in m.group(1).splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or cells[0] in ("track", "") or set(cells[0]) <= set("-: "):
            continue
        cm = re.fullmatch(r"`([^`]+)`", cells[0])
        if not cm:
            fail("docs/trace.md: track table row without a `name` in its first column: %s" % line)
        if not cells[1] or not cells[2]:
            fail("docs/trace.md: track %s has no writer or no meaning" % cells[0])
        names.append(cm.group(1))
    if len(set(names)) != len(names):
        fail("docs/trace.md lists a track twice: %s" % sorted(n for n in names if names.count(n) > 1))
    with open(os.path.join(source, "README.md")) as f:
        if "docs/trace.md" not in f.read():
            fail("README.md does not link docs/trace.md")
    return names


def pattern_regex(name):
    out = ""
    for part in re.split(r"(<N>|<node>|<[A-Za-z]+>)", name):
        if part == "<node>":
            out += NODE
        elif part.startswith("<") and part.endswith(">") and part:
            out += r"\d+"
        else:
            out += re.escape(part)
    return re.compile("^" + out + "$")


# --- the sources ---------------------------------------------------------------
def sources(source):
    for d in SOURCE_DIRS:
        for root, dirs, files in os.walk(os.path.join(source, d)):
            dirs[:] = [x for x in dirs if x != "tests"]
            for f in sorted(files):
                if f.endswith((".cpp", ".hpp")):
                    path = os.path.join(root, f)
                    rel = os.path.relpath(path, source)
                    if rel.startswith("src/core/trace."):
                        continue
                    with open(path) as fh:
                        yield rel, fh.read()


def call_args(text, open_paren):
    """The top-level arguments of the call whose '(' is at open_paren."""
    depth, args, cur, i = 0, [], "", open_paren
    in_str = False
    while i < len(text):
        c = text[i]
        if in_str:
            cur += c
            if c == "\\":
                cur += text[i + 1]
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
            cur += c
        elif c in "([{":
            depth += 1
            if depth > 1:
                cur += c
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                args.append(cur.strip())
                return args
            cur += c
        elif c == "," and depth == 1:
            args.append(cur.strip())
            cur = ""
        else:
            cur += c
        i += 1
    return args


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


class Declared:
    def __init__(self, source):
        self.files = dict(sources(source))
        self.names = {}      # name pattern -> [where]
        self.errors = []

    def run(self):
        for rel, text in self.files.items():
            for m in re.finditer(r"\.track\(", text):
                args = call_args(text, m.end() - 1)
                where = "%s:%d" % (rel, line_of(text, m.start()))
                if len(args) != 2:
                    self.errors.append("%s: a track() call without two arguments: %s" % (where, args))
                    continue
                self.name_of(args[1], where, rel, text, m.start(), depth=0)
        return self

    def add(self, name, where):
        self.names.setdefault(name, []).append(where)

    def name_of(self, expr, where, rel, text, pos, depth):
        m = re.fullmatch(r'"([^"\\]*)"', expr)
        if m:
            return self.add(m.group(1), where)
        m = re.fullmatch(r'"([^"\\]*)"\s*\+\s*(.+)', expr, re.S)
        if m and "to_string" in m.group(2):
            return self.add(m.group(1) + "<N>", where)
        if m and "group" in m.group(2):
            return self.add(m.group(1) + "<node>", where)
        if re.fullmatch(r"[A-Za-z_]\w*", expr) and depth == 0:
            return self.forwarded(expr, where, rel, text, pos)
        self.errors.append("%s: cannot tell the track name from `%s`: write it as a literal, literal + "
                           "std::to_string(...) (<N>) or literal + a node's group (<node>), or teach "
                           "tests/scripts/trace_tracks_test.py" % (where, expr))

    def forwarded(self, param, where, rel, text, pos):
        """A constructor parameter passed on as the name: follow it to the
        places that construct the class."""
        ctors = list(re.finditer(r"\b(\w+)::\1\(", text[:pos]))
        if not ctors:
            self.errors.append("%s: track name `%s` is neither a literal nor a constructor's parameter"
                               % (where, param))
            return
        cls = ctors[-1].group(1)
        params = call_args(text, ctors[-1].end() - 1)
        index = [i for i, p in enumerate(params) if re.search(r"\b%s$" % re.escape(param), p)]
        if not index:
            self.errors.append("%s: `%s` is not a parameter of %s's constructor" % (where, param, cls))
            return
        k = index[0]
        sites = 0
        for frel, ftext in self.files.items():
            # make_unique<C>(...) and members declared `C a;` initialised as a("a", ...)
            opens = [m.end() - 1 for m in re.finditer(r"make_unique<%s>\(" % cls, ftext)]
            for hrel, htext in self.files.items():
                if not hrel.endswith(".hpp"):
                    continue
                for dm in re.finditer(r"^\s*%s\s+(\w+)\s*;" % cls, htext, re.M):
                    opens += [m.end() - 2 for m in re.finditer(r"\b%s\(\"" % dm.group(1), ftext)]
            for o in opens:
                args = call_args(ftext, o)
                if len(args) > k:
                    sites += 1
                    self.name_of(args[k], "%s:%d (via %s)" % (frel, line_of(ftext, o), where), frel, ftext, o,
                                 depth=1)
        if sites == 0:
            self.errors.append("%s: found no construction of %s to tell its track names" % (where, cls))


# --- the traces -------------------------------------------------------------
def produced(exe, source, tmp):
    threads, processes = {}, {}
    for label, args in RUNS:
        out = os.path.join(tmp, re.sub(r"\W+", "-", label))
        cmd = [exe, "run", os.path.join(source, args[0])] + args[1:] + ["--trace", "--quiet", "--no-progress",
                                                                      "--out", out]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode not in (0, 3):
            fail("%s exited %d\n%s%s" % (" ".join(cmd), p.returncode, p.stdout, p.stderr))
        with open(os.path.join(out, "trace.json")) as f:
            doc = json.load(f)
        names = set()
        for e in doc["traceEvents"]:
            if e.get("ph") == "M" and e.get("name") == "thread_name":
                threads.setdefault(e["args"]["name"], set()).add(label)
                names.add(e["args"]["name"])
            if e.get("ph") == "M" and e.get("name") == "process_name":
                processes.setdefault(e["args"]["name"], set()).add(label)
        print("%-28s %d tracks: %s" % (label, len(names), ", ".join(sorted(names))))
    return threads, processes


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    ap.add_argument("--source", required=True)
    args = ap.parse_args()

    docs = documented(args.source)
    regexes = {d: pattern_regex(d) for d in docs}
    decl = Declared(args.source).run()
    problems = list(decl.errors)
    print("documented: %s" % ", ".join(docs))
    print("declared:   %s" % ", ".join("%s (%s)" % (n, ", ".join(w)) for n, w in sorted(decl.names.items())))

    for name, where in sorted(decl.names.items()):
        if name not in docs:
            problems.append("track %r (declared at %s) is missing from docs/trace.md's track table"
                            % (name, ", ".join(where)))
    for d in docs:
        if d not in decl.names:
            problems.append("docs/trace.md lists track %r, which no Tracer::track() call in the sources makes" % d)

    with tempfile.TemporaryDirectory(prefix="vrdmasim_trace_tracks_") as tmp:
        threads, processes = produced(args.exe, args.source, tmp)
    for name, labels in sorted(threads.items()):
        # A track's lanes (its spans that overlap) are "<track> lane <N>".
        name = re.sub(r" lane \d+$", "", name)
        if not any(r.match(name) for r in regexes.values()):
            problems.append("track %r (in the trace of %s) is missing from docs/trace.md's track table"
                            % (name, ", ".join(sorted(labels))))
    for d, r in regexes.items():
        if not any(r.match(t) for t in threads):
            problems.append("docs/trace.md lists track %r, which no traced run produced (runs: %s)"
                            % (d, ", ".join(label for label, _ in RUNS)))
    for name, labels in sorted(processes.items()):
        if not PROCESS.match(name):
            problems.append("process (group) %r (in the trace of %s) is neither a node nor a node's "
                            "extra process, as docs/trace.md describes" % (name, ", ".join(sorted(labels))))
    if problems:
        for p in problems:
            print("FAIL: " + p)
        sys.exit(1)
    print("trace_tracks: %d documented tracks, all declared in the sources and produced by %d runs"
          % (len(docs), len(RUNS)))


if __name__ == "__main__":
    main()
