#include "src/core/lazy_event.hpp"

namespace vrdmasim {

UnderModule::UnderModule(sc_core::sc_module* owner)
    : sim_(sc_core::sc_get_curr_simcontext()), pushed_(owner && sim_->hierarchy_curr() != owner) {
    if (pushed_) sim_->hierarchy_push(owner);
}

UnderModule::~UnderModule() {
    if (pushed_) sim_->hierarchy_pop();
}

sc_core::sc_event& LazyEvent::make() {
    const UnderModule under(owner_);
    ev_ = std::make_unique<sc_core::sc_event>();
    return *ev_;
}

}   // namespace vrdmasim
