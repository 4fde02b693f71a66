#include "src/cli/mpi_comm.hpp"

// The C interface only (not the deprecated C++ bindings of libmpi_cxx).
#define OMPI_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <limits>
#include <stdexcept>
#include <string>

namespace vrdmasim {

namespace {
void check(int rc, const char* what) {
    if (rc == MPI_SUCCESS) return;
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(rc, text, &len);
    throw std::runtime_error(std::string(what) + ": " + std::string(text, static_cast<std::size_t>(len)));
}

// Waits for a collective begun without blocking. A rank that arrives first
// waits for the others to finish their window: Open MPI's blocking
// collectives poll the whole time, taking a core from the ranks still
// simulating wherever ranks outnumber free cores (--oversubscribe, a
// shared machine). It polls for kSpin (a small window's wait, some tens of
// microseconds, costs what it did), then sleeps between polls, at most
// kNap (a wait of whole milliseconds, as a large cluster's window takes,
// ends at most that late). Host time only: what is exchanged, and so every
// figure, is the same.
void wait(MPI_Request& request, const char* what) {
    using Clock = std::chrono::steady_clock;
    constexpr auto kSpin = std::chrono::microseconds(100);
    constexpr long kNapNs = 200000;
    const Clock::time_point begun = Clock::now();
    long nap_ns = 10000;
    for (unsigned polls = 0;; ++polls) {
        int done = 0;
        check(MPI_Test(&request, &done, MPI_STATUS_IGNORE), what);
        if (done) return;
        if (polls % 64 != 63 || Clock::now() - begun < kSpin) continue;
        const timespec nap{0, nap_ns};
        ::nanosleep(&nap, nullptr);
        nap_ns = std::min(2 * nap_ns, kNapNs);
    }
}

int count_of(std::size_t n) {
    if (n > static_cast<std::size_t>(std::numeric_limits<int>::max()))
        throw std::runtime_error("a message between ranks of " + std::to_string(n) + " B, more than MPI counts");
    return static_cast<int>(n);
}
}   // namespace

MpiComm::MpiComm() {
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) check(MPI_Init(nullptr, nullptr), "MPI_Init");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int size = 1, rank = 0;
    check(MPI_Comm_size(MPI_COMM_WORLD, &size), "MPI_Comm_size");
    check(MPI_Comm_rank(MPI_COMM_WORLD, &rank), "MPI_Comm_rank");
    size_ = static_cast<unsigned>(size);
    rank_ = static_cast<unsigned>(rank);
}

MpiComm::~MpiComm() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized) MPI_Finalize();
}

std::vector<Bytes> MpiComm::exchange(const std::vector<Bytes>& out) {
    const int n = static_cast<int>(size_);
    std::vector<int> send_counts(size_), recv_counts(size_), send_displs(size_), recv_displs(size_);
    std::size_t total = 0;
    for (unsigned r = 0; r < size_; ++r) {
        send_counts[r] = count_of(out[r].size());
        send_displs[r] = count_of(total);
        total += out[r].size();
    }
    Bytes send;
    send.reserve(total);
    for (const Bytes& b : out) send.insert(send.end(), b.begin(), b.end());
    MPI_Request r;
    check(MPI_Ialltoall(send_counts.data(), 1, MPI_INT, recv_counts.data(), 1, MPI_INT, MPI_COMM_WORLD, &r),
          "MPI_Ialltoall");
    wait(r, "MPI_Ialltoall");
    std::size_t in_total = 0;
    for (int r = 0; r < n; ++r) {
        recv_displs[static_cast<std::size_t>(r)] = count_of(in_total);
        in_total += static_cast<std::size_t>(recv_counts[static_cast<std::size_t>(r)]);
    }
    Bytes recv(in_total);
    check(MPI_Ialltoallv(send.data(), send_counts.data(), send_displs.data(), MPI_BYTE, recv.data(), recv_counts.data(),
                         recv_displs.data(), MPI_BYTE, MPI_COMM_WORLD, &r),
          "MPI_Ialltoallv");
    wait(r, "MPI_Ialltoallv");
    std::vector<Bytes> in(size_);
    for (unsigned r = 0; r < size_; ++r)
        in[r].assign(recv.begin() + recv_displs[r], recv.begin() + recv_displs[r] + recv_counts[r]);
    return in;
}

std::vector<Bytes> MpiComm::allgather(const Bytes& mine) {
    std::vector<int> counts(size_), displs(size_);
    const int my = count_of(mine.size());
    MPI_Request r;
    check(MPI_Iallgather(&my, 1, MPI_INT, counts.data(), 1, MPI_INT, MPI_COMM_WORLD, &r), "MPI_Iallgather");
    wait(r, "MPI_Iallgather");
    std::size_t total = 0;
    for (unsigned r = 0; r < size_; ++r) {
        displs[r] = count_of(total);
        total += static_cast<std::size_t>(counts[r]);
    }
    Bytes all(total);
    check(MPI_Iallgatherv(mine.data(), my, MPI_BYTE, all.data(), counts.data(), displs.data(), MPI_BYTE, MPI_COMM_WORLD,
                          &r),
          "MPI_Iallgatherv");
    wait(r, "MPI_Iallgatherv");
    std::vector<Bytes> out(size_);
    for (unsigned r = 0; r < size_; ++r) out[r].assign(all.begin() + displs[r], all.begin() + displs[r] + counts[r]);
    return out;
}

std::uint64_t MpiComm::min(std::uint64_t v) {
    std::uint64_t m = v;
    MPI_Request r;
    check(MPI_Iallreduce(&v, &m, 1, MPI_UINT64_T, MPI_MIN, MPI_COMM_WORLD, &r), "MPI_Iallreduce");
    wait(r, "MPI_Iallreduce");
    return m;
}

bool MpiComm::all(bool ok) {
    int mine = ok ? 1 : 0, every = 0;
    MPI_Request r;
    check(MPI_Iallreduce(&mine, &every, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD, &r), "MPI_Iallreduce");
    wait(r, "MPI_Iallreduce");
    return every != 0;
}

void MpiComm::abort(int status) {
    MPI_Abort(MPI_COMM_WORLD, status);
    std::_Exit(status);
}

}   // namespace vrdmasim
