// MPI_Reduce_scatter and MPI_Reduce_scatter_block timed
// (workloads/mpi/README.md "What is timed"): the blocks of the rank's
// vector follow the Call as a v-variant's do (protocol.hpp), in bytes, and
// its MPI_Op and datatype (reduction.cpp); the real collective is posted
// non-blocking before the simulation is asked, and waited for (every
// rank's result depends on every other's); MPI_IN_PLACE's vector is the
// receive buffer. Untimed, with the reason: a datatype whose extent is not
// its size, and an operation or datatype the collectives library has not
// (reduction.cpp).
#include <mpi.h>

#include <string>
#include <vector>

#include "workloads/mpi/preload/calls.hpp"
#include "workloads/mpi/preload/channel.hpp"
#include "workloads/mpi/preload/libraries.hpp"

using namespace vrdmasim;
using namespace vrdmasim::mpipreload;
using mpiwire::Call;
using mpiwire::Op;

namespace {

// Whether reduce-scatter `name` on `comm` is timed (its context, operation
// and datatype into `c`); else reported untimed (with why) and false.
bool timeable(MPI_Comm comm, const char* name, const void* sendbuf, MPI_Datatype type, MPI_Op op, Call& c) {
    std::uint32_t ctx = 0;
    if (!known(comm, name, ctx)) return false;
    c.comm = ctx;
    std::uint64_t size = 0;
    if (!dense(type, size)) {
        untimed((std::string(name) + " with a datatype whose extent is not its size").c_str());
        return false;
    }
    return reduction(c, name, op, type, 0, sendbuf);
}

// The Call's values: the vector's blocks (lengths in bytes of `counts`
// elements of `type`, one after the other), then this rank's result; the
// vector's bytes into c.bytes, its elements into c.elements.
std::vector<std::uint64_t> blocks(Call& c, MPI_Comm comm, const int counts[], int count, MPI_Datatype type) {
    int rank = 0, n = 0, size = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &n);
    PMPI_Type_size(type, &size);
    const std::size_t ranks = static_cast<std::size_t>(n);
    std::vector<std::uint64_t> v(4 * ranks, 0);
    std::uint64_t at = 0, elements = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
        const std::uint64_t k = count_of(counts ? counts[r] : count);
        v[r] = k * static_cast<std::uint64_t>(size);
        v[ranks + r] = at;
        at += v[r];
        elements += k;
    }
    v[2 * ranks + static_cast<std::size_t>(rank)] = v[static_cast<std::size_t>(rank)];
    c.bytes = at;
    c.elements = elements;
    return v;
}

// The call timed: the blocks of `counts` (or `count` each) after its Call,
// the real collective posted by `post` before the simulation is asked.
template <class Post>
int timed(Call c, MPI_Comm comm, const void* sendbuf, void* recvbuf, const int counts[], int count, MPI_Datatype type,
          Post post) {
    const std::vector<std::uint64_t> v = blocks(c, comm, counts, count, type);
    // MPI_IN_PLACE: the vector is the receive buffer's (MPI 4.1 section
    // 6.10), the result its first block; the simulation reads the input
    // from a buffer of its own then, as an in-place allreduce's.
    c.va = reinterpret_cast<std::uint64_t>(sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf);
    c.va2 = reinterpret_cast<std::uint64_t>(recvbuf);
    MPI_Request real;
    post(&real);
    return collective(c, real, true, nullptr, v);
}

}   // namespace

extern "C" {

int MPI_Reduce_scatter(const void* sendbuf, void* recvbuf, const int recvcounts[], MPI_Datatype type, MPI_Op op,
                       MPI_Comm comm) {
    const InLibrary lib;
    Call c = call(Op::ReduceScatter);
    if (!timeable(comm, "MPI_Reduce_scatter", sendbuf, type, op, c))
        return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
    return timed(c, comm, sendbuf, recvbuf, recvcounts, 0, type, [&](MPI_Request* real) {
        return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, real);
    });
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
    const InLibrary lib;
    Call c = call(Op::ReduceScatterBlock);
    if (!timeable(comm, "MPI_Reduce_scatter_block", sendbuf, type, op, c))
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
    return timed(c, comm, sendbuf, recvbuf, nullptr, recvcount, type, [&](MPI_Request* real) {
        return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, real);
    });
}

}   // extern "C"
