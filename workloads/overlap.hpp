// overlap: a process overlaps compute with its own transfers, one at a time,
// and its compute phases touch memory, now and then the buffer of the
// transfer in flight (README.md "Overlap and the buffer guard"). Per
// iteration: post one transfer of workload.message-size (an RDMA write from
// the initiator's source, or with workload.operation = read an RDMA read into
// its destination), then overlap.phases phases of overlap.compute CPU time,
// each ending with one 8-byte store: with probability
// overlap.touch-probability into the in-flight buffer (a write's source, a
// read's destination), else into the process's private working memory.
//
//   overlap.mode = blocking     wait for the completion before computing
//   overlap.mode = nonblocking  compute while the transfer is in flight;
//                               with rdma.buffer-guard = none the touches
//                               race with the engine, with mprotect they
//                               fault and wait for the transfer
//
// The check: every byte of the destination is either the source's pattern
// or the value of a store the program made; a store's value may appear only
// if the store's time allows it (a source store before the completion, a
// destination store: the last one after the completion must be what the
// destination holds). A byte that is neither is a simulator failure (a data
// mismatch); a store's value in the destination where the pattern should be
// is an application race, caught: the transfer is counted corrupted
// (workload.overlap.corrupted_transfers) and the run goes on.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <vector>

#include "src/core/metrics.hpp"
#include "workloads/workload.hpp"

namespace vrdmasim::msg {
class Endpoint;
}

namespace vrdmasim {

struct OverlapParams {
    OverlapParams();
    ParamSet set;
    EnumParam mode;
    RealParam touch_probability;
    IntParam phases;
    TimeParam compute;
};

class OverlapWorkload : public Workload {
public:
    static void declare_params(ParamRegistry& reg);
    static void declare_metrics(MetricRegistry& reg);
    OverlapWorkload(const SimContext& ctx, RdmaProcess& src, RdmaProcess& dst, unsigned job = 0);
    std::string kind() const override { return "overlap"; }
    std::string partition_refusal() const override;
    ~OverlapWorkload() override;
    // A race only where nothing kept the program off the buffer
    // (nonblocking, unguarded) and it did touch one in flight; none where
    // the guard or a blocking call keeps it off.
    std::vector<std::pair<std::string, std::string>> self_check() const override;
    bool finished() const override { return finished_ && (!two_sided_ || target_done_); }
    // The progress line's total (the self-check planned-transfers holds it
    // to it): the initiator's transfers, one an iteration.
    std::uint64_t planned_transfers() const override { return iterations_; }
    // message-size each.
    std::int64_t planned_bytes() const override { return static_cast<std::int64_t>(iterations_ * msg_); }
    std::uint64_t raced_bytes() const override { return raced_bytes_.value(); }
    std::uint64_t corrupted() const { return corrupted_.value(); }
    std::uint64_t inflight_touches() const { return inflight_touches_.value(); }
    // Nonblocking without the guard: the one mode whose stores may race.
    bool unguarded() const { return !blocking_ && !guarded_; }

private:
    // One store of a compute phase into the transfer's buffer.
    struct Touch {
        std::uint64_t offset;   // byte offset in the buffer (8-aligned)
        std::uint64_t value;
        sc_core::sc_time at;   // when the store was performed
    };
    void initiator(RdmaProcess& app);
    std::vector<Touch> compute_phases(RdmaProcess& app, std::uint64_t buf, std::uint64_t work,
                                      const std::vector<unsigned char>& expect, double& sum_c);
    static sc_core::sc_time engine_done(RdmaProcess& app, std::uint64_t records, std::uint64_t parts,
                                        sc_core::sc_time t0);
    void target(RdmaProcess& app);
    // workload.two-sided: the same program with isend, the target's irecv
    // (the two-sided library; its guard covers the request's buffer).
    void initiator_two_sided(RdmaProcess& app);
    void target_two_sided(RdmaProcess& app);
    // One two-sided iteration's halves: the sender's (source at the post,
    // stores, when the send completed) and the receiver's (the bytes it
    // received); checked when both are in, by whichever side is later.
    struct Pending {
        std::vector<unsigned char> expect, got;
        std::vector<Touch> touches;
        sc_core::sc_time done;
        bool sent = false, received = false, received_ok = false;
    };
    void settle(std::uint64_t i);
    // The check of iteration `i`: the destination `dst_addr` of `dst` against
    // `expect` (the source at the post) and the program's stores `touches`,
    // the transfer completed at `done`; counts it verified, corrupted by the
    // race, or a data mismatch.
    // `got`, when given: the bytes the destination held (taken by the
    // receiver when its receive completed) instead of reading them now.
    void check(RdmaProcess& dst, std::uint64_t dst_addr, const std::vector<unsigned char>& expect, std::uint64_t i,
               const std::vector<Touch>& touches, sc_core::sc_time done,
               const std::vector<unsigned char>* got = nullptr);
    double uniform();

    RdmaProcess& src_;
    RdmaProcess& dst_;
    const bool read_;
    const bool two_sided_;
    const bool blocking_;
    const bool guarded_;
    const double touch_p_;
    const std::uint64_t phases_;
    const sc_core::sc_time compute_;
    const std::uint64_t msg_, iterations_;
    std::uint64_t span_ = 0;   // a buffer: the message rounded up to whole pages
    std::uint64_t remote_buf_ = 0;   // the other node's buffer (write: destination; read: source)
    bool remote_ok_ = true;
    bool finished_ = false;
    bool target_done_ = false;
    std::vector<std::unique_ptr<msg::Endpoint>> owned_;   // workload.two-sided: both processes' endpoints
    std::vector<msg::Endpoint*> eps_;   // by node
    std::map<std::uint64_t, Pending> pending_;
    std::mt19937_64 rng_;
    Counter &iterations_done_, &touches_, &inflight_touches_, &corrupted_, &raced_bytes_;
    Scalar &transfer_time_, &compute_time_, &iteration_time_, &overlap_, &end_to_end_;
};

}   // namespace vrdmasim
