#include "workloads/cluster.hpp"

#include "workloads/messaging/params.hpp"

#include <algorithm>
#include <deque>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace vrdmasim {

using sc_core::sc_time;

namespace cluster {

Grid factor_grid(unsigned n) {
    Grid best{n, 1, 1};
    if (n == 0) return {0, 0, 0};
    // a <= b <= c, a * b * c = n: the flattest box.
    double best_ratio = std::numeric_limits<double>::max();
    unsigned long long best_sum = std::numeric_limits<unsigned long long>::max();
    for (unsigned a = 1; static_cast<unsigned long long>(a) * a * a <= n; ++a) {
        if (n % a) continue;
        const unsigned m = n / a;
        for (unsigned b = a; static_cast<unsigned long long>(b) * b <= m; ++b) {
            if (m % b) continue;
            const unsigned c = m / b;
            const double ratio = static_cast<double>(c) / a;
            const unsigned long long sum = static_cast<unsigned long long>(a) + b + c;
            if (ratio < best_ratio || (ratio == best_ratio && sum < best_sum)) {
                best_ratio = ratio;
                best_sum = sum;
                best = {c, b, a};
            }
        }
    }
    return best;
}

std::string to_string(const Grid& g) {
    return std::to_string(g[0]) + "x" + std::to_string(g[1]) + "x" + std::to_string(g[2]);
}

std::string parse_grid(const std::string& text, unsigned n, Grid& out) {
    if (text == "auto") {
        out = factor_grid(n);
        return "";
    }
    Grid g{0, 0, 0};
    std::size_t pos = 0;
    for (int d = 0; d < 3; ++d) {
        if (d > 0) {
            if (pos >= text.size() || (text[pos] != 'x' && text[pos] != 'X'))
                return "expected 'auto' or three factors AxBxC";
            ++pos;
        }
        const std::size_t start = pos;
        unsigned long long v = 0;
        while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9' && v <= 1000000)
            v = v * 10 + static_cast<unsigned>(text[pos++] - '0');
        if (pos == start || v > 1000000) return "expected 'auto' or three factors AxBxC";
        if (v == 0) return "a grid dimension of 0";
        g[static_cast<std::size_t>(d)] = static_cast<unsigned>(v);
    }
    if (pos != text.size()) return "expected 'auto' or three factors AxBxC";
    const unsigned long long product = 1ull * g[0] * g[1] * g[2];
    if (product != n)
        return "a grid of " + std::to_string(product) + " nodes, but the system has " + std::to_string(n);
    out = g;
    return "";
}

std::vector<unsigned> halo_neighbours(unsigned rank, const Grid& g) {
    const unsigned x = rank % g[0], y = rank / g[0] % g[1], z = rank / (g[0] * g[1]);
    auto at = [&](unsigned a, unsigned b, unsigned c) { return a + g[0] * (b + g[1] * c); };
    std::vector<unsigned> v{at((x + 1) % g[0], y, z), at((x + g[0] - 1) % g[0], y, z),
                            at(x, (y + 1) % g[1], z), at(x, (y + g[1] - 1) % g[1], z),
                            at(x, y, (z + 1) % g[2]), at(x, y, (z + g[2] - 1) % g[2])};
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    v.erase(std::remove(v.begin(), v.end(), rank), v.end());
    return v;
}

std::vector<unsigned> derangement(unsigned n, std::uint64_t seed) {
    std::uint64_t state = seed ^ 0x6A09E667F3BCC909ull;
    auto next = [&state] {   // splitmix64
        std::uint64_t z = (state += 0x9E3779B97F4A7C15ull);
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        return z ^ (z >> 31);
    };
    auto below = [&next](std::uint64_t k) {   // uniform in [0, k), by rejection
        const std::uint64_t limit = std::numeric_limits<std::uint64_t>::max() / k * k;
        std::uint64_t r;
        do r = next(); while (r >= limit);
        return r % k;
    };
    std::vector<unsigned> p(n);
    if (n < 2) throw std::logic_error("a derangement needs at least 2 elements");
    for (;;) {
        for (unsigned i = 0; i < n; ++i) p[i] = i;
        for (unsigned i = n - 1; i > 0; --i) std::swap(p[i], p[below(i + 1)]);
        bool fixed = false;
        for (unsigned i = 0; i < n && !fixed; ++i) fixed = p[i] == i;
        if (!fixed) return p;   // about 1 in e draws
    }
}

}  // namespace cluster

std::unique_ptr<Workload> ClusterWorkload::create(const SimContext& ctx, const std::vector<App*>& apps, unsigned job) {
    const Config& c = ctx.config;
    const auto n = static_cast<unsigned>(apps.size());
    auto bad = [&](const std::string& key, const std::string& why) {
        return c.refuse("workload." + key, why);
    };
    const std::string& kind = c[params_of<WorkloadParams>().kind];
    if (kind != "alltoall" && kind != "halo" && kind != "incast" && kind != "permutation") return nullptr;
    const std::uint64_t msg = c[params_of<WorkloadParams>().message_size];
    if (msg == 0) throw bad("message-size", kind + " needs messages of at least 1 B");
    const auto iterations = static_cast<std::uint64_t>(c[params_of<WorkloadParams>().iterations]);
    const std::uint64_t total = c[params_of<WorkloadParams>().total_bytes];
    std::vector<std::vector<unsigned>> out(n);
    if (kind == "alltoall") {
        // Node i starts with i+1 and goes round, so that not everyone sends to node 0 first.
        for (unsigned i = 0; i < n; ++i)
            for (unsigned k = 1; k < n; ++k) out[i].push_back((i + k) % n);
        return std::make_unique<ClusterWorkload>(ctx, apps, kind, std::move(out), iterations, msg, job);
    }
    if (kind == "halo") {
        cluster::Grid g{};
        const std::string why = cluster::parse_grid(c[params_of<WorkloadParams>().grid], n, g);
        if (!why.empty()) throw bad("grid", why);
        for (unsigned i = 0; i < n; ++i) out[i] = cluster::halo_neighbours(i, g);
        return std::make_unique<ClusterWorkload>(ctx, apps, kind, std::move(out), iterations, msg, job);
    }
    if (kind == "incast") {
        const auto dst = static_cast<std::uint64_t>(c[params_of<WorkloadParams>().dst_node]);
        if (dst >= n) throw bad("dst-node", "the system has " + std::to_string(n) + " nodes");
        const auto senders = static_cast<std::uint64_t>(c[params_of<WorkloadParams>().senders]);
        if (senders > n - 1)
            throw bad("senders", "at most " + std::to_string(n - 1) + " nodes besides workload.dst-node");
        std::uint64_t taken = 0;
        for (unsigned i = 0; i < n && (senders == 0 || taken < senders); ++i) {
            if (i == dst) continue;
            out[i].push_back(static_cast<unsigned>(dst));
            ++taken;
        }
        return std::make_unique<ClusterWorkload>(ctx, apps, kind, std::move(out), 1, total, job);
    }
    if (kind == "permutation") {
        const std::vector<unsigned> p = cluster::derangement(n, static_cast<std::uint64_t>(c[params_of<SimParams>().seed]));
        for (unsigned i = 0; i < n; ++i) out[i].push_back(p[i]);
        return std::make_unique<ClusterWorkload>(ctx, apps, kind, std::move(out), 1, total, job);
    }
    return nullptr;
}

ClusterWorkload::ClusterWorkload(const SimContext& ctx, const std::vector<App*>& apps, std::string kind,
                                 std::vector<std::vector<unsigned>> out, std::uint64_t rounds, std::uint64_t bytes,
                                 unsigned job)
    : Workload(ctx, job),
      apps_(apps),
      kind_(std::move(kind)),
      out_(std::move(out)),
      peers_(apps.size()),
      rounds_(rounds),
      bytes_(bytes),
      msg_(ctx.config[params_of<WorkloadParams>().message_size]),
      window_(static_cast<std::uint64_t>(ctx.config[params_of<WorkloadParams>().window])) {
    if (msg_ == 0) throw ConfigError("workload.message-size = 0: " + kind_ + " needs messages of at least 1 B");
    writes_ = (bytes_ + msg_ - 1) / msg_;
    slots_ = std::max<std::uint64_t>(1, std::min(window_, writes_));
    for (unsigned i = 0; i < out_.size(); ++i)
        for (unsigned d : out_[i]) {
            if (d >= apps_.size() || d == i) throw std::logic_error(kind_ + ": bad destination in the plan");
            peers_[d].in.push_back(i);
        }
    for (Peer& p : peers_)
        for (std::size_t k = 0; k < p.in.size(); ++k) p.slot[p.in[k]] = k;
    two_sided_ = ctx.config[params_of<WorkloadParams>().two_sided];
    if (two_sided_) {
            ep_by_node_.assign(apps_.size(), nullptr);
        for (unsigned i = 0; i < apps_.size(); ++i) {
            App& app = *apps_[i];
            const std::uint64_t sends = std::max<std::uint64_t>(1, writes_ * out_[i].size());
            const std::uint64_t sbufs = std::min(window_, sends);
            const std::vector<unsigned> peers = msg_peers(i);
            check_fits(app, receive_bytes(i) + sbufs * msg_ + msg::Endpoint::mapped_bytes(ctx.config, peers.size()));
            check_locked(app, msg::Endpoint::locked_regions(ctx.config, peers.size()));
            eps_.push_back(std::make_unique<msg::Endpoint>(ctx, app, peers));
            ep_by_node_[i] = eps_.back().get();
            app.program = [this](App& a) { program_two_sided(a); };
        }
        return;
    }
    for (unsigned i = 0; i < apps_.size(); ++i) {
        App& app = *apps_[i];
        const std::uint64_t sends = std::max<std::uint64_t>(1, writes_ * out_[i].size());
        const std::uint64_t sbufs = std::min(window_, sends);
        check_fits(app, receive_bytes(i) + sbufs * msg_ + sbufs * app.records_for(msg_) * sizeof(CompletionRecord));
        check_locked(app, {sbufs * app.records_for(msg_) * sizeof(CompletionRecord),
                           ring_entries(i) * sizeof(CompletionRecord)});
        app.program = [this](App& a) { program(a); };
    }
}

std::uint64_t ClusterWorkload::expected_transfers() const {
    std::uint64_t pairs = 0;
    for (const auto& o : out_) pairs += o.size();
    return rounds_ * writes_ * pairs;
}

std::uint32_t ClusterWorkload::ring_entries(unsigned node) const {
    const std::uint64_t expected = peers_[node].in.size() * writes_;   // arrivals per round
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(4096, std::max<std::uint64_t>(16, 2 * expected)));
}

std::uint64_t ClusterWorkload::receive_bytes(unsigned node) const {
    return peers_[node].in.size() * slots_ * msg_;
}

void ClusterWorkload::program(App& app) {
    const unsigned me = app.node();
    Peer& self = peers_[me];
    const std::vector<unsigned>& out = out_[me];
    const std::uint64_t per = app.records_for(msg_);   // records per write
    const std::uint64_t sends = writes_ * out.size();  // per round
    const std::uint64_t sbufs = std::max<std::uint64_t>(1, std::min(window_, sends));
    // Receive area, registered once; source buffers and records for the
    // writes in flight; the notification ring, for two rounds of arrivals
    // (a neighbour can be one round ahead), at most 4096 records.
    const std::uint64_t rx_bytes = receive_bytes(me);
    if (rx_bytes) self.rx_base = app.alloc(rx_bytes, populate_, advice_);
    self.registered = app.register_receive(self.rx_base, rx_bytes);
    const std::uint64_t src_base = app.alloc(sbufs * msg_, populate_, advice_);
    const std::uint64_t records = app.alloc_locked(sbufs * per * sizeof(CompletionRecord));
    const std::uint32_t ring = ring_entries(me);
    app.setup_rx_ring(ring);
    ready_and_wait(app, static_cast<unsigned>(apps_.size()));
    if (!self.registered)
        throw std::runtime_error(app.group() + ": could not register the receive area (rdma.strategy)");

    // Arrivals: cumulative per source, matched by the record's source node
    // and destination address (any order: channels, retransmissions).
    std::vector<std::uint64_t> got(self.in.size(), 0);
    std::uint64_t consumed = 0;
    auto take = [&](std::uint64_t upto) {
        if (upto - consumed > ring)
            throw std::runtime_error(app.group() + ": receive ring overflow (" + std::to_string(upto - consumed) +
                                     " notifications unread, " + std::to_string(ring) + " entries)");
        for (; consumed < upto; ++consumed) {
            const CompletionRecord r = app.read_rx_record(consumed);
            const auto it = self.slot.find(r.node);
            const std::uint64_t lo = it == self.slot.end() ? 0 : self.rx_base + it->second * slots_ * msg_;
            const bool known = it != self.slot.end() && r.addr >= lo && r.addr < lo + slots_ * msg_;
            if (!known || got[it->second] >= rounds_ * writes_) {
                std::ostringstream os;
                os << "DATA MISMATCH: " << app.group() << " notified of a write from node" << r.node << " to 0x"
                   << std::hex << r.addr << std::dec << (known ? " beyond what that node sends" : " it never expected");
                std::cerr << "vrdmasim: " << os.str() << "\n";
                log_.verified(0, false);
                continue;
            }
            ++got[it->second];
        }
    };
    auto round_in = [&](std::uint64_t r) {
        for (std::uint64_t g : got)
            if (g < (r + 1) * writes_) return false;
        return true;
    };

    struct InFlight {
        App::Message m;
        unsigned dst;
        std::uint64_t dst_addr, key;
        sc_time posted;
    };
    std::deque<InFlight> inflight;
    auto retire = [&]() {
        InFlight f = inflight.front();
        inflight.pop_front();
        const CompletionRecord rec = app.complete(f.m);
        if (rec.status == kStatusOk && rec.tag != f.key) {
            std::cerr << "vrdmasim: completion record of transfer " << f.key << " carries tag " << rec.tag << "\n";
            log_.verified(f.m.len, false);
        }
        const sc_time latency = app.now() - f.posted;
        report(app, *apps_[f.dst], f.dst_addr, f.m.len, f.key, rec, &latency, static_cast<int>(me));
        take(app.rx_events());   // look at the ring while sending: it never fills up
    };

    const std::uint64_t n = apps_.size();
    std::uint64_t posts = 0;
    for (std::uint64_t r = 0; r < rounds_; ++r) {
        for (std::uint64_t k = 0; k < writes_; ++k) {
            for (unsigned d : out) {
                // Slot k % slots_ of d's area for me was last written by write
                // k - slots_ to d, at least `window` posts ago: retired.
                if (inflight.size() >= window_) retire();
                const Peer& to = peers_[d];
                const std::uint64_t dst_addr = to.rx_base + (to.slot.at(me) * slots_ + k % slots_) * msg_;
                const std::uint64_t src = src_base + (posts % sbufs) * msg_;
                const std::uint64_t len = std::min(msg_, bytes_ - k * msg_);
                const std::uint64_t key = ((r * n + me) * n + d) * writes_ + k;
                prepare(app, src, *apps_[d], dst_addr, len, key);
                const sc_time posted = app.now();
                log_.posted(posted);
                App::Message m;
                m.src = src;
                m.dst = dst_addr;
                m.len = len;
                m.tag = key;
                m.dst_node = d;
                m.records = records + (posts % sbufs) * per * sizeof(CompletionRecord);
                m.flags = kFlagNotify;   // the receiver counts it from its ring
                if (!app.send(m))
                    throw std::runtime_error(app.group() + ": could not register a message (rdma.strategy): " +
                                             to_string(m.error));
                inflight.push_back({m, d, dst_addr, key, posted});
                ++posts;
            }
        }
        while (!inflight.empty()) retire();
        // The round ends when everything addressed to this node has come.
        take(app.rx_events());
        while (!round_in(r)) {
            app.wait_rx(consumed + 1);
            take(app.rx_events());
        }
    }
    app.finish_registrations();
    ++ended_;
    program_ended();
}

}  // namespace vrdmasim
