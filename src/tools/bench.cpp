#include "src/tools/bench.hpp"
#include "src/tools/bench_detail.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <vector>
#include <chrono>
#include <cstdio>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "src/core/csv.hpp"
#include "src/core/params.hpp"
#include "models/memory/dram.hpp"
#include "models/smmu/context_setup.hpp"
#include "models/smmu/page_table_writer.hpp"
#include "models/smmu/smmu500.hpp"
#include "src/sim/system.hpp"

#include <boost/program_options.hpp>

namespace vrdmasim {

namespace bench_detail {

namespace po = boost::program_options;

std::string shq(const std::string& s) {
    std::string out = "'";
    for (const char c : s) {
        if (c == '\'') out += "'\\''";
        else out += c;
    }
    return out + "'";
}

long parse_whole(const std::string& what, const std::string& v, long lo, long hi) {
    if (v.empty() || v.size() > 12 || v.find_first_not_of("0123456789") != std::string::npos || std::stol(v) < lo ||
        std::stol(v) > hi)
        throw std::invalid_argument(what + " " + v + ": expected a whole number between " + std::to_string(lo) +
                                    " and " + std::to_string(hi));
    return std::stol(v);
}

int parse_options(const std::string& cmd, const std::vector<std::string>& args, const po::options_description& opts,
                  const std::string& usage, po::variables_map& vm) {
    try {
        const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
        const po::positional_options_description none;   // no arguments but options
        po::store(po::command_line_parser(args).options(opts).positional(none).style(style).run(), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << "vrdmasim: error: " << cmd << ": " << vrdmasim::printable(e.what()) << "\n" << usage << opts;
        return 2;
    }
    if (vm.count("help")) {
        std::cout << usage << opts;
        return 0;
    }
    return -1;
}

std::string capture(const std::string& cmd, int& status) {
    std::string out;
    FILE* p = popen(cmd.c_str(), "r");
    if (!p) {
        status = -1;
        return out;
    }
    char buf[4096];
    std::size_t n;
    while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
    // The child's exit status (128 + signal if killed), not the raw wait
    // status ("exit status 512" for 2).
    const int ws = pclose(p);
    status = ws < 0 ? -1 : WIFEXITED(ws) ? WEXITSTATUS(ws) : WIFSIGNALED(ws) ? 128 + WTERMSIG(ws) : ws;
    return out;
}

std::map<std::string, double> child_figures(const std::string& cmd, int& status) {
    std::map<std::string, double> m;
    std::istringstream is(capture(cmd, status));
    std::string key;
    double v;
    while (is >> key >> v) m[key] = v;
    return m;
}

}   // namespace bench_detail

namespace {

namespace po = boost::program_options;
using bench_detail::capture;
using bench_detail::child_figures;
using bench_detail::parse_whole;
using bench_detail::shq;

// --iterations of bench-bare and bench-smmu.
int iterations_option(const std::string& cmd, const std::vector<std::string>& args, long dflt, long& iterations) {
    po::options_description opts(cmd + " options");
    opts.add_options()("help,h", "show this help")("iterations", po::value<std::string>()->value_name("N"),
                                                   "calls to time (>= 1)");
    po::variables_map vm;
    const int rc = bench_detail::parse_options(cmd, args, opts, "usage: vrdmasim " + cmd + " [--iterations N]\n", vm);
    if (rc >= 0) return rc;
    iterations = dflt;
    try {
        if (vm.count("iterations"))
            iterations = parse_whole("--iterations", vm["iterations"].as<std::string>(), 1, 1000000000000L);
    } catch (const std::invalid_argument& e) {
        std::cerr << "vrdmasim: error: " << cmd << ": " << e.what() << "\n";
        return 2;
    }
    return -1;
}

struct BareTarget : sc_core::sc_module {
    tlm_utils::simple_target_socket<BareTarget> socket{"socket"};
    explicit BareTarget(sc_core::sc_module_name n) : sc_module(n) {
        socket.register_b_transport(this, &BareTarget::b_transport);
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& d) {
        d += sc_core::sc_time(10, sc_core::SC_NS);
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
    }
};

struct BareInitiator : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<BareInitiator> socket{"socket"};
    long iterations;
    BareInitiator(sc_core::sc_module_name n, long it) : sc_module(n), iterations(it) {
        SC_HAS_PROCESS(BareInitiator);
        SC_THREAD(run);
    }
    void run() {
        tlm::tlm_generic_payload gp;
        unsigned char data[64] = {};
        gp.set_command(tlm::TLM_WRITE_COMMAND);
        gp.set_data_ptr(data);
        gp.set_data_length(sizeof data);
        for (long i = 0; i < iterations; ++i) {
            sc_core::sc_time d = sc_core::SC_ZERO_TIME;
            gp.set_address(static_cast<sc_dt::uint64>(i) * 64);
            socket->b_transport(gp, d);
            sc_core::wait(d);
        }
    }
};

// A memory that answers at once: the bench measures the path to it.
struct NullMemory : sc_core::sc_module {
    tlm_utils::simple_target_socket<NullMemory> socket{"socket"};
    explicit NullMemory(sc_core::sc_module_name n) : sc_module(n) {
        socket.register_b_transport(this, &NullMemory::b_transport);
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time&) { gp.set_response_status(tlm::TLM_OK_RESPONSE); }
};

// Issues `iterations` reads to one page, without wait(), and times them.
struct TimedMaster : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<TimedMaster> socket{"socket"};
    long iterations;
    std::uint64_t base;
    double seconds = 0;
    bool ok = true;
    TimedMaster(sc_core::sc_module_name n, long it, std::uint64_t b) : sc_module(n), iterations(it), base(b) {
        SC_HAS_PROCESS(TimedMaster);
        SC_THREAD(run);
    }
    void run() {
        tlm::tlm_generic_payload gp;
        unsigned char data[64] = {};
        auto* sid = new StreamIdExtension;
        sid->sid = 0;
        gp.set_extension(sid);
        gp.set_data_ptr(data);
        gp.set_data_length(sizeof data);
        gp.set_streaming_width(sizeof data);
        // One warm-up access fills the TLBs.
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        gp.set_command(tlm::TLM_READ_COMMAND);
        gp.set_address(base);
        socket->b_transport(gp, d);
        ok = gp.is_response_ok();
        sc_core::wait(d);   // past its walk: the entry is ready, so the loop below only hits
        const auto t0 = std::chrono::steady_clock::now();
        for (long i = 0; i < iterations; ++i) {
            d = sc_core::SC_ZERO_TIME;
            gp.set_command(tlm::TLM_READ_COMMAND);
            gp.set_address(base + static_cast<std::uint64_t>(i % 64) * 64);
            gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
            socket->b_transport(gp, d);
            ok = ok && gp.is_response_ok();
        }
        seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    }
};

std::string self_exe() {
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("vrdmasim");
}

}   // namespace

int bench_bare_command(const std::vector<std::string>& args) {
    long iterations = 0;
    if (const int rc = iterations_option("bench-bare", args, 2000000, iterations); rc >= 0) return rc;
    BareInitiator init("init", iterations);
    BareTarget target("target");
    init.socket.bind(target.socket);
    const auto t0 = std::chrono::steady_clock::now();
    sc_core::sc_start();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "bare_ns_per_iteration " << std::setprecision(6) << s * 1e9 / static_cast<double>(iterations) << "\n";
    return 0;
}

int bench_smmu_command(const std::vector<std::string>& args) {
    long iterations = 0;
    if (const int rc = iterations_option("bench-smmu", args, 5000000, iterations); rc >= 0) return rc;
    ParamRegistry reg;
    declare_all_params(reg);
    Config cfg(reg);
    cfg.set("dram.size", "64MiB", "bench");
    StatRegistry stats;
    Tracer tracer;
    SimContext ctx{cfg, stats, tracer};
    TimedMaster direct("direct", iterations, 0x200000);
    TimedMaster translated("translated", iterations, 0x200000);
    NullMemory null_direct("null_direct"), null_translated("null_translated");
    Dram tables("tables", ctx, "bench");
    Smmu500 smmu("smmu", ctx, "bench");
    direct.socket.bind(null_direct.socket);
    translated.socket.bind(*smmu.tbu[0]);
    smmu.out.bind(null_translated.socket);
    smmu.walk.bind(tables.socket);

    std::uint64_t next = 0x100000;
    PageTableWriter pt = PageTableWriter::over(*tables.socket.get_base_export().operator->(), [&next] {
        next += 4096;
        return next - 4096;
    });
    pt.map_page(0x200000, 0x300000);
    ContextSetup setup;   // stream 0 -> context bank 0
    setup.root = pt.root();
    program_context(*smmu.regs.get_base_export().operator->(), setup);
    sc_core::sc_start();
    if (!direct.ok || !translated.ok) {
        std::cerr << "vrdmasim: error: bench-smmu: a transaction failed\n";
        return 1;
    }
    const double direct_ns = direct.seconds * 1e9 / static_cast<double>(iterations);
    const double smmu_ns = translated.seconds * 1e9 / static_cast<double>(iterations);
    std::cout << "direct_ns_per_call " << direct_ns << "\nsmmu_ns_per_call " << smmu_ns << "\n";
    return 0;
}

namespace {

struct StreamFigures {
    double packets = 0, host = 0, events = 0, faults = 0, errors = 0;
};

// One `vrdmasim run` of a stream in a child process; its summary's figures.
bool run_stream(const std::string& exe, const std::string& dir, const std::string& volume, const std::string& extra,
                StreamFigures& f) {
    int st = 0;
    capture(shq(exe) + " run --workload.kind=stream --workload.total-bytes=" + shq(volume) +
                " --workload.message-size=1MiB " + extra + " --out " + shq(dir) + " --quiet 2>&1",
            st);
    std::map<std::string, std::string> m;
    try {
        const auto rows = read_csv_file(dir + "/summary.csv");
        if (rows.size() < 2) throw std::runtime_error("summary.csv has no data row");
        for (std::size_t i = 0; i < rows[0].size() && i < rows[1].size(); ++i) m[rows[0][i]] = rows[1][i];
    } catch (const std::exception& e) {
        std::cerr << "vrdmasim: error: stream run failed (exit status " << st << "): " << e.what() << "\n";
        return false;
    }
    f.packets = std::atof(m["packets"].c_str());
    f.host = std::atof(m["host_seconds"].c_str());
    f.events = std::atof(m["sim_events"].c_str());
    f.faults = std::atof(m["smmu_faults"].c_str());
    f.errors = std::atof(m["transfer_errors"].c_str());
    return f.packets > 0 && f.host > 0;
}

// One `vrdmasim run` as a child, its summary row by column.
bool run_child(const std::string& exe, const std::string& dir, const std::string& args,
               std::map<std::string, std::string>& m) {
    int st = 0;
    const std::string log = capture(shq(exe) + " run " + args + " --out " + shq(dir) + " --quiet 2>&1", st);
    try {
        const auto rows = read_csv_file(dir + "/summary.csv");
        if (rows.size() < 2) throw std::runtime_error("summary.csv has no data row");
        for (std::size_t i = 0; i < rows[0].size() && i < rows[1].size(); ++i) m[rows[0][i]] = rows[1][i];
    } catch (const std::exception& e) {
        // The run's own words (a refused configuration says what to change,
        // e.g. the thread budget on a big torus).
        std::cerr << "vrdmasim: error: run " << args << " failed (exit status " << st << "): " << e.what() << "\n"
                  << log.substr(log.size() > 2000 ? log.size() - 2000 : 0);
        return false;
    }
    return true;
}

// Tori of QFDBs the scale benches use: nodes and x y z boards.
struct TorusSize {
    unsigned nodes;
    unsigned x, y, z;
};
constexpr TorusSize kTorusSizes[] = {{4, 1, 1, 1},    {16, 2, 2, 1},    {64, 4, 2, 2},      {256, 4, 4, 4},
                                     {1296, 9, 6, 6}, {4096, 16, 8, 8}, {16384, 16, 16, 16}};

std::string torus_args(const TorusSize& sz) {
    std::ostringstream args;
    args << "--topology.kind=torus --topology.x=" << sz.x << " --topology.y=" << sz.y << " --topology.z=" << sz.z;
    return args.str();
}

// The halo of --scale and --instructions: cold buffers, terminate-mode faults
// recovered by the fault-tolerant engine.
std::string halo_args(const TorusSize& sz, unsigned iterations) {
    return torus_args(sz) +
           " --workload.kind=halo --workload.message-size=16KiB --workload.iterations=" + std::to_string(iterations) +
           " --workload.populate=false --smmu-driver.fault-mode=terminate --dma.fault-tolerant=true";
}

// Scale: the same per-node load (halo, cold buffers, faults recovered by the
// fault-tolerant engine) on tori of 1 to 4,096 QFDBs (4 to 16,384 nodes, up
// to --max-nodes, 1,296 by default so that the default run stays short);
// host time per simulated packet-hop should stay within 1.5x from 4 to
// 1,296 nodes.
int bench_scale(const std::string& exe, const std::string& dir, unsigned max_nodes, unsigned iterations,
                const std::string& settings) {
    std::cout << "scale: halo, 16 KiB messages, " << iterations
              << " iterations, cold buffers, terminate-mode faults recovered (dma.fault-tolerant)"
              << (settings.empty() ? "" : ", with" + settings) << "\n";
    std::cout
        << "  nodes  host s  build s  output s  peak MiB  packets  packet-hops  faults  errors  ns per packet-hop\n";
    double first = 0, worst = 0, lowest = 0, highest = 0, worst_overhead = 0, last_overhead = 0;
    unsigned last_nodes = 0;
    std::ostringstream csv;
    csv << "bench_scale_csv";
    for (const TorusSize& sz : kTorusSizes) {
        if (sz.nodes > max_nodes) break;
        const std::string args = halo_args(sz, iterations) + settings;
        // Small systems run for milliseconds: the best of a few runs, so
        // that a slow spell of the host does not set the reference.
        std::map<std::string, std::string> m;
        double host = 0;
        const int runs = sz.nodes <= 64 ? 5 : 1;
        for (int r = 0; r < runs; ++r) {
            std::map<std::string, std::string> one;
            if (!run_child(exe, dir + "/scale" + std::to_string(sz.nodes), args, one)) return 1;
            const double h = std::atof(one["host_seconds"].c_str());
            if (r == 0 || h < host) {
                host = h;
                m = one;
            }
        }
        const double hops = std::atof(m["packet_hops"].c_str());
        const double per_hop_ns = hops > 0 ? host * 1e9 / hops : 0;
        if (first == 0) first = per_hop_ns;
        worst = std::max(worst, per_hop_ns / first);
        lowest = lowest == 0 ? per_hop_ns : std::min(lowest, per_hop_ns);
        highest = std::max(highest, per_hop_ns);
        // Elaboration and writing the outputs, which host_seconds (the
        // simulation loop) leaves out, against the simulation.
        const double build = std::atof(m["host_build_seconds"].c_str()),
                     output = std::atof(m["host_output_seconds"].c_str());
        if (host > 0) {
            worst_overhead = std::max(worst_overhead, (build + output) / host);
            last_overhead = (build + output) / host;
            last_nodes = sz.nodes;
        }
        std::cout << "  " << std::setw(5) << sz.nodes << "  " << std::setw(6) << host << "  " << std::setw(7) << build
                  << "  " << std::setw(8) << output << "  " << std::setw(8) << m["peak_rss_mib"] << "  " << std::setw(7)
                  << m["packets"] << "  " << std::setw(11) << static_cast<long>(hops) << "  " << std::setw(6)
                  << m["smmu_faults"] << "  " << std::setw(6) << m["transfer_errors"] << "  " << per_hop_ns << "\n";
        csv << ",n" << sz.nodes << "_host_s," << host << ",n" << sz.nodes << "_build_s," << build << ",n" << sz.nodes
            << "_output_s," << output << ",n" << sz.nodes << "_peak_mib," << m["peak_rss_mib"] << ",n" << sz.nodes
            << "_ns_per_hop," << per_hop_ns;
    }
    std::cout << "  largest cost per packet-hop against 4 nodes: " << worst << "x (goal <= 1.5)\n"
              << "  spread, most against least expensive size: " << (lowest > 0 ? highest / lowest : 0) << "x\n"
              << "  (build + output) / simulation on the largest torus (" << last_nodes << " nodes): " << last_overhead
              << " (goal <= 0.1)\n"
              << "  largest (build + output) / simulation of any size: " << worst_overhead
              << " (a small torus simulates for milliseconds)\n";
    std::cout << csv.str() << ",worst_ratio," << worst << ",spread," << (lowest > 0 ? highest / lowest : 0)
              << ",worst_overhead," << worst_overhead << ",largest_torus_overhead," << last_overhead << "\n";
    return 0;
}

// Memory per idle node: tori of 64 to --max-nodes nodes (at least two
// sizes) with one small stream between nodes 0 and 1, every other node idle;
// each run's peak resident memory (elaboration, simulation and writing the
// outputs) and the host memory each added node costs, fitted by least
// squares over the sizes run.
int bench_memory(const std::string& exe, const std::string& dir, unsigned max_nodes) {
    if (max_nodes < 256) {
        std::cerr << "vrdmasim: error: bench --memory fits two sizes at least (64 and 256 nodes): --max-nodes 256 or "
                     "more\n";
        return 2;
    }
    std::cout << "memory: tori of idle nodes (one 64 KiB stream between nodes 0 and 1), peak resident memory of "
                 "the whole run\n";
    std::cout << "  nodes  peak MiB  KiB per node (from the previous size)  build s  output s\n";
    std::vector<double> xs, ys;
    std::ostringstream csv;
    csv << "bench_memory_csv";
    double prev_nodes = 0, prev_mib = 0;
    for (const TorusSize& sz : kTorusSizes) {
        if (sz.nodes > max_nodes) break;
        if (sz.nodes < 64) continue;
        std::map<std::string, std::string> m;
        const std::string args = torus_args(sz) +
                                 " --workload.kind=stream --workload.src-node=0 --workload.dst-node=1"
                                 " --workload.message-size=64KiB --workload.total-bytes=64KiB";
        if (!run_child(exe, dir + "/memory" + std::to_string(sz.nodes), args, m)) return 1;
        const double mib = std::atof(m["peak_rss_mib"].c_str());
        xs.push_back(sz.nodes);
        ys.push_back(mib);
        std::cout << "  " << std::setw(5) << sz.nodes << "  " << std::setw(8) << mib << "  " << std::setw(37);
        if (prev_nodes > 0) std::cout << (mib - prev_mib) * 1024 / (sz.nodes - prev_nodes);
        else std::cout << "-";
        std::cout << "  " << std::setw(7) << m["host_build_seconds"] << "  " << std::setw(8) << m["host_output_seconds"]
                  << "\n";
        csv << ",n" << sz.nodes << "_peak_mib," << mib;
        prev_nodes = sz.nodes;
        prev_mib = mib;
    }
    double mx = 0, my = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) mx += xs[i] / xs.size(), my += ys[i] / xs.size();
    double sxy = 0, sxx = 0;
    for (std::size_t i = 0; i < xs.size(); ++i) sxy += (xs[i] - mx) * (ys[i] - my), sxx += (xs[i] - mx) * (xs[i] - mx);
    const double slope = sxy / sxx, fixed = my - slope * mx;
    std::cout << "  fit: " << fixed << " MiB + " << slope * 1024 << " KiB per idle node (goal <= 100)\n";
    std::cout << csv.str() << ",fixed_mib," << fixed << ",kib_per_node," << slope * 1024 << "\n";
    return 0;
}

// The instructions of one run's simulation loop, counted by valgrind's
// callgrind (src/cli/run.cpp starts and stops the instrumentation around the
// loop: elaboration and writing the outputs are not counted). Independent
// of the host's load, unlike its time. Fills `m` with the run's summary.
bool count_instructions(const std::string& exe, const std::string& dir, const std::string& args, double& ir,
                        std::map<std::string, std::string>& m) {
    const std::string out = dir + "/callgrind.out";
    std::error_code ec;
    std::filesystem::remove(out, ec);
    int st = 0;
    const std::string log =
        capture("valgrind --tool=callgrind --instr-atstart=no --callgrind-out-file=" + shq(out) + " " + shq(exe) +
                    " run " + args + " --out " + shq(dir + "/run") + " --quiet 2>&1",
                st);
    try {
        const auto rows = read_csv_file(dir + "/run/summary.csv");
        if (rows.size() < 2) throw std::runtime_error("summary.csv has no data row");
        for (std::size_t i = 0; i < rows[0].size() && i < rows[1].size(); ++i) m[rows[0][i]] = rows[1][i];
    } catch (const std::exception& e) {
        std::cerr << "vrdmasim: error: run " << args << " under callgrind failed (exit status " << st
                  << "): " << e.what() << "\n"
                  << log.substr(log.size() > 2000 ? log.size() - 2000 : 0) << "\n";
        return false;
    }
    std::ifstream in(out);
    std::string line;
    ir = 0;
    while (std::getline(in, line))
        if (line.rfind("totals:", 0) == 0 || (ir == 0 && line.rfind("summary:", 0) == 0))
            ir = std::atof(line.c_str() + line.find(':') + 1);
    if (ir <= 0) {
        std::cerr << "vrdmasim: error: callgrind counted no instruction in " << out
                  << " (was the simulation loop instrumented?)\n";
        return false;
    }
    return true;
}

// bench --instructions: instructions per simulated packet (the default
// config's stream) and per packet-hop (the halo of --scale on 4, 64 and 256
// nodes, up to --max-nodes).
int bench_instructions(const std::string& exe, const std::string& dir, const std::string& volume, unsigned max_nodes,
                       unsigned iterations, const std::string& settings) {
#if !VRDMASIM_HAVE_CALLGRIND
    (void)exe, (void)dir, (void)volume, (void)max_nodes, (void)iterations, (void)settings;
    std::cerr << "vrdmasim: error: bench --instructions: this vrdmasim was built without valgrind/callgrind.h "
                 "(Debian's valgrind, which scripts/demo.sh does not install: scripts/setup.sh installs it, then "
                 "rebuild), so nothing would be counted\n";
    return 2;
#else
    int st = 0;
    capture("valgrind --version 2>&1", st);
    if (st != 0) {
        std::cerr << "vrdmasim: error: bench --instructions needs valgrind (scripts/setup.sh installs it)\n";
        return 2;
    }
    std::cout << "instructions of the simulation loop (valgrind --tool=callgrind; elaboration and outputs not "
                 "counted)"
              << (settings.empty() ? "" : ", every run with" + settings) << "\n";
    std::ostringstream csv;
    csv << "bench_instructions_csv";
    double ir = 0;
    std::map<std::string, std::string> m;
    if (!count_instructions(exe, dir, "--workload.total-bytes=" + shq(volume) + settings, ir, m)) return 1;
    const double packets = std::atof(m["packets"].c_str());
    const double hops = std::atof(m["packet_hops"].c_str());
    std::cout << std::setprecision(6) << "  stream, the default config, " << volume << ": "
              << static_cast<long>(packets) << " packets, " << static_cast<long>(hops) << " packet-hops, " << ir
              << " instructions: " << (packets > 0 ? ir / packets : 0) << " per packet, " << (hops > 0 ? ir / hops : 0)
              << " per packet-hop\n";
    csv << ",stream_per_packet," << (packets > 0 ? ir / packets : 0) << ",stream_per_hop,"
        << (hops > 0 ? ir / hops : 0);
    for (const TorusSize& sz : kTorusSizes) {
        if (sz.nodes > max_nodes) break;
        if (sz.nodes != 4 && sz.nodes != 64 && sz.nodes != 256) continue;
        std::map<std::string, std::string> h;
        if (!count_instructions(exe, dir, halo_args(sz, iterations) + settings, ir, h)) return 1;
        const double ph = std::atof(h["packet_hops"].c_str());
        std::cout << "  halo, " << sz.nodes << " nodes, " << iterations
                  << " iterations: " << static_cast<long>(std::atof(h["packets"].c_str())) << " packets, "
                  << static_cast<long>(ph) << " packet-hops, " << ir << " instructions: " << (ph > 0 ? ir / ph : 0)
                  << " per packet-hop\n";
        csv << ",n" << sz.nodes << "_per_hop," << (ph > 0 ? ir / ph : 0);
    }
    std::cout << csv.str() << "\n";
    return 0;
#endif
}

}   // namespace

namespace {

po::options_description bench_options() {
    po::options_description opts("bench options");
    opts.add_options()("help,h", "show this help")(
        "volume", po::value<std::string>()->value_name("SIZE")->default_value("256MiB"),
        "bytes each stream run moves, e.g. 256MiB")(
        "scale", "instead: halo on 4 to --max-nodes nodes, host cost per packet-hop")(
        "kernel",
        "instead: SystemC alone, no model: the host time of a timed wake-up among as many processes as the "
        "halo of --scale keeps on 64 to --max-nodes nodes (64, 1296, 16384), as methods and as threads")(
        "memory",
        "instead: host memory per idle node, from the peak resident memory of tori of 64 to "
        "--max-nodes nodes (64, 256, 1296, 4096, 16384) with one small stream")(
        "instructions",
        "instead: instructions per packet (the default stream, --volume, default 16MiB here) and "
        "per packet-hop (halo on 4, 64, 256 nodes up to --max-nodes), counted by valgrind's "
        "callgrind on the simulation loop only: figures that do not depend on the host's load")(
        "max-nodes", po::value<std::string>()->value_name("N")->default_value("1296"),
        "--scale, --memory, --instructions, --kernel: the largest system (--scale: 4, 16, 64, 256, 1296, 4096 or "
        "16384 nodes; --memory: from 64; --instructions: 4, 64 and 256; --kernel: from 1296; up to it; >= 4)")(
        "iterations", po::value<std::string>()->value_name("N")->default_value("4"),
        "--scale, --instructions: halo iterations per run (>= 1)")(
        "setting", po::value<std::vector<std::string>>()->composing()->value_name("KEY=VALUE"),
        "--scale, --instructions: every run also with this setting (repeatable), e.g. router.link-order=call-approximate");
    return opts;
}

// What `vrdmasim bench` was asked to measure.
struct BenchRequest {
    bool scale = false, instructions = false, memory = false, kernel = false;
    std::string volume;
    std::uint64_t volume_bytes = 0;
    std::string settings;   // --setting: " --KEY=VALUE" for each
    unsigned max_nodes = 0, iterations = 0;
};

// The command line into `b`. Returns -1 to go on, or the exit status (help
// printed, or a bad command line reported).
int parse_bench_command(const std::vector<std::string>& args, BenchRequest& b) {
    po::variables_map vm;
    const int rc = bench_detail::parse_options(
        "bench", args, bench_options(),
        "usage: vrdmasim bench [--volume SIZE]\n       vrdmasim bench --scale [--max-nodes N] [--iterations N]\n"
        "       vrdmasim bench --memory [--max-nodes N]\n"
        "       vrdmasim bench --kernel [--max-nodes N]\n"
        "       vrdmasim bench --instructions [--volume SIZE] [--max-nodes N] [--iterations N]\n"
        "       (--scale and --instructions: [--setting KEY=VALUE]...)\n",
        vm);
    if (rc >= 0) return rc;
    b.scale = vm.count("scale") > 0;
    b.instructions = vm.count("instructions") > 0;
    b.memory = vm.count("memory") > 0;
    b.kernel = vm.count("kernel") > 0;
    if (int(b.scale) + int(b.instructions) + int(b.memory) + int(b.kernel) > 1) {
        std::cerr << "vrdmasim: error: bench: --scale, --memory, --instructions and --kernel are different benches; "
                     "give one\n";
        return 2;
    }
    if (vm.count("setting")) {
        if (!b.scale && !b.instructions) {
            std::cerr << "vrdmasim: error: bench: --setting applies to --scale and --instructions only\n";
            return 2;
        }
        ParamRegistry reg;
        declare_all_params(reg);
        std::vector<std::string> words;
        for (const std::string& kv : vm["setting"].as<std::vector<std::string>>()) {
            if (kv.find('=') == std::string::npos || kv.find_first_of(" \t'\"\\") != std::string::npos) {
                std::cerr << "vrdmasim: error: bench --setting " << printable(kv) << ": KEY=VALUE, without spaces or "
                          << "quotes\n";
                return 2;
            }
            words.push_back("--" + kv);
            b.settings += " --" + kv;
        }
        try {
            Config cfg(reg);
            cfg.apply_command_line(words);
            System::resolve(cfg);
        } catch (const ConfigError& e) {
            std::cerr << "vrdmasim: error: bench --setting: " << e.what() << "\n";
            return 2;
        }
    }
    // Under callgrind a run is some 50 times slower: a smaller default volume.
    b.volume = b.instructions && vm["volume"].defaulted() ? std::string("16MiB") : vm["volume"].as<std::string>();
    try {
        b.max_nodes = static_cast<unsigned>(parse_whole("--max-nodes", vm["max-nodes"].as<std::string>(), 4, 1000000));
        b.iterations =
            static_cast<unsigned>(parse_whole("--iterations", vm["iterations"].as<std::string>(), 1, 1000000));
    } catch (const std::invalid_argument& e) {
        std::cerr << "vrdmasim: error: bench: " << e.what() << "\n";
        return 2;
    }
    try {
        b.volume_bytes = parse_size_bytes(b.volume);
    } catch (const std::exception& e) {
        std::cerr << "vrdmasim: error: bench --volume " << b.volume << ": " << e.what() << "\n";
        return 2;
    }
    return -1;
}

// The fault-tolerant stream with faults: the SMMU case (64 KiB messages,
// four in flight) on cold buffers — every message in buffers never touched
// (workload.buffers = the message count), the source not written by the
// program — with 4 KiB pages (vm.thp=never) and terminate-mode faults
// recovered by the engine: every source and destination page faults in once
// (touch-ahead: 16 pages per SMMU fault).
constexpr const char* kFaultMessage = "64KiB";
std::string fault_stream_args(std::uint64_t volume_bytes) {
    return std::string("--workload.message-size=") + kFaultMessage +
           " --workload.buffers=" + std::to_string(std::max<std::uint64_t>(volume_bytes / (64 * 1024), 1)) +
           " --workload.populate=false --workload.fill-source=false --vm.thp=never"
           " --smmu-driver.fault-mode=terminate --dma.fault-tolerant=true";
}

// The runs' configurations, checked before any runs: a --volume the
// simulator refuses is this command's bad input (exit 2), said once.
bool stream_configs_valid(const BenchRequest& b, const std::string& fault_args) {
    ParamRegistry reg;
    declare_all_params(reg);
    std::vector<std::vector<std::string>> configs{{"--workload.total-bytes=" + b.volume}};
    if (!b.instructions) {
        configs.push_back(
            {"--workload.kind=stream", "--workload.total-bytes=" + b.volume, "--workload.message-size=1MiB"});
        std::vector<std::string> f{"--workload.kind=stream", "--workload.total-bytes=" + b.volume};
        std::istringstream words(fault_args);
        for (std::string w; words >> w;) f.push_back(w);
        configs.push_back(f);
    }
    for (const auto& c : configs) {
        try {
            Config cfg(reg);
            cfg.apply_command_line(c);
            System::resolve(cfg);
        } catch (const ConfigError& e) {
            std::cerr << "vrdmasim: error: bench --volume " << printable(b.volume) << ": " << e.what() << "\n";
            return false;
        }
    }
    return true;
}

// A temporary directory in $TMPDIR (else /tmp), removed on every way out.
class TempDir {
public:
    TempDir() {
        const char* tmp_root = std::getenv("TMPDIR");
        path_ = std::string(tmp_root && *tmp_root ? tmp_root : "/tmp") + "/vrdmasim-bench-XXXXXX";
        if (!mkdtemp(path_.data())) {
            std::cerr << "vrdmasim: error: cannot create a temporary directory " << path_ << ": "
                      << std::strerror(errno) << "\n";
            path_.clear();
        }
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    ~TempDir() {
        std::error_code ec;
        if (!path_.empty()) std::filesystem::remove_all(path_, ec);
    }
    const std::string& path() const { return path_; }

private:
    std::string path_;
};

// The stream bench's measurements. Shared machines are noisy: every figure
// is the best of kRepeats runs, the measurements interleaved so that a slow
// spell hits all alike; every repeat's ratios too, for the medians (host ns
// per packet over bare ns per round trip, each taken in the same repeat).
constexpr int kRepeats = 3;
struct StreamBench {
    double bare_ns = 0, direct_ns = 0, smmu_ns = 0;
    StreamFigures with_smmu, physical, faulting;
    std::vector<double> rep_smmu, rep_phys;
};

void keep_best(double& best_so_far, double v) {
    if (v > 0 && (best_so_far <= 0 || v < best_so_far)) best_so_far = v;
}

bool measure_streams(const std::string& exe, const std::string& dir, const std::string& volume,
                     const std::string& fault_args, StreamBench& m) {
    int st = 0;
    for (int rep = 0; rep < kRepeats; ++rep) {
        const auto bare = child_figures(shq(exe) + " bench-bare --iterations 2000000", st);
        if (st != 0 || !bare.count("bare_ns_per_iteration")) {
            std::cerr << "vrdmasim: error: bare loop failed\n";
            return false;
        }
        keep_best(m.bare_ns, bare.at("bare_ns_per_iteration"));
        StreamFigures a, b, c;
        if (!run_stream(exe, dir + "/smmu", volume, "", a) ||
            !run_stream(exe, dir + "/phys", volume, "--smmu.enabled=false", b))
            return false;
        if (!run_stream(exe, dir + "/faults", volume, fault_args, c)) return false;
        const double rep_bare = bare.at("bare_ns_per_iteration");
        m.rep_smmu.push_back(a.host * 1e9 / a.packets / rep_bare);
        m.rep_phys.push_back(b.host * 1e9 / b.packets / rep_bare);
        if (rep == 0 || a.host < m.with_smmu.host) m.with_smmu = a;
        if (rep == 0 || b.host < m.physical.host) m.physical = b;
        if (rep == 0 || c.host < m.faulting.host) m.faulting = c;
        const auto hit = child_figures(shq(exe) + " bench-smmu --iterations 5000000", st);
        if (st != 0 || !hit.count("direct_ns_per_call") || !hit.count("smmu_ns_per_call")) {
            std::cerr << "vrdmasim: error: SMMU hit-path bench failed\n";
            return false;
        }
        keep_best(m.direct_ns, hit.at("direct_ns_per_call"));
        keep_best(m.smmu_ns, hit.at("smmu_ns_per_call"));
    }
    return true;
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v.empty() ? 0.0 : v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

// One stream's line; returns its host time per packet in bare round trips.
double print_stream(const std::string& volume, const char* what, const StreamFigures& f, double bare_ns) {
    const double ns = f.host * 1e9 / f.packets;
    std::cout << "stream, " << volume << " in 1 MiB messages, " << what << ": " << static_cast<long>(f.packets)
              << " packets, " << f.events << " model transactions, " << f.host << " host s\n"
              << "  simulated packets per host second: " << f.packets / f.host << "\n"
              << "  host time per packet:              " << ns << " ns = " << ns / bare_ns
              << " bare round trips (goal <= 5)\n";
    return ns / bare_ns;
}

void print_stream_bench(const std::string& volume, const StreamBench& m) {
    const double hit_cost = (m.smmu_ns - m.direct_ns) / m.direct_ns;
    std::cout << std::setprecision(4) << "best of " << kRepeats << " runs each\n"
              << "bare SystemC b_transport+wait():   " << m.bare_ns << " ns per round trip\n";
    const double r_smmu = print_stream(volume, "through the SMMU", m.with_smmu, m.bare_ns);
    const double r_phys = print_stream(volume, "physical (smmu.enabled=false)", m.physical, m.bare_ns);
    std::cout << "per repeat (bare loop and streams taken in turn, each ratio within one repeat): through the SMMU "
              << "min " << *std::min_element(m.rep_smmu.begin(), m.rep_smmu.end()) << ", median " << median(m.rep_smmu)
              << " bare round trips per packet; physical min "
              << *std::min_element(m.rep_phys.begin(), m.rep_phys.end()) << ", median " << median(m.rep_phys) << "\n";
    std::cout << "SMMU TLB-hit path: " << m.direct_ns << " ns for a bare b_transport call, " << m.smmu_ns
              << " ns through a TBU: a hit costs " << hit_cost << " bare calls (goal <= 2); " << 1e9 / m.smmu_ns
              << " translations per host second\n";
    const StreamFigures& f = m.faulting;
    std::cout << "stream, " << volume << " in " << kFaultMessage
              << " messages, fault-tolerant with faults (cold source and destination, THP never, "
                 "terminate + dma.fault-tolerant): "
              << static_cast<long>(f.packets) << " packets, " << f.faults << " SMMU faults, " << f.host << " host s\n"
              << "  simulated packets per host second: " << f.packets / f.host << " ("
              << m.with_smmu.packets / m.with_smmu.host
              << " without faults: " << (f.packets / f.host) / (m.with_smmu.packets / m.with_smmu.host) << "x)\n"
              << "  SMMU faults per host second:       " << f.faults / f.host << "\n";
    if (f.faults == 0)
        std::cout << "  (warning: no SMMU fault: the cold buffers were faulted in before the engine met them)\n";
    std::cout << "bench_csv,bare_ns," << m.bare_ns << ",ratio_smmu," << r_smmu << ",ratio_physical," << r_phys
              << ",hit_cost_calls," << hit_cost << ",ratio_smmu_median," << median(m.rep_smmu)
              << ",ratio_physical_median," << median(m.rep_phys) << "\n";
}

}   // namespace

int bench_command(const std::vector<std::string>& args) {
    BenchRequest b;
    if (const int rc = parse_bench_command(args, b); rc >= 0) return rc;
    const std::string fault_args = fault_stream_args(b.volume_bytes);
    if (b.kernel && b.max_nodes < 1296) {
        std::cerr << "vrdmasim: error: bench --kernel compares two sizes at least (64 and 1296 nodes): --max-nodes "
                     "1296 or more\n";
        return 2;
    }
    if (!b.scale && !b.memory && !b.kernel && !stream_configs_valid(b, fault_args)) return 2;
    const std::string exe = self_exe();
    if (b.kernel) return bench_kernel(exe, b.max_nodes);
    const TempDir tmp;
    if (tmp.path().empty()) return 1;
    const std::string& dir = tmp.path();
    if (b.scale) return bench_scale(exe, dir, b.max_nodes, b.iterations, b.settings);
    if (b.memory) return bench_memory(exe, dir, b.max_nodes);
    if (b.instructions)
        return bench_instructions(exe, dir, b.volume, std::min(b.max_nodes, 256u), b.iterations, b.settings);
    StreamBench m;
    if (!measure_streams(exe, dir, b.volume, fault_args, m)) return 1;
    print_stream_bench(b.volume, m);
    return 0;
}

}   // namespace vrdmasim
