#include "workloads/collective_data.hpp"

#include <stdexcept>

namespace vrdmasim {

namespace {
std::uint64_t mix(std::uint64_t x) {   // splitmix64's finaliser
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
}   // namespace

std::uint64_t CollectiveData::element(unsigned from, unsigned to, std::uint64_t call, std::uint64_t index) {
    return mix((std::uint64_t(from) << 48) ^ (std::uint64_t(to) << 32) ^ (call << 24) ^ index);
}

std::vector<unsigned char> CollectiveData::bytes_of(unsigned from, unsigned to, std::uint64_t call, std::uint64_t len) {
    std::vector<unsigned char> v(len);
    for (std::uint64_t b = 0; b < len; ++b)
        v[b] = static_cast<unsigned char>(element(from, to, call, b / 8) >> (8 * (b % 8)));
    return v;
}

std::uint64_t CollectiveData::send_bytes() const {
    return op == coll::Op::Alltoall || op == coll::Op::Scatter ? ranks * bytes : bytes;
}

std::vector<unsigned char> CollectiveData::send(unsigned rank, std::uint64_t call) const {
    if (op != coll::Op::Alltoall && op != coll::Op::Scatter)
        return bytes_of(rank, rank, call, op == coll::Op::Barrier ? 0 : bytes);
    std::vector<unsigned char> v;
    if (op == coll::Op::Scatter && rank != root) return v;   // the root's alone
    for (unsigned to = 0; to < ranks; ++to) {
        const auto b = bytes_of(rank, to, call, bytes);
        v.insert(v.end(), b.begin(), b.end());
    }
    return v;
}

std::uint64_t CollectiveData::receive_bytes() const {
    return op == coll::Op::Allgather || op == coll::Op::Alltoall || op == coll::Op::Gather ? ranks * bytes : bytes;
}

std::uint64_t CollectiveData::result_bytes(unsigned rank) const {
    switch (op) {
    case coll::Op::Barrier: return 0;
    case coll::Op::Bcast:
    case coll::Op::Allreduce: return bytes;
    case coll::Op::Reduce: return rank == root ? bytes : 0;
    case coll::Op::Scan: return bytes;
    case coll::Op::Exscan: return rank == 0 ? 0 : bytes;   // MPI leaves rank 0's undefined
    case coll::Op::Allgather:
    case coll::Op::Alltoall: return ranks * bytes;
    case coll::Op::Gather: return rank == root ? ranks * bytes : 0;
    case coll::Op::Scatter: return bytes;
    }
    return 0;
}

std::vector<unsigned char> CollectiveData::expected(unsigned rank, std::uint64_t call) const {
    std::vector<unsigned char> want;
    switch (op) {
    case coll::Op::Barrier: break;
    case coll::Op::Bcast: want = bytes_of(root, root, call, bytes); break;
    case coll::Op::Scatter: want = bytes_of(root, rank, call, bytes); break;
    case coll::Op::Reduce:
    case coll::Op::Allreduce:
    case coll::Op::Scan:
    case coll::Op::Exscan:
        want.assign(result_bytes(rank), 0);
        for (std::uint64_t i = 0; i < want.size() / 8; ++i) {
            std::uint64_t sum = 0;
            // Every rank's, or (scans) those up to this one, or before it.
            const unsigned upto = op == coll::Op::Scan ? rank + 1 : op == coll::Op::Exscan ? rank : ranks;
            for (unsigned r = 0; r < upto; ++r) sum += element(r, r, call, i);
            for (unsigned k = 0; k < 8; ++k) want[8 * i + k] = static_cast<unsigned char>(sum >> (8 * k));
        }
        break;
    case coll::Op::Gather:
        if (rank != root) break;
        [[fallthrough]];
    case coll::Op::Allgather:
        for (unsigned r = 0; r < ranks; ++r) {
            const auto b = bytes_of(r, r, call, bytes);
            want.insert(want.end(), b.begin(), b.end());
        }
        break;
    case coll::Op::Alltoall:
        for (unsigned r = 0; r < ranks; ++r) {
            const auto b = bytes_of(r, rank, call, bytes);
            want.insert(want.end(), b.begin(), b.end());
        }
        break;
    }
    return want;
}

bool CollectiveData::prepare(RdmaProcess& app, std::uint64_t sbuf, std::uint64_t rbuf, unsigned rank,
                             std::uint64_t call) const {
    const bool root_bcast = op == coll::Op::Bcast && rank == root;
    const std::vector<unsigned char> mine = send(rank, call);
    if (!mine.empty() && (root_bcast || op != coll::Op::Bcast) &&
        !app.debug_write(root_bcast ? rbuf : sbuf, mine.data(), mine.size()))
        throw std::runtime_error(app.group() + ": collective: a send buffer is not writable");
    return !root_bcast;
}

void CollectiveData::run(coll::Communicator& comm, coll::Algorithm a, std::uint64_t sbuf, std::uint64_t rbuf) const {
    switch (op) {
    case coll::Op::Barrier: comm.barrier(a); break;
    case coll::Op::Bcast: comm.bcast(rbuf, bytes, root, a); break;
    case coll::Op::Reduce: comm.reduce(sbuf, rbuf, bytes / 8, root, a); break;
    case coll::Op::Allreduce: comm.allreduce(sbuf, rbuf, bytes / 8, a); break;
    case coll::Op::Allgather: comm.allgather(sbuf, rbuf, bytes, a); break;
    case coll::Op::Alltoall: comm.alltoall(sbuf, rbuf, bytes, a); break;
    case coll::Op::Gather: comm.gather(sbuf, rbuf, bytes, root, a); break;
    case coll::Op::Scatter: comm.scatter(sbuf, rbuf, bytes, root, a); break;
    case coll::Op::Scan:
    case coll::Op::Exscan: comm.scan(sbuf, rbuf, bytes / 8, op == coll::Op::Exscan, a); break;
    }
}

}   // namespace vrdmasim
