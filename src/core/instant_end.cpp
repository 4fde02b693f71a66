#define SC_INCLUDE_DYNAMIC_PROCESSES   // sc_spawn
#include "src/core/instant_end.hpp"

#include <stdexcept>

namespace vrdmasim {

InstantEnd& InstantEnd::get() {
    // One per simulation context (a test program may make several).
    static sc_core::sc_simcontext* of = nullptr;
    static InstantEnd* one = nullptr;
    if (!one || of != sc_core::sc_get_curr_simcontext()) {
        of = sc_core::sc_get_curr_simcontext();
        one = new InstantEnd();   // lives as long as its simulation's processes
    }
    return *one;
}

InstantEnd::InstantEnd()
    : ev_(sc_core::sc_gen_unique_name("instant_end")), settler_(sc_core::sc_gen_unique_name("instant_settled")) {
    sc_core::sc_spawn_options opts;
    opts.spawn_method();
    opts.dont_initialize();
    opts.set_sensitivity(&ev_);
    sc_core::sc_spawn([this] { run(); }, sc_core::sc_gen_unique_name("instant_end"), &opts);
}

void InstantEnd::request(Client& c, Priority p) {
    if (p >= Clients) throw std::logic_error("InstantEnd::request: no such priority");
    if (clients_[p] && clients_[p] != &c) throw std::logic_error("InstantEnd::request: two clients of one priority");
    clients_[p] = &c;
    if (!c.asked_) {
        c.asked_ = true;
        ++asked_;
    }
    arm();
}

void InstantEnd::settle() {
    request(settler_, Settled);
    sc_core::wait(settler_.settled);
}

void InstantEnd::arm() {
    if (armed_) return;
    armed_ = true;
    ev_.notify(sc_core::SC_ZERO_TIME);
}

void InstantEnd::run() {
    armed_ = false;
    if (!asked_) return;
    // Another process runnable now, a delta notification or an update to
    // come: not the end yet.
    if (sc_core::sc_pending_activity_at_current_time()) {
        ++waits_;
        arm();
        return;
    }
    for (Client* c : clients_) {
        if (!c || !c->asked_) continue;
        c->asked_ = false;
        --asked_;
        ++calls_;
        c->at_instant_end();
        break;
    }
    if (asked_) arm();
}

}   // namespace vrdmasim
