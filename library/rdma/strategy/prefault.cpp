// prefault: MADV_POPULATE_WRITE the buffer before each transfer (present,
// not pinned: reclaim or migration may still take a page the engine then
// faults on).
#include "library/rdma/strategy/strategy.hpp"

namespace vrdmasim {

using sc_core::sc_time;

namespace {

class Prefault final : public RegistrationStrategy {
public:
    explicit Prefault(const StrategyEnv& env) : env_(env) {}
    RegResult acquire(std::uint64_t va, std::uint64_t len, bool, sc_time at) override {
        const std::uint64_t s = page_down(va), e = page_up(va + len);
        return env_.stats.count(env_.vm.madvise(env_.pid, s, e - s, Advice::PopulateWrite, at), false);
    }
    RegResult release(std::uint64_t, std::uint64_t, sc_time at) override { return RegResult{true, VmError::Ok, at}; }

private:
    StrategyEnv env_;
};

const StrategyKind::Declare declared([] {
    StrategyKind k;
    k.name = "prefault";
    k.order = 40;
    k.help = "prefault: MADV_POPULATE_WRITE (present, not pinned)";
    k.create = [](const StrategyEnv& env) { return std::make_unique<Prefault>(env); };
    k.makes_present = true;
    return k;
}());

}   // namespace
}   // namespace vrdmasim
