// collective: MPI-style collectives measured as OSU's collective benchmarks
// do (osu_allreduce, ...): every node's process of the job is a rank; each
// iteration the ranks meet at a barrier, then time collective.op on
// workload.message-size bytes per rank with its algorithm (collective.*-algorithm)
// (library/collectives), and check the result: every byte of every rank's
// result against what the ranks' contributions make it (for reductions,
// collective.reduce-op over collective.datatype elements), a barrier by its ranks' entry and exit times.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "library/collectives/communicator.hpp"
#include "workloads/collective_data.hpp"
#include "workloads/workload.hpp"

namespace vrdmasim {

class CollectiveWorkload : public Workload {
public:
    static void declare_params(ParamRegistry& reg);
    static void declare_metrics(MetricRegistry& reg);
    CollectiveWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job = 0);
    ~CollectiveWorkload() override;
    std::string kind() const override { return "collective"; }
    std::string partition_refusal() const override;
    bool finished() const override { return done_ == apps_.size(); }
    std::uint64_t programs() const override { return apps_.size(); }   // one per rank, present or not
    std::uint64_t planned_transfers() const override { return apps_.size() * iterations_; }
    // Each rank's result each iteration, once per call in flight
    // (collective.outstanding): a function of collective.op, the ranks, the
    // root and workload.message-size, whatever the algorithm or transport.
    std::int64_t planned_bytes() const override { return static_cast<std::int64_t>(planned_bytes_); }
    // The self-checks (src/sim/invariants.cpp): (invariant, detail) per violation.
    std::vector<std::pair<std::string, std::string>> self_check() const override;

private:
    void program(RdmaProcess& app, unsigned rank);
    // The reduction collective.reduce-op and collective.datatype choose,
    // checked against op_, workload.message-size and the ranks.
    coll::Reduction reduction(const Config& c, unsigned ranks) const;
    // Refused: another collective's algorithm than `which` set;
    // collective.overlap-compute and collective.outstanding without
    // collective.call = nonblocking, which one-sided does not do.
    void refuse_settings(const Config& c, const EnumParam* which) const;
    // Whether `rank`'s result at `buf` is what `data` says; logs it.
    bool check(RdmaProcess& app, const CollectiveData& data, std::uint64_t buf, unsigned rank, std::uint64_t it,
               const char* what);

    std::vector<RdmaProcess*> apps_;
    std::vector<unsigned> nodes_;
    std::vector<std::unique_ptr<msg::Endpoint>> owned_;
    std::vector<msg::Endpoint*> eps_;   // by node (collective.transport = two-sided)
    std::vector<std::unique_ptr<coll::OneSided>> one_sided_;   // by rank (one-sided)
    std::vector<coll::OneSided*> os_;
    const coll::Op op_;
    coll::Algorithm algorithm_ = coll::Algorithm::Auto;
    const std::uint64_t bytes_, iterations_;
    const unsigned root_;
    // collective.call = nonblocking: the library's non-blocking form, with
    // the compute between start and wait, and the calls in flight at once.
    const bool nonblocking_;
    const sc_core::sc_time overlap_;
    const unsigned outstanding_;
    CollectiveData data_;
    std::uint64_t planned_bytes_ = 0;   // planned_bytes(): computed at construction
    unsigned done_ = 0;
    // Barrier: each rank's entry and exit of the iterations' barriers still
    // open (some rank has not left them), checked and dropped as the last
    // rank leaves: memory for the iterations in flight, not for all of them.
    struct BarrierRound {
        std::vector<sc_core::sc_time> entered, left;
        unsigned gone = 0;   // ranks that have left
    };
    std::map<std::uint64_t, BarrierRound> rounds_;
    std::uint64_t early_ = 0;   // rank-iterations that left a barrier before its last rank entered
    std::uint64_t rounds_checked_ = 0;
    void entered(std::uint64_t it, unsigned rank, sc_core::sc_time at);
    void left(std::uint64_t it, unsigned rank, sc_core::sc_time at);
    Counter &messages_, &sent_bytes_, &reduced_bytes_, &control_writes_;
    Histogram& latency_;
};

}   // namespace vrdmasim
