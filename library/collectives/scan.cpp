// Scan and exscan (README.md): MPICH's recursive doubling
// (MPIR_Scan_intra_recursive_doubling, MPIR_Exscan_intra_recursive_doubling)
// for a commutative sum, on any number of ranks: in step k each rank swaps
// its partial sum (of the 2^k ranks of its block so far) with rank XOR 2^k;
// the partner's counts toward its result if the partner is a lower rank.
#include "library/collectives/communicator.hpp"

namespace vrdmasim::coll {

void Communicator::scan(std::uint64_t sbuf, std::uint64_t rbuf, std::uint64_t count, bool exclusive, Algorithm,
                        const Reduction& red) {
    check(red);
    next_tag();
    const std::uint64_t bytes = count * red.element_bytes();
    const std::uint64_t partial = scratch(2 * bytes), in = partial + bytes;
    copy(partial, sbuf, bytes);
    if (!exclusive) copy(rbuf, sbuf, bytes);
    bool have = !exclusive;   // exscan: rbuf holds nothing until a lower rank's sum comes
    for (unsigned mask = 1; mask < size(); mask <<= 1) {
        const unsigned partner = rank_ ^ mask;
        if (partner >= size()) continue;
        exchange(static_cast<int>(partner), partial, bytes, static_cast<int>(partner), in, bytes);
        combine(partial, in, count, red);
        if (partner > rank_) continue;
        if (have) {
            combine(rbuf, in, count, red);
        } else {
            copy(rbuf, in, bytes);
            have = true;
        }
    }
}

}   // namespace vrdmasim::coll
