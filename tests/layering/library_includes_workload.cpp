// Layering probe, the wrong way: the RDMA library (a layer below the
// workloads) includes a workload. Must not compile (tests/layering/CMakeLists.txt).
#include "library/rdma/process.hpp"
#include "workloads/workload.hpp"
