// `vrdmasim bench --kernel`: what SystemC's scheduler alone costs a timed
// wake-up as a system grows, with no model at all (bench.hpp).
//
// A run of vrdmasim spends part of each packet in SystemC: the timed event
// a wait(t) or a notify(t) puts in the kernel's queue, and the switch to
// the stack of the thread it wakes. On a large torus those touch memory
// spread over the whole process (one stack and one process object per
// thread, the queue's events), and the host's caches and TLBs see that as
// they see the models' own state. This bench measures it apart: P
// processes, each waking at pseudo-random times 1 to 1,000 ns apart, as
// SC_METHODs (the queue and the process objects, no stack) and as
// SC_THREADs (the same, plus a switch to the thread's stack, which it
// touches `stack-bytes` deep below its wait, as a model's call chain
// does). Each P in its own process (SystemC allows one elaboration a
// process), through `vrdmasim bench-kernel`.
#include "src/tools/bench.hpp"
#include "src/tools/bench_detail.hpp"

#include <chrono>
#include <cmath>
#include <cstdint>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <systemc>

namespace vrdmasim {

namespace {

std::uint64_t g_left = 0;   // wake-ups still to make; at 0 the run stops
bool g_timing = false;   // past every process's first activation
std::size_t g_stack_bytes = 0;

// The next pseudo-random gap, 1 to 1,000 ns (a linear congruential step:
// the same sequence every run, a different one per process).
inline sc_core::sc_time next_gap(std::uint32_t& seed) {
    seed = seed * 1664525u + 1013904223u;
    return sc_core::sc_time(static_cast<double>(1 + (seed >> 8) % 1000), sc_core::SC_NS);
}

inline bool count_wakeup() {
    if (g_left == 0) return false;
    if (--g_left == 0) sc_core::sc_stop();
    return true;
}

// Waits `stack-bytes` below where the thread loops: each wake-up returns
// through that much of its stack, as a model's thread does through its
// call chain.
__attribute__((noinline)) void wait_deep(std::size_t bytes, std::uint32_t& seed) {
    if (bytes >= 256) {
        volatile char frame[256];
        frame[0] = static_cast<char>(seed);
        wait_deep(bytes - 256, seed);
        frame[255] = frame[0];
        return;
    }
    sc_core::wait(next_gap(seed));
}

struct Waker : sc_core::sc_module {
    std::uint32_t seed;
    Waker(const sc_core::sc_module_name& n, std::uint32_t s, bool thread) : sc_module(n), seed(s) {
        SC_HAS_PROCESS(Waker);
        if (thread) {
            SC_THREAD(thread_loop);
        } else {
            SC_METHOD(method_step);
        }
    }
    void thread_loop() {
        for (;;) {
            wait_deep(g_stack_bytes, seed);
            if (!count_wakeup()) return;
        }
    }
    void method_step() {
        if (g_timing && !count_wakeup()) return;
        next_trigger(next_gap(seed));
    }
};

constexpr unsigned kThreadsPerNode = 5;
constexpr long kWakeups = 2000000;
constexpr std::size_t kStackBytes = 2048;

}   // namespace

int bench_kernel_child_command(const std::vector<std::string>& args) {
    namespace po = boost::program_options;
    po::options_description opts("bench-kernel options");
    opts.add_options()("help,h", "show this help")("processes", po::value<std::string>()->value_name("P"),
                                                   "processes waking (>= 1)")(
        "kind", po::value<std::string>()->value_name("KIND"), "method or thread")(
        "wakeups", po::value<std::string>()->value_name("N"), "wake-ups to time (>= 1)")(
        "stack-bytes", po::value<std::string>()->value_name("B"), "threads: stack touched below each wait");
    po::variables_map vm;
    const int rc = bench_detail::parse_options(
        "bench-kernel", args, opts,
        "usage: vrdmasim bench-kernel --processes P --kind method|thread --wakeups N [--stack-bytes B]\n", vm);
    if (rc >= 0) return rc;
    long processes = 0, wakeups = 0, stack = 0;
    try {
        if (!vm.count("processes") || !vm.count("kind") || !vm.count("wakeups"))
            throw std::invalid_argument("--processes, --kind and --wakeups are needed");
        processes = bench_detail::parse_whole("--processes", vm["processes"].as<std::string>(), 1, 1000000);
        wakeups = bench_detail::parse_whole("--wakeups", vm["wakeups"].as<std::string>(), 1, 1000000000000L);
        if (vm.count("stack-bytes"))
            stack = bench_detail::parse_whole("--stack-bytes", vm["stack-bytes"].as<std::string>(), 0, 65536);
        const std::string kind = vm["kind"].as<std::string>();
        if (kind != "method" && kind != "thread") throw std::invalid_argument("--kind " + kind + ": method or thread");
    } catch (const std::invalid_argument& e) {
        std::cerr << "vrdmasim: error: bench-kernel: " << e.what() << "\n";
        return 2;
    }
    const bool thread = vm["kind"].as<std::string>() == "thread";
    g_stack_bytes = static_cast<std::size_t>(stack);
    std::vector<std::unique_ptr<Waker>> wakers;
    wakers.reserve(static_cast<std::size_t>(processes));
    for (long i = 0; i < processes; ++i)
        wakers.push_back(std::make_unique<Waker>(sc_core::sc_gen_unique_name("waker"),
                                                 static_cast<std::uint32_t>(i) * 2654435761u + 1u, thread));
    // Elaboration and every process's first activation (its stack made),
    // then the timed part: every process waiting, the queue full.
    // sc_stop() at the last wake-up says so as an info report: not a figure.
    sc_core::sc_report_handler::set_actions("/OSCI/SystemC", sc_core::SC_INFO, sc_core::SC_DO_NOTHING);
    sc_core::sc_start(sc_core::SC_ZERO_TIME);
    g_timing = true;
    g_left = static_cast<std::uint64_t>(wakeups);
    const sc_core::sc_time from = sc_core::sc_time_stamp();
    const auto t0 = std::chrono::steady_clock::now();
    sc_core::sc_start();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (g_left != 0) {
        std::cerr << "vrdmasim: error: bench-kernel: the processes stopped with " << g_left << " wake-ups to go\n";
        return 1;
    }
    // The simulated time the wake-ups spanned: about wakeups x 500.5 ns /
    // processes (the mean gap over all processes), a check that they woke as
    // designed.
    std::cout << "ns_per_wakeup " << std::setprecision(6) << s * 1e9 / static_cast<double>(wakeups) << "\nsimulated_ns "
              << (sc_core::sc_time_stamp() - from).to_seconds() * 1e9 << "\n";
    return 0;
}

int bench_kernel(const std::string& exe, unsigned max_nodes) {
    static constexpr unsigned kSizes[] = {64, 1296, 16384};
    std::cout << "kernel: SystemC alone, " << kThreadsPerNode
              << " processes a node (the threads the halo of --scale keeps a node), each waking 1 to 1,000 ns "
                 "apart; "
              << kWakeups << " wake-ups timed; threads touch " << kStackBytes
              << " B of their stack below each wait (estimate of a model's call chain)\n";
    std::cout << "  nodes  processes  method ns  thread ns  log2(processes)\n";
    struct Row {
        unsigned nodes;
        double method_ns, thread_ns, log2_processes;
    };
    std::vector<Row> rows;
    std::ostringstream csv;
    csv << "bench_kernel_csv";
    for (const unsigned nodes : kSizes) {
        if (nodes > max_nodes) break;
        const unsigned p = nodes * kThreadsPerNode;
        double ns[2] = {0, 0};
        const char* kinds[2] = {"method", "thread"};
        for (int k = 0; k < 2; ++k) {
            int st = 0;
            const std::string cmd = bench_detail::shq(exe) + " bench-kernel --processes " + std::to_string(p) +
                                    " --kind " + kinds[k] + " --wakeups " + std::to_string(kWakeups) +
                                    " --stack-bytes " + std::to_string(kStackBytes) + " 2>&1";
            const auto m = bench_detail::child_figures(cmd, st);
            const auto it = m.find("ns_per_wakeup");
            if (st != 0 || it == m.end() || !(it->second > 0)) {
                std::cerr << "vrdmasim: error: bench --kernel: " << kinds[k] << "s on " << p
                          << " processes failed (exit status " << st << ")\n";
                return 1;
            }
            ns[k] = it->second;
        }
        rows.push_back(Row{nodes, ns[0], ns[1], std::log2(static_cast<double>(p))});
        std::cout << "  " << std::setw(5) << nodes << "  " << std::setw(9) << p << "  " << std::setw(9)
                  << std::setprecision(4) << ns[0] << "  " << std::setw(9) << ns[1] << "  " << std::setw(15)
                  << rows.back().log2_processes << "\n";
        csv << ",n" << nodes << "_method_ns," << ns[0] << ",n" << nodes << "_thread_ns," << ns[1];
    }
    // Each size against the one before: what the queue's depth alone would
    // give (its logarithm) and what a wake-up costs.
    for (std::size_t i = 1; i < rows.size(); ++i) {
        const Row &a = rows[i - 1], &b = rows[i];
        std::cout << "  from " << a.nodes << " to " << b.nodes << " nodes: a method's wake-up "
                  << b.method_ns / a.method_ns << "x, a thread's " << b.thread_ns / a.thread_ns
                  << "x, the queue's logarithm " << b.log2_processes / a.log2_processes << "x\n";
        csv << ",growth_" << a.nodes << "_" << b.nodes << "_method," << b.method_ns / a.method_ns << ",growth_"
            << a.nodes << "_" << b.nodes << "_thread," << b.thread_ns / a.thread_ns << ",growth_" << a.nodes << "_"
            << b.nodes << "_log," << b.log2_processes / a.log2_processes;
    }
    std::cout << csv.str() << "\n";
    return 0;
}

}   // namespace vrdmasim
