// mpi: an unmodified MPI program on the simulated cluster
// (workloads/mpi/README.md). mpirun starts the program's real processes
// with a preloaded library that hands every MPI call to the simulation;
// rank r's calls are carried out by process `job` of node r through the
// user libraries (msg::Endpoint, library/collectives), at the program's
// own buffer addresses, in simulated time, and the call returns to the
// program when the simulation says. The headline is the program's time to
// solution in simulated time (and what the program prints itself, whose
// clocks read simulated time).
#pragma once

#include <deque>
#include <map>
#include <tuple>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "library/collectives/communicator.hpp"
#include "workloads/mpi/communicators.hpp"
#include "workloads/mpi/launcher.hpp"
#include "workloads/mpi/recorder.hpp"
#include "workloads/mpi/one_sided.hpp"
#include "workloads/mpi/waitany.hpp"
#include "workloads/collective_data.hpp"
#include "workloads/program_buffers.hpp"
#include "workloads/workload.hpp"

namespace vrdmasim {

struct MpiParams {
    MpiParams();
    ParamSet set;
    StringParam program, args, launcher;
    IntParam ranks;
    EnumParam compute;
    TimeParam compute_time;
    RealParam compute_scale;
    EnumParam untimed;
    StringParam record;
    EnumParam memory;
};

class MpiWorkload : public Workload {
public:
    static void declare_params(ParamRegistry& reg);
    static void declare_metrics(MetricRegistry& reg);
    MpiWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job = 0);
    ~MpiWorkload() override;
    std::string kind() const override { return "mpi"; }
    std::string partition_refusal() const override;
    std::string refusal() const override { return refusal_; }
    bool finished() const override { return done_ == ranks_; }
    // The calls the ranks are in (and what a one-sided synchronisation waits for).
    std::string stalled() const override;
    // The untimed calls let through (mpi.untimed = count), by name.
    static std::string findings(const Config& c, const StatRegistry& stats);

private:
    static constexpr std::uint64_t kPage = 4096;
    // A collective carried out (collective()): what its end checks, logs
    // and gives back; a non-blocking one's kept until MPI_Wait or MPI_Test
    // ends it (nonblocking.cpp).
    struct CollectiveCall {
        coll::Communicator* comm = nullptr;
        coll::Communicator::Request request;   // a non-blocking one's
        CollectiveData d;
        unsigned me = 0;   // this rank's rank in the communicator
        std::uint64_t sbuf = 0, sbytes = 0, rbuf = 0, call = 0;
        // A non-contiguous datatype's data packed; the library's buffer for
        // MPI_IN_PLACE's input (a non-blocking call's own), and for input
        // a collective in flight reads too.
        std::pair<std::uint64_t, std::uint64_t> pack{0, 0}, own{0, 0}, input{0, 0};
        sc_core::sc_time t0;
        bool freed = false;   // its request freed (MPI_Request_free): ended at MPI_Finalize
    };
    struct Rank {
        // The program's buffers mapped so far, and the library's own.
        ProgramBuffers buffers;
        struct Open {
            sc_core::sc_time posted;
            std::uint64_t va = 0;
            std::uint32_t comm = 0;   // its communicator's context
        };
        std::map<std::uint64_t, Open> receives;   // the open receives, by request
        // The rank's sends in flight (MPI_Isend until its completion): their
        // buffers, which another send may share but no fill may change.
        std::map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> sending;
        std::uint64_t fills = 0;
        // The rank's collectives on each communicator it is in (by context),
        // and how many it called on each.
        std::map<std::uint32_t, std::unique_ptr<coll::Communicator>> colls;
        std::map<std::uint32_t, std::uint64_t> collectives;
        // The library's buffers for the data of non-contiguous datatypes
        // (packed into them, as Open MPI's convertor packs; pooled from
        // `buffers`, reused as Open MPI's free lists are): the busy ones by
        // the request using them.
        std::map<std::uint64_t, std::pair<std::uint64_t, std::uint64_t>> packed;
        std::vector<std::uint64_t> ids;   // the values after the call being served: requests, blocks
        std::vector<std::uint64_t> unmapped, touched;   // its program's memory since the last call (runs)
        std::vector<std::uint64_t> freed;   // sends the program freed (MPI_Request_free), ended at MPI_Finalize
        // Its non-blocking collectives in flight, by request (protocol.hpp's
        // kCollectiveRequest and a count).
        std::map<std::uint64_t, CollectiveCall> started;
        std::uint64_t starts = 0;
        bool replied = false;   // the call being served was answered already (meet())
        std::uint32_t serving = 0;   // the Op of the call being carried out (0: none), since when: stalled()
        std::uint64_t serving_since = 0;   // ps
    };
    // The members of a communicator split (by parent context and split
    // number) as they finish it: real MPI's split waits for every member,
    // so all return together, at the last one's time, each told before
    // the simulation waits for any member's next call.
    struct Meeting {
        std::vector<std::pair<unsigned, mpiwire::Reply>> replies;
        bool released = false;
        sc_core::sc_event done;
    };
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::shared_ptr<Meeting>> meetings_;
    void meet(RdmaProcess& app, unsigned rank, std::pair<std::uint32_t, std::uint64_t> split, std::uint64_t n,
              const mpiwire::Reply& r);
    void program(RdmaProcess& app, unsigned rank);
    // Carry out one call; false at MPI_Finalize.
    bool serve(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const mpiwire::Call& c, mpiwire::Reply& r);
    // serve()'s call of the program's, by its Op (not a non-blocking
    // collective's, nor a request-based one-sided operation's end).
    bool carry_out(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const mpiwire::Call& c, mpiwire::Reply& r);
    // A collective (a non-blocking one started: its request into r).
    void collective(RdmaProcess& app, unsigned rank, const mpiwire::Call& c, mpiwire::Reply& r);
    // Its end: the result checked, packed data given back, logged.
    void collective_end(RdmaProcess& app, unsigned rank, const CollectiveCall& k);
    // A non-blocking collective started, or one's MPI_Wait or MPI_Test:
    // true if `c` is one of these (carried out).
    bool nonblocking_call(RdmaProcess& app, unsigned rank, const mpiwire::Call& c, mpiwire::Reply& r);
    // Non-blocking collective `request` ended (MPI_Wait: waited for; MPI_Test:
    // if it has ended): whether it has (nonblocking.cpp).
    bool nonblocking_end(RdmaProcess& app, unsigned rank, std::uint64_t request, bool wait);
    // The rank's non-blocking collective `request` in flight (its request
    // not freed), or an error.
    CollectiveCall& in_flight(unsigned rank, std::uint64_t request);
    // MPI_Finalize: the collectives whose requests the rank freed waited
    // for; an error if any other is in flight.
    void nonblocking_finalize(RdmaProcess& app, unsigned rank);
    // The rank's listed requests (Rank::ids: point-to-point, non-blocking
    // collectives' and request-based one-sided operations'), as waitany()
    // and its test forms take them (waitany.hpp).
    std::vector<WaitanyRequest> waitany_list(unsigned rank);
    // Whether [va, + len) is a buffer of one of the rank's non-blocking
    // collectives in flight.
    bool in_flight_reads(unsigned rank, std::uint64_t va, std::uint64_t len) const;
    // A v-variant's blocks as rank `rank` sees them, from the values
    // after its Call, into `d`.
    void blocks(unsigned rank, CollectiveData& d) const;
    // Rank `rank`'s collectives on communicator `ctx` (made at first use).
    coll::Communicator& coll_of(RdmaProcess& app, unsigned rank, std::uint32_t ctx);
    // MPI_Comm_split and the calls that are splits (protocol.hpp): the
    // colours and keys exchanged as Open MPI does (an allgather over the
    // parent, then an allreduce that agrees on the context), then the new
    // communicator.
    void split(RdmaProcess& app, unsigned rank, const mpiwire::Call& c, mpiwire::Reply& r);
    // The algorithm of collective `op` over `n` ranks of `bytes` each, as
    // configured (coll::resolve); an error naming `rank` if none fits.
    coll::Algorithm algorithm(unsigned rank, coll::Op op, unsigned n, std::uint64_t bytes) const;
    // One-sided (README "One-sided"): the library's windows (one_sided.hpp),
    // given what they need of this workload.
    struct OneSidedHost;
    std::unique_ptr<OneSidedHost> one_sided_host_;
    std::unique_ptr<MpiOneSided> one_sided_;
    MpiOneSided& one_sided();   // made at the first one-sided call
    void probe(unsigned rank, msg::Endpoint& ep, const mpiwire::Call& c, mpiwire::Reply& r);
    // Whether an open receive has matched (Op::Matched): no time passes.
    void matched(unsigned rank, msg::Endpoint& ep, const mpiwire::Call& c, mpiwire::Reply& r);
    // MPI_Finalize: the sends the program freed complete (as Open MPI's
    // finalize waits for them).
    void end_freed(unsigned rank, msg::Endpoint& ep);
    void point_to_point(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const mpiwire::Call& c, mpiwire::Reply& r);
    // Waitany, Testany, Testall over the rank's listed requests (Rank::ids),
    // of any kinds (waitany.hpp).
    void any_or_all(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const mpiwire::Call& c, mpiwire::Reply& r);
    // A call the simulation does not time: refused, or counted by name.
    void untimed(unsigned rank, const mpiwire::Call& c);
    // The node of rank `peer` of communicator `ctx` as `rank` names it
    // (msg::kAnySource for any), and a tag of `ctx` (or its wildcard).
    unsigned peer_node(unsigned rank, std::uint32_t ctx, std::int32_t peer) const;
    static std::uint64_t tag_of(std::uint32_t ctx, std::int32_t tag);
    // The program's memory since its last call (mpi.program-memory =
    // observed): the mappings it unmapped, then the pages it touched first,
    // made so in the rank's simulated process before its call.
    void program_memory(RdmaProcess& app, unsigned rank, const mpiwire::Call& c);
    // The pages of [va, va + len) the rank's simulated process has not
    // mapped yet, mapped at those addresses.
    void map(RdmaProcess& app, unsigned rank, std::uint64_t va, std::uint64_t len);
    // A receive complete: its status into the reply, and the message into
    // the transfer log (latency from its post).
    void received(RdmaProcess& app, unsigned rank, const msg::Status& st, const Rank::Open& open, mpiwire::Reply& r);
    // A message's data in the simulation: the send buffer filled with a
    // pattern as the program fills it (unless a send in flight shares it),
    // and its bytes kept, in order per (from, to, tag), for the receiver's
    // check (matching is non-overtaking, so the receiver's next message of
    // a (source, tag) is the front).
    void sending(RdmaProcess& app, unsigned rank, const mpiwire::Call& c, std::uint64_t va);
    // A call's buffer (`va`, `len`): the program's, mapped at its address,
    // or (va 0: a non-contiguous datatype, protocol.hpp) one of the
    // library's, taken for request `*req` once known (unpack()).
    std::uint64_t user_or_packed(RdmaProcess& app, unsigned rank, std::uint64_t va, std::uint64_t len,
                                 std::pair<std::uint64_t, std::uint64_t>& pack);
    // The library's buffer of a request given back, a receive's data
    // copied out of it into the program's datatype first.
    void unpack(unsigned rank, msg::Endpoint& ep, std::pair<std::uint64_t, std::uint64_t> pack, bool receive,
                std::uint64_t len);
    bool delivered_intact(RdmaProcess& app, unsigned from, unsigned to, std::uint64_t tag, std::uint64_t va,
                          std::uint64_t len);
    // By (world rank from, world rank to, the message's tag with its context).
    std::map<std::tuple<unsigned, unsigned, std::uint64_t>, std::deque<std::vector<unsigned char>>> in_flight_;
    std::uint64_t scratch(RdmaProcess& app, unsigned rank, std::uint64_t len);
    unsigned node_of(unsigned rank) const { return nodes_.at(rank); }
    void launch();

    MpiLauncher::Settings settings_;
    std::unique_ptr<MpiLauncher> launcher_;
    std::unique_ptr<MpiRecorder> recorder_;   // mpi.record
    std::string record_;   // its directory
    unsigned ranks_ = 0;
    std::vector<RdmaProcess*> apps_;
    std::vector<unsigned> nodes_;
    std::map<unsigned, unsigned> rank_of_node_;
    std::vector<std::unique_ptr<msg::Endpoint>> owned_;
    std::vector<msg::Endpoint*> eps_;
    std::vector<Rank> state_;
    MpiCommunicators comms_{0};
    std::map<std::string, Counter*> untimed_by_name_;
    std::string refusal_;   // the call that stopped the run (mpi.untimed = refuse)
    unsigned done_ = 0;
    sc_core::sc_time last_;
    Counter &calls_, &messages_, &collectives_, &untimed_, &pages_touched_, &unmaps_;
    Counter& stand_ins_;   // reductions of a user-defined MPI_Op (protocol.hpp kStandIn)
    Scalar &compute_us_, &mpi_us_, &app_us_;
};

}   // namespace vrdmasim
