// Layering probe, the wrong way: the SMMU (below the OS) includes the OS's
// VM. Must not compile (tests/layering/CMakeLists.txt).
#include "models/smmu/smmu500.hpp"
#include "models/os/vm.hpp"
