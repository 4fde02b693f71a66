#include "workloads/mpi/preload/channel.hpp"
#include "workloads/mpi/preload/residency.hpp"

#include <dlfcn.h>
#include <poll.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace vrdmasim {
namespace mpipreload {

namespace {

struct State {
    int fd = -1;
    int rank = 0;
    std::uint64_t sim_ps = 0;   // the last reply's time
    std::uint64_t cpu_ns = 0;   // host CPU time of this thread at the last mark
    enum class Compute { None, Fixed, Measured } compute = Compute::None;
    std::uint64_t fixed_ps = 0;
    double scale = 1;
    std::uint64_t still_reads = 0;   // clock reads since the last call (none, fixed: the clock stands still)
    bool count_untimed = false;
    struct Kept {
        MPI_Request r;
        void* copy;
    };
    std::vector<Kept> kept;
    std::vector<MPI_Comm> to_free;   // free_later()
    std::vector<std::uint64_t> unmapped, touched;   // the program's memory since its last call (residency.hpp)
    // A communicator no message is ever sent on: a probe of it always
    // drives real MPI's progress (one of MPI_COMM_WORLD returns at once,
    // without progress, while a message waits there unreceived).
    MPI_Comm quiet = MPI_COMM_NULL;
};

// Clock reads between two calls that mean the program waits for a clock
// that stands still (now_ps()).
constexpr std::uint64_t kStillReads = 10000000;

State& state() {
    static State s;
    return s;
}

template <typename F>
F next_symbol(const char* name) {
    void* f = dlsym(RTLD_NEXT, name);
    if (!f) {
        std::fprintf(stderr, "vrdmasim preload: no %s in the C library\n", name);
        std::abort();
    }
    return reinterpret_cast<F>(f);
}

std::uint64_t thread_cpu_ns() {
    timespec ts{};
    real_clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return static_cast<std::uint64_t>(ts.tv_sec) * 1000000000ull + static_cast<std::uint64_t>(ts.tv_nsec);
}

void read_settings(State& s) {
    const char* c = std::getenv(mpiwire::kComputeEnv);
    const std::string compute = c ? c : "none";
    if (compute == "none") {
        s.compute = State::Compute::None;
    } else if (compute.rfind("fixed:", 0) == 0) {
        s.compute = State::Compute::Fixed;
        s.fixed_ps = std::strtoull(compute.c_str() + 6, nullptr, 10);
    } else if (compute.rfind("measured:", 0) == 0) {
        s.compute = State::Compute::Measured;
        s.scale = std::strtod(compute.c_str() + 9, nullptr);
    } else {
        fail(("bad " + std::string(mpiwire::kComputeEnv) + " '" + compute + "'").c_str());
    }
    const char* u = std::getenv(mpiwire::kUntimedEnv);
    s.count_untimed = u && std::string(u) == "count";
}

// The compute charged since the last mark, in picoseconds.
std::uint64_t compute_since(const State& s, std::uint64_t host_ns) {
    switch (s.compute) {
    case State::Compute::None: return 0;
    case State::Compute::Fixed: return s.fixed_ps;
    case State::Compute::Measured: return static_cast<std::uint64_t>(static_cast<double>(host_ns) * 1000 * s.scale);
    }
    return 0;
}

void write_all(int fd, const void* p, std::size_t n) {
    const char* b = static_cast<const char*>(p);
    while (n) {
        const ssize_t w = ::write(fd, b, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) fail("the simulation's socket closed (vrdmasim stopped)");
        b += w;
        n -= static_cast<std::size_t>(w);
    }
}

// Read exactly n bytes, progressing the real MPI while nothing has come.
void read_all(int fd, void* p, std::size_t n) {
    char* b = static_cast<char*>(p);
    while (n) {
        pollfd pf{fd, POLLIN, 0};
        const int ready = ::poll(&pf, 1, 2);
        if (ready < 0 && errno == EINTR) continue;
        if (ready == 0) {
            progress();
            continue;
        }
        const ssize_t r = ::read(fd, b, n);
        if (r < 0 && (errno == EINTR || errno == EAGAIN)) continue;
        if (r <= 0) fail("the simulation's socket closed (vrdmasim stopped)");
        b += r;
        n -= static_cast<std::size_t>(r);
    }
}

}   // namespace

int real_clock_gettime(clockid_t id, struct timespec* ts) {
    static const auto f = next_symbol<int (*)(clockid_t, struct timespec*)>("clock_gettime");
    return f(id, ts);
}

int real_gettimeofday(struct timeval* tv, void* tz) {
    static const auto f = next_symbol<int (*)(struct timeval*, void*)>("gettimeofday");
    return f(tv, tz);
}

void fail(const char* what) {
    std::fprintf(stderr, "vrdmasim preload (rank %d): %s\n", state().rank, what);
    std::fflush(stderr);
    std::_Exit(70);
}

bool connected() { return state().fd >= 0; }

void connect(int rank, int size) {
    State& s = state();
    s.rank = rank;
    PMPI_Comm_dup(MPI_COMM_WORLD, &s.quiet);   // every rank, in MPI_Init: before any call is timed
    const char* path = std::getenv(mpiwire::kSocketEnv);
    if (!path) fail("not started by vrdmasim (no VRDMASIM_MPI_SOCKET): run the program with workload.kind = mpi");
    read_settings(s);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    if (std::strlen(path) >= sizeof addr.sun_path) fail("the simulation's socket path is too long");
    std::strcpy(addr.sun_path, path);
    if (fd < 0 || ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
        fail(("cannot connect to the simulation at " + std::string(path) + ": " + std::strerror(errno)).c_str());
    s.fd = fd;
    mpiwire::Call hello;
    hello.op = static_cast<std::uint32_t>(mpiwire::Op::Hello);
    hello.peer = rank;
    hello.tag = size;
    hello.bytes = static_cast<std::uint64_t>(::getpid());
    hello.request = mpiwire::kVersion;
    write_all(fd, &hello, sizeof hello);
    mpiwire::Reply r;
    read_all(fd, &r, sizeof r);
    if (r.error) fail("the simulation refused this process");
    s.sim_ps = r.time_ps;
    const char* memory = std::getenv(mpiwire::kMemoryEnv);
    if (memory && std::string(memory) == "observed") watch();
    mark();
}

namespace {
mpiwire::Reply send_and_wait(const mpiwire::Call& c, const std::uint64_t* ids,
                             const std::vector<std::uint64_t>* unmapped = nullptr,
                             const std::vector<std::uint64_t>* touched = nullptr) {
    State& s = state();
    write_all(s.fd, &c, sizeof c);
    if (c.count) write_all(s.fd, ids, c.count * sizeof *ids);
    if (c.unmapped_runs) write_all(s.fd, unmapped->data(), unmapped->size() * sizeof(std::uint64_t));
    if (c.touched_runs) write_all(s.fd, touched->data(), touched->size() * sizeof(std::uint64_t));
    mpiwire::Reply r;
    read_all(s.fd, &r, sizeof r);
    if (r.error) {
        // The simulation stopped the run (it says why): leave without MPI's
        // own teardown, which would wait for ranks that will not come.
        std::_Exit(71);
    }
    s.sim_ps = r.time_ps;
    return r;
}
}   // namespace

mpiwire::Reply exchange(mpiwire::Call c, const std::uint64_t* ids) {
    State& s = state();
    if (s.fd < 0) fail("an MPI call before MPI_Init or after MPI_Finalize");
    const std::uint64_t now = thread_cpu_ns();
    c.host_ns = now - s.cpu_ns;
    c.compute_ps = compute_since(s, c.host_ns);
    since_last_call(s.unmapped, s.touched);
    c.unmapped_runs = s.unmapped.size() / 2;
    c.touched_runs = s.touched.size() / 2;
    return send_and_wait(c, ids, &s.unmapped, &s.touched);
}

mpiwire::Reply question(mpiwire::Call c) {
    if (state().fd < 0) fail("a question before MPI_Init or after MPI_Finalize");
    c.host_ns = c.compute_ps = c.count = c.unmapped_runs = c.touched_runs = 0;
    return send_and_wait(c, nullptr);
}

void (*at_mark)() = nullptr;

void mark() {
    if (at_mark) at_mark();
    settle();   // what real MPI wrote in the call is not the program's touch
    state().cpu_ns = thread_cpu_ns();
    state().still_reads = 0;
}

std::uint64_t now_ps() {
    State& s = state();
    if (s.compute != State::Compute::Measured) {
        // Between two MPI calls the clock stands still in these modes: a
        // program that waits for it to move (a timer's resolution check,
        // a loop timed by the clock) would wait for ever.
        if (++s.still_reads == kStillReads)
            fail(("the program read its clock " + std::to_string(kStillReads) +
                  " times between two MPI calls, and under mpi.compute = " +
                  (s.compute == State::Compute::None ? "none" : "fixed") +
                  " its clock moves only at MPI calls: it is waiting for the clock to move (a timer's "
                  "resolution check, a loop timed by the clock). Run it with mpi.compute = measured "
                  "(workloads/mpi/README.md \"Time\")")
                     .c_str());
        return s.sim_ps;
    }
    return s.sim_ps + compute_since(s, thread_cpu_ns() - s.cpu_ns);
}

void untimed(const char* name) {
    mpiwire::Call c;
    c.op = static_cast<std::uint32_t>(mpiwire::Op::Untimed);
    std::strncpy(c.name, name, sizeof c.name - 1);
    exchange(c);   // refused: the simulation stops the run, and this never returns
    mark();
}

void cannot_run(const char* name, std::int32_t why) {
    mpiwire::Call c;
    c.op = static_cast<std::uint32_t>(mpiwire::Op::Untimed);
    c.tag = why;
    std::strncpy(c.name, name, sizeof c.name - 1);
    exchange(c);   // the simulation stops the run: this never returns
    fail((std::string(name) + ": the simulation let a call through that it must refuse").c_str());
}

void keep(MPI_Request r, void* copy) {
    if (r == MPI_REQUEST_NULL) {
        std::free(copy);
        return;
    }
    state().kept.push_back({r, copy});
}

namespace {
void free_comms() {
    for (MPI_Comm& c : state().to_free) PMPI_Comm_free(&c);
    state().to_free.clear();
}
}   // namespace

void progress() {
    auto& kept = state().kept;
    if (kept.empty()) {
        int flag = 0;   // drives the real MPI's progress engine
        PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, state().quiet, &flag, MPI_STATUS_IGNORE);
        return;
    }
    for (std::size_t i = 0; i < kept.size();) {
        int done = 0;
        PMPI_Test(&kept[i].r, &done, MPI_STATUS_IGNORE);
        if (done) {
            std::free(kept[i].copy);
            kept[i] = kept.back();
            kept.pop_back();
        } else {
            ++i;
        }
    }
    if (kept.empty()) free_comms();
}

void free_later(MPI_Comm comm) {
    state().to_free.push_back(comm);
    if (state().kept.empty()) free_comms();
}

void drain() {
    for (auto& k : state().kept) {
        PMPI_Wait(&k.r, MPI_STATUS_IGNORE);
        std::free(k.copy);
    }
    state().kept.clear();
    free_comms();
    if (state().quiet != MPI_COMM_NULL) PMPI_Comm_free(&state().quiet);
}

const void* copy_of(const void* buf, int count, MPI_Datatype type, void** owned) {
    std::uint64_t va = 0, len = 0;
    span(buf, count, type, va, len);
    void* c = std::malloc(len ? len : 1);
    if (!c)
        fail(("out of host memory for a send's copy: " + std::to_string(data_bytes(count, type)) +
              " B of data that span " + std::to_string(len) + " B from " + std::to_string(va))
                 .c_str());
    if (len) std::memcpy(c, reinterpret_cast<const void*>(va), len);
    *owned = c;
    return static_cast<const char*>(c) - (va - reinterpret_cast<std::uint64_t>(buf));
}

std::uint64_t data_bytes(int count, MPI_Datatype type) {
    int size = 0;
    PMPI_Type_size(type, &size);
    return static_cast<std::uint64_t>(count < 0 ? 0 : count) * static_cast<std::uint64_t>(size);
}

void span(const void* buf, int count, MPI_Datatype type, std::uint64_t& va, std::uint64_t& len) {
    MPI_Aint lb = 0, extent = 0, true_lb = 0, true_extent = 0;
    PMPI_Type_get_extent(type, &lb, &extent);
    PMPI_Type_get_true_extent(type, &true_lb, &true_extent);
    va = reinterpret_cast<std::uint64_t>(buf) + static_cast<std::uint64_t>(true_lb);
    len = count <= 0 ? 0 : static_cast<std::uint64_t>((count - 1) * extent + true_extent);
}

}   // namespace mpipreload
}   // namespace vrdmasim
