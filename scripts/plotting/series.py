"""From a sweep's rows to the series of one plot: one line per value of the
group keys, one panel per value of the facet keys, never two points on one
(panel, line, x). Any other swept key that varies within a line is refused
(it would mix points silently): the user fixes it with --where or names it
as a group or facet.
"""
import difflib

from .results import BOOKKEEPING, InputError, Value, axis_kind, number, unit_of

NOT_SET = "(not set)"   # a key column left empty: a merged file whose sweep fixed that key


REPLICATION_KEY = "sim.seed"   # [sweep] replications sweeps it: its points are replications, averaged
T95 = [0, 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145,
       2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045,
       2.042]


class Point:
    __slots__ = ("facet", "group", "x", "y", "y_text", "point", "yerr", "n")

    def __init__(self, facet, group, x, y, y_text, point, yerr=None, n=1):
        self.facet, self.group, self.x, self.y, self.y_text, self.point = facet, group, x, y, y_text, point
        self.yerr, self.n = yerr, n   # replications: the 95 % confidence half-width of the mean, and how many


def mean_ci95(values):
    """Mean and the half-width of its 95 % confidence interval (Student's t)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, 0.0
    sd = (sum((v - mean) ** 2 for v in values) / (n - 1)) ** 0.5
    return mean, (T95[n - 1] if n - 1 < len(T95) else 1.96) * sd / n ** 0.5


class Series:
    """Everything one metric's plot needs, checked."""

    def __init__(self, metric, unit, x, x_kind, groups, facets, points, notes):
        self.metric, self.unit, self.x, self.x_kind = metric, unit, x, x_kind
        self.groups, self.facets, self.points, self.notes = groups, facets, points, notes

    def facet_values(self):
        return list(dict.fromkeys(p.facet for p in self.points))

    def group_values(self):
        return list(dict.fromkeys(p.group for p in self.points))


def _suggest(name, candidates):
    close = difflib.get_close_matches(name, candidates, n=3, cutoff=0.6)
    return " (did you mean %s?)" % ", ".join(close) if close else ""


def _label(row, keys):
    return ", ".join(row.get(k, "") or NOT_SET for k in keys)


def _same_value(a, b):
    if a == b:
        return True
    va, vb = Value(a), Value(b)
    return va.kind == vb.kind and va.kind != "text" and va.number == vb.number


def parse_where(items, results):
    """["key=value", ...] -> [(key, value)], each key a column and each value
    one the key takes (compared as numbers for sizes: 4KiB = 4096B)."""
    out = []
    for item in items:
        if "=" not in item:
            raise InputError("--where %s: expected KEY=VALUE" % item)
        k, v = item.split("=", 1)
        k, v = k.strip(), v.strip()
        check_key(k, results, "--where")
        values = results.values(k)
        match = [x for x in values if _same_value(x, v)]
        if not match:
            raise InputError("--where %s=%s: %s never takes that value (its values: %s)"
                             % (k, v, k, ", ".join(x or NOT_SET for x in values)))
        out.append((k, match[0]))
    return out


def check_key(key, results, option):
    usable = [c for c in results.header if c not in BOOKKEEPING]
    if key not in usable:
        raise InputError("%s %s: no such column in %s%s; its swept keys: %s"
                         % (option, key, results.path, _suggest(key, usable),
                            ", ".join(results.swept_keys) or "none"))


def select(results, where):
    """The rows that pass --where, and of those the ok ones; notes say what
    was left out."""
    rows = [r for r in results.rows if all(_same_value(r.get(k, ""), v) for k, v in where)]
    if not rows:
        raise InputError("no point of %s matches %s" % (results.path, ", ".join("%s=%s" % kv for kv in where)))
    ok = [r for r in rows if r.get("status") == "ok"]
    notes = []
    if len(ok) < len(rows):
        bad = [r for r in rows if r.get("status") != "ok"]
        notes.append("%d point(s) not ok left out (%s)" % (len(bad), ", ".join(
            "%s: %s" % (r.get("point", "?"), r.get("status", "?")) for r in bad[:5]) + (", ..." if len(bad) > 5 else "")))
    if not ok:
        raise InputError("no point with status ok in %s%s" % (
            results.path, " among those matching --where" if where else ""))
    return ok, notes


def build(results, metric, x, groups, facets, where, units, check_keys=None):
    """The checked series of `metric` against key `x`. `check_keys`: the
    keys that must be accounted for (default: every swept key)."""
    for k in [x] + groups + facets:
        check_key(k, results, "--x" if k == x else "--group" if k in groups else "--facet")
    named = [x] + groups + facets + [k for k, _ in where]
    dup = sorted({k for k in named if named.count(k) > 1})
    if dup:
        raise InputError("key %s is named more than once among --x, --group, --facet and --where" % ", ".join(dup))
    if metric not in results.header:
        raise InputError("metric %s: no such column in %s%s (`vrdmasim metrics` lists them)"
                         % (metric, results.path, _suggest(metric, results.metrics)))
    if metric in results.swept_keys or metric in BOOKKEEPING:
        raise InputError("%s is a swept key or a column of the sweep, not a metric" % metric)
    unit = unit_of(metric, units)
    if unit == "text":
        raise InputError("metric %s is text (unit `text` in docs/metrics.md), not a number to plot" % metric)
    rows, notes = select(results, where)

    # Keys not on an axis, not a line, not a panel, not fixed: each must be
    # one value per line, or the line would join points that differ in it.
    used = set(named)
    # Replications ([sweep] replications: sim.seed swept) are averaged: the
    # mean with its 95 % confidence interval, drawn as an error bar.
    replicated = REPLICATION_KEY in results.swept_keys and REPLICATION_KEY not in used
    if replicated:
        used.add(REPLICATION_KEY)
    for k in (results.swept_keys if check_keys is None else check_keys):
        if k in used:
            continue
        per_line = {}
        for r in rows:
            per_line.setdefault((_label(r, facets), _label(r, groups)), set()).add(r.get(k, ""))
        mixed = [vals for vals in per_line.values() if len(vals) > 1]
        if mixed:
            vals = [v for v in results.values(k, rows) if v in set().union(*mixed)]   # in sweep order
            raise InputError("swept key %s varies within a line (values %s): add --group %s or --facet %s, or fix "
                             "it with --where %s=%s" % (k, ", ".join(v or NOT_SET for v in vals), k, k, k,
                                                        vals[0] or "VALUE"))

    x_kind = axis_kind([Value(r.get(x, "")) for r in rows])
    points, seen, empty = [], {}, []
    for r in rows:
        text = r.get(metric, "")
        if text.strip() == "":
            empty.append(r.get("point", "?"))
            continue
        y = number(text)
        if y is None:
            raise InputError("metric %s of point %s is %r, not a number" % (metric, r.get("point", "?"), text))
        p = Point(_label(r, facets), _label(r, groups), Value(r.get(x, "")), y, text, r.get("point", ""))
        where_at = (p.facet, p.group, p.x.number if x_kind != "text" else p.x.text)
        if replicated and where_at in seen:
            seen[where_at].append(p)
            continue
        if replicated:
            seen[where_at] = [p]
            points.append(p)
            continue
        if where_at in seen:
            other = seen[where_at]
            differ = [c for c in results.header if c not in BOOKKEEPING and c not in results.metrics
                      and other.get(c, "") != r.get(c, "")]
            raise InputError("points %s and %s fall on the same %s = %s%s%s: %s" % (
                other.get("point"), r.get("point"), x, r.get(x, ""),
                " in line %s" % p.group if groups else "", " of panel %s" % p.facet if facets else "",
                "they differ in %s: group by it (--group) or fix it (--where)" % ", ".join(differ) if differ
                else "they do not differ in any key (the same point twice?)"))
        seen[where_at] = r
        points.append(p)
    if replicated:
        merged = []
        for p in points:
            reps = seen[(p.facet, p.group, p.x.number if x_kind != "text" else p.x.text)]
            mean, half = mean_ci95([q.y for q in reps])
            merged.append(Point(p.facet, p.group, p.x, mean, "%.9g" % mean, "+".join(q.point for q in reps),
                                half, len(reps)))
        points = merged
        counts = sorted({p.n for p in points})
        notes.append("replications averaged (%s per point): error bars are 95 %% confidence intervals of the mean"
                     % "/".join(str(c) for c in counts))
    if empty:
        notes.append("%d ok point(s) without a value of %s left out (%s)" % (
            len(empty), metric, ", ".join(empty[:5]) + (", ..." if len(empty) > 5 else "")))
    if not points:
        raise InputError("no point has a value of %s" % metric)
    return Series(metric, unit, x, x_kind, groups, facets, points, notes)
