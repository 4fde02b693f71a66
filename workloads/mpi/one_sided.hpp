// The library's one-sided windows (workloads/mpi/README.md "One-sided"):
// windows at the program's own addresses, registered as rdma.strategy
// says; MPI_Put as RDMA writes, MPI_Get as RDMA reads, MPI_Accumulate,
// MPI_Get_accumulate, MPI_Fetch_and_op and MPI_Compare_and_swap on 8-byte
// integers as the engine's network atomics; the request-based MPI_Rput,
// MPI_Rget, MPI_Raccumulate and MPI_Rget_accumulate as their operations,
// their requests ended at MPI_Wait and MPI_Test (MPI_Waitany, MPI_Testany
// and MPI_Testall over them and requests of other kinds: waitany.hpp, by
// request_done()); fence, lock/unlock, lock_all, the flushes and
// generalized active target's complete (pscw.cpp) complete them, and the
// locks are words of the library taken with network atomics, as Open
// MPI's osc/rdma component takes them. One piece of code
// for the two workloads that carry one-sided calls out: the mpi workload
// (a program's calls) and the trace workload (a recorded program's trace,
// workloads/mpi/README.md "Record, then replay"); each gives what is its
// own through Host.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "library/collectives/communicator.hpp"
#include "library/messaging/endpoint.hpp"
#include "library/rdma/process.hpp"
#include "workloads/mpi/protocol.hpp"
#include "workloads/mpi/windows.hpp"
#include "workloads/workload.hpp"

namespace vrdmasim {

class MpiOneSided {
public:
    // What the workload carrying the calls out gives: the program's
    // buffers, the rank's collectives, the members' meeting at a window's
    // creation and free, the data of its transfers.
    class Host {
    public:
        virtual ~Host() = default;
        // The pages of [va, va + len) mapped in the rank's process (the program's addresses).
        virtual void map(RdmaProcess& app, unsigned rank, std::uint64_t va, std::uint64_t len) = 0;
        // The library's own buffer of at least `len` bytes.
        virtual std::uint64_t scratch(RdmaProcess& app, unsigned rank, std::uint64_t len) = 0;
        // The world ranks of communicator `ctx`, in its rank order.
        virtual const std::vector<unsigned>& members(unsigned rank, std::uint32_t ctx) const = 0;
        // The rank's collectives on `ctx`, and the algorithm of `op` over `n` ranks of `bytes`.
        virtual coll::Communicator& collectives(RdmaProcess& app, unsigned rank, std::uint32_t ctx) = 0;
        virtual coll::Algorithm algorithm(unsigned rank, coll::Op op, unsigned n, std::uint64_t bytes) const = 0;
        // Every member of `ctx` (`n`) returns when the last has come
        // (`key`: the meeting's), answered `r`.
        virtual void meet(RdmaProcess& app, unsigned rank, std::uint32_t ctx, std::uint64_t key, unsigned n,
                          const mpiwire::Reply& r) = 0;
        // The rank's count of buffers filled (its data patterns' keys).
        virtual std::uint64_t& fills(unsigned rank) = 0;
    };

    // Serving `owner` (its transfers' log, their buffers filled and
    // poisoned as its own); `apps` and `nodes`: each rank's process and
    // node, `eps` each node's endpoint (its CPU copies); `prefix`: the
    // statistics' (workload.mpi. for the mpi workload's job 0).
    MpiOneSided(Host& host, Workload& owner, StatRegistry& stats, std::string prefix,
                const std::vector<RdmaProcess*>& apps, const std::vector<unsigned>& nodes,
                const std::vector<msg::Endpoint*>& eps);

    // Whether `op` is one of the calls this serves.
    static bool serves(mpiwire::Op op) {
        return (op >= mpiwire::Op::WinCreate && op <= mpiwire::Op::FlushAll) ||
               (op >= mpiwire::Op::GetAccumulate && op <= mpiwire::Op::RgetAccumulate);
    }
    // Carry out one-sided call `c` of `rank` (a window's creation: its id
    // into r.request; creation and free return through Host::meet; a
    // request-based operation: its request, kRmaRequest set, into r.request).
    void serve(RdmaProcess& app, unsigned rank, const mpiwire::Call& c, mpiwire::Reply& r);
    // Whether `c` is an MPI_Wait or MPI_Test of a request-based operation's
    // request, which end_request() carries out.
    static bool ends_request(const mpiwire::Call& c) {
        const auto op = static_cast<mpiwire::Op>(c.op);
        return (op == mpiwire::Op::Wait || op == mpiwire::Op::Test) && (c.request & mpiwire::kRmaRequest);
    }
    // MPI_Wait: the operation's pieces still in flight completed (oldest
    // first); MPI_Test: whether every piece's record is written by now
    // (then as MPI_Wait). Complete or not into r.flag.
    void end_request(RdmaProcess& app, unsigned rank, const mpiwire::Call& c, mpiwire::Reply& r);
    // Whether request-based operation `request` of the rank is complete by
    // now (every record of every piece still in flight written; none in
    // flight: complete), without ending it: a look at its own pieces only
    // (Rank::pieces), however many operations the rank has in flight.
    bool request_done(RdmaProcess& app, unsigned rank, std::uint64_t request) const;
    // The rank's oldest operation in flight completed; false if none.
    bool finish_oldest(RdmaProcess& app, unsigned rank);
    // The transfers a put of `len` bytes to another rank makes (its
    // pieces: put()).
    static std::uint64_t put_transfers(const RdmaProcess& app, std::uint64_t len);
    // The library's locked page a rank takes at its first window.
    static constexpr std::uint64_t kPage = 4096;
    // Generalized active target synchronisation (pscw.cpp; README
    // "One-sided"): MPI_Win_post, MPI_Win_start, MPI_Win_complete,
    // MPI_Win_wait and MPI_Win_test (`c`: mpiwire::is_active_target),
    // `group` the post's or start's group as ranks of the window's
    // communicator; MPI_Win_test's answer into r.flag.
    void active_target(RdmaProcess& app, unsigned rank, const mpiwire::Call& c, const std::vector<std::uint64_t>& group,
                       mpiwire::Reply& r);
    // Whether `rank` has an exposure epoch of window `win` open (posted,
    // not yet ended by MPI_Win_wait or MPI_Win_test): a replay's question.
    bool exposing(unsigned rank, std::uint64_t win) const { return active_.at(rank).exposed.count(win) != 0; }
    // What `rank`'s MPI_Win_start or MPI_Win_wait in progress waits for
    // ("the MPI_Win_post of rank 1 on window 2"), "" if none: a deadlock's
    // report (Workload::stalled).
    std::string waiting(unsigned rank) const;
    // A call MPI makes erroneous (an epoch's calls out of MPI's order, MPI
    // 4.1 section 12.5.2): the run stops naming it, refused (exit status 2,
    // Workload::refusal) by the workload that catches it.
    struct Erroneous : std::runtime_error {
        using std::runtime_error::runtime_error;
    };

private:
    // A one-sided operation in flight: an RDMA write (Put), an RDMA read
    // (Get) or a network atomic (Atomic) of one rank, completed by the
    // window's synchronisation.
    struct Rma {
        enum class Kind { Put, Get, Atomic } kind = Kind::Put;
        std::uint64_t win = 0;
        unsigned target = 0;   // world rank
        RdmaProcess::Message put;   // Put: registered and posted by the library's send()
        unsigned slot = 0, slots = 0;   // its records in the rank's page
        std::uint64_t va = 0, len = 0, target_va = 0;   // the origin and target buffers
        std::uint64_t result = 0;   // Atomic: where the old value goes (0: nowhere)
        std::uint64_t request = 0;   // a request-based operation's (kRmaRequest), else 0
        std::vector<unsigned char> data;   // Put: the bytes sent; Get: the target's bytes when posted
        sc_core::sc_time posted;
    };
    // A rank's: the library's locked page (the records of the operations
    // in flight, then the windows' lock words), which of its slots are
    // taken, the operations in flight (oldest first), and the locks held:
    // by (window, target world rank), the lock type or kNoLock
    // (MPI_MODE_NOCHECK: none taken); the request of the request-based
    // operation being posted (0: none), and how many were; of each
    // request-based operation's request with pieces in flight, their
    // records: (first slot, how many) each.
    struct Rank {
        std::uint64_t page = 0;
        std::vector<bool> records_taken, locks_taken;
        std::vector<Rma> rma;
        std::unordered_map<std::uint64_t, std::vector<std::pair<unsigned, unsigned>>> pieces;
        std::map<std::pair<std::uint64_t, unsigned>, std::int32_t> locks;
        std::uint64_t request = 0, requests = 0;
    };
    // serve()'s call, by its operation (a request-based one's: its operation's).
    void operate(RdmaProcess& app, unsigned rank, const mpiwire::Call& c, mpiwire::Reply& r);
    void create(RdmaProcess& app, unsigned rank, const mpiwire::Call& c, mpiwire::Reply& r);
    void free(RdmaProcess& app, unsigned rank, const mpiwire::Call& c, const mpiwire::Reply& r);
    void put_or_get(RdmaProcess& app, unsigned rank, const mpiwire::Call& c);
    // A put's origin filled and posted (in pieces of whole chunks if it
    // needs many records), each piece an operation in flight like `op`.
    void put(RdmaProcess& app, unsigned rank, const mpiwire::Call& c, Rma& op);
    // The length of a put's pieces: at most half the records each.
    static std::uint64_t put_piece(const RdmaProcess& app, std::uint64_t len);
    void atomics(RdmaProcess& app, unsigned rank, const mpiwire::Call& c);
    // A network atomic in flight on 8 bytes of the target's window.
    void atomic(RdmaProcess& app, unsigned rank, std::uint64_t win, unsigned target, std::uint64_t target_va,
                AtomicOp op, std::uint64_t operand, std::uint64_t compare, std::uint64_t result);
    // Complete the rank's operations on window `win` (to world rank
    // `target` only, unless it is kAllTargets), oldest first.
    static constexpr unsigned kAllTargets = ~0u;
    void complete(RdmaProcess& app, unsigned rank, std::uint64_t win, unsigned target);
    void finish(RdmaProcess& app, unsigned rank, Rma& op);
    // Operation `op` in flight from now (its records in its request's
    // pieces, if it has one).
    void in_flight(Rank& me, Rma&& op);
    // `n` contiguous record slots of the rank's page, the oldest
    // operations completed until they are free: the first one's index.
    unsigned slots(RdmaProcess& app, unsigned rank, unsigned n);
    // The library's lock on window `win` of world rank `target`, taken
    // and given back with network atomics on its lock word, as Open MPI's
    // osc/rdma does.
    void lock(RdmaProcess& app, unsigned rank, std::uint64_t win, unsigned target, std::int32_t type, bool check);
    void unlock(RdmaProcess& app, unsigned rank, std::uint64_t win, unsigned target);
    // One network atomic, waited for: the old value.
    std::uint64_t atomic_now(RdmaProcess& app, unsigned rank, unsigned node, std::uint64_t addr, AtomicOp op,
                             std::uint64_t operand, std::uint64_t compare);
    // The lock word of window `win` in world rank `target`'s memory.
    std::uint64_t lock_word(unsigned rank, std::uint64_t win, unsigned target) const;
    Counter& counter(const char* name, const char* help);
    // A rank's generalized active target epochs (pscw.cpp), by window: the
    // exposure epochs it posted (the other origins, as world ranks; the
    // receives of their "complete" notifications and the sends of its
    // "post" ones; whether the rank is an origin itself), the access epochs
    // it started (the targets); its posts to itself no start has taken yet
    // and its completes to itself no wait or test has (osc/rdma's counts in
    // its own state); the library's words the notifications are sent from
    // (the last) and received into (one a world rank); what a start or wait
    // in progress waits for (waiting()).
    struct Exposure {
        std::vector<unsigned> origins;
        std::vector<std::uint64_t> completes, posts;
        bool self = false;
    };
    struct ActiveTarget {
        std::map<std::uint64_t, Exposure> exposed;
        std::map<std::uint64_t, std::vector<unsigned>> access;
        std::map<std::uint64_t, unsigned> self_posts, self_completes;
        std::uint64_t words = 0;
        std::string waiting;
    };
    void post(RdmaProcess& app, unsigned rank, const mpiwire::Call& c, const std::vector<unsigned>& origins);
    void start(RdmaProcess& app, unsigned rank, const mpiwire::Call& c, const std::vector<unsigned>& targets);
    void complete_access(RdmaProcess& app, unsigned rank, std::uint64_t win);
    // MPI_Win_wait (`test` false) or MPI_Win_test: whether the exposure
    // epoch ended.
    bool end_exposure(RdmaProcess& app, unsigned rank, std::uint64_t win, bool test);
    // A notification's tag, and the word it comes into from world rank `from`.
    std::uint64_t notification_tag(unsigned rank, std::uint64_t win, bool complete) const;
    std::uint64_t notification_word(RdmaProcess& app, unsigned rank, unsigned from);

    Host& host_;
    Workload& owner_;
    TransferLog& log_;
    StatRegistry& stats_;
    std::string prefix_;
    std::vector<RdmaProcess*> apps_;
    std::vector<unsigned> nodes_;
    std::vector<msg::Endpoint*> eps_;
    std::vector<Rank> ranks_;
    MpiWindows windows_;
    std::map<std::string, Counter*> counters_;   // made at the first one-sided call
    std::vector<ActiveTarget> active_;   // by rank (pscw.cpp)
};

}   // namespace vrdmasim
