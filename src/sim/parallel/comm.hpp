// Comm: what the ranks of a partitioned run say to each other, whatever
// carries it (docs/scaling.md "Keeping time"). The window loop
// (windows.hpp) needs only these collective calls; src/mpi/ carries them
// over MPI, and SelfComm is the one-rank case (every message to itself),
// which runs the same loop in one process.
#pragma once

#include <cstdint>
#include <vector>

#include "src/core/bytes.hpp"

namespace vrdmasim {

class Comm {
public:
    virtual ~Comm() = default;
    virtual unsigned size() const = 0;
    virtual unsigned rank() const = 0;
    // Collective: out[r] goes to rank r (out.size() == size()); returns
    // what every rank sent this one, by rank.
    virtual std::vector<Bytes> exchange(const std::vector<Bytes>& out) = 0;
    // Collective: every rank's bytes, by rank, on every rank.
    virtual std::vector<Bytes> allgather(const Bytes& mine) = 0;
    // Collective: the smallest of every rank's `v`.
    virtual std::uint64_t min(std::uint64_t v) = 0;
};

// One rank: what it sends, it receives.
class SelfComm : public Comm {
public:
    unsigned size() const override { return 1; }
    unsigned rank() const override { return 0; }
    std::vector<Bytes> exchange(const std::vector<Bytes>& out) override { return out; }
    std::vector<Bytes> allgather(const Bytes& mine) override { return {mine}; }
    std::uint64_t min(std::uint64_t v) override { return v; }
};

}   // namespace vrdmasim
