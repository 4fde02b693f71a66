// The engine's AXI master port towards memory (through its TBU of the SMMU,
// or the node bus): source reads, payload writes and record writes. Every
// access carries the stream ID of the channel it is made for
// (StreamIdExtension: the sending channel for source reads and completion
// records, the receiving channel for payload writes and notification
// records) and a fault extension the SMMU fills (SmmuFaultExtension). Also the time helper every
// part of the engine uses to turn an absolute time into a TLM delay.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <systemc>
#include <tlm>

#include "src/core/stats.hpp"
#include "models/common/smmu_fault.hpp"
#include "models/common/stream_id.hpp"
#include "src/core/sim_now.hpp"
#include "models/dma/write_watch.hpp"

namespace vrdmasim {

// An initiator socket's forward path, whatever module owns the socket.
using FwPort = sc_core::sc_port_b<tlm::tlm_fw_transport_if<>>;

// `at` as a delay from now. A memory access may have wait()ed (a translation
// stalled in the SMMU), so "now" is always read afresh.
inline sc_core::sc_time from_now(sc_core::sc_time at) {
    const sc_core::sc_time now = sim_now();
    return at > now ? at - now : sc_core::SC_ZERO_TIME;
}

class MemoryPort {
public:
    // `smmu_faults` counts the accesses the SMMU answered with a fault.
    MemoryPort(FwPort& socket, Counter& smmu_faults);
    // Words software polls: every write that succeeds is recorded there.
    WriteWatch& watch() { return watch_; }
    const WriteWatch& watch() const { return watch_; }

    // Timed memory access with stream ID `sid` at absolute time `at`; returns completion time,
    // with `ok` false on an error response (an SMMU fault included).
    // `fault`, when given, receives the SMMU's fault extension when the
    // access failed (type None if it was not a fault); when it succeeded,
    // only its type is set (None), the rest left as it was.
    sc_core::sc_time access(std::uint32_t sid, tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data,
                            std::uint64_t len, sc_core::sc_time at, bool& ok, SmmuFaultExtension* fault = nullptr);

private:
    // The engine's reads and the receive path's writes may be in flight at
    // once (a stalled read lets other threads deliver packets), so each
    // access takes its own payload from a small pool. Each carries the
    // access's stream ID and a fault extension the SMMU fills.
    struct MemPayload {
        tlm::tlm_generic_payload gp;
        StreamIdExtension* sid;
        SmmuFaultExtension* fault;
    };
    MemPayload* take();

    FwPort& socket_;
    Counter& smmu_faults_;
    std::vector<std::unique_ptr<MemPayload>> pool_;
    std::vector<MemPayload*> free_;
    WriteWatch watch_;
};

}   // namespace vrdmasim
