// coll::Communicator: MPI-style collectives over the two-sided library
// (msg::Endpoint), on buffers of the simulated process (README.md). Ranks
// are a job's processes, one per node, in the order given; every rank
// calls the same collective with the same arguments, as in MPI. Data move
// as messages of the endpoint (eager or rendezvous as msg.* says, through
// the registration strategy, the guard and the completion mode of the RDMA
// library); a reduction computes its operation on its elements
// (coll::Reduction, reduction.hpp) on the rank's core at
// collective.reduce-rate, a local copy runs at vm.copy-rate.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "library/collectives/one_sided.hpp"
#include "library/collectives/reduction.hpp"
#include "library/messaging/endpoint.hpp"
#include "library/rdma/process.hpp"
#include "src/core/lazy_event.hpp"

namespace vrdmasim::coll {

enum class Op {
    Barrier,
    Bcast,
    Reduce,
    Allreduce,
    Allgather,
    Alltoall,
    Scan,
    Exscan,
    Gather,
    Scatter,
    Gatherv,
    Scatterv,
    Allgatherv,
    Alltoallv,
    ReduceScatter,
    ReduceScatterBlock
};
enum class Algorithm {
    Auto,
    Dissemination,
    Binomial,
    RecursiveDoubling,
    Ring,
    Rabenseifner,
    Pairwise,
    Bruck,
    Linear,
    RecursiveHalving
};

// A v-variant's blocks (MPI_Gatherv's recvcounts and displs, ...) in
// bytes, by rank of the communicator: block r is counts[r] bytes at
// displs[r] of the buffer.
struct Blocks {
    std::vector<std::uint64_t> counts, displs;
    // The bytes the blocks span from the buffer's start (the largest end).
    std::uint64_t span() const;
};
// Whether `op` has a root (bcast, reduce, gather, scatter, gatherv, scatterv).
inline bool has_root(Op op) {
    return op == Op::Bcast || op == Op::Reduce || op == Op::Gather || op == Op::Scatter || op == Op::Gatherv ||
           op == Op::Scatterv;
}
// Whether `op` is a v-variant (per-rank counts and displacements).
inline bool is_vector(Op op) {
    return op == Op::Gatherv || op == Op::Scatterv || op == Op::Allgatherv || op == Op::Alltoallv;
}
// Whether a rank's part of `op` is blocks of its own (coll::Blocks): the
// v-variants', reduce-scatter's (its vector's blocks, one a rank).
inline bool takes_blocks(Op op) { return is_vector(op) || op == Op::ReduceScatter || op == Op::ReduceScatterBlock; }

Op op_of(const std::string& name);
// Whether `op` is a reduction (reduce, allreduce, scan, exscan,
// reduce-scatter: a coll::Reduction on elements).
inline bool is_reduction(Op op) {
    return op == Op::Reduce || op == Op::Allreduce || op == Op::Scan || op == Op::Exscan || op == Op::ReduceScatter ||
           op == Op::ReduceScatterBlock;
}
Algorithm algorithm_of(const std::string& name);
const char* name_of(Op op);
const char* name_of(Algorithm a);
// The algorithm `a` stands for (Auto: chosen by size as MPICH does) for
// `op` among `ranks` ranks contributing `bytes` each; empty with `why` set
// when `a` does not do `op` (or not for this many ranks).
bool resolve(Op op, Algorithm a, unsigned ranks, std::uint64_t bytes, Algorithm& chosen, std::string& why);
// The parameter that chooses `op`'s algorithm (collective.allreduce-,
// allgather-, alltoall-algorithm; nullptr for a collective with one), and
// the algorithm it chooses in `c` (Auto for those).
const EnumParam* algorithm_param(Op op);
Algorithm configured_algorithm(const Config& c, Op op);

class Communicator {
public:
    // `nodes[i]`: the node of rank i; this process is rank `rank`. Its
    // steps go as messages of `ep` (collective.transport = two-sided) or
    // as writes of `os` (one-sided), set up and connected by the caller.
    Communicator(const SimContext& ctx, RdmaProcess& app, msg::Endpoint& ep, std::vector<unsigned> nodes,
                 unsigned rank);
    Communicator(const SimContext& ctx, RdmaProcess& app, OneSided& os, std::vector<unsigned> nodes, unsigned rank);
    // A communicator over some of the ranks (MPI_Comm_split, MPI_Comm_dup):
    // `members[i]` is the rank of `os` (the index into the endpoint's
    // nodes) that is rank i here, this process rank `rank` of them.
    // `context` (MPI's context id: below kContexts, 0 for the one over
    // every rank) keeps its messages from matching any other
    // communicator's between the same ranks (README.md "Communicators").
    struct Group {
        std::vector<unsigned> members;
        std::uint32_t context = 0;
    };
    static constexpr std::uint32_t kContexts = 1u << 15;
    Communicator(const SimContext& ctx, RdmaProcess& app, msg::Endpoint& ep, const std::vector<unsigned>& nodes,
                 const Group& group, unsigned rank);
    Communicator(const SimContext& ctx, RdmaProcess& app, OneSided& os, const std::vector<unsigned>& nodes,
                 const Group& group, unsigned rank);
    // The tag of a point-to-point message of tag `tag` on communicator
    // `context`: the contexts' tags and the collectives' never meet.
    static std::uint64_t p2p_tag(std::uint32_t context, std::uint32_t tag) {
        return (std::uint64_t(context) << 48) | tag;
    }

    unsigned size() const { return static_cast<unsigned>(nodes_.size()); }
    unsigned rank() const { return rank_; }
    // The ranks rank `rank` of `ranks` exchanges messages with in `op` by
    // algorithm `a` (Auto: by any algorithm auto may choose), whatever the
    // root: for an endpoint that sets up only the peers it needs.
    static std::set<unsigned> partners(Op op, Algorithm a, unsigned ranks, unsigned rank);
    // Scratch memory a collective needs (mapped at the first call that
    // needs it, then kept): for the workloads' fit checks.
    static std::uint64_t scratch_bytes(Op op, unsigned ranks, std::uint64_t bytes);

    void barrier(Algorithm a);
    // `bytes` at `buf` of `root` to every rank's `buf`.
    void bcast(std::uint64_t buf, std::uint64_t bytes, unsigned root, Algorithm a);
    // The reductions: `red` (its operation, on elements of its type) of
    // `count` elements (not bytes: red.element_bytes() each) of every
    // rank's `sbuf` into `rbuf` of `root` (reduce) or of every rank
    // (allreduce). `sbuf` is not written. A reduction MPI does not define
    // (Reduction::valid) is a std::invalid_argument.
    void reduce(std::uint64_t sbuf, std::uint64_t rbuf, std::uint64_t count, unsigned root, Algorithm a,
                const Reduction& red);
    void allreduce(std::uint64_t sbuf, std::uint64_t rbuf, std::uint64_t count, Algorithm a, const Reduction& red);
    // `red` of `count` elements of ranks 0 to this one's (scan) or to the
    // one before (exscan: rank 0's `rbuf` is left as it is) into `rbuf`,
    // by MPICH's recursive doubling.
    void scan(std::uint64_t sbuf, std::uint64_t rbuf, std::uint64_t count, bool exclusive, Algorithm a,
              const Reduction& red);
    // Every rank's `bytes` at `sbuf` into block r (of `bytes`) of every
    // rank's `rbuf`.
    void allgather(std::uint64_t sbuf, std::uint64_t rbuf, std::uint64_t bytes, Algorithm a);
    // Every rank's `bytes` at `sbuf` into block r (of `bytes`) of `rbuf` of
    // `root` (`rbuf` is not used elsewhere), by MPICH's binomial tree.
    void gather(std::uint64_t sbuf, std::uint64_t rbuf, std::uint64_t bytes, unsigned root, Algorithm a);
    // Block r (of `bytes`) of `sbuf` of `root` to rank r's `rbuf` (`sbuf`
    // is not used elsewhere), by MPICH's binomial tree.
    void scatter(std::uint64_t sbuf, std::uint64_t rbuf, std::uint64_t bytes, unsigned root, Algorithm a);
    // Block j of rank r's `sbuf` to block r of rank j's `rbuf`.
    void alltoall(std::uint64_t sbuf, std::uint64_t rbuf, std::uint64_t bytes, Algorithm a);
    // The v-variants (vector.cpp): blocks of each rank's own length, at
    // displacements of the caller's. `sbytes` at `sbuf` of every rank into
    // block r of `recv` in `rbuf` of `root` (`recv` is the root's alone),
    // by MPICH's and Open MPI's linear algorithm.
    void gatherv(std::uint64_t sbuf, std::uint64_t sbytes, std::uint64_t rbuf, const Blocks& recv, unsigned root,
                 Algorithm a);
    // Block r of `send` in `sbuf` of `root` (`send` is the root's alone)
    // to rank r's `rbuf` (`rbytes` there), linear.
    void scatterv(std::uint64_t sbuf, const Blocks& send, std::uint64_t rbuf, std::uint64_t rbytes, unsigned root,
                  Algorithm a);
    // Every rank's `sbytes` at `sbuf` into block r of `recv` in every
    // rank's `rbuf`, around the ring.
    void allgatherv(std::uint64_t sbuf, std::uint64_t sbytes, std::uint64_t rbuf, const Blocks& recv, Algorithm a);
    // Block j of `send` in rank r's `sbuf` to block r of `recv` in rank
    // j's `rbuf`, pairwise.
    void alltoallv(std::uint64_t sbuf, const Blocks& send, std::uint64_t rbuf, const Blocks& recv, Algorithm a);
    // Reduce-scatter (reduce_scatter.cpp): every rank's `sbuf` holds blocks
    // of `counts[r]` elements of red.type one after the other; `red` of
    // block r into rank r's `rbuf` (MPI_Reduce_scatter; _block: every
    // count the same), by MPICH's recursive halving or pairwise exchange.
    void reduce_scatter(std::uint64_t sbuf, std::uint64_t rbuf, const std::vector<std::uint64_t>& counts, Algorithm a,
                        const Reduction& red);

    // Non-blocking collectives (nonblocking.cpp; README.md "Non-blocking
    // collectives"), MPI_Iallreduce's and the others': start() begins
    // `call`, any one of the collectives above made on a communicator of
    // the call's own (this one's ranks and endpoint, the call's tag in
    // this one's order, scratch of its own), in a thread of the library's
    // for this process, and returns at once, nothing spent; the collective
    // runs in simulated time while the caller goes on (asynchronous
    // progress, as an MPI library's progress thread or an offloading NIC
    // gives), its sums and copies on the node's cores. wait() returns when
    // it has ended (at once if it had), test() says whether it has. Every
    // rank starts the same collectives in the same order, blocking and
    // non-blocking interleaved as it likes (MPI's rule); this communicator
    // must outlive the requests. The two-sided transport only.
    struct Pending {
        bool done = false;
        LazyEvent ended;
    };
    using Request = std::shared_ptr<Pending>;
    Request start(const std::function<void(Communicator&)>& call);
    void wait(const Request& r);
    bool test(const Request& r);
    // Why non-blocking collectives are not built for the one-sided transport
    // (a workload's refusal names collective.transport with it).
    static const char* kOneSidedNonBlocking;

    // Messages and bytes this rank sent, sums it did (statistics of the
    // caller's choosing read these).
    std::uint64_t messages() const { return messages_; }
    std::uint64_t sent_bytes() const { return sent_bytes_; }
    std::uint64_t reduced_bytes() const { return reduced_bytes_; }

private:
    Communicator(const SimContext& ctx, RdmaProcess& app, msg::Endpoint* ep, OneSided* os, std::vector<unsigned> nodes,
                 unsigned rank);
    Communicator(const SimContext& ctx, RdmaProcess& app, msg::Endpoint* ep, OneSided* os,
                 const std::vector<unsigned>& nodes, const Group& group, unsigned rank);
    // One exchange: send [sbuf, +slen) to rank `to`, receive [rbuf, +rlen)
    // from rank `from` (MPI_Sendrecv); either side may be absent (-1).
    void exchange(int to, std::uint64_t sbuf, std::uint64_t slen, int from, std::uint64_t rbuf, std::uint64_t rlen);
    void send(unsigned to, std::uint64_t buf, std::uint64_t len) { exchange(static_cast<int>(to), buf, len, -1, 0, 0); }
    void recv(unsigned from, std::uint64_t buf, std::uint64_t len) {
        exchange(-1, 0, 0, static_cast<int>(from), buf, len);
    }
    // Messages posted all at once and waited for together (MPICH's linear
    // algorithms: irecvs or isends, then a waitall), each (rank, buffer,
    // length); on the one-sided transport one after the other, in order.
    struct Part {
        unsigned rank;
        std::uint64_t buf, len;
    };
    void post_all(const std::vector<Part>& parts, bool receive);
    // Gatherv's and scatterv's linear algorithm (vector.cpp).
    void linear(bool gather, std::uint64_t buf, const Blocks& blocks, std::uint64_t own, std::uint64_t own_bytes,
                unsigned root);
    // A received message's status against the length expected.
    void check_received(int from, const msg::Status& st, std::uint64_t rlen) const;
    // dst[i] = src[i] op dst[i] for `count` elements of `red`, on this
    // rank's core (collective.reduce-rate over their bytes).
    void combine(std::uint64_t dst, std::uint64_t src, std::uint64_t count, const Reduction& red);
    // `red` checked at a reduction's start (Reduction::valid).
    static void check(const Reduction& red);
    // A local copy on this rank's core.
    void copy(std::uint64_t dst, std::uint64_t src, std::uint64_t bytes);
    std::uint64_t scratch(std::uint64_t bytes);
    std::uint64_t next_tag();
    std::uint64_t current_tag() const;   // the call's that next_tag() began
    // The parts of allreduce.
    // (Counts and offsets are in elements of `red`; a block of an
    // algorithm's is whole elements.)
    void allreduce_doubling(std::uint64_t acc, std::uint64_t count, const Reduction& red);
    void allreduce_ring(std::uint64_t acc, std::uint64_t count, const Reduction& red);
    void allreduce_rabenseifner(std::uint64_t acc, std::uint64_t count, const Reduction& red);
    // The parts of reduce-scatter (element counts and offsets by rank).
    void reduce_scatter_pairwise(std::uint64_t sbuf, std::uint64_t rbuf, const std::vector<std::uint64_t>& counts,
                                 const std::vector<std::uint64_t>& displs, const Reduction& red);
    void reduce_scatter_halving(std::uint64_t sbuf, std::uint64_t rbuf, const std::vector<std::uint64_t>& counts,
                                const std::vector<std::uint64_t>& displs, const Reduction& red);
    // Non-power-of-two ranks (MPICH): the first 2 * rem ranks fold pairwise
    // into rem, so pof2 ranks remain; new_rank is -1 for those that sit out.
    // (`tmp`: where the odd ones receive; 0: the scratch.)
    int fold(std::uint64_t acc, std::uint64_t count, unsigned pof2, const Reduction& red, std::uint64_t tmp = 0);
    void unfold(std::uint64_t acc, std::uint64_t count, unsigned pof2, const Reduction& red);
    unsigned real_rank(unsigned new_rank, unsigned pof2) const;

    const SimContext& ctx_;
    RdmaProcess& app_;
    msg::Endpoint* const ep_;   // two-sided
    OneSided* const os_;   // one-sided
    const std::vector<unsigned> nodes_;   // by rank here: its node
    std::vector<unsigned> members_;   // by rank here: its rank of os_ (empty: the same)
    const unsigned rank_;
    const std::uint64_t context_;   // shifted into the tags' top bits
    const double reduce_rate_, copy_rate_;   // bytes per second
    std::uint64_t scratch_ = 0, scratch_len_ = 0;
    std::uint64_t call_ = 0, step_ = 0;
    // A non-blocking call's own communicator: the one it was started on
    // (its counters and scratch go back there at the end), and whether its
    // one collective has taken the call's tag yet.
    Communicator* started_on_ = nullptr;
    bool tag_taken_ = false;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> spare_scratch_;   // ended calls' {address, length}
    std::uint64_t threads_ = 0;   // non-blocking calls started (their threads' names)
    // collective.progress = in-call: a non-blocking call's next round waits
    // for the program's next library call (libnbc).
    const bool in_call_;
    // The end of a round (an exchange, a linear algorithm's messages): in a
    // non-blocking call under in-call progress, what follows waits for the
    // program to be inside the library.
    void round_ended() {
        if (started_on_ && in_call_) app_.await_library_call();
    }
    std::uint64_t messages_ = 0, sent_bytes_ = 0, reduced_bytes_ = 0;
    std::vector<unsigned char> a_, b_;   // host copies for sums and copies
};

}   // namespace vrdmasim::coll
