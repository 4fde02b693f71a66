// pin: pin_user_pages before each transfer, unpin after it.
#include "library/rdma/strategy/pin.hpp"

namespace vrdmasim {

using sc_core::sc_time;

RegResult PinPerCall::acquire(std::uint64_t va, std::uint64_t len, bool, sc_time at) {
    return env_.stats.count(env_.vm.pin(env_.pid, va, len, at), true);
}

RegResult PinPerCall::release(std::uint64_t va, std::uint64_t len, sc_time at) {
    const VmResult u = env_.vm.unpin(env_.pid, va, len, at);
    RegResult r{true, VmError::Ok, u.done};
    if (!u.ok()) {
        r.ok = false;
        r.error = u.error;
    } else {
        env_.stats.deregistrations.inc();
    }
    return r;
}

namespace {

const StrategyKind::Declare declared([] {
    StrategyKind k;
    k.name = "pin";
    k.order = 20;
    k.help = "pin: pin_user_pages before each transfer, unpin after";
    k.create = [](const StrategyEnv& env) { return std::make_unique<PinPerCall>(env); };
    k.makes_present = true;
    k.pins_per_post = true;
    return k;
}());

}   // namespace
}   // namespace vrdmasim
