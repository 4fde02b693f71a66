// The run report (report.hpp): one self-contained page. The page's parts
// are here; the SVG plots in report_plots.cpp, the fault timeline in
// report_timeline.cpp.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "src/core/output_dir.hpp"
#include "src/sim/summary.hpp"
#include "src/sim/timeseries.hpp"

#include "src/tools/report_detail.hpp"

namespace vrdmasim {

namespace report_detail {

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// Escaped text in which `code` spans become <code> (the metric and parameter
// descriptions are written for Markdown).
std::string with_code(const std::string& s) {
    std::string out;
    bool open = false;
    for (char c : s) {
        if (c == '`') {
            out += open ? "</code>" : "<code>";
            open = !open;
        } else {
            out += html_escape(std::string(1, c));
        }
    }
    if (open) out += "</code>";   // an unmatched backtick: close what it opened
    return out;
}

// A unit as a reader writes it.
std::string display_unit(const std::string& unit) {
    if (unit == "us") return "\xC2\xB5s";   // µs
    if (unit == "text") return "";
    return unit;
}

// A number for an axis or caption: up to `digits` significant digits.
std::string num(double v, int digits) {
    if (v == 0) return "0";
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

std::string micros(sc_core::sc_time t) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.3f", t.to_seconds() * 1e6);
    return buf;
}

}   // namespace report_detail

using namespace report_detail;

std::string html_escape(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (char c : s) {
        switch (c) {
        case '&': out += "&amp;"; break;
        case '<': out += "&lt;"; break;
        case '>': out += "&gt;"; break;
        case '"': out += "&quot;"; break;
        case '\'': out += "&#39;"; break;
        default: out += c;
        }
    }
    return out;
}

// ---------------------------------------------------------------- page

namespace {

const char* const kStyle = R"CSS(
:root { --fg:#1d2430; --muted:#5b6675; --line:#d9dee5; --bg:#ffffff; --soft:#f5f7fa; --accent:#2f6db5; }
* { box-sizing: border-box; }
body { margin:0; background:var(--soft); color:var(--fg); font:15px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif; }
main { max-width: 1180px; margin: 0 auto; padding: 20px 28px 40px; }
header { background:#1f3b5c; color:#fff; padding:18px 28px 14px; }
header .inner { max-width:1180px; margin:0 auto; }
header h1 { margin:0 0 4px; font-size:22px; font-weight:600; }
header .cmd { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size:13px; color:#d7e3f1; word-break: break-all; }
header .meta { font-size:12px; color:#a9bdd4; margin-top:4px; }
nav { margin-top:10px; font-size:14px; }
nav a { color:#fff; margin-right:16px; text-decoration:none; border-bottom:1px solid #7f9cc0; }
section { background:var(--bg); border:1px solid var(--line); border-radius:8px; padding:16px 20px; margin:18px 0; }
h2 { margin:0 0 10px; font-size:18px; }
h3 { margin:14px 0 4px; font-size:15px; }
p { margin:6px 0; }
.muted, .empty { color:var(--muted); }
.empty { font-style: italic; }
.verdict { border-radius:8px; padding:14px 20px; margin:18px 0 0; font-size:16px; }
.verdict strong { display:block; font-size:20px; margin-bottom:4px; }
.verdict.ok { background:#e5f4e8; border:1px solid #9ccaa6; color:#17491f; }
.verdict.warn { background:#fff4dc; border:2px solid #e0a526; color:#5c4000; }
.verdict.failed { background:#fde7e7; border:3px solid #c62828; color:#7a0f0f; }
.verdict pre { white-space: pre-wrap; margin:6px 0 0; font-size:13px; }
.cards { display:flex; flex-wrap:wrap; gap:10px; margin:4px 0 14px; }
.card { background:var(--soft); border:1px solid var(--line); border-radius:6px; padding:8px 14px; min-width:150px; }
.card .v { font-size:22px; font-weight:600; }
.card .k { font-size:12px; color:var(--muted); }
table { border-collapse: collapse; width:100%; font-size:13.5px; }
th { text-align:left; background:var(--soft); font-weight:600; border-bottom:2px solid var(--line); padding:5px 8px; }
td { border-bottom:1px solid var(--line); padding:4px 8px; vertical-align: top; }
td.num, td.val { font-variant-numeric: tabular-nums; white-space: nowrap; }
td.key { font-family: ui-monospace, "DejaVu Sans Mono", monospace; white-space: nowrap; }
td.help { color:var(--muted); font-size:12.5px; }
code { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size:0.92em; background:#eef1f5; padding:0 3px; border-radius:3px; }
details summary { cursor:pointer; color:var(--accent); margin:6px 0; }
.plots { display:flex; flex-wrap:wrap; gap:14px; }
figure { margin:0; border:1px solid var(--line); border-radius:6px; padding:8px 10px; background:#fff; width:calc(50% - 7px); min-width:320px; flex-grow:1; max-width:600px; }
figure h3 { margin:2px 0 0; font-size:14px; font-family: ui-monospace, "DejaVu Sans Mono", monospace; word-break: break-all; }
figcaption { font-size:12.5px; color:var(--muted); }
svg.plot { display:block; max-width:100%; height:auto; font-family: system-ui, "DejaVu Sans", sans-serif; }
svg .bar { fill:#4a7fb5; }
svg .series { stroke:#4a7fb5; stroke-width:1.6; }
svg .bar:hover { fill:#1f4f85; }
svg .grid { stroke:#e6e9ee; stroke-width:1; }
svg .axis { stroke:#56606c; stroke-width:1; }
svg .tick { font-size:11px; fill:#3c4550; }
svg .tick.minor { fill:#8a939e; font-size:10px; }
svg .label { font-size:12px; fill:#1d2430; }
svg .mark { stroke:#c0392b; stroke-width:1.2; stroke-dasharray:4 3; }
svg .marklabel { font-size:11px; fill:#a52a1e; paint-order:stroke; stroke:#fff; stroke-width:3px; stroke-linejoin:round; }
.chain { border-left:4px solid #c0392b; padding:2px 0 4px 12px; margin:14px 0; }
.chain h3 .at { font-weight:400; color:var(--muted); font-size:13px; }
.chain h3 .who { font-weight:400; font-size:13px; }
.chainsum { color:var(--muted); font-size:13px; }
table.story td.id { color:var(--muted); font-variant-numeric: tabular-nums; }
table.story tr.cause td { background:#f2f4f7; color:#4a5360; }
table.story tr.start td { background:#fdeeee; font-weight:600; }
table.story tr:target td { outline:2px solid var(--accent); }
table.story a { color:var(--accent); white-space:nowrap; }
table.story .name { color:var(--muted); font-size:11.5px; font-weight:400; margin-left:6px; }
.lane { display:inline-block; border-radius:10px; padding:0 8px; font-size:12px; white-space:nowrap; font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.l0 { background:#dceaf8; } .l1 { background:#fbe3cf; } .l2 { background:#dff3df; } .l3 { background:#f3dcf0; }
.l4 { background:#fff2bf; } .l5 { background:#d9f1f1; } .l6 { background:#e8e1f7; } .l7 { background:#eee6da; }
.more { font-size:13px; color:var(--muted); }
.zeros { font-size:13px; color:var(--muted); margin-top:10px; }
.zeros .zero { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size:12px; color:#3c4550; white-space:nowrap; }
ul.files { columns: 2; margin:4px 0; }
footer { max-width:1180px; margin:0 auto; padding:0 28px 30px; color:var(--muted); font-size:12px; }
)CSS";

const Metric* metric_of(const ReportInputs& in, const std::string& name) {
    return in.metrics ? in.metrics->find(name) : nullptr;
}

void write_verdict(std::ostream& os, const ReportInputs& in) {
    if (!in.findings.empty())
        os << "<div class=\"verdict warn\" id=\"findings\"><strong>What this run found</strong>Not a failure of the "
              "simulator, but not a plain success either: read this before the figures.<pre>"
           << html_escape(in.findings) << "</pre></div>\n";
    switch (in.verdict) {
    case ReportInputs::Verdict::Success:
        os << "<div class=\"verdict ok\" id=\"verdict\"><strong>The run succeeded</strong>Every transfer finished and "
              "every check passed (exit status 0).</div>\n";
        break;
    case ReportInputs::Verdict::TransferErrors:
        os << "<div class=\"verdict warn\" id=\"verdict\"><strong>Simulated to the end, but transfers FAILED</strong>"
              "The run's checks passed, but not every transfer succeeded (exit status 3): a result, not a success."
              "<pre>"
           << html_escape(in.verdict_text) << "</pre></div>\n";
        break;
    case ReportInputs::Verdict::Failed:
        os << "<div class=\"verdict failed\" id=\"verdict\"><strong>THIS RUN FAILED \xE2\x80\x94 its figures are not a "
              "result</strong>vrdmasim exited with status 1 (error.txt, or wrong data delivered). Why:"
              "<pre>"
           << html_escape(in.verdict_text)
           << "</pre>Below: the configuration, the statistics and the noted steps up to the failure, to find out why."
              "</div>\n";
        break;
    }
}

void write_summary(std::ostream& os, const ReportInputs& in) {
    os << "<section id=\"summary\"><h2>Summary</h2>\n";
    if (in.summary.empty()) {
        os << "<p class=\"empty\">No summary: the run failed, so it has no result (no summary.csv). The statistics "
              "it gathered until then are in stats.txt and in the plots below.</p></section>\n";
        return;
    }
    if (!in.region.empty())
        os << "<p class=\"region\"><strong>Region of interest.</strong> " << html_escape(in.region) << "</p>\n";
    // The figures a reader looks for first.
    os << "<div class=\"cards\">\n";
    for (const std::string& key : headline_metrics()) {
        if (key == "workload" || key == "strategy" || key == "nodes") continue;   // the configuration says them
        for (const auto& kv : in.summary) {
            if (kv.first != key) continue;
            const Metric* m = metric_of(in, kv.first);
            const std::string unit = m ? display_unit(m->unit) : "";
            // An empty figure (no sample: a latency with no transfer posted) says so.
            os << "<div class=\"card\" data-metric=\"" << html_escape(kv.first) << "\"><div class=\"v\">"
               << (kv.second.empty()
                       ? std::string("none")
                       : html_escape(kv.second) + (unit.empty() ? "" : " <small>" + html_escape(unit) + "</small>"))
               << "</div><div class=\"k\">" << html_escape(kv.first) << "</div></div>\n";
        }
    }
    os << "</div>\n<p class=\"muted\">Every figure of summary.csv, as the run printed it; its meaning and unit come "
          "from the metric's declaration (<code>vrdmasim metrics</code>).</p>\n";
    // The figures this run has; the many that are 0 here (features the run
    // did not use) in one compact list below, each still with its meaning.
    auto zero = zero_figure;
    auto row = [&](const std::pair<std::string, std::string>& kv) {
        const Metric* m = metric_of(in, kv.first);
        os << "<tr><td class=\"key\">" << html_escape(kv.first) << "</td><td class=\"val\">" << html_escape(kv.second)
           << "</td><td>" << (m ? html_escape(display_unit(m->unit)) : "") << "</td><td class=\"help\">"
           << (m ? with_code(m->description) : "") << "</td></tr>\n";
    };
    const char* head = "<thead><tr><th>metric</th><th>value</th><th>unit</th><th>meaning</th></tr></thead><tbody>\n";
    os << "<table id=\"summary-table\">" << head;
    std::size_t zeros = 0;
    for (const auto& kv : in.summary) {
        if (zero(kv.second)) ++zeros;
        else row(kv);
    }
    os << "</tbody></table>\n";
    if (zeros) {
        os << "<p class=\"zeros\"><b>0</b> in this run (" << zeros << " metric" << (zeros == 1 ? "" : "s") << "): ";
        bool first = true;
        for (const auto& kv : in.summary) {
            if (!zero(kv.second)) continue;
            const Metric* m = metric_of(in, kv.first);
            os << (first ? "" : ", ") << "<span class=\"zero\" title=\"" << html_escape(m ? m->description : "")
               << "\">" << html_escape(kv.first) << "</span>";
            first = false;
        }
        os << ".</p>\n<details><summary>their meanings</summary><table id=\"summary-zeros\">" << head;
        for (const auto& kv : in.summary)
            if (zero(kv.second)) row(kv);
        os << "</tbody></table></details>\n";
    }
    os << "</section>\n";
}

void write_config(std::ostream& os, const ReportInputs& in) {
    const Config& cfg = *in.config;
    const auto changed = cfg.non_defaults();
    os << "<section id=\"config\"><h2>Configuration that differs from the defaults</h2>\n";
    if (changed.empty()) {
        os << "<p class=\"empty\">Every parameter is at its default.</p>";
    } else {
        os << "<p>" << changed.size() << " of " << cfg.registry().all().size()
           << " parameters differ from their defaults; config.ini holds every value (re-run it with "
              "<code>vrdmasim run config.ini</code>), <code>vrdmasim params</code> describes them all.</p>\n"
              "<table id=\"config-table\"><thead><tr><th>parameter</th><th>value</th><th>default</th><th>set in</th>"
              "<th>meaning</th></tr></thead><tbody>\n";
        for (const ParamDecl* d : changed) {
            const std::string& dflt = d->default_text;
            os << "<tr><td class=\"key\">" << html_escape(d->name()) << "</td><td class=\"val\"><b>"
               << html_escape(cfg.text(d->name())) << "</b></td><td class=\"val\">"
               << (dflt.empty() ? "<span class=\"muted\">(empty)</span>" : html_escape(dflt))
               << "</td><td class=\"help\">" << html_escape(cfg.origin(d->name())) << "</td><td class=\"help\">"
               << with_code(d->help) << "</td></tr>\n";
        }
        os << "</tbody></table>";
    }
    os << "</section>\n";
}

void write_plots(std::ostream& os, const ReportInputs& in) {
    os << "<section id=\"plots\"><h2>Distributions</h2>\n";
    const auto keys = key_histograms(*in.stats);
    if (keys.empty()) {
        os << "<p class=\"empty\">No histogram has samples in this run.</p></section>\n";
        return;
    }
    std::size_t with_samples = 0;
    for (const Histogram* h : in.stats->histograms()) with_samples += h->count() > 0;
    os << "<p class=\"muted\">" << keys.size() << " distribution" << (keys.size() == 1 ? "" : "s") << " of the "
       << with_samples << " histogram" << (with_samples == 1 ? "" : "s")
       << " with samples: the transfer latency and the fault service time first, then other latencies, then "
          "the most sampled (the same statistic of several nodes merged). Bars count samples; the dashed lines mark the median (p50) and the 99th percentile (p99). "
          "Every histogram is in stats.txt.</p>\n<div class=\"plots\">\n";
    for (const auto& k : keys) {
        const Histogram& h = k.merged;
        const std::string unit = display_unit(h.info.unit());
        const std::string u = unit.empty() ? "" : " " + html_escape(unit);
        os << "<figure class=\"dist\"><h3>" << html_escape(k.title) << "</h3>\n"
           << render_histogram_svg(k) << "\n<figcaption>" << with_code(h.info.help()) << ". " << h.count() << " sample"
           << (h.count() == 1 ? "" : "s") << "; mean " << num(h.mean()) << u << ", min " << num(h.min()) << u
           << ", p50 " << num(h.quantile(0.5)) << u << ", p99 " << num(h.quantile(0.99)) << u << ", max "
           << num(h.max()) << u << ".</figcaption></figure>\n";
    }
    os << "</div></section>\n";
}

std::string today() {
    std::time_t t = std::time(nullptr);
    char buf[64];
    std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", std::localtime(&t));
    return buf;
}

}   // namespace

void write_report(std::ostream& os, const ReportInputs& in) {
    if (!in.config || !in.stats || !in.story)
        throw std::logic_error("write_report: config, stats and story are required");
    const bool failed = in.verdict == ReportInputs::Verdict::Failed;
    os << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n"
       << kReportMark << "\n"
       << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>"
       << (failed ? "FAILED \xE2\x80\x94 " : "") << "vrdmasim run report: " << html_escape(in.out_dir)
       << "</title>\n<style>" << kStyle << "</style></head>\n<body>\n";
    os << "<header><div class=\"inner\"><h1>vrdmasim run report</h1><div class=\"cmd\">" << html_escape(in.command)
       << "</div><div class=\"meta\">outputs in " << html_escape(in.out_dir) << " \xC2\xB7 simulated "
       << num(in.sim_seconds * 1e6, 6) << " \xC2\xB5s \xC2\xB7 vrdmasim " << html_escape(in.version)
       << " \xC2\xB7 written " << today()
       << "</div>\n<nav><a href=\"#summary\">Summary</a><a href=\"#config\">Configuration</a>"
       << "<a href=\"#plots\">Distributions</a>" << (in.timeseries ? "<a href=\"#timeseries\">Over time</a>" : "")
       << "<a href=\"#timeline\">Fault timeline</a><a href=\"#files\">Files</a></nav>"
       << "</div></header>\n<main>\n";
    write_verdict(os, in);
    write_summary(os, in);
    write_config(os, in);
    write_plots(os, in);
    write_timeseries(os, in);
    os << "<section id=\"timeline\"><h2>Fault timeline</h2>\n"
       << render_timeline(*in.story, in.story_dropped) << "</section>\n";
    os << "<section id=\"files\"><h2>Files</h2><p class=\"muted\">Beside this page in " << html_escape(in.out_dir)
       << ":</p><ul class=\"files\">\n";
    for (const auto& f : in.files) os << "<li><a href=\"" << html_escape(f) << "\">" << html_escape(f) << "</a></li>\n";
    os << "</ul><p class=\"muted\">trace.json opens in <code>ui.perfetto.dev</code>; events.log is the narrated timeline "
          "(<code>--trace</code>, <code>--log</code>).</p></section>\n</main>\n<footer>Written by <code>vrdmasim run "
          "--report</code>: one self-contained page, no script, nothing fetched.</footer>\n</body></html>\n";
}

}   // namespace vrdmasim
