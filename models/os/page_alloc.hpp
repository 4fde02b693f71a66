// The Vm's side of frame allocation (mm/page_alloc.c): user pages with the
// page-table reserve and direct reclaim on failure, the low-watermark
// wake-up of kswapd, frames given back and huge frames split.
#pragma once

#include <cstdint>
#include <optional>

#include "models/os/mm.hpp"

namespace vrdmasim {
namespace mm {

// Order-0 frame for a fault; on failure, direct reclaim (charged to the
// call: its CPU to w.cpu, notifier and SSD waits to w.io) and one retry.
std::optional<std::uint64_t> alloc_page(Mm& m, Work& w);
// Wake kswapd (the low-memory callback) when free memory is below the low watermark.
void low_check(Mm& m);
void free_frame(Mm& m, std::uint64_t pa, unsigned order);
// An order-9 frame split into 512 allocated order-0 frames.
void split_frame(Mm& m, std::uint64_t pa);

}   // namespace mm
}   // namespace vrdmasim
