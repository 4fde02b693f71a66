// What an SMMU fault is, as seen by those who receive one: the fault types of
// the SMMUv2 architecture (FSR.TF/AFF/PF/EF) and the TLM extension the SMMU
// attaches to a transaction it terminated because of a fault. Masters (the
// PLDMA) include this, not the SMMU model.
#pragma once

#include <cstdint>

#include <tlm>

#include "src/core/trace.hpp"

namespace vrdmasim {

enum class FaultType { None, Translation, AccessFlag, Permission, External };

// Attached by the SMMU to a transaction it terminated because of a fault
// (terminate model, or a stalled transaction resumed with terminate).
class SmmuFaultExtension : public tlm::tlm_extension<SmmuFaultExtension> {
public:
    int cb = -1;   // context bank, -1 for an unmatched stream
    std::uint64_t address = 0;   // faulting input (virtual) address
    bool write = false;   // FSYNR0.WNR
    FaultType type = FaultType::None;
    int level = 0;
    Tracer::Cause story;   // the fault's step in the narrated story (not hardware state)
    tlm::tlm_extension_base* clone() const override { return new SmmuFaultExtension(*this); }
    void copy_from(const tlm::tlm_extension_base& o) override { *this = static_cast<const SmmuFaultExtension&>(o); }
};

}   // namespace vrdmasim
