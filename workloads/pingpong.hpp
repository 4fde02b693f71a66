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
    // Between nodes a (src-node) and b (dst-node) of `apps` (either may be
    // nullptr: a node of another rank in a partitioned run).
    PingpongWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned a, unsigned b,
                     unsigned job = 0);
    std::string kind() const override { return "pingpong"; }
    std::string partition_refusal() const override;
    std::uint64_t programs() const override { return 2; }
    bool finished() const override { return done_a_ && done_b_; }
    // A ping and a pong per iteration.
    // (read: one read per iteration).
    std::uint64_t planned_transfers() const override { return read_ ? iterations_ : 2 * iterations_; }
    // message-size each.
    std::int64_t planned_bytes() const override { return static_cast<std::int64_t>(planned_transfers() * msg_); }

private:
    void ping(RdmaProcess& app);
    void pong(RdmaProcess& app);
    void reader(RdmaProcess& app);   // read: src-node's program
    void target(RdmaProcess& app);   // read: dst-node's, which only maps and registers the source
    // One message of msg_ bytes from `src` into `dst` of `to`, with notification.
    RdmaProcess::Message message(std::uint64_t src, unsigned to, std::uint64_t dst, std::uint64_t key,
                                 std::uint64_t records) const;
    RdmaProcess* a_;   // nullptr: not in this process (present())
    RdmaProcess* b_;
    unsigned a_node_, b_node_;
    // What a program publishes before the start barrier: its buffer.
    static constexpr unsigned kBuf = 0;
    std::uint64_t msg_, iterations_;
    std::uint64_t a_buf_ = 0, b_buf_ = 0, a_rec_ = 0, b_rec_ = 0;
    bool done_a_ = false, done_b_ = false;
    bool read_ = false;
};

}   // namespace vrdmasim
