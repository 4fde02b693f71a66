"""Drawing checked series (series.Series): axis scales, labels with units,
PNG and SVG, and the plotted numbers as CSV beside each figure."""
import csv
import os
import re

from .results import InputError, fmt_size

MARKERS = "osD^v<>phX*"
DECADES = 100.0   # values spanning this ratio (two decades) or more get a log axis


def import_pyplot():
    """matplotlib with the Agg backend, or InputError-like failure (exit 1)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        raise RuntimeError("matplotlib is missing (scripts/setup.sh installs python3-matplotlib; use /usr/bin/python3)")


def spans_decades(values):
    return bool(values) and min(values) > 0 and max(values) / min(values) >= DECADES


def geometric(values):
    """Three or more distinct positive values each at least twice the one
    before by the same factor (a sweep of sizes 16 KiB, 64 KiB, 256 KiB,
    ...): spaced evenly only on a log axis."""
    v = sorted(set(values))
    if len(v) < 3 or v[0] <= 0:
        return False
    r = [b / a for a, b in zip(v, v[1:])]
    return min(r) >= 2 and max(r) / min(r) < 1.01


def x_scale(series, mode):
    """"log" or "linear" for a numeric x; None for categories."""
    if series.x_kind == "text":
        if mode == "log":
            raise InputError("--logx: %s is not numeric (values such as %s)" % (series.x, series.points[0].x.text))
        return None
    xs = [p.x.number for p in series.points]
    if mode == "log":
        if min(xs) <= 0:
            raise InputError("--logx: %s has values <= 0" % series.x)
        return "log"
    if mode == "linear":
        return "linear"
    return "log" if spans_decades(xs) or geometric(xs) else "linear"


def y_scale(series, mode):
    ys = [p.y for p in series.points]
    if mode == "log":
        bad = [p.point for p in series.points if p.y <= 0]
        if bad:
            raise InputError("--logy: %s is <= 0 at %d point(s) (%s); a log axis cannot show them"
                             % (series.metric, len(bad), ", ".join(bad[:5])))
        return "log"
    if mode == "linear":
        return "linear"
    return "log" if spans_decades(ys) else "linear"


UNIT_WORDS = {"": "count", "us": "us", "ns": "ns", "s": "s", "B": "bytes", "MiB": "MiB", "Gb/s": "Gb/s",
              "fraction": "fraction"}


def y_label(series):
    return "%s (%s)" % (series.metric, UNIT_WORDS.get(series.unit, series.unit))


def x_label(series):
    return {"size": "%s (bytes)", "time": "%s (us)"}.get(series.x_kind, "%s") % series.x


def safe_name(text):
    return re.sub(r"[^A-Za-z0-9._+-]+", "_", text)


def default_name(metric, x):
    return safe_name("%s_vs_%s" % (metric, x))


def write_csv(path, series):
    """The plotted numbers: the facet keys, x as written and as placed
    (bytes for sizes, us for durations), the line, y exactly as results.csv
    has it, and the point id."""
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        replicated = any(p.yerr is not None for p in series.points)
        w.writerow(series.facets + ["x", "x_value", "group", "y", "point"] + (["ci95", "n"] if replicated else []))
        for p in sorted(series.points, key=lambda p: _order(series, p)):
            facet = p.facet.split(", ") if series.facets else []
            w.writerow(facet + [p.x.text, "" if p.x.number is None else "%.17g" % p.x.number,
                                p.group, p.y_text, p.point] + (["%.9g" % p.yerr, p.n] if replicated else []))


def _order(series, p):
    facets, groups = series.facet_values(), series.group_values()
    xs = p.x.number if series.x_kind != "text" else _categories(series).index(p.x.text)
    return (facets.index(p.facet), groups.index(p.group), xs)


def _categories(series):
    return list(dict.fromkeys(p.x.text for p in series.points))


def draw_panel(ax, series, facet, xscale, yscale, title, legend=True):
    categories = _categories(series)
    groups = series.group_values()
    drawn = False
    for n, g in enumerate(groups):
        pts = sorted((p for p in series.points if p.facet == facet and p.group == g),
                     key=lambda p: _order(series, p))
        if not pts:
            continue
        ys = [p.y for p in pts]
        yerr = [p.yerr or 0 for p in pts] if any(p.yerr is not None for p in pts) else None
        style = dict(color="C%d" % (n % 10), label=g if series.groups else None)
        if xscale is None:
            # Categories (strategies): no order between them and nothing in
            # between, so no line joins them. Side by side bars on a linear
            # axis (each line's place in a category the same in every
            # panel); lone markers, side by side, on a log one (a bar has no
            # foot there).
            width = (0.8 if yscale == "linear" else 0.4) / len(groups)
            xs = [categories.index(p.x.text) + (n - (len(groups) - 1) / 2) * width for p in pts]
            if yscale == "linear":
                ax.bar(xs, ys, width=width, yerr=yerr, capsize=3 if yerr else 0, **style)
            else:
                ax.errorbar(xs, ys, yerr=yerr, marker=MARKERS[n % len(MARKERS)], linestyle="none",
                            capsize=3 if yerr else 0, **style)
        else:
            # The same colour and marker for a line in every panel; replications
            # averaged carry their 95 % confidence interval as an error bar.
            xs = [p.x.number for p in pts]
            if yerr:
                ax.errorbar(xs, ys, yerr=yerr, marker=MARKERS[n % len(MARKERS)], capsize=3, **style)
            else:
                ax.plot(xs, ys, marker=MARKERS[n % len(MARKERS)], **style)
        drawn = True
    if not drawn:
        ax.text(0.5, 0.5, "no point", ha="center", va="center", transform=ax.transAxes)
        ax.set_xticks([])
        ax.set_yticks([])
    if xscale is None and drawn:
        ax.set_xticks(range(len(categories)))
        ax.set_xticklabels(categories, rotation=30 if max(len(c) for c in categories) > 6 else 0)
        if yscale == "linear":
            ax.margins(y=0.35)   # room for the legend above the bars
    elif drawn:
        _numeric_x(ax, series, xscale)
    if drawn:
        ax.set_yscale(yscale)
        # A linear axis of quantities that are never negative (throughputs,
        # latencies, counts) starts at zero: one that starts near the
        # smallest value makes a 10 % difference look like a factor.
        if yscale == "linear" and all(p.y >= 0 for p in series.points):
            ax.set_ylim(bottom=0)
        if yscale == "log":
            from matplotlib.ticker import LogFormatter
            ax.yaxis.set_major_formatter(LogFormatter())   # 40, not 4x10^1
            ax.yaxis.set_minor_formatter(LogFormatter(labelOnlyBase=False, minor_thresholds=(2, 0.5)))
    ax.grid(True, which="both", alpha=0.3)
    if title:
        ax.set_title(title, fontsize="medium")
    if legend and drawn and series.groups:
        # Over bars, one row above them (up to four entries).
        wide = dict(loc="upper center", ncol=min(len(groups), 4)) if xscale is None and yscale == "linear" else {}
        ax.legend(fontsize="small", title=", ".join(series.groups), title_fontsize="small", **wide)


def _numeric_x(ax, series, xscale):
    from matplotlib.ticker import FixedLocator, FuncFormatter, NullLocator
    values = sorted({p.x.number for p in series.points})
    if xscale == "log":
        ax.set_xscale("log", base=2 if series.x_kind == "size" else 10)
    # Ticks at the swept values (at most 12 of them); sizes as people
    # write them: 4 KiB, 1 MiB.
    ticks = values if len(values) <= 12 else values[::(len(values) + 11) // 12]
    ax.xaxis.set_major_locator(FixedLocator(ticks))
    ax.xaxis.set_minor_locator(NullLocator())
    if series.x_kind == "size":
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: fmt_size(int(round(v)))))
        for label in ax.get_xticklabels():
            label.set_rotation(30)
    else:
        ax.xaxis.set_major_formatter(FuncFormatter(lambda v, _pos: "%g" % v))


def figure_title(metric_part, series, where):
    fixed = ", ".join("%s=%s" % kv for kv in where)
    return "%s vs %s%s" % (metric_part, series.x, "\n(%s)" % fixed if fixed else "")


def save(fig, base, formats):
    paths = []
    for ext in formats:
        path = "%s.%s" % (base, ext)
        fig.savefig(path)
        paths.append(path)
    return paths


def plot_one(plt, series, base, where, xmode, ymode, formats):
    """One figure for one metric (panels: the facet values). Returns the
    files written."""
    xscale, yscale = x_scale(series, xmode), y_scale(series, ymode)
    facets = series.facet_values()
    if len(series.facets) == 2:
        rows = list(dict.fromkeys(f.split(", ")[0] for f in facets))
        cols = list(dict.fromkeys(f.split(", ")[1] for f in facets))
        grid = [["%s, %s" % (r, c) for c in cols] for r in rows]
    else:
        grid = [facets]
    nr, nc = len(grid), len(grid[0])
    fig, axes = plt.subplots(nr, nc, squeeze=False, figsize=(5.2 * nc, 3.8 * nr + 0.4))
    for i, row in enumerate(grid):
        for j, facet in enumerate(row):
            ax = axes[i][j]
            title = ", ".join("%s=%s" % kv for kv in zip(series.facets, facet.split(", "))) if series.facets else None
            draw_panel(ax, series, facet, xscale, yscale, title)
            if i == nr - 1:
                ax.set_xlabel(x_label(series))
            if j == 0:
                ax.set_ylabel(y_label(series))
    fig.suptitle(figure_title(series.metric, series, where), fontsize="large")
    fig.tight_layout()
    paths = save(fig, base, formats)
    plt.close(fig)
    write_csv(base + ".csv", series)
    print("%s: x %s, y %s" % (base, xscale or "categories", yscale))
    return paths + [base + ".csv"]


def plot_stacked(plt, all_series, base, where, xmode, ymode, formats):
    """One figure, one panel per metric (no facets), sharing x. Each
    metric's numbers still go to its own CSV (base.METRIC.csv)."""
    n = len(all_series)
    scales = []
    fig, axes = plt.subplots(n, 1, squeeze=False, sharex=True, figsize=(6.4, 3.2 * n + 0.4))
    for i, s in enumerate(all_series):
        ax = axes[i][0]
        xscale, yscale = x_scale(s, xmode), y_scale(s, ymode)
        scales.append("%s: y %s" % (s.metric, yscale))
        draw_panel(ax, s, s.facet_values()[0], xscale, yscale, None, legend=(i == 0))
        ax.set_ylabel(y_label(s))
        if i == n - 1:
            ax.set_xlabel(x_label(s))
    fig.suptitle(figure_title("%d metrics" % n, all_series[0], where), fontsize="medium")
    fig.tight_layout()
    paths = save(fig, base, formats)
    plt.close(fig)
    print("%s: x %s, %s" % (base, x_scale(all_series[0], xmode) or "categories", ", ".join(scales)))
    for s in all_series:
        write_csv("%s.%s.csv" % (base, safe_name(s.metric)), s)
        paths.append("%s.%s.csv" % (base, safe_name(s.metric)))
    return paths
