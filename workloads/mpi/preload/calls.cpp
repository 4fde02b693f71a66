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

#include "workloads/mpi/preload/channel.hpp"

using namespace vrdmasim;
using namespace vrdmasim::mpipreload;
using mpiwire::Call;
using mpiwire::Op;
using mpiwire::Reply;

namespace {

// The program's requests of timed calls, by the real request it holds.
struct Pending {
    std::uint64_t sim = 0;   // the simulation's request
    bool send = false;
    void* copy = nullptr;   // a send's copy
    int source = 0, tag = 0;   // a receive's, as posted
};
std::map<MPI_Request, Pending>& pending() {
    static std::map<MPI_Request, Pending> p;
    return p;
}

Call call(Op op) {
    Call c;
    c.op = static_cast<std::uint32_t>(op);
    return c;
}

// Only MPI_COMM_WORLD is timed so far: another communicator is a call the
// simulation does not time.
bool world(MPI_Comm comm, const char* name) {
    if (comm == MPI_COMM_WORLD) return true;
    untimed((std::string(name) + " on a communicator other than MPI_COMM_WORLD").c_str());
    return false;
}

void buffer(Call& c, const void* buf, int count, MPI_Datatype type) {
    std::uint64_t va = 0, len = 0;
    span(buf, count, type, va, len);
    c.va = va;
    c.bytes = data_bytes(count, type);
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

// The real receive of a message the simulation matched.
int real_recv(void* buf, int count, MPI_Datatype type, const Reply& r, MPI_Status* status, const char* name) {
    MPI_Status st;
    const int rc = PMPI_Recv(buf, count, type, r.source, r.tag, MPI_COMM_WORLD, &st);
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

// A timed request complete in the simulation: its real side.
int complete(MPI_Request* request, Pending& p, const Reply& r, MPI_Status* status) {
    const MPI_Request key = *request;   // PMPI_Wait sets *request to MPI_REQUEST_NULL
    int rc = MPI_SUCCESS;
    if (p.send) {
        keep(*request, p.copy);
        send_status(status);
    } else {
        MPI_Status st;
        rc = PMPI_Wait(request, &st);
        check_match(st, r, MPI_BYTE, "MPI_Wait");
        if (status != MPI_STATUS_IGNORE) *status = st;
    }
    pending().erase(key);
    *request = MPI_REQUEST_NULL;
    return rc;
}

// A collective posted before the simulation is asked: waited for when this
// rank's result depends on the others, else kept (its input copied).
int collective(Call c, MPI_Request real, bool waits, void* copy) {
    exchange(c);
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

}   // namespace

extern "C" {

int MPI_Init(int* argc, char*** argv) {
    const int rc = PMPI_Init(argc, argv);
    int rank = 0, size = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    connect(rank, size);
    return rc;
}

int MPI_Init_thread(int* argc, char*** argv, int required, int* provided) {
    const int rc = PMPI_Init_thread(argc, argv, required, provided);
    int rank = 0, size = 0;
    PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
    PMPI_Comm_size(MPI_COMM_WORLD, &size);
    connect(rank, size);
    return rc;
}

int MPI_Finalize(void) {
    if (!pending().empty()) untimed("MPI_Finalize with requests never completed");
    exchange(call(Op::Finalize));
    drain();
    return PMPI_Finalize();
}

int MPI_Abort(MPI_Comm comm, int errorcode) {
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
    if (!world(comm, "MPI_Send") || dest == MPI_PROC_NULL) return PMPI_Send(buf, count, type, dest, tag, comm);
    Call c = call(Op::Send);
    c.peer = dest;
    c.tag = tag;
    buffer(c, buf, count, type);
    void* copy = nullptr;
    MPI_Request real;
    PMPI_Isend(copy_of(buf, count, type, &copy), count, type, dest, tag, comm, &real);
    exchange(c);
    keep(real, copy);
    mark();
    return MPI_SUCCESS;
}

int MPI_Recv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Status* status) {
    if (!world(comm, "MPI_Recv") || source == MPI_PROC_NULL)
        return PMPI_Recv(buf, count, type, source, tag, comm, status);
    Call c = call(Op::Recv);
    c.peer = source == MPI_ANY_SOURCE ? mpiwire::kAnySource : source;
    c.tag = tag == MPI_ANY_TAG ? mpiwire::kAnyTag : tag;
    buffer(c, buf, count, type);
    const Reply r = exchange(c);
    const int rc = real_recv(buf, count, type, r, status, "MPI_Recv");
    mark();
    return rc;
}

int MPI_Isend(const void* buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm, MPI_Request* request) {
    if (!world(comm, "MPI_Isend") || dest == MPI_PROC_NULL)
        return PMPI_Isend(buf, count, type, dest, tag, comm, request);
    Call c = call(Op::Isend);
    c.peer = dest;
    c.tag = tag;
    buffer(c, buf, count, type);
    Pending p;
    p.send = true;
    const int rc = PMPI_Isend(copy_of(buf, count, type, &p.copy), count, type, dest, tag, comm, request);
    p.sim = exchange(c).request;
    pending()[*request] = p;
    mark();
    return rc;
}

int MPI_Irecv(void* buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm, MPI_Request* request) {
    if (!world(comm, "MPI_Irecv") || source == MPI_PROC_NULL)
        return PMPI_Irecv(buf, count, type, source, tag, comm, request);
    if (source == MPI_ANY_SOURCE) {
        // Real MPI would match it in host order, the simulation in
        // simulated time: not built yet.
        untimed("MPI_Irecv from MPI_ANY_SOURCE");
        return PMPI_Irecv(buf, count, type, source, tag, comm, request);
    }
    Call c = call(Op::Irecv);
    c.peer = source;
    c.tag = tag == MPI_ANY_TAG ? mpiwire::kAnyTag : tag;
    buffer(c, buf, count, type);
    // Posted now: from one source, real MPI and the simulation match in
    // the same (posted, non-overtaking) order.
    const int rc = PMPI_Irecv(buf, count, type, source, tag, comm, request);
    Pending p;
    p.source = source;
    p.tag = tag;
    p.sim = exchange(c).request;
    pending()[*request] = p;
    mark();
    return rc;
}

int MPI_Wait(MPI_Request* request, MPI_Status* status) {
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
    int rc = MPI_SUCCESS;
    for (int i = 0; i < count; ++i) {
        const int e = MPI_Wait(&requests[i], statuses == MPI_STATUSES_IGNORE ? MPI_STATUS_IGNORE : &statuses[i]);
        if (e != MPI_SUCCESS) rc = e;
    }
    return rc;
}

int MPI_Waitany(int count, MPI_Request requests[], int* index, MPI_Status* status) {
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
    return some(true, incount, requests, outcount, indices, statuses);
}

int MPI_Testsome(int incount, MPI_Request requests[], int* outcount, int indices[], MPI_Status statuses[]) {
    return some(false, incount, requests, outcount, indices, statuses);
}

int MPI_Test(MPI_Request* request, int* flag, MPI_Status* status) {
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
static int probe(bool wait, int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
    Call c = call(wait ? Op::Probe : Op::Iprobe);
    c.peer = source == MPI_ANY_SOURCE ? mpiwire::kAnySource : source;
    c.tag = tag == MPI_ANY_TAG ? mpiwire::kAnyTag : tag;
    const Reply r = exchange(c);
    if (flag) *flag = r.flag;
    int rc = MPI_SUCCESS;
    if (r.flag) {
        MPI_Status st;
        rc = PMPI_Probe(r.source, r.tag, comm, &st);
        check_match(st, r, MPI_BYTE, wait ? "MPI_Probe" : "MPI_Iprobe");
        if (status != MPI_STATUS_IGNORE) *status = st;
    }
    mark();
    return rc;
}

int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status* status) {
    if (!world(comm, "MPI_Probe") || source == MPI_PROC_NULL) return PMPI_Probe(source, tag, comm, status);
    return probe(true, source, tag, comm, nullptr, status);
}

int MPI_Iprobe(int source, int tag, MPI_Comm comm, int* flag, MPI_Status* status) {
    if (!world(comm, "MPI_Iprobe") || source == MPI_PROC_NULL) return PMPI_Iprobe(source, tag, comm, flag, status);
    return probe(false, source, tag, comm, flag, status);
}

int MPI_Sendrecv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int source, int recvtag, MPI_Comm comm, MPI_Status* status) {
    if (!world(comm, "MPI_Sendrecv") || dest == MPI_PROC_NULL || source == MPI_PROC_NULL)
        return PMPI_Sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype, source, recvtag,
                             comm, status);
    Call c = call(Op::Sendrecv);
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
    MPI_Request real;
    PMPI_Isend(copy_of(sendbuf, sendcount, sendtype, &copy), sendcount, sendtype, dest, sendtag, comm, &real);
    const Reply rep = exchange(c);
    keep(real, copy);
    const int rc = real_recv(recvbuf, recvcount, recvtype, rep, status, "MPI_Sendrecv");
    mark();
    return rc;
}

int MPI_Barrier(MPI_Comm comm) {
    if (!world(comm, "MPI_Barrier")) return PMPI_Barrier(comm);
    MPI_Request real;
    PMPI_Ibarrier(comm, &real);
    return collective(call(Op::Barrier), real, true, nullptr);
}

int MPI_Bcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm) {
    if (!world(comm, "MPI_Bcast")) return PMPI_Bcast(buf, count, type, root, comm);
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    Call c = call(Op::Bcast);
    c.root = root;
    buffer(c, buf, count, type);
    void* copy = nullptr;
    void* from = rank == root ? const_cast<void*>(copy_of(buf, count, type, &copy)) : buf;
    MPI_Request real;
    PMPI_Ibcast(from, count, type, root, comm, &real);
    return collective(c, real, rank != root, copy);
}

int MPI_Reduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm) {
    if (!world(comm, "MPI_Reduce")) return PMPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm);
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    Call c = call(Op::Reduce);
    c.root = root;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    buffer(c, in_place ? recvbuf : sendbuf, count, type);
    c.va2 = rank == root ? reinterpret_cast<std::uint64_t>(recvbuf) : 0;
    void* copy = nullptr;
    const void* from = sendbuf;
    if (rank != root && !in_place) from = copy_of(sendbuf, count, type, &copy);
    MPI_Request real;
    PMPI_Ireduce(from, recvbuf, count, type, op, root, comm, &real);
    return collective(c, real, rank == root, copy);
}

int MPI_Allreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm) {
    if (!world(comm, "MPI_Allreduce")) return PMPI_Allreduce(sendbuf, recvbuf, count, type, op, comm);
    Call c = call(Op::Allreduce);
    buffer(c, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, count, type);
    c.va2 = reinterpret_cast<std::uint64_t>(recvbuf);
    MPI_Request real;
    PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, &real);
    return collective(c, real, true, nullptr);
}

int MPI_Allgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm) {
    if (!world(comm, "MPI_Allgather") || sendbuf == MPI_IN_PLACE) {
        if (comm == MPI_COMM_WORLD) untimed("MPI_Allgather with MPI_IN_PLACE");
        return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
    Call c = call(Op::Allgather);
    buffer(c, sendbuf, sendcount, sendtype);
    c.va2 = reinterpret_cast<std::uint64_t>(recvbuf);
    MPI_Request real;
    PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &real);
    return collective(c, real, true, nullptr);
}

int MPI_Alltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, MPI_Comm comm) {
    if (!world(comm, "MPI_Alltoall") || sendbuf == MPI_IN_PLACE) {
        if (comm == MPI_COMM_WORLD) untimed("MPI_Alltoall with MPI_IN_PLACE");
        return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
    }
    Call c = call(Op::Alltoall);
    buffer(c, sendbuf, sendcount, sendtype);
    c.va2 = reinterpret_cast<std::uint64_t>(recvbuf);
    MPI_Request real;
    PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, &real);
    return collective(c, real, true, nullptr);
}

}   // extern "C"
