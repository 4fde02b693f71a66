// stream: node src-node sends total-bytes to dst-node as RDMA writes of
// message-size, keeping `window` transfers outstanding, each with its own
// source and destination buffers. Latency = doorbell to completion record.
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
    App& src_;
    App& dst_;
    std::uint64_t msg_, total_, window_, buffers_;
    std::uint64_t slots_ = 0, src_buf_ = 0, dst_buf_ = 0, records_ = 0;
    bool finished_ = false;
    bool dst_registered_ = true;
};

}  // namespace vrdmasim
