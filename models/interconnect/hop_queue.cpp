#include "models/interconnect/hop_queue.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace vrdmasim {

using sc_core::sc_time;

HopQueue::HopQueue(sc_core::sc_module_name name) : sc_module(name) {
    SC_HAS_PROCESS(HopQueue);
    SC_METHOD(serve);
    sensitive << wake_;
    dont_initialize();
}

void HopQueue::post(const Event& e) {
    const sc_time now = sc_core::sc_time_stamp();
    if (e.t < now)
        throw std::logic_error(std::string(name()) + ": an event posted for " + e.t.to_string() +
                               ", before the present " + now.to_string());
    heap_.push_back(e);
    std::push_heap(heap_.begin(), heap_.end(), later);
    most_ = std::max(most_, heap_.size());
    arm(heap_.front().t, now);
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
    // Every event at this time, in order; a handler may post more for it
    // (a zero-latency hop), which take their place in the same order.
    while (!heap_.empty() && heap_.front().t == now) {
        std::pop_heap(heap_.begin(), heap_.end(), later);
        const Event e = heap_.back();
        heap_.pop_back();
        ++served_;
        e.to->on_hop_event(*this, e.key, e.what, e.arg);
    }
    if (!heap_.empty()) arm(heap_.front().t, now);
}

}   // namespace vrdmasim
