// A test memory without contention: every access takes the same latency,
// whatever else is in flight, which makes concurrent timing exact. Sparse,
// zero-filled, real bytes; debug transport too.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_target_socket.h>

namespace vrdmasim_test {

struct FlatMemory : sc_core::sc_module {
    tlm_utils::simple_target_socket<FlatMemory> socket{"socket"};
    sc_core::sc_time latency;
    std::uint64_t size = 64ull << 20;
    std::unordered_map<std::uint64_t, std::vector<unsigned char>> pages;

    FlatMemory(sc_core::sc_module_name n, sc_core::sc_time lat) : sc_module(n), latency(lat) {
        socket.register_b_transport(this, &FlatMemory::b_transport);
        socket.register_transport_dbg(this, &FlatMemory::transport_dbg);
    }
    bool copy(tlm::tlm_generic_payload& gp) {
        const std::uint64_t a = gp.get_address(), len = gp.get_data_length();
        if (a >= size || len > size - a) {
            gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
            return false;
        }
        for (std::uint64_t i = 0; i < len; ++i) {
            auto& p = pages[(a + i) >> 12];
            if (p.empty()) p.assign(4096, 0);
            unsigned char& b = p[(a + i) & 4095];
            if (gp.is_write()) b = gp.get_data_ptr()[i];
            else gp.get_data_ptr()[i] = b;
        }
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        return true;
    }
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& d) {
        if (copy(gp)) d += latency;
    }
    unsigned transport_dbg(tlm::tlm_generic_payload& gp) { return copy(gp) ? gp.get_data_length() : 0; }
};

}   // namespace vrdmasim_test
