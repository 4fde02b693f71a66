// The program's clocks read simulated time (workloads/mpi/README.md
// "Time"): clock_gettime, gettimeofday and time answer the rank's simulated
// time when the program calls them, and the host's when MPI's own
// libraries do (their progress engines and timeouts run in host time).
// Simulated time starts at 0 at MPI_Init; the wall clocks
// (CLOCK_REALTIME, gettimeofday) add a fixed epoch, 2026-01-01 00:00 UTC,
// so that two runs print the same dates.
#include <sys/time.h>
#include <time.h>

#include <cstdint>

#include "workloads/mpi/preload/channel.hpp"
#include "workloads/mpi/preload/libraries.hpp"

using namespace vrdmasim::mpipreload;

namespace {

constexpr std::uint64_t kEpoch = 1767225600;   // 2026-01-01T00:00:00Z, in seconds

bool simulated_clock(clockid_t id) {
    return id == CLOCK_REALTIME || id == CLOCK_MONOTONIC || id == CLOCK_MONOTONIC_RAW || id == CLOCK_REALTIME_COARSE ||
           id == CLOCK_MONOTONIC_COARSE || id == CLOCK_BOOTTIME;
}

}   // namespace

extern "C" {

int clock_gettime(clockid_t id, struct timespec* ts) {
    if (!connected() || !simulated_clock(id) || mpi_caller(__builtin_return_address(0)))
        return real_clock_gettime(id, ts);
    const std::uint64_t ps = now_ps();
    const bool wall = id == CLOCK_REALTIME || id == CLOCK_REALTIME_COARSE;
    ts->tv_sec = static_cast<time_t>(ps / 1000000000000ull + (wall ? kEpoch : 0));
    ts->tv_nsec = static_cast<long>(ps % 1000000000000ull / 1000);
    return 0;
}

int gettimeofday(struct timeval* tv, void* tz) {
    if (!connected() || mpi_caller(__builtin_return_address(0))) return real_gettimeofday(tv, tz);
    const std::uint64_t ps = now_ps();
    tv->tv_sec = static_cast<time_t>(ps / 1000000000000ull + kEpoch);
    tv->tv_usec = static_cast<suseconds_t>(ps % 1000000000000ull / 1000000);
    return 0;
}

time_t time(time_t* out) {
    time_t t = 0;
    if (!connected() || mpi_caller(__builtin_return_address(0))) {
        struct timespec ts;
        real_clock_gettime(CLOCK_REALTIME, &ts);
        t = ts.tv_sec;
    } else {
        t = static_cast<time_t>(now_ps() / 1000000000000ull + kEpoch);
    }
    if (out) *out = t;
    return t;
}

}   // extern "C"
