// The MMU-500 register file as software sees it over MMIO (offsets in
// register_map.hpp): access checks, 32/64-bit decoding of the global spaces
// GR0 and GR1 and of the context bank pages, and the actions register
// writes start (stream-configuration changes, RESUME, TLB invalidation).
// The state lives with its concept: sCR0, SMRs and S2CRs in StreamMatcher,
// sGFSR.. in FaultUnit, bank registers in ContextBank.
#pragma once

#include <cstdint>
#include <string>

#include <systemc>
#include <tlm>

#include "src/core/stats.hpp"
#include "models/smmu/context_bank.hpp"
#include "models/smmu/fault.hpp"
#include "models/smmu/invalidation.hpp"
#include "models/smmu/params.hpp"
#include "models/smmu/stream_match.hpp"

namespace vrdmasim {

class RegisterFile {
public:
    RegisterFile(const SmmuConfig& p, StatRegistry& s, const std::string& smmu_name, ContextBanks& cbs,
                 StreamMatcher& streams, FaultUnit& faults, Invalidator& tlbi);

    // b_transport of the `regs` socket: the access takes register-latency
    // plus tlbi-time per invalidation command.
    void transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    // transport_dbg: the same access, untimed and uncounted.
    unsigned debug(tlm::tlm_generic_payload& gp);

private:
    bool access(tlm::tlm_generic_payload& gp, sc_core::sc_time at, sc_core::sc_time& extra, bool timed);
    std::uint64_t read(std::uint64_t off, unsigned len, bool& known) const;
    void write(std::uint64_t off, unsigned len, std::uint64_t v, sc_core::sc_time at, sc_core::sc_time& extra,
               bool& known);

    std::uint64_t read64(std::uint64_t off) const;
    void write64(std::uint64_t off, std::uint64_t v, sc_core::sc_time& extra);
    std::uint32_t read32(std::uint64_t off, bool& known) const;
    void write32(std::uint64_t off, std::uint32_t v, sc_core::sc_time at, sc_core::sc_time& extra, bool& known);
    std::uint32_t read_gr0(std::uint64_t off, bool& known) const;
    bool write_gr0(std::uint64_t off, std::uint32_t v, sc_core::sc_time at, sc_core::sc_time& extra);
    std::uint32_t read_gr1(std::uint64_t off, bool& known) const;
    bool write_gr1(std::uint64_t off, std::uint32_t v);
    std::uint32_t read_cb(std::uint64_t off, bool& known) const;
    bool write_cb(std::uint64_t off, std::uint32_t v, sc_core::sc_time at, sc_core::sc_time& extra);

    const sc_core::sc_time latency_, tlbi_time_;
    ContextBanks& cbs_;
    StreamMatcher& streams_;
    FaultUnit& faults_;
    Invalidator& tlbi_;
    std::uint32_t sacr_ = 0;
    Counter &accesses_, &unknown_;
};

}   // namespace vrdmasim
