// System: the simulated cluster built from the configuration: nodes (bus,
// DRAM, PLDMA, SMMU, router, OS, application), the links between them, and
// the workload. Knows the models; the core under src/core does not.
//
// One node (one MPSoC) and its block diagram: node.hpp.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "src/core/context.hpp"
#include "library/rdma/physical.hpp"
#include "models/interconnect/topology.hpp"
#include "src/sim/parallel/partition.hpp"
#include "workloads/workload.hpp"   // System hands out the jobs' workloads

namespace vrdmasim {

class CutMail;
class GlobalSync;
class HopQueue;
class Link;
struct LinkParams;
class Node;
class RemoteHopLink;
class RemoteLink;

// The parameters of section [topology], declared in system.cpp; read
// through params_of<TopologyParams>().
struct TopologyParams {
    TopologyParams();
    ParamSet set;
    EnumParam kind;
    IntParam nodes;
    IntParam x;
    IntParam y;
    IntParam z;
};

// Every parameter of every model, in one registry.
void declare_all_params(ParamRegistry& reg);
// The workloads' trial declarations as a member of `params --json`
// (workload_kinds::trials_json, workloads/registry.hpp).
std::string workload_trials_json();

class System {
public:
    static void declare_params(ParamRegistry& reg);
    // Settings implied by the configuration, applied to `c` before the
    // system is built: the engine settings rdma.strategy needs
    // (netvm: smmu-driver.fault-mode = terminate, dma.fault-tolerant = true)
    // take that value unless given explicitly (origin not "default"); an
    // explicit setting that contradicts the strategy is a ConfigError saying
    // what to change.
    static void resolve(Config& c);
    // Whether runs of `c` vary with sim.seed (a source of noise: noise.*),
    // so that a sweep's replications differ.
    static bool varies(const Config& c);
    // What the workloads' figures tell a user that the exit status does
    // not (WorkloadKind::findings): lines, or "".
    static std::string workload_findings(const Config& c, const StatRegistry& stats);
    // What the models say of their own figures after a run: links served
    // by call (router.link-order = call-approximate, said on every run), a
    // node's cores that served work out of simulated-time order. Lines, or "".
    static std::string model_warnings(const Config& c, const StatRegistry& stats);
    // The settings a run of `c` does not use and only notes (a shared
    // workload.* parameter its kind, set over it, does not read:
    // Workload::unread_note), by name, with why: what its config.ini writes
    // at the default (Config::write_ini).
    static std::map<std::string, std::string> settings_not_used(const Config& c);
    // Builds and binds everything (elaboration). Throws ConfigError for a
    // configuration the models cannot be built with, or that could never
    // work (a packet larger than a buffer it must fit in whole, ...).
    explicit System(const SimContext& ctx);
    ~System();
    // Rank `rank` of a partitioned run of `ranks` (docs/scaling.md): builds
    // only the boards sim.partition gives this rank, the near ends of the
    // cut links leaving them and the far ends of those entering them.
    // ConfigError for what a partitioned run refuses (the settings its
    // identical results need; a workload's partition_refusal()).
    System(const SimContext& ctx, unsigned ranks, unsigned rank);

    std::size_t size() const { return nodes_.size(); }
    // The configuration the system was built from.
    const Config& config() const { return *config_; }
    const Topology& topology() const { return topology_; }
    // The topology configuration `c` builds; ConfigError for topology.*
    // and router.* settings that do not fit it.
    static Topology topology_from(const Config& c);
    // Node i's name (its statistics' and trace group's prefix): "node2" on
    // one QFDB, "x1y0z2f3" on a mezzanine or torus.
    std::string coord_name(std::size_t i) const { return topology_.name(static_cast<unsigned>(i)); }
    // Node i's 22-bit ExaNet coordinate (topology.hpp has the packing).
    std::uint32_t coord(std::size_t i) const { return topology_.coord_word(static_cast<unsigned>(i)); }
    // Router-to-router hops (links between routers) on the route from src to dst.
    unsigned hops(std::size_t src, std::size_t dst) const {
        return topology_.hops(static_cast<unsigned>(src), static_cast<unsigned>(dst));
    }
    Node& node(std::size_t i);
    // Whether node i is simulated here (always, but on a partitioned run's
    // ranks: then only its own boards' nodes).
    bool present(std::size_t i) const { return nodes_[i] != nullptr; }
    const Partition& partition() const { return partition_; }
    // The run is over at the current time (the last event): CPU work booked
    // beyond it counts only up to it (CpuCores::end_run). Called once, after
    // the simulation and before its statistics are read or packed.
    void end_run();
    // The cut links to and from other ranks (null on one rank).
    CutMail* cut_mail() { return mail_.get(); }
    // The far ends here of cut links from other ranks.
    const std::vector<std::unique_ptr<RemoteLink>>& far_ends() const { return far_ends_; }
    const std::vector<std::unique_ptr<RemoteHopLink>>& hop_far_ends() const { return hop_far_ends_; }
    // Some node simulated here (every rank has one).
    Node& any_node();
    // Job 0's workload (process 0 of every node), and every job's.
    Workload& workload();
    const std::vector<std::unique_ptr<Workload>>& workloads() const { return workloads_; }
    sc_core::sc_time time_limit() const { return time_limit_; }
    bool smmu_enabled() const { return smmu_enabled_; }
    // The links between routers (not the NI links of the nodes); on a
    // partitioned run's rank, null where the link's near end is elsewhere.
    const std::vector<std::unique_ptr<Link>>& links() const { return links_; }
    // router.link-order = exact: the kernel's queue of hop events (null otherwise).
    const HopQueue* hops() const { return hops_.get(); }
    // A partitioned run's window ends at `end` (the loop says so before it
    // runs the kernel to there): the hop queue serves nothing from then on
    // until the next window, since another rank's messages may be for it.
    void window_ends_at(sc_core::sc_time end);
    // Link i's name and parameters, wherever it is simulated.
    const std::string& link_name(std::size_t i) const { return link_names_.at(i); }
    const LinkParams& params_of_link(std::size_t i) const;
    // The lookahead of a partitioned run's windows: the latency of the
    // links between boards (0 without any).
    sc_core::sc_time lookahead() const { return lookahead_; }
    // The node whose router links()[i] leads into.
    unsigned link_to(std::size_t i) const { return link_to_.at(i); }
    // Called once, when every job's workload has finished (after the kernel's
    // daemons are told to stop): observers that must not keep the simulation
    // going (the time-series sampler) stop then.
    void on_all_finished(std::function<void()> fn) { all_finished_.push_back(std::move(fn)); }
    // What every node's programs share (src/core/global_sync.hpp): each
    // job's start barrier, the end of every program of every job
    // ("end": the daemons stop and on_all_finished's observers run at its
    // release), the values published before the barrier. Its lookahead is
    // the latency of the links between boards (board-link, mezz-link on a
    // mezzanine); it releases a lookahead after the latest arrival when
    // those links are cut links (board-link.handoff = message on more than
    // one board), at the last arrival otherwise.
    GlobalSync& global_sync() { return *sync_; }
    // The rendezvous of the programs' end.
    unsigned end_rendezvous() const { return end_rv_; }

private:
    std::vector<std::function<void()>> all_finished_;
    bool all_finished_fired_ = false;
    // ConfigError unless the largest packet fits in every buffer it crosses.
    static void check_packet_fits(const Config& c, const Topology& t);
    // ConfigError unless node.processes x rdma.channels channels, context
    // banks and AXI IDs are there for every process.
    static void check_processes(const Config& c);
    // ConfigError for what physical-address mode is not built for (src/sim/physical_engine.cpp).
    static void check_physical(const Config& c);
    // ConfigError for what a partitioned run cannot give the one-rank
    // results of (partition_ split).
    void check_partitioned(const Config& c) const;
    // Files: fs.ssd-fpga on the board, and the SSD's data packets
    // (dma.packet-size) fitting the buffers they cross.
    void check_files(const Config& c) const;
    // Every node of a board reaches the board's SSD (share_files).
    void share_files(const SimContext& ctx);
    // The constructor's parts, in its order (system.cpp): the nodes; the
    // links between their routers; a workload per job (node.processes); the
    // kernel's daemons stopped once every job is done.
    void build_nodes(const SimContext& ctx);
    void build_links(const SimContext& ctx);
    void build_link_outputs(const SimContext& ctx, const LinkParams& board, const LinkParams& ring,
                            std::vector<std::vector<Link*>>& links_out,
                            std::vector<std::vector<std::uint32_t>>& number_out);
    void bind_link_inputs(const SimContext& ctx, const LinkParams& board, const LinkParams& ring,
                          const std::vector<std::vector<Link*>>& links_out,
                          const std::vector<std::vector<std::uint32_t>>& number_out);
    std::size_t check_cut_link_threads() const;
    void build_jobs(const SimContext& ctx);
    // A workload that observes the network (Workload::observes_network:
    // synthetic traffic) is told the network's zero-load sums and NI flit
    // time (channel_load.hpp), and every engine hands it the data packets
    // of its job as they arrive.
    void wire_network_observers(const SimContext& ctx);
    void stop_daemons_when_done();
    const Config* config_;
    PhysicalKeys keys_;   // physical-address mode: what the libraries handed the engines
    Topology topology_;
    Partition partition_;
    std::unique_ptr<CutMail> mail_;   // partitioned: the cut links between ranks
    std::vector<std::unique_ptr<RemoteLink>> far_ends_;   // partitioned: far ends of links from other ranks
    std::vector<std::unique_ptr<RemoteHopLink>> hop_far_ends_;   // the same in exact time order
    std::vector<std::unique_ptr<Node>> nodes_;   // null: on another rank
    std::vector<std::unique_ptr<Link>> links_;
    std::vector<unsigned> link_to_;
    std::vector<std::string> link_names_;
    std::vector<LinkParams> link_params_;
    sc_core::sc_time lookahead_;
    std::unique_ptr<GlobalSync> sync_;
    // router.link-order = exact: the kernel's hop events, and every link
    // served by them (use_hops, after build_links).
    std::unique_ptr<HopQueue> hops_;
    void use_hops();   // made by build_links (its lookahead), before the jobs
    unsigned end_rv_ = 0;
    std::vector<std::unique_ptr<Workload>> workloads_;   // one per job (node.processes)
    std::shared_ptr<const class ChannelModel> channels_;   // a network observer's zero-load sums
    sc_core::sc_time time_limit_;
    bool smmu_enabled_ = false;
};

}   // namespace vrdmasim
