#include "src/sim/parallel/windows.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>
#include <string>

#include "src/core/stats.hpp"
#include "src/sim/system.hpp"

namespace vrdmasim {

using sc_core::sc_time;

Windows::Windows(Comm& comm, CutMail* mail, sc_time lookahead, sc_time limit)
    : comm_(comm), mail_(mail), lookahead_(lookahead), limit_(limit) {
    if (lookahead_ == sc_core::SC_ZERO_TIME)
        throw std::logic_error("Windows: a lookahead of 0 would make every window empty");
}

std::string Windows::run() {
    constexpr std::uint64_t kNone = std::numeric_limits<std::uint64_t>::max();
    sc_time start = sc_core::sc_time_stamp();
    std::string error;
    for (;;) {
        const sc_time end = std::min(start + lookahead_, limit_);
        // Events before `end`, not those at it: a message of this window
        // may be for `end` itself. A kernel out of events stops at its
        // last (as one process's does at the end of its run).
        if (before_) before_(end);
        try {
            // (Nothing before `end`: the kernel is not started, which would
            // only warn that it had nothing to do.)
            const sc_time now = sc_core::sc_time_stamp();
            // The first start elaborates and initialises the system: always.
            if (end > now && (windows_ == 0 ||
                              (sc_core::sc_pending_activity() && now + sc_core::sc_time_to_pending_activity() < end)))
                sc_core::sc_start(end - now, sc_core::SC_EXIT_ON_STARVATION);
        } catch (const sc_core::sc_report& r) {
            error = r.get_msg();
        } catch (const std::exception& e) {
            error = e.what();
        }
        ++windows_;
        // The lowest failing rank's error, on every rank.
        const std::uint64_t failed = comm_.min(error.empty() ? kNone : comm_.rank());
        if (failed != kNone) {
            const std::vector<Bytes> all = comm_.allgather(Bytes(error.begin(), error.end()));
            const Bytes& e = all.at(failed);
            return "rank " + std::to_string(failed) + ": " + std::string(e.begin(), e.end());
        }
        std::vector<Bytes> out = mail_ ? mail_->take() : std::vector<Bytes>(comm_.size());
        for (std::size_t r = 0; r < out.size(); ++r)
            if (r != comm_.rank()) bytes_ += out[r].size();
        const std::vector<Bytes> in = comm_.exchange(out);
        if (mail_) mail_->deliver(in);
        for (WindowParty* p : parties_) {
            const Bytes mine = p->take();
            bytes_ += mine.size();
            p->merge(comm_.allgather(mine));
        }
        // Everything this window made for later is in the kernels now.
        const std::uint64_t here = sc_core::sc_pending_activity()
                                       ? (sc_core::sc_time_stamp() + sc_core::sc_time_to_pending_activity()).value()
                                       : kNone;
        const std::uint64_t next = comm_.min(here);
        if (next == kNone || end >= limit_) return "";
        start = std::max(end, sc_time::from_value(next));
    }
}

void merge_ranks(System& sys, StatRegistry& stats, Comm& comm, bool failed) {
    constexpr std::uint64_t kMax = std::numeric_limits<std::uint64_t>::max();
    // The last event anywhere: the kernels stopped at their own last.
    const std::uint64_t last = kMax - comm.min(kMax - sc_core::sc_time_stamp().value());
    if (!failed && last > sc_core::sc_time_stamp().value())
        sc_core::sc_start(sc_time::from_value(last) - sc_core::sc_time_stamp(), sc_core::SC_RUN_TO_TIME);
    sys.end_run();
    // The workloads' logs: histograms by hop count made wherever a transfer
    // of that length ended, the spans the earliest and latest of all.
    Bytes mine;
    ByteWriter w(mine);
    for (const auto& wl : sys.workloads()) {
        const TransferLog& log = wl->log();
        w.put(log.first_action.value());
        w.put(log.first_post.value());
        w.put(log.last_done.value());
        w.put(static_cast<std::uint64_t>(log.latency_by_hops().size()));
        for (const auto& kv : log.latency_by_hops()) w.put(static_cast<std::uint32_t>(kv.first));
    }
    const std::vector<Bytes> all = comm.allgather(mine);
    for (unsigned r = 0; r < all.size(); ++r) {
        ByteReader in(all[r]);
        for (const auto& wl : sys.workloads()) {
            TransferLog& log = wl->log();
            log.first_action = std::min(log.first_action, sc_time::from_value(in.get<sc_dt::uint64>()));
            log.first_post = std::min(log.first_post, sc_time::from_value(in.get<sc_dt::uint64>()));
            log.last_done = std::max(log.last_done, sc_time::from_value(in.get<sc_dt::uint64>()));
            const auto hops = in.get<std::uint64_t>();
            for (std::uint64_t h = 0; h < hops; ++h) log.latency_hops(in.get<std::uint32_t>());
        }
    }
    // The figures only the whole system gives (Workload::end_part), which
    // each rank then computes alike: before the statistics, which carry
    // them.
    for (const auto& wl : sys.workloads()) wl->merge_end(comm.allgather(wl->end_part()));
    // Every rank's statistics into every rank's registry (what finished
    // late in simulated time included: nothing more will).
    stats.flush_timed();
    const std::vector<Bytes> packed = comm.allgather(stats.pack());
    for (unsigned r = 0; r < packed.size(); ++r)
        if (r != comm.rank()) stats.merge_packed(packed[r]);
}

}   // namespace vrdmasim
