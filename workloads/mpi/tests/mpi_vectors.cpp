// The v-variants real programs call (workloads/mpi/README.md "What is
// timed"), checking their own data: MPI_Gatherv and MPI_Scatterv from a
// root other than 0, MPI_Allgatherv and MPI_Alltoallv, with uneven counts
// (some empty) and displacements in reverse rank order with gaps, at a
// small and at a rendezvous size, on MPI_COMM_WORLD and on a split
// communicator; and MPI_Reduce_scatter (uneven counts, some empty) and
// MPI_Reduce_scatter_block; and with MPI_IN_PLACE, MPI_Gather and
// MPI_Scatter at their root, MPI_Gatherv and MPI_Scatterv at theirs,
// MPI_Allgatherv at every rank. Prints "vectors: ok".
// Mode `types`: reductions of the datatypes beyond the basic ones (README
// "What is timed"): the complex types (C's, C++'s) by sum and prod,
// MPI_LONG_DOUBLE, MPI_LONG_DOUBLE_INT, MPI_C_BOOL, MPI_AINT, and the
// reduce-scatters with MPI_IN_PLACE, each result checked against the one
// computed here (12 calls a rank); `types alltoallv`: MPI_Alltoallv and
// MPI_Ialltoallv with MPI_IN_PLACE, then MPI_Allgather and MPI_Alltoall
// with it (7 calls a rank); `types derived`: MPI_SUM on a derived
// datatype, which MPI does not define (untimed); `types quad`: what Open
// MPI 4.1.4 does with the types the simulation leaves untimed (README "What
// is timed"): MPI_INTEGER16 not built, the sizes of MPI_REAL16,
// MPI_COMPLEX32, MPI_2COMPLEX and MPI_2DOUBLE_COMPLEX, a sum of MPI_REAL16
// and of MPI_COMPLEX32 (printed: computed wrong), MPI_MINLOC and MPI_MAXLOC
// on the pair types refused (4 untimed calls a rank).
// usage: mpi_vectors [elements] | mpi_vectors types [alltoallv | derived | quad]
#include <mpi.h>

#include <algorithm>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static int failures = 0;

static void check(bool ok, const char* what, int rank, int at) {
    if (!ok && failures++ < 10) std::fprintf(stderr, "rank %d: %s: element %d wrong\n", rank, what, at);
}

// Rank f's count for rank t: 0 to 3 halves of `base` (some empty).
static int count(int base, int f, int t) { return base * ((f + 2 * t) % 4) / 2; }

// The value of element i of rank f's block for rank t.
static int value(int f, int t, int i) { return f * 1000003 + t * 10007 + i; }

// Blocks of `counts` laid out in reverse rank order, 3 elements apart;
// the elements spanned into `span`.
static std::vector<int> reversed(const std::vector<int>& counts, int& span) {
    std::vector<int> displs(counts.size());
    int at = 0;
    for (std::size_t r = counts.size(); r-- > 0;) {
        displs[r] = at;
        at += counts[r] + 3;
    }
    span = at;
    return displs;
}

static void gatherv(MPI_Comm comm, int base, int root) {
    int rank = 0, n = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    std::vector<int> mine(count(base, rank, rank));
    for (std::size_t i = 0; i < mine.size(); ++i) mine[i] = value(rank, rank, static_cast<int>(i));
    std::vector<int> counts(n);
    for (int r = 0; r < n; ++r) counts[r] = count(base, r, r);
    int span = 0;
    const std::vector<int> displs = reversed(counts, span);
    std::vector<int> all(static_cast<std::size_t>(span) + 1, -1);
    MPI_Gatherv(mine.data(), static_cast<int>(mine.size()), MPI_INT, all.data(), counts.data(), displs.data(), MPI_INT,
                root, comm);
    if (rank == root)
        for (int r = 0; r < n; ++r)
            for (int i = 0; i < counts[r]; ++i) check(all[displs[r] + i] == value(r, r, i), "MPI_Gatherv", rank, i);
    // MPI_Allgatherv: the same blocks at every rank.
    std::fill(all.begin(), all.end(), -1);
    MPI_Allgatherv(mine.data(), static_cast<int>(mine.size()), MPI_INT, all.data(), counts.data(), displs.data(),
                   MPI_INT, comm);
    for (int r = 0; r < n; ++r)
        for (int i = 0; i < counts[r]; ++i) check(all[displs[r] + i] == value(r, r, i), "MPI_Allgatherv", rank, i);
}

static void scatterv(MPI_Comm comm, int base, int root) {
    int rank = 0, n = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    std::vector<int> counts(n);
    for (int r = 0; r < n; ++r) counts[r] = count(base, root, r);
    int span = 0;
    const std::vector<int> displs = reversed(counts, span);
    std::vector<int> all(static_cast<std::size_t>(span) + 1, -1);
    if (rank == root)
        for (int r = 0; r < n; ++r)
            for (int i = 0; i < counts[r]; ++i) all[displs[r] + i] = value(root, r, i);
    std::vector<int> mine(counts[rank] + 1, -1);
    MPI_Scatterv(all.data(), counts.data(), displs.data(), MPI_INT, mine.data(), counts[rank], MPI_INT, root, comm);
    for (int i = 0; i < counts[rank]; ++i) check(mine[i] == value(root, rank, i), "MPI_Scatterv", rank, i);
    check(mine[counts[rank]] == -1, "MPI_Scatterv (past the block)", rank, counts[rank]);
}

static void alltoallv(MPI_Comm comm, int base) {
    int rank = 0, n = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    std::vector<int> scounts(n), rcounts(n);
    for (int r = 0; r < n; ++r) scounts[r] = count(base, rank, r), rcounts[r] = count(base, r, rank);
    int sspan = 0, rspan = 0;
    const std::vector<int> sdispls = reversed(scounts, sspan), rdispls = reversed(rcounts, rspan);
    std::vector<int> out(static_cast<std::size_t>(sspan) + 1, -1), in(static_cast<std::size_t>(rspan) + 1, -1);
    for (int r = 0; r < n; ++r)
        for (int i = 0; i < scounts[r]; ++i) out[sdispls[r] + i] = value(rank, r, i);
    MPI_Alltoallv(out.data(), scounts.data(), sdispls.data(), MPI_INT, in.data(), rcounts.data(), rdispls.data(),
                  MPI_INT, comm);
    for (int r = 0; r < n; ++r)
        for (int i = 0; i < rcounts[r]; ++i) check(in[rdispls[r] + i] == value(r, rank, i), "MPI_Alltoallv", rank, i);
}

// Every rank's vector of `counts` blocks (rank f's element i: value(f, 0,
// i)); block r's sums at rank r. Then equal blocks of `base`.
static void reduce_scatter(MPI_Comm comm, int base) {
    int rank = 0, n = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    std::vector<int> counts(n), first(n, 0);
    for (int r = 0; r < n; ++r) {
        counts[r] = count(base, r, r);
        if (r) first[r] = first[r - 1] + counts[r - 1];
    }
    for (const bool block : {false, true}) {
        if (block) {
            for (int r = 0; r < n; ++r) counts[r] = base, first[r] = r * base;
        }
        const int total = first[n - 1] + counts[n - 1];
        std::vector<int> v(static_cast<std::size_t>(total) + 1), got(static_cast<std::size_t>(counts[rank]) + 1, -1);
        for (int i = 0; i < total; ++i) v[i] = value(rank, 0, i);
        if (block) MPI_Reduce_scatter_block(v.data(), got.data(), base, MPI_INT, MPI_SUM, comm);
        else MPI_Reduce_scatter(v.data(), got.data(), counts.data(), MPI_INT, MPI_SUM, comm);
        for (int i = 0; i < counts[rank]; ++i) {
            int want = 0;
            for (int f = 0; f < n; ++f) want += value(f, 0, first[rank] + i);
            check(got[i] == want, block ? "MPI_Reduce_scatter_block" : "MPI_Reduce_scatter", rank, i);
        }
        check(got[counts[rank]] == -1, "MPI_Reduce_scatter (past the block)", rank, counts[rank]);
    }
}

// MPI_IN_PLACE: the root's own block (every rank's, allgatherv) already in
// its receive buffer, or left in its send buffer.
static void in_place(MPI_Comm comm, int base, int root) {
    int rank = 0, n = 0;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &n);
    // MPI_Gather, MPI_Scatter: blocks of `base`.
    std::vector<int> all(static_cast<std::size_t>(n) * base, -1), mine(base);
    for (int i = 0; i < base; ++i) mine[i] = value(rank, rank, i);
    if (rank == root) std::copy(mine.begin(), mine.end(), all.begin() + static_cast<std::ptrdiff_t>(root) * base);
    MPI_Gather(rank == root ? MPI_IN_PLACE : mine.data(), base, MPI_INT, all.data(), base, MPI_INT, root, comm);
    if (rank == root)
        for (int r = 0; r < n; ++r)
            for (int i = 0; i < base; ++i) check(all[r * base + i] == value(r, r, i), "MPI_Gather in place", rank, i);
    for (int r = 0; r < n; ++r)
        for (int i = 0; rank == root && i < base; ++i) all[r * base + i] = value(root, r, i);
    std::fill(mine.begin(), mine.end(), -1);
    MPI_Scatter(all.data(), base, MPI_INT, rank == root ? MPI_IN_PLACE : mine.data(), base, MPI_INT, root, comm);
    for (int i = 0; i < base; ++i)
        check((rank == root ? all[root * base + i] : mine[i]) == value(root, rank, i), "MPI_Scatter in place", rank, i);
    // MPI_Gatherv, MPI_Allgatherv, MPI_Scatterv: uneven blocks, reversed.
    std::vector<int> counts(n);
    for (int r = 0; r < n; ++r) counts[r] = count(base, r, r);
    int span = 0;
    const std::vector<int> displs = reversed(counts, span);
    for (const bool every : {false, true}) {
        std::vector<int> v(static_cast<std::size_t>(span) + 1, -1), own(counts[rank]);
        for (int i = 0; i < counts[rank]; ++i) own[i] = value(rank, rank, i);
        if (rank == root || every) std::copy(own.begin(), own.end(), v.begin() + displs[rank]);
        if (every)
            MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, v.data(), counts.data(), displs.data(), MPI_INT, comm);
        else
            MPI_Gatherv(rank == root ? MPI_IN_PLACE : own.data(), counts[rank], MPI_INT, v.data(), counts.data(),
                        displs.data(), MPI_INT, root, comm);
        for (int r = 0; (rank == root || every) && r < n; ++r)
            for (int i = 0; i < counts[r]; ++i)
                check(v[displs[r] + i] == value(r, r, i), every ? "MPI_Allgatherv in place" : "MPI_Gatherv in place",
                      rank, i);
    }
    std::vector<int> v(static_cast<std::size_t>(span) + 1, -1), own(counts[rank] + 1, -1);
    for (int r = 0; rank == root && r < n; ++r)
        for (int i = 0; i < counts[r]; ++i) v[displs[r] + i] = value(root, r, i);
    MPI_Scatterv(v.data(), counts.data(), displs.data(), MPI_INT, rank == root ? MPI_IN_PLACE : own.data(),
                 counts[rank], MPI_INT, root, comm);
    for (int i = 0; i < counts[rank]; ++i)
        check((rank == root ? v[displs[root] + i] : own[i]) == value(root, rank, i), "MPI_Scatterv in place", rank, i);
}

// The complex types by sum and prod (small integers' products: exact).
static void complex_types(MPI_Comm comm, int rank, int n) {
    using Z = std::complex<double>;
    const int k = 5;
    std::vector<Z> z(k), sum(k), want(k, 0.0);
    for (int i = 0; i < k; ++i) z[i] = Z(rank + 1 + i, 2 * rank - i);
    for (int r = 0; r < n; ++r)
        for (int i = 0; i < k; ++i) want[i] += Z(r + 1 + i, 2 * r - i);
    MPI_Allreduce(z.data(), sum.data(), k, MPI_C_DOUBLE_COMPLEX, MPI_SUM, comm);
    for (int i = 0; i < k; ++i) check(sum[i] == want[i], "MPI_C_DOUBLE_COMPLEX sum", rank, i);
    MPI_Allreduce(z.data(), sum.data(), k, MPI_CXX_DOUBLE_COMPLEX, MPI_SUM, comm);
    for (int i = 0; i < k; ++i) check(sum[i] == want[i], "MPI_CXX_DOUBLE_COMPLEX sum", rank, i);
    std::vector<std::complex<float>> f(k), prod(k), fwant(k, 1.0f);
    for (int i = 0; i < k; ++i) f[i] = {static_cast<float>(rank % 3 - 1), static_cast<float>(i % 2 + 1)};
    for (int r = 0; r < n; ++r)
        for (int i = 0; i < k; ++i) fwant[i] *= std::complex<float>(static_cast<float>(r % 3 - 1), i % 2 + 1.0f);
    MPI_Allreduce(f.data(), prod.data(), k, MPI_C_FLOAT_COMPLEX, MPI_PROD, comm);
    for (int i = 0; i < k; ++i) check(prod[i] == fwant[i], "MPI_C_FLOAT_COMPLEX prod", rank, i);
    std::vector<std::complex<long double>> l(k), lsum(k);
    for (int i = 0; i < k; ++i) l[i] = {static_cast<long double>(rank) / 4, static_cast<long double>(-i)};
    MPI_Reduce(l.data(), lsum.data(), k, MPI_C_LONG_DOUBLE_COMPLEX, MPI_SUM, 0, comm);
    for (int i = 0; rank == 0 && i < k; ++i)
        check(lsum[i] == std::complex<long double>(n * (n - 1) / 8.0L, -1.0L * i * n), "MPI_C_LONG_DOUBLE_COMPLEX sum",
              rank, i);
}

// MPI_LONG_DOUBLE, MPI_LONG_DOUBLE_INT, MPI_C_BOOL, MPI_AINT.
static void other_types(MPI_Comm comm, int rank, int n) {
    long double x = rank * 1.5L, most = 0;
    MPI_Allreduce(&x, &most, 1, MPI_LONG_DOUBLE, MPI_MAX, comm);
    check(most == (n - 1) * 1.5L, "MPI_LONG_DOUBLE max", rank, 0);
    struct {
        long double value;
        int index;
    } in{static_cast<long double>((rank + 1) % n), rank}, out{};
    MPI_Allreduce(&in, &out, 1, MPI_LONG_DOUBLE_INT, MPI_MINLOC, comm);
    check(out.value == 0 && out.index == n - 1, "MPI_LONG_DOUBLE_INT minloc", rank, 0);
    bool b[2] = {rank == 1, true}, any[2] = {false, false};
    MPI_Allreduce(b, any, 2, MPI_C_BOOL, MPI_LOR, comm);
    check(any[0] == (n > 1) && any[1], "MPI_C_BOOL lor", rank, 0);
    MPI_Aint a = 1000 * rank, total = 0;
    MPI_Allreduce(&a, &total, 1, MPI_AINT, MPI_SUM, comm);
    check(total == 1000 * n * (n - 1) / 2, "MPI_AINT sum", rank, 0);
}

// MPI_Reduce_scatter_block and MPI_Reduce_scatter with MPI_IN_PLACE: the
// vector in the receive buffer, the rank's block of sums at its start.
static void reduce_scatter_in_place(MPI_Comm comm, int rank, int n) {
    for (const bool block : {true, false}) {
        std::vector<int> counts(n), first(n, 0);
        for (int r = 0; r < n; ++r) {
            counts[r] = block ? 4 : count(6, r, r);
            if (r) first[r] = first[r - 1] + counts[r - 1];
        }
        const int total = first[n - 1] + counts[n - 1];
        std::vector<int> v(static_cast<std::size_t>(total) + 1);
        for (int i = 0; i < total; ++i) v[i] = value(rank, 0, i);
        if (block) MPI_Reduce_scatter_block(MPI_IN_PLACE, v.data(), 4, MPI_INT, MPI_SUM, comm);
        else MPI_Reduce_scatter(MPI_IN_PLACE, v.data(), counts.data(), MPI_INT, MPI_SUM, comm);
        for (int i = 0; i < counts[rank]; ++i) {
            int want = 0;
            for (int f = 0; f < n; ++f) want += value(f, 0, first[rank] + i);
            check(v[i] == want, block ? "MPI_Reduce_scatter_block in place" : "MPI_Reduce_scatter in place", rank, i);
        }
    }
}

// Mode `types derived`: a predefined operation on a derived datatype,
// which MPI does not define (Open MPI returns MPI_ERR_OP): untimed.
static void derived_type(MPI_Comm comm, int rank) {
    MPI_Datatype triple;
    MPI_Type_contiguous(3, MPI_DOUBLE, &triple);
    MPI_Type_commit(&triple);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    double d[3] = {1, 2, 3}, sum[3];
    check(MPI_Allreduce(d, sum, 1, triple, MPI_SUM, comm) != MPI_SUCCESS, "contiguous(3, MPI_DOUBLE) sum refused", rank,
          0);
    MPI_Type_free(&triple);
}

// Mode `types quad` (on 2 ranks): gfortran's 128-bit types as Open MPI
// 4.1.4 has them. Rank r contributes 1.5 + r; the sums are printed, not
// checked (Open MPI computes them as C's long double).
static void quad_types(MPI_Comm comm, int rank) {
#if !defined(OMPI_HAVE_FORTRAN_INTEGER16) || OMPI_HAVE_FORTRAN_INTEGER16
    check(false, "MPI_INTEGER16 built (README says Open MPI was built without it)", rank, 0);
#endif
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    const struct {
        MPI_Datatype type;
        int size;
    } sizes[] = {{MPI_REAL16, 16}, {MPI_COMPLEX32, 32}, {MPI_2COMPLEX, 16}, {MPI_2DOUBLE_COMPLEX, 32}};
    for (const auto& t : sizes) {
        int size = 0;
        MPI_Type_size(t.type, &size);
        check(size == t.size, "a 128-bit type's size", rank, size);
    }
    __float128 x = 1.5 + rank, sum = 0;
    check(MPI_Allreduce(&x, &sum, 1, MPI_REAL16, MPI_SUM, comm) == MPI_SUCCESS, "MPI_REAL16 sum", rank, 0);
    __float128 z[2] = {x, 2}, zsum[2] = {0, 0};
    check(MPI_Allreduce(z, zsum, 1, MPI_COMPLEX32, MPI_SUM, comm) == MPI_SUCCESS, "MPI_COMPLEX32 sum", rank, 0);
    if (rank == 0)
        std::printf("quad: MPI_REAL16 sum of 1.5 and 2.5: %g; MPI_COMPLEX32 sum of (1.5,2) and (2.5,2): (%g,%g)\n",
                    static_cast<double>(sum), static_cast<double>(zsum[0]), static_cast<double>(zsum[1]));
    float pair[4] = {1, 0, 0, 0}, pair_out[4];
    int rc = MPI_Allreduce(pair, pair_out, 1, MPI_2COMPLEX, MPI_MINLOC, comm), cls = 0;
    MPI_Error_class(rc, &cls);
    check(cls == MPI_ERR_OP, "MPI_2COMPLEX MPI_MINLOC refused", rank, cls);
    double dpair[4] = {1, 0, 0, 0}, dpair_out[4];
    rc = MPI_Allreduce(dpair, dpair_out, 1, MPI_2DOUBLE_COMPLEX, MPI_MAXLOC, comm);
    MPI_Error_class(rc, &cls);
    check(cls == MPI_ERR_OP, "MPI_2DOUBLE_COMPLEX MPI_MAXLOC refused", rank, cls);
}

// MPI_Alltoallv with MPI_IN_PLACE: each block of the receive buffer goes
// to its rank and is replaced by that rank's (uneven counts, some empty,
// blocks in reverse rank order with gaps); then MPI_Ialltoallv back.
static void alltoallv_in_place(MPI_Comm comm, int rank, int n) {
    std::vector<int> counts(n);
    for (int r = 0; r < n; ++r) counts[r] = count(6, rank, r) + count(6, r, rank);   // the same both ways
    int span = 0;
    const std::vector<int> displs = reversed(counts, span);
    std::vector<int> v(static_cast<std::size_t>(span) + 1, -1);
    for (int r = 0; r < n; ++r)
        for (int i = 0; i < counts[r]; ++i) v[displs[r] + i] = value(rank, r, i);
    MPI_Alltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, v.data(), counts.data(), displs.data(), MPI_INT,
                  comm);
    for (int r = 0; r < n; ++r)
        for (int i = 0; i < counts[r]; ++i)
            check(v[displs[r] + i] == value(r, rank, i), "MPI_Alltoallv in place", rank, i);
    check(v[span] == -1, "MPI_Alltoallv in place (past the blocks)", rank, span);
    // And back, non-blocking.
    MPI_Request q;
    MPI_Ialltoallv(MPI_IN_PLACE, nullptr, nullptr, MPI_DATATYPE_NULL, v.data(), counts.data(), displs.data(), MPI_INT,
                   comm, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int r = 0; r < n; ++r)
        for (int i = 0; i < counts[r]; ++i)
            check(v[displs[r] + i] == value(rank, r, i), "MPI_Ialltoallv in place", rank, i);
}

// MPI_Allgather and MPI_Alltoall with MPI_IN_PLACE (4 elements a block):
// the allgather's own block already at its place, the alltoall's blocks
// each replaced by the one its rank sent.
static void all_in_place(MPI_Comm comm, int rank, int n) {
    const int k = 4;
    std::vector<int> g(static_cast<std::size_t>(n * k), -1);
    for (int i = 0; i < k; ++i) g[rank * k + i] = value(rank, 0, i);
    MPI_Allgather(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, g.data(), k, MPI_INT, comm);
    for (int r = 0; r < n; ++r)
        for (int i = 0; i < k; ++i) check(g[r * k + i] == value(r, 0, i), "MPI_Allgather in place", rank, r * k + i);
    std::vector<int> a(static_cast<std::size_t>(n * k));
    for (int r = 0; r < n; ++r)
        for (int i = 0; i < k; ++i) a[r * k + i] = value(rank, r, i);
    MPI_Alltoall(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, a.data(), k, MPI_INT, comm);
    for (int r = 0; r < n; ++r)
        for (int i = 0; i < k; ++i) check(a[r * k + i] == value(r, rank, i), "MPI_Alltoall in place", rank, r * k + i);
}

static int types(const char* mode) {
    int rank = 0, n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (std::strcmp(mode, "derived") == 0) {
        derived_type(MPI_COMM_WORLD, rank);
    } else if (std::strcmp(mode, "quad") == 0) {
        quad_types(MPI_COMM_WORLD, rank);
    } else if (std::strcmp(mode, "alltoallv") == 0) {
        alltoallv_in_place(MPI_COMM_WORLD, rank, n);
        all_in_place(MPI_COMM_WORLD, rank, n);
    } else {
        complex_types(MPI_COMM_WORLD, rank, n);
        other_types(MPI_COMM_WORLD, rank, n);
        reduce_scatter_in_place(MPI_COMM_WORLD, rank, n);
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) std::printf(all ? "types: %d wrong\n" : "types: ok\n", all);
    MPI_Finalize();
    return all ? 1 : 0;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    if (argc > 1 && std::strcmp(argv[1], "types") == 0) return types(argc > 2 ? argv[2] : "");
    int rank = 0, n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    const int large = argc > 1 ? std::atoi(argv[1]) : 6000;   // 24 KB blocks: rendezvous
    for (const int base : {6, large}) {
        gatherv(MPI_COMM_WORLD, base, n - 1);
        scatterv(MPI_COMM_WORLD, base, 1 % n);
        alltoallv(MPI_COMM_WORLD, base);
        reduce_scatter(MPI_COMM_WORLD, base);
        in_place(MPI_COMM_WORLD, base, 1 % n);
    }
    // The odd and even ranks, each its own communicator.
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);
    gatherv(half, 10, 0);
    scatterv(half, 10, 0);
    alltoallv(half, 10);
    reduce_scatter(half, 10);
    MPI_Comm_free(&half);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) std::printf(all ? "vectors: %d wrong\n" : "vectors: ok\n", all);
    MPI_Finalize();
    return all ? 1 : 0;
}
