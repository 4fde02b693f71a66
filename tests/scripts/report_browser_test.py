#!/usr/bin/env python3
"""ctest check of `vrdmasim run --report` in a real headless browser.

    report_browser_test.py VRDMASIM ROOT SCREENSHOT.png

Runs the tutorial's lesson 3 (configs/tutorial/03-faults-terminate.ini: one
4 KiB write that takes two SMMU faults) with --report, opens report.html in
Debian's Chromium (headless, through ChromeDriver and Selenium, network
off) and checks that every part of the page is there and visible: the
verdict, the summary table with the run's transfer count, the table of the
parameters the config file changes from their defaults, at least one SVG
plot of a non-zero size, the fault timeline (its rows, or the sentence that
no step was noted) with every "after #N" link leading to a row; that the
browser logged no error and loaded nothing but the page; and saves a
full-page screenshot to SCREENSHOT.png, which must not be blank. Then the
edge cases: a configuration that fails (exit 2) writes no report.

Needs /usr/bin/python3 with python3-selenium and python3-matplotlib, and
/usr/bin/chromium with /usr/bin/chromedriver (scripts/setup.sh installs them).
"""
import csv
import os
import shutil
import subprocess
import sys
import tempfile


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check(cond, msg):
    if not cond:
        fail(msg)


def browser(profile_dir):
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    for a in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
              "--disable-extensions", "--no-first-run", "--window-size=1280,900",
              "--user-data-dir=" + profile_dir,
              # No network: any fetch the page tried would fail and be logged.
              "--proxy-server=127.0.0.1:9", "--proxy-bypass-list=<-loopback>"):
        opts.add_argument(a)
    for exe in ("/usr/lib/chromium/chromium", "/usr/bin/chromium"):
        if os.path.exists(exe):
            opts.binary_location = exe
            break
    opts.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=opts)


def distinct_colours(png):
    """How many distinct RGB colours the PNG has, and its size."""
    import matplotlib.image as mpimg
    import numpy as np
    img = mpimg.imread(png)
    check(img.ndim == 3 and img.shape[2] in (3, 4), "screenshot is not an RGB(A) image: shape %s" % (img.shape,))
    rgb = (img[:, :, :3] * 255).round().astype(np.uint32)
    packed = (rgb[:, :, 0] << 16) | (rgb[:, :, 1] << 8) | rgb[:, :, 2]
    return len(np.unique(packed)), img.shape[1], img.shape[0]


def main():
    if len(sys.argv) != 4:
        fail("usage: report_browser_test.py VRDMASIM ROOT SCREENSHOT.png")
    exe, root, shot = sys.argv[1], sys.argv[2], sys.argv[3]
    config = os.path.join(root, "configs", "tutorial", "03-faults-terminate.ini")
    tmp = tempfile.mkdtemp(prefix="vrdmasim-report-")
    try:
        out = os.path.join(tmp, "out")
        p = subprocess.run([exe, "run", config, "--out", out, "--report", "--no-progress"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(p.returncode == 0, "run exited %d:\n%s%s" % (p.returncode, p.stdout, p.stderr))
        report = os.path.join(out, "report.html")
        check(os.path.isfile(report), "no report.html in " + out)
        check("report: " in p.stdout, "the run does not say where the report is:\n" + p.stdout)
        with open(os.path.join(out, "summary.csv"), newline="") as f:
            rows = list(csv.DictReader(f))
        transfers = rows[0]["transfers"]
        check(transfers == "1", "lesson 3 makes one transfer, summary.csv says " + transfers)
        html = open(report, encoding="utf-8").read()
        check("<script" not in html.lower(), "the page has a script")
        check("http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "") and "https://" not in html,
              "the page names a network address")

        from selenium.webdriver.common.by import By
        profile = os.path.join(tmp, "profile")
        driver = browser(profile)
        try:
            driver.get("file://" + report)
            check("vrdmasim run report" in driver.title, "title: " + driver.title)

            def shown(css):
                els = driver.find_elements(By.CSS_SELECTOR, css)
                check(els, "no element " + css)
                el = els[0]
                check(el.is_displayed(), css + " is not displayed")
                check(el.size["width"] > 0 and el.size["height"] > 0, css + " has no size: %s" % el.size)
                return el

            verdict = shown("#verdict")
            check("succeeded" in verdict.text, "verdict: " + verdict.text)

            # The summary: the transfer count of summary.csv, in the table and a card.
            shown("#summary")
            table = shown("#summary-table")
            cells = {}
            for tr in table.find_elements(By.CSS_SELECTOR, "tbody tr"):
                tds = tr.find_elements(By.TAG_NAME, "td")
                check(len(tds) == 4, "summary row with %d cells" % len(tds))
                cells[tds[0].text] = (tds[1].text, tds[3].text)
            check(cells.get("transfers", ("",))[0] == transfers, "summary transfers: %s" % (cells.get("transfers"),))
            # Every column of summary.csv: in the table with its value, or among the zeros.
            zeros = {z.text for z in driver.find_elements(By.CSS_SELECTOR, "#summary .zeros .zero")}
            for col, value in rows[0].items():
                if value == "0":
                    check(col in zeros and col not in cells, col + " = 0 is not among the zeros")
                else:
                    check(cells.get(col, ("",))[0] == value, "summary %s: %s, summary.csv says %s"
                          % (col, cells.get(col), value))
            check(len(cells) + len(zeros) == len(rows[0]), "the summary has figures summary.csv has not")
            check(cells["transfers"][1].startswith("RDMA transfers"), "no meaning for transfers: " + cells["transfers"][1])
            shown('.card[data-metric="transfers"]')

            # The configuration that differs: the keys the config file changes.
            shown("#config")
            cfg = shown("#config-table")
            changed = {}
            for tr in cfg.find_elements(By.CSS_SELECTOR, "tbody tr"):
                tds = tr.find_elements(By.TAG_NAME, "td")
                check(len(tds) == 5, "config row with %d cells" % len(tds))
                changed[tds[0].text] = (tds[1].text, tds[2].text, tds[3].text, tds[4].text)
            for key, value in (("workload.populate", "false"), ("workload.fill-source", "false"),
                               ("workload.message-size", "4KiB")):
                check(key in changed, "config table lacks %s: %s" % (key, sorted(changed)))
                check(changed[key][0] == value, "%s = %s, expected %s" % (key, changed[key][0], value))
                check(changed[key][1] and changed[key][1] != value, "%s default: %r" % (key, changed[key][1]))
                check("03-faults-terminate.ini" in changed[key][2], "%s set in %r" % (key, changed[key][2]))
                check(changed[key][3], key + " has no help text")
            # Set by the file, but to the default: not a difference.
            for key in ("dma.fault-tolerant", "smmu-driver.fault-mode", "rdma.strategy"):
                check(key not in changed, key + " is listed, but the file sets it to its default")

            # Plots: inline SVG of a real size, with bars and labelled axes.
            shown("#plots")
            plots = driver.find_elements(By.CSS_SELECTOR, "svg.plot")
            check(plots, "no SVG plot")
            for svg in plots:
                check(svg.is_displayed(), "an SVG plot is hidden")
                check(svg.size["width"] > 200 and svg.size["height"] > 100, "SVG plot size %s" % svg.size)
                check(svg.find_elements(By.CSS_SELECTOR, "rect.bar"), "an SVG plot without bars")
                labels = [t.text for t in svg.find_elements(By.CSS_SELECTOR, "text.label")]
                check(any("(" in t for t in labels) and "samples" in labels, "axis labels: %s" % labels)

            # The timeline: rows whose causes link to rows, or the plain sentence.
            tl = shown("#timeline")
            steps = driver.find_elements(By.CSS_SELECTOR, "#timeline table.story tbody tr")
            if steps:
                for a in driver.find_elements(By.CSS_SELECTOR, "#timeline a[href^='#step-']"):
                    target = a.get_attribute("href").split("#", 1)[1]
                    check(driver.find_elements(By.ID, target), "link to a missing row: " + target)
            else:
                check("No noted steps (this run noted none)" in tl.text, "timeline: " + tl.text)

            # Readable: no horizontal scrolling at 1280 px.
            wide = driver.execute_script("return document.documentElement.scrollWidth > window.innerWidth + 1")
            check(not wide, "the page is wider than the window")
            # Nothing loaded but the page itself, and no error logged.
            loaded = driver.execute_script("return performance.getEntriesByType('resource').map(e => e.name)")
            check(not loaded, "the page loaded %s" % loaded)
            errors = [e for e in driver.get_log("browser") if e.get("level") == "SEVERE"]
            check(not errors, "console errors: %s" % errors)

            # A full-page screenshot.
            metrics = driver.execute_cdp_cmd("Page.getLayoutMetrics", {})
            size = metrics.get("cssContentSize") or metrics["contentSize"]
            shot_data = driver.execute_cdp_cmd("Page.captureScreenshot", {
                "format": "png", "captureBeyondViewport": True,
                "clip": {"x": 0, "y": 0, "width": size["width"], "height": size["height"], "scale": 1}})
        finally:
            driver.quit()
        import base64
        os.makedirs(os.path.dirname(os.path.abspath(shot)), exist_ok=True)
        with open(shot, "wb") as f:
            f.write(base64.b64decode(shot_data["data"]))
        colours, w, h = distinct_colours(shot)
        check(w >= 1000 and h >= 1200, "screenshot is %dx%d" % (w, h))
        check(colours >= 50, "screenshot has %d colours: blank?" % colours)
        print("screenshot %s: %dx%d, %d colours" % (shot, w, h, colours))

        # A configuration that fails writes nothing, report or otherwise.
        bad = os.path.join(tmp, "bad")
        p = subprocess.run([exe, "run", config, "--dma.block-size=banana", "--out", bad, "--report"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        check(p.returncode == 2, "a bad value exited %d" % p.returncode)
        check(not os.path.exists(bad), "a failed configuration left " + bad)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("ok")


if __name__ == "__main__":
    main()
