// The run report's plots (report.hpp): histograms of the key statistics and
// the time series, as inline SVG.
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

using namespace report_detail;

namespace {

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

namespace {

// The histogram's geometry: the plot area inside the SVG's margins.
constexpr double kW = 560, kH = 270, kL = 62, kR = 18, kT = 28, kB = 48;
constexpr double kPw = kW - kL - kR, kPh = kH - kT - kB;

// The fine buckets re-binned into at most 40 bars over [min, max], on the x axis's scale.
struct Bars {
    int n = 1;
    std::vector<std::uint64_t> counts;
    std::vector<std::pair<double, double>> edges;
};

Bars rebin(const Histogram& h, bool use_log) {
    const double mn = h.min(), mx = h.max();
    Bars b;
    b.n = mx > mn ? 40 : 1;
    b.counts.assign(static_cast<std::size_t>(b.n), 0);
    b.edges.resize(static_cast<std::size_t>(b.n));
    for (int i = 0; i < b.n; ++i) {
        double lo, hi;
        if (b.n == 1) {
            lo = mn;
            hi = mx;
        } else if (use_log) {
            const double la = std::log10(mn), lb = std::log10(mx);
            lo = std::pow(10.0, la + (lb - la) * i / b.n);
            hi = std::pow(10.0, la + (lb - la) * (i + 1) / b.n);
        } else {
            lo = mn + (mx - mn) * i / b.n;
            hi = mn + (mx - mn) * (i + 1) / b.n;
        }
        b.edges[static_cast<std::size_t>(i)] = {lo, hi};
    }
    for (const auto& bk : h.buckets()) {
        const double mid = (bk.lo + bk.hi) / 2;
        int i = 0;
        if (b.n > 1) {
            const double f = use_log
                                 ? (std::log10(std::max(mid, mn)) - std::log10(mn)) / (std::log10(mx) - std::log10(mn))
                                 : (mid - mn) / (mx - mn);
            i = std::clamp(static_cast<int>(f * b.n), 0, b.n - 1);
        }
        b.counts[static_cast<std::size_t>(i)] += bk.count;
    }
    return b;
}

// An SVG histogram being written: its axes and where a value or count lands.
struct HistogramSvg {
    std::ostringstream& s;
    const Axis& x;
    const Axis& y;
    double px(double v) const { return kL + kPw * x.frac(v); }
    double py(double c) const { return kT + kPh * (1 - y.frac(c)); }

    void grid() {
        for (double t : y.ticks)
            s << "<line class=\"grid\" x1=\"" << kL << "\" x2=\"" << kL + kPw << "\" y1=\"" << py(t) << "\" y2=\""
              << py(t) << "\"/><text class=\"tick\" x=\"" << kL - 6 << "\" y=\"" << py(t) + 4
              << "\" text-anchor=\"end\">" << num(t, 6) << "</text>\n";
    }
    void bars(const Bars& b, const std::string& unit) {
        for (int i = 0; i < b.n; ++i) {
            const auto c = b.counts[static_cast<std::size_t>(i)];
            if (c == 0) continue;
            const auto& e = b.edges[static_cast<std::size_t>(i)];
            double x0 = px(e.first), x1 = px(e.second);
            const double least = b.n == 1 ? 16 : 3;   // a single value, or a narrow bin: still visible
            if (x1 - x0 < least) {
                const double mid = (x0 + x1) / 2;
                x0 = mid - least / 2;
                x1 = mid + least / 2;
            }
            s << "<rect class=\"bar\" x=\"" << x0 << "\" y=\"" << py(static_cast<double>(c)) << "\" width=\""
              << std::max(1.0, x1 - x0 - 0.6) << "\" height=\"" << py(0) - py(static_cast<double>(c)) << "\"><title>"
              << num(e.first) << "\xE2\x80\x93" << num(e.second) << ' ' << html_escape(unit) << ": " << c << " sample"
              << (c == 1 ? "" : "s") << "</title></rect>\n";
        }
    }
    void mark(double v, const std::string& label, int row) {
        const double xv = px(v);
        const bool right = xv > kL + kPw - 120;
        s << "<line class=\"mark\" x1=\"" << xv << "\" x2=\"" << xv << "\" y1=\"" << kT - 4 << "\" y2=\"" << kT + kPh
          << "\"/><text class=\"marklabel\" x=\"" << xv + (right ? -4 : 4) << "\" y=\"" << kT + 8 + 13 * row
          << "\" text-anchor=\"" << (right ? "end" : "start") << "\">" << label << "</text>\n";
    }
    // Percentile markers: p50 and p99, or one when they are the same.
    void percentiles(const Histogram& h, const std::string& unit) {
        const double p50 = h.quantile(0.5), p99 = h.quantile(0.99);
        const std::string u = unit.empty() ? "" : " " + html_escape(unit);
        if (std::fabs(px(p99) - px(p50)) <= 40 && p50 == p99) {
            mark(p50, "p50 = p99 = " + num(p50) + u, 0);
            return;
        }
        mark(p50, "p50 " + num(p50) + u, 0);
        mark(p99, "p99 " + num(p99) + u, 1);
    }
    // Axes, x ticks and labels.
    void axes(const KeyHistogram& k, const std::string& unit) {
        s << "<line class=\"axis\" x1=\"" << kL << "\" x2=\"" << kL + kPw << "\" y1=\"" << kT + kPh << "\" y2=\""
          << kT + kPh << "\"/><line class=\"axis\" x1=\"" << kL << "\" x2=\"" << kL << "\" y1=\"" << kT << "\" y2=\""
          << kT + kPh << "\"/>\n";
        for (double t : x.ticks) {
            const double xv = px(t);
            if (xv < kL - 0.5 || xv > kL + kPw + 0.5) continue;
            const bool minor = x.log && std::fabs(std::log10(t) - std::round(std::log10(t))) > 1e-9;
            s << "<line class=\"axis\" x1=\"" << xv << "\" x2=\"" << xv << "\" y1=\"" << kT + kPh << "\" y2=\""
              << kT + kPh + 4 << "\"/><text class=\"tick" << (minor ? " minor" : "") << "\" x=\"" << xv << "\" y=\""
              << kT + kPh + 16 << "\" text-anchor=\"middle\">" << num(t, 6) << "</text>\n";
        }
        s << "<text class=\"label\" x=\"" << kL + kPw / 2 << "\" y=\"" << kH - 8 << "\" text-anchor=\"middle\">"
          << html_escape(k.statistic) << (unit.empty() ? "" : " (" + html_escape(unit) + ")")
          << (x.log ? ", log scale" : "") << "</text>\n";
        s << "<text class=\"label\" transform=\"translate(14 " << kT + kPh / 2
          << ") rotate(-90)\" text-anchor=\"middle\">samples</text>\n";
    }
};

}   // namespace

std::string render_histogram_svg(const KeyHistogram& k) {
    const Histogram& h = k.merged;
    const std::string unit = display_unit(h.info.unit());
    const double mn = h.min(), mx = h.max();
    const bool use_log = mn > 0 && mx / mn >= 100;
    const Axis x = use_log ? log_axis(mn, mx) : linear_axis(mn, mx, 6, false);
    const Bars b = rebin(h, use_log);
    const std::uint64_t top = *std::max_element(b.counts.begin(), b.counts.end());
    const Axis y = linear_axis(0, static_cast<double>(top), 4, true);
    std::ostringstream s;
    s.setf(std::ios::fixed);
    s.precision(1);
    s << "<svg class=\"plot\" xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 " << kW << ' ' << kH << "\" width=\""
      << kW << "\" height=\"" << kH << "\" role=\"img\" aria-label=\"" << html_escape(k.title) << "\"><title>"
      << html_escape(k.title) << "</title>\n";
    HistogramSvg svg{s, x, y};
    svg.grid();
    svg.bars(b, unit);
    svg.percentiles(h, unit);
    svg.axes(k, unit);
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
namespace report_detail {

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

}   // namespace report_detail

}   // namespace vrdmasim
