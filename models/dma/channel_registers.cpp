// The MMIO decode of the engine's channel pages and the kernel's control
// page, and the doorbell that queues a staged descriptor (see
// channel_registers.hpp; README.md "Registers").
#include "models/dma/channel_registers.hpp"

#include <cstring>

#include "src/core/lazy_event.hpp"
#include "models/dma/atomics.hpp"

namespace vrdmasim {

using sc_core::sc_time;
using namespace pldma_reg;

ChannelRegisters::ChannelRegisters(const PldmaConfig& params, PldmaStats& stats, unsigned node, std::size_t nodes,
                                   SendWindows& windows)
    : params_(params),
      stats_(stats),
      node_(node),
      nodes_(nodes),
      owner_(sc_core::sc_get_curr_simcontext()->hierarchy_curr()),
      channels_(params.channels),
      windows_(windows) {}

Channel& ChannelRegisters::make(std::size_t c) const {
    {
        const UnderModule under(owner_);
        channels_[c] = std::make_unique<Channel>();
    }
    Channel& ch = *channels_[c];
    ch.axi_id = params_.axi_id;
    ch.sid = params_.stream_of(ch.axi_id);
    return ch;
}

bool ChannelRegisters::implemented(DescOp op) {
    switch (op) {
    case DescOp::Write: return true;
    case DescOp::Read: return true;
    case DescOp::FetchAdd:
    case DescOp::CompareSwap:
    case DescOp::Swap: return true;   // atomics.*
    default: return false;
    }
}

bool ChannelRegisters::acceptable(const Descriptor& d, unsigned counters, bool ordered) {
    if (!implemented(d.op)) return false;
    // A read's DESC_FLAGS bits mean nothing yet (no notification of the
    // responder is built): refused rather than silently ignored.
    if (d.op == DescOp::Read && d.flags != 0) return false;
    // An event counter is named by writes only, and must exist at the receiver
    // (every engine has dma.event-counters per channel); a zero-length
    // write sends no packet to carry it.
    if ((d.flags & kFlagCounter) && (d.op != DescOp::Write || d.counter >= counters || d.len == 0)) return false;
    // Ordered notifications number the notifications a write's last packet
    // carries; a notification packet after the ACK is not ordered (not built).
    if (ordered && (d.flags & kFlagNotifyPacket)) return false;
    return true;
}

int ChannelRegisters::by_domain(std::uint16_t pd) const {
    for (unsigned c = 0; c < channels_.size(); ++c) {
        const Channel* ch = channels_[c].get();
        if (ch ? ch->enabled && ch->pd == pd : pd == 0) return static_cast<int>(c);   // reset: enabled, domain 0
    }
    return -1;
}

void ChannelRegisters::transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    stats_.transactions.inc();
    const std::uint64_t addr = gp.get_address();
    const unsigned len = gp.get_data_length();
    unsigned char* data = gp.get_data_ptr();
    delay += params_.mmio_latency;
    if ((len != 4 && len != 8) || gp.get_byte_enable_ptr() || addr % len != 0) {
        gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return;
    }
    std::uint64_t v = 0;
    if (gp.is_write()) std::memcpy(&v, data, len);
    const bool w = gp.is_write();
    const sc_time at = sc_core::sc_time_stamp() + delay;

    if (addr >= kKernelBase) {
        control_word(gp, addr, w, v);
        return;
    }
    const std::uint64_t c = addr / kChannelStride, off = addr % kChannelStride;
    if (c >= channels_.size()) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    if (!channel_register(gp, static_cast<unsigned>(c), off, w, v, at, delay)) return;
    if (!w) std::memcpy(data, &v, len);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void ChannelRegisters::control_word(tlm::tlm_generic_payload& gp, std::uint64_t addr, bool w, std::uint64_t v) {
    // The kernel's page: one control word per channel.
    const std::uint64_t c = (addr - kKernelBase) / 8;
    if (c >= channels_.size() || (addr - kKernelBase) % 8 != kChannelCtrl) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    Channel& ch = (*this)[c];
    if (w) {
        ch.pd = static_cast<std::uint16_t>(v & 0xffff);
        ch.enabled = (v & kCtrlEnable) != 0;
        ch.axi_id = static_cast<std::uint32_t>((v & kCtrlAxiMask) >> kCtrlAxiShift);
        ch.sid = params_.stream_of(ch.axi_id);
    } else {
        v = ch.pd | (ch.enabled ? kCtrlEnable : 0u) | (ch.axi_id << kCtrlAxiShift);
        std::memcpy(gp.get_data_ptr(), &v, gp.get_data_length());
    }
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

bool ChannelRegisters::channel_register(tlm::tlm_generic_payload& gp, unsigned c, std::uint64_t off, bool w,
                                        std::uint64_t& v, sc_time at, sc_time delay) {
    Channel& ch = (*this)[c];
    if (off >= kEventCounterBase && off < kEventCounterBase + 8ull * params_.event_counters) {
        // EVENT_COUNTER[i]: rw (software resets it), each increment visible from its own time.
        const auto i = static_cast<std::uint32_t>((off - kEventCounterBase) / 8);
        if (w) ch.counters[i].write_at(v, at);
        else v = ch.counters.value_at(i, at);
        return true;
    }
    auto reg64 = [&](std::uint64_t& r) {
        if (w) r = v;
        else v = r;
    };
    auto reg32 = [&](std::uint32_t& r) {
        if (w) r = static_cast<std::uint32_t>(v);
        else v = r;
    };
    auto read_only = [&](std::uint64_t value) {
        if (w) return false;
        v = value;
        return true;
    };
    bool ok = true;
    switch (off) {
    case kDescSrc: reg64(ch.staged.src); break;
    case kDescDst: reg64(ch.staged.dst); break;
    case kDescLen: reg64(ch.staged.len); break;
    case kDescDstNode: reg32(ch.staged.dst_node); break;
    case kDescFlags: reg32(ch.staged.flags); break;
    case kDescCompl: reg64(ch.staged.compl_addr); break;
    case kDescTag: reg64(ch.staged.tag); break;
    case kDescOp: {
        std::uint32_t op = static_cast<std::uint32_t>(ch.staged.op);
        reg32(op);
        ch.staged.op = static_cast<DescOp>(op);   // any value is held; the doorbell judges it
        break;
    }
    case kDescCmp: reg64(ch.staged.compare); break;
    case kDescCounter: reg32(ch.staged.counter); break;
    case kDoorbell:
        if (w) ring_doorbell(c, at, delay);
        else v = 0;
        break;
    case kStatus: ok = read_only((ch.queued & 0xffff) | (ch.last_refused ? 0x80000000u : 0u)); break;
    case kRxRingBase: reg64(ch.rx_ring_base); break;
    case kRxRingEntries: reg32(ch.rx_ring_entries); break;
    case kRxProduced: ok = read_only(ch.records.count_at(at)); break;
    case kTxCompleted: ok = read_only(ch.tx.count_at(at)); break;
    case kEventCount: ok = read_only(ch.rx.count_at(at)); break;
    default: gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE); return false;
    }
    if (!ok) gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
    return ok;
}

void ChannelRegisters::ring_doorbell(unsigned c, sc_time at, sc_time delay) {
    Channel& ch = (*this)[c];
    // An atomic works on 8 aligned bytes: DESC_LEN 8, DESC_DST a multiple of 8.
    const bool atomic = is_atomic(ch.staged.op);
    const bool bad_atomic = atomic && (ch.staged.len != 8 || ch.staged.dst % 8 != 0);
    if (!ch.enabled || ch.queued >= params_.queue_depth || ch.staged.dst_node >= nodes_ ||
        !acceptable(ch.staged, params_.event_counters, windows_.enabled()) || bad_atomic ||
        (ch.staged.op == DescOp::Read && ch.staged.dst_node == node_)) {
        // (A read of this node's own memory is refused: the reply would
        // share the read's transfer id in this engine's tables.)
        ch.last_refused = true;
        stats_.refused.inc();
        return;
    }
    ch.last_refused = false;
    Work wk;
    wk.desc = ch.staged;
    wk.desc.id = make_transfer_id(node_, next_id_++);
    wk.desc.channel = c;
    wk.desc.pd = ch.pd;
    wk.desc.sid = ch.sid;
    wk.desc.posted = at;
    // A notifying write takes its pair's next notification number now:
    // notifications are delivered in doorbell order (dma.notify-window).
    if (wk.desc.op == DescOp::Write && wk.desc.len > 0 && (wk.desc.flags & (kFlagNotify | kFlagCounter)))
        wk.desc.nseq = windows_.assign(wk.desc.dst_node, wk.desc.pd);
    wk.id = wk.desc.id;
    wk.earliest = at;
    ch.work.push_back(wk);
    ++ch.queued;
    if (atomic) stats_.atomics_posted.inc();   // not a transfer: atomics have their own statistics
    else stats_.posted.inc();
    if (wk.desc.op == DescOp::Read) stats_.reads_posted.inc();
    doorbell_.notify(delay);
}

}   // namespace vrdmasim
