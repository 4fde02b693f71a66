// The v-variants timed (workloads/mpi/README.md "What is timed"):
// MPI_Gatherv, MPI_Scatterv, MPI_Allgatherv and MPI_Alltoallv. Each rank
// tells the simulation its blocks as it sees them (lengths and offsets in
// bytes, after the Call: protocol.hpp), and posts the real collective
// non-blocking before asking, as the other collectives do (calls.cpp).
// MPI_IN_PLACE (a gatherv's or scatterv's root, every rank of an
// allgatherv): the rank's own block is already in its receive (gatherv,
// allgatherv) or send (scatterv) buffer at its place, which is its other
// buffer to the simulation (the library's copy of it onto itself is none).
// MPI_IN_PLACE of alltoallv: its send blocks are its receive blocks, in
// the receive buffer (the simulation reads them from a buffer of its own).
// Untimed, with the reason: a datatype whose
// extent is not its size (its displacements would count extents the
// simulation does not lay out), and alltoallv's send blocks that overlap
// (MPI allows them; the simulation's data give each block its own bytes).
#include <mpi.h>

#include <algorithm>
#include <initializer_list>
#include <string>
#include <vector>

#include "workloads/mpi/preload/calls.hpp"
#include "workloads/mpi/preload/channel.hpp"
#include "workloads/mpi/preload/libraries.hpp"

using namespace vrdmasim;
using namespace vrdmasim::mpipreload;
using mpiwire::Call;
using mpiwire::Op;

bool vrdmasim::mpipreload::dense(MPI_Datatype type, std::uint64_t& size) {
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    int s = 0;
    PMPI_Type_size(type, &s);
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    size = static_cast<std::uint64_t>(s);
    return lb == 0 && true_lb == 0 && extent == s && true_extent == s;
}

namespace {

// The four arrays of a v-variant's Call (protocol.hpp): lengths sent to
// each rank, their offsets, lengths received from each, their offsets.
struct Values {
    std::vector<std::uint64_t> v;
    int n;
    explicit Values(int ranks) : v(4 * static_cast<std::size_t>(ranks), 0), n(ranks) {}
    std::uint64_t& at(int part, int rank) { return v[static_cast<std::size_t>(part * n + rank)]; }
    // Blocks of `counts` elements at `displs` (nullptr: the same `count`
    // at offset 0 for every rank) of `size` bytes each into part `part`.
    void set(int part, const int counts[], const int displs[], int count, std::uint64_t size) {
        for (int r = 0; r < n; ++r) {
            at(part, r) = static_cast<std::uint64_t>(std::max(counts ? counts[r] : count, 0)) * size;
            at(part + 1, r) = displs ? static_cast<std::uint64_t>(std::max(displs[r], 0)) * size : 0;
        }
    }
};

// Whether the call is timed: a known communicator, dense datatypes
// (MPI_DATATYPE_NULL: one MPI_IN_PLACE leaves unused); else reported
// untimed (with why) and false.
bool timeable(MPI_Comm comm, const char* name, std::initializer_list<MPI_Datatype> types, std::uint32_t& ctx) {
    if (!known(comm, name, ctx)) return false;
    std::uint64_t size = 0;
    for (MPI_Datatype t : types)
        if (t != MPI_DATATYPE_NULL && !dense(t, size)) {
            untimed((std::string(name) + " with a datatype whose extent is not its size").c_str());
            return false;
        }
    return true;
}

std::uint64_t size_of(MPI_Datatype type) {
    std::uint64_t size = 0;
    dense(type, size);
    return size;
}

// The elements `counts` at `displs` span from the buffer's start.
int span_of(const int counts[], const int displs[], int n) {
    int end = 0;
    for (int r = 0; r < n; ++r)
        if (counts[r] > 0) end = std::max(end, displs[r] + counts[r]);
    return end;
}

// Whether blocks of `counts` at `displs` overlap one another.
bool overlap(const int counts[], const int displs[], int n) {
    std::vector<std::pair<int, int>> b;
    for (int r = 0; r < n; ++r)
        if (counts[r] > 0) b.emplace_back(displs[r], displs[r] + counts[r]);
    std::sort(b.begin(), b.end());
    for (std::size_t i = 1; i < b.size(); ++i)
        if (b[i].first < b[i - 1].second) return true;
    return false;
}

int rank_of(MPI_Comm comm) {
    int rank = 0;
    PMPI_Comm_rank(comm, &rank);
    return rank;
}

int ranks_of(MPI_Comm comm) {
    int size = 0;
    PMPI_Comm_size(comm, &size);
    return size;
}

}   // namespace

extern "C" {

// The root's result depends on every rank (waited for); the others' data
// are copied and their real gatherv kept.
int MPI_Gatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                const int displs[], MPI_Datatype recvtype, int root, MPI_Comm comm) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    const int rank = rank_of(comm), n = ranks_of(comm);
    const bool in_place = sendbuf == MPI_IN_PLACE && rank == root;
    if (!timeable(comm, "MPI_Gatherv",
                  {in_place ? MPI_DATATYPE_NULL : sendtype, rank == root ? recvtype : MPI_DATATYPE_NULL}, ctx))
        return PMPI_Gatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm);
    Call c = call(Op::Gatherv, ctx);
    c.root = root;
    Values v(n);
    if (rank == root) v.set(2, recvcounts, displs, 0, size_of(recvtype));
    c.bytes = v.at(0, root) =
        in_place ? v.at(2, root) : static_cast<std::uint64_t>(std::max(sendcount, 0)) * size_of(sendtype);
    c.va = reinterpret_cast<std::uint64_t>(in_place ? element_at(recvbuf, displs[root], recvtype) : sendbuf);
    c.va2 = rank == root ? reinterpret_cast<std::uint64_t>(recvbuf) : 0;
    void* copy = nullptr;
    const void* from = rank == root ? sendbuf : copy_of(sendbuf, sendcount, sendtype, &copy);
    MPI_Request real;
    PMPI_Igatherv(from, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, root, comm, &real);
    return collective(c, real, rank == root, copy, v.v);
}

// Every rank's result but the root's depends on the root (waited for). The
// root's data are copied and its real scatterv kept; its own block it
// copies itself, at once (the real scatterv's copy could come after the
// call returns).
int MPI_Scatterv(const void* sendbuf, const int sendcounts[], const int displs[], MPI_Datatype sendtype, void* recvbuf,
                 int recvcount, MPI_Datatype recvtype, int root, MPI_Comm comm) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    const int rank = rank_of(comm), n = ranks_of(comm);
    const bool in_place = recvbuf == MPI_IN_PLACE && rank == root;
    if (!timeable(comm, "MPI_Scatterv",
                  {in_place ? MPI_DATATYPE_NULL : recvtype, rank == root ? sendtype : MPI_DATATYPE_NULL}, ctx))
        return PMPI_Scatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm);
    Call c = call(Op::Scatterv, ctx);
    c.root = root;
    Values v(n);
    if (rank == root) v.set(0, sendcounts, displs, 0, size_of(sendtype));
    c.bytes = v.at(2, root) =
        in_place ? v.at(0, root) : static_cast<std::uint64_t>(std::max(recvcount, 0)) * size_of(recvtype);
    c.va = rank == root ? reinterpret_cast<std::uint64_t>(sendbuf) : 0;
    c.va2 = reinterpret_cast<std::uint64_t>(in_place ? element_at(sendbuf, displs[root], sendtype) : recvbuf);
    void* copy = nullptr;
    MPI_Request real;
    if (rank == root) {
        const void* from = copy_of(sendbuf, span_of(sendcounts, displs, n), sendtype, &copy);
        if (!in_place)
            PMPI_Sendrecv(static_cast<const char*>(sendbuf) + static_cast<MPI_Aint>(displs[root]) * size_of(sendtype),
                          sendcounts[root], sendtype, 0, 0, recvbuf, recvcount, recvtype, 0, 0, MPI_COMM_SELF,
                          MPI_STATUS_IGNORE);
        PMPI_Iscatterv(from, sendcounts, displs, sendtype, MPI_IN_PLACE, recvcount, recvtype, root, comm, &real);
    } else {
        PMPI_Iscatterv(sendbuf, sendcounts, displs, sendtype, recvbuf, recvcount, recvtype, root, comm, &real);
    }
    return collective(c, real, rank != root, copy, v.v);
}

int MPI_Allgatherv(const void* sendbuf, int sendcount, MPI_Datatype sendtype, void* recvbuf, const int recvcounts[],
                   const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    const bool in_place = sendbuf == MPI_IN_PLACE;
    if (!timeable(comm, "MPI_Allgatherv", {in_place ? MPI_DATATYPE_NULL : sendtype, recvtype}, ctx))
        return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm);
    const int rank = rank_of(comm);
    Values v(ranks_of(comm));
    if (in_place) v.set(0, nullptr, nullptr, recvcounts[rank], size_of(recvtype));
    else v.set(0, nullptr, nullptr, sendcount, size_of(sendtype));
    v.set(2, recvcounts, displs, 0, size_of(recvtype));
    Call c = call(Op::Allgatherv, ctx);
    c.bytes = v.at(0, 0);
    c.va = reinterpret_cast<std::uint64_t>(in_place ? element_at(recvbuf, displs[rank], recvtype) : sendbuf);
    c.va2 = reinterpret_cast<std::uint64_t>(recvbuf);
    MPI_Request real;
    PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype, comm, &real);
    return collective(c, real, true, nullptr, v.v);
}

int MPI_Alltoallv(const void* sendbuf, const int sendcounts[], const int sdispls[], MPI_Datatype sendtype,
                  void* recvbuf, const int recvcounts[], const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    const int n = ranks_of(comm);
    // MPI_IN_PLACE (MPI 4.1 section 6.8): each block sent is the one
    // received from that rank, at its place in the receive buffer.
    const bool in_place = sendbuf == MPI_IN_PLACE;
    const int* scounts = in_place ? recvcounts : sendcounts;
    const int* sdisps = in_place ? rdispls : sdispls;
    if (!timeable(comm, "MPI_Alltoallv", {in_place ? recvtype : sendtype, recvtype}, ctx))
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    if (overlap(scounts, sdisps, n)) {
        untimed("MPI_Alltoallv with send blocks that overlap");
        return PMPI_Alltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm);
    }
    Values v(n);
    v.set(0, scounts, sdisps, 0, size_of(in_place ? recvtype : sendtype));
    v.set(2, recvcounts, rdispls, 0, size_of(recvtype));
    Call c = call(Op::Alltoallv, ctx);
    c.va = reinterpret_cast<std::uint64_t>(in_place ? recvbuf : sendbuf);
    c.va2 = reinterpret_cast<std::uint64_t>(recvbuf);
    MPI_Request real;
    PMPI_Ialltoallv(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls, recvtype, comm, &real);
    return collective(c, real, true, nullptr, v.v);
}

}   // extern "C"
