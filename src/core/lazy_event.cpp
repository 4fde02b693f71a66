#include "src/core/lazy_event.hpp"

#include <cstring>
#include <unordered_map>

#include "src/core/event_identity.hpp"

namespace vrdmasim {

UnderModule::UnderModule(sc_core::sc_module* owner)
    : sim_(sc_core::sc_get_curr_simcontext()), pushed_(owner && sim_->hierarchy_curr() != owner) {
    if (pushed_) sim_->hierarchy_push(owner);
}

UnderModule::~UnderModule() {
    if (pushed_) sim_->hierarchy_pop();
}

namespace {
// LazyEvents per owner so far (event identities on): the count an owner's
// next one gets. Owners are modules, which live as long as the system.
std::unordered_map<const sc_core::sc_module*, std::uint32_t>& per_owner() {
    static auto* m = new std::unordered_map<const sc_core::sc_module*, std::uint32_t>();
    return *m;
}
std::uint64_t fnv1a(const char* s, std::uint64_t h) {
    for (; *s; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 0x100000001b3ull;
    return h;
}
}   // namespace

LazyEvent::LazyEvent() : owner_(sc_core::sc_get_curr_simcontext()->hierarchy_curr()) {
    if (event_identity::enabled()) ordinal_ = per_owner()[owner_]++;
}

sc_core::sc_event& LazyEvent::make() {
    const UnderModule under(owner_);
    if (event_identity::enabled()) {
        std::uint64_t id = fnv1a(owner_ ? owner_->name() : "", 0xcbf29ce484222325ull);
        id = (id ^ (ordinal_ + 1)) * 0x100000001b3ull;
        event_identity::set_next(id | 1);
    }
    ev_ = std::make_unique<sc_core::sc_event>();
    event_identity::set_next(0);
    return *ev_;
}

}   // namespace vrdmasim
