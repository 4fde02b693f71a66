// Reduce-scatter (README.md): MPI_Reduce_scatter and
// MPI_Reduce_scatter_block (every block the same length) by MPICH's two
// algorithms for a commutative operation: recursive halving
// (MPIR_Reduce_scatter_intra_recursive_halving, with the fold of a number
// of ranks that is not a power of two) and pairwise exchange
// (MPIR_Reduce_scatter_intra_pairwise).
#include <stdexcept>

#include "library/collectives/communicator.hpp"

namespace vrdmasim::coll {

void Communicator::reduce_scatter(std::uint64_t sbuf, std::uint64_t rbuf, const std::vector<std::uint64_t>& counts,
                                  Algorithm a, const Reduction& red) {
    check(red);
    next_tag();
    const unsigned n = size();
    if (counts.size() != n)
        throw std::logic_error("coll::Communicator: reduce_scatter with " + std::to_string(counts.size()) +
                               " counts for " + std::to_string(n) + " ranks");
    std::vector<std::uint64_t> displs(n, 0);
    for (unsigned r = 1; r < n; ++r) displs[r] = displs[r - 1] + counts[r - 1];
    if (a == Algorithm::Pairwise) reduce_scatter_pairwise(sbuf, rbuf, counts, displs, red);
    else reduce_scatter_halving(sbuf, rbuf, counts, displs, red);
}

// Pairwise: its own block of its vector into the result, then in step i
// rank + i's block to it and rank - i's sum of this rank's block from
// there, summed in.
void Communicator::reduce_scatter_pairwise(std::uint64_t sbuf, std::uint64_t rbuf,
                                           const std::vector<std::uint64_t>& counts,
                                           const std::vector<std::uint64_t>& displs, const Reduction& red) {
    const std::uint64_t e = red.element_bytes();
    const unsigned n = size();
    const std::uint64_t mine = counts[rank_];
    copy(rbuf, sbuf + displs[rank_] * e, mine * e);
    const std::uint64_t tmp = scratch(mine * e);
    for (unsigned i = 1; i < n; ++i) {
        const unsigned to = (rank_ + i) % n, from = (rank_ + n - i) % n;
        exchange(static_cast<int>(to), sbuf + displs[to] * e, counts[to] * e, static_cast<int>(from), tmp, mine * e);
        combine(rbuf, tmp, mine, red);
    }
}

// Recursive halving: the whole vector copied; the fold (an even rank of the
// first 2 rem hands its vector to the odd one after it); then log2 pof2
// steps, each sending the half of the blocks still held that the partner
// keeps and summing the half it keeps; each rank's block to it; the fold
// undone (an odd rank hands the even one its block).
void Communicator::reduce_scatter_halving(std::uint64_t sbuf, std::uint64_t rbuf,
                                          const std::vector<std::uint64_t>& counts,
                                          const std::vector<std::uint64_t>& displs, const Reduction& red) {
    const std::uint64_t e = red.element_bytes();
    const unsigned n = size();
    unsigned pof2 = 1;
    while (pof2 * 2 <= n) pof2 *= 2;
    const unsigned rem = n - pof2;
    const std::uint64_t total = displs[n - 1] + counts[n - 1];
    const std::uint64_t acc = scratch(2 * total * e), in = acc + total * e;
    copy(acc, sbuf, total * e);
    const int nr = fold(acc, total, pof2, red, in);   // (the odd ones sum into `acc` what lands in `in`)
    if (nr >= 0) {
        // New rank i holds the blocks of the old ranks it stands for.
        std::vector<std::uint64_t> cnt(pof2), disp(pof2, 0);
        for (unsigned i = 0; i < pof2; ++i) {
            const unsigned old = real_rank(i, pof2);
            cnt[i] = counts[old] + (old < 2 * rem ? counts[old - 1] : 0);
            if (i) disp[i] = disp[i - 1] + cnt[i - 1];
        }
        unsigned send_idx = 0, recv_idx = 0, last_idx = pof2;
        for (unsigned mask = pof2 >> 1; mask > 0; mask >>= 1) {
            const unsigned partner = static_cast<unsigned>(nr) ^ mask;
            const int dst = static_cast<int>(real_rank(partner, pof2));
            if (static_cast<unsigned>(nr) < partner) send_idx = recv_idx + mask;
            else recv_idx = send_idx + mask;
            const unsigned s_end = send_idx < recv_idx ? recv_idx : last_idx;
            const unsigned r_end = recv_idx < send_idx ? send_idx : last_idx;
            std::uint64_t send_cnt = 0, recv_cnt = 0;
            for (unsigned i = send_idx; i < s_end; ++i) send_cnt += cnt[i];
            for (unsigned i = recv_idx; i < r_end; ++i) recv_cnt += cnt[i];
            // MPICH sends and receives only what is not empty.
            exchange(send_cnt ? dst : -1, acc + disp[send_idx] * e, send_cnt * e, recv_cnt ? dst : -1,
                     in + disp[recv_idx] * e, recv_cnt * e);
            combine(acc + disp[recv_idx] * e, in + disp[recv_idx] * e, recv_cnt, red);
            send_idx = recv_idx;
            last_idx = recv_idx + mask;
        }
        copy(rbuf, acc + displs[rank_] * e, counts[rank_] * e);
    }
    if (rank_ < 2 * rem) {   // (an empty block not sent, as MPICH)
        if (rank_ % 2) {
            if (counts[rank_ - 1]) send(rank_ - 1, acc + displs[rank_ - 1] * e, counts[rank_ - 1] * e);
        } else if (counts[rank_]) {
            recv(rank_ + 1, rbuf, counts[rank_] * e);
        }
    }
}

}   // namespace vrdmasim::coll
