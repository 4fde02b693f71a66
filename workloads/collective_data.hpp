// The data of a collective and what it must leave at each rank (the
// collective and trace workloads check every byte against it): rank r's
// bytes for rank `to` in call `call` are a known function of (r, to, call,
// offset); a reduction's result is the 64-bit sums of every rank's elements.
#pragma once

#include <cstdint>
#include <vector>

#include "library/collectives/communicator.hpp"
#include "library/rdma/process.hpp"

namespace vrdmasim {

struct CollectiveData {
    coll::Op op;
    unsigned ranks = 0, root = 0;
    std::uint64_t bytes = 0;   // per rank (alltoall, allgather: per block)

    // The 64-bit element `index` of `from`'s data for `to` in call `call`.
    static std::uint64_t element(unsigned from, unsigned to, std::uint64_t call, std::uint64_t index);
    // `len` bytes of that data.
    static std::vector<unsigned char> bytes_of(unsigned from, unsigned to, std::uint64_t call, std::uint64_t len);
    // The send buffer's size and contents of `rank` for call `call` (bcast:
    // the root's receive buffer holds it).
    std::uint64_t send_bytes() const;
    std::vector<unsigned char> send(unsigned rank, std::uint64_t call) const;
    // The receive buffer's size, and what `rank` must hold after call `call`.
    std::uint64_t receive_bytes() const;
    std::uint64_t result_bytes(unsigned rank) const;
    std::vector<unsigned char> expected(unsigned rank, std::uint64_t call) const;

    // Write `rank`'s data for call `call` as the application would (into
    // `sbuf`; bcast's root into `rbuf`); true if `rbuf` is the result's
    // to fill (the caller poisons it), false for bcast's root.
    bool prepare(RdmaProcess& app, std::uint64_t sbuf, std::uint64_t rbuf, unsigned rank, std::uint64_t call) const;
    // The collective itself on `comm` with algorithm `a`.
    void run(coll::Communicator& comm, coll::Algorithm a, std::uint64_t sbuf, std::uint64_t rbuf) const;
};

}   // namespace vrdmasim
