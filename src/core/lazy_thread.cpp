// sc_spawn and sc_spawn_options (before the first <systemc>).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include "src/core/lazy_thread.hpp"

#include <stdexcept>

namespace vrdmasim {

sc_core::sc_event& WakeEvent::make() {
    sc_core::sc_event& e = ev_.get();
    if (thread_) thread_->arm(e);
    return e;
}

LazyThread::LazyThread(const char* name, WakeEvent& wake, std::function<void()> body)
    : owner_(sc_core::sc_get_curr_simcontext()->hierarchy_curr()),
      name_(name),
      body_(std::move(body)),
      attribute_(std::string(kAttribute) + name, 1) {
    if (!owner_) throw std::logic_error("LazyThread " + name_ + " made outside a module's constructor");
    if (wake.thread_) throw std::logic_error("LazyThread " + name_ + ": its WakeEvent already wakes another thread");
    owner_->add_attribute(attribute_);
    wake.thread_ = this;
    if (wake.made()) arm(wake.ev_.get());
}

void LazyThread::arm(const sc_core::sc_event& ev) {
    // No static sensitivity: the method's first run (its initialization, in
    // this evaluation phase) arms it on the event with next_trigger; its
    // second spawns the thread and sets no trigger, so it is never run again.
    wake_ = &ev;
    method_made_ = true;
    const UnderModule under(owner_);
    sc_core::sc_spawn_options opts;
    opts.spawn_method();
    sc_core::sc_spawn([this] { trigger(); }, name_.c_str(), &opts);
}

void LazyThread::trigger() {
    if (!armed_) {
        armed_ = true;
        sc_core::next_trigger(*wake_);
        return;
    }
    spawned_ = true;
    // From now on the thread itself is counted (thread_processes_under).
    owner_->remove_attribute(attribute_.name());
    sc_core::sc_spawn(body_, "run");
}

}   // namespace vrdmasim
