// Layering probe, the wrong way: a workload (a model layer) includes the
// simulator's System. Must not compile (tests/layering/CMakeLists.txt).
#include "library/rdma/process.hpp"
#include "src/sim/system.hpp"
