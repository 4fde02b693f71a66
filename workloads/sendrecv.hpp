// sendrecv: two-sided send/receive between workload.src-node (A) and
// workload.dst-node (B) through the two-sided library (library/messaging):
//
//   latency    A sends message-size to B, B sends it back, `iterations`
//              times; each sample is half the round trip (osu_latency).
//   bandwidth  A sends total-bytes in message-size isends, `window` at a
//              time into B's pre-posted receives; B acknowledges each
//              window with an empty message (osu_bw).
//
// Every message is checked byte for byte by its receiver. Whether a message
// goes eagerly or by rendezvous is msg.eager-threshold's choice.
#pragma once

#include <functional>
#include <algorithm>
#include <memory>
#include <vector>

#include "library/messaging/endpoint.hpp"
#include "workloads/workload.hpp"

namespace vrdmasim {

class SendrecvWorkload : public Workload {
public:
    SendrecvWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, std::uint64_t src, std::uint64_t dst,
                     unsigned job = 0);
    ~SendrecvWorkload() override;
    std::string kind() const override { return "sendrecv"; }
    std::uint64_t programs() const override { return 2; }
    bool finished() const override { return done_ == 2; }
    msg::Endpoint* endpoint(unsigned node) { return node < eps_.size() ? eps_[node] : nullptr; }
    // Tests: run these bodies on src-node and dst-node instead of the
    // latency or bandwidth test (between the endpoints' set-up and their
    // finalize; each is given its app, its endpoint and the other's node).
    using Body = std::function<void(RdmaProcess&, msg::Endpoint&, unsigned)>;
    void replace_bodies(Body a, Body b);

    // The progress line's total (the self-check planned-transfers holds
    // it to it): each message received, both ways in the latency test.
    std::uint64_t planned_transfers() const override {
        const std::uint64_t n = std::max<std::uint64_t>(msg_, 1);
        return latency_ ? 2 * iterations_ : std::max<std::uint64_t>(1, (total_ + n - 1) / n);
    }
    // message-size each way in the latency test; total-bytes in the
    // bandwidth test (its last message the rest of it).
    std::int64_t planned_bytes() const override {
        return static_cast<std::int64_t>(latency_ ? 2 * iterations_ * msg_ : total_);
    }

private:
    void start(RdmaProcess& app, msg::Endpoint& ep);
    void end(RdmaProcess& app, msg::Endpoint& ep);
    void latency_a(RdmaProcess& app, msg::Endpoint& ep);
    void latency_b(RdmaProcess& app, msg::Endpoint& ep);
    void bandwidth_a(RdmaProcess& app, msg::Endpoint& ep);
    void bandwidth_b(RdmaProcess& app, msg::Endpoint& ep);
    msg::Status checked(const msg::Status& s, RdmaProcess& app, std::uint64_t key, std::uint64_t len, unsigned from);

    RdmaProcess* a_;   // nullptr: not in this process (present())
    RdmaProcess* b_;
    unsigned a_node_, b_node_;
    std::vector<std::unique_ptr<msg::Endpoint>> owned_;
    std::vector<msg::Endpoint*> eps_;   // by node
    const std::uint64_t msg_, total_, window_, iterations_;
    const bool latency_;
    std::uint64_t a_buf_ = 0, b_buf_ = 0;
    unsigned done_ = 0;
    Body body_a_, body_b_;
};

}   // namespace vrdmasim
