#include "models/interconnect/hop_queue.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace vrdmasim {

using sc_core::sc_time;

HopPacket::HopPacket() : pkt(new ExanetPacket) { gp.set_extension(pkt); }

void HopPacket::take(const tlm::tlm_generic_payload& from, const ExanetPacket& p) {
    *pkt = p;
    const unsigned n = from.get_data_length();
    data.resize(n);
    if (n) std::copy(from.get_data_ptr(), from.get_data_ptr() + n, data.data());
    gp.set_command(from.get_command());
    gp.set_address(from.get_address());
    gp.set_data_ptr(data.data());
    gp.set_data_length(n);
    gp.set_streaming_width(from.get_streaming_width());
    gp.set_byte_enable_ptr(nullptr);
    gp.set_byte_enable_length(0);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    flits = p.flits();
}

HopPacket& HopQueue::take_packet() {
    if (free_.empty()) return pool_.emplace_back();
    HopPacket& p = *free_.back();
    free_.pop_back();
    return p;
}

void HopQueue::give_back(HopPacket& p) {
    p.up = nullptr;
    free_.push_back(&p);
}

HopQueue::HopQueue(sc_core::sc_module_name name) : sc_module(name) {
    SC_HAS_PROCESS(HopQueue);
    SC_METHOD(serve);
    sensitive << wake_;
    dont_initialize();
}

void HopQueue::post(const Event& e) {
    const sc_time now = serving_ ? current_ : sc_core::sc_time_stamp();
    if (e.t < now)
        throw std::logic_error(std::string(name()) + ": an event posted for " + e.t.to_string() +
                               ", before the present " + now.to_string());
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), Later{});
    most_ = std::max(most_, heap_.size());
    if (!serving_) arm(heap_.front().t, sc_core::sc_time_stamp());   // (serve() arms once it is done)
}

// wake_ at `at` unless it already wakes by then (a timed notification is
// replaced by an earlier one, never by a later: SystemC's rule too).
void HopQueue::arm(sc_time at, sc_time now) {
    if (armed_ && armed_at_ <= at) return;
    armed_ = true;
    armed_at_ = at;
    if (at == now) wake_.notify(sc_core::SC_ZERO_TIME);
    else wake_.notify(at - now);
}

void HopQueue::serve() {
    ++wakes_;
    const sc_time now = sc_core::sc_time_stamp();
    armed_ = false;
    if (heap_.empty()) return;
    if (heap_.front().t > now) {   // woken early (an earlier event was served meanwhile)
        arm(heap_.front().t, now);
        return;
    }
    // Another process runnable at this time may still post for it: serve
    // once none is (a delta later, as often as it takes).
    if (sc_core::sc_pending_activity_at_current_time()) {
        ++deferrals_;
        arm(now, now);
        return;
    }
    // Every event before the next time another process has something to do,
    // in order: none can post for those times. A handler may post more
    // (at or after its own time), which take their place in the same order,
    // and may wake a process (woke()), which brings that time closer.
    serving_ = true;
    horizon_ = now + sc_core::sc_time_to_pending_activity();
    while (!heap_.empty() && heap_.front().t < horizon_) {
        std::pop_heap(heap_.begin(), heap_.end(), Later{});
        const Event e = heap_.back();
        heap_.pop_back();
        ++served_;
        current_ = e.t;
        e.to->on_hop_event(*this, e.key, e.what, e.arg);
    }
    serving_ = false;
    if (!heap_.empty()) arm(heap_.front().t, now);
}

}   // namespace vrdmasim
