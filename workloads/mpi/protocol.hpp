// The wire between an MPI program's processes and the simulation
// (workloads/mpi/README.md "The protocol"): each rank's preloaded library
// (preload/) sends one Call per MPI call the simulation times, and waits
// for its Reply. Fixed-size records over a Unix stream socket, in host
// byte order (both ends run on this machine). No SystemC here: the
// preloaded library includes this file too.
#pragma once

#include <cstddef>
#include <cstdint>

namespace vrdmasim {
namespace mpiwire {

// The environment the simulation gives each rank's process.
constexpr const char* kSocketEnv = "VRDMASIM_MPI_SOCKET";   // the simulation's socket
constexpr const char* kComputeEnv = "VRDMASIM_MPI_COMPUTE";   // "none", "fixed:<ps>", "measured:<scale>"
constexpr const char* kUntimedEnv = "VRDMASIM_MPI_UNTIMED";   // "refuse" or "count"
constexpr const char* kMemoryEnv = "VRDMASIM_MPI_MEMORY";   // "observed" or "buffers-only"
constexpr std::uint32_t kVersion = 14;

enum class Op : std::uint32_t {
    Hello = 1,   // peer = rank, tag = size, bytes = host pid
    Finalize,
    Send,   // peer, tag, va, bytes
    Recv,   // peer (or kAnySource), tag (or kAnyTag), va, bytes: the Reply says what matched
    Isend,   // as Send; the Reply's request names it
    Irecv,   // as Recv; the Reply's request names it
    Wait,   // request
    Test,   // request; the Reply's flag: complete
    Sendrecv,   // send: peer, tag, va, bytes; receive: peer2, tag2, va2, bytes2
    Barrier,
    Bcast,   // root, va, bytes
    Reduce,   // root, va (send), va2 (receive), bytes
    Allreduce,   // va (send), va2 (receive), bytes
    Allgather,   // va (send), va2 (receive), bytes (each rank's block)
    Alltoall,   // va (send), va2 (receive), bytes (each pair's block)
    Untimed,   // name: a call the simulation does not time; tag kCannotRun, kErroneous: refused
    Abort,   // tag = the error code
    // Of `count` requests, their ids following the Call: which one is
    // complete (Waitany: waited for; Testany: progressed once), its index in
    // the Reply's request (the flag says whether there is one), or whether
    // all are (Testall: the flag). None of them is ended: a Wait on each
    // complete one follows (it returns at once), with its status.
    Waitany,
    Testany,
    Testall,
    Probe,   // peer (or kAnySource), tag (or kAnyTag): the Reply says what message a receive would take
    Iprobe,   // as Probe, progressed once; the flag: there is one
    // A new communicator from `comm`: peer = this rank's colour (or
    // kUndefinedColor), tag = its key. The Reply's request is the new
    // communicator's context (kNoComm for none), source this rank's rank
    // in it, bytes its size. MPI_Comm_dup, MPI_Comm_create and
    // MPI_Cart_create are splits too (README "Communicators").
    CommSplit,
    Scan,   // va (send), va2 (receive), bytes
    Exscan,   // as Scan
    // Not an MPI call (no time passes, no call counted): whether receive
    // `request` has matched yet (the flag), and what (source, tag, bytes).
    // The library posts a receive to real MPI only once the simulation
    // has matched it (README "Receives").
    Matched,
    Cancel,   // MPI_Cancel of receive `request`; the flag: withdrawn (then complete, cancelled)
    // root, va (send; MPI_IN_PLACE: the root's block in its receive
    // buffer), va2 (the root's receive; 0 elsewhere), bytes (each rank's block)
    Gather,
    // root, va (the root's send; 0 elsewhere), va2 (receive; MPI_IN_PLACE:
    // the root's block in its send buffer), bytes (each rank's block)
    Scatter,
    // MPI_Request_free of `request`: a send completes on its own (waited for
    // at MPI_Finalize); a receive goes on, and the library ends it with a
    // Wait at MPI_Finalize if it has not ended before.
    RequestFree,
    // One-sided (README "One-sided"). A window of `comm`: the Reply's
    // request is its id, which the other calls name in `win`. Ranks
    // (`peer`) are ranks of the window's communicator; a target address
    // is the target's base + disp x its disp_unit + offset.
    WinCreate,   // va = base, bytes = size, tag = disp_unit (MPI_Win_create, MPI_Win_allocate)
    WinFree,   // win
    Put,   // win, peer, va and bytes (the origin buffer), disp, offset
    Get,   // as Put; the origin buffer is the destination
    Accumulate,   // as Put, 8-byte elements each a network atomic: amo
    FetchOp,   // one 8-byte element: win, peer, va (operand; 0: none), va3 (result), disp, offset, amo
    CompareSwap,   // one 8-byte element: win, peer, va (new value), va2 (compare), va3 (result), disp, offset
    Fence,   // win
    Lock,   // win, peer, tag = kExclusive or kShared, root = the assert (kNoCheck: no lock taken)
    Unlock,   // win, peer
    LockAll,   // win, root = the assert
    UnlockAll,   // win
    Flush,   // win, peer (MPI_Win_flush, MPI_Win_flush_local)
    FlushAll,   // win (MPI_Win_flush_all, MPI_Win_flush_local_all)
    // The v-variants: root (Gatherv, Scatterv), va (send), va2 (receive; 0
    // where MPI uses none), bytes (this rank's block sent: Gatherv,
    // Allgatherv; received: Scatterv); the blocks follow the Call, `count`
    // = 4 n values for a communicator of n ranks, in bytes, as this rank
    // sees them: the lengths it sends to each rank, their offsets in va,
    // the lengths it receives from each rank, their offsets in va2
    // (coll::Blocks; README "What is timed"). MPI_IN_PLACE (a gatherv's or
    // scatterv's root, an allgatherv's rank): va (va2, scatterv) is the
    // rank's block in its other buffer, at its place.
    Gatherv,
    Scatterv,
    Allgatherv,
    Alltoallv,
    // MPI_Reduce_scatter, MPI_Reduce_scatter_block: va (send), va2
    // (receive), bytes (the vector), reduce_op, datatype, elements (the
    // vector's); the blocks, in bytes, follow as a
    // v-variant's: the vector's blocks (lengths, offsets), then this rank's
    // result (its length at its rank, offset 0).
    ReduceScatter,
    ReduceScatterBlock,
    // Non-blocking collectives (README "Non-blocking collectives"): each
    // as its blocking one (the same fields and values following); the
    // Reply's request names it (kCollectiveRequest set), for Wait and Test
    // to end (Testany and Testall too; Waitany not: README).
    Ibarrier,
    Ibcast,
    Ireduce,
    Iallreduce,
    Iallgather,
    Ialltoall,
    Iscan,
    Iexscan,
    Igather,
    Iscatter,
    Igatherv,
    Iscatterv,
    Iallgatherv,
    Ialltoallv,
    IreduceScatter,
    IreduceScatterBlock,
    // MPI_Get_accumulate: as Accumulate (va: the origin, 0 for MPI_NO_OP;
    // bytes: the target's), each element's old value into va3 (the result,
    // contiguous, as long): a fetching network atomic per 8-byte element.
    GetAccumulate,
    // The request-based operations (MPI_Rput, MPI_Rget, MPI_Raccumulate,
    // MPI_Rget_accumulate): each as its operation's Call (kRequestRma);
    // the Reply's request names it (kRmaRequest set), for Wait and Test to
    // end at the operation's completion.
    Rput,
    Rget,
    Raccumulate,
    RgetAccumulate,
    // Generalized active target synchronisation (README "One-sided"):
    // MPI_Win_post and MPI_Win_start on win, root = the assert (kNoCheck:
    // MPI_MODE_NOCHECK), the group's ranks in the window's communicator
    // following the Call (`count` of them); MPI_Win_complete, MPI_Win_wait
    // and MPI_Win_test on win (the Reply's flag: the exposure epoch ended).
    WinPost,
    WinStart,
    WinComplete,
    WinWait,
    WinTest,
};

// A non-blocking collective's request: apart from the point-to-point ones.
constexpr std::uint64_t kCollectiveRequest = std::uint64_t(1) << 63;
// A request-based one-sided operation's: apart from both.
constexpr std::uint64_t kRmaRequest = std::uint64_t(1) << 62;
// In a table of pairs of Ops, the other of `op`'s pair, looked up by its
// side `from` (0 or 1); `op` itself if it is in none.
template <std::size_t N>
constexpr Op paired(const Op (&table)[N][2], Op op, int from) {
    for (const auto& pair : table)
        if (pair[from] == op) return pair[1 - from];
    return op;
}
// Each request-based one-sided operation and its operation.
constexpr Op kRequestRma[][2] = {
    {Op::Rput, Op::Put},
    {Op::Rget, Op::Get},
    {Op::Raccumulate, Op::Accumulate},
    {Op::RgetAccumulate, Op::GetAccumulate},
};
// The operation of request-based `op`, or `op` itself.
constexpr Op operation_of(Op op) { return paired(kRequestRma, op, 0); }
// The request-based operation of `op` (MPI_Rput's of MPI_Put), or `op` itself.
constexpr Op request_based(Op op) { return paired(kRequestRma, op, 1); }
// Each non-blocking collective and its blocking one.
constexpr Op kNonBlocking[][2] = {
    {Op::Ibarrier, Op::Barrier},
    {Op::Ibcast, Op::Bcast},
    {Op::Ireduce, Op::Reduce},
    {Op::Iallreduce, Op::Allreduce},
    {Op::Iallgather, Op::Allgather},
    {Op::Ialltoall, Op::Alltoall},
    {Op::Iscan, Op::Scan},
    {Op::Iexscan, Op::Exscan},
    {Op::Igather, Op::Gather},
    {Op::Iscatter, Op::Scatter},
    {Op::Igatherv, Op::Gatherv},
    {Op::Iscatterv, Op::Scatterv},
    {Op::Iallgatherv, Op::Allgatherv},
    {Op::Ialltoallv, Op::Alltoallv},
    {Op::IreduceScatter, Op::ReduceScatter},
    {Op::IreduceScatterBlock, Op::ReduceScatterBlock},
};
// The blocking collective of non-blocking `op`, or `op` itself.
constexpr Op blocking_of(Op op) { return paired(kNonBlocking, op, 0); }
constexpr bool is_nonblocking(Op op) { return blocking_of(op) != op; }
// Whether `op` is one of the generalized active target calls (post, start,
// complete, wait, test).
constexpr bool is_active_target(Op op) { return op >= Op::WinPost && op <= Op::WinTest; }
// The non-blocking collective of blocking `op` (`op` if it has none).
constexpr Op nonblocking_of(Op op) { return paired(kNonBlocking, op, 1); }
// Whether `op` is a collective call (MPI 4.1 chapter 6, the library's
// collectives carry it out; collective_calls.hpp says which): each,
// blocking or not, is in kNonBlocking.
constexpr bool is_collective(Op op) { return is_nonblocking(op) || nonblocking_of(op) != op; }

// Untimed's tag: the call cannot run untimed either (it would break what
// the library does underneath): refused whatever mpi.untimed says.
constexpr std::int32_t kCannotRun = 1;
// Untimed's tag: the call is erroneous in MPI (its name says by which
// rule): refused whatever mpi.untimed says.
constexpr std::int32_t kErroneous = 2;
// The network atomic an Accumulate or FetchOp element gets (`amo`).
enum class Amo : std::uint32_t {
    Add = 1,   // MPI_SUM: fetch-and-add
    Replace,   // MPI_REPLACE: swap
    NoOp,   // MPI_NO_OP: fetch-and-add of 0 (the old value read atomically)
};
constexpr std::int32_t kExclusive = 1, kShared = 0;   // a Lock's tag
constexpr std::int32_t kNoCheck = 1;   // a Lock's or LockAll's root: MPI_MODE_NOCHECK

constexpr std::int32_t kAnySource = -1;
constexpr std::int32_t kAnyTag = -1;
constexpr std::int32_t kUndefinedColor = -32766;   // MPI_UNDEFINED
constexpr std::uint32_t kNoComm = 0xffffffffu;
// MPI_COMM_SELF of world rank r: context kSelfTop - 1 - r (the contexts of
// new communicators count up from 1, below every rank's).
constexpr std::uint32_t kSelfTop = 1u << 15;
constexpr std::uint32_t self_context(std::uint32_t world_rank) { return kSelfTop - 1 - world_rank; }

// A buffer's va is where its data lie in the program's memory; 0 with
// bytes above 0 says the datatype is not contiguous: the library packs the
// data into (or unpacks them from) a buffer of its own, as Open MPI's
// convertor does (README "Datatypes").
struct Call {
    std::uint32_t op = 0;
    std::uint32_t comm = 0;   // the communicator's context (0: MPI_COMM_WORLD); ranks are ranks in it
    std::int32_t peer = 0, tag = 0, peer2 = 0, tag2 = 0, root = 0;
    std::uint64_t va = 0, bytes = 0, va2 = 0, bytes2 = 0;
    std::uint64_t request = 0;
    // The values that follow: Waitany's, Testany's, Testall's request ids,
    // a v-variant's blocks, an MPI_Win_post's or MPI_Win_start's group.
    std::uint64_t count = 0;
    // The program's memory since its last call (README "The program's
    // memory"): runs {va, len} of mappings it unmapped, then runs of pages
    // it touched first, following the values (u64 each, two per run).
    std::uint64_t unmapped_runs = 0, touched_runs = 0;
    // Simulated compute since the rank's last reply (the program's time
    // between its calls, as VRDMASIM_MPI_COMPUTE says), in picoseconds,
    // and the host CPU time it was measured from, in nanoseconds.
    std::uint64_t compute_ps = 0, host_ns = 0;
    char name[64] = {};   // Untimed: the MPI function (and why)
    // One-sided: the window, the target displacement (in the target's
    // disp_unit) and a byte offset (the target datatype's true lower
    // bound), a result buffer, the network atomic (Amo).
    std::uint64_t win = 0, disp = 0, offset = 0, va3 = 0;
    std::uint32_t amo = 0, pad = 0;
    // A reduction (Reduce, Allreduce, Scan, Exscan, ReduceScatter,
    // ReduceScatterBlock): its MPI_Op and datatype as the collectives
    // library's coll::ReduceOp and coll::Datatype
    // (library/collectives/reduction.hpp), and its count of elements
    // (reduce-scatter: of the whole vector).
    // kStandIn set in reduce_op: the program's own operation
    // (MPI_Op_create), which the simulation cannot run: timed over the
    // datatype's bytes (datatype byte, elements its bytes) with the
    // operation below kStandIn as a stand-in on the simulated data.
    std::uint32_t reduce_op = 0, datatype = 0;
    std::uint64_t elements = 0;
};
constexpr std::uint32_t kStandIn = 1u << 31;

struct Reply {
    std::uint64_t time_ps = 0;   // simulated time the call returns at
    std::int32_t source = 0, tag = 0;   // a receive: what matched
    std::uint64_t bytes = 0;   // a receive: its length
    std::uint64_t request = 0;   // Isend / Irecv: the simulation's request
    std::int32_t flag = 0;   // Test: complete
    std::int32_t cancelled = 0;   // a receive's end: it was cancelled (no message)
    std::int32_t error = 0;   // nonzero: the simulation stopped; the rank exits
};

}   // namespace mpiwire
}   // namespace vrdmasim
