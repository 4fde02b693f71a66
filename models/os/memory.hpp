// The fault path and the zapping of ranges (mm/memory.c): handle_mm_fault
// (access-flag faults, demand zero, swap-in; THP faults through
// huge_memory.hpp), the wait for a collapse or a migration in progress, and
// clearing a range's leaves for munmap and MADV_DONTNEED.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "models/os/mm.hpp"

namespace vrdmasim {
namespace mm {

struct Call;

// Make the page at va present (or mark it accessed); adds the work.
// `next` is set to the end of the leaf now mapping va.
VmError fault_page(Mm& m, Process& p, std::uint64_t va, bool write, Work& w, std::uint64_t& next);
// fault_page over [va, end), stopping at the first error.
VmError fault_range(Mm& m, Process& p, std::uint64_t va, std::uint64_t end, bool write, Work& w);

// A call on [va, end) of p finds the range collapsing: it waits for the
// collapse (khugepaged holds mmap_lock for writing), which is completed
// now; the call's work starts at the install time. True if it waited.
// A migration entry in the range: the caller waits until the migration
// has finished (__migration_entry_wait), completed now the same way.
bool settle(Mm& m, Process& p, std::uint64_t va, std::uint64_t end, Work& w);

// Clear every leaf in [va, end) (splitting blocks at the edges), adding
// the frames to free to `to_free` (pinned pages become orphans instead).
void drop_range(Mm& m, Process& p, std::uint64_t va, std::uint64_t end, Work& w,
                std::vector<std::pair<std::uint64_t, unsigned>>& to_free);
// The end of munmap and MADV_DONTNEED on c's range: the leaves cleared, the
// call returned, the notifiers called, then the frames freed (only after the
// invalidation, so that no cached translation reaches a reused frame).
VmResult unmap_and_free(Mm& m, Call& c);

}   // namespace mm
}   // namespace vrdmasim
