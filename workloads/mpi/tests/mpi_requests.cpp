// The requests real programs make, checking their own data (workloads/mpi/
// README.md "Receives", "Requests", "Datatypes"): receives from
// MPI_ANY_SOURCE posted before receives of one source, which MPI's order
// says take the later messages; HPCC's RandomAccess loop (an any-source
// receive tested while sending, then cancelled); small sends Open MPI
// completes at once; a strided datatype; gather and scatter; collectives
// on MPI_COMM_SELF; messages from a rank to itself; sends and receives
// whose requests the program frees (a freed receive's data checked after
// MPI_Finalize, when it has completed); non-blocking collectives (README
// "Non-blocking collectives"), waited for with point-to-point requests by
// MPI_Waitany and MPI_Waitsome, and one freed.
// Every rank sends to rank 0. Prints "requests: ok". With "cancel", it
// cancels an MPI_Ibarrier's request instead (erroneous in MPI: refused).
// With "ties": MPI_Waitany over a non-blocking collective and a receive,
// in both orders, both ended before it (the first listed returned: README
// "Non-blocking collectives") or racing; prints the first kind's count.
// usage: mpi_requests [rounds | cancel | nonblocking | ties]
// (nonblocking: the non-blocking collectives alone, the calls a trace
// records: README "Record, then replay")
#include <mpi.h>

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

// Every other rank sends two messages of tag 5 (a, then b) to rank 0, which
// posts an any-source receive and then one receive per source: each
// source's first message goes to whichever receive MPI's order gives it,
// and the values say which. Then the second messages left, by any-source
// blocking receives.
static void any_source(int rank, int size, int round) {
    if (rank != 0) {
        long a = rank * 100 + round, b = rank * 100 + 50 + round;
        MPI_Request q[2];
        MPI_Isend(&a, 1, MPI_LONG, 0, 5, MPI_COMM_WORLD, &q[0]);
        MPI_Isend(&b, 1, MPI_LONG, 0, 5, MPI_COMM_WORLD, &q[1]);
        MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
        return;
    }
    std::vector<long> got(size + 1, -1);
    std::vector<MPI_Request> q(size);
    MPI_Irecv(&got[0], 1, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &q[0]);
    for (int s = 1; s < size; ++s) MPI_Irecv(&got[s], 1, MPI_LONG, s, 5, MPI_COMM_WORLD, &q[s]);
    std::vector<MPI_Status> st(size);
    MPI_Waitall(size, q.data(), st.data());
    // The any-source receive took some source's first message; that
    // source's own receive its second; every other source's its first.
    const int first = st[0].MPI_SOURCE;
    check(first >= 1 && first < size && got[0] == first * 100 + round, "any-source receive", rank);
    for (int s = 1; s < size; ++s)
        check(got[s] == s * 100 + (s == first ? 50 : 0) + round && st[s].MPI_SOURCE == s, "ordered receive", rank);
    // The rest: each source's second message, any source, any order.
    for (int s = 2; s < size; ++s) {
        long v = -1;
        MPI_Status one;
        MPI_Recv(&v, 1, MPI_LONG, MPI_ANY_SOURCE, 5, MPI_COMM_WORLD, &one);
        check(v == one.MPI_SOURCE * 100 + 50 + round && one.MPI_SOURCE != first, "any-source recv", rank);
    }
}

// HPCC's MPIRandomAccess: rank 0 keeps one any-source receive open and
// tests it while the others send it updates, then a "done" (tag 2) each;
// it cancels the receive left open at the end.
static void random_access(int rank, int size) {
    const int updates = 6;
    if (rank != 0) {
        long buf[4];
        MPI_Request out = MPI_REQUEST_NULL;
        for (int u = 0; u < updates; ++u) {
            MPI_Wait(&out, MPI_STATUS_IGNORE);
            for (long& v : buf) v = rank * 1000 + u;
            MPI_Isend(buf, 4, MPI_LONG, 0, 1, MPI_COMM_WORLD, &out);
        }
        MPI_Wait(&out, MPI_STATUS_IGNORE);
        long done = 0;
        MPI_Send(&done, 1, MPI_LONG, 0, 2, MPI_COMM_WORLD);
        return;
    }
    long in[4];
    MPI_Request req;
    MPI_Irecv(in, 4, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
    int receiving = size - 1, got = 0;
    std::vector<int> next(size, 0);
    while (receiving > 0) {
        int flag = 0;
        MPI_Status st;
        MPI_Test(&req, &flag, &st);
        if (!flag) continue;
        if (st.MPI_TAG == 1) {
            int n = 0;
            MPI_Get_count(&st, MPI_LONG, &n);
            check(n == 4 && in[0] == st.MPI_SOURCE * 1000 + next[st.MPI_SOURCE]++ && in[3] == in[0], "update", rank);
            ++got;
        } else {
            --receiving;
        }
        MPI_Irecv(in, 4, MPI_LONG, MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &req);
    }
    check(got == updates * (size - 1), "every update", rank);
    MPI_Cancel(&req);
    MPI_Status st;
    MPI_Wait(&req, &st);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    check(cancelled == 1 && req == MPI_REQUEST_NULL, "cancel", rank);
}

// A strided datatype (every other long): sent from and received into
// memory the datatype leaves holes in, which the holes must keep.
static void strided(int rank, int size) {
    MPI_Datatype every_other;
    MPI_Type_vector(64, 1, 2, MPI_LONG, &every_other);
    MPI_Type_commit(&every_other);
    std::vector<long> buf(128, -1);
    if (rank != 0) {
        for (int i = 0; i < 64; ++i) buf[2 * i] = rank * 10000 + i;
        MPI_Send(buf.data(), 1, every_other, 0, 9, MPI_COMM_WORLD);
    } else {
        for (int s = 1; s < size; ++s) {
            MPI_Request q;
            MPI_Irecv(buf.data(), 1, every_other, s, 9, MPI_COMM_WORLD, &q);
            MPI_Wait(&q, MPI_STATUS_IGNORE);
            bool ok = true;
            for (int i = 0; i < 64; ++i) ok = ok && buf[2 * i] == s * 10000 + i && buf[2 * i + 1] == -1;
            check(ok, "strided datatype", rank);
        }
    }
    MPI_Type_free(&every_other);
}

// Messages from a rank to itself (Open MPI's self transport): an 8-byte
// one sent before its receive, 32 KiB received into a receive posted
// before the send (above the eager threshold), and a sendrecv with itself
// (a ring of one rank, as a periodic dimension of one rank has).
static void self_messages(int rank) {
    const int n = 4096;
    std::vector<long> out(n), in(n, -1), back(n, -1);
    for (int i = 0; i < n; ++i) out[i] = rank * 100000L + i;
    long small = rank + 7, got = -1;
    MPI_Request q;
    MPI_Isend(&small, 1, MPI_LONG, rank, 21, MPI_COMM_WORLD, &q);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Irecv(in.data(), n, MPI_LONG, rank, 22, MPI_COMM_WORLD, &q);
    MPI_Send(out.data(), n, MPI_LONG, rank, 22, MPI_COMM_WORLD);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    MPI_Status st;
    MPI_Recv(&got, 1, MPI_LONG, MPI_ANY_SOURCE, 21, MPI_COMM_WORLD, &st);
    check(got == rank + 7 && st.MPI_SOURCE == rank, "self message, eager", rank);
    check(in == out, "self message, posted receive", rank);
    MPI_Sendrecv(out.data(), n, MPI_LONG, rank, 23, back.data(), n, MPI_LONG, rank, 23, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
    check(back == out, "sendrecv with itself", rank);
}

// MPI_Waitany over {an Irecv, an Iallreduce, MPI_REQUEST_NULL}: the
// iallreduce first (the receive's message is sent only after every rank's
// wait returned: it ends at the collective's end, not at a message), with its
// status (error field MPI_SUCCESS); then the receive, with its status;
// then none. Then MPI_Waitsome over an ibcast and an iallgather until
// both are in.
static void any_of_mixed(int rank, int size) {
    const int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    long from = -1, to = rank * 9 + 4, mine = rank + 1, total = -1;
    MPI_Request q[3];
    MPI_Irecv(&from, 1, MPI_LONG, prev, 31, MPI_COMM_WORLD, &q[0]);
    MPI_Iallreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &q[1]);
    q[2] = MPI_REQUEST_NULL;
    int index = -1;
    MPI_Status st;
    st.MPI_ERROR = -1;
    MPI_Waitany(3, q, &index, &st);
    check(index == 1 && q[1] == MPI_REQUEST_NULL && st.MPI_ERROR == MPI_SUCCESS, "waitany's iallreduce", rank);
    check(total == static_cast<long>(size) * (size + 1) / 2, "waitany's iallreduce result", rank);
    MPI_Barrier(MPI_COMM_WORLD);   // no rank's message before every rank's waitany returned
    MPI_Send(&to, 1, MPI_LONG, next, 31, MPI_COMM_WORLD);
    MPI_Waitany(3, q, &index, &st);
    check(index == 0 && q[0] == MPI_REQUEST_NULL && st.MPI_SOURCE == prev && st.MPI_TAG == 31, "waitany's receive",
          rank);
    check(from == prev * 9 + 4, "waitany's received value", rank);
    MPI_Waitany(3, q, &index, MPI_STATUS_IGNORE);
    check(index == MPI_UNDEFINED, "waitany over ended requests", rank);
    long value = rank == 0 ? 55 : -1;
    std::vector<int> all(size, -1);
    const int me = rank + 8;
    MPI_Ibcast(&value, 1, MPI_LONG, 0, MPI_COMM_WORLD, &q[0]);
    MPI_Iallgather(&me, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD, &q[1]);
    int in = 0, outcount = 0, indices[2];
    while (in < 2) {
        MPI_Waitsome(2, q, &outcount, indices, MPI_STATUSES_IGNORE);
        check(outcount >= 1 && outcount <= 2 - in, "waitsome's count", rank);
        if (outcount < 1 || outcount > 2 - in) return;
        in += outcount;
    }
    check(q[0] == MPI_REQUEST_NULL && q[1] == MPI_REQUEST_NULL, "waitsome's requests ended", rank);
    check(value == 55, "waitsome's ibcast", rank);
    for (int r = 0; r < size; ++r) check(all[r] == r + 8, "waitsome's iallgather", rank);
}

// Non-blocking collectives: an iallreduce in flight while a blocking
// allreduce runs on the same communicator, then waited for; an ibarrier
// tested in a loop; an ibcast and an iallgather in flight at once, waited
// for in the reverse order; an iscan and an ireduce by MPI_Waitall; an
// ibarrier and an iallreduce by MPI_Testany, then MPI_Testall.
static void nonblocking(int rank, int size) {
    const int n = 1024;   // 8 KiB: Rabenseifner's allreduce
    std::vector<long> in(n), out(n, -1);
    for (int i = 0; i < n; ++i) in[i] = rank * 1000L + i;
    MPI_Request q;
    MPI_Iallreduce(in.data(), out.data(), n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &q);
    long mine = rank + 1, total = -1;
    MPI_Allreduce(&mine, &total, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    const long ranks = static_cast<long>(size) * (size - 1) / 2;
    bool ok = q == MPI_REQUEST_NULL;
    for (int i = 0; i < n; ++i) ok = ok && out[i] == ranks * 1000 + static_cast<long>(size) * i;
    check(ok, "iallreduce", rank);
    check(total == ranks + size, "allreduce while an iallreduce was in flight", rank);
    MPI_Request b;
    MPI_Ibarrier(MPI_COMM_WORLD, &b);
    int flag = 0;
    while (!flag) MPI_Test(&b, &flag, MPI_STATUS_IGNORE);
    check(b == MPI_REQUEST_NULL, "ibarrier tested", rank);
    MPI_Request two[2];
    long value = rank == size - 1 ? 77 : -1;
    std::vector<int> all(size, -1);
    const int me = rank + 3;
    MPI_Ibcast(&value, 1, MPI_LONG, size - 1, MPI_COMM_WORLD, &two[0]);
    MPI_Iallgather(&me, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD, &two[1]);
    MPI_Wait(&two[1], MPI_STATUS_IGNORE);
    MPI_Wait(&two[0], MPI_STATUS_IGNORE);
    check(value == 77, "ibcast", rank);
    for (int r = 0; r < size; ++r) check(all[r] == r + 3, "iallgather", rank);
    long prefix = -1, sum = -1;
    MPI_Iscan(&mine, &prefix, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &two[0]);
    MPI_Ireduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD, &two[1]);
    MPI_Waitall(2, two, MPI_STATUSES_IGNORE);
    check(prefix == static_cast<long>(rank + 1) * (rank + 2) / 2, "iscan", rank);
    check(rank != 0 || sum == ranks + size, "ireduce", rank);
    // An ibarrier and an iallreduce tested by MPI_Testany until one has
    // ended, then by MPI_Testall until the other has.
    long count = -1;
    const long one = 1;
    MPI_Ibarrier(MPI_COMM_WORLD, &two[0]);
    MPI_Iallreduce(&one, &count, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD, &two[1]);
    int index = MPI_UNDEFINED;
    for (flag = 0; !flag;) MPI_Testany(2, two, &index, &flag, MPI_STATUS_IGNORE);
    check(index == 0 || index == 1, "MPI_Testany's index", rank);
    for (flag = 0; !flag;) MPI_Testall(2, two, &flag, MPI_STATUSES_IGNORE);
    check(count == size && two[0] == MPI_REQUEST_NULL && two[1] == MPI_REQUEST_NULL,
          "an ibarrier and an iallreduce by MPI_Testany and MPI_Testall", rank);
}

// Their requests among others in MPI_Waitany and MPI_Waitsome, and one
// freed (calls a trace does not record: not in mode nonblocking).
static void waited_and_freed(int rank, int size) {
    any_of_mixed(rank, size);
    // A freed ibarrier: it completes on its own (MPI_Finalize waits for it).
    MPI_Request b;
    MPI_Ibarrier(MPI_COMM_WORLD, &b);
    MPI_Request_free(&b);
    check(b == MPI_REQUEST_NULL, "ibarrier's request freed", rank);
}

// A collective (MPI_Ibarrier or an MPI_Iallreduce of `n` longs, on
// MPI_COMM_SELF or on MPI_COMM_WORLD) and a receive of a message to itself
// of `n` longs, listed in the order `collective_first` says, taken by
// MPI_Waitany. With `both` (a collective on MPI_COMM_SELF of at most 64
// longs), both have ended before it (an MPI_Barrier between, longer than
// the collective's copy): it returns the first listed.
// Returns whether it did so.
static bool tie(int rank, MPI_Comm comm, bool barrier, int n, bool collective_first, bool both) {
    std::vector<long> out(n, rank + 3), in(n, -1), mine(n, rank + 1), total(n, -1);
    MPI_Request q[2], send;
    const int c = collective_first ? 0 : 1, p = 1 - c;
    MPI_Irecv(in.data(), n, MPI_LONG, rank, 40, MPI_COMM_WORLD, &q[p]);
    MPI_Isend(out.data(), n, MPI_LONG, rank, 40, MPI_COMM_WORLD, &send);
    if (barrier) MPI_Ibarrier(comm, &q[c]);
    else MPI_Iallreduce(mine.data(), total.data(), n, MPI_LONG, MPI_SUM, comm, &q[c]);
    if (both) MPI_Barrier(MPI_COMM_WORLD);
    int index = -1;
    MPI_Waitany(2, q, &index, MPI_STATUS_IGNORE);
    check(index == 0 || (!both && index == 1), "waitany of two ended: the first listed", rank);
    if (index == 0 || index == 1) MPI_Wait(&q[1 - index], MPI_STATUS_IGNORE);
    MPI_Wait(&send, MPI_STATUS_IGNORE);
    check(in[n - 1] == rank + 3, "its received value", rank);
    int size = 1;
    MPI_Comm_size(comm, &size);
    const long sum = size == 1 ? rank + 1 : static_cast<long>(size) * (size + 1) / 2;
    check(barrier || total[n - 1] == sum, "its iallreduce's result", rank);
    return both && index == 0;
}

static int ties(int rank) {
    int seen = 0;
    for (const bool first : {true, false})
        for (const MPI_Comm comm : {MPI_COMM_SELF, MPI_COMM_WORLD})
            for (const bool barrier : {true, false})
                for (const int n : {1, 64, 1024}) {
                    if (barrier && n > 1) continue;
                    seen += tie(rank, comm, barrier, n, first, false);
                    if (comm == MPI_COMM_SELF && n <= 64) seen += tie(rank, comm, barrier, n, first, true);
                }
    return seen;
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (argc > 1 && !std::strcmp(argv[1], "cancel")) {
        MPI_Request b;
        MPI_Ibarrier(MPI_COMM_WORLD, &b);
        MPI_Cancel(&b);
        MPI_Wait(&b, MPI_STATUS_IGNORE);
        MPI_Finalize();
        return 0;
    }
    if (argc > 1 && std::strcmp(argv[1], "ties") == 0) {
        const int seen = ties(rank);
        int all = 0, every = 0;
        MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        MPI_Allreduce(&seen, &every, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0 && all == 0) std::printf("requests: ok, %d ties\n", every);
        MPI_Finalize();
        return all != 0;
    }
    if (argc > 1 && std::strcmp(argv[1], "nonblocking") == 0) {
        nonblocking(rank, size);
        int all = 0;
        MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (rank == 0 && all == 0) std::printf("requests: ok\n");
        MPI_Finalize();
        return all != 0;
    }
    const int rounds = argc > 1 ? std::atoi(argv[1]) : 2;
    for (int r = 0; r < rounds; ++r) {
        any_source(rank, size, r);
        MPI_Barrier(MPI_COMM_WORLD);   // no source's next round before rank 0 took this one
    }
    random_access(rank, size);
    MPI_Barrier(MPI_COMM_WORLD);   // no strided message before rank 0 cancelled its receive of any message
    strided(rank, size);
    self_messages(rank);
    // Receives whose requests the program frees: rank 0's of every other
    // rank's value (read after MPI_Finalize).
    static std::vector<long> freed_in;
    freed_in.assign(size, -1);
    if (rank != 0) {
        const long v = rank * 13;
        MPI_Send(&v, 1, MPI_LONG, 0, 12, MPI_COMM_WORLD);
    } else {
        for (int s = 1; s < size; ++s) {
            MPI_Request q;
            MPI_Irecv(&freed_in[s], 1, MPI_LONG, s, 12, MPI_COMM_WORLD, &q);
            MPI_Request_free(&q);
            check(q == MPI_REQUEST_NULL, "receive's request freed", rank);
        }
    }
    nonblocking(rank, size);
    waited_and_freed(rank, size);
    // Sends whose requests the program frees (MPI_Request_free).
    static long freed_value;
    freed_value = rank * 11;
    if (rank != 0) {
        MPI_Request q;
        MPI_Isend(&freed_value, 1, MPI_LONG, 0, 11, MPI_COMM_WORLD, &q);
        MPI_Request_free(&q);
        check(q == MPI_REQUEST_NULL, "request freed", rank);
    } else {
        for (int s = 1; s < size; ++s) {
            long v = -1;
            MPI_Recv(&v, 1, MPI_LONG, s, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            check(v == s * 11, "freed send", rank);
        }
    }
    // Gather and scatter, rooted at the last rank.
    std::vector<int> gathered(size, -1), parts(size);
    const int me = rank * 7 + 1;
    MPI_Gather(&me, 1, MPI_INT, gathered.data(), 1, MPI_INT, size - 1, MPI_COMM_WORLD);
    for (int q = 0; q < size && rank == size - 1; ++q) check(gathered[q] == q * 7 + 1, "gather", rank);
    for (int q = 0; q < size; ++q) parts[q] = rank == size - 1 ? q * 3 + 2 : -1;
    int part = -1;
    MPI_Scatter(parts.data(), 1, MPI_INT, &part, 1, MPI_INT, size - 1, MPI_COMM_WORLD);
    check(part == rank * 3 + 2, "scatter", rank);
    // MPI_COMM_SELF: collectives of one rank.
    long mine = rank + 1, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG, MPI_SUM, MPI_COMM_SELF);
    MPI_Barrier(MPI_COMM_SELF);
    check(sum == rank + 1, "MPI_COMM_SELF allreduce", rank);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0) std::printf("requests: ok\n");
    MPI_Finalize();
    for (int s = 1; rank == 0 && s < size; ++s)
        if (freed_in[s] != s * 13) {
            std::fprintf(stderr, "rank 0: the freed receive from rank %d holds %ld\n", s, freed_in[s]);
            return 1;
        }
    return all != 0;
}
