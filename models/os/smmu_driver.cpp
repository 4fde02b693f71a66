#include "models/os/smmu_driver.hpp"
#include "src/core/failure_causes.hpp"
#include "src/core/software_turns.hpp"

#include <stdexcept>

namespace vrdmasim {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;
namespace r = smmu_reg;

namespace {

// A run's failed transfers: faults the fault library could not resolve.
const failure_causes::Declare kUnresolved(30, [](const Config&, const StatRegistry& stats) {
    const std::uint64_t unresolved = stats.sum_counters("unresolved");
    return unresolved ? std::to_string(unresolved) + " fault(s) the fault library could not resolve" : std::string();
});
constexpr std::uint64_t kPage = 4096;

bool is_tlbi(std::uint64_t off) {
    if (off < r::kCbBase) return off == r::TLBIALLNSNH;
    const std::uint64_t o = off & (r::kPage - 1);
    return o == r::TLBIVA || o == r::TLBIVAA || o == r::TLBIASID || o == r::TLBIALL;
}
}   // namespace

// ------------------------------------------------------------ FaultLibrary

FaultLibParams::FaultLibParams()
    : set("fault-lib", "user-space SMMU fault library of a process (Netlink receiver)"),
      policy(set.choice("policy", "touch-ahead", {"touch-one", "touch-ahead"},
                        "touch-one: make the faulting page present; touch-ahead: get_user_pages over "
                        "ahead-pages pages from the faulting one (ExaNeSt thesis)")),
      ahead_pages(set.integer("ahead-pages", "16", "pages resolved per fault by touch-ahead, the faulting one included")
                      .range("1", "262144")),
      wakeup(set.time("wakeup", "5us",
                      "Netlink receive and wake-up of the library's thread (*estimate* for a 1.5 GHz A53: "
                      "no ExaNeSt figure is published)")
                 .range("0ps", "1ms")),
      per_call(set.time("per-call", "1us",
                        "library overhead per fault besides the paging work (*estimate* for a 1.5 GHz A53)")
                   .range("0ps", "1ms")) {}

void FaultLibrary::declare_params(ParamRegistry& reg) { reg.add(params_of<FaultLibParams>().set); }

FaultLibrary::FaultLibrary(const SimContext& ctx, const std::string& prefix, int pid, CpuCores& cpu,
                           FaultResolveFn resolve)
    : ctx_(ctx),
      who_(prefix),
      pid_(pid),
      cpu_(cpu),
      resolve_(std::move(resolve)),
      ahead_(ctx.config[params_of<FaultLibParams>().policy] == "touch-ahead"),
      ahead_pages_(static_cast<std::uint64_t>(ctx.config[params_of<FaultLibParams>().ahead_pages])),
      wakeup_(ctx.config[params_of<FaultLibParams>().wakeup]),
      per_call_(ctx.config[params_of<FaultLibParams>().per_call]),
      faults_(&ctx.stats.counter(prefix + ".faults", "", "faults delivered to the library")),
      pages_(&ctx.stats.counter(prefix + ".pages", "", "pages the library faulted in")),
      unresolved_(
          &ctx.stats.counter(prefix + ".unresolved", "", "faults whose faulting page could not be made present")),
      service_us_(&ctx.stats.histogram(prefix + ".service_time", "us", "delivery to pages present (or error known)")) {
    if (!resolve_) throw std::invalid_argument("FaultLibrary: no resolve function");
}

FaultOutcome FaultLibrary::handle(const SmmuFault& f, sc_time at) {
    FaultOutcome o;
    o.fault = f;
    faults_->inc();
    const std::uint64_t page = f.address & ~(kPage - 1);
    const std::uint64_t n = ahead_ ? ahead_pages_ : 1;
    const std::string label = ahead_ ? "touch-ahead " + std::to_string(n) + " pages" : "touch-one";
    const bool noting = ctx_.tracer.noting();
    const CpuCores::Slot s =
        noting ? cpu_.run("fault-library", at, wakeup_ + per_call_, label,
                          {who_,
                           "the fault library's thread wakes on the Netlink message and " +
                               (ahead_ ? "touches " + std::to_string(n) + " pages from " + Tracer::hex(page)
                                       : "touches the page " + Tracer::hex(page)) +
                               (f.write ? " for writing" : " for reading") + " (get_user_pages)",
                           f.story})
               : cpu_.run("fault-library", at, wakeup_ + per_call_, label);
    // The VM's page faults are steps of this story.
    const Tracer::Scope paging(ctx_.tracer, s.step);
    VmResult res = resolve_(pid_, page, n * kPage, f.write, s.end);
    o.pages = res.value;
    o.done = max_time(res.done, s.end);
    if (!res.ok() && n > 1) {
        // The range failed somewhere: only the faulting page itself matters.
        VmResult one = resolve_(pid_, page, kPage, f.write, o.done);
        o.pages += one.value;
        o.done = max_time(one.done, o.done);
        res = one;
    }
    o.resolved = res.ok();
    o.error = res.error;
    pages_->inc(o.pages);
    if (!o.resolved) unresolved_->inc();
    service_us_->add(to_us(o.done - at));
    if (noting)
        o.story = ctx_.tracer.note(
            Tracer::Track{}, "fault resolved", o.done, SC_ZERO_TIME, who_,
            o.resolved ? "the fault at " + Tracer::hex(f.address) + " is resolved: " + std::to_string(o.pages) +
                             " page" + (o.pages == 1 ? "" : "s") + " made present, the library reports to the driver"
                       : "the fault at " + Tracer::hex(f.address) + " is NOT resolved (" +
                             std::string(to_string(o.error)) + "): the library reports the error",
            s.step);
    return o;
}

// ------------------------------------------------------------ SmmuDriver

SmmuDriverParams::SmmuDriverParams()
    : set("smmu-driver", "Linux arm-smmu driver with the ExaNeSt fault path (one per node)"),
      fault_mode(set.choice("fault-mode", "terminate", {"terminate", "stall"},
                            "SCTLR.CFCFG of process banks: terminate (as the 4.14 driver) or stall (RESUME)")),
      irq_entry(set.time("irq-entry", "1us",
                         "exception entry and GIC acknowledge (*estimate* for a 1.5 GHz A53: no ExaNeSt stage "
                         "latency is published)")
                    .range("0ps", "1ms")),
      handler(
          set.time("handler", "2us", "the handler's own work besides its register accesses (*estimate*, 1.5 GHz A53)")
              .range("0ps", "1ms")),
      netlink(set.time("netlink", "3us", "building and sending the Netlink message (*estimate*, 1.5 GHz A53)")
                  .range("0ps", "1ms")),
      tlbi_page(
          set.time("tlbi-page", "100ns", "CPU time per TLBIVA issued by the MMU notifier (*estimate*, 1.5 GHz A53)")
              .range("0ps", "1ms")),
      tlbi_asid_threshold(set.integer("tlbi-asid-threshold", "512",
                                      "ranges of more pages are invalidated by ASID (*estimate*, after arm64's "
                                      "MAX_TLBI_OPS = PTRS_PER_PTE)")
                              .range("1", "1000000000")) {}

void SmmuDriver::declare_params(ParamRegistry& reg) { reg.add(params_of<SmmuDriverParams>().set); }

void SmmuDriver::declare_metrics(MetricRegistry& reg) {
    reg.quantile("fault_service_us_p50", "us",
                 "Median service time of an SMMU fault by the driver: its context interrupt raised to the "
                 "outcome (the fault library done; in stall mode, RESUME written) (histograms "
                 "`*.smmu_driver.service_time`).",
                 "smmu_driver.service_time", 0.5, Smmu500::enabled_in);
    reg.quantile("fault_service_us_p99", "us", "99th percentile of the same.", "smmu_driver.service_time", 0.99,
                 Smmu500::enabled_in);
}

SmmuDriver::SmmuDriver(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group, Smmu500& smmu,
                       CpuCores& cpu, FaultResolveFn resolve)
    : sc_module(name),
      mmio("mmio"),
      ctx_(ctx),
      smmu_(smmu),
      cpu_(cpu),
      resolve_(std::move(resolve)),
      stall_(ctx.config[params_of<SmmuDriverParams>().fault_mode] == "stall"),
      irq_entry_(ctx.config[params_of<SmmuDriverParams>().irq_entry]),
      handler_(ctx.config[params_of<SmmuDriverParams>().handler]),
      netlink_(ctx.config[params_of<SmmuDriverParams>().netlink]),
      tlbi_page_(ctx.config[params_of<SmmuDriverParams>().tlbi_page]),
      tlbi_asid_threshold_(static_cast<std::uint64_t>(ctx.config[params_of<SmmuDriverParams>().tlbi_asid_threshold])),
      banks_(Smmu500::kContextBanks) {
    node_ = group;   // (its spans go to the CPU tracks of CpuCores)
    const std::string p = std::string(this->name()) + ".";
    auto& s = ctx.stats;
    interrupts_ = &s.counter(p + "interrupts", "", "handler runs (one per interrupt taken)");
    faults_ = &s.counter(p + "faults", "", "context faults read from a bank");
    resumes_retry_ = &s.counter(p + "resumes_retry", "", "RESUME writes with TnR = 0 (retry)");
    resumes_terminate_ = &s.counter(p + "resumes_terminate", "", "RESUME writes with TnR = 1 (terminate)");
    invalidations_ = &s.counter(p + "invalidations", "", "MMU-notifier invalidations");
    tlbi_writes_ = &s.counter(p + "tlbi_writes", "", "TLBIVA / TLBIASID register writes");
    unresolved_ = &s.counter(p + "unresolved", "", "faults whose outcome was unresolved");
    unowned_ = &s.counter(p + "unowned_faults", "", "faults in banks no process owns");
    global_faults_ = &s.counter(p + "global_faults", "", "global faults (sGFSR) cleared");
    spurious_ = &s.counter(p + "spurious_interrupts", "", "handler runs that found no fault");
    handler_us_ = &s.histogram(p + "handler_time", "us", "handler start to its last Netlink message");
    service_us_ =
        &s.histogram(p + "service_time", "us", "interrupt raised to outcome (library done; stall: RESUME written)");
    irq_wait_us_ = &s.histogram(p + "irq_wait", "us", "interrupt raised to handler start (core busy)");
    library_us_ = &s.histogram(p + "library_time", "us", "Netlink sent to library done");
    SC_HAS_PROCESS(SmmuDriver);
    // The interrupt handler's thread is spawned at the first interrupt
    // (core/lazy_thread.hpp): a node that never faults has none.
    irq_thread_ = std::make_unique<LazyThread>("irq_thread", smmu_.irq.wake(), [this] { irq_thread(); });
    SC_METHOD(resume);
}

FaultLibrary* SmmuDriver::library(int pid) {
    auto it = libraries_.find(pid);
    return it == libraries_.end() ? nullptr : it->second.get();
}

int SmmuDriver::bank_of(int pid) const {
    for (unsigned n = 0; n < banks_.size(); ++n)
        if (banks_[n].pid == pid) return static_cast<int>(n);
    return -1;
}

void SmmuDriver::access(bool write, std::uint64_t off, std::uint64_t& value, unsigned len, sc_time& t) {
    const sc_time now = sc_core::sc_time_stamp();
    if (t < now) t = now;
    gp_.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
    gp_.set_address(base_ + off);
    gp_.set_data_ptr(reinterpret_cast<unsigned char*>(&value));   // little-endian host, as the SMMU
    gp_.set_data_length(len);
    gp_.set_streaming_width(len);
    gp_.set_byte_enable_ptr(nullptr);
    gp_.set_dmi_allowed(false);
    gp_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_time d = t - now;
    mmio->b_transport(gp_, d);
    if (gp_.get_response_status() != tlm::TLM_OK_RESPONSE)
        throw std::runtime_error(std::string(name()) + ": SMMU register access failed at offset " +
                                 std::to_string(off));
    const sc_time took = now + d - t;
    if (is_tlbi(off)) {
        if (took > reg_time_) tlbi_extra_ = took - reg_time_;
    } else {
        reg_time_ = took;
    }
    t = now + d;
}

std::uint64_t SmmuDriver::read_reg(std::uint64_t off, unsigned len, sc_time& t) {
    std::uint64_t v = 0;
    access(false, off, v, len, t);
    return len == 4 ? (v & 0xffffffffull) : v;
}

void SmmuDriver::write_reg(std::uint64_t off, std::uint64_t value, unsigned len, sc_time& t) {
    access(true, off, value, len, t);
}

sc_time SmmuDriver::on_core(const char* activity, sc_time ready, sc_time cost, const std::string& label,
                            sc_time predicted, const std::function<void(sc_time&)>& ops, const CpuCores::Story* story,
                            Tracer::Cause* step) {
    const CpuCores::Slot s = story ? cpu_.run(activity, ready, cost + predicted, label, *story)
                                   : cpu_.run(activity, ready, cost + predicted, label);
    if (step) *step = s.step;
    sc_time t = s.start + cost;
    ops(t);
    // The core that ran `s` is free from s.end and nothing was reserved since,
    // so an extension starts exactly there.
    if (t > s.end) cpu_.run(activity, s.end, t - s.end, label + " (register accesses, continued)");
    return max_time(t, s.end);
}

sc_time SmmuDriver::attach(int pid, std::uint16_t asid, std::uint64_t root, unsigned t0sz,
                           const std::vector<std::uint32_t>& stream_ids, sc_time at) {
    if (pid <= 0) throw std::invalid_argument("SmmuDriver::attach: pid must be >= 1");
    if (bank_of(pid) >= 0) throw std::runtime_error("SmmuDriver::attach: process already attached");
    const int cb = bank_of(0);
    if (cb < 0) throw std::runtime_error("SmmuDriver::attach: no free context bank");
    if (next_smr_ + stream_ids.size() > Smmu500::kStreamMatchRegisters)
        throw std::runtime_error("SmmuDriver::attach: no free stream-match register");
    const unsigned n = static_cast<unsigned>(cb);
    banks_[n].pid = pid;
    banks_[n].asid = asid;
    libraries_[pid] =
        std::make_unique<FaultLibrary>(ctx_, std::string(name()) + ".pid" + std::to_string(pid), pid, cpu_, resolve_);
    const unsigned first_smr = next_smr_;
    next_smr_ += static_cast<unsigned>(stream_ids.size());
    const unsigned writes = 2 * static_cast<unsigned>(stream_ids.size()) + 7;
    return on_core("smmu-attach", at, SC_ZERO_TIME, "smmu attach", writes * reg_time_, [&](sc_time& t) {
        for (std::size_t i = 0; i < stream_ids.size(); ++i) {
            const unsigned idx = first_smr + static_cast<unsigned>(i);
            // TYPE 0: translate with bank n; PRIVCFG privileged for a guarded library.
            write_reg(r::S2CR(idx), n | (privileged_streams_ ? r::S2CR_PRIVCFG_PRIV : 0u), 4, t);
            write_reg(r::SMR(idx), r::SMR_VALID | (stream_ids[i] & 0x7fffu), 4, t);
        }
        write_reg(r::CBAR(n), 1u << 16, 4, t);   // stage 1 with stage 2 bypass
        write_reg(r::CBA2R(n), 1, 4, t);   // VA64
        // T0SZ, TG0 = 4 KiB, inner/outer WBWA, inner shareable (io-pgtable-arm)
        write_reg(r::cb(n) + r::TCR, (t0sz & 0x3fu) | (1u << 8) | (1u << 10) | (3u << 12), 4, t);
        write_reg(r::cb(n) + r::MAIR0, 0x0004ff44u, 4, t);   // NC, WBRWA, device (io-pgtable-arm)
        write_reg(r::cb(n) + r::TTBR0, (root & 0x0000fffffffff000ull) | (static_cast<std::uint64_t>(asid) << 48), 8, t);
        write_reg(r::cb(n) + r::SCTLR,
                  r::SCTLR_M | r::SCTLR_AFE | r::SCTLR_CFRE | r::SCTLR_CFIE | (stall_ ? r::SCTLR_CFCFG : 0u), 4, t);
        write_reg(r::sCR0, r::sCR0_GFRE | r::sCR0_GFIE | r::sCR0_USFCFG, 4, t);   // CLIENTPD clear
    });
}

sc_time SmmuDriver::invalidate(int pid, std::uint16_t asid, std::uint64_t va, std::uint64_t len, sc_time at) {
    const int cb = bank_of(pid);
    if (cb < 0 || len == 0) return at;   // nothing of it can be cached
    invalidations_->inc();
    const std::uint64_t first = va >> 12, last = (va + len - 1) >> 12;
    const std::uint64_t pages = last - first + 1;
    const bool by_asid = pages > tlbi_asid_threshold_;
    const std::uint64_t cmds = by_asid ? 1 : pages;
    const std::uint64_t base = r::cb(static_cast<unsigned>(cb));
    const sc_time predicted = (reg_time_ + tlbi_extra_) * static_cast<double>(cmds) + 2 * reg_time_;
    // The invalidation follows whatever changed the mapping (reclaim, a
    // collapse, a migration, munmap) when that is being told.
    CpuCores::Story story;
    const bool noting = ctx_.tracer.noting();
    if (noting)
        story = {name(),
                 "MMU notifier: pid " + std::to_string(pid) + "'s mapping of " + Tracer::hex(va) + "..+" +
                     std::to_string(len) + " B changed; the driver invalidates the SMMU's TLBs in cb" +
                     std::to_string(cb) +
                     (by_asid ? " by ASID " + std::to_string(asid) + " (more than " +
                                    std::to_string(tlbi_asid_threshold_) + " pages)"
                              : " with " + std::to_string(pages) + " TLBIVA write" + (pages == 1 ? "" : "s")) +
                     ", then TLBSYNC",
                 Tracer::Cause{}};
    return on_core(
        "tlbi", at, tlbi_page_ * static_cast<double>(cmds),
        by_asid ? "tlbi asid" : "tlbi " + std::to_string(pages) + " pages", predicted,
        [&](sc_time& t) {
            const std::uint64_t a = static_cast<std::uint64_t>(asid) << 48;
            if (by_asid) {
                write_reg(base + r::TLBIASID, asid, 4, t);
            } else {
                for (std::uint64_t p = first; p <= last; ++p)
                    write_reg(base + r::TLBIVA, (p & 0xfffffffffffull) | a, 8, t);
            }
            tlbi_writes_->inc(cmds);
            write_reg(base + r::TLBSYNC, 0, 4, t);
            for (int i = 0; i < 1000 && (read_reg(base + r::TLBSTATUS, 4, t) & 1u); ++i) {
            }
        },
        noting ? &story : nullptr);
}

void SmmuDriver::irq_thread() {
    software_turns::enter(node_);   // the kernel's thread: software of the node
    for (;;) {
        if (!smmu_.irq.high()) sc_core::wait(smmu_.irq.event());
        // Under temporal decoupling the line may rise ahead of now.
        const sc_time now = sc_core::sc_time_stamp();
        if (smmu_.irq.since() > now) {
            sc_core::wait(smmu_.irq.since() - now);
            continue;   // re-check: the line may have been lowered meanwhile
        }
        if (!smmu_.irq.high()) continue;
        const std::uint64_t before = faults_->value() + global_faults_->value() + unowned_->value();
        const sc_time end = handle_interrupt(smmu_.irq.since());
        const bool found = faults_->value() + global_faults_->value() + unowned_->value() != before;
        if (end > sc_core::sc_time_stamp()) sc_core::wait(end - sc_core::sc_time_stamp());
        if (!found && smmu_.irq.high() && smmu_.irq.since() <= sc_core::sc_time_stamp()) {
            // Nothing to clear (a source the model does not know): wait for a new edge.
            sc_core::wait(smmu_.irq.event());
        }
    }
}

sc_time SmmuDriver::handle_interrupt(sc_time t0) {
    interrupts_->inc();
    const sc_time raised = t0;
    std::vector<SmmuFault> found;
    bool global = false;
    unsigned owned = 0;
    for (const Bank& b : banks_) owned += b.pid != 0;
    sc_time start = SC_ZERO_TIME;
    Tracer::Cause handler_step;   // the handler's slice in the story
    // The global handler, then the handler of every bank a process owns
    // (all registered on the one shared line, as on the ZynqMP).
    const bool noting = ctx_.tracer.noting();
    const CpuCores::Story story = noting ? interrupt_story(t0, owned) : CpuCores::Story{};
    sc_time t = on_core(
        "smmu-irq", t0, irq_entry_ + handler_, "smmu irq handler", reg_time_ * (1.0 + owned),
        [&](sc_time& tt) {
            start = tt - irq_entry_ - handler_;
            global = read_global_fault(tt);
            for (unsigned n = 0; n < banks_.size(); ++n)
                if (banks_[n].pid != 0) read_context_fault(n, raised, handler_step, tt, found);
            if (found.empty() && !global) {
                // No owner's bank faulted: look at the others.
                for (unsigned n = 0; n < banks_.size(); ++n)
                    if (banks_[n].pid == 0) read_context_fault(n, raised, handler_step, tt, found);
            }
        },
        noting ? &story : nullptr, &handler_step);
    irq_wait_us_->add(to_us(start - raised));
    if (global) global_faults_->inc();
    if (found.empty() && !global) spurious_->inc();
    for (const SmmuFault& f : found) hand_to_library(f, noting, t);
    handler_us_->add(to_us(t - start));
    return t;
}

CpuCores::Story SmmuDriver::interrupt_story(sc_time t0, unsigned owned) const {
    // The story: the handler follows the fault that raised the line (the
    // lowest bank asserting it; each bank's reading follows its own fault).
    CpuCores::Story story;
    for (unsigned n = 0; n < banks_.size() && !story.because; ++n)
        if (smmu_.context_irq(n, t0)) story.because = smmu_.fault_story(n, t0);
    story.who = name();
    story.text =
        "SMMU interrupt taken (exception entry, GIC acknowledge): the handler reads sGFSR and the "
        "FSR of the " +
        std::to_string(owned) + " bank" + (owned == 1 ? "" : "s") + " that processes own";
    return story;
}

bool SmmuDriver::read_global_fault(sc_time& t) {
    const std::uint64_t gfsr = read_reg(r::sGFSR, 4, t);
    if (!gfsr) return false;
    read_reg(r::sGFAR, 8, t);
    read_reg(r::sGFSYNR0, 4, t);
    read_reg(r::sGFSYNR0 + 4, 4, t);
    write_reg(r::sGFSR, gfsr, 4, t);
    return true;
}

void SmmuDriver::read_context_fault(unsigned n, sc_time raised, const Tracer::Cause& handler_step, sc_time& t,
                                    std::vector<SmmuFault>& found) {
    const std::uint32_t fsr = static_cast<std::uint32_t>(read_reg(r::cb(n) + r::FSR, 4, t));
    if (!(fsr & r::FSR_FAULT)) return;
    SmmuFault f;
    f.pid = banks_[n].pid;
    f.cb = n;
    f.fsr = fsr;
    f.raised = raised;
    f.address = read_reg(r::cb(n) + r::FAR, 8, t);
    const std::uint32_t fsynr0 = static_cast<std::uint32_t>(read_reg(r::cb(n) + r::FSYNR0, 4, t));
    f.write = (fsynr0 & r::FSYNR0_WNR) != 0;
    f.stream_id = static_cast<std::uint32_t>(read_reg(r::CBFRSYNRA(n), 4, t)) & 0x7fffu;
    write_reg(r::cb(n) + r::FSR, fsr & r::FSR_FAULT, 4, t);   // write 1 to clear, not SS
    if (ctx_.tracer.noting())
        f.story = ctx_.tracer.note(
            Tracer::Track{}, "handler reads cb", t, SC_ZERO_TIME, name(),
            "the handler reads cb" + std::to_string(n) + ": FSR " + Tracer::hex(fsr) + ", FAR " +
                Tracer::hex(f.address) + ", FSYNR0 " + Tracer::hex(fsynr0) + " (" + (f.write ? "write" : "read") +
                "), CBFRSYNRA " + Tracer::hex(f.stream_id) + "; writes FSR to clear it" +
                (f.pid ? "; the bank belongs to pid " + std::to_string(f.pid) : "; no process owns the bank"),
            smmu_.fault_story(n, t).id ? smmu_.fault_story(n, t) : handler_step);
    found.push_back(f);
}

void SmmuDriver::hand_to_library(const SmmuFault& fault, bool noting, sc_time& t) {
    faults_->inc();
    Pending p;
    p.resume = stall_ && (fault.fsr & r::FSR_SS);
    p.outcome.fault = fault;
    FaultLibrary* lib = fault.pid ? library(fault.pid) : nullptr;
    if (!lib) {
        unowned_->inc();
        p.outcome.story = fault.story;
        p.outcome.resolved = false;
        p.outcome.error = VmError::Fault;
        p.outcome.done = t;
    } else {
        if (t > sc_core::sc_time_stamp()) sc_core::wait(t - sc_core::sc_time_stamp());
        SmmuFault f = fault;
        if (noting) {
            const CpuCores::Slot s = cpu_.run("netlink", t, netlink_, "netlink send",
                                              {name(),
                                               "the handler sends a Netlink message to pid " + std::to_string(f.pid) +
                                                   "'s fault library: " + (f.write ? "write" : "read") + " fault at " +
                                                   Tracer::hex(f.address) + " in cb" + std::to_string(f.cb),
                                               f.story});
            t = s.end;
            f.story = s.step;
        } else {
            t = cpu_.run("netlink", t, netlink_, "netlink send").end;
        }
        p.outcome = lib->handle(f, t);
        library_us_->add(to_us(p.outcome.done - t));
    }
    pending_.emplace(p.outcome.done, p);
    pending_ev_.notify(SC_ZERO_TIME);
}

void SmmuDriver::resume() {
    // A method: it does what a thread looping over the outcomes would, and
    // where that thread would wait (for the next outcome, or for the end of
    // a RESUME write) it sets its next trigger instead.
    for (;;) {
        const sc_time now = sc_core::sc_time_stamp();
        if (delivering_) {
            if (resuming_.outcome.done > now) {
                sc_core::next_trigger(resuming_.outcome.done - now);
                return;
            }
            delivering_ = false;
            deliver(resuming_.outcome);
            continue;
        }
        if (pending_.empty()) {
            sc_core::next_trigger(pending_ev_.get());
            return;
        }
        auto it = pending_.begin();
        if (it->first > now) {
            sc_core::next_trigger(it->first - now, pending_ev_.get());
            return;
        }
        Pending p = it->second;
        pending_.erase(it);
        FaultOutcome& o = p.outcome;
        if (!p.resume) {
            deliver(o);
            continue;
        }
        const bool retry = o.resolved;
        const std::uint64_t off = r::cb(o.fault.cb) + r::RESUME;
        CpuCores::Story story;
        const bool noting = ctx_.tracer.noting();
        if (noting)
            story = {name(),
                     std::string("the driver writes RESUME of cb") + std::to_string(o.fault.cb) +
                         (retry ? " with TnR = 0: the stalled transactions retry"
                                : " with TnR = 1: the stalled transactions are terminated"),
                     o.story};
        Tracer::Cause step;
        // The SMMU's RESUME follows the driver's write.
        o.done = on_core(
            "fault-library", o.done, SC_ZERO_TIME, retry ? "resume retry" : "resume terminate", reg_time_,
            [&](sc_time& t) {
                const Tracer::Scope s(ctx_.tracer, step);
                write_reg(off, retry ? 0u : r::RESUME_TERMINATE, 4, t);
            },
            noting ? &story : nullptr, &step);
        if (step) o.story = step;
        (retry ? resumes_retry_ : resumes_terminate_)->inc();
        // The outcome is delivered once the write is done.
        resuming_ = p;
        delivering_ = true;
    }
}

void SmmuDriver::deliver(const FaultOutcome& o) {
    if (!o.resolved) unresolved_->inc();
    service_us_->add(to_us(o.done - o.fault.raised));
    if (on_outcome_) on_outcome_(o);
}

}   // namespace vrdmasim
