#include "workloads/mpi/recorder.hpp"

#include <otf2/otf2.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <sstream>
#include <utility>
#include <stdexcept>

#include "workloads/mpi/collective_calls.hpp"
#include "workloads/trace_reader.hpp"

namespace vrdmasim {

using mpiwire::Call;
using mpiwire::Op;
using mpiwire::Reply;
using Kind = MpiRecorder::Event::Kind;

namespace {

// The region of each call (its MPI function; the preloaded library's
// MPI_Waitsome is a Waitany, MPI_Testsome Testanys, MPI_Comm_dup,
// MPI_Comm_create and MPI_Cart_create splits: protocol.hpp).
const char* blocking_region_name(std::uint8_t op) {
    switch (static_cast<Op>(op)) {
    case Op::Finalize: return "MPI_Finalize";
    case Op::Send: return "MPI_Send";
    case Op::Recv: return "MPI_Recv";
    case Op::Isend: return "MPI_Isend";
    case Op::Irecv: return "MPI_Irecv";
    case Op::Wait: return "MPI_Wait";
    case Op::Test: return "MPI_Test";
    case Op::Sendrecv: return "MPI_Sendrecv";
    case Op::Barrier: return "MPI_Barrier";
    case Op::Bcast: return "MPI_Bcast";
    case Op::Reduce: return "MPI_Reduce";
    case Op::Allreduce: return "MPI_Allreduce";
    case Op::Allgather: return "MPI_Allgather";
    case Op::Alltoall: return "MPI_Alltoall";
    case Op::Waitany: return "MPI_Waitany";
    case Op::Testany: return "MPI_Testany";
    case Op::Testall: return "MPI_Testall";
    case Op::Probe: return "MPI_Probe";
    case Op::Iprobe: return "MPI_Iprobe";
    case Op::CommSplit: return "MPI_Comm_split";
    case Op::Scan: return "MPI_Scan";
    case Op::Exscan: return "MPI_Exscan";
    case Op::Matched: return "vrdmasim_matched";   // never recorded: no call
    case Op::Cancel: return "MPI_Cancel";
    case Op::Gather: return "MPI_Gather";
    case Op::Scatter: return "MPI_Scatter";
    case Op::RequestFree: return "MPI_Request_free";
    case Op::Gatherv: return "MPI_Gatherv";
    case Op::Scatterv: return "MPI_Scatterv";
    case Op::Allgatherv: return "MPI_Allgatherv";
    case Op::Alltoallv: return "MPI_Alltoallv";
    case Op::ReduceScatter: return "MPI_Reduce_scatter";
    case Op::ReduceScatterBlock: return "MPI_Reduce_scatter_block";
    case Op::WinCreate: return "MPI_Win_create";
    case Op::WinFree: return "MPI_Win_free";
    case Op::Put: return "MPI_Put";
    case Op::Get: return "MPI_Get";
    case Op::Accumulate: return "MPI_Accumulate";
    case Op::FetchOp: return "MPI_Fetch_and_op";
    case Op::CompareSwap: return "MPI_Compare_and_swap";
    case Op::Fence: return "MPI_Win_fence";
    case Op::Lock: return "MPI_Win_lock";
    case Op::Unlock: return "MPI_Win_unlock";
    case Op::LockAll: return "MPI_Win_lock_all";
    case Op::UnlockAll: return "MPI_Win_unlock_all";
    case Op::Flush: return "MPI_Win_flush";
    case Op::FlushAll: return "MPI_Win_flush_all";
    case Op::GetAccumulate: return "MPI_Get_accumulate";
    case Op::Rput: return "MPI_Rput";
    case Op::Rget: return "MPI_Rget";
    case Op::Raccumulate: return "MPI_Raccumulate";
    case Op::RgetAccumulate: return "MPI_Rget_accumulate";
    case Op::WinPost: return "MPI_Win_post";
    case Op::WinStart: return "MPI_Win_start";
    case Op::WinComplete: return "MPI_Win_complete";
    case Op::WinWait: return "MPI_Win_wait";
    case Op::WinTest: return "MPI_Win_test";
    default: return "MPI_Init";
    }
}
// A non-blocking collective's is its blocking one's with an I
// (MPI_Iallreduce).
std::string region_name(std::uint8_t op) {
    const Op o = static_cast<Op>(op);
    if (!mpiwire::is_nonblocking(o)) return blocking_region_name(op);
    std::string name = blocking_region_name(static_cast<std::uint8_t>(mpiwire::blocking_of(o)));
    name[4] = static_cast<char>(std::tolower(static_cast<unsigned char>(name[4])));
    return name.insert(4, "I");
}
constexpr std::uint8_t kLastOp = static_cast<std::uint8_t>(Op::RgetAccumulate);

OTF2_CollectiveOp collective_op(Op op) {
    switch (op) {
    case Op::Barrier: return OTF2_COLLECTIVE_OP_BARRIER;
    case Op::Bcast: return OTF2_COLLECTIVE_OP_BCAST;
    case Op::Reduce: return OTF2_COLLECTIVE_OP_REDUCE;
    case Op::Allreduce: return OTF2_COLLECTIVE_OP_ALLREDUCE;
    case Op::Allgather: return OTF2_COLLECTIVE_OP_ALLGATHER;
    case Op::Alltoall: return OTF2_COLLECTIVE_OP_ALLTOALL;
    case Op::Scan: return OTF2_COLLECTIVE_OP_SCAN;
    case Op::Exscan: return OTF2_COLLECTIVE_OP_EXSCAN;
    case Op::Gather: return OTF2_COLLECTIVE_OP_GATHER;
    case Op::Scatter: return OTF2_COLLECTIVE_OP_SCATTER;
    case Op::Gatherv: return OTF2_COLLECTIVE_OP_GATHERV;
    case Op::Scatterv: return OTF2_COLLECTIVE_OP_SCATTERV;
    case Op::Allgatherv: return OTF2_COLLECTIVE_OP_ALLGATHERV;
    case Op::Alltoallv: return OTF2_COLLECTIVE_OP_ALLTOALLV;
    case Op::ReduceScatter: return OTF2_COLLECTIVE_OP_REDUCE_SCATTER;
    case Op::ReduceScatterBlock: return OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK;
    default: return OTF2_COLLECTIVE_OP_CREATE_HANDLE;
    }
}

MpiRecorder::Event event(Kind k, std::uint64_t at) {
    MpiRecorder::Event e;
    e.kind = k;
    e.time = at;
    return e;
}

OTF2_FlushType pre_flush(void*, OTF2_FileType, OTF2_LocationRef, void*, bool) { return OTF2_FLUSH; }
OTF2_TimeStamp post_flush(void*, OTF2_FileType, OTF2_LocationRef) { return 0; }

// The attributes of the archive (recorded::), by their OTF2 id.
enum Attribute : OTF2_AttributeRef {
    kBufferAttr = 0,
    kBytesAttr = 1,
    kBuffer2Attr = 2,
    kCommAttr = 3,
    kPeerAttr = 4,
    kTagAttr = 5,
    kMemoryAttr = 6,
    kBlocksAttr = 7,
    kReductionAttr = 8,
    kResultAttr = 9,
    kDisplacementAttr = 10,
    kOffsetAttr = 11,
    kAtomicAttr = 12,
    kDispUnitAttr = 13,
    kAssertAttr = 14,
    kActiveTargetAttr = 15,
    kGroupAttr = 16,
    kFlagAttr = 17,
    kCallAttr = 18
};

// A generalized active target call's attributes (recorded::): the call, a
// post's or start's assert (its group: write_event()), a test's flag.
void active_target_attributes(OTF2_AttributeList* a, const MpiRecorder::Event& e) {
    OTF2_AttributeList_AddUint64(a, kActiveTargetAttr, e.op);
    if (static_cast<Op>(e.op) == Op::WinTest) OTF2_AttributeList_AddUint64(a, kFlagAttr, e.tag);
    if (e.group) OTF2_AttributeList_AddUint64(a, kAssertAttr, e.root);
}

// A one-sided event's attributes (recorded::): the call's fields.
void rma_attributes(OTF2_AttributeList* a, const MpiRecorder::Event& e) {
    if (!e.rma) return;
    if (e.kind == Kind::WinCreate) {
        OTF2_AttributeList_AddUint64(a, kBufferAttr, e.va);
        OTF2_AttributeList_AddUint64(a, kBytesAttr, e.capacity);
        OTF2_AttributeList_AddUint64(a, kDispUnitAttr, e.tag);
        return;
    }
    if (e.kind == Kind::RequestLock) {
        OTF2_AttributeList_AddUint64(a, kAssertAttr, e.root);
        return;
    }
    if (e.call) OTF2_AttributeList_AddUint64(a, kCallAttr, e.call);
    if (e.kind == Kind::OpTest || e.kind == Kind::OpComplete) return;
    if (e.kind == Kind::GroupSync || e.kind == Kind::WaitChange) return active_target_attributes(a, e);
    OTF2_AttributeList_AddUint64(a, kBufferAttr, e.va);
    OTF2_AttributeList_AddUint64(a, kDisplacementAttr, e.disp);
    OTF2_AttributeList_AddUint64(a, kOffsetAttr, e.offset);
    if (e.kind != Kind::Atomic) return;
    OTF2_AttributeList_AddUint64(a, kBuffer2Attr, e.va2);
    OTF2_AttributeList_AddUint64(a, kResultAttr, e.va3);
    OTF2_AttributeList_AddUint64(a, kAtomicAttr, e.amo);
}

// A one-sided event (Kind::WinCreate and after).
OTF2_ErrorCode write_rma_event(OTF2_EvtWriter* w, OTF2_AttributeList* a, const MpiRecorder::Event& e) {
    const auto win = static_cast<OTF2_RmaWinRef>(e.win);
    rma_attributes(a, e);
    OTF2_AttributeList* attrs = OTF2_AttributeList_GetNumberOfElements(a) ? a : nullptr;
    const auto lock = e.tag == static_cast<std::uint32_t>(mpiwire::kExclusive) ? OTF2_LOCK_EXCLUSIVE : OTF2_LOCK_SHARED;
    switch (e.kind) {
    case Kind::WinCreate: return OTF2_EvtWriter_RmaWinCreate(w, attrs, e.time, win);
    case Kind::WinDestroy: return OTF2_EvtWriter_RmaWinDestroy(w, attrs, e.time, win);
    case Kind::RmaBegin: return OTF2_EvtWriter_RmaCollectiveBegin(w, attrs, e.time);
    case Kind::RmaEnd:
        return OTF2_EvtWriter_RmaCollectiveEnd(w, attrs, e.time, static_cast<OTF2_CollectiveOp>(e.op),
                                               OTF2_RMA_SYNC_LEVEL_PROCESS | OTF2_RMA_SYNC_LEVEL_MEMORY, win,
                                               OTF2_UNDEFINED_UINT32, e.sent, e.received);
    case Kind::Put: return OTF2_EvtWriter_RmaPut(w, attrs, e.time, win, e.peer, e.length, e.request);
    case Kind::Get: return OTF2_EvtWriter_RmaGet(w, attrs, e.time, win, e.peer, e.length, e.request);
    case Kind::Atomic:
        return OTF2_EvtWriter_RmaAtomic(w, attrs, e.time, win, e.peer, static_cast<OTF2_RmaAtomicType>(e.op), e.sent,
                                        e.received, e.request);
    case Kind::RequestLock: return OTF2_EvtWriter_RmaRequestLock(w, attrs, e.time, win, e.peer, e.win, lock);
    case Kind::AcquireLock: return OTF2_EvtWriter_RmaAcquireLock(w, attrs, e.time, win, e.peer, e.win, lock);
    case Kind::ReleaseLock: return OTF2_EvtWriter_RmaReleaseLock(w, attrs, e.time, win, e.peer, e.win);
    case Kind::Sync: return OTF2_EvtWriter_RmaSync(w, attrs, e.time, win, e.peer, OTF2_RMA_SYNC_TYPE_MEMORY);
    case Kind::GroupSync:
        return OTF2_EvtWriter_RmaGroupSync(w, attrs, e.time, OTF2_RMA_SYNC_LEVEL_PROCESS | OTF2_RMA_SYNC_LEVEL_MEMORY,
                                           win, OTF2_UNDEFINED_GROUP);
    case Kind::WaitChange: return OTF2_EvtWriter_RmaWaitChange(w, attrs, e.time, win);
    case Kind::OpTest: return OTF2_EvtWriter_RmaOpTest(w, attrs, e.time, win, e.request);
    case Kind::OpComplete: return OTF2_EvtWriter_RmaOpCompleteNonBlocking(w, attrs, e.time, win, e.request);
    default: return OTF2_ERROR_INVALID_ARGUMENT;
    }
}
// The strings of the attributes (recorded::kMemory, kBlocks, kGroup) take
// string ids from here, above the definitions' own.
constexpr OTF2_StringRef kMemoryStrings = 1u << 30;

void write_event(OTF2_EvtWriter* w, OTF2_AttributeList* a, const MpiRecorder::Event& e) {
    OTF2_AttributeList_RemoveAllAttributes(a);
    if (e.buffers) {
        OTF2_AttributeList_AddUint64(a, kBufferAttr, e.va);
        if (e.kind == Kind::Recv || e.kind == Kind::Irecv) OTF2_AttributeList_AddUint64(a, kBytesAttr, e.capacity);
        const bool end = e.kind == Kind::End || e.kind == Kind::CollectiveComplete;
        if (end) OTF2_AttributeList_AddUint64(a, kBuffer2Attr, e.va2);
        if (end && e.reduction) OTF2_AttributeList_AddUint64(a, kReductionAttr, e.reduction - 1);
    }
    if (e.blocks) {
        OTF2_AttributeValue v;
        v.stringRef = kMemoryStrings + e.blocks - 1;
        OTF2_AttributeList_AddAttribute(a, kBlocksAttr, OTF2_TYPE_STRING, v);
    }
    if (e.group) {
        OTF2_AttributeValue v;
        v.stringRef = kMemoryStrings + e.group - 1;
        OTF2_AttributeList_AddAttribute(a, kGroupAttr, OTF2_TYPE_STRING, v);
    }
    if (e.probe) {
        OTF2_AttributeList_AddUint64(a, kCommAttr, e.comm);
        OTF2_AttributeList_AddInt64(a, kPeerAttr, static_cast<std::int32_t>(e.peer));
        OTF2_AttributeList_AddInt64(a, kTagAttr, static_cast<std::int32_t>(e.tag));
    }
    OTF2_ErrorCode ok = OTF2_SUCCESS;
    switch (e.kind) {
    case Kind::Enter:
        if (e.memory) {
            OTF2_AttributeValue v;
            v.stringRef = kMemoryStrings + e.memory - 1;
            OTF2_AttributeList_AddAttribute(a, kMemoryAttr, OTF2_TYPE_STRING, v);
        }
        ok = OTF2_EvtWriter_Enter(w, e.probe || e.memory ? a : nullptr, e.time, e.op);
        break;
    case Kind::RequestTest: ok = OTF2_EvtWriter_MpiRequestTest(w, nullptr, e.time, e.request); break;
    case Kind::Leave: ok = OTF2_EvtWriter_Leave(w, nullptr, e.time, e.op); break;
    case Kind::Send: ok = OTF2_EvtWriter_MpiSend(w, a, e.time, e.peer, e.comm, e.tag, e.length); break;
    case Kind::Isend: ok = OTF2_EvtWriter_MpiIsend(w, a, e.time, e.peer, e.comm, e.tag, e.length, e.request); break;
    case Kind::IsendComplete: ok = OTF2_EvtWriter_MpiIsendComplete(w, nullptr, e.time, e.request); break;
    case Kind::IrecvRequest: ok = OTF2_EvtWriter_MpiIrecvRequest(w, nullptr, e.time, e.request); break;
    case Kind::Recv: ok = OTF2_EvtWriter_MpiRecv(w, a, e.time, e.peer, e.comm, e.tag, e.length); break;
    case Kind::Irecv: ok = OTF2_EvtWriter_MpiIrecv(w, a, e.time, e.peer, e.comm, e.tag, e.length, e.request); break;
    case Kind::Begin: ok = OTF2_EvtWriter_MpiCollectiveBegin(w, nullptr, e.time); break;
    case Kind::End:
        ok = OTF2_EvtWriter_MpiCollectiveEnd(w, a, e.time, static_cast<OTF2_CollectiveOp>(e.op), e.comm, e.root, e.sent,
                                             e.received);
        break;
    case Kind::CollectiveRequest:
        ok = OTF2_EvtWriter_NonBlockingCollectiveRequest(w, nullptr, e.time, e.request);
        break;
    case Kind::CollectiveComplete:
        ok = OTF2_EvtWriter_NonBlockingCollectiveComplete(w, a, e.time, static_cast<OTF2_CollectiveOp>(e.op), e.comm,
                                                          e.root, e.sent, e.received, e.request);
        break;
    default: ok = write_rma_event(w, a, e); break;
    }
    if (ok != OTF2_SUCCESS)
        throw std::runtime_error(std::string("mpi.record: an event cannot be written: ") + OTF2_Error_GetName(ok));
}

// The attributes of one-sided calls (recorded::: the operations', the
// request-based calls' and the generalized active target calls'), their
// names and descriptions made strings by `string`.
template <class String>
void write_rma_definitions(OTF2_GlobalDefWriter* g, String& string) {
    const std::pair<Attribute, const char*> rma[] = {
        {kResultAttr, "a fetch-and-op's or compare-and-swap's result buffer"},
        {kDisplacementAttr, "a one-sided operation's target displacement, in the target's disp_unit"},
        {kOffsetAttr, "a one-sided operation's byte offset (the target datatype's true lower bound)"},
        {kAtomicAttr, "an accumulate's or fetch-and-op's network atomic (vrdmasim's mpiwire::Amo)"},
        {kDispUnitAttr, "a window's disp_unit"},
        {kAssertAttr, "a lock's assert (1: MPI_MODE_NOCHECK, no lock taken)"},
        {kCallAttr,
         "the call of an RMA event that is not its event's own (MPI_Get_accumulate, a request-based "
         "operation): vrdmasim's mpiwire::Op"}};
    const char* const names[] = {recorded::kResult,   recorded::kDisplacement, recorded::kOffset, recorded::kAtomic,
                                 recorded::kDispUnit, recorded::kAssert,       recorded::kCall};
    for (std::size_t i = 0; i < 7; ++i)
        OTF2_GlobalDefWriter_WriteAttribute(g, rma[i].first, string(names[i]), string(rma[i].second), OTF2_TYPE_UINT64);
    const struct {
        Attribute id;
        const char *name, *what;
        OTF2_Type type;
    } attributes[] = {
        {kActiveTargetAttr, recorded::kActiveTarget,
         "a generalized active target call: MPI_Win_post, _start, _complete, _wait or _test (vrdmasim's mpiwire::Op)",
         OTF2_TYPE_UINT64},
        {kGroupAttr, recorded::kGroup,
         "an MPI_Win_post's or MPI_Win_start's group: its ranks in the window's communicator (hexadecimal, separated "
         "by spaces)",
         OTF2_TYPE_STRING},
        {kFlagAttr, recorded::kFlag, "an MPI_Win_test's flag (1: the exposure epoch ended)", OTF2_TYPE_UINT64}};
    for (const auto& a : attributes)
        OTF2_GlobalDefWriter_WriteAttribute(g, a.id, string(a.name), string(a.what), a.type);
}

// The global definitions: the clock (picoseconds), the ranks (one
// location each, MPI's group of them), the regions, the communicators
// (by context: their members, world ranks in their order) and the
// attributes.
void write_definitions(OTF2_GlobalDefWriter* g, const std::vector<std::uint64_t>& counts, std::uint64_t length,
                       const MpiCommunicators& comms, const std::vector<std::string>& memory,
                       const std::map<std::uint64_t, std::uint32_t>& windows) {
    OTF2_StringRef next = 0;
    auto string = [&](const std::string& s) {
        OTF2_GlobalDefWriter_WriteString(g, next, s.c_str());
        return next++;
    };
    // 2026-01-01 00:00 UTC, the MPI clocks' epoch (README "Time"), in ns.
    OTF2_GlobalDefWriter_WriteClockProperties(g, 1000000000000ull, 0, length, 1767225600ull * 1000000000ull);
    const OTF2_StringRef empty = string(""), machine = string("vrdmasim"), thread = string("Master thread");
    OTF2_GlobalDefWriter_WriteSystemTreeNode(g, 0, machine, string("machine"), OTF2_UNDEFINED_SYSTEM_TREE_NODE);
    std::vector<std::uint64_t> locations;
    for (std::size_t r = 0; r < counts.size(); ++r) {
        OTF2_GlobalDefWriter_WriteLocationGroup(g, r, string("MPI Rank " + std::to_string(r)),
                                                OTF2_LOCATION_GROUP_TYPE_PROCESS, 0, OTF2_UNDEFINED_LOCATION_GROUP);
        OTF2_GlobalDefWriter_WriteLocation(g, r, thread, OTF2_LOCATION_TYPE_CPU_THREAD, counts[r], r);
        locations.push_back(r);
    }
    for (std::uint8_t op = 0; op <= kLastOp; ++op)
        OTF2_GlobalDefWriter_WriteRegion(g, op, string(region_name(op)), empty, empty, OTF2_REGION_ROLE_FUNCTION,
                                         OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, empty, 0, 0);
    for (auto op = static_cast<std::uint8_t>(Op::WinPost); op <= static_cast<std::uint8_t>(Op::WinTest); ++op)
        OTF2_GlobalDefWriter_WriteRegion(g, op, string(region_name(op)), empty, empty, OTF2_REGION_ROLE_FUNCTION,
                                         OTF2_PARADIGM_MPI, OTF2_REGION_FLAG_NONE, empty, 0, 0);
    OTF2_GlobalDefWriter_WriteGroup(g, 0, string("MPI"), OTF2_GROUP_TYPE_COMM_LOCATIONS, OTF2_PARADIGM_MPI,
                                    OTF2_GROUP_FLAG_NONE, static_cast<uint32_t>(locations.size()), locations.data());
    for (const auto& [ctx, members] : comms.all()) {
        const std::vector<std::uint64_t> ranks(members.begin(), members.end());
        const std::string name = ctx == 0 ? "MPI_COMM_WORLD" : "communicator " + std::to_string(ctx);
        OTF2_GlobalDefWriter_WriteGroup(g, ctx + 1, string(name), OTF2_GROUP_TYPE_COMM_GROUP, OTF2_PARADIGM_MPI,
                                        OTF2_GROUP_FLAG_NONE, static_cast<uint32_t>(ranks.size()), ranks.data());
        // (Its parent is not kept: OTF2_UNDEFINED_COMM.)
        OTF2_GlobalDefWriter_WriteComm(g, ctx, string(name), ctx + 1, OTF2_UNDEFINED_COMM, OTF2_COMM_FLAG_NONE);
    }
    OTF2_GlobalDefWriter_WriteAttribute(g, kBufferAttr, string(recorded::kBuffer),
                                        string("the program's buffer (a collective's send buffer; 0: MPI_IN_PLACE)"),
                                        OTF2_TYPE_UINT64);
    OTF2_GlobalDefWriter_WriteAttribute(g, kBytesAttr, string(recorded::kBufferBytes),
                                        string("a receive's buffer as posted, in bytes"), OTF2_TYPE_UINT64);
    OTF2_GlobalDefWriter_WriteAttribute(g, kBuffer2Attr, string(recorded::kBuffer2),
                                        string("a collective's receive buffer (0: none)"), OTF2_TYPE_UINT64);
    OTF2_GlobalDefWriter_WriteAttribute(g, kCommAttr, string(recorded::kComm),
                                        string("a probe's communicator (its context)"), OTF2_TYPE_UINT64);
    OTF2_GlobalDefWriter_WriteAttribute(g, kPeerAttr, string(recorded::kPeer), string("a probe's source (-1: any)"),
                                        OTF2_TYPE_INT64);
    OTF2_GlobalDefWriter_WriteAttribute(g, kTagAttr, string(recorded::kTag), string("a probe's tag (-1: any)"),
                                        OTF2_TYPE_INT64);
    OTF2_GlobalDefWriter_WriteAttribute(g, kMemoryAttr, string(recorded::kMemory),
                                        string("the program's memory since its last call: U<va>+<len> unmapped, "
                                               "T<va>+<len> touched first (hexadecimal runs of pages)"),
                                        OTF2_TYPE_STRING);
    OTF2_GlobalDefWriter_WriteAttribute(g, kBlocksAttr, string(recorded::kBlocks),
                                        string("a v-variant's or reduce-scatter's call as the rank made it: its bytes, "
                                               "then the lengths it sends to each rank, their offsets, the lengths it "
                                               "receives from each, their offsets (hexadecimal)"),
                                        OTF2_TYPE_STRING);
    OTF2_GlobalDefWriter_WriteAttribute(g, kReductionAttr, string(recorded::kReduction),
                                        string("a reduction's operation and datatype (coll::ReduceOp << 8 | "
                                               "coll::Datatype, vrdmasim's library/collectives/reduction.hpp)"),
                                        OTF2_TYPE_UINT64);
    for (std::size_t i = 0; i < memory.size(); ++i)
        OTF2_GlobalDefWriter_WriteString(g, kMemoryStrings + static_cast<OTF2_StringRef>(i), memory[i].c_str());
    write_rma_definitions(g, string);
    for (const auto& [win, ctx] : windows)
        OTF2_GlobalDefWriter_WriteRmaWin(g, static_cast<OTF2_RmaWinRef>(win), string("window " + std::to_string(win)),
                                         ctx, OTF2_RMA_WIN_FLAG_NONE);
}

}   // namespace

void MpiRecorder::memory(unsigned rank, const std::vector<std::uint64_t>& unmapped,
                         const std::vector<std::uint64_t>& touched) {
    if (unmapped.empty() && touched.empty()) return;
    std::ostringstream os;
    os << std::hex;
    for (std::size_t i = 0; i + 1 < unmapped.size(); i += 2) os << " U" << unmapped[i] << '+' << unmapped[i + 1];
    for (std::size_t i = 0; i + 1 < touched.size(); i += 2) os << " T" << touched[i] << '+' << touched[i + 1];
    strings_.push_back(os.str().substr(1));
    pending_memory_.at(rank) = static_cast<std::uint32_t>(strings_.size());
}

void MpiRecorder::init(unsigned rank, std::uint64_t ps) {
    events_.at(rank).push_back(event(Kind::Enter, ps));
    events_[rank].push_back(event(Kind::Leave, ps));
}

MpiRecorder::Event MpiRecorder::collective(unsigned rank, const Call& c, std::uint64_t at,
                                           const std::vector<std::uint64_t>& blocks, const MpiCommunicators& comms) {
    const Op op = mpiwire::blocking_of(static_cast<Op>(c.op));
    coll::Op library = coll::Op::Barrier;   // (a split: as a barrier, no root, reduction or blocks)
    mpiwire::collective_of(op, library);
    const std::uint64_t n = comms.members(rank, c.comm).size();
    const unsigned me = comms.rank_in(c.comm, rank);
    const bool root = me == static_cast<unsigned>(c.root);
    Event e = event(Kind::End, at);
    e.op = static_cast<std::uint8_t>(collective_op(op));
    e.comm = c.comm;
    e.root = coll::has_root(library) ? static_cast<std::uint32_t>(c.root) : OTF2_COLLECTIVE_ROOT_NONE;
    // A v-variant's blocks (protocol.hpp): the lengths sent to each rank
    // (part 0), received from each (part 2), summed.
    auto sum = [&](std::size_t part) {
        std::uint64_t s = 0;
        for (std::size_t r = 0; r < n && (part + 1) * n <= blocks.size(); ++r) s += blocks[part * n + r];
        return s;
    };
    // As the replay reads them (trace.cpp: a bcast's bytes are the root's
    // sent and the others' received, a reduction's its sent, an
    // allgather's block its sent, an alltoall's its sent over the ranks);
    // the v-variants' and reduce-scatter's as Score-P counts a rank's
    // bytes: every block it sends and receives, its own too.
    switch (op) {
    case Op::Barrier: break;
    case Op::Bcast: (root ? e.sent : e.received) = c.bytes; break;
    case Op::Reduce: e.sent = c.bytes, e.received = root ? c.bytes : 0; break;
    case Op::Allgather: e.sent = c.bytes, e.received = c.bytes * n; break;
    case Op::Alltoall: e.sent = e.received = c.bytes * n; break;
    case Op::Gather: e.sent = c.bytes, e.received = root ? c.bytes * n : 0; break;
    case Op::Scatter: e.sent = root ? c.bytes * n : 0, e.received = c.bytes; break;
    case Op::Gatherv: e.sent = c.bytes, e.received = root ? sum(2) : 0; break;
    case Op::Scatterv: e.sent = root ? sum(0) : 0, e.received = c.bytes; break;
    case Op::Allgatherv: e.sent = c.bytes, e.received = sum(2); break;
    case Op::Alltoallv: e.sent = sum(0), e.received = sum(2); break;
    case Op::ReduceScatter:
    case Op::ReduceScatterBlock: e.sent = c.bytes, e.received = sum(2); break;
    case Op::CommSplit: e.sent = 8, e.received = 8 * n; break;   // Open MPI's colours and keys
    default: e.sent = e.received = c.bytes; break;   // allreduce, scan, exscan
    }
    if (coll::is_reduction(library))
        e.reduction = 1 + (std::uint64_t(c.reduce_op & ~mpiwire::kStandIn) << 8 | c.datatype);
    e.buffers = op != Op::CommSplit;
    e.va = c.va;
    e.va2 = op == Op::Bcast ? 0 : c.va2;
    if (coll::takes_blocks(library)) {   // its blocks, as the rank gave them
        std::ostringstream os;
        os << std::hex << c.bytes;
        for (const std::uint64_t v : blocks) os << ' ' << v;
        strings_.push_back(os.str());
        e.blocks = static_cast<std::uint32_t>(strings_.size());
    }
    return e;
}

void MpiRecorder::complete(unsigned rank, const Call& c, const Reply& r, std::uint64_t at) {
    if (c.request & mpiwire::kCollectiveRequest) {   // a non-blocking collective's
        const auto k = started_[rank].find(c.request);
        if (k == started_[rank].end())
            throw std::logic_error("mpi.record: a non-blocking collective completes that was never started");
        events_[rank].push_back(k->second);
        events_[rank].back().time = at;
        started_[rank].erase(k);
        return;
    }
    const auto it = open_[rank].find(c.request);
    if (it == open_[rank].end()) throw std::logic_error("mpi.record: a request completes that was never started");
    Event e = event(it->second.receive ? Kind::Irecv : Kind::IsendComplete, at);
    e.request = c.request;
    if (it->second.receive) {
        e.comm = it->second.comm;
        e.peer = static_cast<std::uint32_t>(r.source);
        e.tag = static_cast<std::uint32_t>(r.tag);
        e.length = r.bytes;
        e.buffers = true;
        e.va = it->second.va;
        e.capacity = it->second.capacity;
    }
    events_[rank].push_back(e);
    open_[rank].erase(it);
}

void MpiRecorder::refuse_unrecordable(unsigned rank, const Call& c, const std::vector<std::uint64_t>& ids,
                                      const MpiCommunicators& comms) {
    const Op op = static_cast<Op>(c.op);
    const std::string who = "mpi.record: rank " + std::to_string(rank) + " ";
    // A call after the last this recorder writes (kLastOp) but the
    // generalized active target calls: calls timed after it was written,
    // which it has no events for.
    if (c.op > kLastOp && !mpiwire::is_active_target(op))
        throw std::runtime_error(who + "calls " + region_name(c.op) +
                                 ", a one-sided call the recorder has no events for (README \"One-sided\"; "
                                 "protocol.hpp's call " +
                                 std::to_string(c.op) + "), which a replay would leave out: the trace is not written");
    if (op == Op::Cancel || op == Op::RequestFree)
        throw std::runtime_error(
            who + (op == Op::Cancel ? "cancels a receive (MPI_Cancel)" : "frees a request (MPI_Request_free)") +
            ", which a replay does not carry out: the trace is not written");
    // A buffer of a non-contiguous datatype (va 0: packed by the library,
    // protocol.hpp) has no address of the program's to replay at.
    bool packed = false;
    switch (op) {
    case Op::Send:
    case Op::Isend:
    case Op::Recv:
    case Op::Irecv: packed = c.bytes && !c.va; break;
    case Op::Sendrecv: packed = (c.bytes && !c.va) || (c.bytes2 && !c.va2); break;
    case Op::Bcast:
    case Op::Reduce:
    case Op::Allreduce:
    case Op::Allgather:
    case Op::Alltoall:
    case Op::Scan:
    case Op::Exscan:
    case Op::Gather: packed = c.bytes && !c.va; break;
    case Op::Scatter: packed = c.bytes && !c.va && comms.rank_in(c.comm, rank) == static_cast<unsigned>(c.root); break;
    default: break;
    }
    if (packed)
        throw std::runtime_error(who +
                                 "moves the data of a non-contiguous datatype (packed into the library's own "
                                 "buffer, workloads/mpi/README.md \"Datatypes\"), which a trace has no address "
                                 "for: the trace is not written");
}

MpiRecorder::Event MpiRecorder::entered(unsigned rank, const Call& c, std::uint64_t enter) {
    const Op op = static_cast<Op>(c.op);
    Event in = event(Kind::Enter, enter);
    in.op = static_cast<std::uint8_t>(c.op);
    in.memory = std::exchange(pending_memory_.at(rank), 0);
    if (op == Op::Probe || op == Op::Iprobe) {
        in.probe = true;
        in.comm = c.comm;
        in.peer = static_cast<std::uint32_t>(c.peer);
        in.tag = static_cast<std::uint32_t>(c.tag);
    }
    return in;
}

void MpiRecorder::call(unsigned rank, const Call& c, const Reply& r, std::uint64_t enter, std::uint64_t leave,
                       const std::vector<std::uint64_t>& ids, const MpiCommunicators& comms) {
    const Op op = static_cast<Op>(c.op);
    if (op == Op::Matched) return;   // the library's question, not a call
    refuse_unrecordable(rank, c, ids, comms);
    std::vector<Event>& out = events_.at(rank);
    const Event in = entered(rank, c, enter);
    out.push_back(in);
    // The requests a test names (the replay tests them as the simulation did).
    auto tested = [&](std::uint64_t q) {
        out.push_back(event(Kind::RequestTest, enter));
        out.back().request = q;
    };
    auto message = [&](Kind k, std::int32_t peer, std::int32_t tag, std::uint64_t len, std::uint64_t va) {
        Event e = event(k, enter);
        e.comm = c.comm;
        e.peer = static_cast<std::uint32_t>(peer);
        e.tag = static_cast<std::uint32_t>(tag);
        e.length = len;
        e.buffers = true;
        e.va = va;
        return e;
    };
    const bool rma_end = (op == Op::Wait || op == Op::Test) && (c.request & mpiwire::kRmaRequest);
    if (rma_end) rma_ended(rank, c, r, enter, leave);
    switch (rma_end ? Op::Matched : op) {
    case Op::Matched: break;   // (rma_ended())
    case Op::Send: out.push_back(message(Kind::Send, c.peer, c.tag, c.bytes, c.va)); break;
    case Op::Isend:
        out.push_back(message(Kind::Isend, c.peer, c.tag, c.bytes, c.va));
        out.back().request = r.request;
        open_[rank][r.request] = {false, c.comm, c.va, c.bytes};
        break;
    case Op::Irecv:
        out.push_back(event(Kind::IrecvRequest, enter));
        out.back().request = r.request;
        open_[rank][r.request] = {true, c.comm, c.va, c.bytes};
        break;
    case Op::Recv:
    case Op::Sendrecv: {
        if (op == Op::Sendrecv) out.push_back(message(Kind::Send, c.peer, c.tag, c.bytes, c.va));
        Event e = message(Kind::Recv, r.source, r.tag, r.bytes, op == Op::Sendrecv ? c.va2 : c.va);
        e.time = leave;
        e.capacity = op == Op::Sendrecv ? c.bytes2 : c.bytes;
        out.push_back(e);
        break;
    }
    case Op::Wait: complete(rank, c, r, leave); break;
    case Op::Test:
        tested(c.request);
        if (r.flag) complete(rank, c, r, leave);
        break;
    case Op::Waitany:
    case Op::Testany:
    case Op::Testall:
        for (const std::uint64_t q : ids) tested(q);
        break;
    default:   // the collectives, splits; Finalize, Probe, Iprobe (their Enter says what they look for)
        if (rma(rank, c, r, enter, leave, ids, comms)) break;
        if (mpiwire::is_nonblocking(op)) {   // its completion kept for its MPI_Wait or MPI_Test
            out.push_back(event(Kind::CollectiveRequest, enter));
            out.back().request = r.request;
            Event done = collective(rank, c, leave, ids, comms);
            done.kind = Kind::CollectiveComplete;
            done.request = r.request;
            started_[rank][r.request] = done;
        } else if (mpiwire::is_collective(op) || op == Op::CommSplit) {
            out.push_back(event(Kind::Begin, enter));
            out.push_back(collective(rank, c, leave, ids, comms));
        }
        break;
    }
    Event back = event(Kind::Leave, leave);
    back.op = in.op;
    out.push_back(back);
}

bool MpiRecorder::rma(unsigned rank, const Call& c, const Reply& r, std::uint64_t enter, std::uint64_t leave,
                      const std::vector<std::uint64_t>& ids, const MpiCommunicators& comms) {
    const Op op = static_cast<Op>(c.op);
    if (op >= Op::WinCreate && op <= Op::FlushAll) one_sided(rank, c, r, enter, leave, comms);
    else if (mpiwire::is_active_target(op)) active_target(rank, c, r, leave, ids);
    else if (op >= Op::GetAccumulate && op <= Op::RgetAccumulate) rma_request(rank, c, r, enter, leave, comms);
    else return false;
    return true;
}

void MpiRecorder::one_sided(unsigned rank, const Call& c, const Reply& r, std::uint64_t enter, std::uint64_t leave,
                            const MpiCommunicators& comms) {
    const Op op = static_cast<Op>(c.op);
    std::vector<Event>& out = events_.at(rank);
    auto rma = [&](Kind k, std::uint64_t at) {
        Event e = event(k, at);
        e.rma = true;
        e.win = op == Op::WinCreate ? r.request : c.win;
        e.peer = op == Op::LockAll || op == Op::UnlockAll || op == Op::FlushAll ? OTF2_UNDEFINED_UINT32
                                                                                : static_cast<std::uint32_t>(c.peer);
        e.va = c.va;
        e.va2 = c.va2;
        e.va3 = c.va3;
        e.disp = c.disp;
        e.offset = c.offset;
        e.amo = c.amo;
        e.tag = static_cast<std::uint32_t>(op == Op::LockAll ? mpiwire::kShared : c.tag);
        e.root = static_cast<std::uint32_t>(c.root);
        e.length = e.capacity = c.bytes;
        return e;
    };
    // A collective window call: RmaCollectiveBegin, its event, RmaCollectiveEnd.
    auto collective = [&](Kind k, OTF2_CollectiveOp coll, std::uint64_t sent, std::uint64_t received) {
        out.push_back(rma(Kind::RmaBegin, enter));
        out.back().rma = false;
        if (k != Kind::RmaEnd) out.push_back(rma(k, k == Kind::WinCreate ? leave : enter));
        if (k == Kind::WinDestroy) out.back().rma = false;
        Event end = rma(Kind::RmaEnd, leave);
        end.rma = false;
        end.op = static_cast<std::uint8_t>(coll);
        end.sent = sent;
        end.received = received;
        out.push_back(end);
    };
    switch (op) {
    case Op::WinCreate: {
        windows_[r.request] = c.comm;
        const std::uint64_t n = comms.members(rank, c.comm).size();
        collective(Kind::WinCreate, OTF2_COLLECTIVE_OP_CREATE_HANDLE, 24, 24 * n);   // the members' base, size, unit
        break;
    }
    case Op::WinFree: collective(Kind::WinDestroy, OTF2_COLLECTIVE_OP_DESTROY_HANDLE, 0, 0); break;
    case Op::Fence: collective(Kind::RmaEnd, OTF2_COLLECTIVE_OP_BARRIER, 0, 0); break;
    case Op::Put:
    case Op::Get:
        out.push_back(rma(op == Op::Put ? Kind::Put : Kind::Get, enter));
        out.back().request = matching_++;
        break;
    case Op::Accumulate:
    case Op::FetchOp:
    case Op::CompareSwap: {
        Event e = rma(Kind::Atomic, enter);
        e.request = matching_++;
        e.op = static_cast<std::uint8_t>(op == Op::Accumulate ? OTF2_RMA_ATOMIC_TYPE_ACCUMULATE
                                         : op == Op::FetchOp  ? OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ACCUMULATE
                                                              : OTF2_RMA_ATOMIC_TYPE_COMPARE_AND_SWAP);
        e.sent = op == Op::Accumulate ? c.bytes : op == Op::FetchOp ? 8 : 16;
        e.received = op == Op::Accumulate ? 0 : 8;
        out.push_back(e);
        break;
    }
    case Op::Lock:
    case Op::LockAll:
        out.push_back(rma(Kind::RequestLock, enter));
        out.push_back(rma(Kind::AcquireLock, leave));
        out.back().rma = false;
        break;
    case Op::Unlock:
    case Op::UnlockAll: out.push_back(rma(Kind::ReleaseLock, leave)), out.back().rma = false; break;
    default: out.push_back(rma(Kind::Sync, leave)), out.back().rma = false; break;   // Flush, FlushAll
    }
}

void MpiRecorder::active_target(unsigned rank, const Call& c, const Reply& r, std::uint64_t leave,
                                const std::vector<std::uint64_t>& group) {
    const Op op = static_cast<Op>(c.op);
    Event e = event(op == Op::WinWait || op == Op::WinTest ? Kind::WaitChange : Kind::GroupSync, leave);
    e.rma = true;
    e.win = c.win;
    e.op = static_cast<std::uint8_t>(op);
    e.tag = static_cast<std::uint32_t>(r.flag);
    e.root = static_cast<std::uint32_t>(c.root);
    if (op == Op::WinPost || op == Op::WinStart) {
        std::ostringstream os;
        os << std::hex;
        for (const std::uint64_t g : group) os << ' ' << g;
        strings_.push_back(group.empty() ? std::string() : os.str().substr(1));
        e.group = static_cast<std::uint32_t>(strings_.size());
    }
    events_.at(rank).push_back(e);
}

void MpiRecorder::rma_request(unsigned rank, const Call& c, const Reply& r, std::uint64_t enter, std::uint64_t leave,
                              const MpiCommunicators& comms) {
    // Its operation's event (a get-accumulate's: a fetch-and-op's, of its
    // elements), which names the call; a request-based one's matching id
    // is its request, which its MPI_Wait and MPI_Test name.
    const Op op = static_cast<Op>(c.op);
    Call base = c;
    base.op = static_cast<std::uint32_t>(mpiwire::operation_of(op) == Op::GetAccumulate ? Op::FetchOp
                                                                                        : mpiwire::operation_of(op));
    one_sided(rank, base, r, enter, leave, comms);
    Event& e = events_.at(rank).back();
    e.call = static_cast<std::uint8_t>(op);
    if (mpiwire::operation_of(op) == Op::GetAccumulate) e.sent = e.received = c.bytes;
    if (mpiwire::operation_of(op) == op) return;
    e.request = r.request;
    requests_[rank][r.request] = c.win;
}

void MpiRecorder::rma_ended(unsigned rank, const Call& c, const Reply& r, std::uint64_t enter, std::uint64_t leave) {
    const auto it = requests_[rank].find(c.request);
    if (it == requests_[rank].end())
        throw std::logic_error("mpi.record: a request-based RMA request ends that was never started");
    std::vector<Event>& out = events_.at(rank);
    auto rma = [&](Kind k, std::uint64_t at) {
        Event e = event(k, at);
        e.rma = true;
        e.win = it->second;
        e.request = c.request;
        return e;
    };
    // A test: RmaOpTest; complete (a wait, a test that found it so):
    // RmaOpCompleteNonBlocking at the call's return.
    if (static_cast<Op>(c.op) == Op::Test) out.push_back(rma(Kind::OpTest, enter));
    if (!r.flag) return;
    out.push_back(rma(Kind::OpComplete, leave));
    requests_[rank].erase(it);
}

std::string MpiRecorder::call_name(std::uint32_t op) { return region_name(static_cast<std::uint8_t>(op)); }

std::string MpiRecorder::anchor_of(const std::string& dir) {
    std::filesystem::path p(dir);
    if (!p.has_filename()) p = p.parent_path();
    return (p / (p.filename().string() + ".otf2")).string();
}

std::string MpiRecorder::write(const std::string& dir, const MpiCommunicators& comms) const {
    namespace fs = std::filesystem;
    fs::path p(dir);
    if (!p.has_filename()) p = p.parent_path();
    std::error_code ec;
    if (fs::exists(p, ec) || ec)
        throw std::runtime_error("mpi.record: " + p.string() +
                                 " exists now (it did not when the run began): not overwritten; the trace is not "
                                 "written");
    OTF2_Archive* a = OTF2_Archive_Open(p.string().c_str(), p.filename().string().c_str(), OTF2_FILEMODE_WRITE,
                                        OTF2_CHUNK_SIZE_MIN * 4, OTF2_CHUNK_SIZE_MIN * 4, OTF2_SUBSTRATE_POSIX,
                                        OTF2_COMPRESSION_NONE);
    if (!a) throw std::runtime_error("mpi.record: cannot make the OTF2 archive " + p.string());
    OTF2_FlushCallbacks flush = {pre_flush, post_flush};
    OTF2_Archive_SetFlushCallbacks(a, &flush, nullptr);
    OTF2_Archive_SetSerialCollectiveCallbacks(a);
    OTF2_Archive_SetCreator(a, (std::string(recorded::kCreator) + " (vrdmasim's mpi workload, Open MPI)").c_str());
    OTF2_Archive_SetDescription(a, "an MPI program's calls as vrdmasim simulated them; timestamps in simulated ps");
    OTF2_Archive_OpenEvtFiles(a);
    OTF2_AttributeList* attrs = OTF2_AttributeList_New();
    std::vector<std::uint64_t> counts;
    std::uint64_t length = 0;
    for (std::size_t r = 0; r < events_.size(); ++r) {
        OTF2_EvtWriter* w = OTF2_Archive_GetEvtWriter(a, r);
        for (const Event& e : events_[r]) {
            write_event(w, attrs, e);
            length = std::max(length, e.time);
        }
        uint64_t n = 0;
        OTF2_EvtWriter_GetNumberOfEvents(w, &n);
        counts.push_back(n);
        OTF2_Archive_CloseEvtWriter(a, w);
    }
    OTF2_AttributeList_Delete(attrs);
    OTF2_Archive_CloseEvtFiles(a);
    OTF2_Archive_OpenDefFiles(a);
    for (std::size_t r = 0; r < events_.size(); ++r) OTF2_Archive_CloseDefWriter(a, OTF2_Archive_GetDefWriter(a, r));
    OTF2_Archive_CloseDefFiles(a);
    OTF2_GlobalDefWriter* g = OTF2_Archive_GetGlobalDefWriter(a);
    write_definitions(g, counts, length, comms, strings_, windows_);
    if (OTF2_Archive_Close(a) != OTF2_SUCCESS)
        throw std::runtime_error("mpi.record: the OTF2 archive " + p.string() + " cannot be written");
    return anchor_of(dir);
}

}   // namespace vrdmasim
