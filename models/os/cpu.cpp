#include "models/os/cpu.hpp"

#include "src/core/sim_params.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace vrdmasim {

using sc_core::sc_time;

CpuParams::CpuParams()
    : set("cpu", "application cores of one MPSoC, reserved by the kernel's software paths"),
      cores(set.integer("cores", "4", "4 x Cortex-A53 (ZU9EG; arXiv 2307.09371)").range("1", "64")),
      clock(set.frequency("clock", "1.5GHz", "Cortex-A53 clock, 1.5 GHz (ZU9EG; arXiv 2307.09371)")
                .range("1MHz", "10GHz")) {}

void CpuCores::declare_params(ParamRegistry& reg) {
    reg.add(params_of<CpuParams>().set);
    NoiseParams::declare_params(reg);
}

void CpuCores::declare_metrics(MetricRegistry& reg) {
    reg.sum_scalars("cpu_busy_us", "us",
                    "CPU time on the application cores, every software activity of every node (sum of "
                    "`*.cpu.cores_busy_time`, itself the sum of the `*.cpu.<activity>.busy_time` scalars); "
                    "DRAM, link and NI busy times are not CPU and are not counted.",
                    "cpu.cores_busy_time");
    reg.sum_counters("cpu_order_inversions",
                     "Pieces of CPU work that waited for a core behind work that became ready after them (sum of "
                     "`*.cpu.order_inversions`): the cores serve work in the order it is booked, and a program "
                     "books ahead of the kernel, so where cores were contended such a run's CPU waits are not "
                     "in simulated time's order alone (models/os/README.md, *CpuCores*; 0 in every shipped "
                     "configuration).",
                     {"cpu.order_inversions"});
}

std::string CpuCores::order_warning(const StatRegistry& stats) {
    const std::uint64_t n = stats.sum_counters("cpu.order_inversions");
    if (n == 0) return {};
    std::ostringstream os;
    os << "vrdmasim: warning: " << n << " piece(s) of CPU work waited for a core behind work that became ready "
       << "after them (" << format_metric(stats.sum_scalars("cpu.order_wait"), 4)
       << " us in all; summary column cpu_order_inversions): a node's cores serve work first come, first served by "
          "booking, and a program books its work ahead of the kernel, so where they were contended this run's CPU "
          "waits follow the order the work was booked in, not simulated time alone: its figures that depend on "
          "contended cores are approximate (models/os/README.md, CpuCores)\n";
    return os.str();
}

CpuCores::CpuCores(const SimContext& ctx, const std::string& prefix, const std::string& group)
    : ctx_(ctx),
      prefix_(prefix),
      hz_(ctx.config[params_of<CpuParams>().clock]),
      jitter_(ctx.config[params_of<NoiseParams>().cpu_jitter]),
      // sim.seed read only when there is noise to draw (model tests declare no sim section).
      noise_(jitter_ > 0 ? static_cast<std::uint64_t>(ctx.config[params_of<SimParams>().seed]) : 0,
             "cpu-jitter:" + prefix, 0),
      total_busy_us_(ctx.stats.scalar(prefix + ".cores_busy_time", "us",
                                      "CPU time spent on all cores, every activity (sum of <activity>.busy_time)",
                                      Scalar::Kind::Sum)),
      free_at_(static_cast<std::size_t>(ctx.config[params_of<CpuParams>().cores]), sc_core::SC_ZERO_TIME),
      ahead_(free_at_.size()),
      done_until_(free_at_.size(), sc_core::SC_ZERO_TIME) {
    ctx.stats.declare_counter("cpu.order_inversions");   // registered at the first (run_on_core)
    tracks_.reserve(free_at_.size());
    for (std::size_t k = 0; k < free_at_.size(); ++k)
        tracks_.push_back(ctx.tracer.track(group, "cpu" + std::to_string(k)));
}

CpuCores::Activity& CpuCores::activity(std::string_view name) {
    if (last_ && *last_name_ == name) return *last_;
    auto it = activities_.find(name);
    if (it == activities_.end()) {
        const std::string n(name);
        const std::string base = prefix_ + "." + n;
        Activity a{&ctx_.stats.scalar(base + ".busy_time", "us", "CPU time spent in " + n, Scalar::Kind::Sum),
                   &ctx_.stats.histogram(base + ".wait_time", "ns",
                                         "time " + n + " work waited for a free core (start - ready)"),
                   &ctx_.stats.counter(base + ".runs", "", "pieces of " + n + " work run"), sc_core::SC_ZERO_TIME};
        it = activities_.emplace(n, a).first;
    }
    last_name_ = &it->first;
    last_ = &it->second;
    return it->second;
}

CpuCores::Slot CpuCores::run(std::string_view activity_name, sc_time ready, sc_time duration,
                             const std::string& label) {
    return run_on_core(activity_name, ready, duration, label, nullptr);
}

CpuCores::Slot CpuCores::run(std::string_view activity_name, sc_time ready, sc_time duration, const std::string& label,
                             const Story& story) {
    return run_on_core(activity_name, ready, duration, label, &story);
}

CpuCores::Slot CpuCores::ran(std::string_view activity_name, sc_time start, sc_time end, const std::string& label) {
    // The core run() would pick, and from when it was free.
    sc_time from = max_time(start, free_at_[0]);
    for (unsigned k = 1; k < free_at_.size(); ++k) from = std::min(from, max_time(start, free_at_[k]));
    return run_on_core(activity_name, start, end > from ? end - from : sc_core::SC_ZERO_TIME, label, nullptr,
                       /*once_over=*/true);
}

CpuCores::Slot CpuCores::run_on_core(std::string_view activity_name, sc_time ready, sc_time duration,
                                     const std::string& label, const Story* story, bool once_over) {
    if (activity_name.empty()) throw std::invalid_argument("CpuCores::run: empty activity name");
    // OS noise (noise.cpu-jitter): the core is not all this work's.
    if (jitter_ > 0) duration = duration * (1.0 + 2.0 * jitter_ * noise_.uniform());
    const sc_time now = sc_core::sc_time_stamp();
    unsigned core = 0;
    sc_time start;
    std::size_t at = 0;   // its place among the core's booked pieces
    pick_core(ready, duration, once_over, core, start, at);
    const sc_time end = start + duration;
    free_at_[core] = max_time(free_at_[core], end);
    std::vector<Booked>& ahead = ahead_[core];
    if (!once_over && start > ready) count_inversion(ahead, at, ready, start);

    Activity& a = activity(activity_name);
    // Its place in the core's pieces, in time order; those over by now are
    // let go (what is before them stays busy: done_until_).
    ahead.insert(ahead.begin() + static_cast<std::ptrdiff_t>(at), Booked{start, end, ready, &a});
    std::size_t over = 0;
    while (over < ahead.size() && ahead[over].end <= now)
        done_until_[core] = max_time(done_until_[core], ahead[over++].end);
    ahead.erase(ahead.begin(), ahead.begin() + static_cast<std::ptrdiff_t>(over));
    // The busy times are kept in picoseconds (exact) and their statistics
    // set from them: added and taken back (end_run) as microseconds, they
    // drifted by rounding, below zero for work taken back whole.
    a.busy += duration;
    total_busy_ += duration;
    a.busy_us->set(to_us(a.busy));
    total_busy_us_.set(to_us(total_busy_));
    a.wait_ns->add(to_ns(start - ready));
    a.runs->inc();

    const Tracer::Cause step = trace_piece(activity_name, label, story, core, ready, start, duration);
    return Slot{core, start, end, step};
}

// The core on which work ready at `ready` can start first; ties go to the
// lowest number (so with idle cores, work lands on the lowest-numbered idle
// core). On each, the first idle interval at or after `ready` that holds
// it: work booked earlier by call but ready later (a program books at its
// own time, ahead of the kernel) does not keep it from a gap before that
// work. Work booked once over (ran()) is placed after all the core's work,
// from when the core was free. `at`: its place among the core's pieces.
void CpuCores::pick_core(sc_time ready, sc_time duration, bool once_over, unsigned& core, sc_time& start,
                         std::size_t& at) const {
    start = sc_core::sc_max_time();
    for (unsigned k = 0; k < free_at_.size(); ++k) {
        const std::vector<Booked>& ahead = ahead_[k];
        sc_time s = max_time(ready, once_over ? free_at_[k] : done_until_[k]);
        std::size_t i = 0;
        if (once_over) {
            i = ahead.size();
        } else {
            for (; i < ahead.size(); ++i) {
                const Booked& b = ahead[i];
                if (b.end <= s) continue;
                if (b.start >= s + duration) break;   // it fits before b
                s = b.end;
            }
        }
        if (s < start) {
            start = s;
            core = k;
            at = i;
        }
    }
}

// Waiting behind work booked earlier by call but ready later (among the
// core's first `at` pieces): served out of simulated-time order, counted.
// (Not a piece booked once over, ran(): it held a core from whenever one
// was free, waiting for none.)
void CpuCores::count_inversion(const std::vector<Booked>& ahead, std::size_t at, sc_time ready, sc_time start) {
    bool inverted = false;
    for (std::size_t i = 0; i < at && !inverted; ++i) inverted = ahead[i].end > ready && ahead[i].ready > ready;
    if (!inverted) return;
    if (!inversions_) {
        inversions_ = &ctx_.stats.counter(prefix_ + ".order_inversions", "",
                                          "pieces of work that waited for a core behind work booked before "
                                          "them by call but ready after them (first come, first served by call)");
        inversion_wait_ =
            &ctx_.stats.scalar(prefix_ + ".order_wait", "us", "the wait of those pieces for a core", Scalar::Kind::Sum);
    }
    inversions_->inc();
    inversion_wait_->add(to_us(start - ready));
}

// The piece on its core's track: a step of `story` (the narrated log's
// cause) or a span.
Tracer::Cause CpuCores::trace_piece(std::string_view activity_name, const std::string& label, const Story* story,
                                    unsigned core, sc_time ready, sc_time start, sc_time duration) {
    Tracer::Cause step;
    if (story && ctx_.tracer.noting()) {
        const std::string name = label.empty() ? std::string(activity_name) : label;
        step = ctx_.tracer.note(tracks_[core], name.c_str(), start, duration, story->who, story->text, story->because,
                                {{"activity", Tracer::json_string(std::string(activity_name))},
                                 {"wait_ns", Tracer::json_number(to_ns(start - ready))}});
    } else if (ctx_.tracer.enabled()) {
        const std::string name = label.empty() ? std::string(activity_name) : label;
        ctx_.tracer.span(tracks_[core], name.c_str(), start, start + duration,
                         {{"activity", Tracer::json_string(std::string(activity_name))},
                          {"wait_ns", Tracer::json_number(to_ns(start - ready))}});
    }
    return step;
}

sc_time CpuCores::cycles(double n) const {
    if (!(n >= 0)) throw std::invalid_argument("CpuCores::cycles: negative or NaN cycle count");
    return sc_time::from_value(static_cast<sc_dt::uint64>(std::llround(n * 1e12 / hz_)));
}

sc_time CpuCores::busy(std::string_view activity_name) const {
    auto it = activities_.find(activity_name);
    return it == activities_.end() ? sc_core::SC_ZERO_TIME : it->second.busy;
}

void CpuCores::end_run(sc_time end) {
    for (std::vector<Booked>& ahead : ahead_) {
        for (const Booked& b : ahead) {
            if (b.end <= end) continue;
            const sc_time over = b.end - max_time(b.start, end);
            // Taken back from what was booked: never more than it.
            if (over > b.activity->busy || over > total_busy_)
                throw std::logic_error("CpuCores::end_run: " + prefix_ +
                                       " would take back more busy time than was "
                                       "booked");
            b.activity->busy -= over;
            total_busy_ -= over;
            b.activity->busy_us->set(to_us(b.activity->busy));
            total_busy_us_.set(to_us(total_busy_));
        }
        ahead.clear();
    }
}

}   // namespace vrdmasim
