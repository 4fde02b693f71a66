// The v-variants real programs call (workloads/mpi/README.md "What is
// timed"), checking their own data: MPI_Gatherv and MPI_Scatterv from a
// root other than 0, MPI_Allgatherv and MPI_Alltoallv, with uneven counts
// (some empty) and displacements in reverse rank order with gaps, at a
// small and at a rendezvous size, on MPI_COMM_WORLD and on a split
// communicator; and MPI_Reduce_scatter (uneven counts, some empty) and
// MPI_Reduce_scatter_block; and with MPI_IN_PLACE, MPI_Gather and
// MPI_Scatter at their root, MPI_Gatherv and MPI_Scatterv at theirs,
// MPI_Allgatherv at every rank. Prints "vectors: ok".
// usage: mpi_vectors [elements]
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
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

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
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
