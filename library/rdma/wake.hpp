// A wait of a process's thread that something other than a completion may
// end: MPI_Waitany over requests of the two-sided library and of
// non-blocking collectives, whose ends come from the library's own threads
// (workloads/mpi README "Non-blocking collectives"). While a Wake is in
// scope in a SystemC thread, that thread's waits for completions and
// notifications (RdmaProcess::wait_for, wait_event: every wait of the
// messaging library's) end once `done()` holds, looked at after each of
// `events` (each notified when `done()` may have come to hold) as well as
// after each completion. Other threads' waits are unchanged.
#pragma once

#include <systemc>

#include <functional>
#include <map>
#include <utility>
#include <vector>

namespace vrdmasim {

class Wake {
public:
    Wake(std::function<bool()> done, std::vector<sc_core::sc_event*> events)
        : done_(std::move(done)), events_(std::move(events)), thread_(thread()) {
        auto& w = of_threads()[thread_];
        previous_ = w;
        w = this;
    }
    ~Wake() { of_threads()[thread_] = previous_; }
    Wake(const Wake&) = delete;
    Wake& operator=(const Wake&) = delete;

    bool done() const { return done_(); }
    // Sleep until one of `signals` or of this Wake's events.
    void sleep(sc_core::sc_event_or_list& signals) const {
        for (sc_core::sc_event* e : events_) signals |= *e;
        sc_core::wait(signals);
    }
    // The calling thread's, or null.
    static const Wake* current() {
        const auto it = of_threads().find(thread());
        return it == of_threads().end() ? nullptr : it->second;
    }

private:
    static const sc_core::sc_object* thread() { return sc_core::sc_get_current_process_handle().get_process_object(); }
    static std::map<const sc_core::sc_object*, const Wake*>& of_threads() {
        static thread_local std::map<const sc_core::sc_object*, const Wake*> m;
        return m;
    }
    std::function<bool()> done_;
    std::vector<sc_core::sc_event*> events_;
    const sc_core::sc_object* thread_;
    const Wake* previous_ = nullptr;
};

}   // namespace vrdmasim
