#include "workloads/trace_reader.hpp"

#include <otf2/otf2.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "library/collectives/communicator.hpp"
#include "src/core/params.hpp"
#include "workloads/mpi/protocol.hpp"

namespace vrdmasim {

namespace {

// OTF2's own error messages: kept (the last one) for the refusal that
// names the rank and what is missing, instead of printed raw to stderr.
std::string& otf2_error() {
    static thread_local std::string last;
    return last;
}
OTF2_ErrorCode keep_otf2_error(void*, const char*, uint64_t, const char*, OTF2_ErrorCode code, const char* format,
                               va_list va) {
    char text[512];
    std::vsnprintf(text, sizeof text, format, va);
    otf2_error() = std::string(OTF2_Error_GetDescription(code)) + (text[0] ? std::string(": ") + text : "");
    return code;
}

// Collectives the replay does (library/collectives): OTF2_CollectiveOp.
bool replayable(OTF2_CollectiveOp op) {
    return op == OTF2_COLLECTIVE_OP_BARRIER || op == OTF2_COLLECTIVE_OP_BCAST || op == OTF2_COLLECTIVE_OP_REDUCE ||
           op == OTF2_COLLECTIVE_OP_ALLREDUCE || op == OTF2_COLLECTIVE_OP_ALLGATHER ||
           op == OTF2_COLLECTIVE_OP_ALLTOALL || op == OTF2_COLLECTIVE_OP_GATHER || op == OTF2_COLLECTIVE_OP_SCATTER ||
           op == OTF2_COLLECTIVE_OP_SCAN || op == OTF2_COLLECTIVE_OP_EXSCAN || op == OTF2_COLLECTIVE_OP_CREATE_HANDLE ||
           op == OTF2_COLLECTIVE_OP_DESTROY_HANDLE || op == OTF2_COLLECTIVE_OP_GATHERV ||
           op == OTF2_COLLECTIVE_OP_SCATTERV || op == OTF2_COLLECTIVE_OP_ALLGATHERV ||
           op == OTF2_COLLECTIVE_OP_ALLTOALLV || op == OTF2_COLLECTIVE_OP_REDUCE_SCATTER ||
           op == OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK;
}

// A v-variant's or reduce-scatter's name (OTF2_CollectiveOp).
std::string vector_name(int op) {
    switch (op) {
    case OTF2_COLLECTIVE_OP_GATHERV: return "gatherv";
    case OTF2_COLLECTIVE_OP_SCATTERV: return "scatterv";
    case OTF2_COLLECTIVE_OP_ALLGATHERV: return "allgatherv";
    case OTF2_COLLECTIVE_OP_ALLTOALLV: return "alltoallv";
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER: return "reduce_scatter";
    default: return "reduce_scatter_block";
    }
}

// The v-variants and reduce-scatter: a rank's part is blocks of its own.
bool blocked(int op) {
    return op == OTF2_COLLECTIVE_OP_GATHERV || op == OTF2_COLLECTIVE_OP_SCATTERV ||
           op == OTF2_COLLECTIVE_OP_ALLGATHERV || op == OTF2_COLLECTIVE_OP_ALLTOALLV ||
           op == OTF2_COLLECTIVE_OP_REDUCE_SCATTER || op == OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK;
}
}   // namespace

// The archive open, its definitions read.
struct TraceReader::Impl {
    OTF2_Reader* reader = nullptr;
    std::map<std::uint64_t, std::string> strings;
    std::map<std::uint64_t, bool> region_mpi;
    std::map<std::uint64_t, std::uint64_t> region_name;   // region -> its name (a string)
    std::map<std::uint64_t, bool> region_sendrecv;   // MPI_Sendrecv, MPI_Sendrecv_replace
    std::map<std::uint64_t, TraceEvent::Call> region_call;   // a trace vrdmasim recorded: TraceEvent::call
    std::map<std::uint64_t, std::uint64_t> location_group;   // location -> its group
    // location -> the events its file holds, as the writer counted them
    // when it closed the file (the definitions' "number of events").
    std::map<std::uint64_t, std::uint64_t> location_events;
    std::map<std::uint64_t, unsigned> threads;   // location group -> locations in it
    std::vector<std::uint64_t> mpi_locations;   // COMM_LOCATIONS of MPI, rank order
    std::map<std::uint64_t, std::vector<std::uint64_t>> comm_groups;   // COMM_GROUP: members (rank indices)
    std::map<std::uint64_t, std::uint64_t> comms;   // comm -> its group
    std::map<std::uint64_t, std::string> comm_names;
    std::map<std::uint64_t, std::uint64_t> comm_parent;
    std::uint64_t world = OTF2_UNDEFINED_COMM;
    std::map<std::uint64_t, std::uint32_t> context;   // comm -> its context (TraceEvent::comm)
    std::vector<std::vector<unsigned>> members;   // by context: world ranks
    std::vector<std::string> context_names;   // by context: the communicator's name
    std::map<std::uint64_t, std::string> comm_problem;   // comm -> why events on it cannot be replayed
    std::uint64_t resolution = 1;
    std::map<std::uint64_t, unsigned> rank_of;   // location -> rank
    std::map<std::uint64_t, std::uint64_t> attribute_names;   // attribute -> its name (a string)
    bool local_defs = false;   // the archive has local definitions (mapping tables)
    std::string creator;   // the archive's creator
    bool vrdmasim = false;   // recorded by vrdmasim (recorded::kCreator)
    std::map<std::uint64_t, std::uint64_t> window_comm;   // RMA window -> its comm

    ~Impl() {
        if (reader) OTF2_Reader_Close(reader);
    }
};

namespace {

using Impl = TraceReader::Impl;

OTF2_CallbackCode on_clock(void* u, uint64_t resolution, uint64_t, uint64_t, uint64_t) {
    static_cast<Impl*>(u)->resolution = resolution;
    return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_string(void* u, OTF2_StringRef self, const char* s) {
    static_cast<Impl*>(u)->strings[self] = s;
    return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_attribute(void* u, OTF2_AttributeRef self, OTF2_StringRef name, OTF2_StringRef, OTF2_Type) {
    static_cast<Impl*>(u)->attribute_names[self] = name;
    return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_region(void* u, OTF2_RegionRef self, OTF2_StringRef name, OTF2_StringRef, OTF2_StringRef,
                            OTF2_RegionRole, OTF2_Paradigm paradigm, OTF2_RegionFlag, OTF2_StringRef, uint32_t,
                            uint32_t) {
    static_cast<Impl*>(u)->region_mpi[self] = paradigm == OTF2_PARADIGM_MPI;
    static_cast<Impl*>(u)->region_name[self] = name;
    return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_location(void* u, OTF2_LocationRef self, OTF2_StringRef, OTF2_LocationType, uint64_t events,
                              OTF2_LocationGroupRef group) {
    Impl& m = *static_cast<Impl*>(u);
    m.location_group[self] = group;
    m.location_events[self] = events;
    ++m.threads[group];
    return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_group(void* u, OTF2_GroupRef self, OTF2_StringRef, OTF2_GroupType type, OTF2_Paradigm paradigm,
                           OTF2_GroupFlag, uint32_t n, const uint64_t* members) {
    Impl& m = *static_cast<Impl*>(u);
    if (paradigm != OTF2_PARADIGM_MPI) return OTF2_CALLBACK_SUCCESS;
    if (type == OTF2_GROUP_TYPE_COMM_LOCATIONS) m.mpi_locations.assign(members, members + n);
    if (type == OTF2_GROUP_TYPE_COMM_GROUP) m.comm_groups[self].assign(members, members + n);
    return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_rma_win(void* u, OTF2_RmaWinRef self, OTF2_StringRef, OTF2_CommRef comm, OTF2_RmaWinFlag) {
    static_cast<Impl*>(u)->window_comm[self] = comm;
    return OTF2_CALLBACK_SUCCESS;
}
OTF2_CallbackCode on_comm(void* u, OTF2_CommRef self, OTF2_StringRef name, OTF2_GroupRef group, OTF2_CommRef parent,
                          OTF2_CommFlag) {
    Impl& m = *static_cast<Impl*>(u);
    m.comms[self] = group;
    m.comm_parent[self] = parent;
    m.comm_names[self] = m.strings.count(name) ? m.strings[name] : "comm " + std::to_string(self);
    return OTF2_CALLBACK_SUCCESS;
}

// Where one rank's events go while its file is read.
struct Sink {
    const Impl* impl = nullptr;
    unsigned rank = 0;
    std::deque<TraceEvent>* out = nullptr;
    // check(): the first event the replay cannot do, if any; what the
    // trace does.
    std::string* problem = nullptr;
    TraceSummary* summary = nullptr;
    // check(): each (sender, receiver, tag)'s messages, as sent and as
    // received, so that one without its other half is refused before the
    // run (it would fail mid-run, or wait for ever).
    struct Half {
        std::uint64_t count = 0, last_tick = 0;
    };
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>, std::pair<Half, Half>>* matching =
        nullptr;
    int sendrecv = -1;   // check(): inside MPI_Sendrecv, its send (1) and receive (2) seen so far
    // check(): the rank's collectives so far, by communicator (as the
    // replay numbers them: TraceWorkload::Rank::collective).
    std::map<std::uint32_t, std::uint64_t> collectives = {};
    // check(): its caller's look at each event (TraceReader::check's `each`).
    const TraceReader::EventFn* each = nullptr;
};

std::string where(const Sink& s, OTF2_TimeStamp t) {
    std::ostringstream os;
    os << "rank " << s.rank << " at tick " << t;
    return os.str();
}

bool refuse(Sink& s, const std::string& what) {
    if (s.problem && s.problem->empty()) *s.problem = what;
    return false;
}

// The context of communicator `c` (TraceEvent::comm), which the rank must
// be a member of.
bool comm_of(Sink& s, OTF2_CommRef c, OTF2_TimeStamp t, const char* event, std::uint32_t& context) {
    const auto name = s.impl->comm_names.find(c);
    const std::string which = std::string(event) + " on communicator " +
                              (name != s.impl->comm_names.end() ? name->second : "?") + " (" + where(s, t) + ")";
    const auto it = s.impl->context.find(c);
    if (it == s.impl->context.end()) {
        const auto why = s.impl->comm_problem.find(c);
        return refuse(s, which + ": " +
                             (why != s.impl->comm_problem.end()
                                  ? why->second
                                  : "no Comm definition of a group of ranks names it (an inter-communicator?)"));
    }
    context = it->second;
    const std::vector<unsigned>& members = s.impl->members[context];
    if (std::find(members.begin(), members.end(), s.rank) == members.end())
        return refuse(s, which + ": the rank is not a member of it");
    return true;
}

// `peer`, a rank of communicator `context`, as a rank of MPI_COMM_WORLD.
bool peer_ok(Sink& s, std::uint32_t context, std::uint32_t& peer, OTF2_TimeStamp t, const char* event) {
    const std::vector<unsigned>& members = s.impl->members[context];
    if (peer >= members.size())
        return refuse(s, std::string(event) + " with peer rank " + std::to_string(peer) + " (" + where(s, t) +
                             "): " + (context == 0 ? "the trace has " : "its communicator has ") +
                             std::to_string(members.size()) + " ranks");
    peer = members[peer];   // (the rank's own: a self message, a CPU copy in the library)
    return true;
}

// Inside MPI_Sendrecv (check() only): at most one MpiSend and one MpiRecv,
// nothing else of MPI's.
bool in_sendrecv(Sink& s, TraceEvent::Kind k, OTF2_TimeStamp t) {
    if (!s.problem || s.sendrecv < 0) return true;
    const int bit = k == TraceEvent::Kind::Send ? 1 : k == TraceEvent::Kind::Recv ? 2 : 4;
    if (bit == 4 || (s.sendrecv & bit))
        return refuse(s, std::string("MPI_Sendrecv with ") +
                             (bit == 4   ? "another MPI event than its send and receive"
                              : bit == 1 ? "a second send"
                                         : "a second receive") +
                             " (" + where(s, t) + "): not the shape MPI_Sendrecv has");
    s.sendrecv |= bit;
    return true;
}

// An event the replay acts on must carry no attribute: what one says
// (Score-P's, a tool's) the replay would not know how to honour.
bool plain(Sink& s, OTF2_AttributeList* a, OTF2_TimeStamp t, const char* event) {
    if (!a || OTF2_AttributeList_GetNumberOfElements(a) == 0) return true;
    OTF2_AttributeRef ref = 0;
    OTF2_Type type;
    OTF2_AttributeValue value;
    std::string name = "?";
    if (OTF2_AttributeList_GetAttributeByIndex(a, 0, &ref, &type, &value) == OTF2_SUCCESS) {
        const auto it = s.impl->attribute_names.find(ref);
        if (it != s.impl->attribute_names.end()) {
            const auto str = s.impl->strings.find(it->second);
            name = str != s.impl->strings.end() ? str->second : "attribute " + std::to_string(ref);
        }
    }
    return refuse(s, std::string(event) + " with attribute '" + name + "' (" + where(s, t) +
                         "): the replay does not interpret attributes; not replayed rather than replayed without it");
}

// recorded::kMemory's runs, or none if `text` is not as vrdmasim writes it.
std::shared_ptr<const ProgramMemory> parse_memory(const std::string& text) {
    auto m = std::make_shared<ProgramMemory>();
    std::istringstream in(text);
    for (std::string w; in >> w;) {
        const std::size_t plus = w.find('+');
        if (w.size() < 4 || (w[0] != 'U' && w[0] != 'T') || plus == std::string::npos || plus < 2) return nullptr;
        char* end = nullptr;
        const std::uint64_t va = std::strtoull(w.c_str() + 1, &end, 16);
        if (end != w.c_str() + plus) return nullptr;
        const std::uint64_t len = std::strtoull(w.c_str() + plus + 1, &end, 16);
        if (*end || len == 0) return nullptr;
        auto& runs = w[0] == 'U' ? m->unmapped : m->touched;
        runs.insert(runs.end(), {va, len});
    }
    return m;
}

// recorded::kBlocks's numbers, or none if `text` is not as vrdmasim writes it.
std::shared_ptr<const RecordedBlocks> parse_blocks(const std::string& text) {
    auto b = std::make_shared<RecordedBlocks>();
    std::istringstream in(text);
    in >> std::hex;
    if (!(in >> b->bytes)) return nullptr;
    for (std::uint64_t v; in >> v;) b->values.push_back(v);
    if (!in.eof()) return nullptr;
    return b;
}

// The attributes of an event a trace recorded by vrdmasim carries
// (recorded::): the program's buffers, into `e`; any other attribute is
// refused as plain() refuses it.
bool buffer_attributes(Sink& s, OTF2_AttributeList* a, OTF2_TimeStamp t, const char* event, TraceEvent& e,
                       bool enter = false) {
    const std::uint32_t n = a ? OTF2_AttributeList_GetNumberOfElements(a) : 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        OTF2_AttributeRef ref = 0;
        OTF2_Type type;
        OTF2_AttributeValue value;
        if (OTF2_AttributeList_GetAttributeByIndex(a, i, &ref, &type, &value) != OTF2_SUCCESS)
            return plain(s, a, t, event);
        const auto it = s.impl->attribute_names.find(ref);
        const auto str = it == s.impl->attribute_names.end() ? s.impl->strings.end() : s.impl->strings.find(it->second);
        const std::string name = str == s.impl->strings.end() ? "" : str->second;
        const bool probe = s.impl->vrdmasim && enter;
        std::uint64_t* field = probe                            ? nullptr
                               : name == recorded::kBuffer      ? &e.va
                               : name == recorded::kBuffer2     ? &e.va2
                               : name == recorded::kBufferBytes ? &e.capacity
                                                                : nullptr;
        std::int64_t* signed_field = !probe                    ? nullptr
                                     : name == recorded::kPeer ? &e.probe_peer
                                     : name == recorded::kTag  ? &e.probe_tag
                                                               : nullptr;
        if (probe && name == recorded::kMemory && type == OTF2_TYPE_STRING) {
            const auto text = s.impl->strings.find(value.stringRef);
            if (text == s.impl->strings.end() || !(e.memory = parse_memory(text->second)))
                return refuse(s, std::string(event) + " with a program memory attribute that is not vrdmasim's (" +
                                     where(s, t) + ")");
            continue;
        }
        if (!probe && name == recorded::kBlocks && type == OTF2_TYPE_STRING) {
            const auto text = s.impl->strings.find(value.stringRef);
            if (text == s.impl->strings.end() || !(e.blocks = parse_blocks(text->second)))
                return refuse(
                    s, std::string(event) + " with blocks that are not as vrdmasim records them (" + where(s, t) + ")");
            continue;
        }
        if (!probe && name == recorded::kReduction && type == OTF2_TYPE_UINT64) {
            e.reduction = value.uint64 + 1;
            continue;
        }
        if (probe && name == recorded::kComm && type == OTF2_TYPE_UINT64) {
            e.comm = static_cast<std::uint32_t>(value.uint64);
            continue;
        }
        if (signed_field && type == OTF2_TYPE_INT64) {
            *signed_field = value.int64;
            continue;
        }
        if (!field || type != OTF2_TYPE_UINT64)
            return refuse(s, std::string(event) + " with attribute '" + (name.empty() ? "?" : name) + "' (" +
                                 where(s, t) +
                                 (field ? "): not of type uint64, as vrdmasim records it"
                                        : "): the replay does not interpret attributes but vrdmasim's buffer "
                                          "addresses; not replayed rather than replayed without it"));
        *field = value.uint64;
        e.buffers = true;
    }
    return true;
}

// A v-variant or reduce-scatter without its blocks (Score-P's): the rank's
// bytes kept for the replay to derive every member's blocks from.
void vector_bytes(Sink& s, const TraceEvent& e, std::uint64_t call) {
    const std::vector<unsigned>& members = s.impl->members[e.comm];
    TraceSummary::Vector& v = s.summary->vectors[{e.comm, call}];
    if (v.bytes.empty()) {
        v.op = e.op;
        v.root = e.root;
        v.bytes.resize(members.size());
        v.seen.resize(members.size());
    }
    const auto at = static_cast<std::size_t>(std::find(members.begin(), members.end(), s.rank) - members.begin());
    if (v.op != e.op || v.root != e.root || at >= members.size())
        refuse(s, "MPI " + vector_name(e.op) + ", collective " + std::to_string(call) + " on communicator " +
                      s.impl->context_names[e.comm] + " (" + where(s, e.time) + "), is not the call (MPI " +
                      vector_name(v.op) + ", root " + std::to_string(v.root) + ") another member makes there");
    else v.bytes[at] = {e.sent, e.received}, v.seen[at] = true;
}

OTF2_CallbackCode push(Sink& s, const TraceEvent& e) {
    if (s.out) s.out->push_back(e);
    if (s.each && *s.each) (*s.each)(s.rank, e);
    if (s.summary) {
        using K = TraceEvent::Kind;
        if (e.kind == K::Send || e.kind == K::Isend || e.kind == K::Recv || e.kind == K::Irecv)
            s.summary->peers.at(s.rank).insert(e.peer);
        const bool ends = e.kind == K::CollectiveEnd || e.kind == K::CollectiveComplete;
        if (ends && e.op != TraceEvent::kLocal) {
            s.summary->collectives.insert(e.op);
            s.summary->collective_comms[e.op].insert(e.comm);
            if (e.create && s.impl->vrdmasim) {   // Open MPI's split: an allgather too (no transfer of its own)
                s.summary->collectives.insert(OTF2_COLLECTIVE_OP_ALLGATHER);
                s.summary->collective_comms[OTF2_COLLECTIVE_OP_ALLGATHER].insert(e.comm);
            } else {
                ++s.summary->collective_calls;
            }
            // Its number among the blocking ones on its communicator, as
            // the replay counts them (a split of a trace vrdmasim recorded
            // is not one; a non-blocking v-variant carries its blocks).
            if (e.kind == K::CollectiveEnd) {
                const std::uint64_t call = e.create && s.impl->vrdmasim ? 0 : s.collectives[e.comm]++;
                if (blocked(e.op) && !e.blocks) vector_bytes(s, e, call);
            }
        }
        if (e.kind == K::Send || e.kind == K::Isend || e.kind == K::Recv || e.kind == K::Irecv ||
            (ends && e.op != TraceEvent::kLocal && !e.create))
            ++(e.buffers ? s.summary->with_buffers : s.summary->without_buffers);
        if (e.kind == K::Recv || e.kind == K::Irecv) ++s.summary->receives;
        if (s.matching && (e.kind == K::Send || e.kind == K::Isend || e.kind == K::Recv || e.kind == K::Irecv)) {
            const bool send = e.kind == K::Send || e.kind == K::Isend;
            auto& pair = (*s.matching)[{send ? s.rank : e.peer, send ? e.peer : s.rank, e.tag, e.comm}];
            Sink::Half& h = send ? pair.first : pair.second;
            ++h.count;
            h.last_tick = e.time;
        }
        const std::uint64_t bytes = ends ? std::max(e.sent, e.received) : e.length;
        if (bytes > s.summary->largest) {
            s.summary->largest = bytes;
            s.summary->largest_rank = s.rank;
            s.summary->largest_tick = e.time;
        }
    }
    return OTF2_CALLBACK_SUCCESS;
}

OTF2_CallbackCode ev_enter(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                           OTF2_RegionRef r) {
    Sink& s = *static_cast<Sink*>(u);
    TraceEvent e;
    e.kind = TraceEvent::Kind::Enter;
    // A trace vrdmasim recorded: a probe's message in its attributes.
    if (!(s.impl->vrdmasim ? buffer_attributes(s, a, t, "Enter", e, true) : plain(s, a, t, "Enter")))
        return OTF2_CALLBACK_INTERRUPT;
    e.buffers = false;
    e.time = t;
    const auto call = s.impl->region_call.find(r);
    if (call != s.impl->region_call.end()) e.call = call->second;
    const auto it = s.impl->region_mpi.find(r);
    e.mpi = it != s.impl->region_mpi.end() && it->second;
    const auto sr = s.impl->region_sendrecv.find(r);
    e.sendrecv = sr != s.impl->region_sendrecv.end() && sr->second;
    if (e.sendrecv) s.sendrecv = 0;
    return push(s, e);
}
OTF2_CallbackCode ev_leave(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                           OTF2_RegionRef r) {
    if (!plain(*static_cast<Sink*>(u), a, t, "Leave")) return OTF2_CALLBACK_INTERRUPT;
    Sink& s = *static_cast<Sink*>(u);
    TraceEvent e;
    e.kind = TraceEvent::Kind::Leave;
    e.time = t;
    const auto it = s.impl->region_mpi.find(r);
    e.mpi = it != s.impl->region_mpi.end() && it->second;
    if (e.mpi) s.sendrecv = -1;
    return push(s, e);
}
TraceEvent message(TraceEvent::Kind k, OTF2_TimeStamp t, std::uint32_t peer, std::uint32_t tag, std::uint64_t len,
                   std::uint64_t req = 0, std::uint32_t comm = 0) {
    TraceEvent e;
    e.kind = k;
    e.comm = comm;
    e.time = t;
    e.peer = peer;
    e.tag = tag;
    e.length = len;
    e.request = req;
    return e;
}
// `e` with the buffers `attrs` carries.
TraceEvent with_buffers(TraceEvent e, const TraceEvent& attrs) {
    e.buffers = attrs.buffers;
    e.va = attrs.va;
    e.va2 = attrs.va2;
    e.capacity = attrs.capacity;
    e.blocks = attrs.blocks;
    e.reduction = attrs.reduction;
    return e;
}
OTF2_CallbackCode ev_send(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a, uint32_t peer,
                          OTF2_CommRef c, uint32_t tag, uint64_t len) {
    TraceEvent attrs;
    if (!buffer_attributes(*static_cast<Sink*>(u), a, t, "MpiSend", attrs)) return OTF2_CALLBACK_INTERRUPT;
    Sink& s = *static_cast<Sink*>(u);
    std::uint32_t ctx = 0;
    if (!comm_of(s, c, t, "MPI send", ctx) || !peer_ok(s, ctx, peer, t, "MPI send") ||
        !in_sendrecv(s, TraceEvent::Kind::Send, t))
        return OTF2_CALLBACK_INTERRUPT;
    return push(s, with_buffers(message(TraceEvent::Kind::Send, t, peer, tag, len, 0, ctx), attrs));
}
OTF2_CallbackCode ev_isend(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a, uint32_t peer,
                           OTF2_CommRef c, uint32_t tag, uint64_t len, uint64_t req) {
    TraceEvent attrs;
    if (!buffer_attributes(*static_cast<Sink*>(u), a, t, "MpiIsend", attrs)) return OTF2_CALLBACK_INTERRUPT;
    Sink& s = *static_cast<Sink*>(u);
    std::uint32_t ctx = 0;
    if (!comm_of(s, c, t, "MPI isend", ctx) || !peer_ok(s, ctx, peer, t, "MPI isend") ||
        !in_sendrecv(s, TraceEvent::Kind::Isend, t))
        return OTF2_CALLBACK_INTERRUPT;
    return push(s, with_buffers(message(TraceEvent::Kind::Isend, t, peer, tag, len, req, ctx), attrs));
}
OTF2_CallbackCode ev_isend_complete(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                                    uint64_t req) {
    if (!plain(*static_cast<Sink*>(u), a, t, "MpiIsendComplete") ||
        !in_sendrecv(*static_cast<Sink*>(u), TraceEvent::Kind::IsendComplete, t))
        return OTF2_CALLBACK_INTERRUPT;
    return push(*static_cast<Sink*>(u), message(TraceEvent::Kind::IsendComplete, t, 0, 0, 0, req));
}
OTF2_CallbackCode ev_irecv_request(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                                   uint64_t req) {
    if (!plain(*static_cast<Sink*>(u), a, t, "MpiIrecvRequest") ||
        !in_sendrecv(*static_cast<Sink*>(u), TraceEvent::Kind::IrecvRequest, t))
        return OTF2_CALLBACK_INTERRUPT;
    return push(*static_cast<Sink*>(u), message(TraceEvent::Kind::IrecvRequest, t, 0, 0, 0, req));
}
OTF2_CallbackCode ev_recv(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a, uint32_t peer,
                          OTF2_CommRef c, uint32_t tag, uint64_t len) {
    TraceEvent attrs;
    if (!buffer_attributes(*static_cast<Sink*>(u), a, t, "MpiRecv", attrs)) return OTF2_CALLBACK_INTERRUPT;
    Sink& s = *static_cast<Sink*>(u);
    std::uint32_t ctx = 0;
    if (!comm_of(s, c, t, "MPI recv", ctx) || !peer_ok(s, ctx, peer, t, "MPI recv") ||
        !in_sendrecv(s, TraceEvent::Kind::Recv, t))
        return OTF2_CALLBACK_INTERRUPT;
    return push(s, with_buffers(message(TraceEvent::Kind::Recv, t, peer, tag, len, 0, ctx), attrs));
}
OTF2_CallbackCode ev_irecv(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a, uint32_t peer,
                           OTF2_CommRef c, uint32_t tag, uint64_t len, uint64_t req) {
    TraceEvent attrs;
    if (!buffer_attributes(*static_cast<Sink*>(u), a, t, "MpiIrecv", attrs)) return OTF2_CALLBACK_INTERRUPT;
    Sink& s = *static_cast<Sink*>(u);
    std::uint32_t ctx = 0;
    if (!comm_of(s, c, t, "MPI irecv", ctx) || !peer_ok(s, ctx, peer, t, "MPI irecv") ||
        !in_sendrecv(s, TraceEvent::Kind::Irecv, t))
        return OTF2_CALLBACK_INTERRUPT;
    return push(s, with_buffers(message(TraceEvent::Kind::Irecv, t, peer, tag, len, req, ctx), attrs));
}
OTF2_CallbackCode ev_request_test(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                                  uint64_t req) {
    Sink& s = *static_cast<Sink*>(u);
    if (!s.impl->vrdmasim) return OTF2_CALLBACK_SUCCESS;   // an MPI_Test that did not complete: nothing to do
    if (!plain(s, a, t, "MpiRequestTest")) return OTF2_CALLBACK_INTERRUPT;
    return push(s, message(TraceEvent::Kind::RequestTest, t, 0, 0, 0, req));
}
OTF2_CallbackCode ev_coll_begin(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a) {
    if (!plain(*static_cast<Sink*>(u), a, t, "MpiCollectiveBegin")) return OTF2_CALLBACK_INTERRUPT;
    TraceEvent e;
    e.kind = TraceEvent::Kind::CollectiveBegin;
    e.time = t;
    return push(*static_cast<Sink*>(u), e);
}
// MpiCollectiveEnd, or (`nonblocking`) NonBlockingCollectiveComplete.
OTF2_CallbackCode collective_end(Sink& s, OTF2_TimeStamp t, OTF2_AttributeList* a, OTF2_CollectiveOp op, OTF2_CommRef c,
                                 uint32_t root, uint64_t sent, uint64_t received, bool nonblocking, uint64_t req) {
    TraceEvent attrs;
    const char* name = nonblocking ? "NonBlockingCollectiveComplete" : "MpiCollectiveEnd";
    if (!buffer_attributes(s, a, t, name, attrs)) return OTF2_CALLBACK_INTERRUPT;
    std::uint32_t ctx = 0;
    if (!comm_of(s, c, t, "MPI collective", ctx) || !in_sendrecv(s, TraceEvent::Kind::CollectiveEnd, t))
        return OTF2_CALLBACK_INTERRUPT;
    const std::size_t ranks = s.impl->members[ctx].size();
    if (nonblocking && (op == OTF2_COLLECTIVE_OP_CREATE_HANDLE || op == OTF2_COLLECTIVE_OP_DESTROY_HANDLE ||
                        (blocked(op) && !attrs.blocks))) {
        refuse(s, std::string("a non-blocking ") +
                      (blocked(op) ? "MPI " + vector_name(op) + " without its blocks (vrdmasim::blocks)"
                                   : std::string("communicator's creation or destruction")) +
                      " (" + where(s, t) + "): its replay is not built");
        return OTF2_CALLBACK_INTERRUPT;
    }
    if (op == OTF2_COLLECTIVE_OP_ALLTOALLV && !attrs.blocks) {
        refuse(s, "MPI alltoallv (" + where(s, t) +
                      ") without its blocks: an OTF2 collective record carries a rank's bytes sent and received in "
                      "all, and what it sends to each rank cannot be told from every rank's totals (nor is it "
                      "guessed); a trace vrdmasim recorded carries them (vrdmasim::blocks)");
        return OTF2_CALLBACK_INTERRUPT;
    }
    if (attrs.blocks && (!blocked(op) || attrs.blocks->values.size() != 4 * ranks)) {
        refuse(s, "MPI collective (" + where(s, t) + ") with " + std::to_string(attrs.blocks->values.size()) +
                      " numbers of blocks on a communicator of " + std::to_string(ranks) +
                      " ranks: not as vrdmasim records a v-variant's or reduce-scatter's (4 a rank)");
        return OTF2_CALLBACK_INTERRUPT;
    }
    if (!replayable(op)) {
        refuse(s, "MPI collective operation " + std::to_string(static_cast<int>(op)) + " (OTF2_CollectiveOp; " +
                      where(s, t) +
                      "): the replay does barrier, bcast, reduce, allreduce, allgather, alltoall, gather, "
                      "scatter, scan, exscan, gatherv, scatterv, allgatherv, alltoallv, reduce_scatter and "
                      "reduce_scatter_block, and a communicator's creation and destruction");
        return OTF2_CALLBACK_INTERRUPT;
    }
    const bool rooted = op == OTF2_COLLECTIVE_OP_BCAST || op == OTF2_COLLECTIVE_OP_REDUCE ||
                        op == OTF2_COLLECTIVE_OP_GATHER || op == OTF2_COLLECTIVE_OP_SCATTER ||
                        op == OTF2_COLLECTIVE_OP_GATHERV || op == OTF2_COLLECTIVE_OP_SCATTERV;
    if (rooted && root >= ranks) {
        refuse(s, std::string(op == OTF2_COLLECTIVE_OP_BCAST     ? "MPI bcast"
                              : op == OTF2_COLLECTIVE_OP_REDUCE  ? "MPI reduce"
                              : op == OTF2_COLLECTIVE_OP_GATHER  ? "MPI gather"
                              : op == OTF2_COLLECTIVE_OP_SCATTER ? "MPI scatter"
                              : op == OTF2_COLLECTIVE_OP_GATHERV ? "MPI gatherv"
                                                                 : "MPI scatterv") +
                      (root == OTF2_COLLECTIVE_ROOT_NONE ? std::string(" with no root")
                                                         : " with root rank " + std::to_string(root)) +
                      " (" + where(s, t) + "): the communicator has " + std::to_string(ranks) + " ranks");
        return OTF2_CALLBACK_INTERRUPT;
    }
    TraceEvent e;
    e.kind = nonblocking ? TraceEvent::Kind::CollectiveComplete : TraceEvent::Kind::CollectiveEnd;
    e.request = req;
    e.time = t;
    e.comm = ctx;
    e.op = static_cast<int>(op);
    e.root = rooted ? root : 0;
    e.sent = sent;
    e.received = received;
    e = with_buffers(e, attrs);
    if (op == OTF2_COLLECTIVE_OP_CREATE_HANDLE) {
        e.create = true;
        // MPICH agrees on the new communicator's context id over the one it
        // is made from: an allreduce of its 2,048-bit mask
        // (MPIR_Get_contextid_sparse).
        e.op = OTF2_COLLECTIVE_OP_ALLREDUCE;
        e.sent = e.received = 256;
    }
    if (op == OTF2_COLLECTIVE_OP_DESTROY_HANDLE) e.op = TraceEvent::kLocal;   // MPICH frees it locally
    return push(s, e);
}
OTF2_CallbackCode ev_coll_end(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                              OTF2_CollectiveOp op, OTF2_CommRef c, uint32_t root, uint64_t sent, uint64_t received) {
    return collective_end(*static_cast<Sink*>(u), t, a, op, c, root, sent, received, false, 0);
}
// A non-blocking collective (MPI_Iallreduce, ...): started at its request,
// ended where it completes (its MPI_Wait or MPI_Test), as Score-P records it.
OTF2_CallbackCode ev_nbc_request(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                                 uint64_t req) {
    Sink& s = *static_cast<Sink*>(u);
    if (!plain(s, a, t, "NonBlockingCollectiveRequest") || !in_sendrecv(s, TraceEvent::Kind::CollectiveRequest, t))
        return OTF2_CALLBACK_INTERRUPT;
    return push(s, message(TraceEvent::Kind::CollectiveRequest, t, 0, 0, 0, req));
}
OTF2_CallbackCode ev_nbc_complete(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                                  OTF2_CollectiveOp op, OTF2_CommRef c, uint32_t root, uint64_t sent, uint64_t received,
                                  uint64_t req) {
    return collective_end(*static_cast<Sink*>(u), t, a, op, c, root, sent, received, true, req);
}
// Attribute `i` of `a`: its name ("?" if the definitions name none), type and value.
std::string attribute(Sink& s, OTF2_AttributeList* a, std::uint32_t i, OTF2_Type& type, OTF2_AttributeValue& value) {
    OTF2_AttributeRef ref = 0;
    OTF2_AttributeList_GetAttributeByIndex(a, i, &ref, &type, &value);
    const auto it = s.impl->attribute_names.find(ref);
    const auto str = it == s.impl->attribute_names.end() ? s.impl->strings.end() : s.impl->strings.find(it->second);
    return str == s.impl->strings.end() ? "?" : str->second;
}

// A generalized active target call's attribute (recorded::kActiveTarget,
// kGroup, kFlag) into `e` (a group not as vrdmasim writes it: none): false
// for another attribute.
bool active_target_attribute(Sink& s, const std::string& name, OTF2_Type type, const OTF2_AttributeValue& value,
                             TraceEvent& e) {
    if (name == recorded::kActiveTarget && type == OTF2_TYPE_UINT64) return true;   // the call: its event's op
    if (name == recorded::kFlag && type == OTF2_TYPE_UINT64) {
        e.tag = static_cast<std::uint32_t>(value.uint64);
        return true;
    }
    if (name != recorded::kGroup || type != OTF2_TYPE_STRING) return false;
    const auto text = s.impl->strings.find(value.stringRef);
    auto group = std::make_shared<std::vector<std::uint64_t>>();
    std::istringstream in(text == s.impl->strings.end() ? std::string("?") : text->second);
    in >> std::hex;
    for (std::uint64_t v; in >> v;) group->push_back(v);
    if (in.eof()) e.group = std::move(group);
    return true;
}

// Whether an RMA event read as `op` may be of call `call` (recorded::kCall).
bool called(mpiwire::Op op, std::uint64_t call) {
    using mpiwire::Op;
    switch (static_cast<Op>(call)) {
    case Op::Rput: return op == Op::Put;
    case Op::Rget: return op == Op::Get;
    case Op::Raccumulate: return op == Op::Accumulate;
    case Op::GetAccumulate:
    case Op::RgetAccumulate: return op == Op::FetchOp;
    default: return false;
    }
}
// A one-sided call of a trace vrdmasim recorded (TraceEvent::Kind::Rma):
// `op` on window `win`, its target `remote` (OTF2_UNDEFINED_UINT32: every
// member); its fields from the event's attributes (recorded::). A
// foreign trace's RMA events carry no window addresses: refused.
OTF2_CallbackCode rma_call(Sink& s, OTF2_TimeStamp t, OTF2_AttributeList* a, const char* event, mpiwire::Op op,
                           OTF2_RmaWinRef win, std::uint32_t remote, TraceEvent e = {}) {
    const std::string at = std::string(event) + " (" + where(s, t) + ")";
    if (!s.impl->vrdmasim)
        return refuse(s, "event " + at +
                             ": one-sided MPI is replayed from a trace vrdmasim recorded (mpi.record), whose "
                             "events carry the windows' addresses; not this trace's"),
               OTF2_CALLBACK_INTERRUPT;
    const auto w = s.impl->window_comm.find(win);
    if (w == s.impl->window_comm.end() || !comm_of(s, w->second, t, event, e.comm)) {
        refuse(s, at + ": a window no RmaWin definition names");
        return OTF2_CALLBACK_INTERRUPT;
    }
    const std::uint32_t n = a ? OTF2_AttributeList_GetNumberOfElements(a) : 0;
    std::uint64_t call = 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        OTF2_Type type;
        OTF2_AttributeValue value;
        const std::string name = attribute(s, a, i, type, value);
        if (active_target_attribute(s, name, type, value, e)) {
            if (!e.group && name == recorded::kGroup)
                return refuse(s, at + ": a group not as vrdmasim records it"), OTF2_CALLBACK_INTERRUPT;
            continue;
        }
        const std::uint64_t v = value.uint64;
        if (type != OTF2_TYPE_UINT64)
            return refuse(s, at + ": attribute '" + name + "' not uint64"), OTF2_CALLBACK_INTERRUPT;
        if (name == recorded::kBuffer) e.va = v;
        else if (name == recorded::kBuffer2) e.va2 = v;
        else if (name == recorded::kResult) e.va3 = v;
        else if (name == recorded::kBufferBytes) e.length = v;
        else if (name == recorded::kDisplacement) e.disp = v;
        else if (name == recorded::kOffset) e.offset = v;
        else if (name == recorded::kAtomic) e.amo = static_cast<std::uint32_t>(v);
        else if (name == recorded::kCall) call = v;
        else if (name == recorded::kDispUnit || name == recorded::kAssert)
            (name == recorded::kDispUnit ? e.tag : e.root) = static_cast<std::uint32_t>(v);
        else
            return refuse(s, at + ": attribute '" + name + "', which the replay does not interpret"),
                   OTF2_CALLBACK_INTERRUPT;
    }
    if (call && !called(op, call))
        return refuse(s, at + ": attribute '" + recorded::kCall + "' names call " + std::to_string(call) +
                             ", which the replay does not know as this event's"),
               OTF2_CALLBACK_INTERRUPT;
    if (call) op = static_cast<mpiwire::Op>(call);
    e.kind = TraceEvent::Kind::Rma;
    e.time = t;
    e.op = static_cast<int>(op);
    e.win = win;
    e.peer = remote;
    if (s.summary) {
        s.summary->one_sided = true;
        ++s.summary->with_buffers;   // at the program's addresses
        const std::vector<unsigned>& members = s.impl->members[e.comm];
        const bool self = remote < members.size() && members[remote] == s.rank;
        const mpiwire::Op base = mpiwire::operation_of(op);   // a request-based operation's
        if (base == mpiwire::Op::Put && e.length && !self) ++s.summary->puts[e.length];
        else if ((base == mpiwire::Op::Put || base == mpiwire::Op::Get) && e.length) ++s.summary->rma_transfers;
        else if (base == mpiwire::Op::Accumulate || base == mpiwire::Op::GetAccumulate)
            s.summary->rma_transfers += e.length / 8;
        else if (op == mpiwire::Op::FetchOp || op == mpiwire::Op::CompareSwap) ++s.summary->rma_transfers;
    }
    return push(s, e);
}
OTF2_CallbackCode ev_rma_win_create(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                                    OTF2_RmaWinRef win) {
    return rma_call(*static_cast<Sink*>(u), t, a, "RmaWinCreate", mpiwire::Op::WinCreate, win, 0);
}
OTF2_CallbackCode ev_rma_win_destroy(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                                     OTF2_RmaWinRef win) {
    return rma_call(*static_cast<Sink*>(u), t, a, "RmaWinDestroy", mpiwire::Op::WinFree, win, 0);
}
// A collective window call's end: a fence's is the call (a window's
// creation and free are their RmaWinCreate, RmaWinDestroy).
OTF2_CallbackCode ev_rma_coll_end(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                                  OTF2_CollectiveOp op, OTF2_RmaSyncLevel, OTF2_RmaWinRef win, uint32_t, uint64_t,
                                  uint64_t) {
    Sink& s = *static_cast<Sink*>(u);
    if (op == OTF2_COLLECTIVE_OP_BARRIER) return rma_call(s, t, a, "RmaCollectiveEnd", mpiwire::Op::Fence, win, 0);
    if (s.impl->vrdmasim && (op == OTF2_COLLECTIVE_OP_CREATE_HANDLE || op == OTF2_COLLECTIVE_OP_DESTROY_HANDLE))
        return OTF2_CALLBACK_SUCCESS;
    return rma_call(s, t, a, "RmaCollectiveEnd of another operation than a fence, a window's creation or free",
                    mpiwire::Op::Fence, OTF2_UNDEFINED_RMA_WIN, 0);
}
OTF2_CallbackCode ev_rma_coll_begin(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a) {
    Sink& s = *static_cast<Sink*>(u);
    if (s.impl->vrdmasim) return OTF2_CALLBACK_SUCCESS;   // its end says what it is
    return rma_call(s, t, a, "RmaCollectiveBegin", mpiwire::Op::Fence, OTF2_UNDEFINED_RMA_WIN, 0);
}
OTF2_CallbackCode ev_rma_put(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                             OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes, uint64_t matching) {
    TraceEvent e;
    e.length = bytes;
    e.request = matching;
    return rma_call(*static_cast<Sink*>(u), t, a, "RmaPut", mpiwire::Op::Put, win, remote, e);
}
OTF2_CallbackCode ev_rma_get(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                             OTF2_RmaWinRef win, uint32_t remote, uint64_t bytes, uint64_t matching) {
    TraceEvent e;
    e.length = bytes;
    e.request = matching;
    return rma_call(*static_cast<Sink*>(u), t, a, "RmaGet", mpiwire::Op::Get, win, remote, e);
}
OTF2_CallbackCode ev_rma_atomic(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                                OTF2_RmaWinRef win, uint32_t remote, OTF2_RmaAtomicType type, uint64_t sent, uint64_t,
                                uint64_t matching) {
    const mpiwire::Op op = type == OTF2_RMA_ATOMIC_TYPE_ACCUMULATE             ? mpiwire::Op::Accumulate
                           : type == OTF2_RMA_ATOMIC_TYPE_FETCH_AND_ACCUMULATE ? mpiwire::Op::FetchOp
                                                                               : mpiwire::Op::CompareSwap;
    if (type != OTF2_RMA_ATOMIC_TYPE_COMPARE_AND_SWAP && op == mpiwire::Op::CompareSwap)
        return rma_call(*static_cast<Sink*>(u), t, a, "RmaAtomic of another type than vrdmasim records", op,
                        OTF2_UNDEFINED_RMA_WIN, 0);
    TraceEvent e;
    // (A get-accumulate's, a fetch-and-op of its elements: its bytes sent.)
    e.length = op == mpiwire::Op::Accumulate || op == mpiwire::Op::FetchOp ? sent : 8;
    e.request = matching;
    return rma_call(*static_cast<Sink*>(u), t, a, "RmaAtomic", op, win, remote, e);
}
OTF2_CallbackCode ev_rma_request_lock(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                                      OTF2_RmaWinRef win, uint32_t remote, uint64_t, OTF2_LockType type) {
    TraceEvent e;
    e.tag = static_cast<std::uint32_t>(type == OTF2_LOCK_EXCLUSIVE ? mpiwire::kExclusive : mpiwire::kShared);
    const bool all = remote == OTF2_UNDEFINED_UINT32;
    return rma_call(*static_cast<Sink*>(u), t, a, "RmaRequestLock", all ? mpiwire::Op::LockAll : mpiwire::Op::Lock, win,
                    remote, e);
}
OTF2_CallbackCode ev_rma_acquire_lock(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                                      OTF2_RmaWinRef, uint32_t, uint64_t, OTF2_LockType) {
    Sink& s = *static_cast<Sink*>(u);
    if (s.impl->vrdmasim) return OTF2_CALLBACK_SUCCESS;   // its RmaRequestLock is the call
    return rma_call(s, t, a, "RmaAcquireLock", mpiwire::Op::Lock, OTF2_UNDEFINED_RMA_WIN, 0);
}
OTF2_CallbackCode ev_rma_release_lock(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                                      OTF2_RmaWinRef win, uint32_t remote, uint64_t) {
    const bool all = remote == OTF2_UNDEFINED_UINT32;
    return rma_call(*static_cast<Sink*>(u), t, a, "RmaReleaseLock", all ? mpiwire::Op::UnlockAll : mpiwire::Op::Unlock,
                    win, remote);
}
OTF2_CallbackCode ev_rma_sync(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                              OTF2_RmaWinRef win, uint32_t remote, OTF2_RmaSyncType) {
    const bool all = remote == OTF2_UNDEFINED_UINT32;
    return rma_call(*static_cast<Sink*>(u), t, a, "RmaSync", all ? mpiwire::Op::FlushAll : mpiwire::Op::Flush, win,
                    remote);
}

// MPI_Win_post, MPI_Win_start, MPI_Win_complete (an RmaGroupSync),
// MPI_Win_wait and MPI_Win_test (an RmaWaitChange) of a trace vrdmasim
// recorded: the call its recorded::kActiveTarget says.
OTF2_CallbackCode active_target_call(Sink& s, OTF2_TimeStamp t, OTF2_AttributeList* a, const char* event,
                                     OTF2_RmaWinRef win) {
    auto op = mpiwire::Op::WinPost;
    bool named = false;
    const std::uint32_t n = a && s.impl->vrdmasim ? OTF2_AttributeList_GetNumberOfElements(a) : 0;
    for (std::uint32_t i = 0; i < n; ++i) {
        OTF2_Type type;
        OTF2_AttributeValue value;
        if (attribute(s, a, i, type, value) != recorded::kActiveTarget || type != OTF2_TYPE_UINT64) continue;
        op = static_cast<mpiwire::Op>(value.uint64);
        named = mpiwire::is_active_target(op) && value.uint64 == static_cast<std::uint64_t>(op);
    }
    if (s.impl->vrdmasim && !named) {
        refuse(s, std::string(event) + " (" + where(s, t) + ") without the call vrdmasim records (" +
                      recorded::kActiveTarget + ")");
        return OTF2_CALLBACK_INTERRUPT;
    }
    return rma_call(s, t, a, event, op, win, OTF2_UNDEFINED_UINT32);
}
OTF2_CallbackCode ev_rma_group_sync(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                                    OTF2_RmaSyncLevel, OTF2_RmaWinRef win, OTF2_GroupRef) {
    return active_target_call(*static_cast<Sink*>(u), t, a, "RmaGroupSync", win);
}
OTF2_CallbackCode ev_rma_wait_change(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                                     OTF2_RmaWinRef win) {
    return active_target_call(*static_cast<Sink*>(u), t, a, "RmaWaitChange", win);
}

// A request-based operation's request tested, and complete.
OTF2_CallbackCode ev_rma_op_test(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                                 OTF2_RmaWinRef win, uint64_t matching) {
    TraceEvent e;
    e.request = matching;
    return rma_call(*static_cast<Sink*>(u), t, a, "RmaOpTest", mpiwire::Op::Test, win, 0, e);
}
OTF2_CallbackCode ev_rma_op_complete(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList* a,
                                     OTF2_RmaWinRef win, uint64_t matching) {
    TraceEvent e;
    e.request = matching;
    return rma_call(*static_cast<Sink*>(u), t, a, "RmaOpCompleteNonBlocking", mpiwire::Op::Wait, win, 0, e);
}

// Events a replay has nothing to do for: the tracer's own (buffer flushes,
// measurement switched on and off, program begin and end), annotations
// (metrics, parameters), and a
// communicator's creation and destruction (CommCreate, CommDestroy).
template <class... Rest>
OTF2_CallbackCode ev_ignored(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void*, OTF2_AttributeList*, Rest...) {
    return OTF2_CALLBACK_SUCCESS;
}
// Every other event: not built; check() names it.
template <class F>
struct Unsupported;
template <class... Rest>
struct Unsupported<OTF2_CallbackCode (*)(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void*, OTF2_AttributeList*,
                                         Rest...)> {
    template <class Name>
    static OTF2_CallbackCode fn(OTF2_LocationRef, OTF2_TimeStamp t, uint64_t, void* u, OTF2_AttributeList*, Rest...) {
        Sink& s = *static_cast<Sink*>(u);
        refuse(s, std::string("event ") + Name::value() + " (" + where(s, t) +
                      "): the replay does MPI point-to-point "
                      "(blocking and non-blocking), the collectives barrier, bcast, reduce, allreduce, allgather and "
                      "alltoall, and regions; not this event");
        return OTF2_CALLBACK_INTERRUPT;
    }
};
template <class F>
struct Ignored;
template <class... Rest>
struct Ignored<OTF2_CallbackCode (*)(OTF2_LocationRef, OTF2_TimeStamp, uint64_t, void*, OTF2_AttributeList*, Rest...)> {
    static constexpr auto fn = &ev_ignored<Rest...>;
};

#define VRDMASIM_UNSUPPORTED(Event)                                                                               \
    do {                                                                                                          \
        struct Name {                                                                                             \
            static const char* value() { return #Event; }                                                         \
        };                                                                                                        \
        OTF2_EvtReaderCallbacks_Set##Event##Callback(cb, &Unsupported<OTF2_EvtReaderCallback_##Event>::fn<Name>); \
    } while (0)
#define VRDMASIM_IGNORED(Event) \
    OTF2_EvtReaderCallbacks_Set##Event##Callback(cb, Ignored<OTF2_EvtReaderCallback_##Event>::fn)

// The events the replay does: MPI point-to-point (blocking and
// non-blocking), collectives, and the regions that time the computation
// between MPI calls.
void set_replayed(OTF2_EvtReaderCallbacks* cb) {
    OTF2_EvtReaderCallbacks_SetEnterCallback(cb, ev_enter);
    OTF2_EvtReaderCallbacks_SetLeaveCallback(cb, ev_leave);
    OTF2_EvtReaderCallbacks_SetMpiSendCallback(cb, ev_send);
    OTF2_EvtReaderCallbacks_SetMpiIsendCallback(cb, ev_isend);
    OTF2_EvtReaderCallbacks_SetMpiIsendCompleteCallback(cb, ev_isend_complete);
    OTF2_EvtReaderCallbacks_SetMpiIrecvRequestCallback(cb, ev_irecv_request);
    OTF2_EvtReaderCallbacks_SetMpiRecvCallback(cb, ev_recv);
    OTF2_EvtReaderCallbacks_SetMpiIrecvCallback(cb, ev_irecv);
    OTF2_EvtReaderCallbacks_SetMpiCollectiveBeginCallback(cb, ev_coll_begin);
    OTF2_EvtReaderCallbacks_SetMpiCollectiveEndCallback(cb, ev_coll_end);
    OTF2_EvtReaderCallbacks_SetMpiRequestTestCallback(cb, ev_request_test);
    OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveRequestCallback(cb, ev_nbc_request);
    OTF2_EvtReaderCallbacks_SetNonBlockingCollectiveCompleteCallback(cb, ev_nbc_complete);
    OTF2_EvtReaderCallbacks_SetRmaWinCreateCallback(cb, ev_rma_win_create);
    OTF2_EvtReaderCallbacks_SetRmaWinDestroyCallback(cb, ev_rma_win_destroy);
    OTF2_EvtReaderCallbacks_SetRmaCollectiveBeginCallback(cb, ev_rma_coll_begin);
    OTF2_EvtReaderCallbacks_SetRmaCollectiveEndCallback(cb, ev_rma_coll_end);
    OTF2_EvtReaderCallbacks_SetRmaPutCallback(cb, ev_rma_put);
    OTF2_EvtReaderCallbacks_SetRmaGetCallback(cb, ev_rma_get);
    OTF2_EvtReaderCallbacks_SetRmaAtomicCallback(cb, ev_rma_atomic);
    OTF2_EvtReaderCallbacks_SetRmaRequestLockCallback(cb, ev_rma_request_lock);
    OTF2_EvtReaderCallbacks_SetRmaAcquireLockCallback(cb, ev_rma_acquire_lock);
    OTF2_EvtReaderCallbacks_SetRmaReleaseLockCallback(cb, ev_rma_release_lock);
    OTF2_EvtReaderCallbacks_SetRmaSyncCallback(cb, ev_rma_sync);
    OTF2_EvtReaderCallbacks_SetRmaGroupSyncCallback(cb, ev_rma_group_sync);
    OTF2_EvtReaderCallbacks_SetRmaWaitChangeCallback(cb, ev_rma_wait_change);
    OTF2_EvtReaderCallbacks_SetRmaOpTestCallback(cb, ev_rma_op_test);
    OTF2_EvtReaderCallbacks_SetRmaOpCompleteNonBlockingCallback(cb, ev_rma_op_complete);
}

// Events a replay has nothing to do for (ev_ignored).
void set_ignored(OTF2_EvtReaderCallbacks* cb) {
    VRDMASIM_IGNORED(BufferFlush);
    VRDMASIM_IGNORED(MeasurementOnOff);
    VRDMASIM_IGNORED(ProgramBegin);
    VRDMASIM_IGNORED(ProgramEnd);
    VRDMASIM_IGNORED(Metric);
    VRDMASIM_IGNORED(ParameterInt);
    VRDMASIM_IGNORED(ParameterString);
    VRDMASIM_IGNORED(ParameterUnsignedInt);
    // (The communicator's group is in its definition; its creation's cost
    // in the CREATE_HANDLE collective that encloses the event.)
    VRDMASIM_IGNORED(CommCreate);
    VRDMASIM_IGNORED(CommDestroy);
}

// Events the replay does not do (Unsupported refuses the trace, naming the
// event): an unknown event, calling contexts (sampling), cancelled
// requests, non-blocking collectives.
void set_unsupported_mpi(OTF2_EvtReaderCallbacks* cb) {
    VRDMASIM_UNSUPPORTED(Unknown);
    VRDMASIM_UNSUPPORTED(CallingContextEnter);
    VRDMASIM_UNSUPPORTED(CallingContextLeave);
    VRDMASIM_UNSUPPORTED(CallingContextSample);
    VRDMASIM_UNSUPPORTED(MpiRequestCancelled);
}

// I/O events (ISO C, POSIX, MPI-IO): not replayed.
void set_unsupported_io(OTF2_EvtReaderCallbacks* cb) {
    VRDMASIM_UNSUPPORTED(IoAcquireLock);
    VRDMASIM_UNSUPPORTED(IoChangeStatusFlags);
    VRDMASIM_UNSUPPORTED(IoCreateHandle);
    VRDMASIM_UNSUPPORTED(IoDeleteFile);
    VRDMASIM_UNSUPPORTED(IoDestroyHandle);
    VRDMASIM_UNSUPPORTED(IoDuplicateHandle);
    VRDMASIM_UNSUPPORTED(IoOperationBegin);
    VRDMASIM_UNSUPPORTED(IoOperationCancelled);
    VRDMASIM_UNSUPPORTED(IoOperationComplete);
    VRDMASIM_UNSUPPORTED(IoOperationIssued);
    VRDMASIM_UNSUPPORTED(IoOperationTest);
    VRDMASIM_UNSUPPORTED(IoReleaseLock);
    VRDMASIM_UNSUPPORTED(IoSeek);
    VRDMASIM_UNSUPPORTED(IoTryLock);
}

// One-sided MPI's other events (blocking and remote completions,
// try-locks; rma_call() the ones a trace vrdmasim recorded has): not
// replayed.
void set_unsupported_rma(OTF2_EvtReaderCallbacks* cb) {
    VRDMASIM_UNSUPPORTED(RmaOpCompleteBlocking);
    VRDMASIM_UNSUPPORTED(RmaOpCompleteRemote);
    VRDMASIM_UNSUPPORTED(RmaTryLock);
}

// Threading (OpenMP and the generic thread events): the replay is of
// single-threaded MPI processes.
void set_unsupported_threads(OTF2_EvtReaderCallbacks* cb) {
    VRDMASIM_UNSUPPORTED(OmpAcquireLock);
    VRDMASIM_UNSUPPORTED(OmpFork);
    VRDMASIM_UNSUPPORTED(OmpJoin);
    VRDMASIM_UNSUPPORTED(OmpReleaseLock);
    VRDMASIM_UNSUPPORTED(OmpTaskComplete);
    VRDMASIM_UNSUPPORTED(OmpTaskCreate);
    VRDMASIM_UNSUPPORTED(OmpTaskSwitch);
    VRDMASIM_UNSUPPORTED(ThreadAcquireLock);
    VRDMASIM_UNSUPPORTED(ThreadBegin);
    VRDMASIM_UNSUPPORTED(ThreadCreate);
    VRDMASIM_UNSUPPORTED(ThreadEnd);
    VRDMASIM_UNSUPPORTED(ThreadFork);
    VRDMASIM_UNSUPPORTED(ThreadJoin);
    VRDMASIM_UNSUPPORTED(ThreadReleaseLock);
    VRDMASIM_UNSUPPORTED(ThreadTaskComplete);
    VRDMASIM_UNSUPPORTED(ThreadTaskCreate);
    VRDMASIM_UNSUPPORTED(ThreadTaskSwitch);
    VRDMASIM_UNSUPPORTED(ThreadTeamBegin);
    VRDMASIM_UNSUPPORTED(ThreadTeamEnd);
    VRDMASIM_UNSUPPORTED(ThreadWait);
}

OTF2_EvtReaderCallbacks* callbacks() {
    OTF2_EvtReaderCallbacks* cb = OTF2_EvtReaderCallbacks_New();
    set_replayed(cb);
    set_ignored(cb);
    set_unsupported_mpi(cb);
    set_unsupported_io(cb);
    set_unsupported_rma(cb);
    set_unsupported_threads(cb);
    return cb;
}

// The anchor file (<name>.otf2) checked before OTF2 reads it: what is
// wrong with it, "" if nothing found. OTF2 (OTF2_AnchorFile_Load) trusts
// the counts it reads there: a number of properties, four bytes of the
// file, is allocated for (two string pointers each, calloc) and the
// allocation walked when it is freed before the strings are found missing:
// 2^28 made vrdmasim take 4.2 GB and 12 s to refuse the archive, a larger
// count asked for 29 GB at once. So the properties are walked here in the
// bytes the file has, which needs no allocation (an anchor whose count does
// not fit its bytes was damaged, not written so), and the chunk sizes
// (OTF2's buffers) and the number of locations to OTF2's documented
// limits, each a damaged field a real archive cannot have. (The numbers
// of global definitions, snapshots and thumbnails are not allocated for by
// what TraceReader calls; they are left to OTF2.)
// The layout (OTF2 3.0's, anchor format 3; later formats only append
// fields, which OTF2 skips): a chunk header (token 3, the byte order: 0x42
// little-endian, 0x23 big), "OTF2\0", the anchor format (u8, not 0), trace
// format and version (4 x u8), the event and definition chunk sizes (u64
// each), file substrate and compression (u8 each), the numbers of
// locations and global definitions (u64 each), machine, creator and
// description (NUL-terminated strings); from format 2 the number of
// properties (u32), a name and a value string each and the trace id (u64);
// from format 3 the numbers of snapshots and thumbnails (u32 each) and
// OTF2's end-of-file token (2).
// An anchor file's bytes, read from the front in its byte order.
struct AnchorBytes {
    std::string b;
    std::size_t at = 0;
    bool little = true;
    // Whether `n` bytes remain.
    bool has(std::size_t n) const { return b.size() - at >= n; }
    // The unsigned integer of `n` bytes at the position (read past).
    std::uint64_t uint(std::size_t n) {
        std::uint64_t v = 0;
        for (std::size_t i = 0; i < n; ++i) {
            const auto byte = static_cast<std::uint64_t>(static_cast<unsigned char>(b[at + i]));
            v |= byte << (8 * (little ? i : n - 1 - i));
        }
        at += n;
        return v;
    }
    // Past one NUL-terminated string ending before byte `end` (the file's
    // end unless given); false if there is none.
    bool string(std::size_t end = std::string::npos) {
        const std::size_t nul = b.find('\0', at);
        if (nul == std::string::npos || nul >= std::min(end, b.size())) return false;
        at = nul + 1;
        return true;
    }
};

const char* const kAnchorCut = " (the anchor file is cut short or damaged)";
const char* const kAnchorDamaged = " (a damaged anchor file)";

// The anchor file whole into `a.b`; what is wrong with it ("" if nothing;
// not a regular file is OTF2's to judge: `skip` is then set).
std::string read_anchor(const std::string& anchor, AnchorBytes& a, bool& skip) {
    skip = true;
    std::error_code ec;
    if (!std::filesystem::is_regular_file(anchor, ec)) return "";
    std::ifstream f(anchor, std::ios::binary | std::ios::ate);
    if (!f) return "";
    const std::streamoff size = f.tellg();
    if (size < 0) return "";
    skip = false;
    // OTF2 loads the anchor whole, as one buffer. All it holds is ~70 B of
    // fields and the strings a writer chose (Score-P's: a few hundred
    // bytes of properties); OTF2's largest chunk, 16 MiB, is far beyond a
    // real one and keeps this read small.
    if (static_cast<std::uint64_t>(size) > OTF2_CHUNK_SIZE_MAX)
        return "the anchor file is " + std::to_string(size) + " B, more than an OTF2 anchor holds (at most " +
               std::to_string(OTF2_CHUNK_SIZE_MAX) + " B here; a real one is well under 64 KiB)";
    a.b.assign(static_cast<std::size_t>(size), '\0');
    f.seekg(0);
    f.read(a.b.data(), size);
    if (!f) return "the anchor file cannot be read";
    return "";
}

// The fields every format has, from the anchor format to the description
// (`format` and the definition chunk size read).
std::string anchor_fixed_fields(AnchorBytes& a, std::uint64_t& format) {
    const std::string& b = a.b;
    if (!a.has(7) || b[0] != 3 || (b[1] != 0x42 && b[1] != 0x23) || b.compare(2, 5, std::string("OTF2\0", 5)) != 0)
        return "the anchor file does not begin as an OTF2 anchor does (a chunk header, then \"OTF2\"): not an OTF2 "
               "archive's anchor, or a damaged one";
    a.little = b[1] == 0x42;
    a.at = 7;
    if (!a.has(1 + 4 + 2 * 8 + 2 + 2 * 8))
        return std::string("the anchor file ends within its fixed fields") + kAnchorCut;
    format = a.uint(1);
    if (format == 0)
        return std::string("the anchor file has anchor format 0, which OTF2 never writes") + kAnchorDamaged;
    a.at += 4;   // trace format, version major, minor, bugfix
    const std::uint64_t chunk_events = a.uint(8), chunk_defs = a.uint(8);
    // OTF2_Archive_Open: "available values are from 256kB to 16MB"
    // (OTF2_CHUNK_SIZE_MIN, _MAX) for either chunk size; a reader holds a
    // buffer of the chunk size per open location.
    for (const auto& [what, chunk] : {std::pair{"an event", chunk_events}, std::pair{"a definition", chunk_defs}})
        if (chunk < OTF2_CHUNK_SIZE_MIN || chunk > OTF2_CHUNK_SIZE_MAX)
            return "the anchor file gives " + std::string(what) + " chunk size of " + std::to_string(chunk) +
                   " B; OTF2's chunks are of " + std::to_string(OTF2_CHUNK_SIZE_MIN) + " to " +
                   std::to_string(OTF2_CHUNK_SIZE_MAX) + " B" + kAnchorDamaged;
    const std::uint64_t substrate = a.uint(1), compression = a.uint(1);
    if (substrate < OTF2_SUBSTRATE_POSIX || substrate > OTF2_SUBSTRATE_NONE)
        return "the anchor file names file substrate " + std::to_string(substrate) + ", which OTF2 does not have" +
               kAnchorDamaged;
    if (compression < OTF2_COMPRESSION_NONE || compression > 2 /* OTF2_COMPRESSION_ZLIB, deprecated */)
        return "the anchor file names compression " + std::to_string(compression) + ", which OTF2 does not have" +
               kAnchorDamaged;
    const std::uint64_t locations = a.uint(8);
    a.at += 8;   // global definitions
    // OTF2_Archive_Open: "the definition chunk size must be at least 10
    // times the number of locations" (a definition listing every location,
    // as the MPI group does, must fit in one chunk).
    if (locations > chunk_defs / 10)
        return "the anchor file counts " + std::to_string(locations) + " locations, more than its definition chunk (" +
               std::to_string(chunk_defs) + " B, 10 B a location) can list" + kAnchorDamaged;
    for (const char* what : {"machine name", "creator", "description"})
        if (!a.string()) return "the anchor file ends within its " + std::string(what) + kAnchorCut;
    return "";
}

// From format 2: the properties, the trace id; from format 3 the numbers
// of snapshots and thumbnails and the end-of-file token.
std::string anchor_later_fields(AnchorBytes& a, std::uint64_t format) {
    if (!a.has(4)) return std::string("the anchor file ends before its number of properties") + kAnchorCut;
    // The allocation that ran away: OTF2 makes room for every property
    // before it reads one. Each is two strings of at least their NUL,
    // before the fields that follow them (the trace id; from format 3 the
    // snapshots and thumbnails, the end-of-file token), so the count is
    // walked in the bytes there are: it ends with them.
    const std::uint64_t properties = a.uint(4);
    const std::size_t after = 8 + (format >= 3 ? 8 + (format == 3 ? 1 : 0) : 0);
    const std::size_t end = a.b.size() >= after ? a.b.size() - after : 0;
    for (std::uint64_t p = 0; p < properties; ++p)
        if (!a.string(end) || !a.string(end))
            return "the anchor file counts " + std::to_string(properties) +
                   " properties (a name and a value each), its " + std::to_string(a.b.size()) + " B hold at most " +
                   std::to_string(p) + ": a damaged count (OTF2 would allocate for every one before reading any)";
    if (!a.has(8)) return std::string("the anchor file ends before its trace identifier") + kAnchorCut;
    a.at += 8;
    if (format < 3) return "";
    if (!a.has(8))
        return std::string("the anchor file ends before its numbers of snapshots and thumbnails") + kAnchorCut;
    a.at += 8;
    if (format == 3 && (!a.has(1) || a.b[a.at] != 2))
        return std::string("the anchor file does not end where its fields do (no end-of-file token after them)") +
               kAnchorCut;
    return "";
}

std::string anchor_problem(const std::string& anchor) {
    AnchorBytes a;
    bool skip = false;
    std::string problem = read_anchor(anchor, a, skip);
    if (skip || !problem.empty()) return problem;
    std::uint64_t format = 0;
    problem = anchor_fixed_fields(a, format);
    if (!problem.empty() || format < 2) return problem;
    return anchor_later_fields(a, format);
}

// MPI_COMM_WORLD: the first communicator over every rank without a parent
// (a dup of it is over every rank too, with one), else the first over
// every rank; context 0, rank r its rank r. Every other communicator whose group lists ranks
// (COMM_GROUP: indices into the COMM_LOCATIONS group), each once, gets the
// next context in the order of the definitions; one that does not is kept
// with why (refused if an event names it). False without a world.
bool assign_contexts(Impl& m) {
    const std::size_t ranks = m.mpi_locations.size();
    auto over_all = [&](std::uint64_t group) {
        const auto it = m.comm_groups.find(group);
        return it != m.comm_groups.end() && it->second.size() == ranks;
    };
    for (const auto& [comm, group] : m.comms) {
        if (!over_all(group)) continue;
        const bool root = m.comm_parent[comm] == OTF2_UNDEFINED_COMM;
        if (m.world == OTF2_UNDEFINED_COMM || (root && m.comm_parent[m.world] != OTF2_UNDEFINED_COMM)) m.world = comm;
    }
    if (m.world == OTF2_UNDEFINED_COMM) return false;
    m.context[m.world] = 0;
    m.members.assign(1, {});
    m.context_names.assign(1, m.comm_names[m.world]);
    for (unsigned r = 0; r < ranks; ++r) m.members[0].push_back(r);
    for (const auto& [comm, group] : m.comms) {
        if (comm == m.world) continue;
        const auto it = m.comm_groups.find(group);
        if (it == m.comm_groups.end()) {
            m.comm_problem[comm] = "its group is not a list of MPI ranks (MPI_COMM_SELF, or not an MPI group)";
            continue;
        }
        std::vector<unsigned> world;
        std::set<std::uint64_t> seen;
        for (std::uint64_t r : it->second) {
            if (r >= ranks || !seen.insert(r).second) {
                m.comm_problem[comm] = "its group names rank " + std::to_string(r) +
                                       (r >= ranks ? " of " + std::to_string(ranks) : " twice");
                break;
            }
            world.push_back(static_cast<unsigned>(r));
        }
        if (m.comm_problem.count(comm)) continue;
        if (m.members.size() >= coll::Communicator::kContexts) {
            m.comm_problem[comm] = "the trace defines more than " + std::to_string(coll::Communicator::kContexts) +
                                   " communicators (the replay's contexts)";
            continue;
        }
        m.context[comm] = static_cast<std::uint32_t>(m.members.size());
        m.members.push_back(std::move(world));
        m.context_names.push_back(m.comm_names[comm]);
    }
    return true;
}

// Which regions are MPI_Sendrecv's, and, in a trace vrdmasim recorded,
// the tests and probes whose work the replay does (TraceEvent::call).
void classify_regions(Impl& m) {
    for (const auto& [region, name] : m.region_name) {
        const auto it = m.strings.find(name);
        m.region_sendrecv[region] = m.region_mpi[region] && it != m.strings.end() &&
                                    (it->second == "MPI_Sendrecv" || it->second == "MPI_Sendrecv_replace");
        using C = TraceEvent::Call;
        static const std::map<std::string, C> calls = {{"MPI_Test", C::Test},       {"MPI_Testany", C::Testany},
                                                       {"MPI_Testall", C::Testall}, {"MPI_Waitany", C::Waitany},
                                                       {"MPI_Probe", C::Probe},     {"MPI_Iprobe", C::Iprobe}};
        const auto call = it == m.strings.end() ? calls.end() : calls.find(it->second);
        if (m.vrdmasim && m.region_mpi[region] && call != calls.end()) m.region_call[region] = call->second;
    }
}

// Opens `anchor`, reads its global definitions into `m` and opens the
// event files of the ranks' locations; `error` says why not.
bool open_archive(const std::string& anchor, Impl& m, std::string& error) {
    // Before OTF2 reads it: a damaged count there makes OTF2 allocate
    // gigabytes before it refuses the archive.
    const std::string bad = anchor_problem(anchor);
    if (!bad.empty()) {
        error = anchor + ": " + bad;
        return false;
    }
    OTF2_Error_RegisterCallback(keep_otf2_error, nullptr);
    m.reader = OTF2_Reader_Open(anchor.c_str());
    if (!m.reader) {
        error = "cannot open the OTF2 archive " + anchor;
        return false;
    }
    OTF2_Reader_SetSerialCollectiveCallbacks(m.reader);
    OTF2_GlobalDefReader* defs = OTF2_Reader_GetGlobalDefReader(m.reader);
    if (!defs) {
        error = anchor + " has no global definitions (not an OTF2 anchor file?)";
        return false;
    }
    OTF2_GlobalDefReaderCallbacks* cb = OTF2_GlobalDefReaderCallbacks_New();
    OTF2_GlobalDefReaderCallbacks_SetClockPropertiesCallback(cb, on_clock);
    OTF2_GlobalDefReaderCallbacks_SetStringCallback(cb, on_string);
    OTF2_GlobalDefReaderCallbacks_SetRegionCallback(cb, on_region);
    OTF2_GlobalDefReaderCallbacks_SetLocationCallback(cb, on_location);
    OTF2_GlobalDefReaderCallbacks_SetGroupCallback(cb, on_group);
    OTF2_GlobalDefReaderCallbacks_SetCommCallback(cb, on_comm);
    OTF2_GlobalDefReaderCallbacks_SetAttributeCallback(cb, on_attribute);
    OTF2_GlobalDefReaderCallbacks_SetRmaWinCallback(cb, on_rma_win);
    OTF2_Reader_RegisterGlobalDefCallbacks(m.reader, defs, cb, &m);
    OTF2_GlobalDefReaderCallbacks_Delete(cb);
    uint64_t read = 0;
    if (OTF2_Reader_ReadAllGlobalDefinitions(m.reader, defs, &read) != OTF2_SUCCESS) {
        error = "cannot read the definitions of " + anchor;
        return false;
    }
    if (m.mpi_locations.empty()) {
        error = anchor + " has no MPI ranks (no MPI location group)";
        return false;
    }
    for (std::size_t r = 0; r < m.mpi_locations.size(); ++r) {
        const std::uint64_t loc = m.mpi_locations[r];
        const auto g = m.location_group.find(loc);
        if (g == m.location_group.end()) {
            error = anchor + ": MPI rank " + std::to_string(r) + " names a location it does not define";
            return false;
        }
        if (m.threads[g->second] > 1) {
            error = anchor + ": MPI rank " + std::to_string(r) + " has " + std::to_string(m.threads[g->second]) +
                    " threads; replaying threads (OpenMP, pthreads) is not built";
            return false;
        }
        m.rank_of[loc] = static_cast<unsigned>(r);
    }
    char* creator = nullptr;
    if (OTF2_Reader_GetCreator(m.reader, &creator) == OTF2_SUCCESS && creator) {
        m.creator = creator;
        free(creator);
    }
    m.vrdmasim = m.creator.rfind(recorded::kCreator, 0) == 0;
    if (!assign_contexts(m)) {
        error = anchor + " defines no communicator over every rank (MPI_COMM_WORLD)";
        return false;
    }
    classify_regions(m);
    for (std::uint64_t loc : m.mpi_locations) OTF2_Reader_SelectLocation(m.reader, loc);
    m.local_defs = OTF2_Reader_OpenDefFiles(m.reader) == OTF2_SUCCESS;
    OTF2_Reader_OpenEvtFiles(m.reader);
    // (No event reader yet: each holds a buffer of the archive's chunk,
    // 1 MiB from Score-P; open_location() makes them one at a time.)
    return true;
}

// The event reader of location `loc`, with its mapping tables (the
// location's local definitions, read after the reader is made, as OTF2
// applies them to it); nullptr if it cannot be made.
OTF2_EvtReader* open_location(Impl& m, std::uint64_t loc) {
    OTF2_EvtReader* er = OTF2_Reader_GetEvtReader(m.reader, loc);
    if (er && m.local_defs) {
        if (OTF2_DefReader* d = OTF2_Reader_GetDefReader(m.reader, loc)) {
            uint64_t n = 0;
            OTF2_Reader_ReadAllLocalDefinitions(m.reader, d, &n);
            OTF2_Reader_CloseDefReader(m.reader, d);
        }
    }
    return er;
}

// Whether the archive's file `path` (a location's .evt or .def) ends
// with OTF2's end-of-file and end-of-chunk tokens (bytes 2, 1), as every
// file an OTF2 writer closed does; a file that does not exist is OTF2's to
// judge (a substrate or compression of other names). A file cut short must
// not reach OTF2's reader, which then parses its chunk buffer past the
// data it read: uninitialised memory (memcheck finds it).
bool ends_complete(const std::string& path) {
    std::ifstream f(path, std::ios::binary | std::ios::ate);
    if (!f) return true;
    const std::streamoff size = f.tellg();
    if (size < 0) return "";   // not a file with a size (a directory): OTF2's to judge
    if (size < 2) return false;
    char tail[2] = {0, 0};
    f.seekg(size - 2);
    f.read(tail, 2);
    return f && tail[0] == 2 && tail[1] == 1;
}

// The event and local definition files of `loc` in the archive whose
// anchor is `anchor` (<dir>/<name>.otf2: <dir>/<name>/<loc>.evt, .def).
std::string location_file(const std::string& anchor, std::uint64_t loc, const char* ext) {
    const std::string base = anchor.size() > 5 && anchor.compare(anchor.size() - 5, 5, ".otf2") == 0
                                 ? anchor.substr(0, anchor.size() - 5)
                                 : anchor;
    return base + "/" + std::to_string(loc) + ext;
}

}   // namespace

TraceReader::TraceReader(const Config& c, const std::string& key, const std::string& anchor)
    : config_(c), key_(key), anchor_(anchor), impl_(std::make_unique<Impl>()) {
    std::string error;
    if (!open_archive(anchor, *impl_, error)) throw c.refuse(key, error);
    resolution_ = impl_->resolution;
    creator_ = impl_->creator;
    locations_ = impl_->mpi_locations;
    communicators_ = impl_->members;
    events_.assign(locations_.size(), 0);
}

TraceReader::~TraceReader() = default;

namespace {
// The v-variants and reduce-scatters without their blocks (Score-P's): each
// made by every member, its bytes adding up as the call's blocks must
// (TraceWorkload derives the blocks from them); what is wrong, "" if
// nothing.
std::string vector_problem(const Impl& m, const TraceSummary& summary) {
    for (const auto& [key, v] : summary.vectors) {
        const std::string which = "MPI " + vector_name(v.op) + ", collective " + std::to_string(key.second) +
                                  " on communicator " + m.context_names[key.first];
        const std::size_t n = v.bytes.size();
        std::uint64_t sent = 0, received = 0;
        for (std::size_t r = 0; r < n; ++r) {
            if (!v.seen[r])
                return which + ": its rank " + std::to_string(r) + " (world rank " +
                       std::to_string(m.members[key.first][r]) + ") makes no such call there";
            sent += v.bytes[r].first, received += v.bytes[r].second;
        }
        std::string bad;
        for (std::size_t r = 0; r < n && bad.empty(); ++r) {
            const auto [s, g] = v.bytes[r];
            const bool root = r == v.root;
            if (v.op == OTF2_COLLECTIVE_OP_GATHERV && root && g != sent)
                bad = "the root receives " + std::to_string(g) + " B, its members send " + std::to_string(sent);
            if (v.op == OTF2_COLLECTIVE_OP_SCATTERV && root && s != received)
                bad = "the root sends " + std::to_string(s) + " B, its members receive " + std::to_string(received);
            if (v.op == OTF2_COLLECTIVE_OP_ALLGATHERV && g != sent)
                bad = "rank " + std::to_string(r) + " receives " + std::to_string(g) + " B, its members send " +
                      std::to_string(sent);
            if ((v.op == OTF2_COLLECTIVE_OP_REDUCE_SCATTER || v.op == OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK) &&
                s != received)
                bad = "rank " + std::to_string(r) + "'s vector is " + std::to_string(s) +
                      " B, the blocks its members receive " + std::to_string(received);
            if (v.op == OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK && g != v.bytes[0].second)
                bad = "rank " + std::to_string(r) + " receives " + std::to_string(g) + " B, rank 0 " +
                      std::to_string(v.bytes[0].second) + " (every block is the same length)";
        }
        if (!bad.empty())
            return which + ": " + bad +
                   ": the bytes do not add up to the blocks of one call, which the replay "
                   "derives from them";
    }
    return "";
}
}   // namespace

TraceSummary TraceReader::check(const EventFn& each) const {
    // A second reader of its own: the replay's streams stay at their start.
    Impl m;
    std::string error;
    if (!open_archive(anchor_, m, error)) throw config_.refuse(key_, error);
    OTF2_EvtReaderCallbacks* cb = callbacks();
    std::string problem;
    TraceSummary summary;
    summary.peers.resize(m.mpi_locations.size());
    std::map<std::tuple<std::uint32_t, std::uint32_t, std::uint32_t, std::uint32_t>, std::pair<Sink::Half, Sink::Half>>
        matching;
    for (unsigned r = 0; r < m.mpi_locations.size() && problem.empty(); ++r) {
        for (const char* ext : {".evt", ".def"}) {
            const std::string file = location_file(anchor_, m.mpi_locations[r], ext);
            if (!ends_complete(file))
                problem = "rank " + std::to_string(r) + "'s file " + file +
                          " does not end as OTF2 ends a file it closed (it is cut short or damaged: a trace whose "
                          "writer was killed, or a partial copy)";
        }
        if (!problem.empty()) break;
        OTF2_EvtReader* er = open_location(m, m.mpi_locations[r]);
        if (!er) {
            problem = "the events of rank " + std::to_string(r) + " cannot be read";
            break;
        }
        Sink sink{&m, r, nullptr, &problem, &summary, &matching};
        sink.each = &each;
        OTF2_Reader_RegisterEvtCallbacks(m.reader, er, cb, &sink);
        // Every event the definitions promise, to the file's end: a trace
        // cut short (a run killed mid-write, a partial copy) is refused,
        // not replayed as a shorter application. (Reading past a
        // location's last event is an error in OTF2: a read that returns
        // fewer than asked was the last.)
        const std::uint64_t promised = m.location_events.at(m.mpi_locations[r]);
        std::uint64_t read = 0;
        otf2_error().clear();
        for (uint64_t got = 4096; got == 4096 && problem.empty();) {
            got = 0;
            const bool ok = OTF2_Reader_ReadLocalEvents(m.reader, er, 4096, &got) == OTF2_SUCCESS;
            read += got;
            if (!ok && problem.empty())
                problem = "the events of rank " + std::to_string(r) + " cannot be read after event " +
                          std::to_string(read) + " of the " + std::to_string(promised) +
                          " its definitions count (the file is cut short or damaged" +
                          (otf2_error().empty() ? "" : ": " + otf2_error()) + ")";
        }
        if (problem.empty() && read != promised)
            problem = "rank " + std::to_string(r) + "'s event file holds " + std::to_string(read) +
                      " events, its definitions count " + std::to_string(promised) +
                      " (the file is cut short or damaged: a trace whose writer was killed, or a partial copy)";
        // Its chunk buffer goes with it: one rank's at a time.
        OTF2_Reader_CloseEvtReader(m.reader, er);
    }
    OTF2_EvtReaderCallbacks_Delete(cb);
    if (problem.empty())
        for (const auto& [key, halves] : matching) {
            const auto [from, to, tag, context] = key;
            const Sink::Half &sent = halves.first, &received = halves.second;
            if (sent.count == received.count) continue;
            const bool more_sent = sent.count > received.count;
            std::ostringstream os;
            os << "rank " << from << " sends " << sent.count << " message(s) with tag " << tag
               << (m.members.size() > 1 ? " on communicator " + m.context_names[context] : std::string()) << " to rank "
               << to << ", which receives " << received.count << " from it: the " << (more_sent ? "send" : "receive")
               << " at tick " << (more_sent ? sent.last_tick : received.last_tick) << " (rank "
               << (more_sent ? from : to) << ") has no matching " << (more_sent ? "receive" : "send")
               << " (the replay would fail or wait for ever)";
            problem = os.str();
            break;
        }
    if (problem.empty()) problem = vector_problem(m, summary);
    if (!problem.empty()) throw config_.refuse(key_, anchor_ + ": " + problem);
    return summary;
}

TraceReader::Stream& TraceReader::stream(unsigned rank) { return streams_[rank]; }

void TraceReader::open(unsigned rank, Stream& s) {
    if (open_.size() >= kOpenReaders) {
        // Close the reader read least recently (its buffer goes with it).
        const auto lru = open_.begin();
        Stream& old = streams_.at(lru->second);
        OTF2_Reader_CloseEvtReader(impl_->reader, static_cast<OTF2_EvtReader*>(old.reader));
        old.reader = nullptr;
        open_.erase(lru);
    }
    OTF2_EvtReader* er = open_location(*impl_, locations_.at(rank));
    if (!er) throw std::runtime_error(anchor_ + ": the events of rank " + std::to_string(rank) + " cannot be read");
    // Where it stopped: at the last event read (positions count from 1;
    // the one after may not exist), read again and passed over.
    if (s.read > 0) {
        static OTF2_EvtReaderCallbacks* cb = callbacks();
        Sink skip{impl_.get(), rank, nullptr, nullptr};
        OTF2_Reader_RegisterEvtCallbacks(impl_->reader, er, cb, &skip);
        uint64_t got = 0;
        if (OTF2_EvtReader_Seek(er, s.read) != OTF2_SUCCESS ||
            OTF2_Reader_ReadLocalEvents(impl_->reader, er, 1, &got) != OTF2_SUCCESS || got != 1)
            throw std::runtime_error(anchor_ + ": cannot go back to event " + std::to_string(s.read) + " of rank " +
                                     std::to_string(rank));
    }
    s.reader = er;
}

bool TraceReader::fill(unsigned rank) {
    Stream& s = stream(rank);
    if (s.ended) return false;
    if (!s.reader) open(rank, s);
    else open_.erase(s.used);
    s.used = ++clock_;
    open_[s.used] = rank;
    static OTF2_EvtReaderCallbacks* cb = callbacks();
    Sink sink{impl_.get(), rank, &s.buffered, nullptr};
    auto* er = static_cast<OTF2_EvtReader*>(s.reader);
    OTF2_Reader_RegisterEvtCallbacks(impl_->reader, er, cb, &sink);
    uint64_t got = 0;
    const std::size_t before = s.buffered.size();
    otf2_error().clear();
    if (OTF2_Reader_ReadLocalEvents(impl_->reader, er, kChunk, &got) != OTF2_SUCCESS)
        throw std::runtime_error(anchor_ + ": the events of rank " + std::to_string(rank) + " cannot be read" +
                                 (otf2_error().empty() ? "" : " (" + otf2_error() + ")"));
    events_[rank] += got;
    s.read += got;
    if (got < kChunk) {
        // The last (OTF2 must not be read past it): the rank's reader and
        // its chunk buffer go.
        s.ended = true;
        OTF2_Reader_CloseEvtReader(impl_->reader, er);
        s.reader = nullptr;
        open_.erase(s.used);
    }
    return s.buffered.size() > before || (!s.ended && fill(rank));
}

bool TraceReader::next(unsigned rank, TraceEvent& e) {
    Stream& s = stream(rank);
    while (s.buffered.empty())
        if (!fill(rank)) return false;
    e = s.buffered.front();
    s.buffered.pop_front();
    return true;
}

}   // namespace vrdmasim
