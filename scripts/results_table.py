#!/usr/bin/env python3
"""A sweep's results.csv as the Markdown table a document quotes.

    scripts/results_table.py RESULTS.csv --row EXPR [--row EXPR ...] [--row-order EXPR] [--col EXPR [--col-order EXPR]]
                             --cell EXPR [--cell EXPR ...] [--where EXPR] [--several]
                             [--header 'A | B | ...'] [--align right]

Each EXPR is a Python expression over one row of RESULTS.csv: a column
whose name is an identifier is a variable (`throughput_gbps`), any column
is `p['workload.message-size']`; a number is an int or a float as written
(`426`, `7.86477`), anything else a string. Helpers: `size('64KiB')` is
'64 KiB' (the way the documents write sizes), `us(x)` is x with thousands
separators and no decimals, `dec(x, n)` is x to n decimals, one
significant digit below 10^-n, and 0 as '0' (0.93, 0.03, 0.008, 0).

- `--row` (one or more): the label cells of a table row. The rows of the
  CSV that give the same labels make one table row, in the order of their
  first appearance (`--row-order`: sorted by that expression's value on
  each row's first CSV row, ties in that order).
- `--col` (optional): splits each table row into column groups, one per
  value of EXPR, in the order of first appearance (`--col-order`: sorted
  by that expression's value on each group's first row); without it there
  is one group.
- `--cell` (one or more): the cells of a group, from the one CSV row of
  that table row and group (none or several is an error: the labels do not
  tell the points apart).
- `--several`: a table row may hold several points (one cell from one
  point, the next from another): its cells are evaluated once for the
  table row, and `pick('KEY=VALUE', ...)` in them is the one point of the
  row with those values (its columns by name: `pick(...)['latency_us_p50']`).
- `--where`: only the CSV rows for which EXPR is true.
- `--header`: the header's cells (default: the expressions); `--align
  right` right-aligns every column.

With f-strings the cells take any format: `--cell "f'{throughput_gbps:.2f}'"`,
`--cell "f'{adaptive_hops:,} / {escape_hops:,}' if adaptive_hops else '–'"`.
The documents quote such tables in `<!-- output: -->` blocks, beside the
sweep's `<!-- run -->`: scripts/tutorial.py runs both and compares the
table with the document's, so a figure cannot drift from what the shipped
config prints. Exit status 2 on a bad expression or a CSV row that is not
unique.
"""
import argparse
import csv
import re
import sys


def fail(msg):
    print("results_table: error: " + msg, file=sys.stderr)
    sys.exit(2)


def value(text):
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    try:
        return float(text)
    except ValueError:
        return text


def size(text):
    """'64KiB' as the documents write it: '64 KiB'."""
    return re.sub(r"^(\d+(?:\.\d+)?)([KMGT]?i?B)$", r"\1 \2", str(text))


def us(x):
    return "{:,.0f}".format(x)


def dec(x, n):
    """x to n decimals; below 10^-n, one significant digit; 0 as '0'."""
    if x == 0:
        return "0"
    return "%.*f" % (n, x) if abs(x) >= 10 ** -n else "%.1g" % x


class Row:
    def __init__(self, raw):
        self.raw = raw
        self.env = {k.replace("-", "_"): value(v) for k, v in raw.items() if re.fullmatch(r"[\w-]+", k)}
        self.env.update({"p": {k: value(v) for k, v in raw.items()}, "size": size, "us": us, "dec": dec})

    def eval(self, expr):
        try:
            # One namespace, so that a lambda or a comprehension sees the names too.
            return eval(expr, dict(self.env, __builtins__={"abs": abs, "round": round, "min": min, "max": max,
                                                           "int": int, "float": float, "str": str, "len": len}))
        except Exception as e:
            fail("%s: %s (in the row of point %s)" % (expr, e, self.raw.get("point", "?")))


def picked(points, exprs):
    """The cells of a table row of several points, each expression able to
    pick(...) one of them."""

    def pick(*conditions):
        want = [c.split("=", 1) for c in conditions]
        found = [r for r in points if all(r.raw.get(k) == v for k, v in want)]
        if len(found) != 1:
            fail("pick(%s): %d points of the row %s" % (", ".join(conditions), len(found),
                                                        points[0].raw.get("point", "?")))
        return found[0].env["p"]

    first = points[0]
    first.env["pick"] = pick
    return [str(first.eval(e)) for e in exprs]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results")
    ap.add_argument("--row", action="append", required=True)
    ap.add_argument("--row-order")
    ap.add_argument("--col")
    ap.add_argument("--col-order")
    ap.add_argument("--cell", action="append", required=True)
    ap.add_argument("--where")
    ap.add_argument("--several", action="store_true", help="several points per table row: cells pick(...) theirs")
    ap.add_argument("--header")
    ap.add_argument("--align", choices=("left", "right"), default="left")
    args = ap.parse_args()
    try:
        with open(args.results, newline="") as f:
            rows = [Row(r) for r in csv.DictReader(f)]
    except OSError as e:
        fail(str(e))
    if args.where:
        rows = [r for r in rows if r.eval(args.where)]
    if not rows:
        fail("%s: no rows%s" % (args.results, " where " + args.where if args.where else ""))
    labels, groups, cells, order = [], [], {}, {}
    for r in rows:
        label = tuple(str(r.eval(e)) for e in args.row)
        group = str(r.eval(args.col)) if args.col else ""
        if label not in labels:
            labels.append(label)
            order[label] = r.eval(args.row_order) if args.row_order else len(labels)
        if group not in groups:
            groups.append(group)
            order[group] = r.eval(args.col_order) if args.col_order else len(groups)
        if args.several:
            cells.setdefault((label, group), []).append(r)
            continue
        if (label, group) in cells:
            fail("two points give the row %s%s: add a --row, --col or --where that tells them apart"
                 % (" | ".join(label), ", column " + group if group else ""))
        cells[label, group] = [str(r.eval(e)) for e in args.cell]
    if args.several:
        cells = {key: picked(points, args.cell) for key, points in cells.items()}
    groups.sort(key=lambda g: order[g])
    labels.sort(key=lambda l: order[l])
    width = len(args.row) + len(groups) * len(args.cell)
    if args.header:
        header = [h.strip() for h in args.header.split("|")]
        if len(header) != width:
            fail("--header has %d cells, the table %d" % (len(header), width))
    else:
        header = args.row + [(g + ": " if g else "") + c for g in groups for c in args.cell]
    lines = ["| " + " | ".join(header) + " |", "|" + ("---:|" if args.align == "right" else "---|") * width]
    for label in labels:
        row = list(label)
        for g in groups:
            row += cells.get((label, g), ["–"] * len(args.cell))
        lines.append("| " + " | ".join(row) + " |")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
