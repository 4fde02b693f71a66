#include "models/power/power.hpp"

namespace vrdmasim {

PowerParams::PowerParams()
    : set("power", "energy model: static power and energy per unit of work of each component (models/power)"),
      core_active_mw(set.real("core-active-mw", "350",
                              "power of one Cortex-A53 core while busy at cpu.clock, mW (*estimate*: a quarter of "
                              "the 1.4 W the Xilinx Power Estimator method, UG440, gives the ZynqMP's busy quad-core "
                              "APU at 1.5 GHz; not measured on the QFDB)")
                         .range("0", "100000")),
      core_idle_mw(
          set.real("core-idle-mw", "20", "power of one core while idle (WFI, clock-gated: leakage), mW (*estimate*)")
              .range("0", "100000")),
      dram_pj_per_bit(set.real("dram-pj-per-bit", "20",
                               "energy per bit read or written in DRAM, I/O included, pJ (*estimate* of the order "
                               "Micron TN-40-07's DDR4 power calculation gives at DDR4-2400)")
                          .range("0", "10000")),
      dram_background_mw(set.real("dram-background-mw", "350",
                                  "power of a node's DRAM when not accessed (standby and refresh of a 64-bit "
                                  "DDR4 rank), mW (*estimate*)")
                             .range("0", "100000")),
      link_pj_per_bit(set.real("link-pj-per-bit", "2",
                               "energy per bit a link between routers carries beyond its lanes' static power "
                               "(framing, FIFOs), pJ (*estimate*)")
                          .range("0", "10000")),
      lane_static_mw(set.real("lane-static-mw", "200",
                              "power of one serial lane of one direction, transmitter and receiver, whether or "
                              "not it carries data (a GTH transceiver pair at 10-16 Gb/s, of the order the "
                              "Xilinx Power Estimator method, UG440, gives), mW (*estimate*)")
                         .range("0", "100000")),
      ssd_nj_per_byte(set.real("ssd-nj-per-byte", "5",
                               "energy per byte the SSD reads or writes, nJ (*estimate*: an M.2 SSD drawing about "
                               "3 W at 600 MB/s)")
                          .range("0", "100000")),
      ssd_idle_mw(set.real("ssd-idle-mw", "50", "power of an idle SSD, mW (*estimate*: a low-power idle state)")
                      .range("0", "100000")),
      engine_static_mw(set.real("engine-static-mw", "400",
                                "power of a node's RDMA logic in the FPGA fabric (PLDMA, SMMU path, NI, router: "
                                "leakage and clock trees), mW (*estimate*)")
                           .range("0", "100000")),
      engine_nj_per_packet(set.real("engine-nj-per-packet", "1",
                                    "energy of the engine logic per data packet sent (18 flits through a 128-bit "
                                    "datapath), nJ (*estimate*)")
                               .range("0", "100000")),
      engine_nj_per_walk(set.real("engine-nj-per-walk", "0.5",
                                  "energy of the SMMU's table-walk logic per walk (its descriptor reads are DRAM "
                                  "energy), nJ (*estimate*)")
                             .range("0", "100000")) {}

void PowerModel::declare_params(ParamRegistry& reg) { reg.add(params_of<PowerParams>().set); }

PowerModel::PowerModel(const Config& cfg) {
    const PowerParams& p = params_of<PowerParams>();
    core_active_w_ = cfg[p.core_active_mw] * 1e-3;
    core_idle_w_ = cfg[p.core_idle_mw] * 1e-3;
    // A busy core draws its active power, an idle one its idle power: a
    // core that drew less busy than idle has no physical meaning (and its
    // busy time would lower the energy).
    if (core_idle_w_ > core_active_w_)
        throw cfg.refuse(p.core_idle_mw, "is above power.core-active-mw (" + cfg.text(p.core_active_mw) +
                                             " mW): an idle core cannot draw more than a busy one");
    dram_j_per_bit_ = cfg[p.dram_pj_per_bit] * 1e-12;
    dram_background_w_ = cfg[p.dram_background_mw] * 1e-3;
    link_j_per_bit_ = cfg[p.link_pj_per_bit] * 1e-12;
    lane_static_w_ = cfg[p.lane_static_mw] * 1e-3;
    ssd_j_per_byte_ = cfg[p.ssd_nj_per_byte] * 1e-9;
    ssd_idle_w_ = cfg[p.ssd_idle_mw] * 1e-3;
    engine_static_w_ = cfg[p.engine_static_mw] * 1e-3;
    engine_j_per_packet_ = cfg[p.engine_nj_per_packet] * 1e-9;
    engine_j_per_walk_ = cfg[p.engine_nj_per_walk] * 1e-9;
}

Energy PowerModel::energy(const RunActivity& a) const {
    Energy e;
    // A core is busy or idle: its idle power all the time, the difference
    // to its active power while busy.
    const double core_seconds = a.seconds * a.nodes * a.cores_per_node;
    e.parts.push_back({"cpu", core_idle_w_ * core_seconds, (core_active_w_ - core_idle_w_) * a.core_busy_seconds});
    e.parts.push_back({"dram", dram_background_w_ * a.seconds * a.nodes, dram_j_per_bit_ * a.dram_bytes * 8});
    e.parts.push_back({"links", lane_static_w_ * a.lane_seconds, link_j_per_bit_ * a.link_bits});
    e.parts.push_back({"ssd", ssd_idle_w_ * a.seconds * a.ssds, ssd_j_per_byte_ * a.ssd_bytes});
    e.parts.push_back({"engine", engine_static_w_ * a.seconds * a.nodes,
                       engine_j_per_packet_ * a.packets + engine_j_per_walk_ * a.walks});
    return e;
}

double Energy::total() const {
    double t = 0;
    for (const auto& p : parts) t += p.total();
    return t;
}

}   // namespace vrdmasim
