// stream: node src-node moves total-bytes to dst-node in messages of
// message-size, keeping `window` transfers outstanding, each with its own
// source and destination buffers. workload.operation = write: src-node posts
// RDMA writes; read: dst-node posts RDMA reads of src-node's buffers (the
// data moves the same way). Latency = the initiator's doorbell to its
// completion record.
#pragma once

#include "workloads/workload.hpp"

namespace vrdmasim {

class StreamWorkload : public Workload {
public:
    StreamWorkload(const SimContext& ctx, App& src, App& dst, unsigned job = 0);
    std::string kind() const override { return "stream"; }
    bool finished() const override { return finished_; }

private:
    void sender(App& app);
    void receiver(App& app);
    // workload.operation = read: dst-node's program reads, src-node's
    // program maps and registers the source.
    void reader(App& app);
    void source(App& app);
    App& src_;
    App& dst_;
    std::uint64_t msg_, total_, window_, buffers_;
    bool read_ = false;
    std::uint64_t slots_ = 0, src_buf_ = 0, dst_buf_ = 0, records_ = 0;
    bool finished_ = false;
    bool dst_registered_ = true;
    bool src_registered_ = true;
};

}  // namespace vrdmasim
