// A list read from its front and written behind it (a vector and the index
// of its first entry still held): what was read must not stay. Drops the
// read prefix [0, first) when it is all of the list, or once it is most of
// it (and at least kConsumedDropAt entries: an erase moves what is held, so
// not at every read; at most one entry moved a read on average). A list
// that never empties (a busy link's credits on their way, a saturated
// router input's held space, a busy link's queue) would otherwise keep
// every entry it ever had: on the 1,296-MPSoC halo, 28 MiB in one round,
// growing with the run. The vector keeps the space of the most it held,
// so the threshold is also what each busy list keeps beyond what it holds:
// 8, not 64 (2026-11-29: the 1,296-MPSoC halo of docs/clusters.md peaked at
// 326 MiB where it took 350 at 64, and 330 at 16; 0.3 % more
// instructions, the erases more frequent).
#pragma once

#include <cstddef>
#include <vector>

namespace vrdmasim {

// Read entries a list drops at once, at the least.
inline constexpr std::size_t kConsumedDropAt = 8;

// (The erase out of line: the usual case, nothing to drop or all of it, is
// a compare or two inline on every packet's path.)
template <class Vector>
[[gnu::noinline]] void drop_consumed_erase(Vector& v, std::size_t& first) {
    v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(first));
    first = 0;
}

template <class Vector>
inline void drop_consumed(Vector& v, std::size_t& first) {
    if (first == v.size()) {
        v.clear();
        first = 0;
    } else if (first >= kConsumedDropAt && 2 * first >= v.size()) {
        drop_consumed_erase(v, first);
    }
}

}   // namespace vrdmasim
