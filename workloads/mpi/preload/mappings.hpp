// The program's own mappings (mmap(2), munmap(2) and mremap(2) called by
// its code, outside malloc) as residency.cpp watches them
// (workloads/mpi/README.md "The program's memory"): where they lie, and
// what it unmapped since the last look.
#pragma once

#include <vector>

#include "workloads/mpi/preload/heap.hpp"

namespace vrdmasim {
namespace mpipreload {

// The program's anonymous mappings (the pages it touches are its own; a
// file's pages may be resident in the page cache untouched, so file
// mappings are placed and their unmapping reported, but not watched).
// False if more were mapped at once than the list holds (65,536).
bool program_mappings(std::vector<Range>& out);
// The ranges of any of its mappings unmapped since the last call of this
// (page aligned); false if more were than the list holds (65,536).
bool take_unmapped(std::vector<Range>& out);

}   // namespace mpipreload
}   // namespace vrdmasim
