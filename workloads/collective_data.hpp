// The data of a collective and what it must leave at each rank (the
// collective and trace workloads check every byte against it): rank r's
// bytes for rank `to` in call `call` are a known function of (r, to, call,
// offset); a reduction's result is its operation (`red`) over every rank's
// elements, which reduction_data() chooses so that any order of combining
// gives the same result exactly.
// A v-variant's blocks are each rank's own (`sends`, `receives`: the
// collective workload's uneven_blocks(), an MPI program's counts).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "library/collectives/communicator.hpp"
#include "library/rdma/process.hpp"

namespace vrdmasim {

struct CollectiveData {
    coll::Op op;
    unsigned ranks = 0, root = 0;
    std::uint64_t bytes = 0;   // per rank (alltoall, allgather: per block)
    // A v-variant's blocks, as this rank sees them (bytes): what it sends
    // to each rank and where in its send buffer (gatherv: to the root;
    // allgatherv: the same block to every rank), what it receives from
    // each and where in its receive buffer.
    coll::Blocks sends, receives;
    // A reduction's operation and element type (counts are `bytes` over
    // its element's size).
    coll::Reduction red;

    // The collective workload's uneven blocks (some empty): the length of
    // rank `from`'s block for rank `to` (allgatherv: to = from), from
    // `bytes`; and this data's blocks as `rank` sees them, each buffer's
    // blocks laid out in reverse rank order (displacements that are not
    // the counts' prefix sums).
    static std::uint64_t uneven(std::uint64_t bytes, unsigned from, unsigned to);
    CollectiveData for_rank(unsigned rank) const;
    // The bytes the choice of algorithm goes by (coll::resolve): a rank's
    // contribution, or for reduce-scatter its whole vector.
    std::uint64_t algorithm_bytes() const;

    // The 64-bit element `index` of `from`'s data for `to` in call `call`.
    static std::uint64_t element(unsigned from, unsigned to, std::uint64_t call, std::uint64_t index);
    // `len` bytes of that data.
    static std::vector<unsigned char> bytes_of(unsigned from, unsigned to, std::uint64_t call, std::uint64_t len);
    // `len` bytes from byte `offset` (whole elements) of rank `from`'s
    // contribution to a reduction of `red` in call `call`: uint64,
    // bytes_of(from, from, ...)'s; another integer type,
    // the low bytes of element() with one element in eight zero (so that
    // the logical operations meet both truth values); float and double,
    // +-0.5, 1 or 2 (any order of sums and products is exact: up to 126
    // ranks for float's product); a pair type, such a value and an index
    // below 16, its padding zero.
    static std::vector<unsigned char> reduction_data(const coll::Reduction& red, unsigned from, std::uint64_t call,
                                                     std::uint64_t offset, std::uint64_t len);
    // The send buffer's size and contents of `rank` for call `call` (bcast:
    // the root's receive buffer holds it).
    std::uint64_t send_bytes() const;
    std::vector<unsigned char> send(unsigned rank, std::uint64_t call) const;
    // The receive buffer's size, and what `rank` must hold after call `call`.
    std::uint64_t receive_bytes() const;
    std::uint64_t result_bytes(unsigned rank) const;
    // The sum over every rank of what its result holds (result_bytes of
    // for_rank(r) at rank r): a function of the call alone, in time linear
    // in the ranks (a v-variant's blocks summed by formula, not built rank
    // by rank).
    std::uint64_t total_result_bytes() const;
    // The (offset, length) parts of the receive buffer that hold `rank`'s
    // result (a v-variant's blocks, in rank order), what they must hold (in
    // that order), and what they hold at `rbuf` (false: unreadable).
    std::vector<std::pair<std::uint64_t, std::uint64_t>> result_parts(unsigned rank) const;
    std::vector<unsigned char> expected(unsigned rank, std::uint64_t call) const;
    bool result(RdmaProcess& app, std::uint64_t rbuf, unsigned rank, std::vector<unsigned char>& got) const;

    // Whether `rank`'s receive buffer is the result's to fill (the caller
    // poisons it before prepare(): an in-place send buffer lies in it),
    // false for bcast's root.
    bool fills(unsigned rank) const { return !(op == coll::Op::Bcast && rank == root); }
    // Write `rank`'s data for call `call` as the application would (into
    // `sbuf`; bcast's root into `rbuf`); fills(rank).
    bool prepare(RdmaProcess& app, std::uint64_t sbuf, std::uint64_t rbuf, unsigned rank, std::uint64_t call) const;
    // The collective itself on `comm` with algorithm `a`.
    void run(coll::Communicator& comm, coll::Algorithm a, std::uint64_t sbuf, std::uint64_t rbuf) const;
};

}   // namespace vrdmasim
