// LazyEvent: an sc_event made on its first use.
//
// An sc_event made during elaboration is entered in the kernel's object
// tables with a generated name (about 300 bytes in all); a large torus has
// thousands of events per node that only a node with traffic ever notifies
// or waits for (each DMA channel's four interrupt lines, each SMMU context
// bank's RESUME). A LazyEvent is two pointers until someone notifies it or
// waits for it: `get()` makes it then. Made during the simulation, an event
// is not entered in the tables; its parent is the module under construction
// when the LazyEvent was (`owner`), so that it is never left pointing at a
// process that ended or a module destroyed before it.
//
// A notification is never lost: notify() makes the event, and a process
// that waits must get() it first. Whoever owns it must outlive its waiters,
// as with an sc_event member.
#pragma once

#include <memory>

#include <systemc>

namespace vrdmasim {

// Makes the objects and events created in its scope children of `owner`:
// a part made lazily, during the simulation, is made under the module that
// was under construction when its holder was (never under the process that
// happens to run then, which may end first). Nothing to do when `owner` is
// null or already the current module.
class UnderModule {
public:
    explicit UnderModule(sc_core::sc_module* owner);
    ~UnderModule();
    UnderModule(const UnderModule&) = delete;
    UnderModule& operator=(const UnderModule&) = delete;

private:
    sc_core::sc_simcontext* sim_;
    bool pushed_;
};

class LazyEvent {
public:
    LazyEvent();
    LazyEvent(const LazyEvent&) = delete;
    LazyEvent& operator=(const LazyEvent&) = delete;

    sc_core::sc_event& get() { return ev_ ? *ev_ : make(); }
    void notify(const sc_core::sc_time& t) { get().notify(t); }
    // Whether the event exists yet (it was used).
    bool made() const { return ev_ != nullptr; }

private:
    sc_core::sc_event& make();

    sc_core::sc_module* owner_;
    std::unique_ptr<sc_core::sc_event> ev_;
    // With event identities on (event_identity.hpp): how many LazyEvents
    // its owner had before this one, at elaboration.
    std::uint32_t ordinal_ = 0;
};

}   // namespace vrdmasim
