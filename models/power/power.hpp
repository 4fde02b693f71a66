// Energy of a run, per component: CPU cores, DRAM, the serial links between
// routers, the SSDs and the RDMA engine logic (PLDMA, SMMU, NI). Each
// component draws a static power for the whole run and a dynamic energy per
// unit of the work the run's statistics count (core busy time, DRAM bytes,
// link bits, SSD bytes, packets, table walks). models/power/README.md gives
// each coefficient's source or says it is an *estimate*.
//
// The model is pure arithmetic over the activity a run reports (src/sim/energy.cpp
// gathers it from the statistics): nothing here runs during the simulation,
// so energy changes no other figure.
#pragma once

#include <string>
#include <vector>

#include "src/core/params.hpp"

namespace vrdmasim {

struct PowerParams {
    PowerParams();
    ParamSet set;
    RealParam core_active_mw, core_idle_mw;
    RealParam dram_pj_per_bit, dram_background_mw;
    RealParam link_pj_per_bit, lane_static_mw;
    RealParam ssd_nj_per_byte, ssd_idle_mw;
    RealParam engine_static_mw, engine_nj_per_packet, engine_nj_per_walk;
};

// What a run did, summed over every node (the inputs of the model).
struct RunActivity {
    double seconds = 0;   // simulated time of the run
    unsigned nodes = 0;
    unsigned cores_per_node = 0;
    double core_busy_seconds = 0;   // every core of every node
    double dram_bytes = 0;   // read + written
    double link_bits = 0;   // carried by the links between routers (flits x 128)
    double lane_seconds = 0;   // serial lanes between routers x the run (each direction a lane set)
    unsigned ssds = 0;
    double ssd_bytes = 0;   // read + written
    double packets = 0;   // data packets the engines sent
    double walks = 0;   // SMMU table walks
};

struct Energy {
    struct Part {
        std::string name;   // "cpu", "dram", "links", "ssd", "engine"
        double static_j = 0, dynamic_j = 0;
        double total() const { return static_j + dynamic_j; }
    };
    std::vector<Part> parts;   // in the order above
    double total() const;
};

class PowerModel {
public:
    static void declare_params(ParamRegistry& reg);
    // Throws ConfigError for settings that have no physical meaning
    // (power.core-idle-mw above power.core-active-mw).
    explicit PowerModel(const Config& cfg);
    Energy energy(const RunActivity& a) const;

private:
    double core_active_w_, core_idle_w_, dram_j_per_bit_, dram_background_w_, link_j_per_bit_, lane_static_w_,
        ssd_j_per_byte_, ssd_idle_w_, engine_static_w_, engine_j_per_packet_, engine_j_per_walk_;
};

}   // namespace vrdmasim
