// The collectives library's choice of algorithm (coll::resolve): auto as
// MPICH chooses by size, and the refusals of algorithms that do not do a
// collective. The algorithms themselves run in the whole system:
// tests/system/collective_test.cpp.
#include <catch2/catch.hpp>

#include <algorithm>
#include <complex>
#include <cstddef>
#include <map>
#include <set>
#include <type_traits>
#include <vector>

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

// Reductions (reduction.hpp): each operation on each datatype MPI defines
// it on, against a direct computation of MPI's definition; the rules of
// which operation takes which type. (The algorithms combine on element
// boundaries: tests/system/collective_test.cpp runs each with several.)
namespace {

// MPI's definition of each operation on a pair of values, all at once
// (integers wrap as two's complement).
template <class T>
T direct(ReduceOp op, T a, T b) {
    using W = unsigned long long;
    const T low = a < b ? a : b, high = a < b ? b : a;
    std::map<ReduceOp, T> all{{ReduceOp::Min, low}, {ReduceOp::Max, high}};
    if constexpr (std::is_integral_v<T>) {
        all.insert({{ReduceOp::Sum, static_cast<T>(W(a) + W(b))},
                    {ReduceOp::Prod, static_cast<T>(W(a) * W(b))},
                    {ReduceOp::Land, static_cast<T>(a && b)},
                    {ReduceOp::Lor, static_cast<T>(a || b)},
                    {ReduceOp::Lxor, static_cast<T>(!a != !b)},
                    {ReduceOp::Band, static_cast<T>(a & b)},
                    {ReduceOp::Bor, static_cast<T>(a | b)},
                    {ReduceOp::Bxor, static_cast<T>(a ^ b)}});
    } else {
        all.insert({{ReduceOp::Sum, a + b}, {ReduceOp::Prod, a * b}});
    }
    return all.at(op);
}

template <class T>
void check_basic(Datatype t, const std::vector<T>& x, const std::vector<T>& y) {
    REQUIRE(size_of(t) == sizeof(T));
    for (const std::string& name : reduce_op_names()) {
        const Reduction red{reduce_op_of(name), t};
        std::string why;
        if (!red.valid(why)) continue;
        INFO(name << " on " << name_of(t));
        std::vector<T> inout = y;
        red.apply(reinterpret_cast<unsigned char*>(inout.data()), reinterpret_cast<const unsigned char*>(x.data()),
                  x.size());
        for (std::size_t i = 0; i < x.size(); ++i) CHECK(inout[i] == direct(red.op, x[i], y[i]));
    }
}

template <class V, class I = int>
struct Loc {
    V value;
    I index;
};

template <class V, class I = int>
void check_pair(Datatype t) {
    using L = Loc<V, I>;
    REQUIRE(size_of(t) == sizeof(L));
    REQUIRE(index_offset(t) == offsetof(L, index));
    // Smaller, equal (both index orders), larger values.
    const std::vector<L> x{{V(1), I(7)}, {V(5), I(2)}, {V(5), I(9)}, {V(-3), I(4)}};
    const std::vector<L> y{{V(2), I(3)}, {V(5), I(6)}, {V(5), I(1)}, {V(-8), I(0)}};
    for (const ReduceOp op : {ReduceOp::Minloc, ReduceOp::Maxloc}) {
        std::vector<L> inout = y;
        Reduction{op, t}.apply(reinterpret_cast<unsigned char*>(inout.data()),
                               reinterpret_cast<const unsigned char*>(x.data()), x.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
            INFO(name_of(op) << " on " << name_of(t) << ", element " << i);
            const bool min = op == ReduceOp::Minloc;
            const V want = min ? std::min(x[i].value, y[i].value) : std::max(x[i].value, y[i].value);
            const I index = x[i].value == y[i].value ? std::min(x[i].index, y[i].index)
                            : (x[i].value == want)   ? x[i].index
                                                     : y[i].index;
            CHECK(inout[i].value == want);
            CHECK(inout[i].index == index);
        }
    }
}

// Sum and prod on a complex type, each element against std::complex's
// (a long double's padding, never written, compared as the value's).
template <class V>
void check_complex(Datatype t) {
    using Z = std::complex<V>;
    REQUIRE(size_of(t) == sizeof(Z));
    REQUIRE(is_complex(t));
    const std::vector<Z> x{{1, 2}, {-0.5, 3}, {0, 0}}, y{{2, -1}, {4, 0.25}, {7, -7}};
    for (const ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod}) {
        std::vector<Z> inout = y;
        Reduction{op, t}.apply(reinterpret_cast<unsigned char*>(inout.data()),
                               reinterpret_cast<const unsigned char*>(x.data()), x.size());
        for (std::size_t i = 0; i < x.size(); ++i) {
            INFO(name_of(op) << " on " << name_of(t) << ", element " << i);
            CHECK(inout[i] == (op == ReduceOp::Sum ? x[i] + y[i] : x[i] * y[i]));
        }
    }
}

}   // namespace

TEST_CASE("collectives: every reduction operation on each datatype, as MPI defines it", "[collectives]") {
    check_basic<std::uint64_t>(Datatype::Uint64, {1, ~0ull, 6, 0}, {2, 3, 0, 0});
    check_basic<std::int8_t>(Datatype::Int8, {100, -128, 0, 7}, {100, -1, 5, 0});
    check_basic<std::int16_t>(Datatype::Int16, {30000, -2, 0, 3}, {30000, 9, 0, -5});
    check_basic<std::int32_t>(Datatype::Int32, {2000000000, -7, 0, 12}, {2000000000, 3, 4, 0});
    check_basic<std::int64_t>(Datatype::Int64, {-1, 1ll << 62, 0, 9}, {-1, 4, 0, -9});
    check_basic<std::uint8_t>(Datatype::Uint8, {255, 16, 0, 3}, {2, 17, 0, 0});
    check_basic<std::uint16_t>(Datatype::Uint16, {65535, 16, 0, 3}, {65535, 18, 1, 0});
    check_basic<std::uint32_t>(Datatype::Uint32, {4000000000u, 5, 0, 1}, {3, 6, 0, 8});
    check_basic<float>(Datatype::Float, {1.5f, -2.f, 0.f, 1e30f}, {0.25f, 3.f, -1.f, 1e30f});
    check_basic<double>(Datatype::Double, {1.5, -2., 0., 1e300}, {0.25, 3., -1., -1e300});
    check_basic<std::uint8_t>(Datatype::Byte, {0xf0, 0x0f, 0, 0xff}, {0x3c, 0x0f, 0xff, 0});
    check_pair<int>(Datatype::TwoInt);
    check_pair<float>(Datatype::FloatInt);
    check_pair<double>(Datatype::DoubleInt);
    check_pair<long>(Datatype::LongInt);
    check_pair<short>(Datatype::ShortInt);
    check_pair<long double>(Datatype::LongDoubleInt);
    check_pair<float, float>(Datatype::TwoReal);
    check_pair<double, double>(Datatype::TwoDoublePrecision);
    CHECK(index_type(Datatype::TwoReal) == Datatype::Float);
    CHECK(index_type(Datatype::LongDoubleInt) == Datatype::Int32);
    check_basic<long double>(Datatype::LongDouble, {1.5L, -2.L, 0.L, 1e300L}, {0.25L, 3.L, -1.L, 1e300L});
    check_basic<std::uint8_t>(Datatype::Bool, {1, 0, 1, 0}, {1, 1, 0, 0});
    check_complex<float>(Datatype::FloatComplex);
    check_complex<double>(Datatype::DoubleComplex);
    check_complex<long double>(Datatype::LongDoubleComplex);
    // (the help's sizes on x86-64)
    CHECK(std::vector<std::uint64_t>{
              size_of(Datatype::LongDouble), size_of(Datatype::FloatComplex), size_of(Datatype::DoubleComplex),
              size_of(Datatype::LongDoubleComplex), size_of(Datatype::LongDoubleInt), size_of(Datatype::TwoReal),
              size_of(Datatype::TwoDoublePrecision)} == std::vector<std::uint64_t>{16, 8, 16, 32, 32, 8, 16});
    CHECK(size_of(Datatype::DoubleInt) == 16);   // the collective.datatype help's sizes
    CHECK(size_of(Datatype::LongInt) == 16);
    CHECK(size_of(Datatype::TwoInt) == 8);
}

TEST_CASE("collectives: an operation on a datatype MPI does not define it on is refused", "[collectives]") {
    auto refused = [](ReduceOp op, Datatype t) {
        std::string why;
        CHECK_FALSE(Reduction{op, t}.valid(why));
        return why;
    };
    std::string why;
    CHECK_THAT(refused(ReduceOp::Bxor, Datatype::Double),
               Catch::Contains("MPI defines bxor on integers and bytes, not on double"));
    CHECK_THAT(refused(ReduceOp::Land, Datatype::Float), Catch::Contains("not on float"));
    CHECK_THAT(refused(ReduceOp::Sum, Datatype::Byte), Catch::Contains("not on byte"));
    CHECK_THAT(refused(ReduceOp::Max, Datatype::DoubleInt), Catch::Contains("not on double-int"));
    CHECK_THAT(refused(ReduceOp::Minloc, Datatype::Int32), Catch::Contains("the pair types"));
    CHECK_THAT(refused(ReduceOp::Max, Datatype::DoubleComplex), Catch::Contains("not on double-complex"));
    CHECK_THAT(refused(ReduceOp::Sum, Datatype::Bool), Catch::Contains("not on bool"));
    CHECK(Reduction{ReduceOp::Prod, Datatype::FloatComplex}.valid(why));
    CHECK(Reduction{ReduceOp::Lxor, Datatype::Bool}.valid(why));
    CHECK(Reduction{ReduceOp::Minloc, Datatype::TwoReal}.valid(why));
    CHECK(Reduction{ReduceOp::Bor, Datatype::Byte}.valid(why));
    CHECK(Reduction{ReduceOp::Maxloc, Datatype::ShortInt}.valid(why));
    CHECK(Reduction{}.valid(why));   // the default: sum on uint64
    for (const std::string& n : datatype_names()) CHECK(name_of(datatype_of(n)) == n);
    for (const std::string& n : reduce_op_names()) CHECK(name_of(reduce_op_of(n)) == n);
}
