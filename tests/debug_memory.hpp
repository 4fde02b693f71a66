// Sparse memory reached by debug transport only (timed access is refused),
// stored by 4 KiB page. Bytes never written read as 0xA5, so a frame handed
// out without clearing shows. What a Vm needs for page tables and page
// contents in tests that take the time from the Vm's own results.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include <systemc>
#include <tlm>

namespace vrdmasim_test {

class DebugMemory : public tlm::tlm_fw_transport_if<> {
public:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time&) override {
        gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    }
    tlm::tlm_sync_enum nb_transport_fw(tlm::tlm_generic_payload&, tlm::tlm_phase&, sc_core::sc_time&) override {
        return tlm::TLM_COMPLETED;
    }
    bool get_direct_mem_ptr(tlm::tlm_generic_payload&, tlm::tlm_dmi&) override { return false; }
    unsigned int transport_dbg(tlm::tlm_generic_payload& gp) override {
        ++transactions;
        unsigned char* d = gp.get_data_ptr();
        for (unsigned i = 0; i < gp.get_data_length(); ++i) {
            const std::uint64_t a = gp.get_address() + i;
            if (gp.is_write()) {
                auto it = pages.find(a / 4096);
                if (it == pages.end()) it = pages.emplace(a / 4096, std::vector<unsigned char>(4096, 0xA5)).first;
                it->second[a % 4096] = d[i];
            } else {
                d[i] = byte(a);
            }
        }
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        return gp.get_data_length();
    }
    unsigned char byte(std::uint64_t a) const {
        auto it = pages.find(a / 4096);
        return it == pages.end() ? 0xA5 : it->second[a % 4096];
    }
    std::uint64_t word(std::uint64_t a) const {   // little-endian
        std::uint64_t v = 0;
        for (int i = 7; i >= 0; --i) v = (v << 8) | byte(a + static_cast<unsigned>(i));
        return v;
    }
    std::unordered_map<std::uint64_t, std::vector<unsigned char>> pages;
    std::uint64_t transactions = 0;   // debug transactions served (host work of the caller)
};

}   // namespace vrdmasim_test
