// Pins (mm/gup.c, pin_user_pages with FOLL_LONGTERM): per-page pin counts of
// a process, kept on its mapped pages and on the orphans (pinned pages no
// longer mapped); pinned pages are never reclaimed, migrated or freed.
#pragma once

#include <cstdint>

#include "models/os/mm.hpp"

namespace vrdmasim {
namespace mm {

// Bytes pinned by p (each pin of a 4 KiB page counts a page).
std::uint64_t pinned(const Process& p);
// The same, counted page by page from the pins themselves (the self-check
// of the running count).
std::uint64_t pinned_recount(const Process& p);
// Whether some page of [va, va+len) is pinned where it is mapped.
bool any_pin(const Process& p, std::uint64_t va, std::uint64_t len);

}   // namespace mm
}   // namespace vrdmasim
