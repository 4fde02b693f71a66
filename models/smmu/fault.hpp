// Fault recording of the SMMUv2 architecture (ARM IHI 0062; Linux
// arm-smmu.h): context faults in FSR/FAR/FSYNR0/CBFRSYNRA (MULTI when one is
// already recorded), global faults in sGFSR/sGFAR/sGFSYNRn, the shared
// interrupt line, the answer to a terminated transaction (abort or RAZ/WI),
// and stall mode: a stalled transaction waits for a RESUME write (retry or
// terminate), and with HUPCF clear later ones wait behind it.
#pragma once

#include <cstdint>
#include <vector>
#include <string>

#include <systemc>
#include <tlm>

#include "src/core/context.hpp"
#include "models/common/irq_line.hpp"
#include "models/common/smmu_fault.hpp"
#include "models/smmu/context_bank.hpp"
#include "models/smmu/stream_match.hpp"

namespace vrdmasim {

struct GlobalFaultRegisters {
    std::uint32_t sgfsr = 0, sgfsynr0 = 0, sgfsynr1 = 0, sgfsynr2 = 0;
    std::uint64_t sgfar = 0;
};

class FaultUnit {
public:
    FaultUnit(const SimContext& ctx, const std::string& group, const std::string& smmu_name, IrqLine& irq,
              ContextBanks& cbs, const StreamMatcher& streams);

    GlobalFaultRegisters& global() { return g_; }
    const GlobalFaultRegisters& global() const { return g_; }

    // A fault of the translation of `va` in bank c at time `at`: record it,
    // then end it (returns false) or, in stall mode (SCTLR.CFCFG), wait for
    // RESUME (returns true for a retry). `answered` is when the fault was
    // answered or the retry begins; `story`, this fault's step in the
    // narrated story (with FSR.MULTI not the one the registers describe).
    bool context_fault(ContextBank& c, std::uint32_t sid, std::uint64_t va, bool write, FaultType type, int level,
                       sc_core::sc_time at, sc_core::sc_time& answered, Tracer::Cause& story);
    // Wait behind a stalled transaction of bank c; returns the time to go on from.
    sc_core::sc_time hold(ContextBank& c, sc_core::sc_time t);
    // A RESUME write (TnR in bit 0).
    void resume(ContextBank& c, std::uint32_t v, sc_core::sc_time at);
    // A global fault: sGFSR bit `bit` for stream `sid`.
    void global_fault(std::uint32_t bit, std::uint32_t sid, std::uint64_t va, bool write, sc_core::sc_time at);
    // Re-evaluate the shared line after software changed a status or enable bit.
    void update_irq(sc_core::sc_time at);
    // Bring every bank's syndrome registers to time `at`: the faults
    // recorded for times up to `at` reach them, in time order (the first
    // fills the syndrome, later ones set FSR.MULTI). Called before any
    // register access at `at`: a fault is never seen before its time.
    void settle(sc_core::sc_time at);

    // Answer a terminated transaction: abort (error response and a
    // SmmuFaultExtension for bank cb, -1 for a global fault) or RAZ/WI.
    // `from` is the byte offset of the part that was not transferred.
    static void terminate(tlm::tlm_generic_payload& gp, bool abort, int cb, std::uint64_t va, bool write,
                          FaultType type, int level, std::uint64_t from);

private:
    Tracer::Cause record(ContextBank& c, std::uint32_t sid, std::uint64_t va, bool write, FaultType type, int level,
                         sc_core::sc_time at, bool stall);
    bool stall(ContextBank& c, sc_core::sc_time fault_at);
    void settle(ContextBank& c, sc_core::sc_time at);
    void trace_global(std::uint32_t sid, std::uint64_t va, sc_core::sc_time at);

    const std::string who_;
    IrqLine& irq_;
    ContextBanks& cbs_;
    const StreamMatcher& streams_;
    Tracer& tracer_;
    Tracer::Track track_;
    Counter& global_faults_;
    GlobalFaultRegisters g_;
    std::uint64_t stall_seq_ = 0;
    // The banks that may hold faults recorded for a later time, in bank
    // order (each once; one whose pending list emptied leaves at the next
    // settle): settle()
    // and update_irq() visit these, not every bank, at every register
    // access.
    std::vector<unsigned> pending_banks_;
};

}   // namespace vrdmasim
