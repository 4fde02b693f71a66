// coll::Communicator: names, the choice of algorithm, the point-to-point
// steps and local work, barrier, bcast and reduce (README.md).
#include "library/collectives/communicator.hpp"

#include <algorithm>
#include <stdexcept>

#include "library/collectives/params.hpp"
#include "models/os/vm_params.hpp"

namespace vrdmasim::coll {

namespace {
// Collectives' messages: one tag per call (every rank makes the same
// calls in the same order; between two ranks messages never overtake),
// the communicator's context above it (Communicator::p2p_tag: a
// point-to-point message's tag is below 2^32).
constexpr std::uint64_t kCollTag = std::uint64_t(1) << 40;

bool power_of_two(unsigned n) { return n && !(n & (n - 1)); }
}   // namespace

Op op_of(const std::string& s) {
    if (s == "barrier") return Op::Barrier;
    if (s == "bcast") return Op::Bcast;
    if (s == "reduce") return Op::Reduce;
    if (s == "allreduce") return Op::Allreduce;
    if (s == "allgather") return Op::Allgather;
    if (s == "alltoall") return Op::Alltoall;
    if (s == "scan") return Op::Scan;
    if (s == "exscan") return Op::Exscan;
    if (s == "gather") return Op::Gather;
    if (s == "scatter") return Op::Scatter;
    if (s == "gatherv") return Op::Gatherv;
    if (s == "scatterv") return Op::Scatterv;
    if (s == "allgatherv") return Op::Allgatherv;
    if (s == "alltoallv") return Op::Alltoallv;
    if (s == "reduce_scatter") return Op::ReduceScatter;
    if (s == "reduce_scatter_block") return Op::ReduceScatterBlock;
    throw std::logic_error("collective.op: unknown collective '" + s + "'");
}

Algorithm algorithm_of(const std::string& s) {
    if (s == "auto") return Algorithm::Auto;
    if (s == "dissemination") return Algorithm::Dissemination;
    if (s == "binomial") return Algorithm::Binomial;
    if (s == "recursive-doubling") return Algorithm::RecursiveDoubling;
    if (s == "ring") return Algorithm::Ring;
    if (s == "rabenseifner") return Algorithm::Rabenseifner;
    if (s == "pairwise") return Algorithm::Pairwise;
    if (s == "bruck") return Algorithm::Bruck;
    if (s == "linear") return Algorithm::Linear;
    if (s == "recursive-halving") return Algorithm::RecursiveHalving;
    throw std::logic_error("collective: unknown algorithm '" + s + "'");
}

const char* name_of(Op op) {
    switch (op) {
    case Op::Barrier: return "barrier";
    case Op::Bcast: return "bcast";
    case Op::Reduce: return "reduce";
    case Op::Allreduce: return "allreduce";
    case Op::Allgather: return "allgather";
    case Op::Alltoall: return "alltoall";
    case Op::Scan: return "scan";
    case Op::Exscan: return "exscan";
    case Op::Gather: return "gather";
    case Op::Scatter: return "scatter";
    case Op::Gatherv: return "gatherv";
    case Op::Scatterv: return "scatterv";
    case Op::Allgatherv: return "allgatherv";
    case Op::Alltoallv: return "alltoallv";
    case Op::ReduceScatter: return "reduce_scatter";
    case Op::ReduceScatterBlock: return "reduce_scatter_block";
    }
    return "?";
}

const char* name_of(Algorithm a) {
    switch (a) {
    case Algorithm::Auto: return "auto";
    case Algorithm::Dissemination: return "dissemination";
    case Algorithm::Binomial: return "binomial";
    case Algorithm::RecursiveDoubling: return "recursive-doubling";
    case Algorithm::Ring: return "ring";
    case Algorithm::Rabenseifner: return "rabenseifner";
    case Algorithm::Pairwise: return "pairwise";
    case Algorithm::Bruck: return "bruck";
    case Algorithm::Linear: return "linear";
    case Algorithm::RecursiveHalving: return "recursive-halving";
    }
    return "?";
}

bool resolve(Op op, Algorithm a, unsigned ranks, std::uint64_t bytes, Algorithm& chosen, std::string& why) {
    if (a == Algorithm::Auto) {
        // MPICH's defaults (MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE 2048,
        // MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE 81920 in all,
        // MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE 256).
        switch (op) {
        case Op::Barrier: a = Algorithm::Dissemination; break;
        case Op::Bcast:
        case Op::Reduce:
        case Op::Gather:
        case Op::Scatter: a = Algorithm::Binomial; break;
        case Op::Allreduce: a = bytes <= 2048 ? Algorithm::RecursiveDoubling : Algorithm::Rabenseifner; break;
        case Op::Allgather:
            a = power_of_two(ranks) && bytes * ranks <= 81920 ? Algorithm::RecursiveDoubling : Algorithm::Ring;
            break;
        case Op::Alltoall: a = bytes <= 256 ? Algorithm::Bruck : Algorithm::Pairwise; break;
        case Op::Scan:
        case Op::Exscan:
            a = Algorithm::RecursiveDoubling;
            break;   // MPICH's only one
        // The v-variants: MPICH's and Open MPI's (vector.cpp).
        case Op::Gatherv:
        case Op::Scatterv: a = Algorithm::Linear; break;
        case Op::Allgatherv: a = Algorithm::Ring; break;
        case Op::Alltoallv: a = Algorithm::Pairwise; break;
        // MPICH's MPIR_CVAR_REDUCE_SCATTER_COMMUTATIVE_LONG_MSG_SIZE
        // (512 KiB, `bytes` a rank's whole vector here).
        case Op::ReduceScatter:
        case Op::ReduceScatterBlock: a = bytes < 524288 ? Algorithm::RecursiveHalving : Algorithm::Pairwise; break;
        }
    }
    const std::vector<Algorithm> fits = [op] {
        switch (op) {
        case Op::Barrier: return std::vector<Algorithm>{Algorithm::Dissemination};
        case Op::Bcast:
        case Op::Reduce:
        case Op::Gather:
        case Op::Scatter: return std::vector<Algorithm>{Algorithm::Binomial};
        case Op::Allreduce:
            return std::vector<Algorithm>{Algorithm::RecursiveDoubling, Algorithm::Ring, Algorithm::Rabenseifner};
        case Op::Allgather: return std::vector<Algorithm>{Algorithm::Ring, Algorithm::RecursiveDoubling};
        case Op::Alltoall: return std::vector<Algorithm>{Algorithm::Pairwise, Algorithm::Bruck};
        case Op::Scan:
        case Op::Exscan: return std::vector<Algorithm>{Algorithm::RecursiveDoubling};
        case Op::Gatherv:
        case Op::Scatterv: return std::vector<Algorithm>{Algorithm::Linear};
        case Op::Allgatherv: return std::vector<Algorithm>{Algorithm::Ring};
        case Op::Alltoallv: return std::vector<Algorithm>{Algorithm::Pairwise};
        case Op::ReduceScatter:
        case Op::ReduceScatterBlock: return std::vector<Algorithm>{Algorithm::RecursiveHalving, Algorithm::Pairwise};
        }
        return std::vector<Algorithm>{};
    }();
    if (std::find(fits.begin(), fits.end(), a) == fits.end()) {
        why = std::string(name_of(a)) + " is not an algorithm of " + name_of(op) + " (it has:";
        for (Algorithm f : fits) why += std::string(" ") + name_of(f);
        why += ")";
        return false;
    }
    if (op == Op::Allgather && a == Algorithm::RecursiveDoubling && !power_of_two(ranks)) {
        why = "recursive-doubling allgather exchanges whole halves and needs a power-of-two number of ranks (" +
              std::to_string(ranks) + " here; MPICH takes ring or Bruck then)";
        return false;
    }
    chosen = a;
    return true;
}

const EnumParam* algorithm_param(Op op) {
    const auto& P = params_of<CollParams>();
    switch (op) {
    case Op::Allreduce: return &P.allreduce_algorithm;
    case Op::Allgather: return &P.allgather_algorithm;
    case Op::Alltoall: return &P.alltoall_algorithm;
    case Op::ReduceScatter:
    case Op::ReduceScatterBlock: return &P.reduce_scatter_algorithm;
    default: return nullptr;
    }
}

Algorithm configured_algorithm(const Config& c, Op op) {
    const EnumParam* p = algorithm_param(op);
    return p ? algorithm_of(c[*p]) : Algorithm::Auto;
}

Communicator::Communicator(const SimContext& ctx, RdmaProcess& app, msg::Endpoint& ep, std::vector<unsigned> nodes,
                           unsigned rank)
    : Communicator(ctx, app, &ep, nullptr, std::move(nodes), rank) {}

Communicator::Communicator(const SimContext& ctx, RdmaProcess& app, OneSided& os, std::vector<unsigned> nodes,
                           unsigned rank)
    : Communicator(ctx, app, nullptr, &os, std::move(nodes), rank) {}

Communicator::Communicator(const SimContext& ctx, RdmaProcess& app, msg::Endpoint* ep, OneSided* os,
                           std::vector<unsigned> nodes, unsigned rank)
    : ctx_(ctx),
      app_(app),
      ep_(ep),
      os_(os),
      nodes_(std::move(nodes)),
      rank_(rank),
      context_(0),
      reduce_rate_(ctx.config[params_of<CollParams>().reduce_rate] / 8),
      copy_rate_(ctx.config[params_of<VmParams>().copy_rate] / 8),
      in_call_(ctx.config[params_of<CollParams>().progress] == "in-call") {
    if (rank_ >= nodes_.size()) throw std::logic_error("coll::Communicator: rank beyond the ranks");
}

namespace {
std::vector<unsigned> nodes_of(const std::vector<unsigned>& nodes, const std::vector<unsigned>& members) {
    std::vector<unsigned> out;
    for (unsigned m : members) out.push_back(nodes.at(m));
    return out;
}
}   // namespace

Communicator::Communicator(const SimContext& ctx, RdmaProcess& app, msg::Endpoint& ep,
                           const std::vector<unsigned>& nodes, const Group& group, unsigned rank)
    : Communicator(ctx, app, &ep, nullptr, nodes, group, rank) {}

Communicator::Communicator(const SimContext& ctx, RdmaProcess& app, OneSided& os, const std::vector<unsigned>& nodes,
                           const Group& group, unsigned rank)
    : Communicator(ctx, app, nullptr, &os, nodes, group, rank) {}

Communicator::Communicator(const SimContext& ctx, RdmaProcess& app, msg::Endpoint* ep, OneSided* os,
                           const std::vector<unsigned>& nodes, const Group& group, unsigned rank)
    : ctx_(ctx),
      app_(app),
      ep_(ep),
      os_(os),
      nodes_(nodes_of(nodes, group.members)),
      members_(group.members),
      rank_(rank),
      context_(std::uint64_t(group.context) << 48),
      reduce_rate_(ctx.config[params_of<CollParams>().reduce_rate] / 8),
      copy_rate_(ctx.config[params_of<VmParams>().copy_rate] / 8),
      in_call_(ctx.config[params_of<CollParams>().progress] == "in-call") {
    if (rank_ >= nodes_.size()) throw std::logic_error("coll::Communicator: rank beyond the ranks");
    if (group.context >= kContexts) throw std::logic_error("coll::Communicator: a context beyond kContexts");
}

std::set<unsigned> Communicator::partners(Op op, Algorithm a, unsigned n, unsigned r) {
    std::set<unsigned> out;
    auto add = [&](std::uint64_t q) {
        if (q % n != r) out.insert(static_cast<unsigned>(q % n));
    };
    // rank +- 2^k: dissemination, binomial trees from any root, Bruck.
    auto powers = [&] {
        for (std::uint64_t k = 1; k < n; k <<= 1) add(r + k), add(r + n - k);
    };
    auto ring = [&] { add(r + 1), add(r + n - 1); };
    // Recursive doubling and Rabenseifner with MPICH's fold: the folding
    // neighbour, then rank XOR 2^k among the pof2 that remain.
    auto doubling = [&] {
        unsigned pof2 = 1;
        while (pof2 * 2 <= n) pof2 *= 2;
        const unsigned rem = n - pof2;
        int nr = static_cast<int>(r) - static_cast<int>(rem);
        if (r < 2 * rem) {
            add(r % 2 ? r - 1 : r + 1);
            nr = r % 2 ? static_cast<int>(r / 2) : -1;
        }
        if (nr < 0) return;
        for (unsigned mask = 1; mask < pof2; mask <<= 1) {
            const unsigned p = static_cast<unsigned>(nr) ^ mask;
            add(p < rem ? p * 2 + 1 : p + rem);
        }
    };
    auto all = [&] {
        for (unsigned q = 0; q < n; ++q) add(q);
    };
    const bool any = a == Algorithm::Auto;
    switch (op) {
    case Op::Barrier:
    case Op::Bcast:
    case Op::Reduce:
    case Op::Gather:
    case Op::Scatter: powers(); break;
    case Op::Allreduce:
        if (any || a == Algorithm::RecursiveDoubling || a == Algorithm::Rabenseifner) doubling();
        if (a == Algorithm::Ring) ring();
        break;
    case Op::Allgather:
        if (any || a == Algorithm::Ring) ring();
        if ((any || a == Algorithm::RecursiveDoubling) && power_of_two(n))
            for (unsigned mask = 1; mask < n; mask <<= 1) add(r ^ mask);
        break;
    case Op::Alltoall:
        if (any || a == Algorithm::Bruck) powers();
        if (any || a == Algorithm::Pairwise) all();
        break;
    case Op::Scan:
    case Op::Exscan:
        for (unsigned mask = 1; mask < n; mask <<= 1)
            if ((r ^ mask) < n) add(r ^ mask);
        break;
    // Linear (from any root) and pairwise: everyone; the ring: neighbours.
    case Op::Gatherv:
    case Op::Scatterv:
    case Op::Alltoallv: all(); break;
    case Op::Allgatherv: ring(); break;
    case Op::ReduceScatter:
    case Op::ReduceScatterBlock:
        if (any || a == Algorithm::RecursiveHalving) doubling();
        if (any || a == Algorithm::Pairwise) all();
        break;
    }
    return out;
}

std::uint64_t Communicator::scratch_bytes(Op op, unsigned ranks, std::uint64_t bytes) {
    switch (op) {
    case Op::Barrier:
    case Op::Bcast: return 0;
    case Op::Reduce:
    case Op::Allreduce: return 2 * bytes;   // a received vector, and the accumulator of a non-root
    case Op::Allgather: return 0;
    case Op::Alltoall: return 2 * bytes * ranks;   // Bruck's rotated blocks and its packing buffer
    case Op::Scan:
    case Op::Exscan: return 2 * bytes;   // the partial sums and a received vector
    case Op::Gather:
    case Op::Scatter: return bytes * ranks;   // the blocks of a rank's subtree (rotated at a root other than 0)
    case Op::Gatherv:
    case Op::Scatterv:
    case Op::Allgatherv:
    case Op::Alltoallv: return 0;   // straight between the caller's buffers
    case Op::ReduceScatter:
    case Op::ReduceScatterBlock: return 2 * bytes;   // (`bytes` a rank's whole vector) the sums and a received part
    }
    return 0;
}

std::uint64_t Communicator::scratch(std::uint64_t bytes) {
    if (bytes > scratch_len_) {
        scratch_ = app_.alloc(bytes, true);   // the library's own buffer, mapped once at its largest
        scratch_len_ = bytes;
    }
    return scratch_;
}

std::uint64_t Communicator::next_tag() {
    if (started_on_) {
        if (tag_taken_) throw std::logic_error("coll::Communicator: a non-blocking call made two collectives");
        tag_taken_ = true;
    }
    return context_ + kCollTag + call_++;
}

std::uint64_t Communicator::current_tag() const { return context_ + kCollTag + call_ - 1; }

void Communicator::exchange(int to, std::uint64_t sbuf, std::uint64_t slen, int from, std::uint64_t rbuf,
                            std::uint64_t rlen) {
    if (to >= 0) {
        ++messages_;
        sent_bytes_ += slen;
    }
    if (os_) {
        auto of = [this](int r) {
            return r < 0 || members_.empty() ? r : static_cast<int>(members_.at(static_cast<unsigned>(r)));
        };
        os_->exchange(of(to), sbuf, slen, of(from), rbuf, rlen);
        return;
    }
    const std::uint64_t tag = current_tag();
    msg::Endpoint::Request r = 0, s = 0;
    if (from >= 0) r = ep_->irecv(nodes_.at(static_cast<unsigned>(from)), tag, rbuf, rlen);
    if (to >= 0) s = ep_->isend(nodes_.at(static_cast<unsigned>(to)), tag, sbuf, slen);
    if (from >= 0) check_received(from, ep_->wait(r), rlen);
    if (to >= 0) ep_->wait(s);
    round_ended();
}

void Communicator::check_received(int from, const msg::Status& st, std::uint64_t rlen) const {
    if (!st.ok || st.len != rlen)
        throw std::runtime_error(
            app_.group() + ": collective: a message from rank " + std::to_string(from) + " came " +
            (st.ok ? "with " + std::to_string(st.len) + " B where " + std::to_string(rlen) + " B were expected"
                   : std::string("failed")));
}

void Communicator::check(const Reduction& red) {
    std::string why;
    if (!red.valid(why)) throw std::invalid_argument("collective: " + why);
}

// One rate for every operation and type: the pass is bound by memory (two
// arrays read, one written), not by the arithmetic (README.md "Reductions").
void Communicator::combine(std::uint64_t dst, std::uint64_t src, std::uint64_t count, const Reduction& red) {
    if (count == 0) return;
    const std::uint64_t len = count * red.element_bytes();
    a_.resize(len);
    b_.resize(len);
    if (!app_.debug_read(dst, a_.data(), len) || !app_.debug_read(src, b_.data(), len))
        throw std::runtime_error(app_.group() + ": collective: a reduction's buffer is unreadable");
    red.apply(a_.data(), b_.data(), count);
    app_.compute("reduce", sc_core::sc_time(static_cast<double>(len) / reduce_rate_, sc_core::SC_SEC));
    if (!app_.debug_write(dst, a_.data(), len))
        throw std::runtime_error(app_.group() + ": collective: a reduction's buffer is not writable");
    reduced_bytes_ += len;
}

void Communicator::copy(std::uint64_t dst, std::uint64_t src, std::uint64_t bytes) {
    if (bytes == 0 || dst == src) return;
    a_.resize(bytes);
    if (!app_.debug_read(src, a_.data(), bytes))
        throw std::runtime_error(app_.group() + ": collective: a buffer is unreadable");
    app_.compute("coll-copy", sc_core::sc_time(static_cast<double>(bytes) / copy_rate_, sc_core::SC_SEC));
    if (!app_.debug_write(dst, a_.data(), bytes))
        throw std::runtime_error(app_.group() + ": collective: a buffer is not writable");
}

// Dissemination (Hensgen, Finkel and Manber 1988): in round k each rank
// tells rank + 2^k and hears from rank - 2^k; after ceil(log2 n) rounds
// every rank has heard, through some chain, from every other.
void Communicator::barrier(Algorithm) {
    next_tag();
    const unsigned n = size();
    for (unsigned k = 1; k < n; k <<= 1)
        exchange(static_cast<int>((rank_ + k) % n), 0, 0, static_cast<int>((rank_ + n - k) % n), 0, 0);
}

// Binomial tree from `root` (MPICH's MPIR_Bcast_intra_binomial).
void Communicator::bcast(std::uint64_t buf, std::uint64_t bytes, unsigned root, Algorithm) {
    next_tag();
    const unsigned n = size();
    const unsigned vr = (rank_ + n - root) % n;
    unsigned mask = 1;
    for (; mask < n; mask <<= 1)
        if (vr & mask) {
            recv((vr - mask + root) % n, buf, bytes);
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (vr + mask < n) send((vr + mask + root) % n, buf, bytes);
}

// Binomial tree to `root` (MPICH's MPIR_Reduce_intra_binomial, a
// commutative sum): each rank adds its children's vectors into its own and
// passes the sum up.
void Communicator::reduce(std::uint64_t sbuf, std::uint64_t rbuf, std::uint64_t count, unsigned root, Algorithm,
                          const Reduction& red) {
    check(red);
    next_tag();
    const unsigned n = size();
    const std::uint64_t len = count * red.element_bytes();
    const std::uint64_t tmp = scratch(2 * len);
    const std::uint64_t acc = rank_ == root ? rbuf : tmp + len;
    copy(acc, sbuf, len);
    const unsigned vr = (rank_ + n - root) % n;
    for (unsigned mask = 1; mask < n; mask <<= 1) {
        if ((vr & mask) == 0) {
            const unsigned src = vr | mask;
            if (src < n) {
                recv((src + root) % n, tmp, len);
                combine(acc, tmp, count, red);
            }
        } else {
            send(((vr & ~mask) + root) % n, acc, len);
            break;
        }
    }
}

}   // namespace vrdmasim::coll
