// The program's heap (heap.cpp) as residency.cpp watches it: where the
// program's allocations lie, and the large blocks it freed, whose mappings
// the heap unmapped (workloads/mpi/README.md "The program's memory").
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace vrdmasim {
namespace mpipreload {

struct Range {
    std::uintptr_t at = 0;
    std::size_t len = 0;
};
// The small blocks' heap, from its base to its break.
Range heap_in_use();
// Each large block's mapping (page aligned), into `out`; false if more
// were mapped at once than the heap could list (65,536).
bool large_blocks(std::vector<Range>& out);
// The large blocks' mappings unmapped since the last call of this, into
// `out`; false if more were freed than the heap could list (65,536).
bool take_freed(std::vector<Range>& out);

}   // namespace mpipreload
}   // namespace vrdmasim
