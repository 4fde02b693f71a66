// The program's clocks under vrdmasim: MPI_Wtime, clock_gettime and
// gettimeofday around a ping-pong read the same simulated time; then,
// when asked ("untimed"), a call the simulation does not time; "crash":
// rank 1 aborts (SIGABRT); "abort": rank 1 calls MPI_Abort with code 3;
// "deadlock": every rank receives a message no rank sends; "forever":
// the ping-pong again, until the run is stopped.
// usage: mpi_clock [untimed] [crash] [abort] [deadlock] [forever]
#include <mpi.h>
#include <sys/time.h>
#include <time.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    char buf[1024] = {};
    timespec m0{}, m1{};
    timeval g0{}, g1{};
    const double w0 = MPI_Wtime();
    clock_gettime(CLOCK_MONOTONIC, &m0);
    gettimeofday(&g0, nullptr);
    const bool forever = argc > 1 && !std::strcmp(argv[argc - 1], "forever");
    for (int i = 0; i < 10 || forever; ++i) {
        if (rank == 0) {
            MPI_Send(buf, sizeof buf, MPI_BYTE, 1, 0, MPI_COMM_WORLD);
            MPI_Recv(buf, sizeof buf, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(buf, sizeof buf, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(buf, sizeof buf, MPI_BYTE, 0, 0, MPI_COMM_WORLD);
        }
    }
    const double w1 = MPI_Wtime();
    clock_gettime(CLOCK_MONOTONIC, &m1);
    gettimeofday(&g1, nullptr);
    if (rank == 0) {
        std::printf("clock: wtime %.9f s, monotonic %.9f s, gettimeofday %.6f s, epoch %ld\n", w1 - w0,
                    (m1.tv_sec - m0.tv_sec) + (m1.tv_nsec - m0.tv_nsec) * 1e-9,
                    (g1.tv_sec - g0.tv_sec) + (g1.tv_usec - g0.tv_usec) * 1e-6, static_cast<long>(g1.tv_sec));
        std::fflush(stdout);
    }
    for (int i = 1; i < argc; ++i) {
        if (!std::strcmp(argv[i], "untimed")) {
            // Shared memory is per node in the simulation, per host in real
            // MPI: not a communicator the two agree on.
            MPI_Comm shared;
            MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shared);
            MPI_Comm_free(&shared);
        }
        if (!std::strcmp(argv[i], "crash") && rank == 1) std::abort();
        if (!std::strcmp(argv[i], "abort") && rank == 1) MPI_Abort(MPI_COMM_WORLD, 3);
        if (!std::strcmp(argv[i], "deadlock"))
            MPI_Recv(buf, sizeof buf, MPI_BYTE, MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    }
    MPI_Finalize();
    return 0;
}
