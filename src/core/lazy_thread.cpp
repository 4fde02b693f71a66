// sc_spawn and sc_spawn_options (before the first <systemc>).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "core/lazy_thread.hpp"

namespace vrdmasim {

LazyThread::LazyThread(const char* name, const sc_core::sc_event& wake, std::function<void()> body)
    : wake_(wake), body_(std::move(body)), attribute_(kAttribute, 1) {
    // No static sensitivity: the method's first run (initialization) arms
    // it on `wake` with next_trigger; its second spawns the thread and sets
    // no trigger, so it is never run again.
    sc_core::sc_spawn_options opts;
    opts.spawn_method();
    const sc_core::sc_process_handle h = sc_core::sc_spawn([this] { trigger(); }, name, &opts);
    h.get_process_object()->add_attribute(attribute_);
}

void LazyThread::trigger() {
    if (!armed_) {
        armed_ = true;
        sc_core::next_trigger(wake_);
        return;
    }
    spawned_ = true;
    sc_core::sc_spawn(body_, "run");
}

}  // namespace vrdmasim
