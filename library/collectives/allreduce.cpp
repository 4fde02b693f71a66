// Allreduce (README.md): recursive doubling, ring, and Rabenseifner's
// reduce-scatter by recursive halving then allgather by recursive
// doubling; for a number of ranks that is not a power of two, MPICH's fold.
#include <algorithm>
#include <stdexcept>

#include "library/collectives/communicator.hpp"

namespace vrdmasim::coll {

namespace {
unsigned floor_pof2(unsigned n) {
    unsigned p = 1;
    while (p * 2 <= n) p *= 2;
    return p;
}
}   // namespace

void Communicator::allreduce(std::uint64_t sbuf, std::uint64_t rbuf, std::uint64_t count, Algorithm a,
                             const Reduction& red) {
    check(red);
    next_tag();
    copy(rbuf, sbuf, count * red.element_bytes());
    if (size() == 1) return;
    switch (a) {
    case Algorithm::Ring: allreduce_ring(rbuf, count, red); break;
    case Algorithm::Rabenseifner: allreduce_rabenseifner(rbuf, count, red); break;
    default: allreduce_doubling(rbuf, count, red); break;
    }
}

unsigned Communicator::real_rank(unsigned new_rank, unsigned pof2) const {
    const unsigned rem = size() - pof2;
    return new_rank < rem ? new_rank * 2 + 1 : new_rank + rem;
}

// The first 2 * rem ranks: each even one hands its vector to the odd one
// after it, which sums them; the even ones sit out until unfold().
int Communicator::fold(std::uint64_t acc, std::uint64_t count, unsigned pof2, const Reduction& red, std::uint64_t tmp) {
    const std::uint64_t e = red.element_bytes();
    const unsigned rem = size() - pof2;
    if (rank_ >= 2 * rem) return static_cast<int>(rank_ - rem);
    if (rank_ % 2 == 0) {
        send(rank_ + 1, acc, count * e);
        return -1;
    }
    if (!tmp) tmp = scratch(count * e);
    recv(rank_ - 1, tmp, count * e);
    combine(acc, tmp, count, red);
    return static_cast<int>(rank_ / 2);
}

void Communicator::unfold(std::uint64_t acc, std::uint64_t count, unsigned pof2, const Reduction& red) {
    const std::uint64_t e = red.element_bytes();
    const unsigned rem = size() - pof2;
    if (rank_ >= 2 * rem) return;
    if (rank_ % 2) send(rank_ - 1, acc, count * e);
    else recv(rank_ + 1, acc, count * e);
}

// Recursive doubling: log2 n exchanges of the whole vector, each rank
// summing what its partner had.
void Communicator::allreduce_doubling(std::uint64_t acc, std::uint64_t count, const Reduction& red) {
    const std::uint64_t e = red.element_bytes();
    const unsigned pof2 = floor_pof2(size());
    const int nr = fold(acc, count, pof2, red);
    if (nr >= 0) {
        const std::uint64_t tmp = scratch(count * e);
        for (unsigned mask = 1; mask < pof2; mask <<= 1) {
            const int dst = static_cast<int>(real_rank(static_cast<unsigned>(nr) ^ mask, pof2));
            exchange(dst, acc, count * e, dst, tmp, count * e);
            combine(acc, tmp, count, red);
        }
    }
    unfold(acc, count, pof2, red);
}

// Ring (Patarasuk and Yuan 2009): n - 1 steps of reduce-scatter around the
// ring, each rank summing the chunk it receives, then n - 1 steps passing
// the summed chunks on.
void Communicator::allreduce_ring(std::uint64_t acc, std::uint64_t count, const Reduction& red) {
    const std::uint64_t e = red.element_bytes();
    const unsigned n = size();
    std::vector<std::uint64_t> cnt(n), disp(n);
    for (unsigned i = 0, at = 0; i < n; ++i) {
        cnt[i] = count / n + (i < count % n ? 1 : 0);
        disp[i] = at;
        at += static_cast<unsigned>(cnt[i]);
    }
    const std::uint64_t tmp = scratch(cnt[0] * e);
    const int right = static_cast<int>((rank_ + 1) % n), left = static_cast<int>((rank_ + n - 1) % n);
    for (unsigned s = 0; s + 1 < n; ++s) {
        const unsigned out = (rank_ + n - s) % n, in = (rank_ + 2 * n - s - 1) % n;
        exchange(right, acc + disp[out] * e, cnt[out] * e, left, tmp, cnt[in] * e);
        combine(acc + disp[in] * e, tmp, cnt[in], red);
    }
    for (unsigned s = 0; s + 1 < n; ++s) {
        const unsigned out = (rank_ + 1 + n - s) % n, in = (rank_ + n - s) % n;
        exchange(right, acc + disp[out] * e, cnt[out] * e, left, acc + disp[in] * e, cnt[in] * e);
    }
}

// Rabenseifner (2004; MPICH's MPIR_Allreduce_intra_reduce_scatter_allgather):
// a reduce-scatter by recursive halving (each exchange halves the part a
// rank sums) and an allgather by recursive doubling (each doubles the part
// it holds), log2 n steps each, about 2 (n - 1) / n of the vector sent.
void Communicator::allreduce_rabenseifner(std::uint64_t acc, std::uint64_t count, const Reduction& red) {
    const std::uint64_t e = red.element_bytes();
    const unsigned pof2 = floor_pof2(size());
    const int nr = fold(acc, count, pof2, red);
    if (nr >= 0) {
        const unsigned me = static_cast<unsigned>(nr);
        std::vector<std::uint64_t> cnt(pof2), disp(pof2);
        for (unsigned i = 0, at = 0; i < pof2; ++i) {
            cnt[i] = count / pof2 + (i < count % pof2 ? 1 : 0);
            disp[i] = at;
            at += static_cast<unsigned>(cnt[i]);
        }
        auto sum = [&](unsigned from, unsigned to) {
            std::uint64_t c = 0;
            for (unsigned i = from; i < to; ++i) c += cnt[i];
            return c;
        };
        const std::uint64_t tmp = scratch(count * e);
        unsigned send_idx = 0, recv_idx = 0, last_idx = pof2, mask = 1;
        for (; mask < pof2; mask <<= 1) {
            const unsigned partner = me ^ mask;
            const int dst = static_cast<int>(real_rank(partner, pof2));
            std::uint64_t scnt, rcnt;
            if (me < partner) {
                send_idx = recv_idx + pof2 / (mask * 2);
                scnt = sum(send_idx, last_idx);
                rcnt = sum(recv_idx, send_idx);
            } else {
                recv_idx = send_idx + pof2 / (mask * 2);
                scnt = sum(send_idx, recv_idx);
                rcnt = sum(recv_idx, last_idx);
            }
            exchange(dst, acc + disp[send_idx] * e, scnt * e, dst, tmp + disp[recv_idx] * e, rcnt * e);
            combine(acc + disp[recv_idx] * e, tmp + disp[recv_idx] * e, rcnt, red);
            send_idx = recv_idx;
            if (mask * 2 < pof2) last_idx = recv_idx + pof2 / (mask * 2);
        }
        for (mask >>= 1; mask > 0; mask >>= 1) {
            const unsigned partner = me ^ mask;
            const int dst = static_cast<int>(real_rank(partner, pof2));
            std::uint64_t scnt, rcnt;
            if (me < partner) {
                if (mask != pof2 / 2) last_idx += pof2 / (mask * 2);
                recv_idx = send_idx + pof2 / (mask * 2);
                scnt = sum(send_idx, recv_idx);
                rcnt = sum(recv_idx, last_idx);
            } else {
                recv_idx = send_idx - pof2 / (mask * 2);
                scnt = sum(send_idx, last_idx);
                rcnt = sum(recv_idx, send_idx);
            }
            exchange(dst, acc + disp[send_idx] * e, scnt * e, dst, acc + disp[recv_idx] * e, rcnt * e);
            if (me > partner) send_idx = recv_idx;
        }
    }
    unfold(acc, count, pof2, red);
}

}   // namespace vrdmasim::coll
