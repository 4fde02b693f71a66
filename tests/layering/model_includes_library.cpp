// Layering probe, the wrong way: the kernel model (below the user-level
// libraries) includes the RDMA library. Must not compile (tests/layering/CMakeLists.txt).
#include "models/os/vm.hpp"
#include "library/rdma/process.hpp"
