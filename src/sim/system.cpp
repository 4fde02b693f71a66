#include "src/sim/system.hpp"
#include "models/common/noise.hpp"

#include "src/sim/channel_load.hpp"
#include "workloads/registry.hpp"
#include "src/sim/event_order.hpp"
#include "src/sim/roi.hpp"

#include "models/power/power.hpp"

#include <tlm_utils/tlm_quantumkeeper.h>

#include "models/interconnect/exanet_packet.hpp"
#include "library/rdma/buffer_guard.hpp"
#include "library/messaging/params.hpp"
#include "src/sim/thread_budget.hpp"

namespace vrdmasim {

using sc_core::sc_time;

namespace {
bool adaptive_routing(const Config& c) { return c[params_of<RouterParams>().routing] == "adaptive"; }

// router.link-order = time-approximate or call-approximate, which the
// topology's checks refuse with adaptive routing (in call order the links
// where paths meet would put every sender's packets back in send order).
bool time_ordered_links(const Config& c) { return c[params_of<RouterParams>().link_order] == "time-approximate"; }
// router.link-order = exact: every hop an event of one HopQueue (Link::use_hops).
bool exact_links(const Config& c) { return c[params_of<RouterParams>().link_order] == "exact"; }

// Links of a class; with adaptive routing every link reserves its wire in
// time order, so that packets of one transfer that took different paths can
// overtake each other where the paths meet (up to the receiving NI).
LinkParams link_params(const Config& c, const LinkSection& section) {
    LinkParams p = Link::params_from(c, section);
    p.time_order = time_ordered_links(c);
    p.exact = exact_links(c);
    // With cut links a call may wait for a credit further on: every link
    // keeps its later callers in line meanwhile (not in exact time order,
    // where no call waits for a credit).
    p.may_wait = c[params_of<LinkSections>().handoff] == "message" && !p.exact;
    return p;
}
}

TopologyParams::TopologyParams()
    : set("topology", "which nodes exist and how they are wired"),
      kind(set.choice("kind", "qfdb", {"qfdb", "mezzanine", "torus"},
                      "qfdb: the FPGAs of one Quad-FPGA Daughter Board, fully connected (QFDB paper); "
                      "mezzanine: 4 QFDBs in a ring, 16 MPSoCs (INFN ExaNeSt page); torus: x*y*z QFDBs "
                      "in a 3-D torus, F1 of each board holding its links (arXiv 2307.09371)")),
      nodes(set.integer("nodes", "2", "MPSoCs (FPGAs) of the QFDB that take part (kind = qfdb only)").range("2", "4")),
      x(set.integer("x", "1", "QFDBs along x (kind = torus only; a dimension of 1 has no links)").range("1", "64")),
      y(set.integer("y", "1", "QFDBs along y (kind = torus only)").range("1", "64")),
      z(set.integer("z", "1", "QFDBs along z (kind = torus only)").range("1", "64")) {}

void System::declare_params(ParamRegistry& reg) {
    reg.add(params_of<SimParams>().set);
    reg.add(params_of<TopologyParams>().set);
    Link::declare_params(reg);
    // Section [ni]'s translation keys, next to the link's (NetVM's NI).
    ShadowTranslator::declare_params(reg);
    ShadowPager::declare_params(reg);
}

void declare_all_params(ParamRegistry& reg) {
    System::declare_params(reg);
    Workload::declare_params(reg);
    RdmaParams::declare_params(reg);
    MsgParams::declare_params(reg);
    Pldma::declare_params(reg);
    Router::declare_params(reg);
    Bus::declare_params(reg);
    Dram::declare_params(reg);
    Smmu500::declare_params(reg);
    CpuCores::declare_params(reg);
    Ssd::declare_params(reg);
    FileSystem::declare_params(reg);
    Vm::declare_params(reg);
    SmmuDriver::declare_params(reg);
    FaultLibrary::declare_params(reg);
    MemoryHog::declare_params(reg);
    PowerModel::declare_params(reg);
    NoiseParams::declare_params(reg);
    RoiParams::declare_params(reg);
}

Node::Node(sc_core::sc_module_name name, const SimContext& ctx, unsigned idx, const Topology& topology,
           std::shared_ptr<const std::vector<std::uint32_t>> coords)
    : sc_module(name),
      index(idx),
      group(std::string(basename())),
      bus("bus", ctx),
      dram("dram", ctx, group),
      dma("dma", ctx, group, idx, std::move(coords)),
      router("router", ctx),
      inject("inject", ctx, link_params(ctx.config, params_of<LinkSections>().ni), group, "ni->router"),
      eject("eject", ctx, link_params(ctx.config, params_of<LinkSections>().ni), group, "router->ni"),
      app("app", ctx, group, idx, dma, address_map::kPldmaRegs, address_map::kHeapBase,
          std::min(dram.size(), address_map::kDdrLowSize) - address_map::kHeapBase),
      cpu(ctx, group + ".cpu", group),
      ssd(ctx, group + ".ssd", group),
      frames(frame_range(dram.size()).first, frame_range(dram.size()).second),
      kernel_port("kernel_port"),
      vm(ctx, group + ".vm", group, kernel_port, frames, cpu),
      daemons("vm_daemons", ctx, group + ".vmd", vm),
      config_(ctx.config),
      fpga_(topology.coord(idx).f) {
    wire_bus();
    const unsigned procs = static_cast<unsigned>(ctx.config[params_of<NodeParams>().processes]);
    add_processes(ctx, procs);
    wire_kernel(ctx);
    if (ctx.config[params_of<SmmuParams>().enabled] && shadow_translation(ctx.config)) {
        wire_shadow_ni(ctx, procs);   // NetVM's NI: the engine bypasses the SMMU
    } else if (ctx.config[params_of<SmmuParams>().enabled]) {
        wire_smmu(ctx, procs);
    } else if (physical_mode(ctx.config)) {
        // The "why pinning exists" experiment: the processes live in the VM
        // and the engine gets physical addresses; System binds it through
        // the ownership check (attach_physical, src/sim/physical_engine.cpp).
    } else {
        wire_without_smmu(ctx);
    }
    wire_network(ctx, topology);
    SC_HAS_PROCESS(Node);
    SC_METHOD(boot);
}

// Bus: out[0] DRAM, out[1] PLDMA registers.
void Node::wire_bus() {
    using namespace address_map;
    const std::uint64_t size = dram.size();
    bus.out.bind(dram.socket);
    bus.out.bind(dma.mmio);
    bus.map(kDdrLow, std::min(size, kDdrLowSize), 0, 0, "ddr-low", &dram);
    if (size > kDdrLowSize) bus.map(kDdrHigh, size - kDdrLowSize, 0, kDdrLowSize, "ddr-high", &dram);
    bus.map(kPldmaRegs, pldma_reg::kWindowSize, 1, 0, "pldma");
}

// Processes 1.. of node.processes (process 0 is `app`), on the bus and the node's cores.
void Node::add_processes(const SimContext& ctx, unsigned procs) {
    for (unsigned p = 1; p < procs; ++p) {
        const std::string name = "app" + std::to_string(p);
        more_apps_.push_back(std::make_unique<RdmaProcess>(
            name.c_str(), ctx, group + ".proc" + std::to_string(p), index, dma, address_map::kPldmaRegs,
            address_map::kHeapBase, std::min(dram.size(), address_map::kDdrLowSize) - address_map::kHeapBase));
    }
    for (unsigned p = 0; p < procs; ++p) {
        process(p).cpu.bind(bus.in);
        process(p).set_cpu(cpu);
    }
}

// The kernel's port on the bus, its swap device, reads in flight, the board's files.
void Node::wire_kernel(const SimContext& ctx) {
    kernel_port.connect(bus);
    vm.set_swap(ssd);
    // A frame an SSD read is filling is not readable before the read ends
    // (the DRAM counts any timed access that comes earlier: early_accesses).
    vm.set_io_guard([this](std::uint64_t pa, sc_core::sc_time until) {
        using namespace address_map;
        const std::uint64_t off = pa >= kDdrHigh ? pa - kDdrHigh + kDdrLowSize : pa - kDdrLow;
        dram.hold(off, Dram::kPageSize, until);
    });
    if (FileSystem::configured(ctx.config) &&
        fpga_ == static_cast<unsigned>(ctx.config[params_of<FsParams>().ssd_fpga])) {
        fs = std::make_unique<FileSystem>(ctx, ssd);   // the board's SSD is on this node's FPGA
        vm.set_file_system(*fs);
        board_fs_ = fs.get();
    }
}

// The SMMU between the engine and memory, and its driver.
void Node::wire_smmu(const SimContext& ctx, unsigned procs) {
    // PLDMA -> TBU -> (translated) -> bus; page-table walks -> bus;
    // registers on the bus at the ZynqMP's address.
    smmu = std::make_unique<Smmu500>("smmu", ctx, group);
    const auto tbu = static_cast<std::size_t>(ctx.config[params_of<PldmaParams>().smmu_tbu]);
    if (tbu >= smmu->tbu.size())
        throw ctx.config.refuse(params_of<PldmaParams>().smmu_tbu,
                                "the SMMU has " + std::to_string(smmu->tbu.size()) + " TBUs (smmu.tbus)");
    dma.mem.bind(*smmu->tbu[tbu]);
    dma.memory_may_wait([s = smmu.get()] { return s->may_stall(); });
    smmu->out.bind(bus.in);
    smmu->walk.bind(bus.in);
    bus.out.bind(smmu->regs);
    bus.map(smmu_reg::kBase, smmu_reg::kSize, 2, 0, "smmu");
    // The driver reaches the registers over the bus, resolves faults
    // through the VM, and is the VM's MMU notifier.
    driver = std::make_unique<SmmuDriver>("smmu_driver", ctx, group, *smmu, cpu,
                                          [this](int pid, std::uint64_t va, std::uint64_t len, bool write,
                                                 sc_core::sc_time at) { return vm.fault_in(pid, va, len, write, at); });
    driver->mmio.bind(bus.in);
    // rdma.buffer-guard = mprotect: the engine's transactions are made
    // privileged, so that it keeps its access to the pages the guard
    // takes from EL0 (models/smmu/README.md "Privileged transactions").
    if (buffer_guard_on(ctx.config)) driver->set_privileged_streams(true);
    // Terminate mode: the fault library's outcomes for the engine's
    // stream let a fault-tolerant PLDMA re-read or ask for retransmission.
    if (!driver->stall_mode())
        driver->on_outcome([this](const FaultOutcome& o) {
            if (pid_of_stream_.count(o.fault.stream_id))
                dma.fault_resolved(o.fault.stream_id, o.fault.address, o.fault.write, o.resolved, o.done, o.story);
        });
    // NetVM: packets for non-resident destination pages wait in a kernel
    // buffer; once the page is in, the kernel copies them into place.
    if (strategy_from(ctx.config) == Strategy::Netvm) enable_netvm(ctx);
    vm.set_invalidate([this](int pid, std::uint16_t asid, std::uint64_t va, std::uint64_t len, sc_core::sc_time at) {
        return driver->invalidate(pid, asid, va, len, at);
    });
    // The processes share the node's memory: each could map all of it,
    // and what one maps, pins or locks the others cannot have.
    for (unsigned p = 0; p < procs; ++p)
        process(p).set_capacity(frames.total_pages() * FrameAllocator::kPage +
                                ctx.config[params_of<SsdParams>().swap_size]);
    if (MemoryHog::wanted(ctx.config, index))
        hog = std::make_unique<MemoryHog>("hog", ctx, group + ".hog", vm, app.capacity());
}

// NetVM: packets for non-resident destination pages wait in a kernel
// buffer; once the page is in, the kernel copies them into place.
void Node::enable_netvm(const SimContext& ctx) {
    if (driver->stall_mode() || !dma.fault_tolerant())   // System::resolve refuses this first
        throw ConfigError("rdma.strategy = netvm (from " + ctx.config.origin(params_of<RdmaParams>().strategy) +
                          ") needs smmu-driver.fault-mode = terminate and dma.fault-tolerant = true: "
                          "the receiver must see the fault to redirect the packet");
    dma.enable_netvm(netvm_copy(ctx));
}

// The kernel's copy of a packet NetVM held into the process whose channel
// received it (its stream), at vm.copy-rate on the node's cores.
NetvmCopyFn Node::netvm_copy(const SimContext& ctx) {
    const double copy_rate = ctx.config[params_of<VmParams>().copy_rate] / 8;   // bytes per second
    return [this, copy_rate](std::uint32_t sid, std::uint64_t va, const unsigned char* data, std::uint64_t len,
                             sc_core::sc_time at) {
        const auto owner = pid_of_stream_.find(sid);
        if (owner == pid_of_stream_.end())
            throw std::logic_error(group + ": NetVM copy for stream " + std::to_string(sid) +
                                   ", which no process of this node owns");
        if (!vm.write_user(owner->second, va, data, len))
            throw std::logic_error(group + ": NetVM copy into an unmapped address of pid " +
                                   std::to_string(owner->second));
        const sc_core::sc_time t(static_cast<double>(len) / copy_rate, sc_core::SC_SEC);
        return cpu.run("netvm-copy", at, t, group + " netvm copy").end;
    };
}

// Without the SMMU: the engine on the bus with physical addresses.
void Node::wire_without_smmu(const SimContext& ctx) {
    if (strategy_from(ctx.config) != Strategy::FaultTolerant)
        throw ConfigError(ctx.config.describe(params_of<RdmaParams>().strategy) +
                          " needs smmu.enabled = true: without the SMMU, buffers are physical DMA memory "
                          "that nothing registers, pins or pages");
    if (ctx.config[params_of<WorkloadParams>().madvise] != "none")
        throw ConfigError(ctx.config.describe(params_of<WorkloadParams>().madvise) +
                          " needs smmu.enabled = true: without the SMMU, buffers are physical memory "
                          "with no mapping to advise");
    dma.mem.bind(bus.in);
    dma.memory_may_wait([] { return false; });   // the bus and DRAM answer with a delay
}

// Network interface: PLDMA -> inject -> router.in[0]; router.out[0] -> eject
// -> PLDMA (the PLDMA calls the injection link, and the links call the
// router and the PLDMA, directly).
void Node::wire_network(const SimContext& ctx, const Topology& topology) {
    dma.connect(inject.in, inject);
    inject.connect(router);
    router.out.bind(eject.in);
    eject.connect(dma.net_in, dma);
    router.set_dimension_order(topology, index);
    if (time_ordered_links(ctx.config)) router.set_time_order();
    router.set_output_link(0, &eject);
    if (adaptive_routing(ctx.config))
        router.set_adaptive(topology, index, static_cast<unsigned>(ctx.config[params_of<RouterParams>().vcs]));
    router.set_input_buffer(0, inject.params().buffer_flits, inject.params().vcs);
}

void Node::wire_shadow_ni(const SimContext& ctx, unsigned procs) {
    // PLDMA -> shadow translation (the NI's table) -> bus, physical. No
    // SMMU, no SMMU driver: the OS side (ShadowPager) is the Vm's map
    // notifier, its MMU notifier and its page-lock check, and serves the
    // NI's misses; their outcomes reach the engine as an SMMU fault's would.
    shadow_table = std::make_unique<ShadowTable>();
    shadow_ni = std::make_unique<ShadowTranslator>("shadow_ni", ctx, group, *shadow_table);
    shadow_pager = std::make_unique<ShadowPager>("shadow_pager", ctx, group, vm, cpu, *shadow_table);
    dma.mem.bind(shadow_ni->in);
    dma.memory_may_wait([] { return false; });   // the NI's own table answers with a delay
    shadow_ni->out.bind(bus.in);
    shadow_ni->on_miss([this](std::uint32_t sid, int pid, std::uint64_t va, bool write, sc_core::sc_time at) {
        shadow_pager->miss(sid, pid, va, write, at);
    });
    shadow_pager->on_outcome([this](std::uint32_t sid, std::uint64_t va, bool write, bool resolved,
                                    sc_core::sc_time done) { dma.fault_resolved(sid, va, write, resolved, done); });
    if (strategy_from(ctx.config) == Strategy::Netvm) {
        if (!dma.fault_tolerant())   // System::resolve refuses this first
            throw ConfigError("rdma.strategy = netvm needs dma.fault-tolerant = true");
        dma.enable_netvm(netvm_copy(ctx));
        dma.enable_credits(ctx.stats, ctx.config[params_of<NiTranslationParams>().credits]);
    }
    for (unsigned p = 0; p < procs; ++p)
        process(p).set_capacity(frames.total_pages() * FrameAllocator::kPage +
                                ctx.config[params_of<SsdParams>().swap_size]);
    if (MemoryHog::wanted(ctx.config, index))
        hog = std::make_unique<MemoryHog>("hog", ctx, group + ".hog", vm, app.capacity());
}

FileSystem& Node::file_system() {
    const auto& P = params_of<FsParams>();
    if (!FileSystem::configured(config_)) throw config_.refuse(P.files, "no files (0): this run has no file system");
    if (!board_fs_) throw std::logic_error(group + ": the board's file system was not shared (System::share_files)");
    return *board_fs_;
}

void Node::share_files(const SimContext& ctx, Node& ssd_node, std::uint32_t coord) {
    // The block agent shares the NI with the engine: its packets leave
    // through net_out, and the engine hands arriving block packets to it.
    remote_fs = std::make_unique<RemoteBlock>(
        ctx, group, index, coord, dma.packet_size(), cpu,
        [this](tlm::tlm_generic_payload& gp, sc_core::sc_time head) { return dma.send_block_packet(gp, head); });
    dma.on_block_packet([this](tlm::tlm_generic_payload& gp, const ExanetPacket& p, sc_core::sc_time tail) {
        return remote_fs->receive(gp, p, tail);
    });
    if (&ssd_node == this) {
        if (!fs) throw std::logic_error(group + ": serving files without the SSD");
        remote_fs->serve(*fs);
        return;
    }
    if (!ssd_node.fs || !ssd_node.remote_fs) throw std::logic_error(group + ": the board's SSD node is not serving");
    remote_fs->connect(*ssd_node.remote_fs, *ssd_node.fs);
    board_fs_ = ssd_node.fs.get();
    vm.set_file_system(*board_fs_, *remote_fs);   // its own page cache over the board's files
}

std::uint32_t Node::stream_of(unsigned p) const { return dma.stream_id() + p; }

void Node::boot() {
    // Process p (a process of the VM, its own pid and ASID) gets channels
    // [p * rdma.channels, (p + 1) * rdma.channels) of the PLDMA in
    // protection domain p + 1 (job p's: the same on every node), with AXI ID
    // dma.axi-id + p in their control words, so that its channels' memory
    // traffic carries its own stream ID; the kernel maps their register pages.
    // An SC_METHOD (no stack of its own): where a thread would wait for a
    // register write or the driver's attach, it sets its next trigger and
    // resumes at boot_ (process, channel, step).
    const unsigned per = app.channels_per_process();
    while (boot_.process < processes()) {
        const unsigned p = boot_.process;
        RdmaProcess& a = process(p);
        const std::uint32_t sid = stream_of(p);
        if (boot_.step == BootStep::Create) {
            boot_.pid =
                smmu || shadow_ni || physical_ ? vm.create_process(p == 0 ? "app" : "app" + std::to_string(p)) : 0;
            boot_.channel = 0;
            boot_.step = BootStep::Channels;
        }
        if (boot_.step == BootStep::Channels) {
            if (boot_.channel > 0 && dma.channel_stream_id(p * per + boot_.channel - 1) != sid)
                throw std::logic_error(group + ": channel stream ID not set");
            if (boot_.channel < per) {
                const unsigned c = p * per + boot_.channel++;
                std::uint32_t ctrl = pldma_reg::kCtrlEnable | static_cast<std::uint32_t>(domain_of_job(p)) |
                                     ((sid & 0x3fu) << pldma_reg::kCtrlAxiShift);
                tlm::tlm_generic_payload gp;
                gp.set_command(tlm::TLM_WRITE_COMMAND);
                gp.set_address(address_map::kPldmaRegs + pldma_reg::kKernelBase + 8 * c + pldma_reg::kChannelCtrl);
                gp.set_data_ptr(reinterpret_cast<unsigned char*>(&ctrl));
                gp.set_data_length(4);
                gp.set_streaming_width(4);
                gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
                sc_core::sc_time d = sc_core::SC_ZERO_TIME;
                kernel_port.b_transport(gp, d);
                if (!gp.is_response_ok()) throw std::logic_error(group + ": PLDMA channel set-up failed");
                sc_core::next_trigger(d);   // the write's time; the ID is checked after it
                return;
            }
            a.set_channels(p * per, per);
            if (smmu) {
                pid_of_stream_[sid] = boot_.pid;
                const sc_core::sc_time done = driver->attach(boot_.pid, vm.asid(boot_.pid), vm.root(boot_.pid),
                                                             vm.t0sz(), {sid}, sc_core::sc_time_stamp());
                boot_.step = BootStep::Attached;
                sc_core::next_trigger(done - sc_core::sc_time_stamp());
                return;
            }
            if (shadow_ni) {   // ni.translation = shadow: the NI knows the stream's process
                pid_of_stream_[sid] = boot_.pid;
                shadow_ni->bind_stream(sid, boot_.pid);
                a.attach_process(vm, boot_.pid);
            } else if (physical_) {   // no SMMU to attach it to: the engine gets physical addresses
                pid_of_stream_[sid] = boot_.pid;
                a.attach_process(vm, boot_.pid);
            }
        } else {   // BootStep::Attached: the driver's attach is done
            a.attach_process(vm, boot_.pid);
        }
        ++boot_.process;
        boot_.step = BootStep::Create;
    }
    for (unsigned p = 0; p < processes(); ++p) process(p).start();
}

std::pair<std::uint64_t, std::uint64_t> Node::frame_range(std::uint64_t dram_size) {
    using namespace address_map;
    const std::uint64_t block = 2ull << 20;
    if (dram_size > kDdrLowSize) return {kDdrHigh, (dram_size - kDdrLowSize) / block * block};
    return {kHeapBase, (dram_size - kHeapBase) / block * block};
}

void System::resolve(Config& c) {
    struct Need {
        const char* key;
        const char* value;
    };
    std::vector<Need> needs;
    std::string why;
    if (strategy_from(c) == Strategy::Netvm) {
        needs = {{"smmu-driver.fault-mode", "terminate"}, {"dma.fault-tolerant", "true"}};
        why =
            "the receiving engine must see a fault on a non-resident page (terminate mode) and survive it "
            "(the fault-tolerant engine) to redirect the packet into the kernel buffer";
    }
    const std::string strategy = "rdma.strategy = " + c.text(params_of<RdmaParams>().strategy);
    for (const Need& n : needs) {
        const ParamDecl* d = c.registry().find(n.key);
        const bool holds =
            d->type == ParamType::Bool ? c.boolean(n.key) == parse_bool(n.value) : c.string(n.key) == n.value;
        if (holds) continue;
        if (c.origin(n.key) == "default") {
            c.set(n.key, n.value, "implied by " + strategy);
            continue;
        }
        throw ConfigError(strategy + " (from " + c.origin(params_of<RdmaParams>().strategy) + ") needs " + n.key +
                          " = " + n.value + ", but " + c.describe(n.key) + ": " + why + ". Set " + n.key + " = " +
                          n.value + " (or leave it out), or choose another rdma.strategy");
    }
}

namespace {
// rdma.buffer-guard = mprotect needs what it is built on: processes in a Vm
// whose engine translates through the SMMU (the privileged transactions),
// and the one workload whose library paths guard (overlap: RdmaProcess::send, get).
void check_buffer_guard(const Config& c) {
    if (!buffer_guard_on(c)) return;
    const std::string why = " (" + c.describe(params_of<RdmaParams>().buffer_guard) + ")";
    if (!c[params_of<SmmuParams>().enabled])
        throw c.refuse(params_of<RdmaParams>().buffer_guard,
                       "needs smmu.enabled = true: the guard is an mprotect of the process's page tables that the "
                       "SMMU walks with privileged transactions");
    if (shadow_translation(c))
        throw c.refuse(params_of<RdmaParams>().buffer_guard,
                       "needs ni.translation = smmu: NetVM's shadow table has no access-permission bits for a "
                       "privileged engine to keep" +
                           why);
    // Every one-sided transfer goes through the library's send and get,
    // which guard and lift; the two-sided library guards a request's user
    // buffer from isend or irecv to completion; the file server guards each
    // source it posts until its record, a client its slot until the reply.
    // The lock workload's engine operations are atomics on words the
    // library owns; the file server's kernel-copy moves kernel socket
    // buffers, and direct access moves nothing through the engine: no
    // buffer of the application is in flight for a guard to keep it off.
    // (docs/composition.md, the refusal table.)
    const WorkloadKind& k = workload_kinds::of(c);
    if (const std::string why = k.guard_refusal ? k.guard_refusal(c) : ""; !why.empty())
        throw c.refuse(params_of<RdmaParams>().buffer_guard, why);
}

// rdma.prefetch = advise makes pages of the processes' mappings present:
// it needs processes in the VM (the SMMU, or physical-address mode).
void check_prefetch(const Config& c) {
    if (!prefetch_on(c) || c[params_of<SmmuParams>().enabled] || physical_mode(c)) return;
    throw c.refuse(params_of<RdmaParams>().prefetch,
                   "has nothing to prefetch with smmu.enabled = false and rdma.strategy = fault-tolerant: buffers are "
                   "physically contiguous DMA memory, always present");
}
}   // namespace

void System::check_processes(const Config& c) {
    const auto procs = static_cast<std::uint64_t>(c[params_of<NodeParams>().processes]);
    const auto per = static_cast<std::uint64_t>(c[params_of<RdmaParams>().channels]);
    const auto channels = static_cast<std::uint64_t>(c[params_of<PldmaParams>().channels]);
    if (procs * per > channels)
        throw c.refuse(procs > 1 ? params_of<NodeParams>().processes : params_of<RdmaParams>().channels,
                       "node.processes x rdma.channels = " + std::to_string(procs * per) + " channels per node, but " +
                           c.describe(params_of<PldmaParams>().channels) +
                           ": each process needs channels of its own. Raise dma.channels or lower the others");
    if (procs > Smmu500::kContextBanks)
        throw c.refuse(params_of<NodeParams>().processes,
                       "the SMMU has " + std::to_string(Smmu500::kContextBanks) + " context banks, one per process");
    if (procs > 1 && !c[params_of<SmmuParams>().enabled])
        throw c.refuse(params_of<NodeParams>().processes,
                       "needs smmu.enabled = true: without the SMMU the engine has no stream IDs to tell the "
                       "processes apart and buffers are physical memory of one process");
    if (static_cast<std::uint64_t>(c[params_of<WorkloadParams>().cold_jobs]) > procs)
        throw c.refuse(params_of<WorkloadParams>().cold_jobs,
                       "names more jobs than there are (" + c.describe(params_of<NodeParams>().processes) + ")");
    // The two-sided library (an endpoint per process, statistics under the
    // process's group) watches one channel's completion count: one channel
    // per process.
    const bool one_channel = workload_kinds::of(c).one_channel;
    const bool two_sided = c[params_of<WorkloadParams>().two_sided];
    if (per > 1 && (one_channel || two_sided))
        throw c.refuse(params_of<RdmaParams>().channels,
                       "the two-sided library posts on and counts the completions of one channel, so " +
                           (one_channel ? c.describe(params_of<WorkloadParams>().kind)
                                        : c.describe(params_of<WorkloadParams>().two_sided)) +
                           " needs rdma.channels = 1");
    const auto axi = static_cast<std::uint64_t>(c[params_of<PldmaParams>().axi_id]);
    if (axi + procs - 1 > 63)
        throw c.refuse(params_of<NodeParams>().processes,
                       "process p's channels carry AXI ID dma.axi-id + p, at most 63, but " +
                           c.describe(params_of<PldmaParams>().axi_id));
}

void System::check_packet_fits(const Config& c, const Topology& t) {
    // The largest data packet carries min(dma.packet-size, dma.block-size,
    // workload.message-size) bytes (a message is read in blocks, a block cut
    // into packets); control and response packets carry at most 24 B (4
    // flits). A link forwards a packet only once its far-end buffer (per VC)
    // has room for the whole of it.
    auto named = [&](const std::string& key) { return c.describe(key); };
    std::uint64_t payload = c[params_of<PldmaParams>().packet_size];
    std::string by = "dma.packet-size";
    if (c[params_of<PldmaParams>().block_size] < payload)
        payload = c[params_of<PldmaParams>().block_size], by = "dma.block-size";
    const std::uint64_t msg = c[params_of<WorkloadParams>().message_size];
    if (msg > 0 && msg < payload) payload = msg, by = "workload.message-size";
    const std::uint64_t flits = std::max<std::uint64_t>(2 + (payload + kFlitBytes - 1) / kFlitBytes, 4);
    const std::uint64_t need = flits * kFlitBytes;
    std::vector<std::string> sections{"ni"};
    bool local = false, ring = false;
    for (unsigned i = 0; i < t.size(); ++i)
        for (unsigned k = 1; k < t.port_count(i); ++k) (t.port(i, k).dim == Topology::kLocal ? local : ring) = true;
    if (local) sections.push_back("link");
    if (ring) sections.push_back(t.kind() == TopologyKind::Mezzanine ? "mezz-link" : "board-link");
    for (const std::string& s : sections) {
        const std::string key = s + ".buffer";
        const std::uint64_t held = c.size(key) / kFlitBytes;
        if (held * kFlitBytes >= need) continue;
        const std::string what = by == "dma.packet-size" ? named(by) : named(by) + " with " + named("dma.packet-size");
        throw ConfigError(what + " makes packets of " + std::to_string(payload) + " B of payload, " +
                          std::to_string(flits) + " flits of 16 B with header and footer (" + std::to_string(need) +
                          " B), but " + named(key) + " holds " + std::to_string(held) +
                          " flits per VC: a packet must fit in it whole, so none could ever be sent. Raise " + key +
                          " to at least " + std::to_string(need) + "B, or lower " + by + " to at most " +
                          (held >= 3 ? std::to_string((held - 2) * kFlitBytes) + "B" : std::string("what it holds")));
    }
}

void System::check_files(const Config& c) const {
    if (!FileSystem::configured(c)) return;
    if (static_cast<unsigned>(c[params_of<FsParams>().ssd_fpga]) >= topology_.fpgas_per_board())
        throw c.refuse(params_of<FsParams>().ssd_fpga,
                       "the board has " + std::to_string(topology_.fpgas_per_board()) + " FPGAs");
    // The SSD's data go to the board's other nodes in packets of
    // dma.packet-size through the NI links and the board's links.
    const std::uint64_t need =
        (2 + (c[params_of<PldmaParams>().packet_size] + kFlitBytes - 1) / kFlitBytes) * kFlitBytes;
    for (const std::string key : {"ni.buffer", "link.buffer"})
        if (c.size(key) < need)
            throw c.refuse(params_of<PldmaParams>().packet_size,
                           "the SSD's data packets to the board's other nodes take " + std::to_string(need) +
                               " B with header and footer, more than " + key + " = " + std::to_string(c.size(key)) +
                               " B holds (fs.files > 0)");
}

void System::share_files(const SimContext& ctx) {
    if (!FileSystem::configured(ctx.config)) return;
    // The node of FPGA fs.ssd-fpga of each board serves first, then the
    // board's other nodes connect to it.
    const auto ssd_fpga = static_cast<unsigned>(ctx.config[params_of<FsParams>().ssd_fpga]);
    auto server_of = [&](unsigned i) {
        Coord at = topology_.coord(i);
        at.f = ssd_fpga;
        if (!topology_.contains(at))
            throw std::logic_error("topology: no FPGA " + std::to_string(ssd_fpga) + " on the board of " +
                                   topology_.name(i));
        return topology_.node_of(at);
    };
    // A board is on one rank, whole: its server is where its nodes are.
    for (unsigned i = 0; i < nodes_.size(); ++i)
        if (present(i) && server_of(i) == i) nodes_[i]->share_files(ctx, *nodes_[i], coord(i));
    for (unsigned i = 0; i < nodes_.size(); ++i)
        if (present(i) && server_of(i) != i) nodes_[i]->share_files(ctx, *nodes_[server_of(i)], coord(i));
}

Topology System::topology_from(const Config& c) {
    const std::string kind = c[params_of<TopologyParams>().kind];
    auto refuse = [&](const std::string& key, const std::string& why) { return c.refuse(key, why); };
    // A key of another kind may keep its default (a run's config.ini lists
    // every key), but any other value is a mistake.
    const auto given = [&](const char* key) {
        return c.origin(key) != "default" && c.integer(key) != std::stoll(c.registry().find(key)->default_text);
    };
    if (kind != "qfdb" && given("topology.nodes"))
        throw refuse("topology.nodes",
                     "applies to topology.kind = qfdb only; a " + kind + " has 4 MPSoCs on each of its QFDBs");
    if (kind != "torus")
        for (const char* k : {"topology.x", "topology.y", "topology.z"})
            if (given(k)) throw refuse(k, "applies to topology.kind = torus only (topology.kind = " + kind + ")");
    if (kind == "qfdb" && adaptive_routing(c))
        throw refuse("router.routing",
                     "adaptive routing chooses among the torus dimensions of the F1 routers: it "
                     "needs topology.kind = torus with 2 or more QFDBs (" +
                         c.describe(params_of<TopologyParams>().kind) + ")");
    if (kind == "qfdb") return Topology::qfdb(static_cast<unsigned>(c[params_of<TopologyParams>().nodes]));
    Topology t = kind == "mezzanine" ? Topology::mezzanine()
                                     : Topology::torus(static_cast<unsigned>(c[params_of<TopologyParams>().x]),
                                                       static_cast<unsigned>(c[params_of<TopologyParams>().y]),
                                                       static_cast<unsigned>(c[params_of<TopologyParams>().z]));
    bool rings = false;
    for (int d = Topology::X; d <= Topology::Z; ++d) rings = rings || t.extent(d) >= 3;
    if (adaptive_routing(c)) {
        if (kind != "torus" || !t.multi_board())
            throw refuse("router.routing",
                         "adaptive routing chooses among the torus dimensions of the F1 "
                         "routers: it needs topology.kind = torus with 2 or more QFDBs (" +
                             c.describe(params_of<TopologyParams>().kind) + ")");
        if (!time_ordered_links(c) && !exact_links(c))
            throw refuse("router.link-order",
                         "router.routing = adaptive needs links served in time order: packets of one transfer "
                         "take different paths and overtake where they meet, which first come first served by "
                         "call would undo (router.link-order = exact or time-approximate)");
        if (c[params_of<RouterParams>().vcs] < 3)
            throw refuse("router.vcs",
                         "router.routing = adaptive needs at least 3 virtual channels: VCs 0 and 1 "
                         "are the dimension-order escape channels (dateline), 2 and up adaptive");
        if (!c.boolean("dma.fault-tolerant"))
            throw refuse("dma.fault-tolerant",
                         "router.routing = adaptive delivers the packets of one transfer out of sequence (they "
                         "take different paths), and the original engine's receiver marks a transfer whose packet "
                         "comes out of sequence as failed (models/dma/README.md, *Protocol*): adaptive routing "
                         "needs the fault-tolerant engine's receiver, which takes them in any order "
                         "(dma.fault-tolerant = true, the default)");
    }
    if (rings && c[params_of<RouterParams>().vcs] < 2)
        throw refuse("router.vcs", "a " + kind +
                                       " with rings of 3 or more boards needs at least 2 virtual "
                                       "channels for its dateline (deadlock avoidance)");
    return t;
}

System::System(const SimContext& ctx) : System(ctx, 1, 0) {}

System::System(const SimContext& ctx, unsigned ranks, unsigned rank)
    : config_(&ctx.config),
      topology_(topology_from(ctx.config)),
      time_limit_(ctx.config[params_of<SimParams>().time_limit]) {
    // Its form is checked in one process too (which ignores it), so that a
    // configuration meant for N ranks does not carry a value N ranks refuse.
    Partition::check_spec(ctx.config[params_of<SimParams>().partition]);
    if (ranks > 1) {
        partition_ = Partition::choose(topology_, ranks, rank, ctx.config[params_of<SimParams>().partition]);
        check_partitioned(ctx.config);
        mail_ = std::make_unique<CutMail>(ranks, rank);
    }
    if (sc_core::sc_get_time_resolution() != sc_time(1, sc_core::SC_PS))
        throw std::logic_error("vrdmasim needs SystemC's default 1 ps time resolution");
    tlm_utils::tlm_quantumkeeper::set_global_quantum(ctx.config[params_of<SimParams>().quantum]);
    // Before anything is built: the kernel's heap must order every
    // notification of this run alike.
    event_order::set(event_order::parse(ctx.config[params_of<SimParams>().event_order]),
                     static_cast<std::uint64_t>(ctx.config[params_of<SimParams>().event_order_seed]));
    const Config& c = ctx.config;
    const unsigned n = topology_.size();
    // The trace's groups are numbered in node order, on every rank alike
    // (each rank makes only its nodes' tracks), and its ids are unique
    // across ranks (docs/trace.md "Order and numbering").
    {
        std::vector<std::string> groups;
        groups.reserve(n);
        for (unsigned i = 0; i < n; ++i) groups.push_back(topology_.name(i));
        ctx.tracer.set_group_order(groups);
        ctx.tracer.set_rank(rank);
    }
    check_packet_fits(c, topology_);
    check_processes(c);
    check_buffer_guard(c);
    check_prefetch(c);
    check_shadow_config(c, n, strategy_from(c) == Strategy::Netvm);
    check_physical(c);
    check_files(c);
    PowerModel{c};   // its settings, checked before the run rather than by its energy at the end
    if (c[params_of<DramParams>().size] < address_map::kHeapBase + (2ull << 20))
        throw c.refuse(params_of<DramParams>().size, "must exceed the 256 MiB kept for the kernel by at least 2 MiB");
    build_nodes(ctx);
    if (physical_mode(c))
        for (auto& node : nodes_) node->attach_physical(ctx, keys_);
    share_files(ctx);
    build_links(ctx);
    if (exact_links(c)) use_hops();
    smmu_enabled_ = c[params_of<SmmuParams>().enabled];
    build_jobs(ctx);
    stop_daemons_when_done();
    if (partition_.split())
        for (const auto& w : workloads_)
            if (std::string why = w->partition_refusal(); !why.empty())
                throw ConfigError("a partitioned run (" + std::to_string(ranks) +
                                  " MPI ranks) cannot give the "
                                  "one-process results of this workload: " +
                                  why);
}

void System::use_hops() {
    if ((*config_)[params_of<LinkSections>().handoff] == "message")
        throw config_->refuse(
            params_of<LinkSections>().handoff,
            "applies to router.link-order = time-approximate and call-approximate: in exact time order a board "
            "link cut between the ranks of a partitioned run gives the figures of one process "
            "without it (models/interconnect/README.md, *Exact time order: cut links*)");
    hops_ = std::make_unique<HopQueue>("hops");
    // Numbered in node order, then the links between nodes, as the topology
    // orders them (on every rank alike, whatever it simulates): the numbers
    // break ties among same-time events.
    const auto n = static_cast<std::uint32_t>(nodes_.size());
    for (std::uint32_t i = 0; i < n; ++i) {
        if (!nodes_[i]) continue;
        nodes_[i]->inject.use_hops(*hops_, 2 * i);
        nodes_[i]->eject.use_hops(*hops_, 2 * i + 1);
    }
    for (std::size_t j = 0; j < links_.size(); ++j)
        if (links_[j]) links_[j]->use_hops(*hops_, 2 * n + static_cast<std::uint32_t>(j));
    // The far ends here of links cut between ranks (their near ends were
    // given the mail's port when they were built).
    for (auto& end : hop_far_ends_) end->attach(*hops_, 2 * n + end->far().number());
}

void System::window_ends_at(sc_time end) {
    if (hops_) hops_->serve_before(end);
}

Node& System::any_node() {
    for (auto& n : nodes_)
        if (n) return *n;
    throw std::logic_error("System: no node on this rank");
}

void System::check_partitioned(const Config& c) const {
    const std::string why =
        "; a partitioned run must give what one process gives, whatever the partition "
        "(docs/scaling.md \"The same results for any partitioning\")";
    // Exact time order gives the same figures with or without cut links
    // and under every order of same-time events (hop_cut.hpp): it needs
    // neither setting.
    const bool exact = exact_links(c);
    if (!exact && c[params_of<LinkSections>().handoff] != "message")
        throw c.refuse(params_of<LinkSections>().handoff,
                       "must be message in a partitioned run: the boards of two ranks meet only through messages "
                       "on their links, and its one-process reference runs every board link so" +
                           why);
    if (!exact && c[params_of<SimParams>().event_order] != "keyed")
        throw c.refuse(params_of<SimParams>().event_order,
                       "must be keyed in a partitioned run: a rank's kernel holds other events than the "
                       "one-process run's, and SystemC's own order of same-time events depends on them" +
                           why);
    if (!exact && !time_ordered_links(c))
        throw c.refuse(
            params_of<RouterParams>().link_order,
            "must be exact or time-approximate in a partitioned run: first come, first served by call order depends on "
            "which process runs first, which a rank decides otherwise than one process" +
                why);
    if (physical_mode(c))
        throw ConfigError(
            "a partitioned run of physical-address mode (smmu.enabled = false with a registration "
            "strategy) is not built: its key table is read by every sender" +
            why);
}

void System::build_nodes(const SimContext& ctx) {
    const unsigned n = topology_.size();
    // One node index -> coordinate table for every PLDMA (an entry per node:
    // a copy each would cost nodes² words).
    const auto coords = std::make_shared<const std::vector<std::uint32_t>>(topology_.coord_words());
    const std::size_t stats_before = ctx.stats.registered();
    // A partitioned run's rank builds its own boards' nodes only.
    unsigned here = 0;
    for (unsigned i = 0; i < n; ++i) here += partition_.present(i) ? 1 : 0;
    bool first = true;
    for (unsigned i = 0; i < n; ++i) {
        if (!partition_.present(i)) {
            nodes_.push_back(nullptr);
            continue;
        }
        nodes_.push_back(std::make_unique<Node>(topology_.name(i).c_str(), ctx, i, topology_, coords));
        // Every node has the threads of the first: a system whose stacks the
        // host cannot map is refused now, not after minutes (thread_budget.hpp).
        // And the statistics of the first: the name index is sized once for
        // all nodes (rehashing it as it grows was a tenth of elaboration).
        if (first) {
            first = false;
            check_thread_budget(thread_processes_under(*nodes_[i]), here,
                                "a system of " + std::to_string(here) + " nodes");
            ctx.stats.reserve(stats_before + (ctx.stats.registered() - stats_before) * here);
        }
    }
}

bool System::varies(const Config& c) { return NoiseParams::any(c); }

std::string System::workload_findings(const Config& c, const StatRegistry& stats) {
    return workload_kinds::findings(c, stats);
}

void System::build_links(const SimContext& ctx) {
    const Config& c = ctx.config;
    const unsigned n = topology_.size();
    // Router ports as topology.hpp numbers them: 0 the NI, then the other
    // FPGAs of the board (class `link`), then on F1 the off-board links
    // (`mezz-link` on a mezzanine, `board-link` on a torus). Every link's far
    // end has router.vcs buffers.
    const unsigned vcs = static_cast<unsigned>(c[params_of<RouterParams>().vcs]);
    LinkParams board = link_params(c, params_of<LinkSections>().link);
    LinkParams ring =
        link_params(c, topology_.kind() == TopologyKind::Mezzanine ? params_of<LinkSections>().mezz_link
                                                                   : params_of<LinkSections>().board_link);
    board.vcs = ring.vcs = vcs;
    // board-link.handoff = message: every link between two boards is a cut
    // link (on a mezzanine its ring edges, class mezz-link).
    ring.handoff = c[params_of<LinkSections>().handoff] == "message";
    // A cut link's far end delivers in a thread of its own, which must
    // return the packet's credit before it may wait for another's: the
    // engines answer from their control threads.
    // (In exact time order a far end only posts an arrival: nothing waits.)
    if (ring.handoff && !ring.exact && topology_.kind() != TopologyKind::Qfdb)
        for (auto& node : nodes_)
            if (node) node->dma.respond_from_thread();
    // Output port k of node i: links_out[i][k] (its number number_out[i][k]).
    std::vector<std::vector<Link*>> links_out(n);
    std::vector<std::vector<std::uint32_t>> number_out(n);
    build_link_outputs(ctx, board, ring, links_out, number_out);
    bind_link_inputs(ctx, board, ring, links_out, number_out);
    const std::size_t cut = check_cut_link_threads();
    // What the workloads share across nodes is released a cut link's
    // latency after its latest arrival when the boards meet only at cut
    // links: the time a partitioned run's window loop can release it at
    // (docs/scaling.md, "What the workloads share across nodes").
    // In exact time order the same with or without cut links, so that one
    // process gives what a partitioned run gives (a board link's cut
    // changes no other figure there: hop_cut.hpp).
    sync_ = std::make_unique<GlobalSync>(ring.latency,
                                         cut > 0 || partition_.split() || (ring.exact && topology_.multi_board()));
}

// The links that leave each node, bound to its router's outputs in port
// order. On a partitioned run's rank: the links that leave its nodes (null
// elsewhere), numbered as in one process; a link to another rank's node has
// its near end only here, reached through the cut mail.
void System::build_link_outputs(const SimContext& ctx, const LinkParams& board, const LinkParams& ring,
                                std::vector<std::vector<Link*>>& links_out,
                                std::vector<std::vector<std::uint32_t>>& number_out) {
    const unsigned n = topology_.size();
    for (unsigned i = 0; i < n; ++i) {
        const unsigned ports = topology_.port_count(i);
        links_out[i].assign(ports, nullptr);
        number_out[i].assign(ports, 0);
        for (unsigned k = 1; k < ports; ++k) {
            const Topology::Port p = topology_.port(i, k);
            const std::string a_group = topology_.name(i), b_group = topology_.name(p.to);
            LinkParams lp = p.dim == Topology::kLocal ? board : ring;
            lp.number = static_cast<std::uint32_t>(links_.size());   // names a cut link in its messages
            number_out[i][k] = lp.number;
            link_to_.push_back(p.to);
            link_names_.push_back(a_group + "_to_" + b_group);
            link_params_.push_back(lp);
            if (p.dim != Topology::kLocal) lookahead_ = ring.latency;
            if (!present(i)) {
                links_.push_back(nullptr);
                continue;
            }
            Node& a = *nodes_[i];
            lp.far_elsewhere = !present(p.to);
            links_.push_back(
                std::make_unique<Link>((a_group + "_to_" + b_group).c_str(), ctx, lp, a.group, "link->" + b_group));
            links_out[i][k] = links_.back().get();
            a.router.out.bind(links_out[i][k]->in);
            a.router.set_output_link(k, links_out[i][k]);
            if (lp.far_elsewhere) {
                links_out[i][k]->connect_far(mail_->packets_to(partition_.rank_of_node(p.to), lp.number));
                mail_->near_end(lp.number, links_out[i][k]->cut_near_end());
            }
        }
    }
}

// Each node's router inputs: input port k of node j comes from the node its
// output port k leads to. A link from another rank's node has its far end
// here (a RemoteHopLink in exact time order, else a RemoteLink's
// CutLinkEnd), reached through the cut mail.
void System::bind_link_inputs(const SimContext& ctx, const LinkParams& board, const LinkParams& ring,
                              const std::vector<std::vector<Link*>>& links_out,
                              const std::vector<std::vector<std::uint32_t>>& number_out) {
    for (unsigned j = 0; j < topology_.size(); ++j) {
        if (!present(j)) continue;
        Node& b = *nodes_[j];
        for (unsigned k = 1; k < topology_.port_count(j); ++k) {
            const unsigned i = topology_.port(j, k).to;
            const int back = topology_.port_to(i, j);
            if (back < 0) throw std::logic_error("topology: no link back from " + topology_.name(i));
            if (present(i)) {
                Link& l = *links_out[i][static_cast<unsigned>(back)];
                l.connect(b.router);
                b.router.set_input_buffer(k, l.params().buffer_flits, l.params().vcs);
                continue;
            }
            // The link's near end is on another rank: its far end here.
            const Topology::Port p = topology_.port(i, static_cast<unsigned>(back));
            const LinkParams lp = p.dim == Topology::kLocal ? board : ring;
            const std::uint32_t number = number_out[i][static_cast<unsigned>(back)];
            if (lp.exact) {
                hop_far_ends_.push_back(std::make_unique<RemoteHopLink>((topology_.name(i) + "_to_" + b.group).c_str(),
                                                                        number, lp.latency));
                RemoteHopLink& end = *hop_far_ends_.back();
                end.connect(b.router);
                end.far().reply_to(mail_->credits_to(partition_.rank_of_node(i), number));
                mail_->far_end(number, end.far());
                b.router.set_input_buffer(k, lp.buffer_flits, lp.vcs);
                continue;
            }
            far_ends_.push_back(std::make_unique<RemoteLink>((topology_.name(i) + "_to_" + b.group).c_str(), number,
                                                             ctx, lp.vcs, lp.latency));
            CutLinkEnd& end = far_ends_.back()->end;
            end.connect(b.router);
            end.far().reply_to(mail_->credits_to(partition_.rank_of_node(i), number));
            mail_->far_end(number, end.far());
            b.router.set_input_buffer(k, lp.buffer_flits, lp.vcs);
        }
    }
}

// Each cut link has a delivery thread per VC (spawned at its VC's first
// packet): counted with the nodes', spread over them, against the thread
// budget. Returns the cut links.
std::size_t System::check_cut_link_threads() const {
    std::size_t cut = 0, delivery = 0, here = 0;
    const Node* some = nullptr;
    for (const auto& node : nodes_)
        if (node) ++here, some = some ? some : node.get();
    for (const auto& l : links_)
        if (l && l->cut_far()) ++cut, delivery += thread_processes_under(*l);
    for (const auto& e : far_ends_) ++cut, delivery += thread_processes_under(*e);
    if (cut > 0 && some)
        check_thread_budget(thread_processes_under(*some) + (delivery + here - 1) / here, here,
                            "a system of " + std::to_string(here) + " nodes and " + std::to_string(cut) + " cut links");
    return cut;
}

void System::build_jobs(const SimContext& ctx) {
    const Config& c = ctx.config;
    // Job p: process p of every node, running its own copy of the workload.
    const unsigned jobs = static_cast<unsigned>(c[params_of<NodeParams>().processes]);
    // Each node's file system for the fileserve workload (Node::file_system()
    // on a node that has one; nullptr elsewhere).
    std::vector<FileSystem*> files;
    if (FileSystem::configured(c))
        for (auto& node : nodes_) files.push_back(node && node->fs ? &node->file_system() : nullptr);
    for (unsigned p = 0; p < jobs; ++p) {
        std::vector<RdmaProcess*> apps;   // null: a node on another rank
        for (auto& node : nodes_) apps.push_back(node ? &node->process(p) : nullptr);
        workloads_.push_back(Workload::create(ctx, apps, p, files));
        workloads_.back()->set_hops([this](unsigned a, unsigned b) { return hops(a, b); });
        // A node's board: node index = board * FPGAs per board + FPGA (topology.hpp).
        workloads_.back()->set_boards([this](unsigned n) { return n / topology_.fpgas_per_board(); });
        // What the jobs measure once together (the file server's node-wide figures).
        workloads_.back()->join(*workloads_.front());
        // A workload may check its job's operations against the completions
        // the engines counted on that job's channels alone (the lock workload).
        workloads_.back()->count_engine_completions([this, p] {
            std::uint64_t n = 0;
            for (auto& node : nodes_) {
                if (!node) continue;
                const RdmaProcess& a = node->process(p);
                for (unsigned k = 0; k < a.channel_count(); ++k) n += node->dma.tx_signal(a.channel() + k).raised();
            }
            return n;
        });
    }
    wire_network_observers(ctx);
}

void System::wire_network_observers(const SimContext& ctx) {
    std::vector<Workload*> jobs;
    bool any = false;
    for (const auto& w : workloads_) {
        jobs.push_back(w->observes_network() ? w.get() : nullptr);
        any = any || jobs.back();
    }
    if (!any) return;
    channels_ = std::make_shared<const ChannelModel>(ctx.config);
    std::shared_ptr<const ChannelModel> model = channels_;
    for (Workload* w : jobs)
        if (w)
            w->set_network(model->ni_flit(), [model](unsigned src, unsigned dst, std::uint64_t flits) {
                return model->zero_load(src, dst, flits);
            });
    // A data packet belongs to the job of its protection domain (domain_of_job).
    for (auto& node : nodes_) {
        if (!node) continue;
        node->dma.on_data_arrival([jobs](const ExanetPacket& p, sc_core::sc_time tail) {
            if (p.header.pdid == 0) return;
            const unsigned job = p.header.pdid - 1u;
            if (job < jobs.size() && jobs[job])
                jobs[job]->packet_arrived(p.src_node, p.dst_node, p.header.dst_va, p.flits(), p.header.size, p.injected,
                                          tail);
        });
    }
}

void System::end_run() {
    for (auto& node : nodes_)
        if (node) node->cpu.end_run(sc_core::sc_time_stamp());
}

void System::stop_daemons_when_done() {
    // The kernel's daemons run until every program of every job has ended,
    // so that the simulation ends when nothing is left to do: one
    // rendezvous of all of them, then each job's start barrier, registered
    // in this order on every rank.
    std::uint64_t programs = 0;
    for (auto& w : workloads_) programs += w->programs();
    end_rv_ = sync_->rendezvous("end", programs);
    for (auto& w : workloads_) w->set_global_sync(*sync_, end_rv_);
    sync_->on_release(end_rv_, [this] {
        for (auto& node : nodes_) {
            if (!node) continue;   // (a partitioned run's nodes of other ranks)
            node->daemons.stop();
            if (node->hog) node->hog->stop();
        }
        if (all_finished_fired_) return;
        all_finished_fired_ = true;
        for (auto& fn : all_finished_) fn();
    });
}

}   // namespace vrdmasim
