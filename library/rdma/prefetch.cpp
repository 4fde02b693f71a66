#include "library/rdma/prefetch.hpp"

#include <algorithm>
#include <iterator>
#include <vector>

#include "src/core/format.hpp"

namespace vrdmasim {

namespace {
constexpr std::uint64_t kPage = 4096;
}   // namespace

bool prefetch_on(const Config& c) { return c[params_of<RdmaParams>().prefetch] == "advise"; }

void Prefetcher::declare_metrics(MetricRegistry& reg) {
    reg.sum_counters(
        "prefetch_advised_pages",
        "rdma.prefetch = advise: pages the libraries advised (each once; `*.rdma.prefetch.advised_pages`); "
        "0 without prefetch.",
        {"rdma.prefetch.advised_pages"}, prefetch_on);
    reg.sum_counters("prefetch_populated_pages",
                     "rdma.prefetch = advise: pages the prefetch workers made present (advised pages not present "
                     "yet when their batch ran; `*.rdma.prefetch.populated_pages`); 0 without prefetch.",
                     {"rdma.prefetch.populated_pages"}, prefetch_on);
    reg.sum_scalars(
        "prefetch_worker_us", "us",
        "rdma.prefetch = advise: time the prefetch workers spent populating (`*.rdma.prefetch.worker_time`); "
        "0 without prefetch.",
        "rdma.prefetch.worker_time", 6, prefetch_on);
}

Prefetcher::Prefetcher(const SimContext& ctx, const std::string& prefix, Vm& vm, int pid)
    : vm_(vm),
      pid_(pid),
      distance_(ctx.config[params_of<RdmaParams>().prefetch_distance]),
      advices_(ctx.stats.counter(prefix + ".advices", "", "advice calls that queued pages (rdma.prefetch = advise)")),
      advised_pages_(ctx.stats.counter(prefix + ".advised_pages", "", "pages advised, each once")),
      populated_(ctx.stats.counter(prefix + ".populated_pages", "",
                                   "pages the prefetch worker made present (the rest were present already)")),
      failed_(ctx.stats.counter(prefix + ".failed_batches", "",
                                "batches the Vm refused (out of memory, a guarded or unmapped page): dropped")),
      worker_time_(ctx.stats.scalar(prefix + ".worker_time", "us", "time the prefetch worker spent populating",
                                    Scalar::Kind::Sum)) {}

std::uint64_t Prefetcher::advise(std::uint64_t va, std::uint64_t len) {
    if (len == 0) return 0;
    const std::uint64_t s = va & ~(kPage - 1);
    const std::uint64_t e = (va + len + kPage - 1) & ~(kPage - 1);
    // The gaps of [s, e) between the ranges advised before.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> gaps;
    std::uint64_t cur = s;
    auto it = advised_.upper_bound(cur);
    if (it != advised_.begin() && std::prev(it)->second > cur) cur = std::prev(it)->second;
    for (; cur < e; ++it) {
        const std::uint64_t next = it == advised_.end() ? e : std::min(e, it->first);
        if (next > cur) gaps.emplace_back(cur, next);
        if (it == advised_.end()) break;
        cur = std::max(cur, it->second);
    }
    std::uint64_t queued = 0;
    for (auto [a, b] : gaps) {
        queue_.emplace_back(a, b);
        queued += (b - a) / kPage;
        // Into the advised set, merged with a range ending at a or starting at b.
        auto after = advised_.find(b);
        if (after != advised_.end()) {
            b = after->second;
            advised_.erase(after);
        }
        auto before = advised_.lower_bound(a);
        if (before != advised_.begin() && std::prev(before)->second == a) {
            std::prev(before)->second = b;
        } else {
            advised_[a] = b;
        }
    }
    if (queued) {
        advices_.inc();
        advised_pages_.inc(queued);
    }
    return queued;
}

sc_core::sc_time Prefetcher::step(sc_core::sc_time at) {
    auto& [s, e] = queue_.front();
    const std::uint64_t n = std::min((e - s) / kPage, kBatchPages);
    const VmResult r = vm_.madvise(pid_, s, n * kPage, Advice::PopulateWrite, at);
    if (r.ok()) populated_.inc(r.value);
    else failed_.inc();
    s += n * kPage;
    if (s >= e) queue_.pop_front();
    const sc_core::sc_time done = std::max(r.done, at);
    worker_time_.add(to_us(done - at));
    return done;
}

}   // namespace vrdmasim
