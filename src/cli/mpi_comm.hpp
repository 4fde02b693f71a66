// MpiComm: the ranks of a partitioned run over Open MPI (docs/scaling.md):
// `mpirun -np N vrdmasim run CONFIG` makes each process one rank of one
// simulation. MPI is initialised only then (a process of one rank never
// loads the MPI runtime's state), and finalised when the object goes.
#pragma once

#include "src/sim/parallel/comm.hpp"

namespace vrdmasim {

class MpiComm : public Comm {
public:
    MpiComm();   // MPI_Init; std::runtime_error if it fails
    ~MpiComm() override;   // MPI_Finalize
    MpiComm(const MpiComm&) = delete;
    MpiComm& operator=(const MpiComm&) = delete;

    unsigned size() const override { return size_; }
    unsigned rank() const override { return rank_; }
    std::vector<Bytes> exchange(const std::vector<Bytes>& out) override;
    std::vector<Bytes> allgather(const Bytes& mine) override;
    std::uint64_t min(std::uint64_t v) override;
    // Every rank's `ok`, and-ed.
    bool all(bool ok);
    // Ends every rank's process with `status` (a rank that failed alone:
    // the others would wait for it forever).
    [[noreturn]] void abort(int status);

private:
    unsigned size_ = 1, rank_ = 0;
};

}   // namespace vrdmasim
