// The parameters of section [msg]: the two-sided library (send/receive on
// top of RDMA writes; see workloads/README.md). Read through
// params_of<MsgParams>().
#pragma once

#include "core/context.hpp"

namespace vrdmasim {

struct MsgParams {
    MsgParams();
    ParamSet set;
    SizeParam eager_threshold;
    EnumParam rendezvous;
    IntParam eager_slots;
    TimeParam match_cost;
    static void declare_params(ParamRegistry& reg);
    // Whether rendezvous = `mode` is built in this simulator ("write"
    // always; "read" needs App::post_read). Config checks refuse the others.
    static bool rendezvous_built(const std::string& mode);
    // ConfigError (naming the key) for a value that is not built.
    static void check(const Config& c);
};

}  // namespace vrdmasim
