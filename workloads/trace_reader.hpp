// TraceReader: an OTF2 archive (the format Score-P writes) read for replay
// (trace.hpp): the global definitions once (ranks, MPI_COMM_WORLD, regions,
// the clock), then each rank's events as a stream, a chunk at a time, so
// that a trace of thousands of ranks is read in bounded memory. Only the
// events a replay needs are delivered; check() walks every event once
// before simulation and refuses (ConfigError, exit 2) any the replayer
// does not support, naming it, its rank and its time.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace vrdmasim {

class Config;

// A trace vrdmasim recorded (mpi.record, workloads/mpi/README.md "Record,
// then replay"): the archive's creator, and the attributes its events
// carry (OTF2 attributes, uint64): the program's buffer addresses.
namespace recorded {
// The creator's first words; the trace's MPI library is Open MPI's as the
// mpi workload times it (a communicator's creation is Open MPI's split).
constexpr const char* kCreator = "vrdmasim mpi.record";
// A message's buffer (MpiSend, MpiIsend, MpiRecv, MpiIrecv), a
// collective's send buffer (MpiCollectiveEnd; 0: MPI_IN_PLACE): the
// program's virtual address.
constexpr const char* kBuffer = "vrdmasim::buffer";
// A receive's buffer as the program posted it, in bytes (the message may
// be shorter).
constexpr const char* kBufferBytes = "vrdmasim::buffer_bytes";
// A collective's receive buffer (0: none).
constexpr const char* kBuffer2 = "vrdmasim::buffer2";
// MPI_Probe, MPI_Iprobe (their region's Enter): the communicator's
// context, the source (-1: any) and the tag (-1: any), int64.
constexpr const char* kComm = "vrdmasim::comm";
constexpr const char* kPeer = "vrdmasim::peer";
constexpr const char* kTag = "vrdmasim::tag";
// A call's region Enter: the program's memory since its previous call
// (workloads/mpi/README.md "The program's memory"), a string of runs of
// pages in hexadecimal, "U<va>+<len>" unmapped, then "T<va>+<len>"
// touched first, separated by spaces.
constexpr const char* kMemory = "vrdmasim::memory";
// The MpiCollectiveEnd of a v-variant (MPI_Gatherv, ...) or a
// reduce-scatter: the call as the rank made it (workloads/mpi/protocol.hpp),
// a string of hexadecimal numbers separated by spaces: its bytes, then,
// for a communicator of n ranks, the n lengths it sends to each rank, their
// n offsets in its send buffer, the n lengths it receives from each, their
// n offsets in its receive buffer.
constexpr const char* kBlocks = "vrdmasim::blocks";
// A reduction's MpiCollectiveEnd: its operation and datatype, uint64
// (coll::ReduceOp << 8 | coll::Datatype, library/collectives/reduction.hpp);
// its bytes sent are its elements' (count times the datatype's extent).
constexpr const char* kReduction = "vrdmasim::reduction";
// One-sided (workloads/mpi/README.md "Record, then replay"), uint64 each:
// an RmaWinCreate's base (kBuffer), size (kBufferBytes) and disp_unit; an
// RmaPut's, RmaGet's or RmaAtomic's origin buffer (kBuffer), target
// displacement (in the target's disp_unit) and byte offset; an
// RmaAtomic's compare buffer (kBuffer2), result buffer and network atomic
// (workloads/mpi/protocol.hpp mpiwire::Amo); an RmaRequestLock's assert
// (1: MPI_MODE_NOCHECK).
constexpr const char* kResult = "vrdmasim::result";
constexpr const char* kDisplacement = "vrdmasim::displacement";
constexpr const char* kOffset = "vrdmasim::offset";
constexpr const char* kAtomic = "vrdmasim::atomic";
constexpr const char* kDispUnit = "vrdmasim::disp_unit";
constexpr const char* kAssert = "vrdmasim::assert";
// Generalized active target (an RmaGroupSync or RmaWaitChange): the call
// (uint64: workloads/mpi/protocol.hpp's mpiwire::Op, MPI_Win_post to
// MPI_Win_test), a post's or start's group (a string of its ranks in the
// window's communicator, hexadecimal, separated by spaces) and assert
// (kAssert), a test's flag (uint64, 1: the exposure epoch ended).
constexpr const char* kActiveTarget = "vrdmasim::active_target";
constexpr const char* kGroup = "vrdmasim::group";
constexpr const char* kFlag = "vrdmasim::flag";
// An RMA event of another call than its event's own, that call's
// mpiwire::Op: an RmaAtomic of MPI_Get_accumulate (its bytes sent its
// elements'); an RmaPut, RmaGet or RmaAtomic of MPI_Rput, MPI_Rget,
// MPI_Raccumulate or MPI_Rget_accumulate, its matching id the request,
// which that request's RmaOpTest (MPI_Test) and RmaOpCompleteNonBlocking
// (MPI_Wait, or an MPI_Test that found it complete) name.
constexpr const char* kCall = "vrdmasim::call";
}   // namespace recorded

// A v-variant's or reduce-scatter's call as a rank made it (recorded::kBlocks).
struct RecordedBlocks {
    std::uint64_t bytes = 0;
    std::vector<std::uint64_t> values;   // 4 n: send lengths, offsets, receive lengths, offsets
};

// The program's memory since its previous call, as recorded (runs {va, len}).
struct ProgramMemory {
    std::vector<std::uint64_t> unmapped, touched;
};

// One event of a rank, as the replay needs it.
struct TraceEvent {
    enum class Kind {
        Enter,
        Leave,
        Send,
        Isend,
        IsendComplete,
        IrecvRequest,
        Recv,
        Irecv,
        CollectiveBegin,
        CollectiveEnd,
        // A trace vrdmasim recorded: a request an MPI_Test, MPI_Testany,
        // MPI_Testall or MPI_Waitany names (MpiRequestTest; ignored in
        // other traces, where it is an MPI_Test that did not complete).
        RequestTest,
        // A non-blocking collective (MPI_Iallreduce, ...): started
        // (NonBlockingCollectiveRequest: its request), and complete
        // (NonBlockingCollectiveComplete: as CollectiveEnd, with its
        // request) where its MPI_Wait or MPI_Test ended it.
        CollectiveRequest,
        CollectiveComplete,
        // A trace vrdmasim recorded: a one-sided call, as the mpi workload
        // served it (op: its mpiwire::Op, workloads/mpi/protocol.hpp), from
        // its RMA event: RmaWinCreate, RmaWinDestroy, a fence's
        // RmaCollectiveEnd, RmaPut, RmaGet, RmaAtomic, RmaRequestLock,
        // RmaReleaseLock, RmaSync, RmaGroupSync, RmaWaitChange; a
        // request-based operation's request tested (RmaOpTest: op Test)
        // and complete (RmaOpCompleteNonBlocking: op Wait), `request` its
        // matching id.
        Rma
    };
    // Enter, in a trace vrdmasim recorded: the calls whose work the replay
    // does at their Leave (the requests they name, a probe's message).
    enum class Call { None, Test, Testany, Testall, Waitany, Probe, Iprobe };
    Call call = Call::None;
    Kind kind = Kind::Enter;
    std::uint64_t time = 0;   // ticks
    bool mpi = false;   // Enter, Leave: of an MPI region
    // Enter: of MPI_Sendrecv or MPI_Sendrecv_replace (Score-P's region
    // names are the MPI functions'): its send and receive go together.
    bool sendrecv = false;
    // Point-to-point, CollectiveEnd: the communicator's context
    // (TraceReader::communicators(); 0: MPI_COMM_WORLD).
    std::uint32_t comm = 0;
    std::uint32_t peer = 0;   // rank in MPI_COMM_WORLD (translated through the communicator's group)
    std::uint32_t tag = 0;
    std::uint64_t length = 0;   // bytes
    std::uint64_t request = 0;
    // OTF2_CollectiveOp, as replayed: a communicator's creation
    // (CREATE_HANDLE) is MPICH's agreement on its context id, an allreduce
    // of 256 B; its destruction (DESTROY_HANDLE), local in MPICH, kLocal.
    int op = 0;
    static constexpr int kLocal = -1;
    std::uint32_t root = 0;   // rank in the communicator
    std::uint64_t sent = 0, received = 0;
    // A trace vrdmasim recorded (recorded::): the program's buffers.
    bool buffers = false;   // the event carries them
    std::uint64_t va = 0, va2 = 0, capacity = 0;
    // A reduction's operation and datatype (recorded::kReduction), plus 1;
    // 0: the trace does not say (a foreign trace's).
    std::uint64_t reduction = 0;
    std::int64_t probe_peer = -1, probe_tag = -1;   // Enter of MPI_Probe, MPI_Iprobe (recorded::kPeer, kTag)
    std::shared_ptr<const ProgramMemory> memory;   // Enter (recorded::kMemory), or none
    // CollectiveEnd of a v-variant or reduce-scatter: its blocks as the
    // rank made the call (recorded::kBlocks), or none (Score-P's: the
    // replay derives them from every member's bytes, TraceSummary::vectors).
    std::shared_ptr<const RecordedBlocks> blocks;
    // CollectiveEnd: a communicator's creation (CREATE_HANDLE; op is then
    // MPICH's agreement, an allreduce).
    bool create = false;
    // Rma: the call's fields as mpiwire::Call has them: the window (the
    // trace's), comm its communicator's context, peer the target's rank in
    // it (unchanged), va, va2, va3, length (a window's: capacity), disp,
    // offset, amo, tag (a window's disp_unit, a lock's type), root (a
    // lock's assert).
    std::uint64_t win = 0, va3 = 0, disp = 0, offset = 0;
    std::uint32_t amo = 0;
    // Rma of MPI_Win_post or MPI_Win_start: its group (recorded::kGroup),
    // ranks of the window's communicator; tag an MPI_Win_test's flag.
    std::shared_ptr<const std::vector<std::uint64_t>> group;
};

// What check() found in the whole trace: the collectives it calls and each
// rank's point-to-point peers.
struct TraceSummary {
    std::set<int> collectives;   // OTF2_CollectiveOp
    std::map<int, std::set<std::uint32_t>> collective_comms;   // each collective's communicators (contexts)
    std::vector<std::set<std::uint32_t>> peers;   // by rank
    std::uint64_t receives = 0, collective_calls = 0;   // over every rank
    // The largest message any rank sends or receives (a collective's: the
    // larger of its bytes sent and received), which rank and when.
    std::uint64_t largest = 0, largest_tick = 0;
    unsigned largest_rank = 0;
    // Point-to-point and collective events with the program's buffers
    // (TraceEvent::buffers), and without.
    std::uint64_t with_buffers = 0, without_buffers = 0;
    // A v-variant or reduce-scatter without its blocks (Score-P's record: a
    // rank's bytes sent and received in all), by its communicator's context
    // and its number among the collectives a member calls there: every
    // member's bytes (by rank in the communicator), from which the replay
    // derives each member's blocks (TraceWorkload::derive_blocks).
    struct Vector {
        int op = 0;   // OTF2_CollectiveOp
        std::uint32_t root = 0;
        std::vector<std::pair<std::uint64_t, std::uint64_t>> bytes;   // sent, received
        std::vector<bool> seen;
    };
    std::map<std::pair<std::uint32_t, std::uint64_t>, Vector> vectors;
    bool one_sided = false;   // one-sided calls (TraceEvent::Kind::Rma)
    // Their transfers (workloads/mpi/README.md "One-sided"): gets, puts to
    // the rank itself and atomic elements; and the puts to another rank,
    // by length -> count (each its pieces: MpiOneSided::put_transfers).
    std::uint64_t rma_transfers = 0;
    std::map<std::uint64_t, std::uint64_t> puts;
};

class TraceReader {
public:
    // Opens the archive whose anchor file is `anchor` and reads its
    // definitions; ConfigError (naming `key`) for an archive that cannot
    // be read or that the replayer cannot map (threads, no MPI).
    TraceReader(const Config& c, const std::string& key, const std::string& anchor);
    ~TraceReader();
    TraceReader(const TraceReader&) = delete;
    TraceReader& operator=(const TraceReader&) = delete;

    unsigned ranks() const { return static_cast<unsigned>(locations_.size()); }
    std::uint64_t ticks_per_second() const { return resolution_; }
    // The archive's creator (OTF2's; "" if none).
    const std::string& creator() const { return creator_; }
    // Recorded by vrdmasim (recorded::kCreator): its MPI is Open MPI's.
    bool recorded_by_vrdmasim() const { return creator_.rfind(recorded::kCreator, 0) == 0; }
    std::uint64_t events(unsigned rank) const { return events_.at(rank); }
    // The communicators events may name, by context (TraceEvent::comm):
    // their ranks in MPI_COMM_WORLD, in their own rank order. Context 0 is
    // MPI_COMM_WORLD; the others (MPI_Comm_split, MPI_Comm_dup, a
    // cartesian communicator: each an OTF2 Comm whose group lists ranks)
    // follow in the order of their definitions.
    const std::vector<std::vector<unsigned>>& communicators() const { return communicators_; }
    // Every event of every rank once: a ConfigError for the first the
    // replay does not support (its kind, rank and time), a communicator
    // other than MPI_COMM_WORLD, a collective not built. One rank's
    // events at a time, a chunk at a time: memory bounded whatever the
    // trace's size. `each`, if given, is shown every event the replay is
    // given (next()'s), each rank's in order, as the pass reads it (from
    // within OTF2's callbacks: it must not throw).
    using EventFn = std::function<void(unsigned rank, const TraceEvent&)>;
    TraceSummary check(const EventFn& each = {}) const;

    // The next event of `rank` (false at its end). Events are read a chunk
    // at a time (kChunk), with at most kOpenReaders ranks' files open.
    bool next(unsigned rank, TraceEvent& e);
    // The first event after the ones next() has given that `match` accepts
    // (it stays in the stream); false if the stream ends first.
    template <class Match>
    bool peek(unsigned rank, Match match, TraceEvent& e) {
        Stream& s = stream(rank);
        for (std::size_t i = 0;; ++i) {
            while (i >= s.buffered.size())
                if (!fill(rank)) return false;
            if (match(s.buffered[i])) {
                e = s.buffered[i];
                return true;
            }
        }
    }

    struct Impl;
    static constexpr std::uint64_t kChunk = 256;   // events read from a rank's file at a time
    static constexpr std::size_t kOpenReaders = 32;   // OTF2 event readers open at once

private:
    struct Stream {
        void* reader = nullptr;   // OTF2_EvtReader*, while open
        std::deque<TraceEvent> buffered;
        std::uint64_t read = 0;   // events read from the rank's file so far
        std::uint64_t used = 0;   // when its reader was last read (LRU)
        bool ended = false;
    };
    Stream& stream(unsigned rank);
    bool fill(unsigned rank);
    // An OTF2 event reader holds a buffer of the archive's chunk (1 MiB
    // from Score-P): at most kOpenReaders are open at once; another rank's
    // reader, least recently read, is closed for a new one, and opened
    // again later at the event it stopped at (OTF2_EvtReader_Seek).
    void open(unsigned rank, Stream& s);

    const Config& config_;
    const std::string key_, anchor_;
    std::unique_ptr<Impl> impl_;
    std::vector<std::uint64_t> locations_;   // by rank
    std::vector<std::uint64_t> events_;   // by rank
    std::vector<std::vector<unsigned>> communicators_;   // by context
    std::uint64_t resolution_ = 1;
    std::string creator_;
    std::map<unsigned, Stream> streams_;
    std::map<std::uint64_t, unsigned> open_;   // open readers: last read -> rank
    std::uint64_t clock_ = 0;
};

}   // namespace vrdmasim
