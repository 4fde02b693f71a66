// MPI_Waitany, MPI_Testany and MPI_Testall over a list of requests of every
// kind the library makes: point-to-point, non-blocking collectives' and
// request-based one-sided operations' (workloads/mpi README "Non-blocking
// collectives", "One-sided"), in simulated time: the mpi workload's
// (MpiWorkload::any_or_all) and the trace workload's replay of them (a
// trace vrdmasim recorded), one rule for both and for every kind.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "library/collectives/communicator.hpp"
#include "library/messaging/endpoint.hpp"
#include "library/rdma/process.hpp"

namespace vrdmasim {

class MpiOneSided;

// One listed request, of one kind; each kind has its test of whether it is
// complete and its wake-up (waitany.cpp):
//   Message: the endpoint's `message`; complete as the endpoint's progress
//     finds it (only this rank's thread completes it); woken by the
//     endpoint's notifications (Endpoint::wait_any).
//   Collective: a non-blocking collective's (`comm`, `collective`); complete
//     once its rounds end (its own thread's, or progress in this call);
//     woken by its end (Communicator::Pending::ended).
//   Rma: request-based one-sided operation `rma` of rank `rank` of the
//     library's windows (`windows`); complete once every record of its
//     pieces in flight is written by now (MpiOneSided::request_done, the
//     engine writes them); woken by each record of the rank's channels
//     (RdmaProcess::wait_event).
struct WaitanyRequest {
    enum class Kind { Message, Collective, Rma } kind = Kind::Message;
    msg::Endpoint::Request message = 0;
    coll::Communicator* comm = nullptr;
    coll::Communicator::Request collective;
    MpiOneSided* windows = nullptr;
    unsigned rank = 0;
    std::uint64_t rma = 0;
};

// MPI_Waitany: the index of the first listed request complete, once one
// is: of several complete at one simulated time, the first listed (as MPI
// implementations scan the array), looked at again once that time has
// nothing else to do (InstantEnd::settle) when a request listed is of a
// kind another thread or the engine completes (Collective, Rma). None is
// ended (its MPI_Wait follows).
std::size_t waitany(RdmaProcess& app, msg::Endpoint& ep, const std::vector<WaitanyRequest>& list);
// MPI_Testany: the index of the first listed request complete by now, each
// tested in turn (messages only: one progress of the endpoint), or
// list.size(). MPI_Testall: whether every one is, each tested. None ended.
std::size_t testany(RdmaProcess& app, msg::Endpoint& ep, const std::vector<WaitanyRequest>& list);
bool testall(RdmaProcess& app, msg::Endpoint& ep, const std::vector<WaitanyRequest>& list);

}   // namespace vrdmasim
