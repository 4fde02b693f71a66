// MPI_Reduce_scatter and MPI_Reduce_scatter_block timed
// (workloads/mpi/README.md "What is timed"): the blocks of the rank's
// vector follow the Call as a v-variant's do (protocol.hpp), each block's
// bytes rounded up to whole 64-bit words, as the simulation times every
// reduction (library/collectives sums 64-bit words); the real collective
// is posted non-blocking before the simulation is asked, and waited for
// (every rank's result depends on every other's). Untimed, with the
// reason: MPI_IN_PLACE, and a datatype whose extent is not its size.
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

// Whether reduce-scatter `name` on `comm` is timed; else reported untimed
// (with why) and false.
bool timeable(MPI_Comm comm, const char* name, const void* sendbuf, MPI_Datatype type, std::uint32_t& ctx) {
    if (!known(comm, name, ctx)) return false;
    if (sendbuf == MPI_IN_PLACE) {
        untimed((std::string(name) + " with MPI_IN_PLACE").c_str());
        return false;
    }
    std::uint64_t size = 0;
    if (!dense(type, size)) {
        untimed((std::string(name) + " with a datatype whose extent is not its size").c_str());
        return false;
    }
    return true;
}

// The Call's values: the vector's blocks (lengths of `counts` elements of
// `type` rounded up to whole words, one after the other), then this rank's
// result; the vector's bytes into c.bytes.
std::vector<std::uint64_t> blocks(Call& c, MPI_Comm comm, const int counts[], int count, MPI_Datatype type) {
    int rank = 0, n = 0, size = 0;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &n);
    PMPI_Type_size(type, &size);
    const std::size_t ranks = static_cast<std::size_t>(n);
    std::vector<std::uint64_t> v(4 * ranks, 0);
    std::uint64_t at = 0;
    for (std::size_t r = 0; r < ranks; ++r) {
        const int k = counts ? counts[r] : count;
        const std::uint64_t bytes = static_cast<std::uint64_t>(k > 0 ? k : 0) * static_cast<std::uint64_t>(size);
        v[r] = (bytes + 7) / 8 * 8;
        v[ranks + r] = at;
        at += v[r];
    }
    v[2 * ranks + static_cast<std::size_t>(rank)] = v[static_cast<std::size_t>(rank)];
    c.bytes = at;
    return v;
}

// The call timed: the blocks of `counts` (or `count` each) after its Call,
// the real collective posted by `post` before the simulation is asked.
template <class Post>
int timed(Op op, std::uint32_t ctx, MPI_Comm comm, const void* sendbuf, void* recvbuf, const int counts[], int count,
          MPI_Datatype type, Post post) {
    Call c = call(op, ctx);
    const std::vector<std::uint64_t> v = blocks(c, comm, counts, count, type);
    c.va = reinterpret_cast<std::uint64_t>(sendbuf);
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
    std::uint32_t ctx = 0;
    if (!timeable(comm, "MPI_Reduce_scatter", sendbuf, type, ctx))
        return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm);
    return timed(Op::ReduceScatter, ctx, comm, sendbuf, recvbuf, recvcounts, 0, type, [&](MPI_Request* real) {
        return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, type, op, comm, real);
    });
}

int MPI_Reduce_scatter_block(const void* sendbuf, void* recvbuf, int recvcount, MPI_Datatype type, MPI_Op op,
                             MPI_Comm comm) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    if (!timeable(comm, "MPI_Reduce_scatter_block", sendbuf, type, ctx))
        return PMPI_Reduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm);
    return timed(Op::ReduceScatterBlock, ctx, comm, sendbuf, recvbuf, nullptr, recvcount, type, [&](MPI_Request* real) {
        return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, real);
    });
}

}   // extern "C"
