#!/usr/bin/env python3
"""scripts/tutorial.py must catch a lesson that lies: a quoted number that
differs from the run, a statistic that does not exist, a command that exits
with another status than the lesson says, a check before its run, a quoted
log excerpt the run did not print (or not in that order), a quoted log line
outside an excerpt (it would go unchecked), a step number the prose names
that no excerpt quotes, an output block that differs from what its command
prints now; and must accept a lesson whose numbers, excerpts and output
blocks are right, skip (not fail) what a slow run left out, and read (not
run twice) a sweep an earlier block ran word for word."""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CHECKER = os.path.join(ROOT, "scripts", "tutorial.py")

RUN = """<!-- run -->
```sh
build/vrdmasim run configs/tutorial/01-one-write.ini --out out/t
```
"""


def check(exe, lesson):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "lesson.md")
        with open(path, "w") as f:
            f.write(lesson)
        p = subprocess.run([sys.executable, CHECKER, "--exe", exe, path], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True)
        return p.returncode, p.stdout


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--exe", required=True)
    exe = os.path.abspath(ap.parse_args().exe)
    cases = [
        ("right numbers, rounded as written", 0,
         RUN + "16<!-- check: out/t stats node0.dma.packets_sent --> packets, "
               "4.8<!-- check: out/t stats node0.dma.transfer_latency.p50 --> us, "
               "1,024 is not checked, 4,608<!-- check: out/t expr stats['node0_to_node1.flits'] * 16 --> B\n"),
        ("a wrong number", 1, RUN + "17<!-- check: out/t stats node0.dma.packets_sent --> packets\n"),
        ("a number written with more precision than the run agrees to", 1,
         RUN + "4.77<!-- check: out/t stats node0.dma.transfer_latency.p50 --> us\n"),
        ("a statistic that does not exist", 1, RUN + "0<!-- check: out/t stats node0.dma.no_such_thing -->\n"),
        ("a check before any run", 1, "16<!-- check: out/t stats node0.dma.packets_sent -->\n" + RUN),
        ("a command that fails", 1,
         "<!-- run -->\n```sh\nbuild/vrdmasim run configs/tutorial/01-one-write.ini --workload.window=0 --out out/t\n```\n"
         "0<!-- check: out/t stats node0.dma.packets_sent -->\n"),
        ("a failing command the lesson expects", 0,
         "<!-- run exit=2 -->\n```sh\nbuild/vrdmasim run configs/tutorial/01-one-write.ini --workload.window=0 --out out/t\n```\n"
         "A bad config exits 2<!-- check: out/t expr status --> and writes 0<!-- check: out/t expr int(exists('stats.json')) --> files.\n"),
        ("a lesson that checks nothing", 1, RUN + "No figures.\n"),
        ("no number before the marker", 1, RUN + "packets<!-- check: out/t stats node0.dma.packets_sent -->\n"),
    ]
    # Log excerpts: lines of a real run's log, in order, reversed, or altered.
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([exe, "run", os.path.join(ROOT, "configs", "tutorial", "01-one-write.ini"), "--out",
                        os.path.join(d, "o"), "--log", "--no-progress"], check=True, stdout=subprocess.DEVNULL)
        with open(os.path.join(d, "o", "events.log")) as f:
            lines = [line.rstrip("\n") for line in f if line.strip()]
    if len(lines) < 3:
        print(f"FAIL lesson 1's log has {len(lines)} lines: too few to quote")
        return 1
    run_log = RUN.replace("--out out/t", "--out out/t --log")
    step_of = lambda line: line.split("  #", 1)[1].split(" ", 1)[0]   # every line is a numbered step
    excerpt = lambda body: run_log + "16<!-- check: out/t stats node0.dma.packets_sent -->\n" \
        "<!-- log excerpt: out/t -->\n```\n" + body + "\n```\n"
    cases += [
        ("a log excerpt of lines the run printed, with a gap", 0, excerpt(lines[0] + "\n...\n" + lines[2])),
        ("a log excerpt out of order", 1, excerpt(lines[2] + "\n" + lines[0])),
        ("a log excerpt with a line the run did not print", 1, excerpt(lines[0] + " (changed)")),
        ("a log excerpt indented in a list item", 0,
         run_log + "16<!-- check: out/t stats node0.dma.packets_sent -->\n1. the log:\n\n   <!-- log excerpt: out/t -->\n"
         "   ```\n   " + lines[0] + "\n   ```\n"),
        ("an indented log excerpt with a line the run did not print", 1,
         run_log + "16<!-- check: out/t stats node0.dma.packets_sent -->\n   <!-- log excerpt: out/t -->\n"
         "   ```\n   " + lines[0] + " (changed)" + "\n   ```\n"),
        ("a log excerpt marker without its code block", 1,
         run_log + "16<!-- check: out/t stats node0.dma.packets_sent -->\n<!-- log excerpt: out/t -->\ntext\n"),
        ("a log excerpt before its run", 1, "<!-- log excerpt: out/t -->\n```\n" + lines[0] + "\n```\n" + run_log),
        ("a quoted log line outside an excerpt (unchecked)", 1,
         run_log + "16<!-- check: out/t stats node0.dma.packets_sent -->\n```\n" + lines[0] + "\n```\n"),
        ("a step the prose names that the excerpts quote", 0,
         excerpt(lines[0]) + "The first step (`#" + step_of(lines[0]) + "`) starts it.\n"),
        ("a step the prose names that no excerpt quotes", 1,
         excerpt(lines[0]) + "Then (`after #" + str(int(step_of(lines[0])) + 1000) + "`) comes the rest.\n"),
    ]
    # Output blocks: a command's printed text quoted whole.
    printed = "printf '| a | b |\\n|---|---|\\n| 1 | 2 |\\n'"
    output = lambda body, command=printed: "<!-- output: " + command + " -->\n" + body + "<!-- end output -->\n"
    cases += [
        ("an output block as its command prints it", 0, output("| a | b |\n|---|---|\n| 1 | 2 |\n")),
        ("an output block with a changed cell", 1, output("| a | b |\n|---|---|\n| 1 | 3 |\n")),
        ("an output block with a row missing", 1, output("| a | b |\n|---|---|\n")),
        ("an output block whose command fails", 1, output("x\n", "false")),
        ("an output block quoted as a code block", 0, output("```\n| a | b |\n|---|---|\n| 1 | 2 |\n```\n")),
        ("an output block quoted as a code block, a cell changed", 1,
         output("```\n| a | b |\n|---|---|\n| 1 | 9 |\n```\n")),
        ("an output marker without its end", 1, "<!-- output: " + printed + " -->\n| a | b |\n"),
        ("an output block over a run's directory", 0,
         RUN + output("1\n", "ls out/t | grep -c stats.json")),
        # A run block whose command goes on over two lines, and a sum of statistics.
        ("a command continued with a backslash", 0,
         "<!-- run -->\n```sh\nbuild/vrdmasim run configs/tutorial/01-one-write.ini \\\n  --out out/t\n```\n"
         "16<!-- check: out/t expr stat_sum(r'^node0\\.dma\\.packets_sent$') -->\n"),
        # Another run's figures in an expression.
        ("a figure against another run's", 0,
         RUN + RUN.replace("out/t", "out/u") +
         "0<!-- check: out/t expr stats['node0.dma.packets_sent'] - run('out/u').stats['node0.dma.packets_sent'] -->\n"),
        ("a figure against another run's, wrong", 1,
         RUN + RUN.replace("out/t", "out/u") +
         "1<!-- check: out/t expr stats['node0.dma.packets_sent'] - run('out/u').stats['node0.dma.packets_sent'] -->\n"),
        # A slow run: skipped without --slow, with everything that names it.
        ("an output block marked slow, skipped without --slow", 0,
         RUN + "16<!-- check: out/t stats node0.dma.packets_sent -->\n"
         "<!-- output slow: echo printed -->\nquoted\n<!-- end output -->\n"),
        ("a slow run and its checks, skipped", 0,
         RUN.replace("<!-- run -->", "<!-- run slow -->") + "17<!-- check: out/t stats node0.dma.packets_sent -->\n"
         + output("wrong\n", "ls out/t") + output("| a | b |\n|---|---|\n| 1 | 2 |\n")),
    ]
    failures = 0
    # A run another check already made (--keep DIR --have OUT): its block is not run again.
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([exe, "run", os.path.join(ROOT, "configs", "tutorial", "01-one-write.ini"), "--out",
                        os.path.join(d, "out", "given"), "--no-progress"], check=True, stdout=subprocess.DEVNULL)
        lesson = os.path.join(d, "lesson.md")
        with open(lesson, "w") as f:
            f.write("<!-- run out=out/given -->\n```sh\nfalse   # would fail if it ran\n```\n"
                    "16<!-- check: out/given stats node0.dma.packets_sent -->\n")
        for name, args, expected in (("a run given with --have is not run again", ["--keep", d, "--have", "out/given"], 0),
                                     ("the same block run (no --have) fails", [], 1)):
            p = subprocess.run([sys.executable, CHECKER, "--exe", exe] + args + [lesson], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True)
            if p.returncode != expected:
                print(f"FAIL {name}: exit {p.returncode}, expected {expected}\n{p.stdout}")
                failures += 1
            else:
                print(f"ok   {name}")
    # The same plain sweep twice in one pass (two pages given together): run
    # once, its figures checked after either block, a wrong one still failing.
    with tempfile.TemporaryDirectory() as d:
        sweep = os.path.join(d, "windows.ini")
        with open(sweep, "w") as f:
            f.write(f"[sweep]\nbase = {ROOT}/configs/tutorial/01-one-write.ini\n[workload]\nwindow = 1, 2\n")
        block = f"<!-- run -->\n```sh\nbuild/vrdmasim sweep {sweep} --out out/s\n```\n"
        figure = "<!-- check: out/s expr results('workload.window=2')['packets'] -->\n"
        for name, written, expected in (("a sweep run again is read, not run twice", "16", 0),
                                        ("a sweep run again is read: a wrong figure after it fails", "17", 1)):
            status, output = check(exe, block + "16" + figure + block + written + figure)
            if status != expected or output.count("not run again") != 1:
                print(f"FAIL {name}: exit {status}, expected {expected}, one sweep not run again\n{output}")
                failures += 1
            else:
                print(f"ok   {name}")
        # Another sweep into the same directory in between: the first runs again.
        other = block.replace(sweep, sweep.replace("windows", "others"))
        with open(os.path.join(d, "others.ini"), "w") as f:
            f.write(f"[sweep]\nbase = {ROOT}/configs/tutorial/01-one-write.ini\n[workload]\nwindow = 3, 4\n")
        status, output = check(exe, block + "16" + figure + other + block + "16" + figure)
        name = "a sweep whose directory another command wrote since runs again"
        if status != 0 or "not run again" in output:
            print(f"FAIL {name}: exit {status}, expected 0, every sweep run\n{output}")
            failures += 1
        else:
            print(f"ok   {name}")
    for name, expected, lesson in cases:
        status, output = check(exe, lesson)
        if status != expected:
            print(f"FAIL {name}: exit {status}, expected {expected}\n{output}")
            failures += 1
        else:
            print(f"ok   {name}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
