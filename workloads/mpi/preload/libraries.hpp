// Which loaded object a caller is in: Open MPI's own libraries (and this
// one) or the program's. The clocks answer host time to the first and
// simulated time to the second, and the heap serves the second's
// allocations (clock.cpp, heap.cpp). By the file's name, not its folder:
// a program may be installed under a folder named openmpi too (Debian's
// NetPIPE is /usr/bin/NPopenmpi). No allocation here (the heap asks).
#pragma once

#include <cstring>
#include <initializer_list>

namespace vrdmasim {
namespace mpipreload {

inline bool mpi_library(const char* path) {
    const char* slash = std::strrchr(path, '/');
    const char* name = slash ? slash + 1 : path;
    for (const char* lib : {"libmpi", "libopen-pal", "libopen-rte", "libpmix", "libevent", "libhwloc", "libucp",
                            "libucs", "libuct", "libfabric", "libpsm", "mca_", "libvrdmasim_mpi", "ld-linux"})
        if (std::strncmp(name, lib, std::strlen(lib)) == 0) return true;
    return false;
}

// Open MPI's Fortran bindings (mpif.h, the mpi and mpi_f08 modules): they
// call the C functions' PMPI_ names, past this library's MPI_ wrappers, so
// those calls are taken back to the wrappers (the generated interposers).
inline bool fortran_bindings(const char* path) {
    const char* slash = std::strrchr(path, '/');
    const char* name = slash ? slash + 1 : path;
    return std::strncmp(name, "libmpi_mpifh", 12) == 0 || std::strncmp(name, "libmpi_usempi", 13) == 0;
}

// Whether the code at `caller` (a return address) is in such a library;
// answers cached in a table of their own, without allocating (heap.cpp).
bool mpi_caller(void* caller);
// Whether a PMPI_ call from `caller` is the program's: from its own code
// (a C program may call PMPI_ names itself) or from Open MPI's Fortran
// bindings (which call the C functions' PMPI_ names, some as tail calls
// whose return address is then the program's); not from Open MPI's C
// library or this one (whose calls of PMPI_ names are never tail calls:
// -fno-optimize-sibling-calls). Cached the same way.
bool wrapped_caller(void* caller);
// Whether the code at `caller` is the program's own, on its main thread and
// outside this library's MPI functions: its allocations and mappings are
// placed by heap.cpp and mappings.cpp.
bool program_call(void* caller);
// Inside one of this library's MPI functions (on the program's thread):
// what is allocated there is the library's, never the program's (heap.cpp).
struct InLibrary {
    static int depth;
    InLibrary() { ++depth; }
    ~InLibrary() { --depth; }
    InLibrary(const InLibrary&) = delete;
    InLibrary& operator=(const InLibrary&) = delete;
};

}   // namespace mpipreload
}   // namespace vrdmasim
