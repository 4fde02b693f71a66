// SmmuDriver and FaultLibrary: the software half of SMMU fault handling on
// one node, after the ExaNeSt thesis (docs/architecture.md, "The system being modelled").
//
// SmmuDriver is the Linux arm-smmu driver with the thesis's changes: it gives
// each registered process a context bank over its own page tables, turns
// every mapping change into TLB invalidations (the MMU notifier), and its
// interrupt handler reads FSR, FAR, FSYNR0 and CBFRSYNRA, clears FSR and sends
// a Netlink message to the owning process's FaultLibrary. The library makes
// the pages present (touch-one: the faulting page; touch-ahead: get_user_pages
// over the next N pages) and then, in stall mode, has the driver write RESUME
// (retry, or terminate when it could not resolve the fault); in terminate mode
// it reports the outcome through a callback that the fault-tolerant PLDMA
// will use to re-read or ask for retransmission.
//
// Every register access is a timed MMIO transaction through `mmio` (the CPU's
// port on the node bus); every software step runs on a core of CpuCores and
// is a span on the node's CPU tracks; each cost is a named parameter.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>

#include "src/core/lazy_event.hpp"
#include "src/core/context.hpp"
#include "src/core/lazy_thread.hpp"
#include "models/os/cpu.hpp"
#include "models/os/vm.hpp"
#include "models/smmu/smmu500.hpp"

namespace vrdmasim {

// The parameters of section [fault-lib], declared in smmu_driver.cpp; read
// through params_of<FaultLibParams>().
struct FaultLibParams {
    FaultLibParams();
    ParamSet set;
    EnumParam policy;
    IntParam ahead_pages;
    TimeParam wakeup;
    TimeParam per_call;
};

// The parameters of section [smmu-driver], declared in smmu_driver.cpp; read
// through params_of<SmmuDriverParams>().
struct SmmuDriverParams {
    SmmuDriverParams();
    ParamSet set;
    EnumParam fault_mode;
    TimeParam irq_entry;
    TimeParam handler;
    TimeParam netlink;
    TimeParam tlbi_page;
    IntParam tlbi_asid_threshold;
};

// What the driver learned from the registers about one fault.
struct SmmuFault {
    int pid = 0;   // owning process (0: no process owns the bank)
    unsigned cb = 0;
    std::uint32_t stream_id = 0;   // CBFRSYNRA: which engine/channel it came from
    std::uint64_t address = 0;   // FAR
    bool write = false;   // FSYNR0.WNR
    std::uint32_t fsr = 0;   // as read, before clearing
    sc_core::sc_time raised;   // when the SMMU raised the interrupt
    Tracer::Cause story;   // the handler's reading of it in the narrated story
};

// The outcome of handling one fault, as the PLDMA will be told in terminate
// mode (and as statistics see it in both modes).
struct FaultOutcome {
    SmmuFault fault;
    bool resolved = false;   // pages made present (false: bad address, read-only)
    VmError error = VmError::Ok;
    std::uint64_t pages = 0;   // pages faulted in
    sc_core::sc_time done;   // when the library finished (stall: RESUME written)
    Tracer::Cause story;   // the last step of its story (library result; stall: RESUME)
};

// How a library makes pages present: get_user_pages over [va, va+len).
// The system binds it to Vm::fault_in; tests may bind anything.
using FaultResolveFn =
    std::function<VmResult(int pid, std::uint64_t va, std::uint64_t len, bool write, sc_core::sc_time at)>;

class FaultLibrary {
public:
    // Section "fault-lib": policy (touch-one | touch-ahead), ahead-pages (N,
    // e.g. 16), wakeup (Netlink receive and thread wake-up in user space,
    // *estimate*), per-call (library overhead per fault, *estimate*).
    static void declare_params(ParamRegistry& reg);
    FaultLibrary(const SimContext& ctx, const std::string& prefix, int pid, CpuCores& cpu, FaultResolveFn resolve);

    // Handle one delivered fault starting at `at` (on a core); returns the
    // outcome with `done` = when the pages are present (or the error known).
    FaultOutcome handle(const SmmuFault& f, sc_core::sc_time at);

    int pid() const { return pid_; }

private:
    const SimContext& ctx_;
    std::string who_;
    int pid_;
    CpuCores& cpu_;
    FaultResolveFn resolve_;
    bool ahead_;
    std::uint64_t ahead_pages_;
    sc_core::sc_time wakeup_, per_call_;
    Counter *faults_, *pages_, *unresolved_;
    Histogram* service_us_;
};

class SmmuDriver : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<SmmuDriver> mmio;   // to the node bus (SMMU registers at smmu_reg::kBase)

    // Section "smmu-driver": fault-mode (terminate | stall), irq-entry
    // (exception entry and GIC acknowledge, *estimate*), handler (the
    // handler's own work besides its register accesses, *estimate*), netlink
    // (building and sending the message, *estimate*), tlbi-page (CPU time
    // per TLBIVA issued by the notifier, *estimate*), tlbi-asid-threshold
    // (ranges longer than this many pages are invalidated by ASID).
    static void declare_params(ParamRegistry& reg);
    // Its columns of summary.csv, from the statistics it registers.
    static void declare_metrics(MetricRegistry& reg);

    // `smmu` provides the interrupt line only; everything else goes through
    // `mmio`. `resolve` is given to each process's FaultLibrary.
    SmmuDriver(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group, Smmu500& smmu,
               CpuCores& cpu, FaultResolveFn resolve);

    // Give process `pid` (ASID, page-table root, T0SZ) a context bank, and
    // match `stream_ids` (exact) to it: timed register writes from `at`.
    // Returns when done. Throws std::runtime_error when no bank or SMR is free.
    sc_core::sc_time attach(int pid, std::uint16_t asid, std::uint64_t root, unsigned t0sz,
                            const std::vector<std::uint32_t>& stream_ids, sc_core::sc_time at);
    // The MMU notifier (bind it with Vm::set_invalidate): TLBIVA per page (or
    // TLBIASID beyond the threshold) then TLBSYNC, polling TLBSTATUS.
    sc_core::sc_time invalidate(int pid, std::uint16_t asid, std::uint64_t va, std::uint64_t len, sc_core::sc_time at);

    // Terminate mode: called with each outcome (the PLDMA issue resumes or
    // retransmits from it). Stall mode calls it too, after RESUME.
    void on_outcome(std::function<void(const FaultOutcome&)> fn) { on_outcome_ = std::move(fn); }

    bool stall_mode() const { return stall_; }
    // Streams attached from now on are made privileged (S2CR.PRIVCFG = 3):
    // the engine keeps its access to pages whose descriptors deny EL0
    // (rdma.buffer-guard = mprotect; README.md "Buffer guard").
    void set_privileged_streams(bool on) { privileged_streams_ = on; }
    FaultLibrary* library(int pid);

    // Where the SMMU's register file appears on `mmio` (default
    // smmu_reg::kBase; 0 when `mmio` is bound straight to Smmu500::regs).
    void set_register_base(std::uint64_t base) { base_ = base; }

private:
    void irq_thread();
    // Writes RESUME (stall mode) and delivers each outcome at its time: an
    // SC_METHOD (no stack of its own).
    void resume();
    // One pass of the handler from `t0`; returns when its work ends.
    sc_core::sc_time handle_interrupt(sc_core::sc_time t0);
    // The handler's step in the story: it follows the fault that raised the line.
    CpuCores::Story interrupt_story(sc_core::sc_time t0, unsigned owned) const;
    // arm_smmu_global_fault: read sGFSR, and if it is set the syndrome, and
    // clear it; whether it was.
    bool read_global_fault(sc_core::sc_time& t);
    // arm_smmu_context_fault for bank n: read its FSR, and if it says a
    // fault FAR, FSYNR0 and CBFRSYNRA, clear it and add it to `found`.
    void read_context_fault(unsigned n, sc_core::sc_time raised, const Tracer::Cause& handler_step, sc_core::sc_time& t,
                            std::vector<SmmuFault>& found);
    // Send the fault to its process's fault library (a Netlink message, from
    // t, which it advances; noted in the story when `noting`) and queue the
    // outcome; a bank no process owns: an unresolved outcome at once.
    void hand_to_library(const SmmuFault& fault, bool noting, sc_core::sc_time& t);
    // `cost` of CPU work and then register accesses (`ops`, from a time it
    // advances) on one core, from `ready`; `predicted` sizes the reservation
    // (extended when the accesses take longer). Returns the end.
    // With `story`, the first slice is that noted step (returned in *step).
    sc_core::sc_time on_core(const char* activity, sc_core::sc_time ready, sc_core::sc_time cost,
                             const std::string& label, sc_core::sc_time predicted,
                             const std::function<void(sc_core::sc_time&)>& ops, const CpuCores::Story* story = nullptr,
                             Tracer::Cause* step = nullptr);
    int bank_of(int pid) const;
    std::uint64_t read_reg(std::uint64_t off, unsigned len, sc_core::sc_time& t);
    void write_reg(std::uint64_t off, std::uint64_t value, unsigned len, sc_core::sc_time& t);
    void access(bool write, std::uint64_t off, std::uint64_t& value, unsigned len, sc_core::sc_time& t);

    const SimContext& ctx_;
    Smmu500& smmu_;
    CpuCores& cpu_;
    FaultResolveFn resolve_;
    bool stall_;
    bool privileged_streams_ = false;
    sc_core::sc_time irq_entry_, handler_, netlink_, tlbi_page_;
    std::uint64_t tlbi_asid_threshold_;
    struct Bank {
        int pid = 0;
        std::uint16_t asid = 0;
    };
    std::vector<Bank> banks_;   // 16
    unsigned next_smr_ = 0;
    std::map<int, std::unique_ptr<FaultLibrary>> libraries_;
    std::function<void(const FaultOutcome&)> on_outcome_;
    tlm::tlm_generic_payload gp_;
    std::uint64_t base_ = smmu_reg::kBase;
    // Learned from the accesses made so far: one register access, and the
    // extra time of an invalidation command (sizes CPU reservations).
    sc_core::sc_time reg_time_, tlbi_extra_;
    // Faults handed to libraries, by the time their outcome is known.
    struct Pending {
        FaultOutcome outcome;
        bool resume = false;   // stall mode: write RESUME
    };
    std::multimap<sc_core::sc_time, Pending> pending_;
    LazyEvent pending_ev_;   // made when first waited for or notified
    Pending resuming_;   // RESUME written, outcome delivered at its done
    bool delivering_ = false;
    void deliver(const FaultOutcome& o);
    std::unique_ptr<LazyThread> irq_thread_;
    std::string node_;   // the node's name: its software's turns (src/core/software_turns.hpp)
    Counter *interrupts_, *faults_, *resumes_retry_, *resumes_terminate_, *invalidations_, *tlbi_writes_;
    Counter *unresolved_, *unowned_, *global_faults_, *spurious_;
    Histogram *handler_us_, *service_us_, *irq_wait_us_, *library_us_;
};

}   // namespace vrdmasim
