// The parameters of section [collective]: the collectives library
// (README.md) and the collective workload. Read through
// params_of<CollParams>().
#pragma once

#include "src/core/context.hpp"

namespace vrdmasim {

struct CollParams {
    CollParams();
    ParamSet set;
    EnumParam op;
    EnumParam transport;
    EnumParam allreduce_algorithm;
    EnumParam allgather_algorithm;
    EnumParam alltoall_algorithm;
    EnumParam reduce_scatter_algorithm;
    IntParam root;
    RateParam reduce_rate;
    EnumParam reduce_op;
    EnumParam datatype;
    EnumParam call;
    TimeParam overlap_compute;
    IntParam outstanding;
    EnumParam progress;
    static void declare_params(ParamRegistry& reg);
};

}   // namespace vrdmasim
