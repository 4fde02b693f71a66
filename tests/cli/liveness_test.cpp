// Liveness properties of the whole simulator: runs that must finish do.
//
// A lost wake-up (a process waiting on an event notified before it started
// to wait, or a quantum keeper that never syncs) does not crash the
// simulator: the run just stalls until sim.time-limit and exits 1. Such bugs
// hid behind particular message sizes (with 256 B packets: 257-288 B,
// 305-480 B, 545-576 B, 609-640 B), windows (2: about 400 B-1.5 KB) and
// quanta (1ms: the default stream; 100us: alltoall), so these tests sweep
// those dimensions densely rather than sampling a few points.
//
// Each run is the built binary's `vrdmasim run` (VRDMASIM_EXE), a child
// process of its `run-batch` in a fresh temporary directory, with a
// sim.time-limit far above what the run needs,
// so that a hang fails fast (exit 1) instead of taking the default 10 s. A
// run passes when it exits 0 and its summary.csv shows every transfer done,
// none failed and every delivered byte verified. Each stream run moves
// about 160 messages: the hangs showed after tens to a hundred-odd messages
// (section 3's sendrecv runs: 32 per job).
//
// Set VRDMASIM_KEEP_TEST_DIRS=1 to keep the temporary directories.
#include <catch2/catch.hpp>

#include "temp_dir.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "src/core/csv.hpp"

#ifndef VRDMASIM_EXE
#error "VRDMASIM_EXE must name the vrdmasim binary under test"
#endif

namespace fs = std::filesystem;

namespace {

// A fresh directory for each test (tests/temp_dir.hpp).
struct TempDir : vrdmasim_test::TempDir {
    TempDir() : vrdmasim_test::TempDir("vrdmasim-liveness") {}
};

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

// The command as one would type it, for failure messages.
std::string command_line(const std::vector<std::string>& argv) {
    std::string s;
    for (const auto& a : argv) s += (s.empty() ? "" : " ") + a;
    return s;
}

// Runs VRDMASIM_EXE with `args` in `dir`, stdout and stderr to dir/output.
// No shell. Returns the exit status, 128 + signal if killed; a child that
// runs for more than five minutes of host time is killed (SIGALRM survives
// exec), with every process of its group (a batch's runs).
int spawn(const std::vector<std::string>& argv_s, const fs::path& dir) {
    std::vector<std::string> args = argv_s;
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const std::string cwd = dir.string(), output = (dir / "output").string();

    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        // Only async-signal-safe calls between fork and exec.
        const int in = open("/dev/null", O_RDONLY);
        const int out = open(output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0) _exit(125);
        if (chdir(cwd.c_str()) != 0) _exit(126);
        setpgid(0, 0);
        alarm(300);
        execv(argv[0], argv.data());
        _exit(127);
    }
    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0)
        if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    // A batch ended by its alarm leaves the run it was waiting for: its
    // process group goes with it.
    if (WIFSIGNALED(wstatus)) kill(-pid, SIGKILL);
    if (WIFEXITED(wstatus)) return WEXITSTATUS(wstatus);
    if (WIFSIGNALED(wstatus)) return 128 + WTERMSIG(wstatus);
    return -1;
}

// What one run must show.
struct Expect {
    std::uint64_t transfers = 0;
    std::uint64_t bytes = 0;   // bytes_delivered
    std::uint64_t jobs_bytes = 0;   // jobs_bytes_delivered, every job's (0: not checked)
};

// One run: its parameters (--section.key=value) and what it must show.
struct Run {
    std::vector<std::string> params;
    Expect expect;
};

// Checks that the run `argv` (its exit status, its output at `out`, what it
// printed in `log`) finished and moved and verified what `expect` says.
// Sections it in CHECKs naming the command, so that a failing case lists
// every failing command and goes on with the others.
void check_ended(const std::vector<std::string>& argv, int status, const fs::path& out, const fs::path& log,
                 const Expect& expect) {
    INFO("command: " << command_line(argv));
    INFO("output:\n" << slurp(log) << slurp(out / "error.txt"));
    CHECK(status == 0);
    if (status != 0) return;

    const auto rows = vrdmasim::read_csv_file((out / "summary.csv").string());
    REQUIRE(rows.size() == 2);
    REQUIRE(rows[0].size() == rows[1].size());
    std::map<std::string, std::string> row;
    for (std::size_t i = 0; i < rows[0].size(); ++i) row[rows[0][i]] = rows[1][i];
    auto count = [&](const std::string& col) -> std::uint64_t {
        const auto it = row.find(col);
        if (it == row.end()) FAIL("summary.csv has no column " << col);
        return std::stoull(it->second);
    };
    CHECK(count("transfers") == expect.transfers);
    CHECK(count("transfer_errors") == 0);
    CHECK(count("bytes_delivered") == expect.bytes);
    CHECK(count("bytes_verified") == count("bytes_delivered"));
    CHECK(count("data_mismatches") == 0);
    if (expect.jobs_bytes) CHECK(count("jobs_bytes_delivered") == expect.jobs_bytes);
}

// Runs each of `runs` as `vrdmasim run --quiet --out DIR PARAMS...`, one at
// a time, through `vrdmasim run-batch`: each run is the process that
// command would be, forked from one that has only declared the parameters,
// without the executable's start (its libraries loaded and initialised:
// half a small run's host time, 13 ms of CPU a run against 6, 2026-11-30).
// Then checks each (check_ended).
void check_runs(const std::vector<Run>& runs) {
    TempDir tmp;
    const fs::path list = tmp.path() / "runs.txt", logs = tmp.path() / "logs";
    fs::create_directory(logs);
    std::vector<std::vector<std::string>> argvs;
    {
        std::ofstream f(list);
        for (std::size_t i = 0; i < runs.size(); ++i) {
            std::vector<std::string> argv{VRDMASIM_EXE, "run", "--quiet", "--out",
                                          (tmp.path() / ("out" + std::to_string(i))).string()};
            argv.insert(argv.end(), runs[i].params.begin(), runs[i].params.end());
            for (std::size_t w = 2; w < argv.size(); ++w) f << (w > 2 ? "\t" : "") << argv[w];
            f << "\n";
            argvs.push_back(argv);
        }
    }
    const int status = spawn({VRDMASIM_EXE, "run-batch", list.string(), "--logs", logs.string()}, tmp.path());
    const std::string printed = slurp(tmp.path() / "output");
    {
        INFO("vrdmasim run-batch:\n" << printed);
        REQUIRE(status == 0);
    }
    // "N exit S" or "N signal K" as each run ends.
    std::map<std::size_t, int> ended;
    std::istringstream lines(printed);
    for (std::string how; lines;) {
        std::size_t n = 0;
        int value = 0;
        if (lines >> n >> how >> value) ended[n] = how == "exit" ? value : 128 + value;
    }
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const auto it = ended.find(i);
        check_ended(argvs[i], it == ended.end() ? -1 : it->second, tmp.path() / ("out" + std::to_string(i)),
                    logs / (std::to_string(i) + ".log"), runs[i].expect);
    }
}

// Long enough for every run below (the largest takes a few ms of simulated
// time), short enough that a hang fails in a fraction of a second of host time.
const std::string kTimeLimit = "--sim.time-limit=50ms";

// Messages per stream run.
constexpr std::uint64_t kMessages = 160;

// A stream of kMessages messages of `size` bytes from node 0 to node 1.
Run stream(std::uint64_t size, unsigned window, const std::string& quantum = "1us",
           std::uint64_t messages = kMessages) {
    const std::uint64_t total = size * messages;
    return {{"--workload.kind=stream", "--workload.message-size=" + std::to_string(size),
             "--workload.total-bytes=" + std::to_string(total), "--workload.window=" + std::to_string(window),
             "--sim.quantum=" + quantum, kTimeLimit},
            {messages, total}};
}

void check_sizes(std::uint64_t from, std::uint64_t to) {
    std::vector<Run> runs;
    for (std::uint64_t size = from; size <= to; ++size) runs.push_back(stream(size, 1));
    check_runs(runs);
}

// Every value of sim.quantum's declared range 1ns..1ms, by decades.
const std::vector<std::string> kQuanta{"1ns", "10ns", "100ns", "1us", "10us", "100us", "1ms"};

}   // namespace

// ===========================================================================
// 1. Every message size up to 4 packets (packets are 256 B), window 1.

TEST_CASE("stream of every message size 1-128 B finishes", "[liveness][size]") { check_sizes(1, 128); }
TEST_CASE("stream of every message size 129-256 B finishes", "[liveness][size]") { check_sizes(129, 256); }
TEST_CASE("stream of every message size 257-384 B finishes", "[liveness][size]") { check_sizes(257, 384); }
TEST_CASE("stream of every message size 385-512 B finishes", "[liveness][size]") { check_sizes(385, 512); }
TEST_CASE("stream of every message size 513-640 B finishes", "[liveness][size]") { check_sizes(513, 640); }
TEST_CASE("stream of every message size 641-768 B finishes", "[liveness][size]") { check_sizes(641, 768); }
TEST_CASE("stream of every message size 769-896 B finishes", "[liveness][size]") { check_sizes(769, 896); }
TEST_CASE("stream of every message size 897-1024 B finishes", "[liveness][size]") { check_sizes(897, 1024); }

TEST_CASE("stream of sampled message sizes above 1 KiB finishes", "[liveness][size]") {
    std::vector<Run> runs;
    for (std::uint64_t size : {1025, 1500, 2047, 2048, 4095, 4096, 4097, 10000, 65536, 65537})
        runs.push_back(stream(size, 1));
    check_runs(runs);
}

// ===========================================================================
// 2. Windows 1-16 for sizes in and around the sizes that hung.

namespace {
void check_windows(std::uint64_t size) {
    std::vector<Run> runs;
    for (unsigned window = 1; window <= 16; ++window) runs.push_back(stream(size, window));
    check_runs(runs);
}
}   // namespace

TEST_CASE("stream of 64 B messages finishes with every window 1-16", "[liveness][window]") { check_windows(64); }
TEST_CASE("stream of 257 B messages finishes with every window 1-16", "[liveness][window]") { check_windows(257); }
TEST_CASE("stream of 400 B messages finishes with every window 1-16", "[liveness][window]") { check_windows(400); }
TEST_CASE("stream of 512 B messages finishes with every window 1-16", "[liveness][window]") { check_windows(512); }
TEST_CASE("stream of 1000 B messages finishes with every window 1-16", "[liveness][window]") { check_windows(1000); }
TEST_CASE("stream of 1500 B messages finishes with every window 1-16", "[liveness][window]") { check_windows(1500); }
TEST_CASE("stream of 4096 B messages finishes with every window 1-16", "[liveness][window]") { check_windows(4096); }

// ===========================================================================
// 3. Two-sided send/receive with several processes per node.
//
// Each job (process p of each node) runs its own sendrecv; the processes
// share the node's 4 cores (cpu.cores), and with rdma.completion = poll each
// spins on a core while it waits. With more processes than cores the
// spinning, booked on the cores once over, used to be placed behind the
// work that had taken the cores meanwhile, into the future: every later
// piece of the node's work waited for spins already over, which made the
// waits longer, and the cores' backlog grew without bound (8 processes: the
// default latency test took 16 s of simulated time instead of 70 ms; 16:
// three round trips in 100 s; docs/os.md "CpuCores"). Sizes on
// both sides of msg.eager-threshold (2 KiB): eager, the largest eager, the
// smallest rendezvous, a rendezvous of several packets; the rendezvous by
// RDMA write (the default) and by RDMA read. 16 messages each way: the
// backlog took 8 processes past the time limit from about 10 round trips
// on. The largest run needs about 6 ms of simulated time.

namespace {
const std::vector<unsigned> kProcesses{1, 2, 4, 8, 16};
const std::vector<std::uint64_t> kSendrecvSizes{64, 2048, 2049, 16384};
constexpr std::uint64_t kSendrecvMessages = 16;

std::vector<std::string> sendrecv_args(const std::string& test, unsigned processes, std::uint64_t size,
                                       const std::string& rendezvous) {
    return {"--workload.kind=sendrecv",
            "--workload.sendrecv-test=" + test,
            "--node.processes=" + std::to_string(processes),
            "--workload.message-size=" + std::to_string(size),
            "--msg.rendezvous=" + rendezvous,
            kTimeLimit};
}

// The latency test: kSendrecvMessages round trips of `size` bytes; job 0's
// figures count both directions, and every job's bytes are checked.
Run sendrecv_latency(unsigned processes, std::uint64_t size, const std::string& rendezvous = "write") {
    const std::uint64_t bytes = 2 * kSendrecvMessages * size;
    std::vector<std::string> args = sendrecv_args("latency", processes, size, rendezvous);
    args.push_back("--workload.iterations=" + std::to_string(kSendrecvMessages));
    return {args, {2 * kSendrecvMessages, bytes, processes * bytes}};
}

// The bandwidth test: kSendrecvMessages isends of `size` bytes, 4 at a time.
Run sendrecv_bandwidth(unsigned processes, std::uint64_t size) {
    const std::uint64_t bytes = kSendrecvMessages * size;
    std::vector<std::string> args = sendrecv_args("bandwidth", processes, size, "write");
    args.push_back("--workload.total-bytes=" + std::to_string(bytes));
    args.push_back("--workload.window=4");
    return {args, {kSendrecvMessages, bytes, processes * bytes}};
}
}   // namespace

TEST_CASE("sendrecv latency finishes with 1-16 processes per node, eager and rendezvous",
          "[liveness][sendrecv][procs]") {
    std::vector<Run> runs;
    for (unsigned p : kProcesses)
        for (std::uint64_t size : kSendrecvSizes) runs.push_back(sendrecv_latency(p, size));
    check_runs(runs);
}

TEST_CASE("sendrecv latency by the read rendezvous finishes with 1-16 processes per node",
          "[liveness][sendrecv][procs]") {
    std::vector<Run> runs;
    for (unsigned p : kProcesses)
        for (std::uint64_t size : {2049, 16384}) runs.push_back(sendrecv_latency(p, size, "read"));
    check_runs(runs);
}

TEST_CASE("sendrecv bandwidth finishes with 1-16 processes per node, eager and rendezvous",
          "[liveness][sendrecv][procs]") {
    std::vector<Run> runs;
    for (unsigned p : kProcesses)
        for (std::uint64_t size : kSendrecvSizes) runs.push_back(sendrecv_bandwidth(p, size));
    check_runs(runs);
}

// ===========================================================================
// 4. Every decade of sim.quantum, for each workload shape.

TEST_CASE("the default stream, shrunk, finishes at every quantum 1ns-1ms", "[liveness][quantum]") {
    // configs/default.ini with 2 MiB instead of 16 MiB: 32 messages of 64 KiB, window 4.
    std::vector<Run> runs;
    for (const auto& q : kQuanta) runs.push_back(stream(64 * 1024, 4, q, 32));
    check_runs(runs);
}

TEST_CASE("alltoall finishes at every quantum 1ns-1ms", "[liveness][quantum]") {
    // configs/alltoall.ini with 4 KiB messages and 10 rounds: 4 x 3 x 10 writes.
    std::vector<Run> runs;
    for (const auto& q : kQuanta)
        runs.push_back(
            {{"--topology.kind=qfdb", "--topology.nodes=4", "--workload.kind=alltoall", "--workload.message-size=4KiB",
              "--workload.iterations=10", "--workload.window=4", "--sim.quantum=" + q, kTimeLimit},
             {4 * 3 * 10, 4 * 3 * 10 * 4096}});
    check_runs(runs);
}

TEST_CASE("pingpong finishes at every quantum 1ns-1ms", "[liveness][quantum]") {
    // configs/pingpong.ini with 80 iterations: two 64 B transfers each.
    std::vector<Run> runs;
    for (const auto& q : kQuanta)
        runs.push_back({{"--workload.kind=pingpong", "--workload.message-size=64B", "--workload.iterations=80",
                         "--sim.quantum=" + q, kTimeLimit},
                        {2 * 80, 2 * 80 * 64}});
    check_runs(runs);
}
