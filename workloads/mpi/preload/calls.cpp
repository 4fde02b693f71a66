// The MPI calls the simulation times (workloads/mpi/README.md "What is
// timed"): each asks the simulation for the call's simulated duration and
// does the call's real work through PMPI, so that the program computes
// with the data real MPI moved. A real operation that could wait for a
// rank the simulation has not reached yet is never waited for before the
// simulation has answered: sends go from copies (the copy's request is
// progressed and completed later), receives are posted with the source
// and tag the simulation matched, collectives are posted non-blocking
// before the simulation is asked and waited for only where the rank's
// result depends on the others (every such rank has then posted).
#include <mpi.h>

#include <map>
#include <vector>
#include <string>

#include "workloads/mpi/preload/calls.hpp"
#include "workloads/mpi/preload/libraries.hpp"
#include "workloads/mpi/preload/residency.hpp"

using namespace vrdmasim;
using namespace vrdmasim::mpipreload;
using mpiwire::Call;
using mpiwire::Op;
using mpiwire::Reply;

namespace {

// The program's requests of timed calls, by the handle it holds: a
// generalized request of this library's (README "Requests"), the real
// request kept here. A receive is posted to real MPI only once the
// simulation has matched it, with the source and tag it matched, so that
// real MPI delivers the message the simulation did, whatever the
// wildcards and whichever rank the host ran first.
struct Pending {
    std::uint64_t sim = 0;   // the simulation's request
    bool send = false;
    bool collective = false;   // a non-blocking collective (its real one in `real`, its input's copy in `copy`)
    bool rma = false;   // a request-based one-sided operation (its real one in `real`)
    void* copy = nullptr;   // a send's copy
    // A receive: as the program posted it (source and tag may be wildcards).
    void* buf = nullptr;
    int count = 0;
    MPI_Datatype type = MPI_BYTE;
    MPI_Comm comm = MPI_COMM_NULL;
    std::uint32_t ctx = 0;
    int source = 0, tag = 0;
    std::uint64_t order = 0;   // the rank's receives, in the order posted
    MPI_Request real = MPI_REQUEST_NULL;   // the real send, or the real receive once posted
    bool posted = false;
    std::uint64_t span_va = 0, span_len = 0;   // a posted receive's memory (residency.hpp)
};
std::map<MPI_Request, Pending>& pending() {
    static std::map<MPI_Request, Pending> p;
    return p;
}
// The receives not posted to real MPI yet, in the order the program posted them.
std::map<std::uint64_t, MPI_Request>& unposted() {
    static std::map<std::uint64_t, MPI_Request> u;
    return u;
}
std::uint64_t next_order = 1;
// The receives the program freed (MPI_Request_free), by order: kept in
// pending() under a key of their own (freed_key), posted to real MPI once
// the simulation has matched them, completed at MPI_Finalize.
std::map<std::uint64_t, MPI_Request>& freed() {
    static std::map<std::uint64_t, MPI_Request> f;
    return f;
}
// A freed receive's key in pending(): an odd address, which no request
// object of Open MPI's has (they are aligned), so no request the program
// holds now or later is keyed alike.
MPI_Request freed_key(std::uint64_t order) {
    return reinterpret_cast<MPI_Request>(static_cast<std::uintptr_t>(order * 2 + 1));
}

// The communicators the simulation made (README "Communicators"), by the
// program's handle: their contexts. MPI_COMM_WORLD is context 0.
std::map<MPI_Comm, std::uint32_t>& contexts() {
    static std::map<MPI_Comm, std::uint32_t> c{{MPI_COMM_WORLD, 0}};
    return c;
}

}   // namespace

namespace vrdmasim {
namespace mpipreload {

Call call(Op op, std::uint32_t ctx) {
    Call c;
    c.op = static_cast<std::uint32_t>(op);
    c.comm = ctx;
    return c;
}

bool known(MPI_Comm comm, const char* name, std::uint32_t& ctx) {
    const auto it = contexts().find(comm);
    if (it != contexts().end()) {
        ctx = it->second;
        return true;
    }
    untimed((std::string(name) + " on a communicator made by an untimed call").c_str());
    return false;
}

const void* element_at(const void* buf, std::int64_t elements, MPI_Datatype type) {
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_get_extent(type, &lb, &extent);
    return static_cast<const char*>(buf) + static_cast<MPI_Aint>(elements) * extent;
}

std::uint64_t count_of(int count) { return count > 0 ? static_cast<std::uint64_t>(count) : 0; }

void buffer(Call& c, const void* buf, int count, MPI_Datatype type) {
    std::uint64_t va = 0, len = 0;
    span(buf, count, type, va, len);
    c.bytes = data_bytes(count, type);
    c.va = len == c.bytes ? va : 0;
}

}   // namespace mpipreload
}   // namespace vrdmasim

namespace {

// A send's data copied: a contiguous datatype's as laid out (sent with the
// program's count and type), a non-contiguous one's packed (sent as
// MPI_PACKED, which a receive of any datatype of the same signature takes).
struct SendCopy {
    const void* buf;
    int count;
    MPI_Datatype type;
};
SendCopy send_copy(const void* buf, int count, MPI_Datatype type, void** owned) {
    std::uint64_t va = 0, len = 0;
    span(buf, count, type, va, len);
    if (len == data_bytes(count, type)) return {copy_of(buf, count, type, owned), count, type};
    int size = 0, position = 0;
    PMPI_Pack_size(count, type, MPI_COMM_WORLD, &size);
    void* packed = std::malloc(size ? static_cast<std::size_t>(size) : 1);
    if (!packed) fail("out of host memory for a send's packed copy");
    PMPI_Pack(buf, count, type, packed, size, &position, MPI_COMM_WORLD);
    *owned = packed;
    return {packed, position, MPI_PACKED};
}

// The real status of a receive against what the simulation matched.
void check_match(const MPI_Status& st, const Reply& r, MPI_Datatype type, const char* name) {
    int count = 0;
    PMPI_Get_count(&st, MPI_BYTE, &count);
    (void)type;
    if (st.MPI_SOURCE != r.source || st.MPI_TAG != r.tag || static_cast<std::uint64_t>(count) != r.bytes)
        fail((std::string(name) + ": real MPI matched source " + std::to_string(st.MPI_SOURCE) + ", tag " +
              std::to_string(st.MPI_TAG) + ", " + std::to_string(count) + " B; the simulation source " +
              std::to_string(r.source) + ", tag " + std::to_string(r.tag) + ", " + std::to_string(r.bytes) + " B")
                 .c_str());
}

bool covers(const Pending& p, int source, int tag) {
    return (p.source == MPI_ANY_SOURCE || p.source == source) && (p.tag == MPI_ANY_TAG || p.tag == tag);
}

void post_real(Pending& p, int source, int tag);

// Before a real receive of (`source`, `tag`) on context `ctx`: each
// receive the program posted before `before` that could take such a
// message has matched in the simulation already (MPI's order: the message
// would have gone to it), so it goes to real MPI first, with what it
// matched. Never a question about any other.
void post_earlier(std::uint32_t ctx, std::uint64_t before, int source, int tag) {
    for (auto it = unposted().begin(); it != unposted().end() && it->first < before;) {
        Pending& q = pending().at(it->second);
        ++it;   // post_real takes q (and only receives before it) off the list
        if (q.ctx != ctx || !covers(q, source, tag)) continue;
        Call c = call(Op::Matched);
        c.request = q.sim;
        const Reply r = question(c);
        if (!r.flag)
            fail(("a receive of source " + std::to_string(q.source) + ", tag " + std::to_string(q.tag) +
                  " posted before one that matched source " + std::to_string(source) + ", tag " + std::to_string(tag) +
                  " has not matched in the simulation, against MPI's order")
                     .c_str());
        post_real(q, r.source, r.tag);
    }
}

// Receive `p`, matched in the simulation to (`source`, `tag`), posted to
// real MPI (the receives before it that could take the same first).
void post_real(Pending& p, int source, int tag) {
    post_earlier(p.ctx, p.order, source, tag);
    PMPI_Irecv(p.buf, p.count, p.type, source, tag, p.comm, &p.real);
    p.posted = true;
    span(p.buf, p.count, p.type, p.span_va, p.span_len);
    receiving(p.span_va, p.span_len);   // real MPI writes it from now on, in host time
    unposted().erase(p.order);
}

// The real receive of a message the simulation matched (a blocking call's,
// posted after every receive the program posted before).
int real_recv(void* buf, int count, MPI_Datatype type, MPI_Comm comm, std::uint32_t ctx, const Reply& r,
              MPI_Status* status, const char* name) {
    post_earlier(ctx, ~std::uint64_t(0), r.source, r.tag);
    MPI_Status st;
    const int rc = PMPI_Recv(buf, count, type, r.source, r.tag, comm, &st);
    check_match(st, r, type, name);
    if (status != MPI_STATUS_IGNORE) *status = st;
    return rc;
}

void send_status(MPI_Status* status) {
    if (status == MPI_STATUS_IGNORE) return;
    status->MPI_ERROR = MPI_SUCCESS;
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
}

void cancelled_status(MPI_Status* status) {
    if (status == MPI_STATUS_IGNORE) return;
    send_status(status);
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 1);
}

// The generalized request the program holds for a receive until it ends.
int grequest_query(void*, MPI_Status* status) {
    send_status(status);
    PMPI_Status_set_elements(status, MPI_BYTE, 0);
    PMPI_Status_set_cancelled(status, 0);
    return MPI_SUCCESS;
}
int grequest_free(void*) { return MPI_SUCCESS; }
int grequest_cancel(void*, int) { return MPI_SUCCESS; }

// A timed request complete in the simulation (`r`): its real side.
int complete_real(Pending& p, const Reply& r, MPI_Status* status) {
    int rc = MPI_SUCCESS;
    if (p.collective || p.rma) {
        rc = PMPI_Wait(&p.real, MPI_STATUS_IGNORE);
        std::free(p.copy);
        send_status(status);
    } else if (p.send) {
        keep(p.real, p.copy);
        send_status(status);
    } else {
        if (r.cancelled) {
            cancelled_status(status);
        } else {
            if (!p.posted) post_real(p, r.source, r.tag);
            MPI_Status st;
            rc = PMPI_Wait(&p.real, &st);
            received(p.span_va, p.span_len);
            check_match(st, r, MPI_BYTE, "MPI_Wait");
            if (status != MPI_STATUS_IGNORE) *status = st;
        }
    }
    return rc;
}

// At each call's end: the freed receives the simulation has matched since
// are posted to real MPI (their data reach the program's buffer as they
// would have).
void post_freed() {
    for (const auto& [order, key] : freed()) {
        Pending& p = pending().at(key);
        if (p.posted) continue;
        Call c = call(Op::Matched);
        c.request = p.sim;
        const Reply r = question(c);
        if (r.flag) post_real(p, r.source, r.tag);
    }
}

// MPI_Finalize: each freed receive completed (an MPI_Wait of it in the
// simulation, which retires it) and its real receive with it.
void end_freed() {
    for (const auto& [order, key] : freed()) {
        Call c = call(Op::Wait);
        c.request = pending().at(key).sim;
        complete_real(pending().at(key), exchange(c), MPI_STATUS_IGNORE);
        pending().erase(key);
    }
    freed().clear();
}

// A timed request complete in the simulation: its real side, and the
// program's request ended.
int complete(MPI_Request* request, Pending& p, const Reply& r, MPI_Status* status) {
    const MPI_Request key = *request;
    const int rc = complete_real(p, r, status);
    MPI_Request g = key;
    PMPI_Grequest_complete(g);
    PMPI_Wait(&g, MPI_STATUS_IGNORE);
    pending().erase(key);
    *request = MPI_REQUEST_NULL;
    return rc;
}

}   // namespace

namespace {
MPI_Request* starting_request = nullptr;   // a non-blocking collective's request, while it is started
bool start_taken = false;   // collective() started it
}   // namespace

void vrdmasim::mpipreload::rma_started(MPI_Request* request, std::uint64_t sim) {
    Pending p;
    p.rma = true;
    p.real = *request;
    p.sim = sim;
    PMPI_Grequest_start(grequest_query, grequest_free, grequest_cancel, nullptr, request);
    pending()[*request] = p;
}

vrdmasim::mpipreload::Starting::Starting(MPI_Request* request) {
    starting_request = request;
    start_taken = false;
}
vrdmasim::mpipreload::Starting::~Starting() { starting_request = nullptr; }
bool vrdmasim::mpipreload::Starting::started() const { return start_taken; }

int vrdmasim::mpipreload::collective(Call c, MPI_Request real, bool waits, void* copy,
                                     const std::vector<std::uint64_t>& values) {
    c.count = values.size();
    if (starting_request) {
        MPI_Request* const starting = starting_request;
        starting_request = nullptr;   // (the wrapper's own calls below are not it)
        // Non-blocking: the simulation starts it; the program holds a
        // generalized request until both it and the real one have ended.
        c.op = static_cast<std::uint32_t>(mpiwire::nonblocking_of(static_cast<Op>(c.op)));
        Pending p;
        p.collective = true;
        p.real = real;
        p.copy = copy;
        p.sim = exchange(c, values.empty() ? nullptr : values.data()).request;
        PMPI_Grequest_start(grequest_query, grequest_free, grequest_cancel, nullptr, starting);
        pending()[*starting] = p;
        start_taken = true;
        mark();
        return MPI_SUCCESS;
    }
    exchange(c, values.empty() ? nullptr : values.data());
    int rc = MPI_SUCCESS;
    if (waits) {
        rc = PMPI_Wait(&real, MPI_STATUS_IGNORE);
        std::free(copy);
    } else {
        keep(real, copy);
    }
    mark();
    return rc;
}

namespace {

// The timed requests among `requests` (null ones skipped): their indexes
// and the simulation's ids. False (after reporting the call untimed) when
// one is a request the simulation does not know (of an untimed call).
bool listed(int count, const MPI_Request requests[], std::vector<int>& index, std::vector<std::uint64_t>& ids,
            const char* name) {
    for (int i = 0; i < count; ++i) {
        if (requests[i] == MPI_REQUEST_NULL) continue;
        const auto it = pending().find(requests[i]);
        if (it == pending().end()) {
            untimed((std::string(name) + " with a request of an untimed call").c_str());
            return false;
        }
        index.push_back(i);
        ids.push_back(it->second.sim);
    }
    return true;
}

// Of the listed requests, which is complete (Waitany, Testany) or whether
// all are (Testall), as the simulation says.
Reply ask(Op op, const std::vector<std::uint64_t>& ids) {
    Call c = call(op);
    c.count = ids.size();
    return exchange(c, ids.data());
}

MPI_Status* status_at(MPI_Status statuses[], int i) {
    return statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i];
}

// MPI_Allgather and MPI_Alltoall: a block of each rank's to every rank
// (the same one, or its own), posted as `post` does. MPI_IN_PLACE (MPI 4.1
// sections 6.7 and 6.8): an allgather's block is the rank's own, at its
// place in the receive buffer (the library's copy of it onto itself is
// none); an alltoall's blocks are the receive buffer's, each replaced by
// the one received from its rank (the simulation reads them from a buffer
// of its own first, as an in-place alltoallv's).
template <class Post>
int all_to_all(Op op, const char* name, const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf,
               int recvcount, MPI_Datatype recvtype, MPI_Comm comm, Post post) {
    std::uint32_t ctx = 0;
    if (!known(comm, name, ctx)) return post(nullptr);
    Call c = call(op, ctx);
    if (sendbuf != MPI_IN_PLACE) {
        buffer(c, sendbuf, sendcount, sendtype);
    } else if (op == Op::Allgather) {
        int rank = 0;
        PMPI_Comm_rank(comm, &rank);
        buffer(c, element_at(recvbuf, static_cast<std::int64_t>(rank) * recvcount, recvtype), recvcount, recvtype);
    } else {
        buffer(c, recvbuf, recvcount, recvtype);
    }
    c.va2 = reinterpret_cast<std::uint64_t>(recvbuf);
    MPI_Request real;
    post(&real);
    return collective(c, real, true, nullptr);
}

// A new communicator (README "Communicators"): the simulation times the
// split of `comm` and says which communicator this rank is in; then real
// MPI makes it (every member of `comm` has been let go by then), `make`
// into `*out`, and its size and this rank's rank in it are checked
// against the simulation's.
template <class Make>
int split(const char* name, MPI_Comm comm, int color, int key, MPI_Comm* out, Make make) {
    std::uint32_t ctx = 0;
    if (!known(comm, name, ctx)) return make();
    Call c = call(Op::CommSplit, ctx);
    c.peer = color == MPI_UNDEFINED ? mpiwire::kUndefinedColor : color;
    c.tag = key;
    const Reply r = exchange(c);
    const int rc = make();
    const bool none = r.request == mpiwire::kNoComm;
    int size = 0, rank = 0;
    if (!none && *out != MPI_COMM_NULL) {
        PMPI_Comm_size(*out, &size);
        PMPI_Comm_rank(*out, &rank);
    }
    if (none != (*out == MPI_COMM_NULL) || (!none && (static_cast<std::uint64_t>(size) != r.bytes || rank != r.source)))
        fail((std::string(name) + ": real MPI made a communicator of " + std::to_string(size) + " with this rank " +
              std::to_string(rank) + "; the simulation one of " + std::to_string(r.bytes) + " with rank " +
              std::to_string(r.source) + (none ? " (none)" : ""))
                 .c_str());
    if (!none) contexts()[*out] = static_cast<std::uint32_t>(r.request);
    mark();
    return rc;
}

}   // namespace

extern "C" {

int MPI_Init(int* argc, char*** argv) {
    const InLibrary lib;
    const int rc = PMPI_Init(argc, argv);
    int rank = 0, size = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    connect(rank, size);
    contexts()[MPI_COMM_SELF] = mpiwire::self_context(static_cast<std::uint32_t>(rank));
    return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
    const InLibrary lib;
    const int rc = PMPI_Init_thread(argc, argv, required, provided);
    int rank = 0, size = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    connect(rank, size);
    contexts()[MPI_COMM_SELF] = mpiwire::self_context(static_cast<std::uint32_t>(rank));
    return rc;
}

int MPI_Finalize(void) {
    const InLibrary lib;
    end_freed();
    if (!pending().empty()) untimed("MPI_Finalize with requests never completed");
    exchange(call(Op::Finalize));
    drain();
    return PMPI_Finalize();
}

int MPI_Abort(MPI_Comm comm, int errorcode) {
    const InLibrary lib;
    if (connected()) {
        Call c = call(Op::Abort);
        c.tag = errorcode;
        exchange(c);
    }
    return PMPI_Abort(comm, errorcode);
}

double MPI_Wtime(void) { return connected() ? static_cast<double>(now_ps()) * 1e-12 : PMPI_Wtime(); }
double MPI_Wtick(void) { return connected() ? 1e-12 : PMPI_Wtick(); }

int MPI_Send(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    if (!known(comm, "MPI_Send", ctx) || dest == MPI_PROC_NULL) return PMPI_Send(buf, count, type, dest, tag, comm);
    Call c = call(Op::Send, ctx);
    c.peer = dest;
    c.tag = tag;
    buffer(c, buf, count, type);
    void* copy = nullptr;
    const SendCopy sc = send_copy(buf, count, type, &copy);
    MPI_Request real;
    PMPI_Isend(sc.buf, sc.count, sc.type, dest, tag, comm, &real);
    exchange(c);
    keep(real, copy);
    mark();
    return MPI_SUCCESS;
}

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    if (!known(comm, "MPI_Recv", ctx) || source == MPI_PROC_NULL)
        return PMPI_Recv(buf, count, type, source, tag, comm, status);
    Call c = call(Op::Recv, ctx);
    c.peer = source == MPI_ANY_SOURCE ? mpiwire::kAnySource : source;
    c.tag = tag == MPI_ANY_TAG ? mpiwire::kAnyTag : tag;
    buffer(c, buf, count, type);
    const Reply r = exchange(c);
    const int rc = real_recv(buf, count, type, comm, ctx, r, status, "MPI_Recv");
    mark();
    return rc;
}

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    if (!known(comm, "MPI_Isend", ctx) || dest == MPI_PROC_NULL)
        return PMPI_Isend(buf, count, type, dest, tag, comm, request);
    Call c = call(Op::Isend, ctx);
    c.peer = dest;
    c.tag = tag;
    buffer(c, buf, count, type);
    Pending p;
    p.send = true;
    const SendCopy sc = send_copy(buf, count, type, &p.copy);
    const int rc = PMPI_Isend(sc.buf, sc.count, sc.type, dest, tag, comm, &p.real);
    // The program holds a request of its own: Open MPI hands out one shared
    // request for every send it completed at once.
    PMPI_Grequest_start(grequest_query, grequest_free, grequest_cancel, nullptr, request);
    p.sim = exchange(c).request;
    pending()[*request] = p;
    mark();
    return rc;
}

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    if (!known(comm, "MPI_Irecv", ctx) || source == MPI_PROC_NULL)
        return PMPI_Irecv(buf, count, type, source, tag, comm, request);
    Call c = call(Op::Irecv, ctx);
    c.peer = source == MPI_ANY_SOURCE ? mpiwire::kAnySource : source;
    c.tag = tag == MPI_ANY_TAG ? mpiwire::kAnyTag : tag;
    buffer(c, buf, count, type);
    // Not posted to real MPI yet (README "Receives"): the program holds a
    // generalized request until the receive ends.
    const int rc = PMPI_Grequest_start(grequest_query, grequest_free, grequest_cancel, nullptr, request);
    Pending p;
    p.buf = buf;
    p.count = count;
    p.type = type;
    p.comm = comm;
    p.ctx = ctx;
    p.source = source;
    p.tag = tag;
    p.order = next_order++;
    p.sim = exchange(c).request;
    pending()[*request] = p;
    unposted()[p.order] = *request;
    mark();
    return rc;
}

// MPI_Cancel of a receive: withdrawn if the simulation has not matched it
// (then it ends cancelled, and was never posted to real MPI), else it ends
// as it would have. A send cannot be withdrawn from the simulation, and
// a non-blocking collective cannot be cancelled (erroneous in MPI).
// MPI_Request_free of a send or of a non-blocking collective: it completes
// on its own (the simulation waits for it at MPI_Finalize, as Open MPI
// does); its real request is kept. Of a receive: it still completes (the
// program may not touch its buffer until it knows so by other means),
// carried out by the simulation, posted to real MPI once matched there
// (post_freed) and completed, at the latest, at MPI_Finalize (end_freed).
int MPI_Request_free(MPI_Request* request) {
    const InLibrary lib;
    const auto it = pending().find(*request);
    if (it == pending().end()) return PMPI_Request_free(request);
    Pending& p = it->second;
    if (p.rma) cannot_run("MPI_Request_free of a request-based RMA request (MPI 4.1 13.3.5)", mpiwire::kErroneous);
    Call c = call(Op::RequestFree);
    c.request = p.sim;
    exchange(c);
    if (p.send || p.collective) {
        keep(p.real, p.copy);
    } else {   // kept under a key of its own
        at_mark = post_freed;
        const MPI_Request key = freed_key(p.order);
        pending()[key] = p;
        freed()[p.order] = key;
        if (unposted().count(p.order)) unposted()[p.order] = key;
    }
    MPI_Request g = *request;
    PMPI_Grequest_complete(g);
    PMPI_Wait(&g, MPI_STATUS_IGNORE);
    pending().erase(*request);
    *request = MPI_REQUEST_NULL;
    mark();
    return MPI_SUCCESS;
}

int MPI_Cancel(MPI_Request* request) {
    const InLibrary lib;
    const auto it = pending().find(*request);
    if (it == pending().end()) return PMPI_Cancel(request);
    Pending& p = it->second;
    if (p.collective) cannot_run("MPI_Cancel of a non-blocking collective (MPI-3.1 5.12)", mpiwire::kErroneous);
    if (p.rma) cannot_run("MPI_Cancel of a request-based RMA request (MPI 4.1 13.3.5)", mpiwire::kErroneous);
    if (p.send) {
        untimed("MPI_Cancel of a send");
        return PMPI_Cancel(&p.real);
    }
    Call c = call(Op::Cancel, p.ctx);
    c.request = p.sim;
    if (exchange(c).flag) unposted().erase(p.order);
    mark();
    return MPI_SUCCESS;
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
    const InLibrary lib;
    const auto it = pending().find(*request);
    if (it == pending().end()) return PMPI_Wait(request, status);
    Call c = call(Op::Wait);
    c.request = it->second.sim;
    const Reply r = exchange(c);
    const int rc = complete(request, it->second, r, status);
    mark();
    return rc;
}

int MPI_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]) {
    const InLibrary lib;
    int rc = MPI_SUCCESS;
    for (int i = 0; i < count; ++i) {
        const int e = MPI_Wait(&requests[i], statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i]);
        if (e != MPI_SUCCESS) rc = e;
    }
    return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
    const InLibrary lib;
    std::vector<int> at;
    std::vector<std::uint64_t> ids;
    if (!listed(count, requests, at, ids, "MPI_Waitany")) return PMPI_Waitany(count, requests, index, status);
    if (ids.empty()) {
        *index = MPI_UNDEFINED;
        mark();
        return MPI_SUCCESS;
    }
    const Reply r = ask(Op::Waitany, ids);
    *index = at.at(r.request);
    return MPI_Wait(&requests[*index], status);   // complete in the simulation: returns at once
}

int MPI_Testany(int count, MPI_Request requests[], int* index, int* flag, MPI_Status* status) {
    const InLibrary lib;
    std::vector<int> at;
    std::vector<std::uint64_t> ids;
    if (!listed(count, requests, at, ids, "MPI_Testany")) return PMPI_Testany(count, requests, index, flag, status);
    *index = MPI_UNDEFINED;
    *flag = ids.empty();
    if (ids.empty()) {
        mark();
        return MPI_SUCCESS;
    }
    const Reply r = ask(Op::Testany, ids);
    if (!r.flag) {
        mark();
        return MPI_SUCCESS;
    }
    *flag = 1;
    *index = at.at(r.request);
    return MPI_Wait(&requests[*index], status);
}

int MPI_Testall(int count, MPI_Request requests[], int* flag, MPI_Status statuses[]) {
    const InLibrary lib;
    std::vector<int> at;
    std::vector<std::uint64_t> ids;
    if (!listed(count, requests, at, ids, "MPI_Testall")) return PMPI_Testall(count, requests, flag, statuses);
    *flag = ids.empty() || ask(Op::Testall, ids).flag;
    if (!*flag) {
        mark();
        return MPI_SUCCESS;
    }
    int rc = MPI_SUCCESS;
    for (const int i : at) {
        const int e = MPI_Wait(&requests[i], status_at(statuses, i));
        if (e != MPI_SUCCESS) rc = e;
    }
    mark();
    return rc;
}

// MPI_Waitsome: one waited for, then every other already complete;
// MPI_Testsome: every one already complete.
static int some(bool wait, int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
    const InLibrary lib;
    *outcount = 0;
    int index = MPI_UNDEFINED, flag = 0, rc = MPI_SUCCESS, nonnull = 0;
    for (int i = 0; i < incount; ++i) nonnull += requests[i] != MPI_REQUEST_NULL;
    if (!nonnull) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    MPI_Status st;
    if (wait) {
        rc = MPI_Waitany(incount, requests, &index, &st);
        indices[0] = index;
        if (statuses != MPI_STATUSES_IGNORE) statuses[0] = st;
        *outcount = 1;
    }
    while (rc == MPI_SUCCESS && (rc = MPI_Testany(incount, requests, &index, &flag, &st)) == MPI_SUCCESS && flag &&
           index != MPI_UNDEFINED) {
        indices[*outcount] = index;
        if (statuses != MPI_STATUSES_IGNORE) statuses[*outcount] = st;
        ++*outcount;
    }
    return rc;
}

int MPI_Waitsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
    const InLibrary lib;
    return some(true, incount, requests, outcount, indices, statuses);
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
    const InLibrary lib;
    return some(false, incount, requests, outcount, indices, statuses);
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
    const InLibrary lib;
    const auto it = pending().find(*request);
    if (it == pending().end()) return PMPI_Test(request, flag, status);
    Call c = call(Op::Test);
    c.request = it->second.sim;
    const Reply r = exchange(c);
    *flag = r.flag;
    const int rc = r.flag ? complete(request, it->second, r, status) : MPI_SUCCESS;
    mark();
    return rc;
}

// MPI_Probe, MPI_Iprobe: the simulation says which message a receive
// would take; real MPI's probe of that source and tag (posted by then)
// gives its real status, checked against the simulation's.
static int probe(bool wait, int source, int tag, MPI_Comm comm, std::uint32_t ctx, int* flag, MPI_Status* status) {
    const InLibrary lib;
    Call c = call(wait ? Op::Probe : Op::Iprobe, ctx);
    c.peer = source == MPI_ANY_SOURCE ? mpiwire::kAnySource : source;
    c.tag = tag == MPI_ANY_TAG ? mpiwire::kAnyTag : tag;
    const Reply r = exchange(c);
    if (flag) *flag = r.flag;
    int rc = MPI_SUCCESS;
    if (r.flag) {
        post_earlier(ctx, ~std::uint64_t(0), r.source, r.tag);
        MPI_Status st;
        rc = PMPI_Probe(r.source, r.tag, comm, &st);
        check_match(st, r, MPI_BYTE, wait ? "MPI_Probe" : "MPI_Iprobe");
        if (status != MPI_STATUS_IGNORE) *status = st;
    }
    mark();
    return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    if (!known(comm, "MPI_Probe", ctx) || source == MPI_PROC_NULL) return PMPI_Probe(source, tag, comm, status);
    return probe(true, source, tag, comm, ctx, nullptr, status);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    if (!known(comm, "MPI_Iprobe", ctx) || source == MPI_PROC_NULL) return PMPI_Iprobe(source, tag, comm, flag, status);
    return probe(false, source, tag, comm, ctx, flag, status);
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    if (!known(comm, "MPI_Sendrecv", ctx) || dest == MPI_PROC_NULL || source == MPI_PROC_NULL)
        return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                             comm, status);
    Call c = call(Op::Sendrecv, ctx);
    c.peer = dest;
    c.tag = sendtag;
    buffer(c, sendbuf, sendcount, sendtype);
    Call r = call(Op::Recv);
    buffer(r, recvbuf, recvcount, recvtype);
    c.peer2 = source == MPI_ANY_SOURCE ? mpiwire::kAnySource : source;
    c.tag2 = recvtag == MPI_ANY_TAG ? mpiwire::kAnyTag : recvtag;
    c.va2 = r.va;
    c.bytes2 = r.bytes;
    void* copy = nullptr;
    const SendCopy sc = send_copy(sendbuf, sendcount, sendtype, &copy);
    MPI_Request real;
    PMPI_Isend(sc.buf, sc.count, sc.type, dest, sendtag, comm, &real);
    const Reply rep = exchange(c);
    keep(real, copy);
    const int rc = real_recv(recvbuf, recvcount, recvtype, comm, ctx, rep, status, "MPI_Sendrecv");
    mark();
    return rc;
}

int MPI_Barrier(MPI_Comm comm) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    if (!known(comm, "MPI_Barrier", ctx)) return PMPI_Barrier(comm);
    MPI_Request real;
    PMPI_Ibarrier(comm, &real);
    return collective(call(Op::Barrier, ctx), real, true, nullptr);
}

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    if (!known(comm, "MPI_Bcast", ctx)) return PMPI_Bcast(buf, count, type, root, comm);
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    Call c = call(Op::Bcast, ctx);
    c.root = root;
    buffer(c, buf, count, type);
    void* copy = nullptr;
    void* from = rank == root ? const_cast<void*>(copy_of(buf, count, type, &copy)) : buf;
    MPI_Request real;
    PMPI_Ibcast(from, count, type, root, comm, &real);
    return collective(c, real, rank != root, copy);
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    Call c = call(Op::Reduce);
    if (!known(comm, "MPI_Reduce", ctx) ||
        !reduction(c, "MPI_Reduce", op, type, count_of(count), in_place ? recvbuf : sendbuf))
        return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    c.comm = ctx;
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    c.root = root;
    c.va2 = rank == root ? reinterpret_cast<std::uint64_t>(recvbuf) : 0;
    void* copy = nullptr;
    const void* from = sendbuf;
    if (rank != root && !in_place) from = copy_of(sendbuf, count, type, &copy);
    MPI_Request real;
    PMPI_Ireduce(from, recvbuf, count, type, op, root, comm, &real);
    return collective(c, real, rank == root, copy);
}

// MPI_Gather: the root's result depends on every rank (waited for); the
// others' data are copied and their real gather kept. MPI_IN_PLACE (the
// root's): its block is already in its receive buffer, at its place, which
// is its send buffer to the simulation (the library's copy of it onto
// itself is none).
int MPI_Gather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
               MPI_Datatype recvtype, int root, MPI_Comm comm) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    if (!known(comm, "MPI_Gather", ctx))
        return PMPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    Call c = call(Op::Gather, ctx);
    c.root = root;
    if (sendbuf == MPI_IN_PLACE)
        buffer(c, element_at(recvbuf, static_cast<std::int64_t>(root) * recvcount, recvtype), recvcount, recvtype);
    else buffer(c, sendbuf, sendcount, sendtype);
    c.va2 = rank == root ? reinterpret_cast<std::uint64_t>(recvbuf) : 0;
    void* copy = nullptr;
    const void* from = rank == root ? sendbuf : copy_of(sendbuf, sendcount, sendtype, &copy);
    MPI_Request real;
    PMPI_Igather(from, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &real);
    return collective(c, real, rank == root, copy);
}

// MPI_Scatter: every rank's result but the root's depends on the root
// (waited for). The root's data are copied and its real scatter kept; its
// own block it copies itself, at once (the real scatter's copy of it
// could come after the call returns). MPI_IN_PLACE (the root's): its block
// stays in its send buffer, at its place, which is its receive buffer to
// the simulation (no copy).
int MPI_Scatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    if (!known(comm, "MPI_Scatter", ctx))
        return PMPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm);
    int rank = 0, size = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    const bool in_place = recvbuf == MPI_IN_PLACE;
    Call c = call(Op::Scatter, ctx);
    c.root = root;
    if (rank == root) buffer(c, sendbuf, sendcount * size, sendtype);
    c.va = rank == root ? c.va : 0;
    c.bytes = in_place ? data_bytes(sendcount, sendtype) : data_bytes(recvcount, recvtype);
    std::uint64_t rva = 0, rlen = 0;
    if (in_place)
        span(element_at(sendbuf, static_cast<std::int64_t>(root) * sendcount, sendtype), sendcount, sendtype, rva,
             rlen);
    else span(recvbuf, recvcount, recvtype, rva, rlen);
    c.va2 = rva;
    void* copy = nullptr;
    MPI_Request real;
    if (rank == root) {
        const void* from = copy_of(sendbuf, sendcount * size, sendtype, &copy);
        const void* own = element_at(sendbuf, static_cast<std::int64_t>(root) * sendcount, sendtype);
        if (!in_place)
            PMPI_Sendrecv(own, sendcount, sendtype, 0, 0, recvbuf, recvcount, recvtype, 0, 0, MPI_COMM_SELF,
                          MPI_STATUS_IGNORE);
        PMPI_Iscatter(from, sendcount, sendtype, MPI_IN_PLACE, recvcount, recvtype, root, comm, &real);
    } else {
        PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, &real);
    }
    return collective(c, real, rank != root, copy);
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    Call c = call(Op::Allreduce);
    if (!known(comm, "MPI_Allreduce", ctx) ||
        !reduction(c, "MPI_Allreduce", op, type, count_of(count), sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf))
        return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    c.comm = ctx;
    c.va2 = reinterpret_cast<std::uint64_t>(recvbuf);
    MPI_Request real;
    PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, &real);
    return collective(c, real, true, nullptr);
}

// MPI_Scan, MPI_Exscan: every rank's result depends on lower ranks'
// (waited for, as an allreduce's).
static int scan(Op op, const char* name, const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op mop,
                MPI_Comm comm) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    const bool exclusive = op == Op::Exscan;
    Call c = call(op);
    if (!known(comm, name, ctx) ||
        !reduction(c, name, mop, type, count_of(count), sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf))
        return exclusive ? PMPI_Exscan(sendbuf, recvbuf, count, type, mop, comm)
                         : PMPI_Scan(sendbuf, recvbuf, count, type, mop, comm);
    c.comm = ctx;
    c.va2 = reinterpret_cast<std::uint64_t>(recvbuf);
    MPI_Request real;
    if (exclusive) PMPI_Iexscan(sendbuf, recvbuf, count, type, mop, comm, &real);
    else PMPI_Iscan(sendbuf, recvbuf, count, type, mop, comm, &real);
    return collective(c, real, true, nullptr);
}

int MPI_Scan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    const InLibrary lib;
    return scan(Op::Scan, "MPI_Scan", sendbuf, recvbuf, count, type, op, comm);
}

int MPI_Exscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    const InLibrary lib;
    return scan(Op::Exscan, "MPI_Exscan", sendbuf, recvbuf, count, type, op, comm);
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
    const InLibrary lib;
    return all_to_all(
        Op::Allgather, "MPI_Allgather", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
        [&](MPI_Request* real) {
            return real ? PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, real)
                        : PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
        });
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
    const InLibrary lib;
    return all_to_all(Op::Alltoall, "MPI_Alltoall", sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                      [&](MPI_Request* real) {
                          return real ? PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                                                       real)
                                      : PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
                      });
}

int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm* newcomm) {
    const InLibrary lib;
    return split("MPI_Comm_split", comm, color, key, newcomm,
                 [&] { return PMPI_Comm_split(comm, color, key, newcomm); });
}

int MPI_Comm_dup(MPI_Comm comm, MPI_Comm* newcomm) {
    const InLibrary lib;
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    return split("MPI_Comm_dup", comm, 0, rank, newcomm, [&] { return PMPI_Comm_dup(comm, newcomm); });
}

// The group's members, in the group's order: those of `comm` in `group`
// (MPI wants the same group at every member).
int MPI_Comm_create(MPI_Comm comm, MPI_Group group, MPI_Comm* newcomm) {
    const InLibrary lib;
    int in_group = MPI_UNDEFINED;
    PMPI_Group_rank(group, &in_group);
    return split("MPI_Comm_create", comm, in_group == MPI_UNDEFINED ? MPI_UNDEFINED : 0, in_group, newcomm,
                 [&] { return PMPI_Comm_create(comm, group, newcomm); });
}

// Open MPI's default topology component (basic) keeps the ranks in their
// order whatever `reorder` says; the ranks beyond the grid get
// MPI_COMM_NULL. A component that reorders fails the check in split().
int MPI_Cart_create(MPI_Comm comm, int ndims, const int dims[], const int periods[], int reorder, MPI_Comm* cart) {
    const InLibrary lib;
    int rank = 0, cells = 1;
    PMPI_Comm_rank(comm, &rank);
    for (int i = 0; i < ndims; ++i) cells *= dims[i];
    return split("MPI_Cart_create", comm, rank < cells ? 0 : MPI_UNDEFINED, rank, cart,
                 [&] { return PMPI_Cart_create(comm, ndims, dims, periods, reorder, cart); });
}

// Local in Open MPI (no message): the simulation forgets nothing it
// needs. Real MPI frees it once no request this library keeps is left
// (free_later).
int MPI_Comm_free(MPI_Comm* comm) {
    const InLibrary lib;
    if (*comm == MPI_COMM_NULL || *comm == MPI_COMM_WORLD || *comm == MPI_COMM_SELF) return PMPI_Comm_free(comm);
    contexts().erase(*comm);
    free_later(*comm);
    *comm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

}   // extern "C"
