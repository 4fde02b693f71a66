// A CPU for the engine's model tests: runs a test program that pokes the
// engine's registers over MMIO, and stages descriptors the way a driver
// does (models/dma/README.md, "Registers"). pldma_test.cpp and
// atomics_test.cpp drive their engines with it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include <catch2/catch.hpp>
#include <systemc>
#include <tlm_utils/simple_initiator_socket.h>

#include "models/dma/pldma.hpp"

namespace vrdmasim_test {

// A descriptor as a CPU stages it in a channel's registers.
struct Desc {
    std::uint64_t src = 0, dst = 0, len = 0, tag = 0, compl_addr = 0;
    unsigned node = 0;   // DESC_DST_NODE (a read's: the responder)
    std::uint32_t flags = 0;   // DESC_FLAGS
    std::optional<vrdmasim::DescOp> op;   // DESC_OP, written only when set
    std::optional<std::uint64_t> cmp;   // DESC_CMP, written only when set
    std::optional<std::uint32_t> counter;   // DESC_COUNTER, written only when set
};

// `Self`: the test's CPU type, which the program receives.
template <class Self>
struct MmioCpu : sc_core::sc_module {
    tlm_utils::simple_initiator_socket<MmioCpu> mmio{"mmio"};
    std::function<void(Self&)> program;
    std::uint64_t base = 0;   // channel page posted on (stage, post, wait_count)
    explicit MmioCpu(sc_core::sc_module_name n) : sc_module(n) {
        SC_HAS_PROCESS(MmioCpu);
        SC_THREAD(run);
    }
    void run() {
        if (program) program(static_cast<Self&>(*this));
    }
    tlm::tlm_response_status access(bool write, std::uint64_t off, std::uint64_t& v, unsigned len) {
        tlm::tlm_generic_payload gp;
        gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
        gp.set_address(off);
        gp.set_data_ptr(reinterpret_cast<unsigned char*>(&v));
        gp.set_data_length(len);
        gp.set_streaming_width(len);
        sc_core::sc_time d = sc_core::SC_ZERO_TIME;
        mmio->b_transport(gp, d);
        wait(d);
        return gp.get_response_status();
    }
    void w(std::uint64_t off, std::uint64_t v, unsigned len = 8) {
        REQUIRE(access(true, off, v, len) == tlm::TLM_OK_RESPONSE);
    }
    std::uint64_t r(std::uint64_t off, unsigned len = 8) {
        std::uint64_t v = 0;
        REQUIRE(access(false, off, v, len) == tlm::TLM_OK_RESPONSE);
        return v;
    }
    // Stages `d` in the registers of channel page `base` and rings the doorbell.
    void stage(const Desc& d) {
        namespace reg = vrdmasim::pldma_reg;
        if (d.op) w(base + reg::kDescOp, static_cast<std::uint32_t>(*d.op), 4);
        w(base + reg::kDescSrc, d.src);
        if (d.cmp) w(base + reg::kDescCmp, *d.cmp);
        w(base + reg::kDescDst, d.dst);
        w(base + reg::kDescLen, d.len);
        w(base + reg::kDescDstNode, d.node, 4);
        w(base + reg::kDescFlags, d.flags, 4);
        if (d.counter) w(base + reg::kDescCounter, *d.counter, 4);
        w(base + reg::kDescCompl, d.compl_addr);
        w(base + reg::kDescTag, d.tag);
        w(base + reg::kDoorbell, 1, 4);
    }
    // Whether the last doorbell was taken (STATUS's refused bit clear).
    bool doorbell_taken() { return (r(base + vrdmasim::pldma_reg::kStatus, 4) & 0x80000000u) == 0; }
    // A write of `len` bytes from `src` to `dst` at `node`.
    void post(std::uint64_t src, unsigned node, std::uint64_t dst, std::uint64_t len, std::uint64_t tag,
              std::uint64_t compl_addr, bool notify) {
        Desc d;
        d.src = src, d.dst = dst, d.len = len, d.tag = tag, d.compl_addr = compl_addr, d.node = node;
        d.flags = notify ? vrdmasim::kFlagNotify : 0;
        stage(d);
    }
    // Polls register `off` of channel page `base` every 100 ns until it
    // reads at least `n` (`tries` times at most).
    void wait_count(std::uint64_t off, std::uint64_t n, int tries = 100000) {
        for (int i = 0; i < tries && r(base + off) < n; ++i) wait(100, sc_core::SC_NS);
        REQUIRE(r(base + off) >= n);
    }
};

}   // namespace vrdmasim_test
