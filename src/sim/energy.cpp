#include "src/sim/energy.hpp"

#include <cmath>

#include <systemc>

#include "src/core/stats.hpp"
#include "models/os/cpu.hpp"
#include "src/sim/system.hpp"
#include "src/sim/node.hpp"

namespace vrdmasim {

namespace {

std::uint64_t counter_or_0(const StatRegistry& s, const std::string& name) {
    const Counter* c = s.find_counter(name);
    return c ? c->value() : 0;
}

const char* const kParts[] = {"cpu", "dram", "links", "ssd", "engine"};
const char* const kPartText[] = {
    "the application cores (idle power all run long, active power while busy: `cpu_busy_us`)",
    "DRAM (background power, energy per bit read or written)",
    "the serial links between routers (each lane's static power, energy per bit carried)",
    "the SSDs (idle power, energy per byte read or written: swap and files)",
    "the RDMA logic in the fabric (PLDMA, SMMU path, NI, router: static power, energy per packet and per table "
    "walk)"};

}   // namespace

RunEnergy energy_of(const Config& cfg, System& sys, const StatRegistry& stats, double seconds) {
    RunEnergy r;
    RunActivity& a = r.activity;
    a.seconds = seconds;
    a.nodes = static_cast<unsigned>(sys.size());
    a.cores_per_node = static_cast<unsigned>(cfg[params_of<CpuParams>().cores]);
    a.core_busy_seconds = stats.sum_scalars("cores_busy_time") * 1e-6;
    for (std::size_t i = 0; i < sys.size(); ++i) {
        const std::string n = sys.coord_name(i);
        a.dram_bytes += static_cast<double>(counter_or_0(stats, n + ".dram.read_bytes") +
                                            counter_or_0(stats, n + ".dram.write_bytes"));
        if (stats.find_counter(n + ".ssd.transactions")) {
            ++a.ssds;
            a.ssd_bytes += 4096.0 * static_cast<double>(counter_or_0(stats, n + ".ssd.reads") +
                                                        counter_or_0(stats, n + ".ssd.writes")) +
                           static_cast<double>(counter_or_0(stats, n + ".ssd.file_bytes"));
        }
        a.packets += static_cast<double>(counter_or_0(stats, n + ".dma.packets_sent"));
        a.walks += static_cast<double>(counter_or_0(stats, n + ".smmu.tcu.walks"));
    }
    for (std::size_t i = 0; i < sys.links().size(); ++i) {
        a.link_bits += 128.0 * static_cast<double>(counter_or_0(stats, sys.link_name(i) + ".flits"));
        a.lane_seconds += sys.params_of_link(i).lanes * a.seconds;
    }
    r.energy = PowerModel(cfg).energy(a);
    return r;
}

void declare_energy_metrics(MetricRegistry& reg) {
    reg.add_supplied("energy_j", "J",
                     "Energy of the whole system over the run (every node, link and SSD; models/power: every "
                     "coefficient an *estimate*): the sum of the energy_<part>_j columns.");
    reg.add_supplied("energy_nj_per_byte", "nJ/B",
                     "energy_j over jobs_bytes_delivered, every job's bytes (empty when none was).");
    for (std::size_t k = 0; k < 5; ++k) {
        reg.add_supplied(std::string("energy_") + kParts[k] + "_j", "J",
                         std::string("Energy of ") + kPartText[k] + ", over the run.");
        reg.add_supplied(std::string("energy_") + kParts[k] + "_nj_per_byte", "nJ/B",
                         std::string("energy_") + kParts[k] + "_j over jobs_bytes_delivered (empty when none was).");
    }
}

std::vector<std::pair<std::string, std::string>> energy_columns(const RunEnergy& e, double bytes) {
    std::vector<std::pair<std::string, std::string>> v;
    auto per_byte = [&](double j) { return bytes > 0 ? format_metric(j / bytes * 1e9) : std::string(); };
    v.emplace_back("energy_j", format_metric(e.energy.total()));
    v.emplace_back("energy_nj_per_byte", per_byte(e.energy.total()));
    for (const auto& p : e.energy.parts) {
        v.emplace_back("energy_" + p.name + "_j", format_metric(p.total()));
        v.emplace_back("energy_" + p.name + "_nj_per_byte", per_byte(p.total()));
    }
    return v;
}

std::vector<std::string> energy_violations(const RunEnergy& e) {
    std::vector<std::string> out;
    const RunActivity& a = e.activity;
    const double core_seconds = a.seconds * a.nodes * a.cores_per_node;
    if (a.core_busy_seconds > core_seconds * (1 + 1e-6) + 1e-12)
        out.push_back("the cores were busy " + format_metric(a.core_busy_seconds) + " s of the " +
                      format_metric(core_seconds) + " s they had (cores x nodes x run)");
    for (const auto& p : e.energy.parts) {
        if (!std::isfinite(p.static_j) || !std::isfinite(p.dynamic_j))
            out.push_back(p.name + ": energy is not a finite number");
        else if (p.dynamic_j < 0 || p.total() < p.static_j)
            out.push_back(p.name + ": " + format_metric(p.total()) + " J, below its static power over the run (" +
                          format_metric(p.static_j) + " J)");
    }
    return out;
}

}   // namespace vrdmasim
