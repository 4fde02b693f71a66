// The physical-address engine of the "why pinning exists" experiment
// (README.md; library/rdma/physical.hpp): what System and Node do when
// smmu.enabled = false comes with a registration strategy. Kept apart from
// system.cpp so that the SMMU and DMA-memory paths read as before.
#include "src/sim/system.hpp"
#include "src/sim/node.hpp"

#include <string>

#include "src/sim/physical_engine.hpp"
#include "workloads/registry.hpp"
#include "library/rdma/strategy/strategy.hpp"

namespace vrdmasim {

void System::check_physical(const Config& c) {
    if (!physical_mode(c)) return;
    const std::string mode = c.describe(params_of<StrategyParams>().strategy) + " with " +
                             c.describe(params_of<SmmuParams>().enabled) +
                             " (the physical-address experiment: the library hands the engine physical addresses)";
    if (!workload_kinds::of(c).physical_mode) {
        // The kinds built for it (workloads/registry.hpp: physical_mode).
        std::string built;
        for (const WorkloadKind& k : workload_kinds::all())
            if (k.physical_mode) built += (built.empty() ? "" : ", ") + k.name;
        throw c.refuse(
            params_of<WorkloadParams>().kind,
            "is not built for " + mode + ": only the " + built +
                " workload is (RDMA writes through "
                "RdmaProcess::send, one descriptor per physically contiguous run, each with its own completion "
                "record; a notification would tell the receiver of the last run only)");
    }
    if (c[params_of<WorkloadParams>().operation] != "write")
        throw c.refuse(params_of<WorkloadParams>().operation, "is not built for " + mode +
                                                                  ": RDMA reads would need the source node's physical "
                                                                  "addresses published too; only writes are");
    if (c[params_of<WorkloadParams>().two_sided])
        throw c.refuse(params_of<WorkloadParams>().two_sided, "is not built for " + mode);
}

void Node::attach_physical(const SimContext& ctx, PhysicalKeys& keys) {
    // Where the SMMU would be: PLDMA -> FrameCheck -> bus. The processes
    // live in the VM (boot() creates and attaches them) and hand the engine
    // physical addresses; the check looks at every frame the engine touches.
    physical_ = true;
    frame_check = std::make_unique<FrameCheck>((group + "_frame_check").c_str(), ctx, group, index, vm, keys,
                                               [this](std::uint32_t sid) {
                                                   auto it = pid_of_stream_.find(sid);
                                                   return it == pid_of_stream_.end() ? -1 : it->second;
                                               });
    dma.mem.bind(frame_check->in);
    dma.memory_may_wait([] { return false; });   // the ownership check and the bus answer with a delay
    frame_check->out.bind(bus.in);
    for (unsigned p = 0; p < processes(); ++p) {
        process(p).set_physical(keys);
        process(p).set_capacity(frames.total_pages() * FrameAllocator::kPage +
                                ctx.config[params_of<SsdParams>().swap_size]);
    }
    if (MemoryHog::wanted(ctx.config, index))
        hog = std::make_unique<MemoryHog>((group + "_hog").c_str(), ctx, group + ".hog", vm, app.capacity());
}

}   // namespace vrdmasim

namespace vrdmasim {

PhysicalFindings physical_findings(System& sys, const StatRegistry& stats) {
    PhysicalFindings f;
    for (const auto& w : sys.workloads()) f.wrong_transfers += w->log().mismatches.value();
    auto sum = [&](const char* suffix) { return stats.sum_counters(suffix); };
    f.wrong_bytes = sum("wrong_bytes");   // workload.wrong_bytes, jobP.workload.wrong_bytes
    f.foreign_writes = sum("frame_check.foreign_writes");
    f.foreign_bytes_other_process = sum("frame_check.foreign_write_bytes.other_process");
    f.foreign_bytes_own_other_page = sum("frame_check.foreign_write_bytes.own_other_page");
    f.foreign_bytes_kernel =
        sum("frame_check.foreign_write_bytes.kernel") + sum("frame_check.foreign_write_bytes.stale_pin");
    f.foreign_bytes_free = sum("frame_check.foreign_write_bytes.free");
    f.stale_reads = sum("frame_check.stale_reads");
    for (const char* k : {"other_process", "own_other_page", "stale_pin", "kernel", "free"})
        f.stale_read_bytes += sum((std::string("frame_check.stale_read_bytes.") + k).c_str());
    return f;
}

void print_physical_verdict(std::ostream& os, const Config& cfg, const PhysicalFindings& f) {
    const std::string strategy = cfg.text(params_of<StrategyParams>().strategy);
    os << "vrdmasim: ================================================================\n"
       << "vrdmasim: PHYSICAL-ADDRESS EXPERIMENT (smmu.enabled = false, rdma.strategy = " << strategy << "):\n";
    if (!f.corruption()) {
        os << "vrdmasim:   NO CORRUPTION: no frame moved under a transfer; every byte verified, every engine\n"
           << "vrdmasim:   access touched only frames its process still held where its library handed them\n";
    } else {
        os << "vrdmasim:   CORRUPTION FOUND (the expected result of running unpinned without an SMMU):\n"
           << "vrdmasim:   " << f.wrong_transfers << " transfer(s) reported success but delivered wrong data ("
           << f.wrong_bytes << " B wrong)\n"
           << "vrdmasim:   " << f.foreign_writes
           << " engine write(s) into frames of other owners: " << f.foreign_bytes_other_process
           << " B into another process's memory, " << f.foreign_bytes_own_other_page
           << " B into another page of the same process, " << f.foreign_bytes_kernel << " B into the kernel's, "
           << f.foreign_bytes_free << " B into free frames\n"
           << "vrdmasim:   " << f.stale_reads << " engine read(s) of " << f.stale_read_bytes
           << " B from source frames no longer the sender's (freed or reused)\n"
           << "vrdmasim:   this is the failure pinning prevents (docs/experiments.md \"Why pinning exists\"); the run exits 0\n";
    }
    os << "vrdmasim: ================================================================\n";
}

}   // namespace vrdmasim
