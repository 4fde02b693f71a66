#include "core/lazy_event.hpp"

namespace vrdmasim {

sc_core::sc_event& LazyEvent::make() {
    sc_core::sc_simcontext* sim = sc_core::sc_get_curr_simcontext();
    if (owner_ && sim->hierarchy_curr() != owner_) {
        sim->hierarchy_push(owner_);
        ev_ = std::make_unique<sc_core::sc_event>();
        sim->hierarchy_pop();
    } else {
        ev_ = std::make_unique<sc_core::sc_event>();
    }
    return *ev_;
}

}  // namespace vrdmasim
