#!/usr/bin/python3
"""Plot any summary metric of a sweep against any swept key.

    scripts/plot.py SWEEP METRIC [METRIC ...] --x KEY [--group KEY[,KEY]]
                    [--facet KEY[,KEY]] [--where KEY=VALUE ...] [--out DIR]
    scripts/plot.py SWEEP --list
    scripts/plot.py RUN METRIC [METRIC ...]      (a run's timeseries.csv, against time_us)

SWEEP is the directory `vrdmasim sweep --out DIR` wrote (its results.csv) or a
results.csv (e.g. from `vrdmasim merge`); RUN, a run's directory written with
`vrdmasim run --sample-interval` (its timeseries.csv, one point per sample,
time_us the x axis; figures go beside it, RUN-plots). METRIC is a summary column
(`vrdmasim metrics`, docs/metrics.md); KEY a swept parameter (section.key),
`label`, or a text column such as `strategy`. One line per value of the
--group keys, one panel per value of the --facet keys (rows, columns). Every
other swept key must take one value per line: fix it with --where or group by
it; two points on one (panel, line, x) are refused, never averaged, except
replications (`[sweep] replications`: points that differ only in sim.seed),
whose mean is drawn with its 95 % confidence interval as an error bar (the
same figures as the sweep's aggregate.csv). Points whose status is not ok are
left out (said on stderr).

Writes, for each metric, DIR/METRIC_vs_KEY.png, .svg and .csv (the plotted
numbers: facet keys, x, x_value, group, y, point); with --subplots, one figure
DIR/NAME.png/.svg with a panel per metric and DIR/NAME.METRIC.csv. DIR
defaults to SWEEP/plots. Axes: log x when a numeric key spans two decades or
more (sizes on base 2 with KiB/MiB ticks), log y when the values do (or
--logy / --liny); units in the labels from docs/metrics.md.

Exit status: 0 written; 2 unusable input or options (unknown metric or key,
not a sweep, no point to plot): a message, nothing written; 1 unexpected
failure (matplotlib missing).
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from plotting import draw, results as res, series as ser   # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Parser(argparse.ArgumentParser):
    def error(self, message):
        self.print_usage(sys.stderr)
        print("plot: error: " + message, file=sys.stderr)
        sys.exit(2)


def split_keys(values):
    return [k.strip() for v in values or [] for k in v.split(",") if k.strip()]


def parse_args(argv):
    p = Parser(prog="plot.py", description=__doc__.split("\n\n")[0],
               formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__.split("\n\n", 2)[2])
    p.add_argument("sweep", help="sweep output directory, or a results.csv")
    p.add_argument("metrics", nargs="*", help="summary columns to plot (one figure each)")
    p.add_argument("--x", help="the swept key on the x axis (default: the only swept key that varies)")
    p.add_argument("--group", action="append", help="key(s) whose values are the lines (comma-separated)")
    p.add_argument("--facet", action="append", help="key(s) whose values are the panels: rows[,columns]")
    p.add_argument("--where", action="append", default=[], metavar="KEY=VALUE", help="keep only these points")
    p.add_argument("--out", "-o", help="output directory (default: SWEEP/plots)")
    p.add_argument("--name", help="file name without extension (one metric, or --subplots)")
    p.add_argument("--subplots", action="store_true", help="all metrics in one figure, one panel each")
    p.add_argument("--format", default="png,svg", help="figure formats, comma-separated (png, svg, pdf)")
    scale = p.add_mutually_exclusive_group()
    scale.add_argument("--logx", dest="xmode", action="store_const", const="log")
    scale.add_argument("--linx", dest="xmode", action="store_const", const="linear")
    yscale = p.add_mutually_exclusive_group()
    yscale.add_argument("--logy", dest="ymode", action="store_const", const="log")
    yscale.add_argument("--liny", dest="ymode", action="store_const", const="linear")
    p.add_argument("--list", action="store_true", help="list the swept keys (with values) and metrics, and exit")
    return p.parse_args(argv)


def list_columns(results, units):
    print("%s: %d point(s)" % (results.path, len(results.rows)))
    print("swept keys:")
    for k in results.swept_keys:
        print("  %-32s %s" % (k, ", ".join(v or ser.NOT_SET for v in results.values(k))))
    print("metrics:")
    for m in results.metrics:
        u = res.unit_of(m, units)
        print("  %-32s %s" % (m, "[%s]" % (u or "count")))


def default_x(results, where, named):
    fixed = {k for k, _ in where} | set(named)
    varying = [k for k in results.swept_keys if k not in fixed and len(results.values(k)) > 1]
    if len(varying) != 1:
        raise res.InputError("say which key is on the x axis (--x KEY): %s" % (
            "the swept keys that vary (and are not grouped, faceted or fixed) are " + ", ".join(varying)
            if varying else "no swept key is left to vary"))
    return varying[0]


def plan(args, results, units):
    """Every series checked, and the files they go to; raises InputError
    before anything is written."""
    if not args.metrics:
        raise res.InputError("name at least one metric to plot (--list shows them)")
    formats = [f.strip() for f in args.format.split(",") if f.strip()]
    bad = [f for f in formats if f not in ("png", "svg", "pdf")]
    if bad or not formats:
        raise res.InputError("--format %s: png, svg or pdf" % args.format)
    where = ser.parse_where(args.where, results)
    groups, facets = split_keys(args.group), split_keys(args.facet)
    x = args.x or default_x(results, where, groups + facets)
    if len(facets) > 2:
        raise res.InputError("--facet: at most two keys (panel rows, columns), got %s" % ", ".join(facets))
    if len(set(args.metrics)) != len(args.metrics):
        raise res.InputError("a metric is named twice")
    all_series = [ser.build(results, m, x, groups, facets, where, units) for m in args.metrics]
    for s in all_series:   # the scale options fail here, not half-way through writing
        draw.x_scale(s, args.xmode)
        draw.y_scale(s, args.ymode)
    if args.subplots and facets:
        raise res.InputError("--subplots puts one metric per panel: it cannot also have --facet panels")
    if args.name and len(all_series) > 1 and not args.subplots:
        raise res.InputError("--name names one figure: give one metric, or --subplots")
    return where, x, formats, all_series


def main(argv):
    args = parse_args(argv)
    units = res.metric_units(ROOT)
    try:
        results = res.load(args.sweep)
        if args.list:
            list_columns(results, units)
            return 0
        where, x, formats, all_series = plan(args, results, units)
    except res.InputError as e:
        print("plot: error: %s" % e, file=sys.stderr)
        return 2
    try:
        plt = draw.import_pyplot()
    except RuntimeError as e:
        print("plot: error: %s" % e, file=sys.stderr)
        return 1
    # A sweep's plots go into it (SWEEP/plots); a run's time series beside the
    # run (RUN-plots), so the run directory stays a run's output that a
    # later run may replace.
    if args.out:
        out = args.out
    elif os.path.basename(results.path) == "timeseries.csv":
        out = os.path.dirname(os.path.abspath(results.path)) + "-plots"
    else:
        out = os.path.join(os.path.dirname(results.path), "plots")
    os.makedirs(out, exist_ok=True)
    for s in all_series:
        for note in s.notes:
            print("plot: note: %s: %s" % (s.metric, note), file=sys.stderr)
    written = []
    if args.subplots:
        name = args.name or draw.safe_name("%s_vs_%s" % ("+".join(args.metrics), x))
        written += draw.plot_stacked(plt, all_series, os.path.join(out, name), where, args.xmode, args.ymode, formats)
    else:
        for s in all_series:
            name = args.name or draw.default_name(s.metric, x)
            written += draw.plot_one(plt, s, os.path.join(out, name), where, args.xmode, args.ymode, formats)
    for path in written:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
