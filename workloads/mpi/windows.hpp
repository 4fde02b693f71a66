// The program's one-sided windows as the simulation knows them
// (workloads/mpi/README.md "One-sided"): each window belongs to a
// communicator, and each member gave its memory (base, size, disp_unit,
// at the program's own addresses) when it created it; the library's lock
// word for it lives in each member's memory. A window is made by the k-th
// creation call on its communicator (MPI_Win_create and MPI_Win_allocate
// are collective, so every member's k-th is the same window) and known by
// an id from then on. No SystemC here: the workload does the timing.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace vrdmasim {

class MpiWindows {
public:
    // One member's part of a window.
    struct Memory {
        std::uint64_t base = 0, size = 0, disp_unit = 1;
        std::uint64_t lock = 0;   // the library's lock word for the window, in the member's memory
    };
    struct Window {
        std::uint32_t ctx = 0;   // its communicator's context
        std::vector<unsigned> members;   // world ranks, in the order of their ranks in ctx
        std::vector<Memory> memory;   // by rank in ctx
        std::vector<bool> joined;   // by rank in ctx: it created the window (and has not freed it)
    };

    // World rank `rank`, rank `me` of context `ctx` whose members are
    // `members`, creates its next window on ctx with `memory`: the
    // window's id.
    std::uint64_t create(unsigned rank, std::uint32_t ctx, const std::vector<unsigned>& members, unsigned me,
                         const Memory& memory);
    // Window `id` as member `rank` names it; std::runtime_error naming
    // `rank` if there is no such window or `rank` is not in it.
    const Window& at(unsigned rank, std::uint64_t id) const;
    // The world rank of rank `target` of window `id` as `rank` names it.
    unsigned world_of(unsigned rank, std::uint64_t id, std::int32_t target) const;
    // The address `len` bytes of an access of `rank` start at in the
    // memory of rank `target` of window `id` (its base + disp x its
    // disp_unit + offset); std::runtime_error naming the call `what` if
    // they are not inside that member's window.
    std::uint64_t address(unsigned rank, std::uint64_t id, std::int32_t target, std::uint64_t disp,
                          std::uint64_t offset, std::uint64_t len, const char* what) const;
    // `rank` frees window `id` (forgotten once every member has).
    void free(unsigned rank, std::uint64_t id);

private:
    std::map<std::uint64_t, Window> windows_;
    // The k-th creation on a context -> its window; and each rank's count of creations per context.
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::uint64_t> made_;
    std::map<std::pair<unsigned, std::uint32_t>, std::uint64_t> next_;
    std::uint64_t next_id_ = 1;
};

}   // namespace vrdmasim
