// Node: one MPSoC of the cluster, its models built and bound (System builds
// every node, src/sim/system.hpp).
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
#include "src/sim/hog.hpp"
#include "src/sim/frame_check.hpp"

namespace vrdmasim {

class PhysicalKeys;

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

}   // namespace vrdmasim
