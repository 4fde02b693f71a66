// One-sided MPI as real programs use it (workloads/mpi/README.md
// "One-sided"), checking its own data: a window from MPI_Win_allocate, a
// put to the next rank in each of a few fence epochs (rank 0 prints each
// epoch's time, MPI_Wtime), then a get back; a window from MPI_Win_create
// of counters at rank 0: a read-modify-write (get, flush, put) under an
// exclusive lock, an accumulate under a shared lock, a fetch-and-op and a
// compare-and-swap under lock_all with flushes. Prints "windows: ok".
// Needs 2 ranks or more.
// usage: mpi_windows [bytes [epochs [max|pscw|getacc|requests|waitany|wrong WHAT]]]
//   getacc: also an MPI_Get_accumulate of MPI_SUM and one of MPI_NO_OP
//   requests: also the request-based MPI_Raccumulate, MPI_Rget_accumulate,
//     MPI_Rget and MPI_Rput, ended by MPI_Wait, MPI_Test and MPI_Waitall;
//     and, on a window of `bytes`, a get and its flush, an rget and its
//     wait, an rget completed by a flush then its wait, each timed (rank 0
//     prints them)
//   waitany: the request-based operations' requests ended by MPI_Waitany,
//     MPI_Testall, MPI_Testany, MPI_Waitsome and MPI_Testsome; then lists
//     mixing them with receives and a non-blocking barrier (mixed_lists(),
//     rank 0 prints the times)
//   max:  an MPI_Accumulate of MPI_MAX (no network atomic does it: untimed)
//   pscw: also generalized active target epochs on a ring (active_target()),
//     one with the rank itself in its groups, and epochs of the rank alone
//     and of no one (own_epochs())
//   wrong WHAT: only an erroneous generalized active target epoch
//     (erroneous()): WHAT is start (rank 0 starts on rank 1, which never
//     posts: a deadlock), complete (a complete without a start), wait (a
//     wait without a post) or restart (a second start before the complete)
#include <mpi.h>

#include <algorithm>
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

// Get-accumulates into rank 0's words 5 and 6: {mine, 10 mine} added (the
// old values fetched), then both read back by MPI_NO_OP.
static void get_accumulates(int rank, std::int64_t mine, std::int64_t total, MPI_Win win) {
    const std::int64_t add[2] = {mine, 10 * mine};
    std::int64_t before[2] = {-1, -1}, after[2] = {-1, -1};
    MPI_Get_accumulate(add, 2, MPI_INT64_T, before, 2, MPI_INT64_T, 0, 5, 2, MPI_INT64_T, MPI_SUM, win);
    MPI_Win_flush(0, win);
    check(before[0] >= 0 && before[0] <= total - mine && before[1] >= 0 && before[1] <= 10 * (total - mine) &&
              before[1] % 10 == 0,
          "a get-accumulate's old values", rank);
    MPI_Get_accumulate(nullptr, 0, MPI_INT64_T, after, 2, MPI_INT64_T, 0, 5, 2, MPI_INT64_T, MPI_NO_OP, win);
    MPI_Win_flush(0, win);
    check(after[0] >= before[0] + mine && after[0] <= total && after[1] >= before[1] + 10 * mine &&
              after[1] <= 10 * total,
          "a get-accumulate of MPI_NO_OP's values", rank);
}

// The request-based operations on rank 0's words: [7] an raccumulate of
// mine, waited for; [8] an rget-accumulate of mine, tested until done;
// [7] read back by an rget and [9 + rank] written by an rput, both ended
// by one waitall.
static void request_based(int rank, std::int64_t mine, std::int64_t total, MPI_Win win) {
    MPI_Request q[2];
    std::int64_t before = -1, seen = -1;
    MPI_Raccumulate(&mine, 1, MPI_INT64_T, 0, 7, 1, MPI_INT64_T, MPI_SUM, win, &q[0]);
    MPI_Wait(&q[0], MPI_STATUS_IGNORE);
    MPI_Win_flush(0, win);   // (the wait is local completion only)
    MPI_Rget_accumulate(&mine, 1, MPI_INT64_T, &before, 1, MPI_INT64_T, 0, 8, 1, MPI_INT64_T, MPI_SUM, win, &q[1]);
    int flag = 0;
    while (!flag) MPI_Test(&q[1], &flag, MPI_STATUS_IGNORE);
    check(q[1] == MPI_REQUEST_NULL && before >= 0 && before <= total - mine, "an rget-accumulate's old value", rank);
    MPI_Rget(&seen, 1, MPI_INT64_T, 0, 7, 1, MPI_INT64_T, win, &q[0]);
    MPI_Rput(&mine, 1, MPI_INT64_T, 0, 9 + rank, 1, MPI_INT64_T, win, &q[1]);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    check(seen >= mine && seen <= total, "an rget of a word raccumulated", rank);
}

// The request-based operations' requests in lists, on rank 0's words as
// request_based(): [9 + rank] an rput and [7] an raccumulate, ended by two
// waitanys; [8] an rget-accumulate and an rget of [9 + rank] (flushed
// before), ended by testall; an rget of [9 + rank] ended by testany; two
// rputs to this rank's own words 5 and 6 by waitany; two rgets of
// [9 + rank] by waitsome, two by testsome.
static void request_lists(int rank, std::int64_t mine, std::int64_t total, MPI_Win win) {
    MPI_Request q[2];
    std::int64_t before = -1, seen = -1, again = -1;
    int first = -1, second = -1, flag = 0, index = -1;
    MPI_Rput(&mine, 1, MPI_INT64_T, 0, 9 + rank, 1, MPI_INT64_T, win, &q[0]);
    MPI_Raccumulate(&mine, 1, MPI_INT64_T, 0, 7, 1, MPI_INT64_T, MPI_SUM, win, &q[1]);
    MPI_Waitany(2, q, &first, MPI_STATUS_IGNORE);
    MPI_Waitany(2, q, &second, MPI_STATUS_IGNORE);
    check((first == 0 || first == 1) && second == 1 - first && q[0] == MPI_REQUEST_NULL && q[1] == MPI_REQUEST_NULL,
          "two waitanys over an rput and an raccumulate", rank);
    MPI_Win_flush(0, win);
    MPI_Rget_accumulate(&mine, 1, MPI_INT64_T, &before, 1, MPI_INT64_T, 0, 8, 1, MPI_INT64_T, MPI_SUM, win, &q[0]);
    MPI_Rget(&seen, 1, MPI_INT64_T, 0, 9 + rank, 1, MPI_INT64_T, win, &q[1]);
    while (!flag) MPI_Testall(2, q, &flag, MPI_STATUSES_IGNORE);
    check(q[0] == MPI_REQUEST_NULL && before >= 0 && before <= total - mine && seen == mine,
          "an rget-accumulate and an rget ended by testall", rank);
    MPI_Rget(&again, 1, MPI_INT64_T, 0, 9 + rank, 1, MPI_INT64_T, win, &q[0]);
    for (flag = 0; !flag;) MPI_Testany(1, q, &index, &flag, MPI_STATUS_IGNORE);
    check(index == 0 && again == mine, "an rget ended by testany", rank);
    // Two rputs to this rank's own window (its words 5 and 6: copies,
    // complete at once), listed latest first: waitany returns the first
    // listed of requests complete at one time, not the first posted.
    std::int64_t* own = nullptr;
    int found = 0;
    MPI_Win_get_attr(win, MPI_WIN_BASE, &own, &found);
    MPI_Rput(&mine, 1, MPI_INT64_T, rank, 5, 1, MPI_INT64_T, win, &q[1]);
    MPI_Rput(&mine, 1, MPI_INT64_T, rank, 6, 1, MPI_INT64_T, win, &q[0]);
    MPI_Waitany(2, q, &first, MPI_STATUS_IGNORE);
    MPI_Waitany(2, q, &second, MPI_STATUS_IGNORE);
    MPI_Win_flush(rank, win);
    check(first == 0 && second == 1 && found && own[5] == mine && own[6] == mine,
          "a waitany over two rputs complete at once", rank);
    // Two rgets of [9 + rank] ended by waitsome, two by testsome.
    for (int some = 0; some < 2; ++some) {
        std::int64_t got[2] = {-1, -1};
        int done = 0, out = 0, indices[2];
        MPI_Rget(&got[0], 1, MPI_INT64_T, 0, 9 + rank, 1, MPI_INT64_T, win, &q[0]);
        MPI_Rget(&got[1], 1, MPI_INT64_T, 0, 9 + rank, 1, MPI_INT64_T, win, &q[1]);
        while (done < 2) {
            if (some == 0) MPI_Waitsome(2, q, &out, indices, MPI_STATUSES_IGNORE);
            else MPI_Testsome(2, q, &out, indices, MPI_STATUSES_IGNORE);
            done += out;
        }
        check(got[0] == mine && got[1] == mine, some == 0 ? "rgets ended by waitsome" : "rgets ended by testsome",
              rank);
    }
}

// Lists mixing request-based operations' requests with point-to-point
// and collective ones, in a lock_all epoch of `win`, whose word 5 every
// rank wrote its `mine` into (request_lists()). An rget of the next rank's
// word 5 and its MPI_Wait, timed (the second of two, each after a
// barrier); then, after a barrier too, MPI_Waitany over a receive from
// the previous rank (sent only once every rank's Waitany returned) and the
// same rget, timed: the rget's, at the rget's time (rank 0 prints both
// times and the index); the receive by a second Waitany. Then an rput to
// this rank's own word 6 (a copy, complete at once) and a receive whose
// message came before (a barrier after the sends), listed rput first, then
// receive first: Waitany returns index 0 both times (the first listed of
// requests complete at one time, whatever their kinds). Then an ibarrier,
// an rget and a receive, ended by MPI_Testany, then MPI_Testall.
static void mixed_lists(int rank, int size, std::int64_t mine, MPI_Win win) {
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    std::int64_t got = -1, from = -1;
    MPI_Request q[3];
    double t0 = 0, alone = 0;
    for (int warm = 0; warm < 2; ++warm) {   // the first to warm the buffers
        MPI_Barrier(MPI_COMM_WORLD);
        t0 = MPI_Wtime();
        MPI_Rget(&got, 1, MPI_INT64_T, next, 5, 1, MPI_INT64_T, win, &q[0]);
        MPI_Wait(&q[0], MPI_STATUS_IGNORE);
        alone = MPI_Wtime() - t0;
    }
    check(got == next + 1, "an rget of the next rank's word", rank);
    int first = -1, second = -1;
    got = -1;
    MPI_Irecv(&from, 1, MPI_INT64_T, prev, 41, MPI_COMM_WORLD, &q[0]);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    MPI_Rget(&got, 1, MPI_INT64_T, next, 5, 1, MPI_INT64_T, win, &q[1]);
    MPI_Waitany(2, q, &first, MPI_STATUS_IGNORE);
    const double mixed = MPI_Wtime() - t0;
    MPI_Barrier(MPI_COMM_WORLD);   // no rank's message before every rank's waitany returned
    MPI_Send(&mine, 1, MPI_INT64_T, next, 41, MPI_COMM_WORLD);
    MPI_Waitany(2, q, &second, MPI_STATUS_IGNORE);
    check(first == 1 && second == 0 && got == next + 1 && from == prev + 1,
          "a waitany over a receive not yet sent and an rget", rank);
    if (rank == 0)
        std::printf(
            "windows: an rget and its wait: %.3f us; a waitany over a receive and an rget: index %d after "
            "%.3f us\n",
            alone * 1e6, first, mixed * 1e6);
    // Complete at one time, of two kinds: the first listed, either order.
    for (int order = 0; order < 2; ++order) {
        MPI_Send(&mine, 1, MPI_INT64_T, next, 42, MPI_COMM_WORLD);
        MPI_Barrier(MPI_COMM_WORLD);
        from = -1;
        MPI_Irecv(&from, 1, MPI_INT64_T, prev, 42, MPI_COMM_WORLD, &q[order == 0 ? 1 : 0]);
        MPI_Rput(&mine, 1, MPI_INT64_T, rank, 6, 1, MPI_INT64_T, win, &q[order == 0 ? 0 : 1]);
        MPI_Waitany(2, q, &first, MPI_STATUS_IGNORE);
        MPI_Waitany(2, q, &second, MPI_STATUS_IGNORE);
        check(first == 0 && second == 1 && from == prev + 1,
              order == 0 ? "a waitany over an rput and a receive complete at once"
                         : "a waitany over a receive and an rput complete at once",
              rank);
    }
    // A collective's among them: tested.
    got = from = -1;
    int index = -1, flag = 0;
    MPI_Ibarrier(MPI_COMM_WORLD, &q[0]);
    MPI_Rget(&got, 1, MPI_INT64_T, next, 5, 1, MPI_INT64_T, win, &q[1]);
    MPI_Irecv(&from, 1, MPI_INT64_T, prev, 43, MPI_COMM_WORLD, &q[2]);
    MPI_Send(&mine, 1, MPI_INT64_T, next, 43, MPI_COMM_WORLD);
    while (!flag) MPI_Testany(3, q, &index, &flag, MPI_STATUS_IGNORE);
    for (flag = 0; !flag;) MPI_Testall(3, q, &flag, MPI_STATUSES_IGNORE);
    check(index >= 0 && index < 3 && got == next + 1 && from == prev + 1, "an ibarrier, an rget and a receive tested",
          rank);
}

// An rget's wait against a get's flush, from the next rank's window of
// `bytes` (rank 0 prints the times, MPI_Wtime): a get and its flush (after
// one untimed, to warm the buffers), an rget and its wait, an rget
// completed by a flush and then its wait.
static void request_timing(int rank, int size, int bytes) {
    unsigned char* window = nullptr;
    MPI_Win win;
    MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &window, &win);
    for (int i = 0; i < bytes; ++i) window[i] = pattern(rank, 9, i);
    MPI_Barrier(MPI_COMM_WORLD);
    const int next = (rank + 1) % size;
    std::vector<unsigned char> got(bytes), want(bytes);
    for (int i = 0; i < bytes; ++i) want[i] = pattern(next, 9, i);
    MPI_Request q;
    double t[6];
    MPI_Win_lock_all(0, win);
    MPI_Get(got.data(), bytes, MPI_BYTE, next, 0, bytes, MPI_BYTE, win);
    MPI_Win_flush(next, win);
    t[0] = MPI_Wtime();
    MPI_Get(got.data(), bytes, MPI_BYTE, next, 0, bytes, MPI_BYTE, win);
    MPI_Win_flush(next, win);
    t[1] = MPI_Wtime();
    check(got == want, "a get", rank);
    std::fill(got.begin(), got.end(), 0);
    t[2] = MPI_Wtime();
    MPI_Rget(got.data(), bytes, MPI_BYTE, next, 0, bytes, MPI_BYTE, win, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    t[3] = MPI_Wtime();
    check(got == want, "an rget", rank);
    MPI_Rget(got.data(), bytes, MPI_BYTE, next, 0, bytes, MPI_BYTE, win, &q);
    MPI_Win_flush(next, win);
    t[4] = MPI_Wtime();
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    t[5] = MPI_Wtime();
    MPI_Win_unlock_all(win);
    if (rank == 0)
        std::printf("windows: get and flush of %d B: %.3f us; rget and wait: %.3f us; wait after a flush: %.3f us\n",
                    bytes, (t[1] - t[0]) * 1e6, (t[3] - t[2]) * 1e6, (t[5] - t[4]) * 1e6);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&win);
}

// Counters at rank 0: [0] a read-modify-write under an exclusive lock,
// [1], [2] an accumulate, [3] fetch-and-add, [4] compare-and-swap; with
// `getacc`, [5], [6] get-accumulates.
static void passive(int rank, int size, bool max, bool getacc, bool requests, bool waitany) {
    const int rounds = 3, words = requests || waitany ? 9 + size : getacc ? 7 : 5;
    auto* counters = static_cast<std::int64_t*>(std::calloc(words, sizeof(std::int64_t)));
    MPI_Win win;
    MPI_Win_create(counters, words * sizeof(std::int64_t), sizeof(std::int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &win);
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
    const std::int64_t total = static_cast<std::int64_t>(size) * (size + 1) / 2;
    if (getacc) get_accumulates(rank, mine, total, win);
    if (requests) request_based(rank, mine, total, win);
    if (waitany) request_lists(rank, mine, total, win);
    // Not rank 0's own word: Open MPI 4.1.4's osc/rdma crashes on a
    // compare-and-swap of a rank's own window over vader (natively too).
    if (rank != 0) {
        MPI_Compare_and_swap(&mine, &zero, &was, MPI_INT64_T, 0, 4, win);
        MPI_Win_flush(0, win);
        check(was >= 0 && was <= size && was != mine, "a compare-and-swap's old value", rank);
    }
    MPI_Win_unlock_all(win);
    if (waitany) {   // an epoch of its own once every rank is done with its locks (mixed_lists() meets in barriers)
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock_all(0, win);
        mixed_lists(rank, size, mine, win);
        MPI_Win_unlock_all(win);
    }
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
        check(!getacc || (counters[5] == total && counters[6] == 10 * total), "the get-accumulated words", rank);
        bool put = true;
        for (int r = 0; (requests || waitany) && r < size; ++r) put = put && counters[9 + r] == r + 1;
        check(!(requests || waitany) || (counters[7] == total && counters[8] == total && put),
              "the request-based words", rank);
        MPI_Win_unlock(0, win);
    }
    MPI_Win_free(&win);
    std::free(counters);
}

// An epoch of the rank alone (its group itself: the notifications local,
// no network time) with a put into its own fourth slot, MPI_Win_test
// before and after the complete; then one of no one (MPI_GROUP_EMPTY).
// Rank 0 prints how long the start took after the post in the first, and
// the whole second epoch took (MPI_Wtime).
static void own_epochs(int rank, int bytes, unsigned char* window, MPI_Group world, MPI_Win win) {
    MPI_Group self;
    MPI_Group_incl(world, 1, &rank, &self);
    std::vector<unsigned char> src(bytes);
    for (int i = 0; i < bytes; ++i) src[i] = pattern(rank, 50, i);
    const double t0 = MPI_Wtime();
    MPI_Win_post(self, 0, win);
    MPI_Win_start(self, 0, win);
    const double t1 = MPI_Wtime();
    MPI_Put(src.data(), bytes, MPI_BYTE, rank, 3 * bytes, bytes, MPI_BYTE, win);
    int before = -1, after = -1;
    MPI_Win_test(win, &before);   // its own complete not made yet
    MPI_Win_complete(win);
    MPI_Win_test(win, &after);
    check(before == 0 && after == 1, "MPI_Win_test of an epoch of the rank alone", rank);
    check(std::memcmp(window + 3 * bytes, src.data(), bytes) == 0, "a put to itself in a PSCW epoch", rank);
    MPI_Group_free(&self);
    const double t2 = MPI_Wtime();
    MPI_Win_post(MPI_GROUP_EMPTY, 0, win);
    MPI_Win_start(MPI_GROUP_EMPTY, 0, win);
    MPI_Win_complete(win);
    MPI_Win_wait(win);
    const double t3 = MPI_Wtime();
    if (rank == 0)
        std::printf("windows: pscw alone: start %.3f us after its post; pscw empty: %.3f us\n", (t1 - t0) * 1e6,
                    (t3 - t2) * 1e6);
}

// Generalized active target on a ring, in four epochs: each rank exposes
// its window to its neighbours (MPI_Win_post), starts an access epoch to
// them, puts its block into the next rank's first slot and the previous
// rank's second, gets the next rank's third (its own, written before the
// window was made), completes, and waits (the first epoch: MPI_Win_test
// once, then MPI_Win_wait if it had not ended). Rank 0 prints how long
// after the later of its targets' posts its start returned (MPI_Wtime:
// simulated). The third epoch's post and start are MPI_MODE_NOCHECK, a
// barrier between them (every post made before any start, as MPI asks).
// The fourth's groups hold the rank itself too, which puts its block into
// its own fourth slot. Then own_epochs().
static void active_target(int rank, int size, int bytes) {
    unsigned char* window = nullptr;
    MPI_Win win;
    MPI_Win_allocate(4 * bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &window, &win);
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    for (int i = 0; i < bytes; ++i) window[2 * bytes + i] = pattern(rank, 99, i);
    MPI_Group world, ring, with_self;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    const int neighbours[2] = {prev, next};
    MPI_Group_incl(world, prev == next ? 1 : 2, neighbours, &ring);
    MPI_Group mine;
    MPI_Group_incl(world, 1, &rank, &mine);
    MPI_Group_union(ring, mine, &with_self);
    MPI_Group_free(&mine);
    std::vector<unsigned char> src(bytes), got(bytes);
    MPI_Barrier(MPI_COMM_WORLD);   // every rank's third slot written
    for (int e = 0; e < 4; ++e) {
        for (int i = 0; i < bytes; ++i) src[i] = pattern(rank, e + 10, i);
        const int nocheck = e == 2 ? MPI_MODE_NOCHECK : 0;
        const MPI_Group group = e == 3 ? with_self : ring;
        const double posted = MPI_Wtime();
        MPI_Win_post(group, nocheck, win);
        if (nocheck) MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_start(group, nocheck, win);
        const double started = MPI_Wtime();
        MPI_Put(src.data(), bytes, MPI_BYTE, next, 0, bytes, MPI_BYTE, win);
        MPI_Put(src.data(), bytes, MPI_BYTE, prev, bytes, bytes, MPI_BYTE, win);
        MPI_Get(got.data(), bytes, MPI_BYTE, next, 2 * bytes, bytes, MPI_BYTE, win);
        if (e == 3) MPI_Put(src.data(), bytes, MPI_BYTE, rank, 3 * bytes, bytes, MPI_BYTE, win);
        MPI_Win_complete(win);
        int flag = 0;
        if (e == 0) MPI_Win_test(win, &flag);
        if (!flag) MPI_Win_wait(win);
        bool same = true, back = true;
        for (int i = 0; i < bytes; ++i) {
            same = same && window[i] == pattern(prev, e + 10, i) && window[bytes + i] == pattern(next, e + 10, i) &&
                   (e != 3 || window[3 * bytes + i] == pattern(rank, e + 10, i));
            back = back && got[i] == pattern(next, 99, i);
        }
        check(same, "the window after a PSCW epoch", rank);
        check(back, "a get in a PSCW epoch", rank);
        // The start's return after its targets' posts (each rank's post time
        // to its neighbours).
        double theirs[2] = {0, 0};
        MPI_Sendrecv(&posted, 1, MPI_DOUBLE, next, 7, &theirs[0], 1, MPI_DOUBLE, prev, 7, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        MPI_Sendrecv(&posted, 1, MPI_DOUBLE, prev, 8, &theirs[1], 1, MPI_DOUBLE, next, 8, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        const double after = started - (theirs[0] > theirs[1] ? theirs[0] : theirs[1]);
        if (rank == 0 && !nocheck)
            std::printf("windows: pscw epoch %d: start %.3f us after the last post\n", e, after * 1e6);
    }
    own_epochs(rank, bytes, window, world, win);
    MPI_Group_free(&with_self);
    MPI_Group_free(&ring);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
}

// An erroneous epoch (mode wrong), on a window of 8 bytes: `what` says
// which (the usage above). The run stops there, naming it.
static void erroneous(int rank, const char* what) {
    unsigned char* window = nullptr;
    MPI_Win win;
    MPI_Win_allocate(8, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &window, &win);
    MPI_Group world, one;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    const int target = 1;
    MPI_Group_incl(world, 1, &target, &one);
    if (rank == 0 && std::strcmp(what, "start") == 0) MPI_Win_start(one, 0, win);
    if (rank == 0 && std::strcmp(what, "complete") == 0) MPI_Win_complete(win);
    if (rank == 0 && std::strcmp(what, "wait") == 0) MPI_Win_wait(win);
    if (rank == 0 && std::strcmp(what, "restart") == 0) {
        MPI_Win_start(one, MPI_MODE_NOCHECK, win);
        MPI_Win_start(one, MPI_MODE_NOCHECK, win);
    }
    MPI_Group_free(&one);
    MPI_Group_free(&world);
    MPI_Win_free(&win);
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
    const bool getacc = argc > 3 && std::strcmp(argv[3], "getacc") == 0;
    const bool requests = argc > 3 && std::strcmp(argv[3], "requests") == 0;
    const bool waitany = argc > 3 && std::strcmp(argv[3], "waitany") == 0;
    if (argc > 4 && std::strcmp(argv[3], "wrong") == 0) {
        erroneous(rank, argv[4]);
        MPI_Finalize();
        return 0;
    }
    fences(rank, size, bytes, epochs);
    passive(rank, size, max, getacc, requests, waitany);
    if (pscw) active_target(rank, size, bytes);
    if (requests) request_timing(rank, size, bytes);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0) std::printf("windows: ok\n");
    MPI_Finalize();
    return all ? 1 : 0;
}
