// The collectives library's choice of algorithm (coll::resolve): auto as
// MPICH chooses by size, and the refusals of algorithms that do not do a
// collective. The algorithms themselves run in the whole system:
// tests/system/collective_test.cpp.
#include <catch2/catch.hpp>

#include <set>

#include "library/collectives/communicator.hpp"

using namespace vrdmasim::coll;

namespace {
Algorithm chosen(Op op, Algorithm a, unsigned ranks, std::uint64_t bytes) {
    Algorithm c = Algorithm::Auto;
    std::string why;
    REQUIRE(resolve(op, a, ranks, bytes, c, why));
    return c;
}
std::string refused(Op op, Algorithm a, unsigned ranks, std::uint64_t bytes) {
    Algorithm c = Algorithm::Auto;
    std::string why;
    CHECK_FALSE(resolve(op, a, ranks, bytes, c, why));
    return why;
}
}   // namespace

TEST_CASE("collectives: auto chooses as MPICH does by size", "[collectives]") {
    CHECK(chosen(Op::Barrier, Algorithm::Auto, 5, 0) == Algorithm::Dissemination);
    CHECK(chosen(Op::Bcast, Algorithm::Auto, 5, 1 << 20) == Algorithm::Binomial);
    CHECK(chosen(Op::Reduce, Algorithm::Auto, 5, 8) == Algorithm::Binomial);
    CHECK(chosen(Op::Allreduce, Algorithm::Auto, 8, 2048) == Algorithm::RecursiveDoubling);
    CHECK(chosen(Op::Allreduce, Algorithm::Auto, 8, 2056) == Algorithm::Rabenseifner);
    CHECK(chosen(Op::Allgather, Algorithm::Auto, 8, 10240) == Algorithm::RecursiveDoubling);   // 80 KiB in all
    CHECK(chosen(Op::Allgather, Algorithm::Auto, 8, 10248) == Algorithm::Ring);
    CHECK(chosen(Op::Allgather, Algorithm::Auto, 6, 8) == Algorithm::Ring);   // not a power of two
    CHECK(chosen(Op::Alltoall, Algorithm::Auto, 6, 256) == Algorithm::Bruck);
    CHECK(chosen(Op::Alltoall, Algorithm::Auto, 6, 264) == Algorithm::Pairwise);
    // The v-variants: MPICH's and Open MPI's one algorithm each.
    CHECK(chosen(Op::Gatherv, Algorithm::Auto, 5, 8) == Algorithm::Linear);
    CHECK(chosen(Op::Scatterv, Algorithm::Auto, 5, 1 << 20) == Algorithm::Linear);
    CHECK(chosen(Op::Allgatherv, Algorithm::Auto, 8, 8) == Algorithm::Ring);
    CHECK(chosen(Op::Alltoallv, Algorithm::Auto, 6, 8) == Algorithm::Pairwise);
    // Reduce-scatter by a rank's whole vector, as MPICH for a commutative
    // operation (MPIR_CVAR_REDUCE_SCATTER_COMMUTATIVE_LONG_MSG_SIZE).
    CHECK(chosen(Op::ReduceScatter, Algorithm::Auto, 6, 524280) == Algorithm::RecursiveHalving);
    CHECK(chosen(Op::ReduceScatterBlock, Algorithm::Auto, 6, 524288) == Algorithm::Pairwise);
    CHECK(chosen(Op::ReduceScatter, Algorithm::Pairwise, 6, 8) == Algorithm::Pairwise);
}

TEST_CASE("collectives: an algorithm is refused for a collective it does not do", "[collectives]") {
    CHECK(chosen(Op::Allreduce, Algorithm::Ring, 3, 8) == Algorithm::Ring);
    CHECK(chosen(Op::Allreduce, Algorithm::Rabenseifner, 6, 64) == Algorithm::Rabenseifner);
    CHECK_THAT(refused(Op::Bcast, Algorithm::Ring, 4, 8), Catch::Contains("ring is not an algorithm of bcast"));
    CHECK_THAT(refused(Op::Alltoall, Algorithm::Rabenseifner, 4, 8), Catch::Contains("pairwise bruck"));
    CHECK_THAT(refused(Op::Allgather, Algorithm::RecursiveDoubling, 6, 8), Catch::Contains("power-of-two"));
    CHECK(chosen(Op::Allgather, Algorithm::RecursiveDoubling, 8, 8) == Algorithm::RecursiveDoubling);
    CHECK_THAT(refused(Op::Gatherv, Algorithm::Binomial, 4, 8), Catch::Contains("(it has: linear)"));
    CHECK_THAT(refused(Op::Alltoallv, Algorithm::Bruck, 4, 8), Catch::Contains("(it has: pairwise)"));
    CHECK_THAT(refused(Op::Allgatherv, Algorithm::RecursiveDoubling, 8, 8), Catch::Contains("(it has: ring)"));
    for (const char* name : {"auto", "dissemination", "binomial", "recursive-doubling", "ring", "rabenseifner",
                             "pairwise", "bruck", "linear", "recursive-halving"})
        CHECK(std::string(name_of(algorithm_of(name))) == name);
    for (const char* name :
         {"barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall", "scan", "exscan", "gather", "scatter",
          "gatherv", "scatterv", "allgatherv", "alltoallv", "reduce_scatter", "reduce_scatter_block"})
        CHECK(std::string(name_of(op_of(name))) == name);
}

TEST_CASE("collectives: the v-variants' partners and blocks", "[collectives]") {
    // Linear from any root and pairwise: every other rank; the ring: the
    // two neighbours.
    CHECK(Communicator::partners(Op::Gatherv, Algorithm::Linear, 5, 2) == std::set<unsigned>{0, 1, 3, 4});
    CHECK(Communicator::partners(Op::Scatterv, Algorithm::Auto, 3, 0) == std::set<unsigned>{1, 2});
    CHECK(Communicator::partners(Op::Alltoallv, Algorithm::Pairwise, 4, 3) == std::set<unsigned>{0, 1, 2});
    CHECK(Communicator::partners(Op::Allgatherv, Algorithm::Ring, 6, 0) == std::set<unsigned>{1, 5});
    CHECK(Communicator::scratch_bytes(Op::Alltoallv, 8, 1 << 20) == 0);
    // A buffer's blocks span to the largest end of a non-empty one.
    CHECK(Blocks{{4, 0, 8}, {8, 100, 0}}.span() == 12);
    CHECK(Blocks{{0, 0}, {5, 9}}.span() == 0);
    CHECK(Blocks{{3, 5}, {10, 0}}.span() == 13);
    // Recursive halving: the fold's neighbour (an even rank of the first
    // 2 rem sits out), then rank XOR 2^k among the pof2 that remain.
    CHECK(Communicator::partners(Op::ReduceScatter, Algorithm::RecursiveHalving, 12, 0) == std::set<unsigned>{1});
    CHECK(Communicator::partners(Op::ReduceScatter, Algorithm::RecursiveHalving, 4, 1) == std::set<unsigned>{0, 3});
    CHECK(Communicator::partners(Op::ReduceScatterBlock, Algorithm::Pairwise, 3, 1) == std::set<unsigned>{0, 2});
    CHECK(is_reduction(Op::ReduceScatterBlock));
    CHECK(is_vector(Op::Alltoallv));
    CHECK_FALSE(is_vector(Op::Alltoall));
}
