// The trace and log of a partitioned run (docs/trace.md "Order and
// numbering", docs/scaling.md): every rank records what its models do, and
// at the end each hands its records to rank 0 through the Comm, in chunks,
// so that no rank holds more than a chunk of another's at once; rank 0 adds
// them to its own (spilled to disk past the tracer's budget) and writes the
// files as one process would (Tracer::close).
#pragma once

#include <cstddef>

#include "src/core/trace.hpp"
#include "src/sim/parallel/comm.hpp"

namespace vrdmasim {

// Collective. On rank 0 `tracer` then holds every rank's records (its
// close() writes them); on the others nothing (close() writes nothing).
void gather_trace(Tracer& tracer, Comm& comm, std::size_t chunk_bytes = std::size_t(4) << 20);

}   // namespace vrdmasim
