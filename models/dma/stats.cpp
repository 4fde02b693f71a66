// The PLDMA engine's statistics, registered in one place (see stats.hpp).
// Names, units and help strings are part of the output format.
#include "models/dma/stats.hpp"
#include "models/dma/pldma.hpp"

namespace vrdmasim {

void PldmaStats::stale_nack() {
    if (!nacks_stale_)
        nacks_stale_ = &registry_.counter(prefix_ + "nacks_stale", "",
                                          "NACKs received after the retransmit request that answers them (sender): "
                                          "ignored");
    nacks_stale_->inc();
}

Spread& PldmaStats::payload_in_of(std::uint16_t pd) {
    if (pd >= payload_in_.size()) payload_in_.resize(pd + 1u, nullptr);
    Spread*& sp = payload_in_[pd];
    if (!sp)
        sp = &registry_.spread(prefix_ + "payload_in_pd" + std::to_string(pd), "B",
                               "payload bytes of protection domain " + std::to_string(pd) +
                                   "'s data packets accepted (written or buffered), each spread over its time on "
                                   "the link into the engine");
    return *sp;
}

PldmaChannelStats::PldmaChannelStats(StatRegistry& s, const std::string& p)
    : posted(s.counter(p + "transfers_posted", "", "descriptors queued")),
      refused(s.counter(p + "doorbells_refused", "",
                        "doorbells refused: channel queue full, channel disabled or no such node")),
      completed(s.counter(p + "transfers_completed", "", "transfers completed successfully (acknowledged)")),
      failed(s.counter(p + "transfers_failed", "", "transfers completed with an error status")),
      packets_sent(s.counter(p + "packets_sent", "", "data packets sent")),
      packets_received(s.counter(p + "packets_received", "", "data packets received")),
      bytes_sent(s.counter(p + "bytes_sent", "B", "payload bytes sent")),
      bytes_received(s.counter(p + "bytes_received", "B", "payload bytes written into this node's memory")),
      rx_errors(s.counter(p + "rx_errors", "",
                          "received packets that could not be written or were out of sequence, and records lost")),
      transactions(s.counter(p + "transactions", "", "register accesses and packets served")),
      smmu_faults(s.counter(p + "smmu_faults", "", "memory accesses the SMMU answered with a translation fault")),
      latency_us(s.histogram(p + "transfer_latency", "us", "doorbell to completion record written")) {}

PldmaFaultStats::PldmaFaultStats(StatRegistry& s, const std::string& p)
    : parks(s.counter(p + "parks", "", "channels parked on a source read fault (fault-tolerant)")),
      rereads(s.counter(p + "rereads", "", "source blocks read again after their fault was resolved")),
      park_us(s.histogram(p + "park_time", "us", "source read fault to resumption (fault-tolerant)")),
      nacks_sent(s.counter(p + "nacks_sent", "", "NACKs sent for payload writes that faulted (receiver)")),
      nacks_received(s.counter(p + "nacks_received", "", "NACKs received (sender)")),
      retx_requests(s.counter(p + "retransmit_requests", "",
                              "retransmit requests sent after a resolved (or timed-out) fault (receiver)")),
      retransmissions(s.counter(p + "retransmissions", "", "retransmit requests served (sender)")),
      retx_bytes(s.counter(p + "retransmitted_bytes", "B", "payload bytes sent again on a retransmit request")),
      duplicates(s.counter(p + "duplicates_dropped", "",
                           "received packets already written (sequence behind), dropped (receiver)")),
      fault_dropped(
          s.counter(p + "fault_dropped", "",
                    "received packets dropped while their transfer waits on a fault or after it failed on one")),
      unmatched(s.counter(p + "fault_outcomes_unmatched", "", "fault outcomes for which nothing was waiting")),
      fault_timeouts(
          s.counter(p + "fault_timeouts", "",
                    "parked channels and faulted receives retried after dma.fault-timeout without an outcome")),
      record_retries(s.counter(p + "record_retries", "",
                               "completion or notification records written again after their page faulted")) {}

PldmaReceiveStats::PldmaReceiveStats(StatRegistry& s, const std::string& p)
    : pd_violations(s.counter(p + "pd_violations", "",
                              "transfers received for a protection domain no channel of this node has (dropped)")),
      notifications(s.counter(p + "notifications", "", "notifications delivered to a receiving channel")),
      counter_increments(
          s.counter(p + "counter_increments", "",
                    "event counters incremented by writes naming one (DESC_FLAGS bit 2) that landed here")),
      counter_failed(s.counter(p + "counter_failed", "",
                               "writes naming an event counter that failed: their counter was not incremented")),
      counter_writes(s.counter(p + "counter_writes", "",
                               "writes naming an event counter that completed ok here (sender): each landed and "
                               "incremented its counter once")),
      counter_writes_failed(s.counter(p + "counter_writes_failed", "",
                                      "writes naming an event counter that completed with an error here (sender)")) {}

PldmaAtomicStats::PldmaAtomicStats(StatRegistry& s, const std::string& p)
    : atomics_posted(s.counter(p + "atomics_posted", "", "network atomics queued (initiator)")),
      atomics_completed(s.counter(p + "atomics_completed", "",
                                  "network atomics completed successfully, the old value in the record (initiator)")),
      atomics_failed(s.counter(p + "atomics_failed", "", "network atomics completed with an error status (initiator)")),
      atomics_executed(s.counter(p + "atomics_executed", "",
                                 "read-modify-writes this engine's atomic unit carried out on its memory (target)")),
      atomic_faults(s.counter(p + "atomic_faults", "",
                              "atomic unit accesses the SMMU answered with a fault (target; each retry counts)")),
      atomic_latency_us(s.histogram(p + "atomic_latency", "us",
                                    "network atomic: doorbell to completion record written (initiator)")) {}

PldmaNetvmStats::PldmaNetvmStats(StatRegistry& s, const std::string& p)
    : netvm_packets(s.counter(p + "netvm_buffered", "",
                              "packets put in the NetVM kernel buffer (destination page not resident)")),
      netvm_bytes(s.counter(p + "kernel_copy_bytes", "B", "bytes the kernel copied from the NetVM buffer into place")),
      netvm_full(s.counter(p + "netvm_full", "", "packets held back because the NetVM buffer was full")),
      netvm_peak(s.scalar(p + "netvm_peak", "B", "NetVM buffer bytes in use at peak", Scalar::Kind::Level)),
      rx_stalled_us(s.scalar(p + "rx_stalled", "us",
                             "time payload writes were held beyond 1 us (stalled translations: the "
                             "packets behind wait in the link buffers)",
                             Scalar::Kind::Sum)) {}

PldmaReadStats::PldmaReadStats(StatRegistry& s, const std::string& p)
    : reads_posted(
          s.counter(p + "reads_posted", "", "RDMA read descriptors queued (initiator; also in transfers_posted)")),
      reads_failed(s.counter(p + "reads_failed", "",
                             "RDMA reads completed with an error status (initiator; also in transfers_failed)")),
      read_bytes(s.counter(p + "read_bytes", "B",
                           "bytes of RDMA reads completed successfully, in this node's memory (initiator)")),
      read_latency_us(s.histogram(p + "read_latency", "us",
                                  "RDMA read: doorbell to completion record written (initiator; also in "
                                  "transfer_latency)")),
      read_requests(s.counter(p + "read_requests", "", "RDMA read requests received (responder)")),
      read_requests_served(s.counter(p + "read_requests_served", "",
                                     "read requests whose reply the initiator acknowledged as written (responder)")),
      read_replies_failed(s.counter(p + "read_replies_failed", "",
                                    "read requests that ended in an error: no channel of the domain, a source "
                                    "fault not resolved, or the initiator's error ACK (responder)")) {}

PldmaOrderStats::PldmaOrderStats(StatRegistry& s, const std::string& p)
    : rx_out_of_order(s.counter(p + "rx_out_of_order", "",
                                "data packets out of their transfer's send order (adaptive routing): one that "
                                "arrived after a packet of its transfer sent after it (exact time order, where "
                                "the receiver takes packets as they arrive), or before one sent before it (the "
                                "approximate link orders, which hand them over in send order)")),
      rx_ooo_early_ns(s.histogram(p + "rx_out_of_order_early", "ns",
                                  "how much earlier the packet sent later arrived, for each packet counted in "
                                  "rx_out_of_order")),
      rx_double_landings(s.counter(p + "rx_double_landings", "",
                                   "packets that landed on an index of their transfer already landed (self-check: "
                                   "must stay 0, every byte lands exactly once)")),
      rx_early_writes(s.counter(p + "rx_early_writes", "",
                                "payload writes done before their packet arrived (self-check: must stay 0)")) {}

PldmaNotifyStats::PldmaNotifyStats(StatRegistry& s, const std::string& p)
    : window_stalls(s.counter(p + "window_stalls", "",
                              "notifying writes that waited to start because their destination's sequence window "
                              "was full (dma.notify-window; sender)")),
      window_wait_us(s.histogram(p + "window_wait", "us",
                                 "how long a notifying write waited for room in its sequence window (sender)")),
      notify_skips(s.counter(p + "notify_skips", "",
                             "skips sent: numbered writes that failed here, whose number the receiver releases "
                             "without a notification (sender)")),
      notify_held(s.counter(p + "notify_held", "",
                            "notifications held because an earlier-posted one of the same sender and domain had not "
                            "been delivered yet (dma.notify-window; receiver)")),
      notify_hold_us(s.histogram(p + "notify_hold", "us",
                                 "how long a held notification waited, from its write landing to its delivery "
                                 "(receiver)")),
      notify_window_peak(s.scalar(p + "notify_window_peak", "",
                                  "most notifications one sender and domain had held at once (receiver; at most "
                                  "dma.notify-window - 1)",
                                  Scalar::Kind::Level)),
      notify_skipped(s.counter(p + "notify_skipped", "",
                               "sequence numbers released by a skip or a write that failed here for good, without "
                               "a notification (receiver)")),
      notify_reordered(s.counter(p + "notify_reordered", "",
                                 "notifications delivered after a later-posted one of the same sender and domain "
                                 "(receiver; with dma.notify-window > 0 a self-check: must stay 0)")),
      notify_seq_errors(s.counter(p + "notify_seq_errors", "",
                                  "notification numbers delivered twice or beyond the window (self-check: must "
                                  "stay 0)")) {}

PldmaStats::PldmaStats(StatRegistry& s, const std::string& p)
    : PldmaChannelStats(s, p),
      PldmaFaultStats(s, p),
      PldmaReceiveStats(s, p),
      PldmaAtomicStats(s, p),
      PldmaNetvmStats(s, p),
      PldmaReadStats(s, p),
      PldmaOrderStats(s, p),
      PldmaNotifyStats(s, p),
      registry_(s),
      prefix_(p) {}

void Pldma::declare_metrics(MetricRegistry& reg) {
    reg.sum_counters("packets", "Data packets sent by all PLDMAs (sum of `*.packets_sent`).", {"packets_sent"});
    reg.sum_counters("parks", "PLDMA channels parked on a source-read fault (fault-tolerant engine).", {"dma.parks"});
    reg.sum_counters("nacks", "NACKs sent by receiving PLDMAs for payload writes that faulted.", {"dma.nacks_sent"});
    reg.sum_counters("retransmitted_bytes", "Payload bytes sent again on retransmit requests.",
                     {"dma.retransmitted_bytes"});
    reg.sum_counters("fault_timeouts", "Faults whose outcome did not come within `dma.fault-timeout`.",
                     {"dma.fault_timeouts"});
    reg.sum_counters("kernel_copy_bytes", "Bytes redirected into the NetVM kernel buffer and copied in by the kernel.",
                     {"dma.kernel_copy_bytes"});
    reg.sum_counters("atomics",
                     "Network atomics (fetch-and-add, compare-and-swap, swap) executed by the engines' atomic units "
                     "(sum of `*.dma.atomics_executed`).",
                     {"dma.atomics_executed"});
    reg.sum_counters("atomic_faults",
                     "Accesses of the engines' atomic units that faulted in the SMMU (sum of `*.dma.atomic_faults`).",
                     {"dma.atomic_faults"});
    reg.quantile("atomic_latency_us_p50", "us",
                 "Median network atomic latency, doorbell to completion record, over every engine "
                 "(`*.dma.atomic_latency`; 0 without atomics).",
                 "dma.atomic_latency", 0.5);
    reg.sum_scalars("rx_stalled_us", "us",
                    "Time receiving PLDMAs' payload writes were held beyond 1 us (stalled translations; the "
                    "packets behind wait in the link buffers; sum of `*.dma.rx_stalled`).",
                    "dma.rx_stalled");
    reg.sum_counters("read_bytes",
                     "Bytes of RDMA reads completed successfully (sum of `*.dma.read_bytes`, initiators).",
                     {"dma.read_bytes"});
    reg.sum_counters("read_requests_served",
                     "RDMA read requests served and acknowledged (sum of `*.dma.read_requests_served`, responders).",
                     {"dma.read_requests_served"});
    reg.sum_counters("rx_out_of_order",
                     "Data packets that reached their receiver out of their transfer's send order (adaptive "
                     "routing; sum of `*.dma.rx_out_of_order`).",
                     {"dma.rx_out_of_order"});
    reg.quantile("rx_out_of_order_early_ns_p50", "ns",
                 "Median of how much earlier the packet sent later arrived, for each packet out of send "
                 "order (`*.dma.rx_out_of_order_early`; 0 without any).",
                 "dma.rx_out_of_order_early", 0.5);
    reg.sum_counters("notify_reordered",
                     "Notifications delivered to a receiving channel after a later-posted one of the same sender "
                     "and protection domain (sum of `*.dma.notify_reordered`; 0 with `dma.notify-window` > 0).",
                     {"dma.notify_reordered"});
    reg.sum_counters("notify_held",
                     "Notifications the sequence window held behind an earlier-posted one "
                     "(sum of `*.dma.notify_held`; 0 without `dma.notify-window`).",
                     {"dma.notify_held"});
    reg.quantile("notify_hold_us_p50", "us",
                 "Median time a held notification waited for its predecessors (`*.dma.notify_hold`; 0 without any).",
                 "dma.notify_hold", 0.5);
    reg.quantile("notify_hold_us_p99", "us",
                 "99th percentile of the time a held notification waited (`*.dma.notify_hold`; 0 without any).",
                 "dma.notify_hold", 0.99);
    reg.sum_counters("window_stalls",
                     "Notifying writes that waited for room in their sequence window before starting "
                     "(sum of `*.dma.window_stalls`).",
                     {"dma.window_stalls"});
    reg.quantile("read_latency_us_p50", "us",
                 "Median RDMA read latency at the initiating engines (doorbell to completion record; "
                 "`*.dma.read_latency`).",
                 "dma.read_latency", 0.5);
}

}   // namespace vrdmasim
