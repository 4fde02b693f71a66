#include "src/sim/progress.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ostream>
#include <stdexcept>

#include "src/core/params.hpp"
#include "src/sim/thread_stacks.hpp"

namespace vrdmasim {

namespace {

constexpr double kSliceSeconds = 0.1;   // host time one slice aims at
constexpr double kFirstDraw = 1.0;   // host seconds before the first line: short runs show nothing
constexpr double kRedraw = 0.25;   // at most four lines a second
constexpr std::size_t kMaxSamples = 4096;   // of the rate, for the ETA

// VRDMASIM_PROGRESS_PACE=K (a number, 1 or more; unset: 1) divides the
// three host times above by K: the same lines, K times as often, so that a
// test sees many updates in a run of a second rather than of many seconds.
double pace() {
    const char* v = std::getenv("VRDMASIM_PROGRESS_PACE");
    if (v == nullptr || *v == '\0') return 1;
    char* end = nullptr;
    const double k = std::strtod(v, &end);
    if (*end != '\0' || !(k >= 1) || k > 1e6)
        throw ConfigError(std::string("VRDMASIM_PROGRESS_PACE = ") + v +
                          ": expected a number from 1 to 1e6 (the progress line's intervals divided by it)");
    return k;
}

double since(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

std::string fixed(double v, int digits) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*g", digits, v);
    return buf;
}

// Simulated time in the unit that suits it: "812 ns", "3.25 us", "1.5 ms".
std::string sim_time(double s) {
    if (s < 1e-6) return fixed(s * 1e9, 4) + " ns";
    if (s < 1e-3) return fixed(s * 1e6, 4) + " us";
    if (s < 1) return fixed(s * 1e3, 4) + " ms";
    return fixed(s, 4) + " s";
}

// Host time: "4.2 s", "3m07s", "1h05m".
std::string host_time(double s) {
    char buf[64];
    if (s < 60) {
        std::snprintf(buf, sizeof buf, "%.1f s", s);
    } else if (s < 3600) {
        const long t = static_cast<long>(s + 0.5);
        std::snprintf(buf, sizeof buf, "%ldm%02lds", t / 60, t % 60);
    } else {
        const long t = static_cast<long>(s / 60 + 0.5);
        std::snprintf(buf, sizeof buf, "%ldh%02ldm", t / 60, t % 60);
    }
    return buf;
}

}   // namespace

RunProgress::RunProgress(std::ostream& os, std::function<Counts()> counts, sc_core::sc_time limit)
    : os_(os), counts_(std::move(counts)), limit_(limit), pace_(pace()) {}

bool RunProgress::wanted(bool no_progress, bool quiet) {
    if (no_progress || quiet || !isatty(STDERR_FILENO)) return false;
    pace();   // a bad VRDMASIM_PROGRESS_PACE is refused before the run
    return true;
}

std::string RunProgress::line(double sim_seconds, const Counts& c, double host_seconds, double limit_seconds,
                              const Eta& eta) {
    std::string s = "vrdmasim: sim " + sim_time(sim_seconds) + " (limit " + sim_time(limit_seconds) + ")";
    if (c.total > 0) {
        s += " | " + std::to_string(c.done) + " of " + std::to_string(c.total) + " transfers (" +
             std::to_string(c.done * 100 / c.total) + "%)";
    } else {
        s += " | " + std::to_string(c.done) + " transfers";
    }
    s += " | host " + host_time(host_seconds);
    // Known only when the workload says how many it will do (estimate()).
    if (c.total > 0 && c.done < c.total && eta.low >= 0) {
        const bool one = eta.high <= 1.25 * eta.low;   // the two estimates agree
        s += " | ETA " + (one ? host_time(eta.high) : host_time(eta.low) + " to " + host_time(eta.high));
        if (!eta.sure) s += "?";
    }
    return s;
}

RunProgress::Eta RunProgress::estimate(const std::vector<Sample>& samples, std::uint64_t total) {
    Eta e;
    if (samples.empty()) return e;
    const Sample now = samples.back();
    if (total == 0 || now.done == 0 || now.done >= total || now.host <= 0) return e;
    const double left = static_cast<double>(total - now.done);
    // The whole run's rate so far.
    const double all = now.host * left / static_cast<double>(now.done);
    // The recent rate: from the last sample at or before two thirds of the
    // host time so far, or further back to the last one with fewer
    // transfers done (a rate needs one finished in its window).
    std::size_t from = 0;
    for (std::size_t i = 0; i < samples.size(); ++i)
        if (samples[i].host <= now.host * 2 / 3) from = i;
    while (from > 0 && samples[from].done >= now.done) --from;
    const Sample then = samples[from];
    double recent = all;
    if (now.done > then.done && now.host > then.host)
        recent = (now.host - then.host) * left / static_cast<double>(now.done - then.done);
    e.low = std::min(all, recent);
    e.high = std::max(all, recent);
    e.sure = now.done >= kSureTransfers && now.done * 10 >= total;
    return e;
}

void RunProgress::draw(bool force) {
    const double host = since(start_);
    // Every slice is a sample of the rate, drawn or not (the counts are a
    // few counters' sum).
    const Counts c = counts_();
    if (samples_.size() >= 2 && samples_.back().done == c.done && samples_[samples_.size() - 2].done == c.done)
        samples_.back().host = host;   // the same count: keep its first time and now only
    else samples_.push_back({host, c.done});
    if (samples_.size() > kMaxSamples) {
        // Bounded memory on a run of millions of transfers: every other
        // sample goes (the first and the last stay).
        std::size_t k = 1;
        for (std::size_t i = 2; i + 1 < samples_.size(); i += 2) samples_[k++] = samples_[i];
        samples_[k++] = samples_.back();
        samples_.resize(k);
    }
    if (!force && (host < kFirstDraw / pace_ || (shown_ > 0 && since(last_draw_) < kRedraw / pace_))) return;
    last_draw_ = std::chrono::steady_clock::now();
    const std::string l =
        line(sc_core::sc_time_stamp().to_seconds(), c, host, limit_.to_seconds(), estimate(samples_, c.total));
    os_ << '\r' << l;
    if (l.size() < shown_) os_ << std::string(shown_ - l.size(), ' ');
    os_.flush();
    shown_ = std::max(shown_, l.size());
}

void RunProgress::clear() {
    if (shown_ == 0) return;
    os_ << '\r' << std::string(shown_, ' ') << '\r';
    os_.flush();
    shown_ = 0;
}

std::uint64_t RunProgress::simulate() {
    struct Clear {
        RunProgress& p;
        ~Clear() { p.clear(); }
    } guard{*this};
    start_ = last_draw_ = std::chrono::steady_clock::now();
    // Successive sc_start(dt) calls run the same events in the same order
    // as one sc_start to the limit: a slice ends after the last event at or
    // before its end, and with SC_EXIT_ON_STARVATION the time stays at the
    // last event when none is left, as it would.
    // A slice reaches at least the next event, so that none is empty (an
    // sc_start that neither runs a process nor moves time warns, W571); the
    // last one, to the limit, may be: its warning is an artefact of slicing
    // (one sc_start would have run events in the same call), so W571 is
    // silenced while slicing.
    const char* const kNoActivity = "no activity or clock movement for sc_start() invocation";
    const sc_core::sc_actions before = sc_core::sc_report_handler::set_actions(kNoActivity, sc_core::SC_DO_NOTHING);
    struct Restore {
        const char* id;
        sc_core::sc_actions actions;
        ~Restore() { sc_core::sc_report_handler::set_actions(id, actions); }
    } restore{kNoActivity, before};
    double dt = 1e-5;   // seconds of simulated time in the first slice
    std::uint64_t slices = 0;
    do {
        const sc_core::sc_time now = sc_core::sc_time_stamp();
        sc_core::sc_time step = sc_core::sc_time(dt, sc_core::SC_SEC);
        if (slices > 0) step = std::max(step, sc_core::sc_time_to_pending_activity());
        step = std::min(step, limit_ - now);
        const auto t0 = std::chrono::steady_clock::now();
        sc_core::sc_start(step, sc_core::SC_EXIT_ON_STARVATION);
        ++slices;
        const double took = since(t0);
        if (sc_core::sc_get_status() != sc_core::SC_PAUSED || !sc_core::sc_pending_activity()) break;
        // Aim at kSliceSeconds of host time per slice, changing by at most 8x.
        dt *= took > 0 ? std::clamp(kSliceSeconds / pace_ / took, 0.25, 8.0) : 8.0;
        dt = std::max(dt, 1e-9);
        // A stack overflow ends the run now, not at its end (its results
        // cannot be trusted); the check costs under 1 % of the host time.
        if (std::string overflow = thread_stacks::check_now_and_then(); !overflow.empty())
            throw std::runtime_error(overflow);
        draw(false);
    } while (sc_core::sc_time_stamp() < limit_);
    return slices;
}

}   // namespace vrdmasim
