// The physical-address experiment's verdict ("why pinning exists",
// README.md): what a run in physical-address mode found, printed loudly at
// its end. Wrong data and foreign writes are the experiment's result there,
// not a simulator failure: the run exits 0 and says what it found (or that
// it found nothing).
#pragma once

#include <cstdint>
#include <ostream>

#include "src/core/context.hpp"

namespace vrdmasim {

class System;

struct PhysicalFindings {
    std::uint64_t wrong_transfers = 0;   // transfers reported ok whose bytes differ (every job)
    std::uint64_t wrong_bytes = 0;   // their differing bytes
    std::uint64_t foreign_writes = 0;   // engine writes into frames of other owners
    std::uint64_t foreign_bytes_other_process = 0, foreign_bytes_own_other_page = 0, foreign_bytes_kernel = 0,
                  foreign_bytes_free = 0;
    std::uint64_t stale_reads = 0, stale_read_bytes = 0;
    bool corruption() const { return wrong_transfers + foreign_writes + stale_reads > 0; }
};

PhysicalFindings physical_findings(System& sys, const StatRegistry& stats);
// The verdict, several lines, to `os` (stderr).
void print_physical_verdict(std::ostream& os, const Config& cfg, const PhysicalFindings& f);

}   // namespace vrdmasim
