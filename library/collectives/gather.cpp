// Gather, scatter, allgather and alltoall (README.md): binomial trees; ring and
// recursive doubling; pairwise exchange and Bruck's.
#include <algorithm>
#include <stdexcept>

#include "library/collectives/communicator.hpp"

namespace vrdmasim::coll {

void Communicator::allgather(std::uint64_t sbuf, std::uint64_t rbuf, std::uint64_t bytes, Algorithm a) {
    next_tag();
    const unsigned n = size();
    copy(rbuf + rank_ * bytes, sbuf, bytes);
    if (a == Algorithm::RecursiveDoubling) {
        // Each step swaps the aligned group of blocks this rank holds with
        // its partner's (a power-of-two number of ranks: resolve()).
        for (unsigned mask = 1; mask < n; mask <<= 1) {
            const unsigned partner = rank_ ^ mask;
            const unsigned mine = rank_ / mask * mask, theirs = partner / mask * mask;
            exchange(static_cast<int>(partner), rbuf + mine * bytes, mask * bytes, static_cast<int>(partner),
                     rbuf + theirs * bytes, mask * bytes);
        }
        return;
    }
    // Ring: n - 1 steps, each passing on the block received the step before.
    const int right = static_cast<int>((rank_ + 1) % n), left = static_cast<int>((rank_ + n - 1) % n);
    for (unsigned s = 0; s + 1 < n; ++s) {
        const unsigned out = (rank_ + n - s) % n, in = (rank_ + 2 * n - s - 1) % n;
        exchange(right, rbuf + out * bytes, bytes, left, rbuf + in * bytes, bytes);
    }
}

void Communicator::gather(std::uint64_t sbuf, std::uint64_t rbuf, std::uint64_t bytes, unsigned root, Algorithm) {
    next_tag();
    const unsigned n = size(), vr = (rank_ + n - root) % n;   // the rank relative to the root
    // MPICH's binomial gather: each rank holds the blocks of its subtree,
    // relative ranks vr to vr + held - 1, in order; at step `mask` a rank
    // with that bit sends them to vr - mask and is done, the others take
    // their child's. Root 0 gathers straight into `rbuf`.
    const std::uint64_t held_at = rank_ == root && root == 0 ? rbuf : scratch(n * bytes);
    copy(held_at, sbuf, bytes);
    std::uint64_t held = 1;
    for (unsigned mask = 1; mask < n; mask <<= 1) {
        if (vr & mask) {
            send((vr - mask + root) % n, held_at, held * bytes);
            return;
        }
        if (vr + mask < n) {
            const std::uint64_t theirs = std::min<std::uint64_t>(mask, n - vr - mask);
            recv((vr + mask + root) % n, held_at + held * bytes, theirs * bytes);
            held += theirs;
        }
    }
    // The root: relative rank k is rank (k + root) % n.
    if (held_at != rbuf)
        for (unsigned k = 0; k < n; ++k) copy(rbuf + ((k + root) % n) * bytes, held_at + k * bytes, bytes);
}

void Communicator::scatter(std::uint64_t sbuf, std::uint64_t rbuf, std::uint64_t bytes, unsigned root, Algorithm) {
    next_tag();
    const unsigned n = size(), vr = (rank_ + n - root) % n;
    // MPICH's binomial scatter: the root holds every block, in the order of
    // the ranks relative to it; every other rank receives its subtree's
    // from its parent (at the lowest bit of its relative rank), then sends
    // each child's subtree on, the farthest first, and keeps its own.
    std::uint64_t held_at = rank_ == root && root == 0 ? sbuf : scratch(n * bytes);
    if (rank_ == root && root != 0)
        for (unsigned k = 0; k < n; ++k) copy(held_at + k * bytes, sbuf + ((k + root) % n) * bytes, bytes);
    unsigned mask = 1;
    for (; mask < n; mask <<= 1)
        if (vr & mask) {
            recv((vr - mask + root) % n, held_at, std::min<std::uint64_t>(mask, n - vr) * bytes);
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n)
            send((vr + mask + root) % n, held_at + mask * bytes, std::min<std::uint64_t>(mask, n - vr - mask) * bytes);
    // MPI_IN_PLACE: the root's block is where it is already (MPICH copies
    // it only for a receive buffer of its own).
    if (!(rank_ == root && rbuf == sbuf + root * bytes)) copy(rbuf, held_at, bytes);
}

void Communicator::alltoall(std::uint64_t sbuf, std::uint64_t rbuf, std::uint64_t bytes, Algorithm a) {
    next_tag();
    const unsigned n = size();
    if (a != Algorithm::Bruck) {
        // Pairwise: in step i send to rank + i what is theirs, receive from
        // rank - i what is ours.
        copy(rbuf + rank_ * bytes, sbuf + rank_ * bytes, bytes);
        for (unsigned i = 1; i < n; ++i) {
            const unsigned to = (rank_ + i) % n, from = (rank_ + n - i) % n;
            exchange(static_cast<int>(to), sbuf + to * bytes, bytes, static_cast<int>(from), rbuf + from * bytes,
                     bytes);
        }
        return;
    }
    // Bruck et al. (1997): rotate the blocks so that block i is for rank +
    // i; in round k send every block whose index has bit k to rank + 2^k
    // (packed into one message) and take those of rank - 2^k in their
    // place; after ceil(log2 n) rounds block i came from rank - i: rotate
    // back.
    const std::uint64_t tmp = scratch(2 * n * bytes), pack = tmp + n * bytes;
    for (unsigned i = 0; i < n; ++i) copy(tmp + i * bytes, sbuf + ((rank_ + i) % n) * bytes, bytes);
    for (unsigned k = 1; k < n; k <<= 1) {
        std::uint64_t packed = 0;
        for (unsigned i = 0; i < n; ++i)
            if (i & k) copy(pack + packed++ * bytes, tmp + i * bytes, bytes);
        // The partner's blocks arrive beside the packed ones (at most n / 2
        // blocks each way) and are unpacked into the places just sent.
        const std::uint64_t in = pack + packed * bytes;
        exchange(static_cast<int>((rank_ + k) % n), pack, packed * bytes, static_cast<int>((rank_ + n - k) % n), in,
                 packed * bytes);
        std::uint64_t j = 0;
        for (unsigned i = 0; i < n; ++i)
            if (i & k) copy(tmp + i * bytes, in + j++ * bytes, bytes);
    }
    for (unsigned i = 0; i < n; ++i) copy(rbuf + ((rank_ + n - i) % n) * bytes, tmp + i * bytes, bytes);
}

}   // namespace vrdmasim::coll
