#include "src/tools/report.hpp"

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

namespace vrdmasim {

namespace {

// ----------------------------------------------------------------- text

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
std::string num(double v, int digits = 4) {
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

// --------------------------------------------------------------- plots

struct Axis {
    bool log = false;
    double lo = 0, hi = 1;   // domain (values, not logs)
    std::vector<double> ticks;
    double frac(double v) const {   // 0..1 along the axis
        if (log) {
            const double a = std::log10(lo), b = std::log10(hi);
            return (std::log10(std::max(v, lo)) - a) / (b - a);
        }
        return (v - lo) / (hi - lo);
    }
};

// A linear axis over [lo, hi] extended to round ticks (1, 2, 5 times a power of ten).
Axis linear_axis(double lo, double hi, int target, bool whole) {
    Axis a;
    if (!(hi > lo)) {   // one value: a little room either side, never below 0 for values >= 0
        const double pad = lo == 0 ? 1 : std::fabs(lo) * 0.1;
        const bool nonneg = lo >= 0;
        lo -= pad;
        hi += pad;
        if (nonneg && lo < 0) lo = 0;
    }
    const double raw = (hi - lo) / target;
    const double mag = std::pow(10.0, std::floor(std::log10(raw)));
    const double r = raw / mag;
    double step = (r < 1.5 ? 1 : r < 3 ? 2 : r < 7 ? 5 : 10) * mag;
    if (whole) step = std::max(step, 1.0);
    a.lo = std::floor(lo / step + 1e-9) * step;
    a.hi = std::ceil(hi / step - 1e-9) * step;
    if (a.hi <= a.lo) a.hi = a.lo + step;
    for (double v = a.lo; v <= a.hi + step * 1e-6; v += step) a.ticks.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
    return a;
}

// A log axis from the decade below lo to the decade above hi (lo > 0).
Axis log_axis(double lo, double hi) {
    Axis a;
    a.log = true;
    const int d0 = static_cast<int>(std::floor(std::log10(lo) + 1e-9));
    const int d1 = std::max(d0 + 1, static_cast<int>(std::ceil(std::log10(hi) - 1e-9)));
    a.lo = std::pow(10.0, d0);
    a.hi = std::pow(10.0, d1);
    for (int d = d0; d <= d1; ++d) {
        const double p = std::pow(10.0, d);
        a.ticks.push_back(p);
        if (d1 - d0 <= 3 && d < d1) {
            a.ticks.push_back(2 * p);
            a.ticks.push_back(5 * p);
        }
    }
    return a;
}

}   // namespace

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

std::vector<KeyHistogram> key_histograms(const StatRegistry& stats, std::size_t max) {
    // The same statistic of every node (or job) is one distribution:
    // "node3.dma.transfer_latency" belongs to "dma.transfer_latency".
    auto family_of = [](const std::string& name) {
        const auto dot = name.find('.');
        if (dot == std::string::npos) return name;
        const std::string first = name.substr(0, dot);
        const auto digits = first.find_first_of("0123456789");
        const bool numbered = digits != std::string::npos && digits > 0 &&
                              first.find_first_not_of("0123456789", digits) == std::string::npos;
        return numbered ? name.substr(dot + 1) : name;
    };
    std::map<std::string, std::vector<const Histogram*>> families;
    std::vector<std::string> order;
    for (const Histogram* h : stats.histograms()) {
        if (h->count() == 0) continue;
        const std::string f = family_of(h->info.name.str());
        if (!families.count(f)) order.push_back(f);
        families[f].push_back(h);
    }
    std::vector<KeyHistogram> all;
    for (const auto& f : order) {
        const auto& members = families[f];
        KeyHistogram k;
        for (const Histogram* h : members) k.merged.merge(*h);
        k.merged.info = members.front()->info;
        k.family = f;
        const auto last = f.rfind('.');
        k.statistic = last == std::string::npos ? f : f.substr(last + 1);
        if (members.size() == 1) {
            k.title = members.front()->info.name.str();
        } else if (members.size() <= 4) {
            std::string owners;
            for (const Histogram* h : members)
                owners += (owners.empty() ? "" : " + ") + h->info.name.str().substr(0, h->info.name.str().find('.'));
            k.title = f + " (" + owners + ")";
        } else {
            k.title = f + " (" + std::to_string(members.size()) + " merged)";
        }
        k.merged.info.name = k.title;
        all.push_back(std::move(k));
    }
    // What a reader of this simulator looks at first: how long a transfer
    // took (the engine's view, then the application's) and how long a fault
    // took to serve; then any other latency; then the most sampled.
    static const std::vector<std::string> kFirst{"dma.transfer_latency", "workload.latency",
                                                 "smmu_driver.service_time"};
    auto rank = [&](const KeyHistogram& k) {
        const auto it = std::find(kFirst.begin(), kFirst.end(), k.family);
        if (it != kFirst.end()) return static_cast<int>(it - kFirst.begin());
        const std::string& s = k.statistic;
        return s.size() >= 7 && s.compare(s.size() - 7, 7, "latency") == 0 ? 10 : 11;
    };
    std::stable_sort(all.begin(), all.end(), [&](const KeyHistogram& a, const KeyHistogram& b) {
        if (rank(a) != rank(b)) return rank(a) < rank(b);
        return a.merged.count() > b.merged.count();
    });
    if (all.size() > max) all.resize(max);
    return all;
}

std::string render_histogram_svg(const KeyHistogram& k) {
    const Histogram& h = k.merged;
    const std::string unit = display_unit(h.info.unit());
    constexpr double W = 560, H = 270, L = 62, R = 18, T = 28, B = 48;
    const double pw = W - L - R, ph = H - T - B;
    const double mn = h.min(), mx = h.max();
    const bool use_log = mn > 0 && mx / mn >= 100;
    const Axis x = use_log ? log_axis(mn, mx) : linear_axis(mn, mx, 6, false);

    // Re-bin the fine buckets into at most 40 bars over [min, max].
    const int nbins = mx > mn ? 40 : 1;
    std::vector<std::uint64_t> bins(static_cast<std::size_t>(nbins), 0);
    std::vector<std::pair<double, double>> edges(static_cast<std::size_t>(nbins));
    for (int i = 0; i < nbins; ++i) {
        double a, b;
        if (nbins == 1) {
            a = mn;
            b = mx;
        } else if (use_log) {
            const double la = std::log10(mn), lb = std::log10(mx);
            a = std::pow(10.0, la + (lb - la) * i / nbins);
            b = std::pow(10.0, la + (lb - la) * (i + 1) / nbins);
        } else {
            a = mn + (mx - mn) * i / nbins;
            b = mn + (mx - mn) * (i + 1) / nbins;
        }
        edges[static_cast<std::size_t>(i)] = {a, b};
    }
    for (const auto& bk : h.buckets()) {
        const double mid = (bk.lo + bk.hi) / 2;
        int i = 0;
        if (nbins > 1) {
            const double f = use_log
                                 ? (std::log10(std::max(mid, mn)) - std::log10(mn)) / (std::log10(mx) - std::log10(mn))
                                 : (mid - mn) / (mx - mn);
            i = std::clamp(static_cast<int>(f * nbins), 0, nbins - 1);
        }
        bins[static_cast<std::size_t>(i)] += bk.count;
    }
    const std::uint64_t top = *std::max_element(bins.begin(), bins.end());
    const Axis y = linear_axis(0, static_cast<double>(top), 4, true);

    auto px = [&](double v) { return L + pw * x.frac(v); };
    auto py = [&](double c) { return T + ph * (1 - y.frac(c)); };
    std::ostringstream s;
    s.setf(std::ios::fixed);
    s.precision(1);
    s << "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << W << ' ' << H << "\" width=\""
      << W << "\" height=\"" << H << "\" role=\"img\" aria-label=\"" << html_escape(k.title) << "\"><title>"
      << html_escape(k.title) << "</title>\n";
    // Grid and y ticks.
    for (double t : y.ticks) {
        s << "<line class=\"grid\" x1=\"" << L << "\" x2=\"" << L + pw << "\" y1=\"" << py(t) << "\" y2=\"" << py(t)
          << "\"/><text class=\"tick\" x=\"" << L - 6 << "\" y=\"" << py(t) + 4 << "\" text-anchor=\"end\">"
          << num(t, 6) << "</text>\n";
    }
    // Bars.
    for (int i = 0; i < nbins; ++i) {
        const auto c = bins[static_cast<std::size_t>(i)];
        if (c == 0) continue;
        double x0 = px(edges[static_cast<std::size_t>(i)].first), x1 = px(edges[static_cast<std::size_t>(i)].second);
        const double least = nbins == 1 ? 16 : 3;   // a single value, or a narrow bin: still visible
        if (x1 - x0 < least) {
            const double mid = (x0 + x1) / 2;
            x0 = mid - least / 2;
            x1 = mid + least / 2;
        }
        s << "<rect class=\"bar\" x=\"" << x0 << "\" y=\"" << py(static_cast<double>(c)) << "\" width=\""
          << std::max(1.0, x1 - x0 - 0.6) << "\" height=\"" << py(0) - py(static_cast<double>(c)) << "\"><title>"
          << num(edges[static_cast<std::size_t>(i)].first) << "\xE2\x80\x93"
          << num(edges[static_cast<std::size_t>(i)].second) << ' ' << html_escape(unit) << ": " << c << " sample"
          << (c == 1 ? "" : "s") << "</title></rect>\n";
    }
    // Percentile markers.
    const double p50 = h.quantile(0.5), p99 = h.quantile(0.99);
    auto mark = [&](double v, const std::string& label, int row) {
        const double xv = px(v);
        const bool right = xv > L + pw - 120;
        s << "<line class=\"mark\" x1=\"" << xv << "\" x2=\"" << xv << "\" y1=\"" << T - 4 << "\" y2=\"" << T + ph
          << "\"/><text class=\"marklabel\" x=\"" << xv + (right ? -4 : 4) << "\" y=\"" << T + 8 + 13 * row
          << "\" text-anchor=\"" << (right ? "end" : "start") << "\">" << label << "</text>\n";
    };
    const std::string u = unit.empty() ? "" : " " + html_escape(unit);
    if (std::fabs(px(p99) - px(p50)) > 40) {
        mark(p50, "p50 " + num(p50) + u, 0);
        mark(p99, "p99 " + num(p99) + u, 1);
    } else if (p50 == p99) {
        mark(p50, "p50 = p99 = " + num(p50) + u, 0);
    } else {
        mark(p50, "p50 " + num(p50) + u, 0);
        mark(p99, "p99 " + num(p99) + u, 1);
    }
    // Axes, x ticks and labels.
    s << "<line class=\"axis\" x1=\"" << L << "\" x2=\"" << L + pw << "\" y1=\"" << T + ph << "\" y2=\"" << T + ph
      << "\"/><line class=\"axis\" x1=\"" << L << "\" x2=\"" << L << "\" y1=\"" << T << "\" y2=\"" << T + ph
      << "\"/>\n";
    for (double t : x.ticks) {
        const double xv = px(t);
        if (xv < L - 0.5 || xv > L + pw + 0.5) continue;
        const bool minor = x.log && std::fabs(std::log10(t) - std::round(std::log10(t))) > 1e-9;
        s << "<line class=\"axis\" x1=\"" << xv << "\" x2=\"" << xv << "\" y1=\"" << T + ph << "\" y2=\"" << T + ph + 4
          << "\"/><text class=\"tick" << (minor ? " minor" : "") << "\" x=\"" << xv << "\" y=\"" << T + ph + 16
          << "\" text-anchor=\"middle\">" << num(t, 6) << "</text>\n";
    }
    s << "<text class=\"label\" x=\"" << L + pw / 2 << "\" y=\"" << H - 8 << "\" text-anchor=\"middle\">"
      << html_escape(k.statistic) << (unit.empty() ? "" : " (" + html_escape(unit) + ")")
      << (x.log ? ", log scale" : "") << "</text>\n";
    s << "<text class=\"label\" transform=\"translate(14 " << T + ph / 2
      << ") rotate(-90)\" text-anchor=\"middle\">samples</text>\n";
    s << "</svg>";
    return s.str();
}

// A line over time (the time series): y against x, both linear.
std::string render_line_svg(const std::string& title, const std::vector<double>& xs, const std::vector<double>& ys,
                            const std::string& xlabel, const std::string& ylabel) {
    constexpr double W = 560, H = 240, L = 62, R = 18, T = 20, B = 44;
    const double pw = W - L - R, ph = H - T - B;
    const auto [xmin, xmax] = std::minmax_element(xs.begin(), xs.end());
    const auto [ymin, ymax] = std::minmax_element(ys.begin(), ys.end());
    const Axis x = linear_axis(std::min(0.0, *xmin), *xmax, 6, false);
    const Axis y = linear_axis(std::min(0.0, *ymin), *ymax, 4, false);
    auto px = [&](double v) { return L + pw * x.frac(v); };
    auto py = [&](double v) { return T + ph * (1 - y.frac(v)); };
    std::ostringstream s;
    s.setf(std::ios::fixed);
    s.precision(1);
    s << "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << W << ' ' << H << "\" width=\""
      << W << "\" height=\"" << H << "\" role=\"img\" aria-label=\"" << html_escape(title) << "\"><title>"
      << html_escape(title) << "</title>\n";
    for (double t : y.ticks)
        s << "<line class=\"grid\" x1=\"" << L << "\" x2=\"" << L + pw << "\" y1=\"" << py(t) << "\" y2=\"" << py(t)
          << "\"/><text class=\"tick\" x=\"" << L - 6 << "\" y=\"" << py(t) + 4 << "\" text-anchor=\"end\">"
          << num(t, 6) << "</text>\n";
    s << "<polyline class=\"series\" fill=\"none\" points=\"";
    for (std::size_t i = 0; i < xs.size() && i < ys.size(); ++i) s << (i ? " " : "") << px(xs[i]) << ',' << py(ys[i]);
    s << "\"/>\n";
    s << "<line class=\"axis\" x1=\"" << L << "\" x2=\"" << L + pw << "\" y1=\"" << T + ph << "\" y2=\"" << T + ph
      << "\"/><line class=\"axis\" x1=\"" << L << "\" x2=\"" << L << "\" y1=\"" << T << "\" y2=\"" << T + ph
      << "\"/>\n";
    for (double t : x.ticks)
        s << "<line class=\"axis\" x1=\"" << px(t) << "\" x2=\"" << px(t) << "\" y1=\"" << T + ph << "\" y2=\""
          << T + ph + 4 << "\"/><text class=\"tick\" x=\"" << px(t) << "\" y=\"" << T + ph + 16
          << "\" text-anchor=\"middle\">" << num(t, 6) << "</text>\n";
    s << "<text class=\"label\" x=\"" << L + pw / 2 << "\" y=\"" << H - 8 << "\" text-anchor=\"middle\">"
      << html_escape(xlabel) << "</text>\n<text class=\"label\" transform=\"translate(14 " << T + ph / 2
      << ") rotate(-90)\" text-anchor=\"middle\">" << html_escape(ylabel) << "</text>\n</svg>";
    return s.str();
}

// The time series (--sample-interval): the figures that move, as lines.
void write_timeseries(std::ostream& os, const ReportInputs& in) {
    if (!in.timeseries) return;
    os << "<section id=\"timeseries\"><h2>Over time</h2>\n";
    const TimeSeries& ts = *in.timeseries;
    const std::vector<double> t = ts.column("time_us");
    if (t.size() < 2) {
        os << "<p class=\"empty\">The run ended before a second sample (timeseries.csv has " << t.size() << " row"
           << (t.size() == 1 ? "" : "s") << "): a shorter --sample-interval shows more.</p></section>\n";
        return;
    }
    os << "<p class=\"muted\">From timeseries.csv, one sample every <code>--sample-interval</code> of simulated time "
          "and one at the end; each point is the figure over the interval that ends there, or at that time.</p>\n"
          "<div class=\"plots\">\n";
    for (const auto& c : TimeSeries::columns()) {
        const std::string name = c.name;
        if (name == "time_us" || name == "bytes_delivered" || name == "transfers" || name == "link_util_mean") continue;
        const std::vector<double> v = ts.column(name);
        const std::string unit = display_unit(c.unit);
        os << "<figure class=\"series\"><h3>" << html_escape(name) << "</h3>\n"
           << render_line_svg(name + " over time", t, v, "simulated time (\xC2\xB5s)",
                              name + (unit.empty() ? "" : " (" + unit + ")"))
           << "\n<figcaption>" << html_escape(c.meaning) << ".</figcaption></figure>\n";
    }
    os << "</div></section>\n";
}

// ------------------------------------------------------------ timeline

std::string render_timeline(const std::vector<Tracer::StoryStep>& steps, std::uint64_t dropped,
                            std::size_t max_chains) {
    std::ostringstream s;
    if (steps.empty()) {
        s << "<p class=\"empty\">No noted steps (this run noted none): the models noted no step of a story";
        if (dropped) s << ", and " << dropped << " were noted past the kept ones";
        s << ". Nothing to draw.</p>\n";
        return s.str();
    }
    std::map<std::uint64_t, const Tracer::StoryStep*> by_id;
    std::map<std::uint64_t, std::vector<const Tracer::StoryStep*>> children;
    for (const auto& st : steps) by_id[st.id] = &st;
    for (const auto& st : steps)
        if (st.after && by_id.count(st.after)) children[st.after].push_back(&st);
    auto parent = [&](const Tracer::StoryStep* st) -> const Tracer::StoryStep* {
        auto it = st->after ? by_id.find(st->after) : by_id.end();
        return it == by_id.end() ? nullptr : it->second;
    };
    auto says_fault = [](const Tracer::StoryStep* st) {
        return lower(st->name).find("fault") != std::string::npos || lower(st->text).find("fault") != std::string::npos;
    };
    auto earlier = [](const Tracer::StoryStep* a, const Tracer::StoryStep* b) {
        return a->at != b->at ? a->at < b->at : a->id < b->id;
    };
    std::vector<const Tracer::StoryStep*> ordered;
    for (const auto& st : steps) ordered.push_back(&st);
    std::stable_sort(ordered.begin(), ordered.end(), earlier);

    // Where the shown stories start: faults that no earlier fault caused, or
    // (with no fault at all) the first step of every story.
    std::vector<const Tracer::StoryStep*> starts;
    for (const auto* st : ordered) {
        if (!says_fault(st)) continue;
        bool caused_by_fault = false;
        std::set<std::uint64_t> seen;
        for (const auto* p = parent(st); p && seen.insert(p->id).second; p = parent(p))
            caused_by_fault = caused_by_fault || says_fault(p);
        if (!caused_by_fault) starts.push_back(st);
    }
    // The engine's faults (those the SMMU reports) first, then the CPU's (a
    // program populating its buffers, a guard): the engine's are what a
    // reader of this simulator looks for, and a run's first faults are
    // often its setup's.
    auto engine = [](const Tracer::StoryStep* st) {
        const std::string who = "." + st->who + ".";
        return who.find(".smmu.") != std::string::npos;
    };
    std::stable_partition(starts.begin(), starts.end(), engine);
    const bool faults = !starts.empty();
    if (!faults)
        for (const auto* st : ordered)
            if (!parent(st)) starts.push_back(st);

    s << "<p>" << steps.size() << " step" << (steps.size() == 1 ? "" : "s") << " noted";
    if (dropped) s << " (and " << dropped << " later step" << (dropped == 1 ? "" : "s") << " not kept)";
    if (faults)
        s << "; " << starts.size() << " " << (starts.size() == 1 ? "story starts" : "stories start") << " at a fault; "
          << (starts.size() == 1
                  ? std::string("it is shown")
                  : (starts.size() > max_chains ? "the first " + std::to_string(max_chains) : std::string("all")) +
                        " are shown, each")
          << " with the steps that caused it (shaded) and those that followed from it (the SMMU's faults first, "
             "then the CPU's).";
    else
        s << "; no step mentions a fault. The first " << std::min(max_chains, starts.size()) << " of " << starts.size()
          << " stories are shown.";
    s << " <em>after #N</em> links to the step that caused a row.</p>\n";

    // A colour per who, so that a lane reads at a glance.
    std::map<std::string, int> lane;
    for (const auto* st : ordered)
        if (!lane.count(st->who)) lane.emplace(st->who, static_cast<int>(lane.size() % 8));

    // Each shown story's rows first (the causes, up to the story's first
    // step, then everything that follows), so that a link is drawn only to
    // a row that is on the page.
    constexpr std::size_t kMaxRows = 40;
    struct Chain {
        const Tracer::StoryStep* start;
        std::vector<std::pair<const Tracer::StoryStep*, int>> rows;   // step, depth (-1: a cause)
        std::size_t total = 0, after = 0;
        sc_core::sc_time end;
    };
    std::vector<Chain> chains;
    std::set<std::uint64_t> on_page;
    for (std::size_t c = 0; c < starts.size() && c < max_chains; ++c) {
        Chain ch{starts[c], {}, 0, 0, starts[c]->at};
        std::set<std::uint64_t> seen{ch.start->id};
        for (const auto* p = parent(ch.start); p && seen.insert(p->id).second; p = parent(p))
            ch.rows.push_back({p, -1});
        std::vector<std::pair<const Tracer::StoryStep*, int>> todo{{ch.start, 0}};
        while (!todo.empty()) {
            auto [st, depth] = todo.back();
            todo.pop_back();
            ch.rows.push_back({st, depth});
            auto it = children.find(st->id);
            if (it == children.end()) continue;
            for (const auto* next : it->second)
                if (seen.insert(next->id).second) todo.push_back({next, depth + 1});
        }
        std::stable_sort(ch.rows.begin(), ch.rows.end(),
                         [&](const auto& x, const auto& y) { return earlier(x.first, y.first); });
        for (const auto& r : ch.rows) {
            ch.end = std::max(ch.end, r.first->at + r.first->dur);
            ch.after += r.second >= 0;
        }
        ch.total = ch.rows.size();
        if (ch.rows.size() > kMaxRows) ch.rows.resize(kMaxRows);
        for (const auto& r : ch.rows) on_page.insert(r.first->id);
        chains.push_back(std::move(ch));
    }

    std::set<std::uint64_t> anchored;
    for (std::size_t c = 0; c < chains.size(); ++c) {
        const Chain& ch = chains[c];
        s << "<div class=\"chain\" id=\"story-" << c + 1 << "\">\n<h3>" << (faults ? "Fault " : "Story ") << c + 1
          << " <span class=\"at\">at " << micros(ch.start->at) << " \xC2\xB5s</span> <span class=\"who\">"
          << html_escape(ch.start->who) << "</span></h3>\n<p class=\"chainsum\">" << html_escape(ch.start->text)
          << " \xE2\x80\x94 " << ch.after << " step" << (ch.after == 1 ? "" : "s") << " over "
          << micros(ch.end - ch.start->at) << " \xC2\xB5s</p>\n";
        s << "<table class=\"story\"><thead><tr><th>#</th><th>time (\xC2\xB5s)</th><th>took</th><th>who</th>"
             "<th>what happened</th><th>cause</th></tr></thead><tbody>\n";
        for (const auto& [st, depth] : ch.rows) {
            s << "<tr class=\"" << (depth < 0 ? "cause" : st == ch.start ? "start" : "step") << "\"";
            if (anchored.insert(st->id).second) s << " id=\"step-" << st->id << "\"";
            s << "><td class=\"id\">#" << st->id << "</td><td class=\"num\">" << micros(st->at)
              << "</td><td class=\"num\">" << (st->dur > sc_core::SC_ZERO_TIME ? "+" + micros(st->dur) : std::string())
              << "</td><td><span class=\"lane l" << lane[st->who] << "\">" << html_escape(st->who)
              << "</span></td><td class=\"text\" style=\"padding-left:" << 0.4 + 1.1 * std::max(depth, 0) << "em\">"
              << (depth > 0 ? "\xE2\x86\xB3 " : "") << html_escape(st->text);
            if (!st->name.empty() && lower(st->name) != lower(st->text))
                s << " <span class=\"name\">" << html_escape(st->name) << "</span>";
            s << "</td><td>";
            if (st->after) {
                if (on_page.count(st->after))
                    s << "<a href=\"#step-" << st->after << "\">after #" << st->after << "</a>";
                else
                    s << "<span title=\""
                      << (by_id.count(st->after) ? "not shown on this page" : "this step was not kept") << "\">after #"
                      << st->after << "</span>";
            }
            s << "</td></tr>\n";
        }
        s << "</tbody></table>\n";
        if (ch.total > ch.rows.size())
            s << "<p class=\"more\">\xE2\x80\xA6 and " << ch.total - ch.rows.size()
              << " more steps of this story (all of them: run with --log, events.log).</p>\n";
        s << "</div>\n";
    }
    return s.str();
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
