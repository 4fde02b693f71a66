// Layering probe, the wrong way: the engine includes the SMMU model, which
// it does not link (it sees only the extensions of models/common). Must not
// compile (tests/layering/CMakeLists.txt).
#include "models/dma/pldma.hpp"
#include "models/smmu/smmu500.hpp"
