// The v-variants (README.md): gatherv and scatterv by the linear algorithm
// (MPICH's MPIR_Gatherv_allcomm_linear and MPIR_Scatterv_allcomm_linear,
// Open MPI's ompi_coll_base_gatherv_intra_basic_linear and
// ompi_coll_base_scatterv_intra_basic_linear: their only ones), allgatherv
// around the ring (MPICH's MPIR_Allgatherv_intra_ring), alltoallv pairwise
// (Open MPI's ompi_coll_base_alltoallv_intra_pairwise). Every block goes
// straight between the caller's buffers: no scratch.
#include <algorithm>
#include <stdexcept>

#include "library/collectives/communicator.hpp"

namespace vrdmasim::coll {

std::uint64_t Blocks::span() const {
    std::uint64_t end = 0;
    for (std::size_t r = 0; r < counts.size(); ++r)
        if (counts[r]) end = std::max(end, displs.at(r) + counts[r]);
    return end;
}

namespace {
void check_blocks(const Blocks& b, unsigned n, const char* what) {
    if (b.counts.size() != n || b.displs.size() != n)
        throw std::logic_error(std::string("coll::Communicator: ") + what + ": " + std::to_string(b.counts.size()) +
                               " counts and " + std::to_string(b.displs.size()) + " displacements for " +
                               std::to_string(n) + " ranks");
}
}   // namespace

void Communicator::post_all(const std::vector<Part>& parts, bool receive) {
    if (os_) {
        for (const Part& p : parts) receive ? recv(p.rank, p.buf, p.len) : send(p.rank, p.buf, p.len);
        return;
    }
    const std::uint64_t tag = current_tag();
    std::vector<msg::Endpoint::Request> rs;
    for (const Part& p : parts) {
        const unsigned node = nodes_.at(p.rank);
        if (receive) {
            rs.push_back(ep_->irecv(node, tag, p.buf, p.len));
        } else {
            ++messages_;
            sent_bytes_ += p.len;
            rs.push_back(ep_->isend(node, tag, p.buf, p.len));
        }
    }
    for (std::size_t i = 0; i < parts.size(); ++i) {
        const msg::Status st = ep_->wait(rs[i]);
        if (receive) check_received(static_cast<int>(parts[i].rank), st, parts[i].len);
    }
    round_ended();
}

// Linear: the root posts a receive (gatherv) or a send (scatterv) of every
// other rank's non-empty block of `blocks` in `buf` and waits for them
// all, and copies its own block from or to `own` (`own_bytes`); the others
// send or receive theirs, if not empty.
void Communicator::linear(bool gather, std::uint64_t buf, const Blocks& blocks, std::uint64_t own,
                          std::uint64_t own_bytes, unsigned root) {
    next_tag();
    const unsigned n = size();
    const char* what = gather ? "gatherv" : "scatterv";
    if (rank_ != root) {
        if (own_bytes)
            exchange(gather ? static_cast<int>(root) : -1, own, own_bytes, gather ? -1 : static_cast<int>(root), own,
                     own_bytes);
        return;
    }
    check_blocks(blocks, n, gather ? "gatherv's blocks" : "scatterv's blocks");
    if (blocks.counts[rank_] != own_bytes)
        throw std::logic_error(std::string("coll::Communicator: ") + what +
                               ": the root's own block differs in length from its blocks' own");
    std::vector<Part> parts;
    for (unsigned r = 0; r < n; ++r)
        if (r != rank_ && blocks.counts[r]) parts.push_back({r, buf + blocks.displs[r], blocks.counts[r]});
    post_all(parts, gather);
    if (gather) copy(buf + blocks.displs[rank_], own, own_bytes);
    else copy(own, buf + blocks.displs[rank_], own_bytes);
}

void Communicator::gatherv(std::uint64_t sbuf, std::uint64_t sbytes, std::uint64_t rbuf, const Blocks& recv,
                           unsigned root, Algorithm) {
    linear(true, rbuf, recv, sbuf, sbytes, root);
}

void Communicator::scatterv(std::uint64_t sbuf, const Blocks& send, std::uint64_t rbuf, std::uint64_t rbytes,
                            unsigned root, Algorithm) {
    linear(false, sbuf, send, rbuf, rbytes, root);
}

// The ring: the rank's own block into its place, then n - 1 steps, each
// passing to the right the block received from the left the step before
// (MPICH cuts a step's block into pieces of MPIR_CVAR_ALLGATHERV_PIPELINE_MSG_SIZE
// it posts together; here a block is one message).
void Communicator::allgatherv(std::uint64_t sbuf, std::uint64_t sbytes, std::uint64_t rbuf, const Blocks& recv,
                              Algorithm) {
    next_tag();
    const unsigned n = size();
    check_blocks(recv, n, "allgatherv's blocks");
    if (recv.counts[rank_] != sbytes)
        throw std::logic_error("coll::Communicator: allgatherv: a rank's own block differs from what it sends");
    copy(rbuf + recv.displs[rank_], sbuf, sbytes);
    const int right = static_cast<int>((rank_ + 1) % n), left = static_cast<int>((rank_ + n - 1) % n);
    for (unsigned s = 0; s + 1 < n; ++s) {
        const unsigned out = (rank_ + n - s) % n, in = (rank_ + 2 * n - s - 1) % n;
        exchange(right, rbuf + recv.displs[out], recv.counts[out], left, rbuf + recv.displs[in], recv.counts[in]);
    }
}

// Pairwise: the rank's own block copied, then in step i a send to rank + i
// of its block and a receive from rank - i of this rank's (empty ones
// too, as Open MPI's sendrecv sends them).
void Communicator::alltoallv(std::uint64_t sbuf, const Blocks& send, std::uint64_t rbuf, const Blocks& recv,
                             Algorithm) {
    next_tag();
    const unsigned n = size();
    check_blocks(send, n, "alltoallv's send blocks");
    check_blocks(recv, n, "alltoallv's receive blocks");
    if (send.counts[rank_] != recv.counts[rank_])
        throw std::logic_error("coll::Communicator: alltoallv: a rank's block to itself differs in length");
    copy(rbuf + recv.displs[rank_], sbuf + send.displs[rank_], send.counts[rank_]);
    for (unsigned i = 1; i < n; ++i) {
        const unsigned to = (rank_ + i) % n, from = (rank_ + n - i) % n;
        exchange(static_cast<int>(to), sbuf + send.displs[to], send.counts[to], static_cast<int>(from),
                 rbuf + recv.displs[from], recv.counts[from]);
    }
}

}   // namespace vrdmasim::coll
