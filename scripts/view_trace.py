#!/usr/bin/env python3
"""Open trace.json files in a real trace viewer, headless, and print what it sees.

    scripts/view_trace.py TRACE.json [TRACE.json.gz ...] [--json]
    scripts/view_trace.py TRACE.json --screenshot PNG [--window FROM_US,TO_US] [--size WxH]

The viewer is the one Chromium ships: the DevTools Performance panel, whose
trace engine (devtools://devtools/bundled/models/trace/trace.js) imports
Chrome trace-event JSON when a file is loaded into the panel. (Chromium's
older viewer, chrome://tracing, is gone from current releases: the page no
longer exists even with the internal debugging pages enabled.) The script
drives Debian's chromium through chromium-driver and python3-selenium
(scripts/setup.sh installs them), loads the panel's frontend from Chromium's
own resources, parses each trace with the engine's full set of handlers and
reports, per trace:
  - the engine's warnings (its Warnings handler), expected empty;
  - the process and thread names it took from the metadata events;
  - per thread, the slices (X events) it placed on the thread's track, and
    how many of each name;
  - the flows it bound into arrows (each a list of bound events).
A .gz trace (vrdmasim run --trace-gzip) is decompressed first.

--screenshot PNG loads the (first) trace into the Performance panel itself,
as its "Load profile" button does (the panel's own file loader, which opens
.gz files too), expands every process and thread, zooms to --window (in
microseconds of the trace; default: all of it) and saves the page as a PNG.

Exit status 0 when every trace imports without warnings, 1 otherwise, 2 when
no viewer can be started (no chromium, chromium-driver or selenium).
Run it with Debian's /usr/bin/python3, which has python3-selenium.
"""
import argparse
import gzip
import json
import os
import shutil
import sys
import tempfile

CHROMIUM = os.environ.get("VRDMASIM_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("VRDMASIM_CHROMEDRIVER", "/usr/bin/chromedriver")
FRONTEND = "devtools://devtools/bundled/trace_app.html"

# Runs in the DevTools frontend page: parse one trace with every handler the
# Performance panel uses and return what the panel would draw.
PARSE_JS = r"""
const done = arguments[arguments.length - 1];
(async () => {
  const T = await import(new URL('./models/trace/trace.js', location.href).href);
  const file = JSON.parse(arguments[0]);
  const events = Array.isArray(file) ? file : file.traceEvents;
  const model = T.TraceModel.Model.createWithAllHandlers();
  await model.parse(events, {metadata: {}, isFreshRecording: false});
  const parsed = model.parsedTrace(0);
  const data = parsed.data || parsed;
  const warnings = {};
  for (const [name, evs] of data.Warnings.perWarning) warnings[name] = evs.length;
  const processNames = {};
  for (const [pid, ev] of data.Meta.processNames) processNames[pid] = ev.args.name;
  const threadNames = {};
  for (const [pid, threads] of data.Meta.threadsInProcess)
    for (const [tid, ev] of threads) threadNames[pid + '/' + tid] = ev.args.name;
  const tracks = {};
  for (const [pid, p] of data.Renderer.processes)
    for (const [tid, t] of p.threads) {
      const phases = {}, names = {};
      for (const e of t.entries) {
        phases[e.ph] = (phases[e.ph] || 0) + 1;
        if (e.ph === 'X') names[e.name] = (names[e.name] || 0) + 1;
      }
      tracks[pid + '/' + tid] = {name: t.name, phases, names};
    }
  const flows = data.Flows.flows.map(f => f.map(e => ({ph: e.ph, name: e.name, pid: e.pid, tid: e.tid, ts: e.ts})));
  const b = data.Meta.traceBounds;
  return {warnings, processNames, threadNames, tracks, flows, generic: data.Meta.traceIsGeneric,
          bounds: [b.min, b.max]};
})().then(done, e => done({error: String(e) + '\n' + (e && e.stack)}));
"""


# Runs in the DevTools frontend page: load one trace file into the
# Performance panel as "Load profile" does (TimelinePanel.loadFromFile: the
# panel's loader, which decompresses a .gz file), expand every group, zoom
# to a window (microseconds, or null) and return the groups the flame chart
# shows, with how many entries each has.
PANEL_OPEN_JS = r"""
const done = arguments[arguments.length - 1];
(async () => {
  const UI = await import(new URL('./ui/legacy/legacy.js', location.href).href);
  const Common = await import(new URL('./core/common/common.js', location.href).href);
  const Timeline = await import(new URL('./panels/timeline/timeline.js', location.href).href);
  // A fresh profile: no first-use keyboard-shortcuts popover over the timeline.
  Common.Settings.Settings.instance().createSetting('timeline.user-had-shortcuts-dialog-opened-once', false).set(true);
  await UI.ViewManager.ViewManager.instance().showView('timeline');
  const panel = Timeline.TimelinePanel.TimelinePanel.instance();
  // The hidden <input type=file> behind the panel's "Load profile" button.
  return panel.fileSelectorElement;
})().then(done, e => done({error: String(e) + '\n' + (e && e.stack)}));
"""

# After a file was chosen: wait for the panel to draw it, expand every
# group, zoom to a window (microseconds, or null) and return the groups the
# flame chart shows, with how many entries each has.
PANEL_SHOW_JS = r"""
const [win] = arguments;
const done = arguments[arguments.length - 1];
(async () => {
  const imp = p => import(new URL(p, location.href).href);
  const UI = await imp('./ui/legacy/legacy.js');
  const Timeline = await imp('./panels/timeline/timeline.js');
  const TraceBounds = await imp('./services/trace_bounds/trace_bounds.js');
  const Trace = await imp('./models/trace/trace.js');
  const panel = Timeline.TimelinePanel.TimelinePanel.instance();
  const sleep = ms => new Promise(r => setTimeout(r, ms));
  let chart = null;
  for (let i = 0; i < 1200; i++) {
    chart = panel.flameChart && panel.flameChart.mainFlameChart;
    if (chart && chart.timelineData() && chart.timelineData().groups.length) break;
    await sleep(100);
  }
  if (!chart || !chart.timelineData() || !chart.timelineData().groups.length)
    return {error: 'the panel drew no timeline'};
  // The "connection closed" dialog of a frontend without a target: not part of the timeline.
  for (const d of UI.Dialog.Dialog.dialogs || []) d.hide();
  const groups = chart.timelineData().groups;
  for (let i = 0; i < groups.length; i++) if (!groups[i].expanded) chart.expandGroup(i);
  // The timeline only: no sidebar (insights, annotations), no details pane.
  const side = panel.splitWidget && panel.splitWidget();
  if (side && side.hideSidebar) side.hideSidebar();
  if (panel.flameChart.detailsSplitWidget) panel.flameChart.detailsSplitWidget.hideSidebar();
  await sleep(500);
  if (win) {
    const bounds = TraceBounds.TraceBounds.BoundsManager.instance();
    const us = v => Trace.Types.Timing.Micro(v);
    // (setTimelineVisibleWindow ignores a window under 1 ms: the flame
    // chart's own zoom, in milliseconds, goes closer.)
    bounds.setTimelineVisibleWindow(Trace.Helpers.Timing.traceWindowFromMicroSeconds(us(win[0]), us(win[1])),
                                    {shouldAnimate: false});
    chart.setWindowTimes(win[0] / 1000, win[1] / 1000, false);
  }
  if (chart.scrollGroupIntoView) chart.scrollGroupIntoView(0);   // from the top
  await sleep(1000);
  const data = chart.timelineData();
  const shown = data.groups.map((g, i) => {
    const start = g.startLevel, end = i + 1 < data.groups.length ? data.groups[i + 1].startLevel : Infinity;
    let entries = 0;
    for (let k = 0; k < data.entryLevels.length; k++)
      if (data.entryLevels[k] >= start && data.entryLevels[k] < end) entries++;
    return {name: g.name, level: g.style.nestingLevel || 0, entries};
  });
  return {groups: shown, window: TraceBounds.TraceBounds.BoundsManager.instance().state().micro.timelineTraceWindow};
})().then(done, e => done({error: String(e) + '\n' + (e && e.stack)}));
"""


class ViewerUnavailable(Exception):
    pass


class Viewer:
    """One headless Chromium with the DevTools frontend loaded; parse() many traces."""

    def __init__(self):
        try:
            from selenium import webdriver
            from selenium.webdriver.chrome.options import Options
            from selenium.webdriver.chrome.service import Service
        except ImportError as e:
            raise ViewerUnavailable("python3-selenium is not installed (%s)" % e)
        for exe in (CHROMIUM, CHROMEDRIVER):
            if not os.access(exe, os.X_OK):
                raise ViewerUnavailable("%s is not installed (chromium, chromium-driver)" % exe)
        self.profile = tempfile.mkdtemp(prefix="vrdmasim_chromium_")
        opts = Options()
        opts.binary_location = CHROMIUM
        for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                  "--no-first-run", "--user-data-dir=" + self.profile):
            opts.add_argument(a)
        try:
            self.driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=opts)
        except Exception as e:
            shutil.rmtree(self.profile, ignore_errors=True)
            raise ViewerUnavailable("cannot start headless Chromium: %s" % e)
        self.driver.set_script_timeout(120)
        self.driver.get(FRONTEND)

    def parse_text(self, text):
        r = self.driver.execute_async_script(PARSE_JS, text)
        if isinstance(r, dict) and "error" in r:
            raise RuntimeError("the DevTools trace engine failed: " + r["error"])
        return r

    def parse(self, path):
        with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
            return self.parse_text(f.read())

    def load_in_panel(self, path, window=None, size=(1400, 800)):
        """Load the file into the Performance panel as a user does: the file
        is put into the panel's "Load profile" file input, and the panel's
        own loader reads it (a .gz file is decompressed by the panel).
        Returns the groups (a process at level 0, then its threads at
        level 1) the flame chart shows, each with its number of entries."""
        self.driver.set_window_size(*size)
        chooser = self.driver.execute_async_script(PANEL_OPEN_JS)
        if isinstance(chooser, dict) and "error" in chooser:
            raise RuntimeError("the DevTools Performance panel failed: " + chooser["error"])
        chooser.send_keys(os.path.abspath(path))
        r = self.driver.execute_async_script(PANEL_SHOW_JS, window)
        if isinstance(r, dict) and "error" in r:
            raise RuntimeError("the DevTools Performance panel failed: " + r["error"])
        return r

    def screenshot(self, png):
        self.driver.save_screenshot(png)

    def close(self):
        try:
            self.driver.quit()
        finally:
            shutil.rmtree(self.profile, ignore_errors=True)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def summary(path, r):
    lines = ["%s: %d processes, %d threads, %d slices, %d flows, %s" % (
        path, len(r["processNames"]), len(r["threadNames"]),
        sum(sum(t["phases"].values()) for t in r["tracks"].values()), len(r["flows"]),
        "warnings %s" % r["warnings"] if r["warnings"] else "no warnings")]
    for key, t in sorted(r["tracks"].items(), key=lambda kv: tuple(int(x) for x in kv[0].split("/"))):
        pid = key.split("/")[0]
        lines.append("  %s %s: %s" % (r["processNames"].get(pid, pid), t["name"], t["phases"]))
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--json", action="store_true", help="print the viewer's findings as JSON")
    ap.add_argument("--screenshot", metavar="PNG", help="load the first trace into the Performance panel and save "
                    "a screenshot of it")
    ap.add_argument("--window", metavar="FROM_US,TO_US", help="with --screenshot: zoom to this time range "
                    "(microseconds, as the trace's ts)")
    ap.add_argument("--size", metavar="WxH", default="1400x800", help="with --screenshot: the window size in pixels")
    args = ap.parse_args(argv)
    window = None
    if args.window:
        try:
            window = [float(x) for x in args.window.split(",")]
            assert len(window) == 2 and window[0] < window[1]
        except (ValueError, AssertionError):
            ap.error("--window: give FROM_US,TO_US, FROM before TO (e.g. 0,20)")
    try:
        size = tuple(int(x) for x in args.size.split("x"))
        assert len(size) == 2
    except (ValueError, AssertionError):
        ap.error("--size: give WIDTHxHEIGHT in pixels (e.g. 1400x800)")
    try:
        viewer = Viewer()
    except ViewerUnavailable as e:
        print("no viewer: %s" % e, file=sys.stderr)
        return 2
    bad = False
    out = {}
    with viewer:
        if args.screenshot:
            r = viewer.load_in_panel(args.traces[0], window, size)
            viewer.screenshot(args.screenshot)
            print("%s: the Performance panel shows %d groups: %s" % (
                args.traces[0], len(r["groups"]), ", ".join("%s (%d)" % (g["name"], g["entries"]) for g in r["groups"])))
            print("screenshot: %s" % args.screenshot)
            return 0
        for path in args.traces:
            r = viewer.parse(path)
            bad = bad or bool(r["warnings"])
            out[path] = r
            if not args.json:
                print(summary(path, r))
    if args.json:
        json.dump(out, sys.stdout, indent=1)
        print()
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
