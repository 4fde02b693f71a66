// Each collective call of the protocol (protocol.hpp) and the library's
// operation that carries it out (library/collectives): the one mapping of
// the mpi workload, which runs them, and its recorder, which writes what
// the library's operation says of them (a root, a reduction, blocks).
#pragma once

#include "library/collectives/communicator.hpp"
#include "workloads/mpi/protocol.hpp"

namespace vrdmasim {
namespace mpiwire {

// The library's operation of collective call `op` (a non-blocking one's:
// its blocking form's); false if `op` is not a collective
// (is_collective()).
inline bool collective_of(Op op, coll::Op& out) {
    static const std::pair<Op, coll::Op> kCollectives[] = {{Op::Barrier, coll::Op::Barrier},
                                                           {Op::Bcast, coll::Op::Bcast},
                                                           {Op::Reduce, coll::Op::Reduce},
                                                           {Op::Gather, coll::Op::Gather},
                                                           {Op::Scatter, coll::Op::Scatter},
                                                           {Op::Allreduce, coll::Op::Allreduce},
                                                           {Op::Allgather, coll::Op::Allgather},
                                                           {Op::Alltoall, coll::Op::Alltoall},
                                                           {Op::Scan, coll::Op::Scan},
                                                           {Op::ReduceScatter, coll::Op::ReduceScatter},
                                                           {Op::ReduceScatterBlock, coll::Op::ReduceScatterBlock},
                                                           {Op::Exscan, coll::Op::Exscan},
                                                           {Op::Gatherv, coll::Op::Gatherv},
                                                           {Op::Scatterv, coll::Op::Scatterv},
                                                           {Op::Allgatherv, coll::Op::Allgatherv},
                                                           {Op::Alltoallv, coll::Op::Alltoallv}};
    for (const auto& [call, op_of_library] : kCollectives)
        if (call == blocking_of(op)) {
            out = op_of_library;
            return true;
        }
    return false;
}

}   // namespace mpiwire
}   // namespace vrdmasim
