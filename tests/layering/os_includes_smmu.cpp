// Layering probe, the right way: the OS (above the SMMU) includes the SMMU.
// Must compile (tests/layering/CMakeLists.txt).
#include "models/os/smmu_driver.hpp"
#include "models/smmu/smmu500.hpp"
