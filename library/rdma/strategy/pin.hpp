// A pin per call: pin_user_pages when the library registers a range, unpin
// when the engine is done with it (pin; pipeline, whose library registers
// each chunk of a transfer so).
#pragma once

#include "library/rdma/strategy/strategy.hpp"

namespace vrdmasim {

class PinPerCall final : public RegistrationStrategy {
public:
    explicit PinPerCall(const StrategyEnv& env) : env_(env) {}
    RegResult acquire(std::uint64_t va, std::uint64_t len, bool write, sc_core::sc_time at) override;
    RegResult release(std::uint64_t va, std::uint64_t len, sc_core::sc_time at) override;

private:
    StrategyEnv env_;
};

}   // namespace vrdmasim
