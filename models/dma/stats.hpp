// What the PLDMA engine reports: its statistics (PldmaStats, registered
// under `<module name>.` in one constructor; README.md "Statistics") and its
// trace track (PldmaTrace).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

#include "src/core/context.hpp"
#include "src/core/sim_now.hpp"
#include "models/interconnect/transfer_id.hpp"

namespace vrdmasim {

// The engine's statistics by concern (PldmaStats has them all).

// Channels and the transmit scheduler.
struct PldmaChannelStats {
    PldmaChannelStats(StatRegistry& stats, const std::string& prefix);
    Counter& posted;
    Counter& refused;
    Counter& completed;
    Counter& failed;
    Counter& packets_sent;
    Counter& packets_received;
    Counter& bytes_sent;
    Counter& bytes_received;
    Counter& rx_errors;
    Counter& transactions;
    Counter& smmu_faults;
    Histogram& latency_us;
};

// Fault recovery.
struct PldmaFaultStats {
    PldmaFaultStats(StatRegistry& stats, const std::string& prefix);
    Counter& parks;
    Counter& rereads;
    Histogram& park_us;
    Counter& nacks_sent;
    Counter& nacks_received;
    Counter& retx_requests;
    Counter& retransmissions;
    Counter& retx_bytes;
    Counter& duplicates;
    Counter& fault_dropped;
    Counter& unmatched;
    Counter& fault_timeouts;
    Counter& record_retries;
};

// Receive side.
struct PldmaReceiveStats {
    PldmaReceiveStats(StatRegistry& stats, const std::string& prefix);
    Counter& pd_violations;
    Counter& notifications;
    Counter& counter_increments;
    Counter& counter_failed;
    Counter& counter_writes;
    Counter& counter_writes_failed;
};

// Network atomics.
struct PldmaAtomicStats {
    PldmaAtomicStats(StatRegistry& stats, const std::string& prefix);
    Counter& atomics_posted;
    Counter& atomics_completed;
    Counter& atomics_failed;
    Counter& atomics_executed;
    Counter& atomic_faults;
    Histogram& atomic_latency_us;
};

// NetVM buffer.
struct PldmaNetvmStats {
    PldmaNetvmStats(StatRegistry& stats, const std::string& prefix);
    Counter& netvm_packets;
    Counter& netvm_bytes;
    Counter& netvm_full;
    Scalar& netvm_peak;
    Scalar& rx_stalled_us;
};

// RDMA read (read.*): initiator, then responder.
struct PldmaReadStats {
    PldmaReadStats(StatRegistry& stats, const std::string& prefix);
    Counter& reads_posted;
    Counter& reads_failed;
    Counter& read_bytes;
    Histogram& read_latency_us;
    Counter& read_requests;
    Counter& read_requests_served;
    Counter& read_replies_failed;
};

// Out-of-order arrival (receive.*, adaptive routing).
struct PldmaOrderStats {
    PldmaOrderStats(StatRegistry& stats, const std::string& prefix);
    Counter& rx_out_of_order;
    Histogram& rx_ooo_early_ns;
    Counter& rx_double_landings;
    Counter& rx_early_writes;
};

// Ordered notifications (sequence_window.*, dma.notify-window).
struct PldmaNotifyStats {
    PldmaNotifyStats(StatRegistry& stats, const std::string& prefix);
    Counter& window_stalls;
    Histogram& window_wait_us;
    Counter& notify_skips;
    Counter& notify_held;
    Histogram& notify_hold_us;
    Scalar& notify_window_peak;
    Counter& notify_skipped;
    Counter& notify_reordered;
    Counter& notify_seq_errors;
};

// Every statistic of the engine: the groups above, registered in this order
// under the engine's prefix (stats.cpp), then those registered at first use.
struct PldmaStats : PldmaChannelStats,
                    PldmaFaultStats,
                    PldmaReceiveStats,
                    PldmaAtomicStats,
                    PldmaNetvmStats,
                    PldmaReadStats,
                    PldmaOrderStats,
                    PldmaNotifyStats {
    PldmaStats(StatRegistry& stats, const std::string& prefix);

    // A NACK that came after the retransmit request answering it (ignored):
    // counted in `nacks_stale`, registered at the first (only responses sent
    // from the control thread, as with cut links, can come in that order).
    void stale_nack();
    // Payload of the data packets this engine accepted (written, or put in
    // NetVM's buffer), for protection domain `pd`, each spread over the
    // time its bytes took to come in (its last link's serialisation): the
    // bytes the hardware carried into a process, exact at any simulated
    // time (a region of interest's throughput: src/sim/summary.cpp).
    // `payload_in_pd<pd>`, registered at the domain's first packet.
    void payload_in(std::uint16_t pd, std::uint64_t bytes, sc_core::sc_time from, sc_core::sc_time to) {
        Spread* sp = pd < payload_in_.size() ? payload_in_[pd] : nullptr;
        if (!sp) sp = &payload_in_of(pd);
        sp->add(static_cast<double>(bytes), from.value(), to.value(), sim_now().value());
    }

private:
    StatRegistry& registry_;
    const std::string prefix_;
    Counter* nacks_stale_ = nullptr;
    std::vector<Spread*> payload_in_;   // by protection domain
    Spread& payload_in_of(std::uint16_t pd);
};

// The engine's trace track and its name in narrated events.
struct PldmaTrace {
    Tracer& tracer;
    Tracer::Track track;
    std::string who;
};

}   // namespace vrdmasim
