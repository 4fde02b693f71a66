// System: the simulated cluster built from the configuration: nodes (bus,
// DRAM, PLDMA, SMMU, router, OS, application), the links between them, and
// the workload. Knows the models; the core under src/core does not.
//
// One node (one MPSoC), as Node's constructor binds it. TLM initiator
// sockets on the left of an arrow, targets on the right; [n] is a port of
// the bus or of the router.
//
//   memory path (AXI, b_transport)
//   ------------------------------
//   RdmaProcess.cpu ------------------------------+
//   Node.kernel_port (Vm: page tables) ---+--> Bus.in
//   SmmuDriver.mmio ----------------------+      |
//   Smmu500.out (translated DMA) ---------+      +-- out[0] --> Dram.socket       DDR4, 0x0.. and 0x8_0000_0000..
//   Smmu500.walk (page-table reads) ------+      +-- out[1] --> Pldma.mmio        channel registers, 0xA0000000
//                                                +-- out[2] --> Smmu500.regs      0xFD800000, with smmu.enabled
//   Pldma.mem --> Smmu500.tbu[dma.smmu-tbu]      (smmu.enabled = false: Pldma.mem --> Bus.in, physical)
//     (smmu.enabled = false with a registration strategy, the "why pinning exists" experiment:
//      Pldma.mem --> FrameCheck --> Bus.in, physical addresses handed by the library, every frame checked)
//     each access with the stream ID of its channel's process p: one context bank per process
//   Smmu500 context interrupt --> SmmuDriver --> FaultLibrary --> Vm.fault_in(pid of the bank) --> outcome
//     --> Pldma.fault_resolved(stream, ...)
//   RdmaProcess (process 0), App1.. (node.processes): each on its own channels of the Pldma
//
//   packet path (ExaNet, b_transport of ExanetPacket)
//   -------------------------------------------------
//   Pldma.net_out --> Link "inject" --> Router.in[0]
//   Router.out[0] --> Link "eject"  --> Pldma.net_in
//   Router.out[p] --> Link (link, mezz-link or board-link) --> Router.in[q] of the next node on the route
//
// A packet of an RDMA write: the sending Pldma reads the source through
// its TBU (a fault parks the channel), sends it out of net_out; each Router
// picks the output of the next hop (Topology::next_hop); the receiving
// Pldma writes the payload through its own TBU into DRAM (a fault NACKs,
// or redirects into the NetVM kernel buffer) and raises the completion.
#pragma once

#include <map>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "src/core/context.hpp"
#include "models/bus/bus.hpp"
#include "models/bus/bus_port.hpp"
#include "models/dma/pldma.hpp"
#include "models/dma/shadow_translator.hpp"
#include "models/interconnect/link.hpp"
#include "models/interconnect/router.hpp"
#include "models/interconnect/topology.hpp"
#include "models/memory/dram.hpp"
#include "models/os/cpu.hpp"
#include "models/os/filesystem.hpp"
#include "models/os/frame_allocator.hpp"
#include "models/os/remote_block.hpp"
#include "models/os/shadow_pager.hpp"
#include "models/os/smmu_driver.hpp"
#include "models/os/ssd.hpp"
#include "models/os/vm.hpp"
#include "models/os/vm_daemons.hpp"
#include "models/smmu/smmu500.hpp"
#include "library/rdma/process.hpp"
#include "workloads/hog.hpp"
#include "workloads/workload.hpp"
#include "src/sim/frame_check.hpp"
#include "src/sim/parallel/cut_mail.hpp"
#include "src/sim/parallel/partition.hpp"

namespace vrdmasim {

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

// Node address map (physical, as in the ZynqMP): DDR low 2 GiB at 0, the rest
// at 0x8_0000_0000; the PLDMA's registers in the PL window at 0xA000_0000;
// the SMMU's at 0xFD80_0000.
namespace address_map {
constexpr std::uint64_t kDdrLow = 0x0;
constexpr std::uint64_t kDdrLowSize = 0x80000000ull;
constexpr std::uint64_t kDdrHigh = 0x800000000ull;
constexpr std::uint64_t kPldmaRegs = 0xA0000000ull;
// The first 256 MiB stand for the kernel's own memory. Above them, in DDR
// low, the physically contiguous DMA memory of smmu.enabled = false runs;
// the VM's page frames are DDR high (all of DDR low above 256 MiB when the
// node has no more than 2 GiB).
constexpr std::uint64_t kHeapBase = 0x10000000ull;
}   // namespace address_map

class Node : public sc_core::sc_module {
public:
    // `topology` routes the node's router (and must outlive the node);
    // `coords` is its coord_words(), one table shared by every node's PLDMA.
    Node(sc_core::sc_module_name name, const SimContext& ctx, unsigned index, const Topology& topology,
         std::shared_ptr<const std::vector<std::uint32_t>> coords);
    unsigned index;
    std::string group;   // trace group / stat prefix: "node0" on one QFDB, "x1y0z2f3" in a cluster
    Bus bus;
    Dram dram;
    Pldma dma;
    Router router;
    Link inject;   // PLDMA -> router
    Link eject;   // router -> PLDMA
    RdmaProcess app;   // process 0 (job 0); node.processes > 1 adds the others
    // Process p of this node (p < processes()): `app` for p = 0. Each is its
    // own address space (Vm pid), ASID, context bank and stream ID, with
    // rdma.channels channels of the PLDMA in protection domain p + 1.
    RdmaProcess& process(unsigned p) { return p == 0 ? app : *more_apps_.at(p - 1); }
    unsigned processes() const { return static_cast<unsigned>(more_apps_.size()) + 1; }
    // The stream ID of process p's channels: dma.smmu-tbu << 10 | (dma.axi-id + p).
    std::uint32_t stream_of(unsigned p) const;
    // Process p of every node forms job p, in protection domain p + 1 on every node.
    static std::uint16_t domain_of_job(unsigned p) { return static_cast<std::uint16_t>(p + 1); }
    // The operating system: cores, swap device, page frames, the kernel's
    // own port on the bus (page tables and page contents), virtual memory.
    CpuCores cpu;
    Ssd ssd;
    FrameAllocator frames;
    BusPort kernel_port;
    Vm vm;
    VmDaemons daemons;   // kswapd, khugepaged, kcompactd
    std::unique_ptr<Smmu500> smmu;   // in the PLDMA's memory path when smmu.enabled
    std::unique_ptr<SmmuDriver> driver;   // its driver, when smmu.enabled
    // NetVM's network interface (ni.translation = shadow; wire_shadow_ni):
    // the NI's shadow page table, its translation unit on the engine's
    // memory path instead of the SMMU, and the OS side that keeps the table.
    std::unique_ptr<ShadowTable> shadow_table;
    std::unique_ptr<ShadowTranslator> shadow_ni;
    std::unique_ptr<ShadowPager> shadow_pager;
    std::unique_ptr<MemoryHog> hog;   // memory pressure, when hog.bytes > 0 (processes in the Vm)
    // Files on the QFDB's SSD (fs.files > 0): the board's FileSystem lives
    // on the node of FPGA fs.ssd-fpga (`fs`, null elsewhere); every node of
    // the board has its own page cache over those files, and `remote_fs`
    // carries the file reads of the other nodes to the SSD's node and its
    // data back over the intra-board network (models/os/README.md "The SSD
    // from another FPGA"). file_system(): the board's FileSystem, on any
    // node (a ConfigError naming fs.files when there are none).
    std::unique_ptr<FileSystem> fs;
    std::unique_ptr<RemoteBlock> remote_fs;
    FileSystem& file_system();
    // System, once every node exists: `ssd_node` is this board's node of
    // FPGA fs.ssd-fpga (this node itself: it serves the others).
    void share_files(const SimContext& ctx, Node& ssd_node, std::uint32_t coord);
    // Physical-address mode (smmu.enabled = false with a registration
    // strategy, src/sim/physical_engine.cpp): the ownership check on the
    // engine's memory path, bound by attach_physical.
    std::unique_ptr<FrameCheck> frame_check;
    void attach_physical(const SimContext& ctx, PhysicalKeys& keys);

    // [base, size) of the page frames the VM manages on a node with this much DRAM.
    static std::pair<std::uint64_t, std::uint64_t> frame_range(std::uint64_t dram_size);

private:
    const Config& config_;
    unsigned fpga_;
    FileSystem* board_fs_ = nullptr;   // the board's file system (share_files)
    // At time 0: for each process, give it its channels (control words:
    // domain p + 1, enabled, AXI ID dma.axi-id + p); with the SMMU, make it
    // a process of the VM and have the driver attach it to a context bank
    // selected by its stream ID; then start the processes.
    void boot();
    enum class BootStep { Create, Channels, Attached };
    struct {
        unsigned process = 0, channel = 0;
        BootStep step = BootStep::Create;
        int pid = 0;
    } boot_;
    // ni.translation = shadow (instead of the SMMU branch): builds and wires
    // the three shadow_* members above, the processes still in the Vm.
    void wire_shadow_ni(const SimContext& ctx, unsigned procs);
    // The constructor's parts, in its order (system.cpp).
    void wire_bus();
    void add_processes(const SimContext& ctx, unsigned procs);
    void wire_kernel(const SimContext& ctx);
    void wire_smmu(const SimContext& ctx, unsigned procs);
    void enable_netvm(const SimContext& ctx);
    NetvmCopyFn netvm_copy(const SimContext& ctx);
    void wire_without_smmu(const SimContext& ctx);
    void wire_network(const SimContext& ctx, const Topology& topology);
    std::vector<std::unique_ptr<RdmaProcess>> more_apps_;   // processes 1..node.processes-1
    std::map<std::uint32_t, int> pid_of_stream_;   // stream ID -> Vm pid (NetVM copies, fault outcomes, FrameCheck)
    bool physical_ = false;   // physical-address mode (attach_physical)
};

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
    // Builds and binds everything (elaboration). Throws ConfigError for a
    // configuration the models cannot be built with, or that could never
    // work (a packet larger than a buffer it must fit in whole, ...).
    explicit System(const SimContext& ctx);
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
    Node& node(std::size_t i) { return *nodes_[i]; }
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
    Workload& workload() { return *workloads_.front(); }
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
    const LinkParams& params_of_link(std::size_t i) const { return link_params_.at(i); }
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
