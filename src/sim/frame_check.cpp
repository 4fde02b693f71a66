#include "src/sim/frame_check.hpp"

#include "src/core/format.hpp"

#include <sstream>
#include <stdexcept>

#include "models/common/stream_id.hpp"

namespace vrdmasim {

namespace {

constexpr std::uint64_t kPage = 4096;

const FrameUse kForeign[] = {FrameUse::OtherProcess, FrameUse::OwnOtherPage, FrameUse::StalePin, FrameUse::Kernel,
                             FrameUse::Free};

// Statistic name of a kind.
const char* stat_name(FrameUse u) {
    switch (u) {
    case FrameUse::Own: return "own";
    case FrameUse::OtherProcess: return "other_process";
    case FrameUse::OwnOtherPage: return "own_other_page";
    case FrameUse::StalePin: return "stale_pin";
    case FrameUse::Kernel: return "kernel";
    case FrameUse::Free: return "free";
    }
    return "?";
}

}   // namespace

const char* to_string(FrameUse u) {
    switch (u) {
    case FrameUse::Own: return "own";
    case FrameUse::OtherProcess: return "another process";
    case FrameUse::OwnOtherPage: return "another page of the same process";
    case FrameUse::StalePin: return "a stale pin";
    case FrameUse::Kernel: return "the kernel";
    case FrameUse::Free: return "free";
    }
    return "?";
}

FrameVerdict judge_frame(const Vm& vm, const PhysicalKeys& keys, unsigned node, int pid, std::uint64_t pa) {
    FrameVerdict v;
    const std::uint64_t page = pa & ~(kPage - 1);
    // Fast path: a page the library handed for this frame still maps it.
    if (const auto* handed = keys.handed_at(node, page))
        for (const auto& h : *handed) {
            if (h.first != pid) continue;
            if (!v.handed) {
                v.handed = true;
                v.handed_va = h.second;
            }
            std::uint64_t now = 0;
            if (vm.translate(pid, h.second, now) && now == page) {
                v.use = FrameUse::Own;
                v.handed_va = h.second;
                v.now.kind = FrameOwner::Kind::Process;
                v.now.pid = pid;
                v.now.va = h.second;
                return v;
            }
        }
    v.now = vm.frame_owner(page);
    switch (v.now.kind) {
    case FrameOwner::Kind::Process: v.use = v.now.pid != pid ? FrameUse::OtherProcess : FrameUse::OwnOtherPage; break;
    case FrameOwner::Kind::StalePin: v.use = FrameUse::StalePin; break;
    case FrameOwner::Kind::Kernel:
    case FrameOwner::Kind::PageCache: v.use = FrameUse::Kernel; break;   // the page cache is kernel memory
    case FrameOwner::Kind::Free: v.use = FrameUse::Free; break;
    }
    return v;
}

void FrameCheck::declare_metrics(MetricRegistry& reg) {
    const auto present = [](const Config& c) { return physical_mode(c); };
    reg.sum_counters(
        "wrong_bytes_delivered",
        "Physical-address mode (`smmu.enabled = false` with a registration strategy; docs/experiments.md \"Why "
        "pinning exists\"): destination bytes that differ from the source in transfers reported "
        "successful, as the workload's byte check counts them (`workload.wrong_bytes`). Such a "
        "run reports them as the experiment's result (exit status 0); in any other run one wrong "
        "byte is a data mismatch and fails the run. 0 in other runs.",
        {"wrong_bytes"}, present);
    reg.sum_counters("foreign_frame_writes",
                     "Physical-address mode: engine writes (payload or record) that touched a frame no longer the "
                     "receiving process's at a page its library handed the engine: another process's, another "
                     "page of its own, a stale pin's, the kernel's or a free one (`*.frame_check.foreign_writes`). "
                     "0 in other runs.",
                     {"frame_check.foreign_writes"}, present);
    reg.sum_counters("foreign_bytes_process",
                     "Bytes of those writes that landed in frames another process maps now (e.g. the hog's, "
                     "after reclaim freed the frame and the hog faulted it in).",
                     {"frame_check.foreign_write_bytes.other_process"}, present);
    reg.sum_counters("foreign_bytes_own_page", "Bytes of those writes that landed in another page of the same process.",
                     {"frame_check.foreign_write_bytes.own_other_page"}, present);
    reg.sum_counters("foreign_bytes_kernel",
                     "Bytes of those writes that landed in frames the kernel holds (page tables, a block "
                     "khugepaged or compaction is filling, a stale pin's frame).",
                     {"frame_check.foreign_write_bytes.kernel", "frame_check.foreign_write_bytes.stale_pin"}, present);
    reg.sum_counters("foreign_bytes_free",
                     "Bytes of those writes that landed in free frames (the data is lost: the process's page "
                     "is elsewhere now).",
                     {"frame_check.foreign_write_bytes.free"}, present);
    reg.sum_counters("stale_source_reads",
                     "Engine reads (source payload) of frames no longer the sending process's at the page "
                     "handed: freed (old contents), or reused by someone else (`*.frame_check.stale_reads`).",
                     {"frame_check.stale_reads"}, present);
}

FrameCheck::FrameCheck(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group, unsigned node,
                       const Vm& vm, const PhysicalKeys& keys, std::function<int(std::uint32_t)> pid_of)
    : sc_module(name),
      in("in"),
      out("out"),
      group_(group),
      node_(node),
      vm_(vm),
      keys_(keys),
      pid_of_(std::move(pid_of)),
      tracer_(ctx.tracer),
      track_(ctx.tracer.track(group, "dma")),
      accesses_(ctx.stats.counter(group + ".frame_check.accesses", "",
                                  "engine memory accesses checked (physical-address mode)")),
      write_bytes_(ctx.stats.counter(group + ".frame_check.write_bytes", "B", "bytes the engine wrote, checked")),
      read_bytes_(ctx.stats.counter(group + ".frame_check.read_bytes", "B", "bytes the engine read, checked")),
      foreign_writes_(ctx.stats.counter(group + ".frame_check.foreign_writes", "",
                                        "engine writes that touched a frame not the process's at a handed page")),
      stale_reads_(ctx.stats.counter(group + ".frame_check.stale_reads", "",
                                     "engine reads that touched a frame not the process's at a handed page")) {
    for (FrameUse u : kForeign) {
        foreign_bytes_[u] = &ctx.stats.counter(group + ".frame_check.foreign_write_bytes." + stat_name(u), "B",
                                               std::string("bytes the engine wrote into frames of ") + to_string(u));
        stale_bytes_[u] = &ctx.stats.counter(group + ".frame_check.stale_read_bytes." + stat_name(u), "B",
                                             std::string("bytes the engine read from frames of ") + to_string(u));
    }
    in.register_b_transport(this, &FrameCheck::b_transport);
    in.register_transport_dbg(this, &FrameCheck::transport_dbg);
}

unsigned FrameCheck::inspect(bool write, std::uint64_t pa, std::uint64_t len, std::uint32_t sid, sc_core::sc_time at) {
    const int pid = pid_of_(sid);
    if (pid < 0)
        throw std::logic_error(group_ + ": engine access at " + hex(pa) + " with stream ID " + std::to_string(sid) +
                               ", which no process of this node owns");
    accesses_.inc();
    (write ? write_bytes_ : read_bytes_).inc(len);
    unsigned foreign = 0;
    bool counted = false;
    for (std::uint64_t a = pa; a < pa + len;) {
        const std::uint64_t end = std::min(pa + len, (a & ~(kPage - 1)) + kPage);
        const FrameVerdict v = judge_frame(vm_, keys_, node_, pid, a);
        if (v.use != FrameUse::Own) {
            ++foreign;
            if (!counted) (write ? foreign_writes_ : stale_reads_).inc();
            counted = true;
            (write ? foreign_bytes_ : stale_bytes_).at(v.use)->inc(end - a);
            report(write, a, end - a, pid, v, at);
        }
        a = end;
    }
    return foreign;
}

std::string FrameCheck::owner_text(const FrameOwner& o) const {
    switch (o.kind) {
    case FrameOwner::Kind::Process:
        return "process " + std::to_string(o.pid) + " (" + vm_.process_name(o.pid) + ") at va " + hex(o.va);
    case FrameOwner::Kind::StalePin:
        return "a stale pin of process " + std::to_string(o.pid) + " (old va " + hex(o.va) + ")";
    case FrameOwner::Kind::Kernel: return "the kernel";
    case FrameOwner::Kind::PageCache:
        return "the page cache (file " + std::to_string(o.file) + ", offset " + hex(o.offset) + ")";
    case FrameOwner::Kind::Free: return "nobody (free)";
    }
    return "?";
}

void FrameCheck::report(bool write, std::uint64_t pa, std::uint64_t bytes, int pid, const FrameVerdict& v,
                        sc_core::sc_time at) {
    const char* what = write ? "foreign frame write" : "stale source read";
    if (tracer_.enabled())
        tracer_.instant(track_, what, at,
                        {{"frame", Tracer::json_string(hex(pa & ~(kPage - 1)))},
                         {"bytes", Tracer::json_number(bytes)},
                         {"owner", Tracer::json_string(to_string(v.use))}});
    if (!tracer_.noting()) return;
    std::ostringstream os;
    os << (write ? "wrote " : "read ") << bytes << " B " << (write ? "into" : "from") << " frame "
       << hex(pa & ~(kPage - 1)) << " for process " << pid << " (" << vm_.process_name(pid) << "): ";
    if (v.handed) os << "handed as its page " << hex(v.handed_va) << ", ";
    else os << "a frame never handed for it, ";
    os << "now held by " << owner_text(v.now) << " [" << to_string(v.use) << "]";
    // A step of the story the access belongs to (the transfer's, in its Scope).
    tracer_.note(Tracer::Track{}, what, at, sc_core::SC_ZERO_TIME, group_ + ".frame_check", os.str());
}

void FrameCheck::b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    StreamIdExtension* sid = nullptr;
    gp.get_extension(sid);
    if (!sid) throw std::logic_error(group_ + ": engine access without a stream ID");
    if (gp.is_write() || gp.is_read())
        inspect(gp.is_write(), gp.get_address(), gp.get_data_length(), sid->sid, sc_core::sc_time_stamp() + delay);
    out->b_transport(gp, delay);
}

unsigned FrameCheck::transport_dbg(tlm::tlm_generic_payload& gp) { return out->transport_dbg(gp); }

}   // namespace vrdmasim
