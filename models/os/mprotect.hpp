// The leaf walk of mprotect (mm/mprotect.c, change_protection), shared by
// mprotect and the user-access guard (buffer_guard.cpp): every leaf with a
// frame in a range rewritten by a caller's descriptor function.
#pragma once

#include <cstdint>
#include <functional>

#include "models/os/mm.hpp"

namespace vrdmasim {
namespace mm {

// The new descriptor of the leaf d (a 4 KiB page or a 2 MiB block with a
// frame: present or PROT_NONE) mapping va.
using LeafRewrite = std::function<std::uint64_t(std::uint64_t d, std::uint64_t va)>;

// Every leaf with a frame in [va, end) of p given rewrite(d, va); a 2 MiB
// block only partly in the range is split first. Each leaf changed costs
// `pte-update`; with `track`, its presence after the change is told to
// reclaim's LRU and the map notifier (res_set), as mprotect's is.
void rewrite_leaves(Mm& m, Process& p, std::uint64_t va, std::uint64_t end, Work& w, const LeafRewrite& rewrite,
                    bool track);

}   // namespace mm
}   // namespace vrdmasim
