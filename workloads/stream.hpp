// stream: node src-node moves total-bytes to dst-node in messages of
// message-size, keeping `window` transfers outstanding, each with its own
// source and destination buffers. workload.operation = write: src-node posts
// RDMA writes; read: dst-node posts RDMA reads of src-node's buffers (the
// data moves the same way). Latency = the initiator's doorbell to its
// completion record.
#pragma once

#include <vector>

#include "workloads/workload.hpp"

namespace vrdmasim {

class StreamWorkload : public Workload {
public:
    // Between nodes src and dst of `apps` (either may be nullptr: a node of
    // another rank in a partitioned run, whose program runs there).
    StreamWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned src, unsigned dst,
                   unsigned job = 0);
    // Its columns of summary.csv (workload.stream-notify = ring).
    static void declare_metrics(MetricRegistry& reg);
    std::string kind() const override { return "stream"; }
    // The sender's last completion, and (stream-notify = ring) the
    // receiver's last notification read.
    bool finished() const override { return finished_ && (!notify_ || notified_); }
    // One transfer per message of total-bytes.
    std::uint64_t planned_transfers() const override { return msg_ ? (total_ + msg_ - 1) / msg_ : 0; }
    // total-bytes (the last message the rest of it).
    std::int64_t planned_bytes() const override { return static_cast<std::int64_t>(total_); }
    std::string partition_refusal() const override;
    std::uint64_t programs() const override { return 2; }

private:
    void sender(RdmaProcess& app);
    void receiver(RdmaProcess& app);
    // workload.stream-notify = ring: dst-node's program reads one
    // notification record per message, in ring order.
    void take_notifications(RdmaProcess& app);
    // workload.operation = read: dst-node's program reads, src-node's
    // program maps and registers the source.
    void reader(RdmaProcess& app);
    void source(RdmaProcess& app);
    RdmaProcess* src_;   // nullptr: not in this process (present())
    RdmaProcess* dst_;
    unsigned src_node_, dst_node_;
    // What the programs publish before the start barrier (Workload::publish).
    enum Published : unsigned { kDstBuf, kDstRegistered, kSrcBuf, kSrcRegistered };
    std::uint64_t msg_, total_, window_, buffers_;
    bool read_ = false;
    std::uint64_t slots_ = 0, src_buf_ = 0, dst_buf_ = 0, records_ = 0;
    bool finished_ = false;
    bool dst_registered_ = true;
    bool src_registered_ = true;
    // workload.stream-notify = ring.
    bool notify_ = false;
    bool notified_ = false;   // dst-node's program has read every notification
    std::uint32_t ring_ = 0;   // receive ring entries
    std::vector<sc_core::sc_time> posted_at_;   // each message's post, by index
    Counter* notify_seen_ = nullptr;
    Counter* notify_out_of_order_ = nullptr;
    Histogram* notify_latency_ = nullptr;
};

}   // namespace vrdmasim
