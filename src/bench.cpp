#include "bench.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <map>
#include <sstream>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/simple_target_socket.h>

#include "core/csv.hpp"

namespace vrdmasim {

namespace {

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

std::string self_exe() {
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    return n > 0 ? std::string(buf, static_cast<std::size_t>(n)) : std::string("vrdmasim");
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
    status = pclose(p);
    return out;
}

}  // namespace

int bench_bare_command(const std::vector<std::string>& args) {
    long iterations = 2000000;
    if (args.size() == 2 && args[0] == "--iterations") iterations = std::atol(args[1].c_str());
    if (iterations <= 0) {
        std::cerr << "vrdmasim: error: bench-bare --iterations N (N >= 1)\n";
        return 2;
    }
    BareInitiator init("init", iterations);
    BareTarget target("target");
    init.socket.bind(target.socket);
    const auto t0 = std::chrono::steady_clock::now();
    sc_core::sc_start();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::cout << "bare_ns_per_iteration " << std::setprecision(6) << s * 1e9 / static_cast<double>(iterations) << "\n";
    return 0;
}

int bench_command(const std::vector<std::string>& args) {
    std::string volume = "256MiB";
    for (std::size_t i = 0; i < args.size(); ++i) {
        if (args[i] == "--volume" && i + 1 < args.size()) volume = args[++i];
        else {
            std::cerr << "usage: vrdmasim bench [--volume SIZE]   (bytes streamed, default 256MiB)\n";
            return args[i] == "--help" ? 0 : 2;
        }
    }
    const std::string exe = self_exe();
    char tmpl[] = "/tmp/vrdmasim-bench-XXXXXX";
    if (!mkdtemp(tmpl)) {
        std::cerr << "vrdmasim: error: cannot create a temporary directory\n";
        return 1;
    }
    const std::string dir = tmpl;
    int st = 0;
    const std::string bare = capture("'" + exe + "' bench-bare --iterations 2000000", st);
    double bare_ns = 0;
    {
        std::istringstream is(bare);
        std::string key;
        is >> key >> bare_ns;
        if (st != 0 || key != "bare_ns_per_iteration" || bare_ns <= 0) {
            std::cerr << "vrdmasim: error: bare loop failed: " << bare << "\n";
            return 1;
        }
    }
    capture("'" + exe + "' run --workload.kind=stream --workload.total-bytes=" + volume +
                " --workload.message-size=1MiB --out '" + dir + "/stream' --quiet 2>&1",
            st);
    std::map<std::string, std::string> m;
    try {
        const auto rows = read_csv_file(dir + "/stream/summary.csv");
        if (rows.size() < 2) throw std::runtime_error("summary.csv has no data row");
        for (std::size_t i = 0; i < rows[0].size() && i < rows[1].size(); ++i) m[rows[0][i]] = rows[1][i];
    } catch (const std::exception& e) {
        std::cerr << "vrdmasim: error: stream run failed (exit status " << st << "): " << e.what() << "\n";
        return 1;
    }
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
    const double packets = std::atof(m["packets"].c_str());
    const double host = std::atof(m["host_seconds"].c_str());
    const double events = std::atof(m["sim_events"].c_str());
    const double ns_per_packet = packets > 0 ? host * 1e9 / packets : 0;
    const double ratio = bare_ns > 0 ? ns_per_packet / bare_ns : 0;
    std::cout << std::setprecision(4)
              << "bare SystemC b_transport+wait():  " << bare_ns << " ns per round trip\n"
              << "stream, " << volume << " in 1 MiB messages: " << static_cast<long>(packets) << " packets, "
              << events << " model transactions, " << host << " host s\n"
              << "  simulated packets per host second: " << (host > 0 ? packets / host : 0) << "\n"
              << "  host time per packet:             " << ns_per_packet << " ns\n"
              << "  packet / bare round trip:          " << ratio << "  (goal <= 5)\n";
    std::cout << "bench_csv,bare_ns," << bare_ns << ",ns_per_packet," << ns_per_packet << ",ratio," << ratio << "\n";
    return 0;
}

}  // namespace vrdmasim
