#include "models/bus/bus.hpp"

#include <algorithm>
#include <stdexcept>

namespace vrdmasim {

BusParams::BusParams()
    : set("bus", "AXI interconnect of one node (PL masters to PS DDR and MMIO)"),
      latency(set.time("latency", "6ns",
                       "one way through the interconnect, added to every request "
                       "(*estimate*: 2 cycles of a 333 MHz AXI port)")
                  .range("0ps", "1us")) {}

void Bus::declare_params(ParamRegistry& reg) { reg.add(params_of<BusParams>().set); }

Bus::Bus(sc_core::sc_module_name name, const SimContext& ctx)
    : sc_module(name),
      in("in"),
      out("out"),
      latency_(ctx.config[params_of<BusParams>().latency]),
      transactions_(ctx.stats.counter(std::string(this->name()) + ".transactions", "", "transactions routed")),
      decode_errors_(
          ctx.stats.counter(std::string(this->name()) + ".decode_errors", "", "transactions to an unmapped address")) {
    in.register_b_transport(this, &Bus::b_transport);
    in.register_transport_dbg(this, &Bus::transport_dbg);
}

void Bus::map(std::uint64_t base, std::uint64_t size, unsigned port, std::uint64_t target_offset,
              const std::string& name, DebugAccess* debug) {
    if (size == 0 || base + size < base) throw std::logic_error("bus: bad window " + name);
    for (const auto& w : windows_) {
        if (base < w.base + w.size && w.base < base + size)
            throw std::logic_error("bus: window " + name + " overlaps " + w.name);
    }
    windows_.push_back({base, size, port, target_offset, name, debug});
    last_ = nullptr;   // the vector moved
    std::sort(windows_.begin(), windows_.end(), [](const Window& a, const Window& b) { return a.base < b.base; });
}

void Bus::end_of_elaboration() {
    for (const auto& w : windows_) {
        if (w.port >= out.size())
            throw std::logic_error(std::string(name()) + ": window " + w.name + " uses port " + std::to_string(w.port) +
                                   ", but only " + std::to_string(out.size()) + " are bound");
    }
}

const Bus::Window* Bus::decode_search(std::uint64_t addr, std::uint64_t len) const {
    // A node maps a handful of windows: a scan costs less than a search.
    for (const Window& w : windows_) {
        if (addr < w.base) break;   // sorted by base: no later window holds it
        if (addr - w.base < w.size) {
            if (len > w.size - (addr - w.base)) return nullptr;   // runs past its window's end
            last_ = &w;
            return last_;
        }
    }
    return nullptr;
}

void Bus::b_transport(int, tlm::tlm_generic_payload& gp, sc_core::sc_time& delay) {
    transactions_.inc();
    const std::uint64_t addr = gp.get_address();
    const Window* w = decode(addr, gp.get_data_length());
    if (!w) {
        decode_errors_.inc();
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    delay += latency_;
    gp.set_address(addr - w->base + w->target_offset);
    out[w->port]->b_transport(gp, delay);
    gp.set_address(addr);
}

unsigned int Bus::transport_dbg(int, tlm::tlm_generic_payload& gp) {
    const std::uint64_t addr = gp.get_address();
    const Window* w = decode(addr, gp.get_data_length());
    if (!w) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return 0;
    }
    if (w->debug && !gp.get_byte_enable_ptr() && gp.get_command() != tlm::TLM_IGNORE_COMMAND) {
        // The same access without the payload's trip through out[port]
        // (byte enables and ignore commands go the target's own way).
        const unsigned int len = gp.get_data_length();
        if (!w->debug->debug_access(gp.get_command() == tlm::TLM_WRITE_COMMAND, addr - w->base + w->target_offset,
                                    gp.get_data_ptr(), len)) {
            gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
            return 0;
        }
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        return len;
    }
    gp.set_address(addr - w->base + w->target_offset);
    const unsigned int n = out[w->port]->transport_dbg(gp);
    gp.set_address(addr);
    return n;
}

bool Bus::debug_access(bool write, std::uint64_t addr, unsigned char* data, std::uint64_t len) {
    const Window* w = decode(addr, len);
    if (!w) return false;
    return debug_access_to(*out[w->port], w->debug, write, addr - w->base + w->target_offset, data, len);
}

bool Bus::debug_pattern(PatternOp op, std::uint64_t addr, std::uint64_t len, PatternPlace at, std::uint64_t& first) {
    const Window* w = decode(addr, len);
    if (!w) return false;
    return debug_pattern_to(*out[w->port], w->debug, op, addr - w->base + w->target_offset, len, at, first);
}

}   // namespace vrdmasim
