// One-sided MPI as real programs use it (workloads/mpi/README.md
// "One-sided"), checking its own data: a window from MPI_Win_allocate, a
// put to the next rank in each of a few fence epochs (rank 0 prints each
// epoch's time, MPI_Wtime), then a get back; a window from MPI_Win_create
// of counters at rank 0: a read-modify-write (get, flush, put) under an
// exclusive lock, an accumulate under a shared lock, a fetch-and-op and a
// compare-and-swap under lock_all with flushes. Prints "windows: ok".
// Needs 2 ranks or more.
// usage: mpi_windows [bytes [epochs [max|pscw]]]
//   max:  an MPI_Accumulate of MPI_MAX (no network atomic does it: untimed)
//   pscw: an MPI_Win_post (generalized active target: not built)
#include <mpi.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static int failures = 0;

static void check(bool ok, const char* what, int rank) {
    if (!ok) {
        std::fprintf(stderr, "rank %d: %s: wrong\n", rank, what);
        ++failures;
    }
}

static unsigned char pattern(int rank, int epoch, int i) {
    return static_cast<unsigned char>(rank * 31 + epoch * 7 + i);
}

// Puts to the next rank in `epochs` fence epochs, then a get of what this
// rank put there.
static void fences(int rank, int size, int bytes, int epochs) {
    unsigned char* window = nullptr;
    MPI_Win win;
    MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &window, &win);
    std::vector<unsigned char> src(bytes), back(bytes);
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    MPI_Win_fence(0, win);
    for (int e = 0; e < epochs; ++e) {
        for (int i = 0; i < bytes; ++i) src[i] = pattern(rank, e, i);
        const double t0 = MPI_Wtime();
        MPI_Put(src.data(), bytes, MPI_BYTE, next, 0, bytes, MPI_BYTE, win);
        MPI_Win_fence(0, win);
        const double t = MPI_Wtime() - t0;
        bool same = true;
        for (int i = 0; i < bytes; ++i) same = same && window[i] == pattern(prev, e, i);
        check(same, "the window after a put epoch", rank);
        if (rank == 0) std::printf("windows: put epoch %d of %d B: %.3f us\n", e, bytes, t * 1e6);
        MPI_Win_fence(0, win);   // read before the next epoch's put may land
    }
    MPI_Get(back.data(), bytes, MPI_BYTE, next, 0, bytes, MPI_BYTE, win);
    MPI_Win_fence(0, win);
    check(back == src, "a get of what this rank put", rank);
    MPI_Win_free(&win);
}

// Counters at rank 0: [0] a read-modify-write under an exclusive lock,
// [1], [2] an accumulate, [3] fetch-and-add, [4] compare-and-swap.
static void passive(int rank, int size, bool max, bool pscw) {
    const int rounds = 3;
    auto* counters = static_cast<std::int64_t*>(std::calloc(5, sizeof(std::int64_t)));
    MPI_Win win;
    MPI_Win_create(counters, 5 * sizeof(std::int64_t), sizeof(std::int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
    if (pscw) {
        MPI_Group world;
        MPI_Comm_group(MPI_COMM_WORLD, &world);
        MPI_Win_post(world, 0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < rounds; ++i) {
        std::int64_t v = -1;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        MPI_Get(&v, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, win);
        MPI_Win_flush(0, win);
        ++v;
        MPI_Put(&v, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, win);
        MPI_Win_unlock(0, win);
    }
    const std::int64_t add[2] = {1, 2};
    MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win);
    MPI_Accumulate(add, 2, MPI_INT64_T, 0, 1, 2, MPI_INT64_T, max ? MPI_MAX : MPI_SUM, win);
    MPI_Win_unlock(0, win);
    const std::int64_t mine = rank + 1, zero = 0;
    std::int64_t old = -1, was = -1;
    MPI_Win_lock_all(0, win);
    MPI_Fetch_and_op(&mine, &old, MPI_INT64_T, 0, 3, MPI_SUM, win);
    MPI_Win_flush_all(win);
    // Not rank 0's own word: Open MPI 4.1.4's osc/rdma crashes on a
    // compare-and-swap of a rank's own window over vader (natively too).
    if (rank != 0) {
        MPI_Compare_and_swap(&mine, &zero, &was, MPI_INT64_T, 0, 4, win);
        MPI_Win_flush(0, win);
        check(was >= 0 && was <= size && was != mine, "a compare-and-swap's old value", rank);
    }
    MPI_Win_unlock_all(win);
    check(old >= 0 && old <= size * (size + 1) / 2 - mine, "a fetch-and-add's old value", rank);
    int won = was == 0, winners = 0;
    MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    check(winners == 1, "one compare-and-swap succeeded", rank);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        check(counters[0] == size * rounds, "the counter incremented under an exclusive lock", rank);
        check(counters[1] == size && counters[2] == 2 * size, "the accumulated counters", rank);
        check(counters[3] == size * (size + 1) / 2, "the fetch-and-add counter", rank);
        check(counters[4] >= 2 && counters[4] <= size, "the compare-and-swap word", rank);
        MPI_Win_unlock(0, win);
    }
    MPI_Win_free(&win);
    std::free(counters);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int bytes = argc > 1 ? std::atoi(argv[1]) : 65536;
    const int epochs = argc > 2 ? std::atoi(argv[2]) : 3;
    const bool max = argc > 3 && std::strcmp(argv[3], "max") == 0;
    const bool pscw = argc > 3 && std::strcmp(argv[3], "pscw") == 0;
    fences(rank, size, bytes, epochs);
    passive(rank, size, max, pscw);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0) std::printf("windows: ok\n");
    MPI_Finalize();
    return all ? 1 : 0;
}
