// A list read from its front and written behind it (a vector and the index
// of its first entry still held): what was read must not stay. Drops the
// read prefix [0, first) when it is all of the list, or once it is most of
// it (and at least 64 entries: an erase moves what is held, so not at every
// read). A list that never empties (a busy link's credits on their way, a
// saturated router input's held space) would otherwise keep every entry it
// ever had: on the 1,296-MPSoC halo, 28 MiB in one round, growing with the
// run.
#pragma once

#include <cstddef>

namespace vrdmasim {

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
    } else if (first >= 64 && 2 * first >= v.size()) {
        drop_consumed_erase(v, first);
    }
}

}   // namespace vrdmasim
