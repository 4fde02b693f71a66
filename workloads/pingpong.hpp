// pingpong: src-node writes message-size bytes to dst-node with a receiver
// notification; dst-node, woken by it, writes the same amount back; repeated
// `iterations` times. Latency = half the round trip (one-way, user to user).
// workload.operation = read: src-node reads message-size bytes of
// dst-node's buffer `iterations` times, one at a time (as osu_get_latency);
// the latency is each read's, doorbell to its completion record.
#pragma once

#include "workloads/workload.hpp"

namespace vrdmasim {

class PingpongWorkload : public Workload {
public:
    static constexpr std::uint32_t kRing = 16;   // notification ring entries per side
    PingpongWorkload(const SimContext& ctx, RdmaProcess& a, RdmaProcess& b, unsigned job = 0);
    std::string kind() const override { return "pingpong"; }
    std::string partition_refusal() const override;
    bool finished() const override { return done_a_ && done_b_; }
    // A ping and a pong per iteration.
    // (read: one read per iteration).
    std::uint64_t planned_transfers() const override { return read_ ? iterations_ : 2 * iterations_; }

private:
    void ping(RdmaProcess& app);
    void pong(RdmaProcess& app);
    void reader(RdmaProcess& app);   // read: src-node's program
    void target(RdmaProcess& app);   // read: dst-node's, which only maps and registers the source
    // One message of msg_ bytes from `src` into `dst` of `to`, with notification.
    RdmaProcess::Message message(std::uint64_t src, const RdmaProcess& to, std::uint64_t dst, std::uint64_t key,
                                 std::uint64_t records) const;
    RdmaProcess& a_;
    RdmaProcess& b_;
    std::uint64_t msg_, iterations_;
    std::uint64_t a_buf_ = 0, b_buf_ = 0, a_rec_ = 0, b_rec_ = 0;
    bool done_a_ = false, done_b_ = false;
    bool read_ = false;
};

}   // namespace vrdmasim
