// The parameters of section [msg]: the two-sided library (send/receive on
// top of RDMA writes; see README.md). Read through
// params_of<MsgParams>().
#pragma once

#include "src/core/context.hpp"

namespace vrdmasim {

struct MsgParams {
    MsgParams();
    ParamSet set;
    SizeParam eager_threshold;
    EnumParam rendezvous;
    IntParam eager_slots;
    TimeParam match_cost;
    static void declare_params(ParamRegistry& reg);
};

}   // namespace vrdmasim
