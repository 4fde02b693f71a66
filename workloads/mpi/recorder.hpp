// mpi.record: an MPI program's calls, as the simulation carried them out,
// written as an OTF2 trace the trace workload replays
// (workloads/mpi/README.md "Record, then replay"): per rank, each call an
// MPI region entered when the call reached the simulation (after its
// compute) and left when it returned, in simulated picoseconds, with the
// events trace_reader.cpp reads (MpiSend, MpiIsend, MpiIsendComplete,
// MpiIrecvRequest, MpiRecv, MpiIrecv, MpiCollectiveBegin/End,
// NonBlockingCollectiveRequest/Complete, and for one-sided calls OTF2's
// RMA events: RmaWinCreate/Destroy, RmaCollectiveBegin/End, RmaPut,
// RmaGet, RmaAtomic, RmaRequestLock, RmaAcquireLock, RmaReleaseLock,
// RmaSync, RmaGroupSync, RmaWaitChange, RmaOpTest, RmaOpCompleteNonBlocking;
// the windows as RmaWin definitions), the
// communicators the program made, and each buffer's virtual address as an
// OTF2 attribute (recorded:: in workloads/trace_reader.hpp). Events are
// kept in memory and the archive is written once the program has finished.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "workloads/mpi/communicators.hpp"
#include "workloads/mpi/protocol.hpp"

namespace vrdmasim {

class MpiRecorder {
public:
    explicit MpiRecorder(unsigned ranks)
        : requests_(ranks), events_(ranks), pending_memory_(ranks), open_(ranks), started_(ranks) {}
    // The rank's MPI_Init, returned at `ps`.
    void init(unsigned rank, std::uint64_t ps);
    // Call `c` of `rank`, entered at `enter` and returned at `leave` with
    // reply `r`; `ids` the requests it lists (Waitany, Testany, Testall);
    // `comms` says the communicators' sizes.
    void call(unsigned rank, const mpiwire::Call& c, const mpiwire::Reply& r, std::uint64_t enter, std::uint64_t leave,
              const std::vector<std::uint64_t>& ids, const MpiCommunicators& comms);
    // The program's memory since its last call (runs {va, len}: unmapped,
    // touched first), carried by the Enter of its next call (recorded::kMemory).
    void memory(unsigned rank, const std::vector<std::uint64_t>& unmapped, const std::vector<std::uint64_t>& touched);
    // Writes the archive: the directory `dir` (which must not exist),
    // anchor dir/NAME.otf2 with NAME the directory's name; the anchor's
    // path. std::runtime_error if it cannot.
    std::string write(const std::string& dir, const MpiCommunicators& comms) const;
    // The anchor file of the archive in `dir`.
    static std::string anchor_of(const std::string& dir);
    // The MPI function of protocol call `op` (its region's name: MPI_Win_start).
    static std::string call_name(std::uint32_t op);

    struct Event {
        enum class Kind : std::uint8_t {
            Enter,
            Leave,
            Send,
            Isend,
            IsendComplete,
            IrecvRequest,
            Recv,
            Irecv,
            Begin,
            End,
            RequestTest,
            CollectiveRequest,   // NonBlockingCollectiveRequest
            CollectiveComplete,   // NonBlockingCollectiveComplete: as End, with its request
            // One-sided (OTF2's RMA records, as Score-P writes them for MPI):
            // a window made and freed, a collective window call's begin and
            // end (RmaCollectiveEnd: op its OTF2_CollectiveOp), a put, a
            // get, an atomic (op its OTF2_RmaAtomicType), a lock asked for,
            // taken and given back, a flush (RmaSync).
            WinCreate,
            WinDestroy,
            RmaBegin,
            RmaEnd,
            Put,
            Get,
            Atomic,
            RequestLock,
            AcquireLock,
            ReleaseLock,
            Sync,
            // Generalized active target (active_target()): MPI_Win_post,
            // MPI_Win_start and MPI_Win_complete an RmaGroupSync,
            // MPI_Win_wait and MPI_Win_test an RmaWaitChange, each with
            // the call (recorded::kActiveTarget: op its mpiwire::Op), a
            // post's or start's assert (root) and group (`group`), a
            // test's flag (tag).
            GroupSync,
            WaitChange,
            // A request-based operation's request tested (RmaOpTest) and
            // complete (RmaOpCompleteNonBlocking): win, request, call.
            OpTest,
            OpComplete
        };
        Kind kind = Kind::Enter;
        std::uint8_t op = 0;   // Enter, Leave: the region (mpiwire::Op, or 0: MPI_Init); End: OTF2_CollectiveOp
        std::uint32_t comm = 0, peer = 0, tag = 0, root = 0;
        std::uint64_t time = 0, length = 0, request = 0, sent = 0, received = 0;
        bool buffers = false;
        std::uint64_t va = 0, va2 = 0, capacity = 0;
        bool probe = false;   // Enter of MPI_Probe, MPI_Iprobe: comm, peer and tag its message's
        std::uint32_t memory = 0;   // Enter: 1 + its program memory's index in strings_ (0: none)
        std::uint32_t blocks = 0;   // End of a v-variant, reduce-scatter: 1 + its blocks' index in strings_
        std::uint64_t reduction = 0;   // End of a reduction: 1 + recorded::kReduction's value (0: none)
        // One-sided: the window (the simulation's id), the target's rank in
        // its communicator (peer; OTF2_UNDEFINED_UINT32: every member), the
        // call's fields (protocol.hpp) as recorded::'s attributes: va
        // (kBuffer), va2 (kBuffer2), va3 (kResult), disp, offset, amo, tag
        // (a window's disp_unit, a lock's type), root (a lock's assert),
        // capacity (a window's size, kBufferBytes).
        std::uint64_t win = 0, va3 = 0, disp = 0, offset = 0;
        std::uint32_t amo = 0;
        bool rma = false;   // the event carries them
        std::uint32_t group = 0;   // GroupSync of a post or start: 1 + its group's index in strings_ (0: none)
        // An RMA event of another call than its event's own (a
        // get-accumulate, a request-based operation): the call's
        // mpiwire::Op, written as recorded::kCall (0: none).
        std::uint8_t call = 0;
    };

private:
    // What a trace cannot carry (MPI_Cancel, a non-contiguous datatype's
    // packed data): std::runtime_error naming it, the trace not written.
    static void refuse_unrecordable(unsigned rank, const mpiwire::Call& c, const std::vector<std::uint64_t>& ids,
                                    const MpiCommunicators& comms);
    // A collective's MpiCollectiveEnd at `leave` (a non-blocking one's:
    // its blocking form's); `blocks`: a v-variant's or reduce-scatter's
    // (protocol.hpp), written as recorded::kBlocks.
    Event collective(unsigned rank, const mpiwire::Call& c, std::uint64_t leave,
                     const std::vector<std::uint64_t>& blocks, const MpiCommunicators& comms);
    void complete(unsigned rank, const mpiwire::Call& c, const mpiwire::Reply& r, std::uint64_t at);
    // The Enter of call `c` at `enter` (a probe's what it looks for; the
    // program's memory since the rank's last call).
    Event entered(unsigned rank, const mpiwire::Call& c, std::uint64_t enter);
    // A one-sided call's events (one_sided(), active_target(),
    // rma_request()): false if `c` is none.
    bool rma(unsigned rank, const mpiwire::Call& c, const mpiwire::Reply& r, std::uint64_t enter, std::uint64_t leave,
             const std::vector<std::uint64_t>& ids, const MpiCommunicators& comms);
    // A one-sided call's events, between its Enter and Leave.
    void one_sided(unsigned rank, const mpiwire::Call& c, const mpiwire::Reply& r, std::uint64_t enter,
                   std::uint64_t leave, const MpiCommunicators& comms);
    // A generalized active target call's event, at its Leave (`group`: a
    // post's or start's ranks, protocol.hpp).
    void active_target(unsigned rank, const mpiwire::Call& c, const mpiwire::Reply& r, std::uint64_t leave,
                       const std::vector<std::uint64_t>& group);
    // MPI_Get_accumulate and the request-based operations: their
    // operation's event naming the call (a request-based one's matching id
    // its request); their requests' MPI_Wait and MPI_Test.
    void rma_request(unsigned rank, const mpiwire::Call& c, const mpiwire::Reply& r, std::uint64_t enter,
                     std::uint64_t leave, const MpiCommunicators& comms);
    void rma_ended(unsigned rank, const mpiwire::Call& c, const mpiwire::Reply& r, std::uint64_t enter,
                   std::uint64_t leave);
    // By rank: the request-based operations' open requests, their window.
    std::vector<std::map<std::uint64_t, std::uint64_t>> requests_;
    std::map<std::uint64_t, std::uint32_t> windows_;   // the windows made: id -> their communicator's context
    std::uint64_t matching_ = 0;   // the RMA operations' matching ids so far
    // The open requests of a rank, by the simulation's id.
    struct Open {
        bool receive = false;
        std::uint32_t comm = 0;
        std::uint64_t va = 0, capacity = 0;
    };
    std::vector<std::vector<Event>> events_;   // by rank
    std::vector<std::string> strings_;   // recorded::kMemory's and kBlocks's values, as written
    std::vector<std::uint32_t> pending_memory_;   // by rank: for its next Enter
    std::vector<std::map<std::uint64_t, Open>> open_;   // by rank
    // By rank: the non-blocking collectives started, their completion
    // (CollectiveComplete) by the simulation's request id.
    std::vector<std::map<std::uint64_t, Event>> started_;
};

}   // namespace vrdmasim
