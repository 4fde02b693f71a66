// A program's own buffers in a rank's simulated process, at the program's
// own virtual addresses (workloads/mpi/README.md "The buffers"): the mpi
// workload maps them as the program's calls name them, and the trace
// workload does the same with the addresses a trace recorded by vrdmasim
// carries (workloads/README.md "Trace replay"), so that a replay touches
// the pages the program touched, in the same order.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "library/rdma/process.hpp"

namespace vrdmasim {

struct CollectiveData;

class ProgramBuffers {
public:
    // The pages of [va, va + len) the process has not mapped yet, mapped
    // there (not populated: the engine's first access faults);
    // std::runtime_error naming `who` if they cannot be.
    void map(RdmaProcess& app, std::uint64_t va, std::uint64_t len, const std::string& who);
    // The program's CPU touched the pages of [va, va + len) first (page
    // aligned; workloads/mpi/README.md "The program's memory"): those
    // mapped are made present now (untimed: the program's compute holds
    // its time), the others once a call maps them.
    void touch(RdmaProcess& app, std::uint64_t va, std::uint64_t len);
    // The program unmapped [va, va + len) (page aligned): what of it is
    // mapped is unmapped (timed as the kernel's munmap: the MMU notifiers
    // drop registrations and pin-down cache entries there), its touches
    // forgotten; a later call maps it afresh.
    void unmap(RdmaProcess& app, std::uint64_t va, std::uint64_t len);
    // The library's own buffer (an in-place collective's input, a
    // non-root's reduce result, a split's exchange) of at least `len`
    // bytes: one buffer, allocated again larger when a call needs more.
    std::uint64_t scratch(RdmaProcess& app, std::uint64_t len, bool populate, BufferAdvice advice);
    // Whether the simulated memory at `va` holds `want` (zeros: on pages
    // that hold data; a page never written reads as zeros too).
    static bool holds(RdmaProcess& app, std::uint64_t va, const std::vector<unsigned char>& want);
    // A buffer of the library's own that stays the call's until it ends (a
    // non-contiguous datatype's packed data, a non-blocking collective's
    // in-place input or input another in flight reads too): {address,
    // size}, of at least `len` bytes, from a pool of sizes a power of two
    // pages or more, allocated when none of its size is free; give_back()
    // frees it for a later call.
    using Pooled = std::pair<std::uint64_t, std::uint64_t>;
    Pooled pooled(RdmaProcess& app, std::uint64_t len, bool populate, BufferAdvice advice);
    void give_back(const Pooled& b) {
        if (b.second) pool_[b.second].push_back(b.first);
    }
    // A collective's send and receive buffers from the program's (`va`,
    // `va2`: 0 for none; a bcast has one), mapped; the library's own
    // stands in where MPI gives none (MPI_IN_PLACE, a non-root's reduce
    // result) or a reduction's two buffers overlap: scratch(), or, for a
    // non-blocking call (`own` not null), a pooled() buffer put in `own`.
    std::pair<std::uint64_t, std::uint64_t> collective(RdmaProcess& app, const CollectiveData& d, std::uint64_t va,
                                                       std::uint64_t va2, bool populate, BufferAdvice advice,
                                                       const std::string& who, Pooled* own = nullptr);
    // The library's own buffer where a collective's mapped program
    // buffers `sbuf`, `rbuf` cannot serve (the one rule of the mpi and the
    // trace workloads): an in-place alltoall's or alltoallv's send blocks
    // (`sbytes`, read from it first: a block received must not overwrite
    // one still to be sent), MPI_IN_PLACE's input of a reduction or its
    // two buffers overlapping (the input), a non-root's reduce result (rbuf
    // 0). scratch(), or for a non-blocking call (`own` not null) a pooled()
    // buffer put in `own`.
    void own_buffer(RdmaProcess& app, const CollectiveData& d, std::uint64_t sbytes, std::uint64_t& sbuf,
                    std::uint64_t& rbuf, bool populate, BufferAdvice advice, Pooled* own);

private:
    using Ranges = std::map<std::uint64_t, std::uint64_t>;   // page ranges, start -> end
    static void add(Ranges& r, std::uint64_t s, std::uint64_t e);
    static void remove(Ranges& r, std::uint64_t s, std::uint64_t e);
    // The parts of [s, e) in `r`, in order.
    static std::vector<std::pair<std::uint64_t, std::uint64_t>> overlap(const Ranges& r, std::uint64_t s,
                                                                        std::uint64_t e);
    static void populate(RdmaProcess& app, std::uint64_t s, std::uint64_t e);
    Ranges mapped_;   // mapped so far
    Ranges touched_;   // touched by the program, not mapped yet
    std::uint64_t scratch_ = 0, scratch_len_ = 0;
    std::map<std::uint64_t, std::vector<std::uint64_t>> pool_;   // free pooled() buffers, by size
};

}   // namespace vrdmasim
