// LazyEvent (src/core/lazy_event.hpp): no sc_event until first used; then
// an ordinary event, owned by the module it was declared in. Each TEST_CASE
// is its own elaboration (ctest runs each in its own process).
#include <catch2/catch.hpp>

#include <memory>
#include <vector>

#include <systemc>

#include "src/core/lazy_event.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

// `owner` declares the LazyEvent; a waiter in another module waits for it,
// a notifier notifies it at 5 ns (and again at 9 ns).
struct Owner : sc_module {
    LazyEvent ev;
    explicit Owner(sc_module_name n) : sc_module(n) {}
};

struct User : sc_module {
    Owner& owner;
    bool waits, notifies;
    std::vector<sc_time> woken;
    User(sc_module_name n, Owner& o, bool wait_for_it, bool notify_it)
        : sc_module(n), owner(o), waits(wait_for_it), notifies(notify_it) {
        SC_HAS_PROCESS(User);
        if (waits) SC_THREAD(waiter);
        if (notifies) SC_THREAD(notifier);
    }
    void waiter() {
        for (;;) {
            wait(owner.ev.get());
            woken.push_back(sc_time_stamp());
        }
    }
    void notifier() {
        wait(5, SC_NS);
        owner.ev.notify(SC_ZERO_TIME);
        wait(4, SC_NS);
        owner.ev.notify(SC_ZERO_TIME);
    }
};

}   // namespace

TEST_CASE("lazy event: nothing made until used, and made in simulation its parent is its owner", "[lazy_event]") {
    auto owner = std::make_unique<Owner>("owner");
    auto user = std::make_unique<User>("user", *owner, true, true);
    CHECK_FALSE(owner->ev.made());
    CHECK(owner->get_child_events().empty());
    sc_start();
    REQUIRE(owner->ev.made());
    // Made by the waiter's first wait (at initialization), not by a module
    // of its own or a process: the owner is its parent, and it is not in
    // the kernel's tables (no name).
    CHECK(owner->ev.get().get_parent_object() == owner.get());
    CHECK_FALSE(owner->ev.get().in_hierarchy());
    CHECK(user->woken == std::vector<sc_time>{sc_time(5, SC_NS), sc_time(9, SC_NS)});
    // The user (and its processes) go first: the event is never left
    // pointing at them.
    user.reset();
    owner.reset();
}

TEST_CASE("lazy event: notified with nobody waiting, then waited for, as an sc_event", "[lazy_event]") {
    auto owner = std::make_unique<Owner>("owner");
    auto user = std::make_unique<User>("user", *owner, false, true);
    sc_start(6, SC_NS);
    CHECK(owner->ev.made());   // the notification made it
    sc_start();
    CHECK(user->woken.empty());
}

TEST_CASE("lazy event: never used, never made", "[lazy_event]") {
    Owner owner("owner");
    sc_start(1, SC_US);
    CHECK_FALSE(owner.ev.made());
}
