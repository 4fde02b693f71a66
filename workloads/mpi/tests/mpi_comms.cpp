// A small MPI program on communicators other than MPI_COMM_WORLD, checking
// its own data (README "Communicators"): a split into even and odd ranks
// with an allreduce, scans and a ring inside each half; a duplicate of
// MPI_COMM_WORLD whose messages have the same source and tag as messages
// on MPI_COMM_WORLD in flight at the same time, received with
// MPI_ANY_TAG (they must not cross); a cartesian grid and a shift along
// it; a communicator made from a group. On 3 ranks, a half of one rank
// and a grid dimension of one rank: messages to itself. Prints "comms: ok".
// usage: mpi_comms [bytes]
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

// Even and odd ranks apart: a sum and a ring in each half.
static void halves(int rank, int size, int bytes) {
    MPI_Comm half;
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, -rank, &half);   // keys reverse the order
    int hr = 0, hs = 0;
    MPI_Comm_rank(half, &hr);
    MPI_Comm_size(half, &hs);
    check(hs == (size + 1 - rank % 2) / 2 && hr == hs - 1 - rank / 2, "split: rank and size", rank);
    long long mine = rank, sum = 0;
    MPI_Allreduce(&mine, &sum, 1, MPI_LONG_LONG, MPI_SUM, half);
    long long want = 0;
    for (int r = rank % 2; r < size; r += 2) want += r;
    check(sum == want, "split: allreduce", rank);
    // Ranks of the half are in descending world order: a prefix is those
    // at or above this world rank.
    long long prefix = 0, before = -1, want_prefix = 0;
    for (int r = rank; r < size; r += 2) want_prefix += r;
    MPI_Scan(&mine, &prefix, 1, MPI_LONG_LONG, MPI_SUM, half);
    MPI_Exscan(&mine, &before, 1, MPI_LONG_LONG, MPI_SUM, half);
    check(prefix == want_prefix && (hr == 0 || before == want_prefix - rank), "split: scan, exscan", rank);
    std::vector<unsigned char> out(bytes, static_cast<unsigned char>(rank)), in(bytes);
    const int right = (hr + 1) % hs, left = (hr + hs - 1) % hs;
    MPI_Status st;
    // (A half of one rank: its ring is a message to itself.)
    MPI_Sendrecv(out.data(), bytes, MPI_BYTE, right, 5, in.data(), bytes, MPI_BYTE, left, 5, half, &st);
    // The left neighbour in the half, as a world rank: keys reversed the order.
    const int left_world = rank % 2 + 2 * (hs - 1 - left);
    check(st.MPI_SOURCE == left && in[0] == left_world && in[bytes - 1] == in[0], "split: ring", rank);
    MPI_Bcast(out.data(), bytes, MPI_BYTE, hs - 1, half);
    check(out[0] == rank % 2, "split: bcast from the last", rank);
    MPI_Comm_free(&half);
}

// The same (source, tag) on MPI_COMM_WORLD and on its duplicate, both in
// flight: each receive takes its own communicator's.
static void duplicate(int rank, int size, int bytes) {
    MPI_Comm dup;
    MPI_Comm_dup(MPI_COMM_WORLD, &dup);
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    std::vector<unsigned char> on_world(bytes, 'w'), on_dup(bytes, 'd'), in_world(bytes), in_dup(bytes);
    MPI_Request q[2];
    MPI_Isend(on_world.data(), bytes, MPI_BYTE, right, 9, MPI_COMM_WORLD, &q[0]);
    MPI_Isend(on_dup.data(), bytes, MPI_BYTE, right, 9, dup, &q[1]);
    MPI_Barrier(dup);   // both messages are on their way
    MPI_Status st;
    MPI_Recv(in_dup.data(), bytes, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG, dup, &st);
    check(st.MPI_SOURCE == left && st.MPI_TAG == 9 && in_dup[0] == 'd', "dup: its own message", rank);
    MPI_Recv(in_world.data(), bytes, MPI_BYTE, left, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
    check(in_world[0] == 'w' && in_world[bytes - 1] == 'w', "dup: world's message", rank);
    MPI_Waitall(2, q, MPI_STATUSES_IGNORE);
    MPI_Comm_free(&dup);
}

// A 2 x (size / 2) torus: a shift along each dimension.
static void grid(int rank, int size, int bytes) {
    int dims[2] = {2, size / 2}, periods[2] = {1, 1};
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    if (cart == MPI_COMM_NULL) return;   // an odd rank out
    for (int d = 0; d < 2; ++d) {
        int src = 0, dst = 0;
        MPI_Cart_shift(cart, d, 1, &src, &dst);
        // (A dimension of one rank, periodic: a shift to itself.)
        std::vector<unsigned char> out(bytes, static_cast<unsigned char>(rank + 10 * d)), in(bytes);
        MPI_Sendrecv(out.data(), bytes, MPI_BYTE, dst, d, in.data(), bytes, MPI_BYTE, src, d, cart, MPI_STATUS_IGNORE);
        check(in[0] == static_cast<unsigned char>(src + 10 * d), "cart: shift", rank);
    }
    MPI_Comm_free(&cart);
}

// The first three ranks' group, reversed.
static void from_group(int rank, int size) {
    MPI_Group world, three;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    const int members[3] = {2, 1, 0};
    MPI_Group_incl(world, size < 3 ? size : 3, size < 3 ? members + 3 - size : members, &three);
    MPI_Comm made;
    MPI_Comm_create(MPI_COMM_WORLD, three, &made);
    check((made == MPI_COMM_NULL) == (rank >= 3), "comm_create: members", rank);
    if (made != MPI_COMM_NULL) {
        int mine = rank, got = -1;
        MPI_Reduce(&mine, &got, 1, MPI_INT, MPI_MAX, 0, made);   // root 0 is world rank 2
        if (rank == (size < 3 ? size - 1 : 2)) check(got == (size < 3 ? size - 1 : 2), "comm_create: reduce", rank);
        MPI_Comm_free(&made);
    }
    MPI_Group_free(&three);
    MPI_Group_free(&world);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int bytes = argc > 1 ? std::atoi(argv[1]) : 4096;
    halves(rank, size, bytes);
    duplicate(rank, size, bytes);
    grid(rank, size, bytes);
    from_group(rank, size);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) std::printf(all ? "comms: %d failure(s)\n" : "comms: ok\n", all);
    MPI_Finalize();
    return all ? 1 : 0;
}
