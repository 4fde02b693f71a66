// The non-blocking collectives (workloads/mpi/README.md "Non-blocking
// collectives"): each wrapper starts its blocking wrapper's work (the same
// Call, the same real non-blocking collective underneath) as a started
// one (calls.hpp, Starting): the simulation runs it while the program goes
// on, and the program's request ends at MPI_Wait or MPI_Test once both the
// simulation's and the real one have. On a communicator the simulation
// does not know, the real one alone (reported untimed).
#include <mpi.h>

#include "workloads/mpi/preload/calls.hpp"
#include "workloads/mpi/preload/libraries.hpp"

using namespace vrdmasim::mpipreload;

namespace {

// `blocking()` (the blocking wrapper) started as a non-blocking collective
// into `*request`; `real()` on a communicator the simulation does not know.
template <class Blocking, class Real>
int start(const char* name, MPI_Comm comm, MPI_Request* request, Blocking blocking, Real real) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    if (!known(comm, name, ctx)) return real();
    const Starting starting(request);
    const int rc = blocking();
    // A blocking wrapper that took its untimed way (MPI_IN_PLACE where it
    // has one) returned complete: nothing left to wait for.
    if (!starting.started()) *request = MPI_REQUEST_NULL;
    return rc;
}

}   // namespace

extern "C" {

int MPI_Ibarrier(MPI_Comm comm, MPI_Request* request) {
    return start(
        "MPI_Ibarrier", comm, request, [&] { return MPI_Barrier(comm); }, [&] { return PMPI_Ibarrier(comm, request); });
}

int MPI_Ibcast(void* buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request* request) {
    return start(
        "MPI_Ibcast", comm, request, [&] { return MPI_Bcast(buf, count, type, root, comm); },
        [&] { return PMPI_Ibcast(buf, count, type, root, comm, request); });
}

int MPI_Ireduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, int root, MPI_Comm comm,
                MPI_Request* request) {
    return start(
        "MPI_Ireduce", comm, request, [&] { return MPI_Reduce(sendbuf, recvbuf, count, type, op, root, comm); },
        [&] { return PMPI_Ireduce(sendbuf, recvbuf, count, type, op, root, comm, request); });
}

int MPI_Iallreduce(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                   MPI_Request* request) {
    return start(
        "MPI_Iallreduce", comm, request, [&] { return MPI_Allreduce(sendbuf, recvbuf, count, type, op, comm); },
        [&] { return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request); });
}

int MPI_Iscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
              MPI_Request* request) {
    return start(
        "MPI_Iscan", comm, request, [&] { return MPI_Scan(sendbuf, recvbuf, count, type, op, comm); },
        [&] { return PMPI_Iscan(sendbuf, recvbuf, count, type, op, comm, request); });
}

int MPI_Iexscan(const void* sendbuf, void* recvbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                MPI_Request* request) {
    return start(
        "MPI_Iexscan", comm, request, [&] { return MPI_Exscan(sendbuf, recvbuf, count, type, op, comm); },
        [&] { return PMPI_Iexscan(sendbuf, recvbuf, count, type, op, comm, request); });
}

int MPI_Igather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
    return start(
        "MPI_Igather", comm, request,
        [&] { return MPI_Gather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm); },
        [&] { return PMPI_Igather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request); });
}

int MPI_Iscatter(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                 MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
    return start(
        "MPI_Iscatter", comm, request,
        [&] { return MPI_Scatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm); },
        [&] { return PMPI_Iscatter(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, root, comm, request); });
}

int MPI_Iallgather(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                   MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
    return start(
        "MPI_Iallgather", comm, request,
        [&] { return MPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); },
        [&] { return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request); });
}

int MPI_Ialltoall(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, int recvcount,
                  MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
    return start(
        "MPI_Ialltoall", comm, request,
        [&] { return MPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm); },
        [&] { return PMPI_Ialltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, request); });
}

int MPI_Igatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                 const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
    return start(
        "MPI_Igatherv", comm, request,
        [&] { return MPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm); },
        [&] {
            return PMPI_Igatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm,
                                 request);
        });
}

int MPI_Iscatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                  int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm, MPI_Request* request) {
    return start(
        "MPI_Iscatterv", comm, request,
        [&] { return MPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm); },
        [&] {
            return PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm,
                                  request);
        });
}

int MPI_Iallgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                    const int displs[], MPI_Datatype recvtype, MPI_Comm comm, MPI_Request* request) {
    return start(
        "MPI_Iallgatherv", comm, request,
        [&] { return MPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm); },
        [&] {
            return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, request);
        });
}

int MPI_Ialltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                   void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm,
                   MPI_Request* request) {
    return start(
        "MPI_Ialltoallv", comm, request,
        [&] {
            return MPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
        },
        [&] {
            return PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm,
                                   request);
        });
}

int MPI_Ireduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                        MPI_Comm comm, MPI_Request* request) {
    return start(
        "MPI_Ireduce_scatter", comm, request,
        [&] { return MPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm); },
        [&] { return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, request); });
}

int MPI_Ireduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                              MPI_Comm comm, MPI_Request* request) {
    return start(
        "MPI_Ireduce_scatter_block", comm, request,
        [&] { return MPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm); },
        [&] { return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, request); });
}

}   // extern "C"
