// MPI_Waitany over a list of point-to-point and non-blocking collective
// requests, in simulated time (workloads/mpi README "Non-blocking
// collectives"): the mpi workload's (MpiWorkload::wait_any) and the trace
// workload's replay of it (a trace vrdmasim recorded), one rule for both.
#pragma once

#include <cstddef>
#include <vector>

#include "library/collectives/communicator.hpp"
#include "library/messaging/endpoint.hpp"
#include "library/rdma/process.hpp"

namespace vrdmasim {

// One listed request: a point-to-point one (`comm` null: the endpoint's
// `message`) or a non-blocking collective's (`comm`, `collective`).
struct WaitanyRequest {
    msg::Endpoint::Request message = 0;
    coll::Communicator* comm = nullptr;
    coll::Communicator::Request collective;
};

// The index of the first listed request complete, once one is: of several
// complete at one simulated time, the first listed (as MPI implementations
// scan the array), looked at again once that time has nothing else to do
// (InstantEnd::settle). None is ended (its MPI_Wait follows).
std::size_t waitany(RdmaProcess& app, msg::Endpoint& ep, const std::vector<WaitanyRequest>& list);

}   // namespace vrdmasim
