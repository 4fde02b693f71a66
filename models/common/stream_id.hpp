// The TLM extension that carries an AXI stream ID from a bus master to the
// SMMU. Masters (the PLDMA) include this, not the SMMU model.
#pragma once

#include <cstdint>

#include <tlm>

namespace vrdmasim {

// The stream ID of a transaction (set by the master or its port). 15 bits on
// the ZynqMP: TBU[14:10], master[9:6], AXI ID[5:0] (Xilinx AR#69447).
class StreamIdExtension : public tlm::tlm_extension<StreamIdExtension> {
public:
    std::uint32_t sid = 0;
    tlm::tlm_extension_base* clone() const override { return new StreamIdExtension(*this); }
    void copy_from(const tlm::tlm_extension_base& o) override { sid = static_cast<const StreamIdExtension&>(o).sid; }
};

}   // namespace vrdmasim
