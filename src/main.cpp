// The vrdmasim executable: run, params, sweep, merge, bench.
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include <systemc>

#include "bench.hpp"
#include "core/params.hpp"
#include "core/sweep.hpp"
#include "run.hpp"
#include "summary.hpp"
#include "system.hpp"

namespace {

void usage(std::ostream& os) {
    os << "vrdmasim " << PROJECT_VERSION
       << " - cycle-approximate simulator of virtual-address RDMA on ExaNeSt QFDB clusters\n\n"
          "usage:\n"
          "  vrdmasim run [CONFIG.ini ...] [--section.key=value ...] [--out DIR] [--trace] [--log] [--quiet]\n"
          "      run one simulation (no config: the built-in default, two nodes of one QFDB,\n"
          "      node 0 streaming RDMA writes to node 1)\n"
          "  vrdmasim params [--markdown [SECTION ...]]\n"
          "      list every parameter: name, type, default with unit, range, help (as Markdown\n"
          "      tables: docs/parameters.md)\n"
          "  vrdmasim metrics [--markdown]\n"
          "      list the columns of summary.csv with unit and meaning (docs/metrics.md)\n"
          "  vrdmasim sweep SWEEP.ini [--jobs N] [--shard I/N] [--out DIR]\n"
          "      run the cartesian product of the listed values, one process per point\n"
          "  vrdmasim merge OUT.csv IN.csv [IN.csv ...]\n"
          "      merge the results.csv of several sweep shards into one\n"
          "  vrdmasim bench [--volume SIZE] | bench --scale [--max-nodes N] [--iterations N]\n"
          "      measure host cost: a stream's packets against a bare SystemC wait() loop, or a\n"
          "      halo on 4 to 1296 nodes\n"
          "  vrdmasim --help | --version\n\n"
          "Exit status: 0 success; 1 run failed (data mismatch, unfinished workload); 2 bad command line or "
          "configuration.\n";
}

int sweep_command(const vrdmasim::ParamRegistry& reg, const std::vector<std::string>& args) {
    vrdmasim::SweepOptions o;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&](const std::string& name) -> std::string {
            const std::string eq = name + "=";
            if (a.compare(0, eq.size(), eq) == 0) return a.substr(eq.size());
            if (i + 1 >= args.size()) throw vrdmasim::ConfigError(name + " needs a value");
            return args[++i];
        };
        try {
            if (a == "--help" || a == "-h") {
                std::cout << "usage: vrdmasim sweep SWEEP.ini [--jobs N] [--shard I/N] [--out DIR]\n"
                             "See README.md, 'Sweeps', for the sweep file format.\n";
                return 0;
            } else if (a.rfind("--jobs", 0) == 0) {
                const std::string v = value("--jobs");
                std::size_t used = 0;
                o.jobs = std::stoi(v, &used);
                if (used != v.size() || o.jobs < 1) throw vrdmasim::ConfigError("--jobs " + v + ": expected a whole number >= 1");
            } else if (a.rfind("--shard", 0) == 0) {
                const std::string v = value("--shard");
                const auto slash = v.find('/');
                std::size_t u1 = 0, u2 = 0;
                if (slash == std::string::npos) throw vrdmasim::ConfigError("--shard " + v + ": expected I/N");
                o.shard_index = std::stoi(v.substr(0, slash), &u1);
                o.shard_count = std::stoi(v.substr(slash + 1), &u2);
                if (u1 != slash || u2 != v.size() - slash - 1 || o.shard_count < 1 || o.shard_index < 0 ||
                    o.shard_index >= o.shard_count)
                    throw vrdmasim::ConfigError("--shard " + v + ": expected I/N with 0 <= I < N");
            } else if (a.rfind("--out", 0) == 0) {
                o.out_dir = value("--out");
            } else if (!a.empty() && a[0] == '-') {
                throw vrdmasim::ConfigError("unknown sweep option " + a);
            } else if (o.sweep_file.empty()) {
                o.sweep_file = a;
            } else {
                throw vrdmasim::ConfigError("only one sweep file may be given (got " + o.sweep_file + " and " + a + ")");
            }
        } catch (const std::invalid_argument&) {
            std::cerr << "vrdmasim: error: " << a << ": expected a number\n";
            return vrdmasim::kExitBadConfig;
        } catch (const std::out_of_range&) {
            std::cerr << "vrdmasim: error: " << a << ": number out of range\n";
            return vrdmasim::kExitBadConfig;
        } catch (const vrdmasim::ConfigError& e) {
            std::cerr << "vrdmasim: error: " << e.what() << "\n";
            return vrdmasim::kExitBadConfig;
        }
    }
    if (o.sweep_file.empty()) {
        std::cerr << "vrdmasim: error: sweep needs a sweep file\nusage: vrdmasim sweep SWEEP.ini [--jobs N] [--shard I/N] [--out DIR]\n";
        return vrdmasim::kExitBadConfig;
    }
    if (o.out_dir.empty()) {
        std::string stem = o.sweep_file;
        const auto slash = stem.find_last_of('/');
        if (slash != std::string::npos) stem = stem.substr(slash + 1);
        const auto dot = stem.rfind('.');
        if (dot != std::string::npos) stem = stem.substr(0, dot);
        o.out_dir = "vrdmasim-out/sweep-" + stem;
    }
    o.executable = "/proc/self/exe";
    char buf[4096];
    const ssize_t n = readlink("/proc/self/exe", buf, sizeof buf - 1);
    if (n > 0) o.executable.assign(buf, static_cast<std::size_t>(n));
    o.progress = isatty(STDERR_FILENO) != 0;
    return vrdmasim::run_sweep(reg, o);
}

int merge_command(const std::vector<std::string>& args) {
    if (args.size() < 2) {
        std::cerr << "vrdmasim: error: usage: vrdmasim merge OUT.csv IN.csv [IN.csv ...]\n";
        return vrdmasim::kExitBadConfig;
    }
    const std::vector<std::string> inputs(args.begin() + 1, args.end());
    for (const auto& in : inputs) {
        if (in == args[0]) {
            std::cerr << "vrdmasim: error: merge: the output " << args[0] << " is also an input\n";
            return vrdmasim::kExitBadConfig;
        }
    }
    const std::string tmp = args[0] + ".partial";
    try {
        std::ofstream out(tmp);
        if (!out) throw vrdmasim::ConfigError("cannot write " + tmp);
        vrdmasim::merge_results(inputs, out);
        out.close();
        if (!out) throw vrdmasim::ConfigError("cannot write " + tmp);
    } catch (const std::exception& e) {
        std::remove(tmp.c_str());
        std::cerr << "vrdmasim: error: " << e.what() << "\n";
        return vrdmasim::kExitBadConfig;
    }
    if (std::rename(tmp.c_str(), args[0].c_str()) != 0) {
        std::cerr << "vrdmasim: error: cannot write " << args[0] << "\n";
        return vrdmasim::kExitFailed;
    }
    return 0;
}

}  // namespace

int sc_main(int argc, char* argv[]) {
    std::vector<std::string> args(argv + 1, argv + argc);
    if (args.empty()) {
        usage(std::cerr);
        return vrdmasim::kExitBadConfig;
    }
    const std::string cmd = args[0];
    args.erase(args.begin());
    if (cmd == "--help" || cmd == "-h" || cmd == "help") {
        usage(std::cout);
        return 0;
    }
    if (cmd == "--version" || cmd == "-V" || cmd == "version") {
        std::cout << "vrdmasim " << PROJECT_VERSION << " (SystemC " << sc_core::sc_release() << ")\n";
        return 0;
    }
    vrdmasim::ParamRegistry reg;
    vrdmasim::declare_all_params(reg);
    if (cmd == "run") return vrdmasim::run_command(reg, args);
    if (cmd == "params") {
        if (args.empty()) {
            reg.print(std::cout);
            return 0;
        }
        if (args[0] != "--markdown") {
            std::cerr << "vrdmasim: error: usage: vrdmasim params [--markdown [SECTION ...]]\n";
            return vrdmasim::kExitBadConfig;
        }
        try {
            reg.print_markdown(std::cout, std::vector<std::string>(args.begin() + 1, args.end()));
        } catch (const vrdmasim::ConfigError& e) {
            std::cerr << "vrdmasim: error: " << e.what() << "\n";
            return vrdmasim::kExitBadConfig;
        }
        return 0;
    }
    if (cmd == "metrics") {
        if (args.size() == 1 && args[0] == "--markdown") {
            vrdmasim::write_metrics_markdown(std::cout);
            return 0;
        }
        if (!args.empty()) {
            std::cerr << "vrdmasim: error: usage: vrdmasim metrics [--markdown]\n";
            return vrdmasim::kExitBadConfig;
        }
        for (const auto& c : vrdmasim::summary_columns())
            std::cout << c.name << " [" << (*c.unit ? c.unit : "count") << "]\n    " << c.description << "\n";
        return 0;
    }
    if (cmd == "sweep") return sweep_command(reg, args);
    if (cmd == "merge") return merge_command(args);
    if (cmd == "bench") return vrdmasim::bench_command(args);
    if (cmd == "bench-bare") return vrdmasim::bench_bare_command(args);
    if (cmd == "bench-smmu") return vrdmasim::bench_smmu_command(args);
    std::cerr << "vrdmasim: error: unknown command '" << cmd << "'\n\n";
    usage(std::cerr);
    return vrdmasim::kExitBadConfig;
}

// SystemC prints a banner on first use unless told not to.
namespace {
struct QuietBanner {
    QuietBanner() { setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0); }
} quiet_banner;
}  // namespace
