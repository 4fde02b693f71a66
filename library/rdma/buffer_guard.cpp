#include "library/rdma/buffer_guard.hpp"

#include "src/core/format.hpp"

#include <algorithm>
#include <stdexcept>

namespace vrdmasim {

using sc_core::sc_time;

namespace {
constexpr std::uint64_t kPage = 4096;
}   // namespace

bool buffer_guard_on(const Config& c) { return c[params_of<RdmaParams>().buffer_guard] == "mprotect"; }

void BufferGuard::declare_metrics(MetricRegistry& reg) {
    const auto guarded = [](const Config& c) { return buffer_guard_on(c); };
    reg.sum_counters("guard_installs",
                     "rdma.buffer-guard = mprotect: buffers the libraries protected when their "
                     "transfer was posted (`*.rdma.guard.installed`); 0 without the guard.",
                     {"rdma.guard.installed"}, guarded);
    reg.sum_counters("guard_faults",
                     "rdma.buffer-guard = mprotect: CPU touches of a guarded buffer, each a "
                     "permission fault that waited for its transfer (`*.rdma.guard.faults`); 0 "
                     "without the guard.",
                     {"rdma.guard.faults"}, guarded);
    reg.sum_scalars("guard_fault_wait_us", "us",
                    "rdma.buffer-guard = mprotect: time the programs spent in guard faults, fault to resumed "
                    "(`*.rdma.guard.fault_wait` sums); 0 without the guard.",
                    "rdma.guard.fault_wait_total", 6, guarded);
    reg.sum_scalars("guard_mprotect_us", "us",
                    "rdma.buffer-guard = mprotect: time the guard's mprotect calls took, installing and lifting "
                    "(`*.rdma.guard.mprotect_time`); 0 without the guard.",
                    "rdma.guard.mprotect_time", 6, guarded);
}

BufferGuard::BufferGuard(const SimContext& ctx, const std::string& prefix, Vm& vm, int pid)
    : vm_(vm),
      pid_(pid),
      fault_(ctx.config[params_of<RdmaParams>().guard_fault]),
      tlbi_page_(ctx.config[params_of<RdmaParams>().guard_tlbi_page]),
      installed_(ctx.stats.counter(prefix + ".installed", "", "buffers protected when their transfer was posted")),
      lifted_(ctx.stats.counter(prefix + ".lifted", "",
                                "guards lifted at completion (must equal installed at the end of a run)")),
      faults_(ctx.stats.counter(prefix + ".faults", "",
                                "CPU touches of a guarded page: a permission fault that waited for the transfer")),
      mprotects_(ctx.stats.counter(prefix + ".mprotects", "", "mprotect calls of the guard (install and lift)")),
      mprotect_time_(
          ctx.stats.scalar(prefix + ".mprotect_time", "us", "time the guard's mprotect calls took", Scalar::Kind::Sum)),
      fault_wait_(ctx.stats.histogram(prefix + ".fault_wait", "us",
                                      "per guard fault: from the fault to the program resuming (the fault's CPU, "
                                      "the wait for the transfer and the lift)")) {
    // The sum of the waits as a scalar: the summary column adds them up.
    fault_wait_total_ =
        &ctx.stats.scalar(prefix + ".fault_wait_total", "us", "sum of rdma.guard.fault_wait", Scalar::Kind::Sum);
}

// Every guard takes EL0's access and leaves EL1's (AP[2:1] = 00): the
// engine's privileged transactions keep reading and writing the page. A
// read-only EL0 mapping (AP = 11) would be read-only at EL1 too (ARMv8 has
// no encoding for EL1 read-write, EL0 read-only): an engine write into
// another buffer sharing a source's page would fault, and no fault library
// could resolve it. So a source is no access for the CPU as a destination
// is; a CPU load of a source in flight waits like a store.
sc_time BufferGuard::protect(const std::vector<std::pair<std::uint64_t, std::uint64_t>>& runs, UserAccess access,
                             sc_time at) {
    for (const auto& run : runs) {
        const VmResult r = vm_.guard_user(pid_, run.first, run.second - run.first, access, tlbi_page_, at);
        if (!r.ok())
            throw std::runtime_error("BufferGuard: mprotect of the pages at " + hex(run.first) +
                                     " failed: " + to_string(r.error));
        mprotects_.inc();
        mprotect_time_.add(to_us(r.done - at));
        at = r.done;
    }
    return at;
}

namespace {
// Contiguous runs [begin, end) of the pages `pred` holds for, over [va, end).
template <class Pred>
std::vector<std::pair<std::uint64_t, std::uint64_t>> page_runs(std::uint64_t va, std::uint64_t end, Pred pred) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
    for (std::uint64_t p = va; p < end; p += kPage) {
        if (!pred(p)) continue;
        if (!runs.empty() && runs.back().second == p) runs.back().second = p + kPage;
        else runs.emplace_back(p, p + kPage);
    }
    return runs;
}
}   // namespace

std::uint64_t BufferGuard::install(std::uint64_t va, std::uint64_t len, bool engine_writes,
                                   std::vector<std::uint64_t> records, sc_time at, sc_time& done,
                                   std::function<void()> wait) {
    Guard g;
    g.wait = std::move(wait);
    g.va = va / kPage * kPage;
    g.end = (va + std::max<std::uint64_t>(len, 1) + kPage - 1) / kPage * kPage;
    g.engine_writes = engine_writes;
    // Buffers in flight may share a page (the guard protects whole pages):
    // only the pages no other guard holds yet need the mprotect.
    done = protect(page_runs(g.va, g.end, [&](std::uint64_t p) { return by_page_.count(p) == 0; }),
                   UserAccess::NoAccess, at);
    installed_.inc();
    g.installed = done;
    g.seen.assign(records.size(), false);
    g.records = std::move(records);
    const std::uint64_t id = next_id_++;
    for (std::uint64_t p = g.va; p < g.end; p += kPage) by_page_.emplace(p, id);
    for (std::uint64_t rec : g.records) by_record_[rec] = id;
    guards_.emplace(id, std::move(g));
    return id;
}

void BufferGuard::add_record(std::uint64_t id, std::uint64_t record) {
    Guard& g = guards_.at(id);
    g.records.push_back(record);
    g.seen.push_back(false);
    by_record_[record] = id;
}

sc_time BufferGuard::lift(std::uint64_t id, sc_time at) {
    auto it = guards_.find(id);
    if (it == guards_.end()) throw std::logic_error("BufferGuard: lift of a guard not installed");
    const Guard& g = it->second;
    for (std::uint64_t p = g.va; p < g.end; p += kPage) {
        auto range = by_page_.equal_range(p);
        for (auto j = range.first; j != range.second; ++j)
            if (j->second == id) {
                by_page_.erase(j);
                break;
            }
    }
    // The access comes back on the pages no other guard still holds.
    const sc_time done =
        protect(page_runs(g.va, g.end, [&](std::uint64_t p) { return by_page_.count(p) == 0; }), UserAccess::Full, at);
    lifted_.inc();
    for (std::uint64_t rec : g.records) by_record_.erase(rec);
    guards_.erase(it);
    return done;
}

std::uint64_t BufferGuard::record_seen(std::uint64_t record) {
    auto it = by_record_.find(record);
    if (it == by_record_.end()) return 0;
    Guard& g = guards_.at(it->second);
    bool all = true;
    for (std::size_t k = 0; k < g.records.size(); ++k) {
        if (g.records[k] == record) g.seen[k] = true;
        all = all && g.seen[k];
    }
    return all ? it->second : 0;
}

const BufferGuard::Guard* BufferGuard::covering(std::uint64_t va, std::uint64_t* id) const {
    auto it = by_page_.find(va / kPage * kPage);   // the page's oldest guard
    if (it == by_page_.end()) return nullptr;
    if (id) *id = it->second;
    return &guards_.at(it->second);
}

const BufferGuard::Guard* BufferGuard::find(std::uint64_t id) const {
    auto it = guards_.find(id);
    return it == guards_.end() ? nullptr : &it->second;
}

void BufferGuard::fault_taken(sc_time) { faults_.inc(); }

void BufferGuard::fault_done(sc_time start, sc_time end) {
    fault_wait_.add(to_us(end - start));
    fault_wait_total_->add(to_us(end - start));
}

}   // namespace vrdmasim
