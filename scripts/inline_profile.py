#!/usr/bin/env python3
"""Where a vrdmasim run's instructions go, by model step, inlining and all.

    scripts/inline_profile.py --exe BUILD/vrdmasim [--within FUNC ...]
        [--through FUNC ...] [--depth N] [--per FIGURE [--unit NAME]] [--top K] -- run ARGS...

Runs the command under valgrind's callgrind (its simulation loop only, as
`bench --instructions` counts: src/cli/run.cpp starts and stops the
instrumentation), then gives each instruction's count to the functions it
was inlined from. Callgrind alone names only the function a symbol holds:
the hop path is one symbol (`HopQueue::serve_events`, with every step of a
link's start inlined in it), so its own report cannot say how much of it
is the credits, the router's input or the statistics. Here each
instruction's inline chain (addr2line -i on the executable's debug
information) is read from the outside in, and its count goes to the first
DEPTH functions of the project's own code below the --within frames (by
default below the symbol itself), skipping the library's and the
language's small helpers (std::, sc_core::, sc_time arithmetic), whose
cost is the step's that used them, and the --through functions (a
dispatch, such as a link's handling of its events, whose steps are wanted
rather than its total).

The executable needs debug information with the build's optimisation:
configure a separate build with -DCMAKE_BUILD_TYPE=Release
-DCMAKE_CXX_FLAGS=-g (the same code, and so the same counts, as the
Release build; without -g there is no inline chain, and this refuses).
--per divides every count by a figure: a number (a run's link starts, say,
the sum of its links' `packets` in stats.json), or the name of a column of
the run's summary.csv (packet_hops, packets, sim_events), read from it;
--unit names the column.

Prints two tables: instructions by symbol (callgrind's own view), then by
step within the --within symbols. Exit status 2 for a bad command line or
an executable without debug information.
"""
import argparse
import collections
import csv
import os
import re
import shutil
import subprocess
import sys
import tempfile

# Frames whose cost is their caller's: the standard library's, SystemC's
# and the simulator's time and container helpers.
HELPER = re.compile(r"^(std::|__gnu_cxx::|sc_core::|sc_dt::|tlm::|operator|max_sim_time|is_max_sim_time|to_ns|to_us"
                    r"|RingList<|HopQueue::time$|HopQueue::link_of$|HopQueue::key$)")


def short(fn):
    """A function's name without its parameters and the project's namespace."""
    depth, out = 0, []
    for c in fn.replace("(anonymous namespace)::", ""):
        if c == "(" and depth == 0 and out and not "".join(out).endswith("operator"):
            break
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        out.append(c)
    return "".join(out).replace("vrdmasim::", "").strip()


def self_costs(cg_file, obj):
    """Self instructions per address of object `obj`, from callgrind's
    --dump-instr=yes output (positions `instr line`; relative positions in
    decimal, `*` the same; the line after `calls=` is a call's inclusive
    cost, not the caller's own)."""
    names, cur, cost = {}, None, collections.Counter()
    last, skip = 0, False
    with open(cg_file) as f:
        for raw in f:
            c = raw[:1]
            if c.isdigit() or c in "+-*":
                parts = raw.split()
                a = parts[0]
                addr = last if a == "*" else last + int(a) if a[0] in "+-" else int(a, 16)
                last = addr
                if skip:
                    skip = False
                elif cur == obj and len(parts) > 2:
                    cost[addr] += int(parts[2])
                continue
            m = re.match(r"(c?ob)=\((\d+)\)(?: (.*))?", raw.rstrip("\n"))
            if m:
                if m.group(3):
                    names[m.group(2)] = m.group(3)
                if m.group(1) == "ob":
                    cur = names.get(m.group(2))
            elif raw.startswith("calls="):
                skip = True
    return cost


def inline_chains(exe, addrs):
    """addr -> [(function, source line)], innermost first (addr2line -i)."""
    p = subprocess.run(["addr2line", "-i", "-f", "-C", "-a", "-e", exe], input="".join(f"{a:#x}\n" for a in addrs),
                       stdout=subprocess.PIPE, text=True, check=True)
    chains, cur, lines = {}, None, p.stdout.split("\n")
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("0x"):
            cur = int(line, 16)
            chains[cur] = []
            i += 1
        elif line:
            chains[cur].append((line, lines[i + 1] if i + 1 < len(lines) else ""))
            i += 2
        else:
            i += 1
    return chains


def per_unit(per, summary):
    """--per as a number: itself, or a summary.csv column's value (0: none)."""
    if not per:
        return 0.0
    try:
        return float(per)
    except ValueError:
        pass
    with open(summary, newline="") as f:
        row = next(csv.DictReader(f))
    if per not in row or not row[per]:
        raise SystemExit(f"inline_profile: --per {per}: no such figure in the run's summary.csv")
    print(f"{per} = {row[per]} (the run's summary.csv)")
    return float(row[per])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--exe", required=True, help="a vrdmasim built with -g (Release flags otherwise)")
    ap.add_argument("--within", action="append", default=[],
                    help="a function (as printed: no namespace, no parameters) whose inlined steps to break down; "
                         "repeat for more (default: every symbol)")
    ap.add_argument("--through", action="append", default=[],
                    help="a function below --within whose steps to name instead of it (a dispatch: repeat for more)")
    ap.add_argument("--depth", type=int, default=1, help="steps of the project's own code to name (default 1)")
    ap.add_argument("--per", default="",
                    help="divide the counts by this: a number, or a column of the run's summary.csv (packet_hops, "
                         "packets, sim_events)")
    ap.add_argument("--unit", help="the --per column's name (default: per and the figure's name)")
    ap.add_argument("--top", type=int, default=30, help="rows of each table (default 30)")
    ap.add_argument("command", nargs=argparse.REMAINDER, help="-- then vrdmasim's arguments (run ...), without -o")
    a = ap.parse_args()
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd or cmd[0] != "run":
        ap.error("give the run after --: -- run [CONFIG] [--key=value ...]")
    if any(x == "-o" or x.startswith("--output") for x in cmd):
        ap.error("leave out -o: the run's outputs go to a temporary folder")
    for tool in ("valgrind", "addr2line", "readelf"):
        if not shutil.which(tool):
            ap.error(f"{tool} is not installed (scripts/setup.sh installs valgrind; binutils has the others)")
    exe = os.path.realpath(a.exe)
    sections = subprocess.run(["readelf", "-S", "-W", exe], stdout=subprocess.PIPE, text=True).stdout
    if ".debug_info" not in sections:
        print(f"inline_profile: {exe} has no debug information: build it with -DCMAKE_CXX_FLAGS=-g", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="inline_profile.") as tmp:
        cg = os.path.join(tmp, "callgrind.out")
        run = ["valgrind", "--tool=callgrind", "--dump-instr=yes", "--instr-atstart=no", f"--callgrind-out-file={cg}",
               exe] + cmd + ["-o", os.path.join(tmp, "out"), "--quiet"]
        p = subprocess.run(run, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if p.returncode != 0 or not os.path.exists(cg):
            sys.stderr.write(p.stderr[-3000:])
            print(f"inline_profile: the run failed (exit status {p.returncode})", file=sys.stderr)
            return 1
        cost = self_costs(cg, exe)
        per = per_unit(a.per, os.path.join(tmp, "out", "summary.csv"))
    if not cost:
        print(f"inline_profile: callgrind counted nothing in {exe}", file=sys.stderr)
        return 1
    chains = inline_chains(exe, sorted(cost))
    total = sum(cost.values())
    by_symbol, by_step = collections.Counter(), collections.Counter()
    within, through = set(a.within), set(a.through)
    for addr, n in cost.items():
        frames = [short(fn) for fn, _ in reversed(chains.get(addr) or [("??", "")])]   # outermost first
        by_symbol[frames[0]] += n
        if within:
            hit = [i for i, f in enumerate(frames) if f in within]
            if not hit:
                continue
            below = frames[max(hit) + 1:]
        else:
            below = frames[1:]
        steps = [f for f in below if not HELPER.match(f) and f not in through][:a.depth]
        by_step[" > ".join(steps) or "(its own code)"] += n

    def table(title, counter):
        print(title)
        unit = a.unit or "per " + a.per
        print(f"  {'instructions':>14}  {'share':>6}" + (f"  {unit:>12}" if per else ""))

        def row(n, what):
            print(f"  {n:14,d}  {100 * n / total:5.1f}%" + (f"  {n / per:12.1f}" if per else "") + f"  {what}")

        for k, n in counter.most_common(a.top):
            row(n, k)
        rest = sum(counter.values()) - sum(n for _, n in counter.most_common(a.top))
        if rest:
            row(rest, "(the rest)")
        row(sum(counter.values()), "in all")
        print()

    print(f"{total:,d} instructions in {os.path.basename(exe)} (callgrind: the simulation loop; libraries not counted)\n")
    table("by symbol (callgrind's own view)", by_symbol)
    table("by step" + (" within " + ", ".join(sorted(within)) if within else ""), by_step)
    return 0


if __name__ == "__main__":
    sys.exit(main())
