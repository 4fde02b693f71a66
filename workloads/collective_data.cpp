#include "workloads/collective_data.hpp"

#include <cmath>
#include <cstring>
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

namespace {
// A floating-point value `v` as an element of `t` (float, double, long
// double: its padding left as it is) at `p`.
void put_real(coll::Datatype t, double v, unsigned char* p) {
    const float f = static_cast<float>(v);
    const long double l = v;
    if (t == coll::Datatype::Float) std::memcpy(p, &f, sizeof f);
    else if (t == coll::Datatype::Double) std::memcpy(p, &v, sizeof v);
    else std::memcpy(p, &l, coll::significant_bytes(t));
}

// An element of `t` (a basic or complex type) made of `word` at `p`.
void put_value(coll::Datatype t, std::uint64_t word, unsigned char* p) {
    if (coll::is_complex(t)) {
        // A unit times 2+i (2+i, -1+2i, -2-i, 1-2i): a product of any of
        // them is a unit times a power of 2+i, whose parts are never 0
        // (no zero, whose sign would depend on the order the algorithm
        // multiplies in) and exact while they fit the mantissa (sums:
        // always; a product of n ranks' parts: up to 5^(n/2)).
        static const double kParts[4][2] = {{2, 1}, {-1, 2}, {-2, -1}, {1, -2}};
        const coll::Datatype part = coll::part_type(t);
        put_real(part, kParts[word % 4][0], p);
        put_real(part, kParts[word % 4][1], p + coll::size_of(part));
        return;
    }
    if (t == coll::Datatype::Float || t == coll::Datatype::Double || t == coll::Datatype::LongDouble) {
        // +-0.5, 1 or 2
        put_real(t, (word & 1 ? -1.0 : 1.0) * std::ldexp(1.0, static_cast<int>((word >> 1) % 3) - 1), p);
        return;
    }
    if (t == coll::Datatype::Bool) {
        p[0] = static_cast<unsigned char>((word >> 7) & 1);
        return;
    }
    if (t != coll::Datatype::Uint64 && word >> 61 == 0) word = 0;   // one in eight (uint64: bytes_of()'s)
    for (std::uint64_t k = 0; k < coll::size_of(t); ++k) p[k] = static_cast<unsigned char>(word >> (8 * k));
}
}   // namespace

std::vector<unsigned char> CollectiveData::reduction_data(const coll::Reduction& red, unsigned from, std::uint64_t call,
                                                          std::uint64_t offset, std::uint64_t len) {
    const std::uint64_t e = red.element_bytes();
    std::vector<unsigned char> v(len, 0);
    for (std::uint64_t i = 0; i < len / e; ++i) {
        const std::uint64_t word = element(from, from, call, offset / e + i);
        unsigned char* at = v.data() + i * e;
        if (!coll::is_pair(red.type)) {
            put_value(red.type, word, at);
            continue;
        }
        put_value(coll::value_type(red.type), word, at);
        const std::int32_t index = static_cast<std::int32_t>((word >> 40) % 16);
        unsigned char* index_at = at + coll::index_offset(red.type);
        if (coll::index_type(red.type) != coll::Datatype::Int32) put_real(coll::index_type(red.type), index, index_at);
        else std::memcpy(index_at, &index, sizeof index);   // (Fortran's 2real: a REAL index)
    }
    return v;
}

std::uint64_t CollectiveData::uneven(std::uint64_t bytes, unsigned from, unsigned to) {
    return bytes * ((from + 2 * to) % 4) / 2;   // 0, 1/2, 1 or 3/2 of bytes
}

namespace {
// Blocks of `counts` laid out in reverse rank order, one after the other.
coll::Blocks reversed(std::vector<std::uint64_t> counts) {
    coll::Blocks b;
    b.displs.assign(counts.size(), 0);
    std::uint64_t at = 0;
    for (std::size_t r = counts.size(); r-- > 0;) {
        b.displs[r] = at;
        at += counts[r];
    }
    b.counts = std::move(counts);
    return b;
}

// Whether a rank's block goes to every rank alike (gather's, allgather's:
// its data are bytes_of(from, from, ...)), or is a rank's own (scatter's,
// alltoall's: bytes_of(from, to, ...)).
bool same_to_all(coll::Op op) {
    return op == coll::Op::Gather || op == coll::Op::Allgather || op == coll::Op::Gatherv || op == coll::Op::Allgatherv;
}

bool reduce_scatter(coll::Op op) { return op == coll::Op::ReduceScatter || op == coll::Op::ReduceScatterBlock; }

// Whether a rank's data are blocks of `sends` and `receives`: the
// v-variants', reduce-scatter's (its vector's blocks in `sends`, its own
// result in `receives`).
bool blocked(coll::Op op) { return coll::takes_blocks(op); }
}   // namespace

CollectiveData CollectiveData::for_rank(unsigned rank) const {
    CollectiveData d = *this;
    if (!blocked(op)) return d;
    const std::vector<std::uint64_t> none(ranks, 0);
    if (reduce_scatter(op)) {   // the blocks of every rank's vector, in rank order; its own result
        d.sends = {none, none};
        for (unsigned r = 0; r < ranks; ++r) {
            const std::uint64_t e = red.element_bytes();
            d.sends.counts[r] = op == coll::Op::ReduceScatterBlock ? bytes : e * uneven(bytes / e, r, r);
            if (r) d.sends.displs[r] = d.sends.displs[r - 1] + d.sends.counts[r - 1];
        }
        d.receives = {none, none};
        d.receives.counts[rank] = d.sends.counts[rank];
        return d;
    }
    std::vector<std::uint64_t> out = none, in = none;
    for (unsigned r = 0; r < ranks; ++r) switch (op) {
        case coll::Op::Gatherv:
            if (r == root) out[r] = uneven(bytes, rank, root);
            if (rank == root) in[r] = uneven(bytes, r, root);
            break;
        case coll::Op::Scatterv:
            if (rank == root) out[r] = uneven(bytes, root, r);
            if (r == root) in[r] = uneven(bytes, root, rank);
            break;
        case coll::Op::Allgatherv:
            out[r] = uneven(bytes, rank, rank);
            in[r] = uneven(bytes, r, r);
            break;
        default:   // alltoallv
            out[r] = uneven(bytes, rank, r);
            in[r] = uneven(bytes, r, rank);
        }
    d.sends = reversed(out);
    if (op == coll::Op::Allgatherv || op == coll::Op::Gatherv)   // one block, at the buffer's start
        d.sends.displs = none;
    d.receives = reversed(in);
    return d;
}

std::uint64_t CollectiveData::algorithm_bytes() const { return reduce_scatter(op) ? for_rank(0).send_bytes() : bytes; }

std::uint64_t CollectiveData::send_bytes() const {
    if (blocked(op)) return sends.span();
    return op == coll::Op::Alltoall || op == coll::Op::Scatter ? ranks * bytes : bytes;
}

std::vector<unsigned char> CollectiveData::send(unsigned rank, std::uint64_t call) const {
    if (reduce_scatter(op)) return reduction_data(red, rank, call, 0, send_bytes());
    if (coll::is_reduction(op)) return reduction_data(red, rank, call, 0, bytes);
    if (coll::is_vector(op)) {   // each block at its place (gaps zero)
        std::vector<unsigned char> v(send_bytes(), 0);
        for (unsigned to = 0; to < ranks && to < sends.counts.size(); ++to) {
            const auto b = bytes_of(rank, same_to_all(op) ? rank : to, call, sends.counts[to]);
            std::copy(b.begin(), b.end(), v.begin() + static_cast<std::ptrdiff_t>(sends.displs[to]));
        }
        return v;
    }
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
    if (blocked(op)) return receives.span();
    return op == coll::Op::Allgather || op == coll::Op::Alltoall || op == coll::Op::Gather ? ranks * bytes : bytes;
}

std::uint64_t CollectiveData::result_bytes(unsigned rank) const {
    if (blocked(op)) {
        std::uint64_t sum = 0;
        for (const auto& part : result_parts(rank)) sum += part.second;
        return sum;
    }
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
    default: return 0;   // the v-variants: above
    }
}

std::uint64_t CollectiveData::total_result_bytes() const {
    std::uint64_t sum = 0;
    if (!blocked(op)) {
        for (unsigned r = 0; r < ranks; ++r) sum += result_bytes(r);
        return sum;
    }
    // What for_rank(r).receives counts at each rank r, summed.
    const std::uint64_t e = red.element_bytes();
    const std::uint64_t evens = (ranks + 1) / 2, odds = ranks / 2;   // ranks of each parity
    for (unsigned r = 0; r < ranks; ++r) switch (op) {
        case coll::Op::ReduceScatterBlock: sum += bytes; break;   // its own block of every rank's vector
        case coll::Op::ReduceScatter: sum += e * uneven(bytes / e, r, r); break;
        case coll::Op::Gatherv: sum += uneven(bytes, r, root); break;   // the root's, from rank r
        case coll::Op::Scatterv: sum += uneven(bytes, root, r); break;
        case coll::Op::Allgatherv: sum += std::uint64_t(ranks) * uneven(bytes, r, r); break;   // at every rank
        default:
            // alltoallv: rank r's block for each rank; uneven() goes by
            // (from + 2 to) mod 4, which depends on `to` by its parity only.
            sum += evens * uneven(bytes, r, 0) + odds * uneven(bytes, r, 1);
        }
    return sum;
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> CollectiveData::result_parts(unsigned rank) const {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> parts;
    if (!blocked(op)) {
        if (const std::uint64_t n = result_bytes(rank)) parts.emplace_back(0, n);
        return parts;
    }
    for (std::size_t r = 0; r < receives.counts.size(); ++r)
        if (receives.counts[r]) parts.emplace_back(receives.displs.at(r), receives.counts[r]);
    return parts;
}

bool CollectiveData::result(RdmaProcess& app, std::uint64_t rbuf, unsigned rank,
                            std::vector<unsigned char>& got) const {
    got.clear();
    for (const auto& [offset, len] : result_parts(rank)) {
        const std::size_t at = got.size();
        got.resize(at + len);
        if (!app.debug_read(rbuf + offset, got.data() + at, len)) return false;
    }
    return true;
}

std::vector<unsigned char> CollectiveData::expected(unsigned rank, std::uint64_t call) const {
    std::vector<unsigned char> want;
    if (coll::is_reduction(op)) {
        // `red` over every rank's elements (reduce-scatter: of this rank's
        // block), or (scans) those up to this one, or before it.
        const std::uint64_t first = reduce_scatter(op) ? sends.displs.at(rank) : 0;
        const std::uint64_t len = result_bytes(rank), e = red.element_bytes();
        const unsigned upto = op == coll::Op::Scan ? rank + 1 : op == coll::Op::Exscan ? rank : ranks;
        for (unsigned r = 0; r < upto && len; ++r) {
            const std::vector<unsigned char> theirs = reduction_data(red, r, call, first, len);
            if (r == 0) want = theirs;
            else red.apply(want.data(), theirs.data(), len / e);
        }
        return want;
    }
    if (coll::is_vector(op)) {   // each rank's block, in rank order
        for (unsigned from = 0; from < receives.counts.size(); ++from) {
            const auto b = bytes_of(from, same_to_all(op) ? from : rank, call, receives.counts[from]);
            want.insert(want.end(), b.begin(), b.end());
        }
        return want;
    }
    switch (op) {
    case coll::Op::Barrier: break;
    case coll::Op::Bcast: want = bytes_of(root, root, call, bytes); break;
    case coll::Op::Scatter: want = bytes_of(root, rank, call, bytes); break;
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
    default: break;   // the v-variants: above
    }
    return want;
}

bool CollectiveData::prepare(RdmaProcess& app, std::uint64_t sbuf, std::uint64_t rbuf, unsigned rank,
                             std::uint64_t call) const {
    const bool root_bcast = !fills(rank);
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
    case coll::Op::Reduce: comm.reduce(sbuf, rbuf, bytes / red.element_bytes(), root, a, red); break;
    case coll::Op::Allreduce: comm.allreduce(sbuf, rbuf, bytes / red.element_bytes(), a, red); break;
    case coll::Op::Allgather: comm.allgather(sbuf, rbuf, bytes, a); break;
    case coll::Op::Alltoall: comm.alltoall(sbuf, rbuf, bytes, a); break;
    case coll::Op::Gather: comm.gather(sbuf, rbuf, bytes, root, a); break;
    case coll::Op::Scatter: comm.scatter(sbuf, rbuf, bytes, root, a); break;
    case coll::Op::Scan:
    case coll::Op::Exscan: comm.scan(sbuf, rbuf, bytes / red.element_bytes(), op == coll::Op::Exscan, a, red); break;
    case coll::Op::Gatherv:
        comm.gatherv(sbuf + sends.displs.at(root), sends.counts.at(root), rbuf, receives, root, a);
        break;
    case coll::Op::Scatterv:
        comm.scatterv(sbuf, sends, rbuf + receives.displs.at(root), receives.counts.at(root), root, a);
        break;
    case coll::Op::Allgatherv: {
        const unsigned me = comm.rank();
        comm.allgatherv(sbuf + sends.displs.at(me), sends.counts.at(me), rbuf, receives, a);
        break;
    }
    case coll::Op::Alltoallv: comm.alltoallv(sbuf, sends, rbuf, receives, a); break;
    case coll::Op::ReduceScatter:
    case coll::Op::ReduceScatterBlock: {
        std::vector<std::uint64_t> counts;   // in elements
        for (const std::uint64_t c : sends.counts) counts.push_back(c / red.element_bytes());
        comm.reduce_scatter(sbuf, rbuf, counts, a, red);
        break;
    }
    }
}

}   // namespace vrdmasim
