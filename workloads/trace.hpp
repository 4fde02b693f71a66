// trace: an MPI application's communication replayed from its OTF2 trace
// (trace.file; workloads/README.md "Trace replay"). MPI rank r runs as
// process `job` of node r; between its MPI calls it computes as long as the
// trace says (times trace.compute-scale); its point-to-point calls go
// through the two-sided library (msg::Endpoint) with the trace's peers,
// tags and lengths, blocking or not as recorded, its collectives through
// library/collectives, and a recorded program's one-sided calls through
// the mpi workload's windows (workloads/mpi/one_sided.hpp). Every message and every collective's result is
// checked byte for byte. The headline is the application's time to
// solution.
#pragma once

#include <deque>
#include <istream>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "library/collectives/communicator.hpp"
#include "workloads/collective_data.hpp"
#include "workloads/mpi/one_sided.hpp"
#include "workloads/mpi/waitany.hpp"
#include "workloads/program_buffers.hpp"
#include "workloads/trace_reader.hpp"
#include "workloads/workload.hpp"

namespace vrdmasim {

struct CollectiveData;

struct TraceParams {
    TraceParams();
    ParamSet set;
    StringParam file;
    RealParam compute_scale;
    EnumParam mapping;
    StringParam mapping_file;
    EnumParam buffers;
};

// A mapping file (trace.mapping = file) read from `in` (`path` names it in
// errors): one node index among `nodes` a line, rank 0's first, `#`
// comments, blank lines and a UTF-8 byte order mark allowed; exactly
// `ranks` of them. ConfigError (naming trace.mapping-file, the file and
// the line) for anything else. Two ranks on one node are the caller's to
// refuse.
std::vector<unsigned> read_mapping(const Config& c, std::istream& in, const std::string& path, unsigned nodes,
                                   unsigned ranks);

class TraceWorkload : public Workload {
public:
    static void declare_params(ParamRegistry& reg);
    static void declare_metrics(MetricRegistry& reg);
    TraceWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job = 0);
    ~TraceWorkload() override;
    std::string kind() const override { return "trace"; }
    std::string partition_refusal() const override;
    bool finished() const override { return done_ == ranks_; }
    // The progress line's total (the self-check planned-transfers holds it
    // to it): every receive and every rank's part of every collective.
    std::uint64_t planned_transfers() const override { return planned_; }
    // The bytes those transfers deliver, none failing, from the trace alone
    // (computed at construction: check_and_plan): every receive's length,
    // every rank's result of every collective (as its replay sizes it:
    // describe()), and a recorded program's puts and gets (an atomic's
    // operands are no payload). -1 for a trace with a collective the replay
    // cannot size before it runs (it fails at that call).
    std::int64_t planned_bytes() const override { return planned_bytes_; }
    // Whether the replay was at the program's recorded buffers (trace.buffers).
    static std::string findings(const Config& c, const StatRegistry& stats);

private:
    // The constructor's steps: the largest message checked, the collectives'
    // algorithms, each rank's endpoint and program.
    void check_largest(const Config& c, const TraceSummary& summary, const std::vector<RdmaProcess*>& apps,
                       const std::string& file) const;
    // planned_bytes(): check()'s pass over every event (`each`, which adds
    // each event's bytes: event_bytes), then the Score-P v-variants' calls,
    // whose blocks are derived from every member's bytes (vectors_).
    struct BytesPlan {
        std::uint64_t bytes = 0;
        bool known = true;
    };
    TraceSummary check_and_plan(BytesPlan& plan);
    // What the replay logs delivered for event `e` of `rank` (a receive's
    // length, a collective's result at the rank, a put's or get's length),
    // none failing; false for a collective it cannot size before it runs.
    // A Score-P v-variant's blocking call is plan_vectors()'s. Never throws.
    bool event_bytes(unsigned rank, const TraceEvent& e, std::uint64_t& bytes) const;
    bool plan_vectors(std::uint64_t& bytes) const;
    // Collective `end` (CollectiveEnd, CollectiveComplete) as rank `rank` of
    // its `n`-member communicator makes it (its `number`th there: blocks()):
    // its operation, root, sizes and blocks.
    CollectiveData describe(const TraceEvent& end, unsigned n, unsigned rank, std::uint64_t number) const;
    std::vector<std::pair<int, coll::Op>> collective_ops(const Config& c, const TraceSummary& summary,
                                                         const std::string& file) const;
    void build_endpoints(const SimContext& ctx, const TraceSummary& summary,
                         const std::vector<std::pair<int, coll::Op>>& ops, std::size_t nodes);
    // One rank's buffers and counts.
    struct Rank {
        // The application's message buffers (the documented rule): by
        // direction, peer and length, each reused by the next message of
        // its key once the one before has completed; another of the same
        // key when it is still in flight.
        struct Buffer {
            std::uint64_t addr = 0;
            bool busy = false;
        };
        using Key = std::tuple<bool, unsigned, std::uint64_t>;
        std::map<Key, std::vector<Buffer>> buffers;
        // Messages so far per (peer, tag with its communicator's context:
        // coll::Communicator::p2p_tag), each direction: a message's key.
        std::map<std::pair<unsigned, std::uint64_t>, std::uint64_t> sent, received;
        struct Pending {
            msg::Endpoint::Request request = 0;
            bool recv = false;
            unsigned peer = 0;
            std::uint64_t tag = 0;
            std::uint64_t length = 0, buf = 0, key = 0;
            std::uint64_t capacity = 0;   // a receive at a recorded buffer: its length as posted
            sc_core::sc_time posted;   // a receive: when it was posted
            Key owner{};   // the buffer's key, released at completion
        };
        std::map<std::uint64_t, Pending> requests;   // by the trace's requestID
        // Blocking collectives so far, non-blocking ones started, by communicator.
        std::map<std::uint32_t, std::uint64_t> collective, nonblocking;
        // A collective under way: its data, buffers (the library's own
        // given back at its end) and, a non-blocking one's, its request.
        struct Started {
            coll::Communicator* comm = nullptr;
            coll::Communicator::Request request;
            CollectiveData d;
            coll::Algorithm a = coll::Algorithm::Auto;
            unsigned me = 0;   // its rank in the communicator
            std::uint64_t sbuf = 0, sbytes = 0, rbuf = 0, call = 0;
            ProgramBuffers::Pooled own{0, 0}, input{0, 0}, output{0, 0};
            sc_core::sc_time t0;
        };
        std::map<std::uint64_t, Started> started;   // non-blocking collectives in flight, by the trace's requestID
        bool sendrecv = false;   // inside MPI_Sendrecv
        // MPI_Sendrecv: its other half, done with the first (the next
        // event of this kind in the rank's stream).
        bool skip_send = false, skip_recv = false;
        std::pair<std::uint64_t, std::uint64_t> coll_buffers{0, 0};   // send, receive: at their largest
        std::uint64_t coll_len = 0;
        // A trace vrdmasim recorded: the program's buffers (trace.buffers =
        // recorded), the library's own, and the rank's communicator
        // creations so far, by the communicator they are made from.
        ProgramBuffers program;
        std::map<std::uint32_t, std::uint64_t> splits;
        // The test or probe being replayed (its Enter), and the requests it
        // names so far (RequestTest: of MPI_Waitany, MPI_Testany and
        // MPI_Testall, of any kinds, in order).
        TraceEvent entered;
        std::vector<WaitanyRequest> tested;
        // One-sided (a trace vrdmasim recorded): the trace's windows -> the
        // library's (MpiOneSided), the buffers filled so far (their
        // patterns' keys), and the rank's communicators (program()'s).
        std::map<std::uint64_t, std::uint64_t> windows;
        // The request-based operations' open requests: the trace's -> the
        // library's, and whether a test has ended it already.
        std::map<std::uint64_t, std::pair<std::uint64_t, bool>> rma_requests;
        std::uint64_t fills = 0;
        std::map<std::uint32_t, std::unique_ptr<coll::Communicator>>* comms = nullptr;
    };
    // A one-sided call (TraceEvent::Kind::Rma) carried out as the mpi
    // workload carried it out: through the library's windows
    // (workloads/mpi/one_sided.hpp), at the program's addresses.
    void one_sided(RdmaProcess& app, unsigned rank, const TraceEvent& e);
    // Its generalized active target calls (`c`: the call as one_sided() made it).
    void active_target(RdmaProcess& app, unsigned rank, const TraceEvent& e, mpiwire::Call& c);
    // A request-based operation's request tested (op Test) or complete (op
    // Wait), as the mpi workload's MPI_Test and MPI_Wait ended it; a test
    // that ends one the trace goes on testing is an error.
    void rma_request_end(RdmaProcess& app, unsigned rank, const TraceEvent& e);
    struct OneSidedHost;
    std::unique_ptr<OneSidedHost> one_sided_host_;
    std::unique_ptr<MpiOneSided> windows_;
    // A trace vrdmasim recorded: a request an MPI_Test names, tested now;
    // those of MPI_Waitany, Testany, Testall kept for their Leave.
    void request_test(unsigned rank, msg::Endpoint& ep, const TraceEvent& e);
    // At the Leave of a test or probe: what the mpi workload did for it
    // (waitany(), testany(), testall(), Endpoint::probe, iprobe).
    void finish_call(unsigned rank, msg::Endpoint& ep);
    // A trace vrdmasim recorded: a communicator's creation is Open MPI's
    // split, as the mpi workload times it (workloads/mpi/README.md
    // "Communicators"): the members' colours and keys allgathered (8 B),
    // an allreduce of one word, and every member returns when the last has
    // finished (meet()).
    void split(RdmaProcess& app, unsigned rank, coll::Communicator& parent, const TraceEvent& end);
    struct Meeting {
        std::uint64_t arrived = 0;
        bool released = false;
        sc_core::sc_event done;
    };
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::shared_ptr<Meeting>> meetings_;
    void meet(RdmaProcess& app, std::pair<std::uint32_t, std::uint64_t> split, std::uint64_t n);
    // At a recorded buffer (trace.buffers = auto on a recorded trace), as the mpi workload
    // carries a message out: the send buffer filled unless a send in flight
    // shares it, its bytes kept for the receiver's check, in order per
    // (from, to, tag).
    void fill_recorded(RdmaProcess& app, unsigned rank, const Rank::Pending& p, unsigned to);
    bool delivered_recorded(RdmaProcess& app, unsigned from, unsigned to, const Rank::Pending& p, std::uint64_t len);
    std::map<std::tuple<unsigned, unsigned, std::uint64_t>, std::deque<std::vector<unsigned char>>> in_flight_;
    // The trace's buffers: trace.buffers and what the trace carries.
    bool choose_buffers(const Config& c, const TraceSummary& summary, const std::string& file) const;
    // Replays the rank's events in order: computes the gaps between its MPI
    // calls, and does each call's message or collective.
    void program(RdmaProcess& app, unsigned rank);
    // The rank's end: its requests all completed (else an error), its
    // endpoint finalised, the run's end noted.
    void end_program(RdmaProcess& app, unsigned rank, msg::Endpoint& ep);
    // MPI_Send / MPI_Isend: fill a buffer of the key and send it (Isend:
    // the request kept until its MpiIsendComplete).
    void send_message(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const TraceEvent& e);
    Rank::Pending start_send(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const TraceEvent& e);
    // MpiSend, MpiRecv: blocking, or inside MPI_Sendrecv with the other
    // half (read ahead before the region's Leave): sendrecv().
    void blocking(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const TraceEvent& e);
    // MPI_Sendrecv: the receive posted, the send started, both completed.
    void sendrecv(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const TraceEvent& send, const TraceEvent& recv);
    void complete_isend(unsigned rank, msg::Endpoint& ep, const TraceEvent& e);   // MpiIsendComplete: wait
    // MpiIrecvRequest: post the receive its completion (read ahead) describes.
    void post_irecv(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const TraceEvent& e);
    // MPI_Recv, or MPI_Irecv's completion: wait for the message and check it.
    void receive_message(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const TraceEvent& e);
    // A receive of `e` (MpiRecv, MpiIrecv) posted into a poisoned buffer.
    Rank::Pending post_receive(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const TraceEvent& e);
    // Wait for a posted receive, check what came, free its buffer.
    void finish_receive(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const Rank::Pending& p,
                        sc_core::sc_time t0);
    // A free buffer of the key (mapped if none is), marked in flight.
    std::uint64_t acquire(RdmaProcess& app, Rank& r, const Rank::Key& key);
    void release(Rank& r, const Rank::Key& key, std::uint64_t addr);
    void fill(RdmaProcess& app, std::uint64_t buf, std::uint64_t len, std::uint64_t key);
    void check(RdmaProcess& app, std::uint64_t buf, std::uint64_t len, std::uint64_t key, const std::string& what);
    void collective(RdmaProcess& app, Rank& r, coll::Communicator& comm, const TraceEvent& end);
    // A collective of `end` (CollectiveEnd, CollectiveComplete) made ready
    // to run on `comm`, as the mpi workload makes it (a non-blocking one's
    // in-place or shared input in a buffer of the library's own), and its
    // result checked once it has run.
    Rank::Started collective_start(RdmaProcess& app, Rank& r, coll::Communicator& comm, const TraceEvent& end,
                                   bool nonblocking);
    void collective_end(RdmaProcess& app, Rank& r, const Rank::Started& k);
    // Its send and receive buffers into `k`: the program's (recorded), the
    // rank's two grown to the largest (blocking), or pooled ones of its own.
    void collective_buffers(RdmaProcess& app, Rank& r, Rank::Started& k, const TraceEvent& end, bool nonblocking);
    // NonBlockingCollectiveRequest: the collective its completion (read
    // ahead) describes, started; NonBlockingCollectiveComplete: waited for
    // and checked.
    void start_nonblocking(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const TraceEvent& e,
                           std::map<std::uint32_t, std::unique_ptr<coll::Communicator>>& comms);
    void end_nonblocking(RdmaProcess& app, unsigned rank, const TraceEvent& e);
    // A v-variant's or reduce-scatter's blocks as `rank` (of its
    // communicator) sees them, and the bytes its algorithm goes by: as the
    // rank made the call (recorded::kBlocks), or derived from every
    // member's bytes (vectors_; `number`: the call's on its communicator).
    void blocks(CollectiveData& d, unsigned rank, const TraceEvent& end, std::uint64_t number) const;
    std::map<std::pair<std::uint32_t, std::uint64_t>, TraceSummary::Vector> vectors_;
    // A reduction's operation, datatype and bytes into `d` (trace.cpp).
    static void reduction(const TraceEvent& end, CollectiveData& d);
    // A recorded reduction's operation and datatype (recorded::kReduction)
    // into `d`, checked.
    static void recorded_reduction(const TraceEvent& end, CollectiveData& d);
    // The rank's communicator of context `context` (made at its first use).
    coll::Communicator& communicator(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, std::uint32_t context,
                                     std::map<std::uint32_t, std::unique_ptr<coll::Communicator>>& comms);
    std::uint64_t message_key(unsigned from, unsigned to, std::uint64_t tag, std::uint64_t seq) const;
    // The node index of each rank (trace.mapping), among `nodes` nodes.
    std::vector<unsigned> map_ranks(const Config& c, unsigned nodes) const;

    std::unique_ptr<TraceReader> reader_;
    bool recorded_ = false;   // the program's buffers, as the trace records them
    bool openmpi_ = false;   // recorded by vrdmasim: Open MPI's calls as the mpi workload times them
    unsigned ranks_ = 0;
    double scale_ = 1;
    std::vector<RdmaProcess*> apps_;
    std::vector<unsigned> nodes_;
    std::vector<std::unique_ptr<msg::Endpoint>> owned_;
    std::vector<msg::Endpoint*> eps_;
    std::vector<std::unique_ptr<coll::OneSided>> one_sided_;   // by rank (collective.transport = one-sided)
    std::vector<coll::OneSided*> os_;
    std::vector<Rank> state_;
    unsigned done_ = 0;
    std::uint64_t planned_ = 0;
    std::int64_t planned_bytes_ = -1;
    sc_core::sc_time first_, last_;
    Counter &messages_, &collectives_, &events_;
    Scalar &compute_us_, &mpi_us_, &app_us_;
    std::vector<Scalar*> rank_compute_, rank_mpi_;
};

}   // namespace vrdmasim
