// A small MPI program of the kinds real ones are made of, checking its own
// data: a ring of Sendrecv, then Isend/Irecv/Waitall with both
// neighbours, a blocking exchange with MPI_ANY_SOURCE at rank 0, and the
// collectives. Prints what it measured with MPI_Wtime, and "ring: ok".
// usage: mpi_ring [bytes] [rounds]
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static int failures = 0;

// A user-defined reduction (MPI_Op_create): the larger of each pair.
static void keep_larger(void* in, void* inout, int* len, MPI_Datatype*) {
    for (int i = 0; i < *len; ++i)
        if (static_cast<int*>(in)[i] > static_cast<int*>(inout)[i])
            static_cast<int*>(inout)[i] = static_cast<int*>(in)[i];
}

static void check(bool ok, const char* what, int rank) {
    if (!ok) {
        std::fprintf(stderr, "rank %d: %s: wrong data\n", rank, what);
        ++failures;
    }
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const int bytes = argc > 1 ? std::atoi(argv[1]) : 4096;
    const int rounds = argc > 2 ? std::atoi(argv[2]) : 4;
    const int right = (rank + 1) % size, left = (rank + size - 1) % size;
    std::vector<unsigned char> out(bytes), in(bytes), in2(bytes);
    const double t0 = MPI_Wtime();
    for (int r = 0; r < rounds; ++r) {
        std::memset(out.data(), rank * 16 + r, bytes);
        MPI_Sendrecv(out.data(), bytes, MPI_BYTE, right, r, in.data(), bytes, MPI_BYTE, left, r, MPI_COMM_WORLD,
                     MPI_STATUS_IGNORE);
        check(in[0] == static_cast<unsigned char>(left * 16 + r) && in[bytes - 1] == in[0], "sendrecv", rank);
        MPI_Request q[4];
        MPI_Irecv(in.data(), bytes, MPI_BYTE, left, 100 + r, MPI_COMM_WORLD, &q[0]);
        MPI_Irecv(in2.data(), bytes, MPI_BYTE, right, 200 + r, MPI_COMM_WORLD, &q[1]);
        MPI_Isend(out.data(), bytes, MPI_BYTE, right, 100 + r, MPI_COMM_WORLD, &q[2]);
        MPI_Isend(out.data(), bytes, MPI_BYTE, left, 200 + r, MPI_COMM_WORLD, &q[3]);
        MPI_Waitall(4, q, MPI_STATUSES_IGNORE);
        check(in[0] == static_cast<unsigned char>(left * 16 + r), "irecv from the left", rank);
        check(in2[0] == static_cast<unsigned char>(right * 16 + r), "irecv from the right", rank);
    }
    // The same exchange completed by MPI_Waitany, MPI_Testall and
    // MPI_Waitsome.
    {
        std::memset(out.data(), rank * 16 + 9, bytes);
        MPI_Request q[4];
        MPI_Irecv(in.data(), bytes, MPI_BYTE, left, 300, MPI_COMM_WORLD, &q[0]);
        MPI_Irecv(in2.data(), bytes, MPI_BYTE, right, 400, MPI_COMM_WORLD, &q[1]);
        MPI_Isend(out.data(), bytes, MPI_BYTE, right, 300, MPI_COMM_WORLD, &q[2]);
        MPI_Isend(out.data(), bytes, MPI_BYTE, left, 400, MPI_COMM_WORLD, &q[3]);
        int index = -1, flag = 0, done = 0, indices[4];
        MPI_Waitany(4, q, &index, MPI_STATUS_IGNORE);
        check(index >= 0 && index < 4 && q[index] == MPI_REQUEST_NULL, "waitany", rank);
        while (done < 3) {
            int n = 0;
            MPI_Waitsome(4, q, &n, indices, MPI_STATUSES_IGNORE);
            done += n;
        }
        MPI_Testall(4, q, &flag, MPI_STATUSES_IGNORE);
        check(flag == 1, "testall of completed requests", rank);
        check(in[0] == static_cast<unsigned char>(left * 16 + 9), "waitsome from the left", rank);
        check(in2[0] == static_cast<unsigned char>(right * 16 + 9), "waitsome from the right", rank);
    }
    const double t1 = MPI_Wtime();
    // Rank 0 gathers one word from every other rank, in whatever order
    // they arrive (MPI_ANY_SOURCE).
    if (rank == 0) {
        long sum = 0;
        for (int i = 1; i < size; ++i) {
            long v = 0;
            MPI_Status st, probed;
            int count = 0, flag = 0;
            // The size first, as programs receiving a message of unknown length do.
            MPI_Probe(MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &probed);
            MPI_Get_count(&probed, MPI_LONG, &count);
            check(count == 1, "probe's count", rank);
            MPI_Iprobe(probed.MPI_SOURCE, 7, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
            check(flag == 1, "iprobe of a probed message", rank);
            MPI_Recv(&v, 1, MPI_LONG, probed.MPI_SOURCE, 7, MPI_COMM_WORLD, &st);
            check(v == st.MPI_SOURCE * 1000L, "any-source receive", rank);
            sum += v;
        }
        check(sum == 1000L * size * (size - 1) / 2, "any-source sum", rank);
    } else {
        long v = rank * 1000L;
        MPI_Send(&v, 1, MPI_LONG, 0, 7, MPI_COMM_WORLD);
    }
    double x = rank + 1, total = 0;
    MPI_Allreduce(&x, &total, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    check(total == size * (size + 1) / 2.0, "allreduce", rank);
    int root_value = rank == 0 ? 4242 : 0;
    MPI_Bcast(&root_value, 1, MPI_INT, 0, MPI_COMM_WORLD);
    check(root_value == 4242, "bcast", rank);
    int mine = rank, most = -1;
    MPI_Reduce(&mine, &most, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0) check(most == size - 1, "reduce", rank);
    // MPI_MAX over three MPI_INT (12 B, not whole 64-bit words) and
    // MPI_MINLOC over MPI_DOUBLE_INT (a pair type, padded to 16 B; the odd
    // ranks tie): vrdmasim runs each with the program's operation and
    // datatype on its own data, and checks every rank's result.
    int three[3] = {rank, -rank, 7 * rank % 5}, top[3] = {0, 0, 0};
    MPI_Allreduce(three, top, 3, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    check(top[0] == size - 1 && top[1] == 0, "allreduce of MPI_MAX", rank);
    struct {
        double value;
        int index;
    } loc{rank % 2 ? 1.0 : 100.0 + rank, rank}, low{0.0, -1};
    MPI_Allreduce(&loc, &low, 1, MPI_DOUBLE_INT, MPI_MINLOC, MPI_COMM_WORLD);
    check(size < 2 || (low.value == 1.0 && low.index == 1), "allreduce of MPI_MINLOC", rank);
    // The program's own operation: timed with a stand-in, and said so.
    MPI_Op larger;
    MPI_Op_create(&keep_larger, 1, &larger);
    int most_too = -1;
    MPI_Allreduce(&mine, &most_too, 1, MPI_INT, larger, MPI_COMM_WORLD);
    MPI_Op_free(&larger);
    check(most_too == size - 1, "allreduce of a user-defined MPI_Op", rank);
    std::vector<int> all(size);
    MPI_Allgather(&mine, 1, MPI_INT, all.data(), 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; ++i) check(all[i] == i, "allgather", rank);
    std::vector<int> to(size), from(size);
    for (int i = 0; i < size; ++i) to[i] = rank * 100 + i;
    MPI_Alltoall(to.data(), 1, MPI_INT, from.data(), 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; ++i) check(from[i] == i * 100 + rank, "alltoall", rank);
    MPI_Barrier(MPI_COMM_WORLD);
    const double t2 = MPI_Wtime();
    int bad = 0;
    MPI_Allreduce(&failures, &bad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        std::printf("ring: %d ranks, %d B, %d rounds: %.3f us a round; collectives %.3f us\n", size, bytes, rounds,
                    (t1 - t0) * 1e6 / rounds, (t2 - t1) * 1e6);
        std::printf("ring: %s\n", bad ? "WRONG DATA" : "ok");
    }
    MPI_Finalize();
    return bad ? 1 : 0;
}
