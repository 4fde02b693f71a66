#!/usr/bin/env python3
"""Open trace.json files in a real trace viewer, headless, and print what it sees.

    scripts/view_trace.py TRACE.json [TRACE.json ...] [--json]

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
  - per thread, the slices (X events) it placed on the thread's track;
  - the flows it bound into arrows (each a list of bound events).

Exit status 0 when every trace imports without warnings, 1 otherwise, 2 when
no viewer can be started (no chromium, chromium-driver or selenium).
Run it with Debian's /usr/bin/python3, which has python3-selenium.
"""
import argparse
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
      const phases = {};
      for (const e of t.entries) phases[e.ph] = (phases[e.ph] || 0) + 1;
      tracks[pid + '/' + tid] = {name: t.name, phases};
    }
  const flows = data.Flows.flows.map(f => f.map(e => ({ph: e.ph, name: e.name, pid: e.pid, tid: e.tid, ts: e.ts})));
  const b = data.Meta.traceBounds;
  return {warnings, processNames, threadNames, tracks, flows, generic: data.Meta.traceIsGeneric,
          bounds: [b.min, b.max]};
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
        with open(path) as f:
            return self.parse_text(f.read())

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
    args = ap.parse_args(argv)
    try:
        viewer = Viewer()
    except ViewerUnavailable as e:
        print("no viewer: %s" % e, file=sys.stderr)
        return 2
    bad = False
    out = {}
    with viewer:
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
