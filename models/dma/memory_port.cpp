// The engine's memory port (see memory_port.hpp).
#include "models/dma/memory_port.hpp"
#include "src/core/force_inline.hpp"
#include "src/core/sim_now.hpp"

namespace vrdmasim {

using sc_core::sc_time;

MemoryPort::MemoryPort(FwPort& socket, Counter& smmu_faults) : socket_(socket), smmu_faults_(smmu_faults) {}

// Inlined into access, its one caller (core/force_inline.hpp).
VRDMASIM_FORCE_INLINE MemoryPort::MemPayload* MemoryPort::take() {
    if (free_.empty()) {
        auto p = std::make_unique<MemPayload>();
        p->sid = new StreamIdExtension;
        p->fault = new SmmuFaultExtension;
        p->gp.set_extension(p->sid);   // owned by the payload
        p->gp.set_extension(p->fault);
        free_.push_back(p.get());
        pool_.push_back(std::move(p));
    }
    MemPayload* p = free_.back();
    free_.pop_back();
    return p;
}

sc_time MemoryPort::access(std::uint32_t sid, tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data,
                           std::uint64_t len, sc_time at, bool& ok, SmmuFaultExtension* fault) {
    MemPayload* p = take();
    tlm::tlm_generic_payload& gp = p->gp;
    p->fault->type = FaultType::None;
    p->sid->sid = sid;
    gp.set_command(cmd);
    gp.set_address(addr);
    gp.set_data_ptr(data);
    gp.set_data_length(static_cast<unsigned>(len));
    gp.set_streaming_width(static_cast<unsigned>(len));
    gp.set_byte_enable_ptr(nullptr);
    gp.set_dmi_allowed(false);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_time d = from_now(at);
    socket_->b_transport(gp, d);   // may wait() (a stalled SMMU translation)
    const bool faulted = p->fault->type != FaultType::None;
    ok = gp.is_response_ok() && !faulted;
    if (faulted) smmu_faults_.inc();
    if (fault) {
        if (!ok) *fault = *p->fault;
        else fault->type = FaultType::None;   // a success: no copy of the rest per access
    }
    free_.push_back(p);
    const sc_time done = sim_now() + d;
    if (ok && cmd == tlm::TLM_WRITE_COMMAND && watch_.any()) watch_.wrote(sid, addr, data, len, done);
    return done;
}

}   // namespace vrdmasim
