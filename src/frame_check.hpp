// FrameCheck: the ownership check of the physical-address experiment
// ("why pinning exists", README.md; library/rdma/physical.hpp). In
// physical-address mode it sits on the engine's memory path, between
// Pldma.mem and the bus, where the SMMU would be, and looks at every access
// the engine makes before passing it on unchanged: for each 4 KiB frame it
// touches, is the frame still the process's the transfer is for (the
// process of the channel's stream ID) at a page the library handed the
// engine (PhysicalKeys)? A write into a frame someone else holds now is a
// foreign write, counted by owner kind (another process, another page of the
// same process, a stale pin, the kernel, a free frame) with its bytes; a
// read of such a frame is a stale source read. Both are the experiment's
// result, reported in the statistics, the summary, as instants on the
// node's dma track and as --log narration naming the frame, the old and the
// new owner; nothing is stopped or changed (the write lands where it lands,
// as it would on hardware).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/passthrough_target_socket.h>

#include "src/core/context.hpp"
#include "src/core/metrics.hpp"
#include "models/os/vm.hpp"
#include "library/rdma/physical.hpp"

namespace vrdmasim {

// How a frame the engine touches stands now against the process the access is for.
enum class FrameUse {
    Own,   // a page the library handed the engine, still mapped there
    OtherProcess,   // mapped by another process
    OwnOtherPage,   // mapped by the same process at a page never handed for it
    StalePin,   // unmapped, held by a stale pin
    Kernel,   // the kernel's (page tables, a block being filled, memory outside the allocator)
    Free,   // free in the page allocator
};
const char* to_string(FrameUse u);

struct FrameVerdict {
    FrameUse use = FrameUse::Own;
    FrameOwner now;   // who holds the frame now
    bool handed = false;   // the library handed this frame for the process ...
    std::uint64_t handed_va = 0;   // ... at this page (the first such)
};

// The check of one frame (untimed): `pa` touched by `node`'s engine for process `pid`.
FrameVerdict judge_frame(const Vm& vm, const PhysicalKeys& keys, unsigned node, int pid, std::uint64_t pa);

class FrameCheck : public sc_core::sc_module {
public:
    tlm_utils::passthrough_target_socket<FrameCheck> in;   // from Pldma.mem
    tlm_utils::simple_initiator_socket<FrameCheck> out;   // to the bus

    // Its columns of summary.csv (present in physical-address mode only).
    static void declare_metrics(MetricRegistry& reg);

    // `pid_of(sid)`: the Vm pid of the process whose channels carry stream
    // ID sid (-1 if none). Statistics under "<group>.frame_check.".
    FrameCheck(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group, unsigned node,
               const Vm& vm, const PhysicalKeys& keys, std::function<int(std::uint32_t)> pid_of);

    // Check an access of the engine (b_transport calls it before passing the
    // access on): every frame of [pa, pa + len), the access made at `at`
    // for stream `sid`. Counts and reports what it finds; returns the
    // number of foreign (not Own) frames.
    unsigned inspect(bool write, std::uint64_t pa, std::uint64_t len, std::uint32_t sid, sc_core::sc_time at);

private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned transport_dbg(tlm::tlm_generic_payload& gp);
    void report(bool write, std::uint64_t pa, std::uint64_t bytes, int pid, const FrameVerdict& v, sc_core::sc_time at);
    std::string owner_text(const FrameOwner& o) const;

    const std::string group_;
    const unsigned node_;
    const Vm& vm_;
    const PhysicalKeys& keys_;
    std::function<int(std::uint32_t)> pid_of_;
    Tracer& tracer_;
    Tracer::Track track_;
    Counter &accesses_, &write_bytes_, &read_bytes_, &foreign_writes_, &stale_reads_;
    std::map<FrameUse, Counter*> foreign_bytes_, stale_bytes_;
};

}   // namespace vrdmasim
