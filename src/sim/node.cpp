// Node: one MPSoC's models built and bound (node.hpp has its block diagram).
#include "src/sim/node.hpp"

#include "library/rdma/buffer_guard.hpp"
#include "library/rdma/strategy/strategy.hpp"
#include "models/common/noise.hpp"
#include "src/sim/link_settings.hpp"
#include "workloads/workload.hpp"

namespace vrdmasim {

using sc_core::sc_time;

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
    if (registration_strategies::of(ctx.config).redirects_faulted_packets) enable_netvm(ctx);
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
        throw ConfigError(ctx.config.describe(params_of<StrategyParams>().strategy) +
                          " needs smmu-driver.fault-mode = terminate and dma.fault-tolerant = true: "
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
    if (registration_strategies::of(ctx.config).needs_smmu)
        throw ConfigError(ctx.config.describe(params_of<StrategyParams>().strategy) +
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
    if (registration_strategies::of(ctx.config).redirects_faulted_packets) {
        if (!dma.fault_tolerant())   // System::resolve refuses this first
            throw ConfigError(ctx.config.describe(params_of<StrategyParams>().strategy) +
                              " needs dma.fault-tolerant = true");
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

}   // namespace vrdmasim
