#include "workloads/cluster.hpp"
#include "workloads/registry.hpp"

#include "library/messaging/params.hpp"

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
    if (product != n) return "a grid of " + std::to_string(product) + " nodes, but the system has " + std::to_string(n);
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
        do r = next();
        while (r >= limit);
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

}   // namespace cluster

std::unique_ptr<Workload> ClusterWorkload::create(const SimContext& ctx, const std::vector<RdmaProcess*>& apps,
                                                  unsigned job) {
    const Config& c = ctx.config;
    const auto n = static_cast<unsigned>(apps.size());
    auto bad = [&](const std::string& key, const std::string& why) { return c.refuse("workload." + key, why); };
    const std::string& kind = c[params_of<WorkloadParams>().kind];
    if (kind != "alltoall" && kind != "halo" && kind != "incast" && kind != "permutation") return nullptr;
    const std::uint64_t msg = c[params_of<WorkloadParams>().message_size];
    if (msg == 0) throw bad("message-size", kind + " needs messages of at least 1 B");
    // Rounds (alltoall, halo) or bytes per sender (incast, permutation):
    // each kind reads only its own (WorkloadKind::reads).
    const auto iterations = [&c] { return static_cast<std::uint64_t>(c[params_of<WorkloadParams>().iterations]); };
    const auto total = [&c] { return c[params_of<WorkloadParams>().total_bytes]; };
    std::vector<std::vector<unsigned>> out(n);
    if (kind == "alltoall") {
        // Node i starts with i+1 and goes round, so that not everyone sends to node 0 first.
        for (unsigned i = 0; i < n; ++i)
            for (unsigned k = 1; k < n; ++k) out[i].push_back((i + k) % n);
        return std::make_unique<ClusterWorkload>(ctx, apps, kind, std::move(out), iterations(), msg, job);
    }
    if (kind == "halo") {
        cluster::Grid g{};
        const std::string why = cluster::parse_grid(c[params_of<WorkloadParams>().grid], n, g);
        if (!why.empty()) throw bad("grid", why);
        for (unsigned i = 0; i < n; ++i) out[i] = cluster::halo_neighbours(i, g);
        return std::make_unique<ClusterWorkload>(ctx, apps, kind, std::move(out), iterations(), msg, job);
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
        return std::make_unique<ClusterWorkload>(ctx, apps, kind, std::move(out), 1, total(), job);
    }
    if (kind == "permutation") {
        const std::vector<unsigned> p =
            cluster::derangement(n, static_cast<std::uint64_t>(c[params_of<SimParams>().seed]));
        for (unsigned i = 0; i < n; ++i) out[i].push_back(p[i]);
        return std::make_unique<ClusterWorkload>(ctx, apps, kind, std::move(out), 1, total(), job);
    }
    return nullptr;
}

void ClusterWorkload::declare_metrics(MetricRegistry& reg) {
    // One-sided cluster runs: the statistics exist (job 0's) for those only.
    auto one_sided_cluster = [](const Config& c) {
        const std::string& k = c[params_of<WorkloadParams>().kind];
        return (k == "alltoall" || k == "halo" || k == "incast" || k == "permutation") &&
               !c[params_of<WorkloadParams>().two_sided];
    };
    reg.quantile(
        "arrival_wait_us_p50", "us",
        "cluster kinds: median per receiving node and round of the time from the node's own writes completed to "
        "knowing that all the round's writes to it have landed (`workload.arrival_wait`, by "
        "workload.arrivals: ring, counter or per-peer flags).",
        "arrival_wait", 0.5, one_sided_cluster);
    reg.quantile("arrival_wait_us_p99", "us", "cluster kinds: 99th percentile of the same.", "arrival_wait", 0.99,
                 one_sided_cluster);
    reg.quantile("flag_detect_delay_us_p50", "us",
                 "cluster kinds with workload.arrivals = flags: median per receiving node and round of the time "
                 "from the last flag landing (or the node starting to look, if later) to the node having read them "
                 "all (`workload.flag_detect_delay`): a sweep of loads over the flags, one per source.",
                 "flag_detect_delay", 0.5, one_sided_cluster);
    reg.sum_scalars("arrival_state_bytes", "B",
                    "cluster kinds: the most memory any node keeps to detect arrivals: the receive ring's 32 B "
                    "records (ring), two 8 B event counters (counter), 8 B per source (flags).",
                    "arrival_state_bytes", 6, one_sided_cluster);
    reg.sum_counters("flag_loads",
                     "cluster kinds with workload.arrivals = flags: loads of the peers' flags while polling, all "
                     "nodes (each a user load of the node's memory).",
                     {"flag_loads"}, one_sided_cluster);
}

ClusterWorkload::ClusterWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, std::string kind,
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
      window_(static_cast<std::uint64_t>(ctx.config[params_of<WorkloadParams>().window])),
      arrival_wait_(
          shared_histogram(ctx.stats, stats_prefix(job) + "arrival_wait", "us",
                           "per receiving node and round: from the node's own writes of the round completed to "
                           "knowing that every write of the round addressed to it has landed "
                           "(workload.arrivals), the node's core busy polling or asleep in the meantime")),
      flag_writes_(
          ctx.stats.counter(stats_prefix(job) + "flag_writes", "",
                            "workload.arrivals = flags: 8 B flag writes posted, one per destination and round")),
      flag_loads_(ctx.stats.counter(stats_prefix(job) + "flag_loads", "",
                                    "workload.arrivals = flags: loads of peers' flags while polling")),
      flag_delay_(shared_histogram(ctx.stats, stats_prefix(job) + "flag_detect_delay", "us",
                                   "workload.arrivals = flags: per receiving node and round, from the landing of "
                                   "the last of its sources' flags to the node having read them all (a sweep "
                                   "of loads over the flags not seen yet)")),
      arrival_state_(
          ctx.stats.scalar(stats_prefix(job) + "arrival_state_bytes", "B",
                           "the most any node keeps to detect arrivals: receive ring records (ring), the "
                           "event counter registers (counter, one per round parity), or an 8 B flag per source (flags)",
                           Scalar::Kind::Level)),
      early_arrivals_(ctx.stats.counter(stats_prefix(job) + "early_arrivals", "",
                                        "workload.arrivals = flags: rounds a node saw complete before one of their "
                                        "writes to it had completed at its sender (must be 0: a causality check)")) {
    if (msg_ == 0) throw ConfigError("workload.message-size = 0: " + kind_ + " needs messages of at least 1 B");
    writes_ = (bytes_ + msg_ - 1) / msg_;
    slots_ = std::max<std::uint64_t>(1, std::min(window_, writes_));
    for (unsigned i = 0; i < out_.size(); ++i)
        for (unsigned d : out_[i]) {
            if (d >= apps_.size() || d == i) throw std::logic_error(kind_ + ": bad destination in the plan");
            peers_[d].in.push_back(i);
        }
    read_settings(ctx);
    if (read_) plan_reads();
    else if (two_sided_) plan_two_sided(ctx);
    else plan_writes();
}

// workload.two-sided, .arrivals and .operation, and what they refuse.
void ClusterWorkload::read_settings(const SimContext& ctx) {
    two_sided_ = ctx.config[params_of<WorkloadParams>().two_sided];
    const std::string& arrivals = ctx.config[params_of<WorkloadParams>().arrivals];
    arrivals_ = arrivals == "flags" ? Arrivals::Flags : arrivals == "counter" ? Arrivals::Counter : Arrivals::Ring;
    if (two_sided_ && arrivals_ != Arrivals::Ring)
        throw ctx.config.refuse(params_of<WorkloadParams>().arrivals,
                                "is for one-sided writes: the two-sided library matches every message itself "
                                "(workload.two-sided = true)");
    if (arrivals_ == Arrivals::Counter && ctx.config.integer("dma.event-counters") < 2)
        throw ctx.config.refuse(params_of<WorkloadParams>().arrivals,
                                "counter needs two event counters per channel (one per round parity: a "
                                "neighbour one round ahead counts in the other), but " +
                                    ctx.config.describe("dma.event-counters"));
    read_ = ctx.config[params_of<WorkloadParams>().operation] == "read";
    // read with workload.two-sided: refused by Workload::create.
    if (read_ && arrivals_ != Arrivals::Ring)
        throw ctx.config.refuse(params_of<WorkloadParams>().arrivals,
                                "has nothing to detect with workload.operation = read: a node that reads its "
                                "messages learns of each from its own read's completion record");
}

// workload.operation = read: each node reads its messages from its sources.
void ClusterWorkload::plan_reads() {
    for (unsigned i = 0; i < apps_.size(); ++i) {
        if (!apps_[i]) continue;   // its rank builds it
        RdmaProcess& app = *apps_[i];
        const std::uint64_t reads = std::max<std::uint64_t>(1, writes_ * peers_[i].in.size());
        const std::uint64_t rbufs = std::min(window_, reads);
        check_fits(app, receive_bytes(i) + source_bytes_read(i) + rbufs * sizeof(CompletionRecord));
        check_locked(app, {rbufs * sizeof(CompletionRecord)});
        app.program = [this](RdmaProcess& a) { program_read(a); };
    }
}

// workload.two-sided: each node's messages through an endpoint of the
// two-sided library.
void ClusterWorkload::plan_two_sided(const SimContext& ctx) {
    // Endpoint::connect reads every peer's endpoint: not carried across
    // ranks (partition_refusal() refuses it across boards).
    for (unsigned i = 0; i < apps_.size(); ++i)
        if (!apps_[i])
            throw ConfigError("workload.kind = " + kind_ +
                              " with workload.two-sided = true is not built for a run split across MPI ranks: "
                              "a message's latency is the receiver's completion minus the sender's isend, "
                              "one table both programs use (docs/scaling.md); run it as one process");
    ep_by_node_.assign(apps_.size(), nullptr);
    for (unsigned i = 0; i < apps_.size(); ++i) {
        RdmaProcess& app = *apps_[i];
        const std::uint64_t sends = std::max<std::uint64_t>(1, writes_ * out_[i].size());
        const std::uint64_t sbufs = std::min(window_, sends);
        const std::vector<unsigned> peers = msg_peers(i);
        check_fits(app, receive_bytes(i) + sbufs * msg_ + msg::Endpoint::mapped_bytes(ctx.config, peers.size()));
        check_locked(app, msg::Endpoint::locked_regions(ctx.config, peers.size()));
        eps_.push_back(std::make_unique<msg::Endpoint>(ctx, app, peers));
        ep_by_node_[i] = eps_.back().get();
        app.program = [this](RdmaProcess& a) { program_two_sided(a); };
    }
}

// One-sided writes (the default): each node writes its messages to its
// destinations and learns of its arrivals as workload.arrivals says.
void ClusterWorkload::plan_writes() {
    for (unsigned i = 0; i < apps_.size(); ++i) {
        if (!apps_[i]) {   // its rank builds it (and the same figure)
            arrival_state_.set(std::max(arrival_state_.value(), static_cast<double>(arrival_state_bytes(i))));
            continue;
        }
        RdmaProcess& app = *apps_[i];
        const std::uint64_t sends = std::max<std::uint64_t>(1, writes_ * out_[i].size());
        const std::uint64_t sbufs = std::min(window_, sends);
        const std::uint64_t flags = arrivals_ == Arrivals::Flags ? peers_[i].in.size() * 8 + sbufs * 8 : 0;
        check_fits(app,
                   receive_bytes(i) + sbufs * msg_ + sbufs * app.records_for(msg_) * sizeof(CompletionRecord) + flags);
        std::vector<std::uint64_t> locked{sbufs * app.records_for(msg_) * sizeof(CompletionRecord)};
        if (arrivals_ == Arrivals::Ring) locked.push_back(ring_entries(i) * sizeof(CompletionRecord));
        check_locked(app, locked);
        arrival_state_.set(std::max(arrival_state_.value(), static_cast<double>(arrival_state_bytes(i))));
        app.program = [this](RdmaProcess& a) { program(a); };
    }
}

std::string ClusterWorkload::partition_refusal() const {
    std::string why = Workload::partition_refusal();
    if (!why.empty()) return why;
    // The plan's first pair (node i sends to d) across boards, if any: the
    // writes' check goes to d as check steps, the plan and the keys are the
    // same on every rank; what else the programs of such a pair share:
    for (unsigned i = 0; i < out_.size(); ++i)
        for (unsigned d : out_[i]) {
            if (board(i) == board(d)) continue;
            if (read_ && fill_source_)
                return across_boards(i, d, "workload.operation = read",
                                     "the harness fills each message's source on node " + std::to_string(i) +
                                         " when node " + std::to_string(d) +
                                         " posts its read (Workload::prepare), a write into the source node's "
                                         "memory that faults its cold pages in at a time only the reader's rank knows");
            if (two_sided_)
                return across_boards(i, d, "workload.two-sided = true",
                                     "a message's latency is the receiver's completion minus the sender's isend, a "
                                     "time the sender's program writes into one table (posted_at_) and the "
                                     "receiver's reads");
            if (arrivals_ == Arrivals::Flags)
                return across_boards(i, d, "workload.arrivals = flags",
                                     "the causality check (early_arrivals) compares when the receiver saw a round's "
                                     "flag with when the sender saw the round's writes complete, a time the sender's "
                                     "program writes into one table (completed_) and the receiver's reads");
            return "";
        }
    return "";
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

std::uint64_t ClusterWorkload::arrival_state_bytes(unsigned node) const {
    switch (arrivals_) {
    case Arrivals::Ring: return std::uint64_t(ring_entries(node)) * sizeof(CompletionRecord);
    case Arrivals::Counter: return 16;   // two event counter registers
    case Arrivals::Flags: return peers_[node].in.size() * 8;
    }
    return 0;
}

std::uint64_t ClusterWorkload::receive_bytes(unsigned node) const { return peers_[node].in.size() * slots_ * msg_; }

// A node's receive side: what it has learnt of its arrivals so far.
struct ClusterWorkload::Arrival {
    std::uint32_t ring = 0;   // ring: entries
    std::vector<std::uint64_t> got;   // ring: writes seen per source (cumulative)
    std::uint64_t consumed = 0;   // ring: records read
    std::uint64_t flags = 0;   // flags: this node's flag array, one word per source
    std::vector<std::uint64_t> round;   // flags: the last round each source's flag said was complete
};

// A node's send side in program(): its source buffers and completion
// records, the writes in flight (at most `window`, completed in post
// order) and, with flags, the destinations whose flag is due this round.
struct ClusterWorkload::Sender {
    struct InFlight {
        RdmaProcess::Message m;
        unsigned dst;
        std::uint64_t dst_addr, key;
        sc_time posted;
        bool flag;   // flags: the round's flag write to dst
    };
    Sender(RdmaProcess& a, Arrival& arr) : app(a), arrival(arr) {}
    RdmaProcess& app;
    Arrival& arrival;   // completing a write reads the ring too (it never fills up)
    std::uint64_t per = 0;   // records per write
    std::uint64_t sbufs = 0;   // source buffers, each with its records: one per write in flight
    std::uint64_t src_base = 0, records = 0;
    std::uint64_t flag_src = 0;   // flags: the sources of this node's flag writes, one per buffer
    std::deque<InFlight> inflight;
    std::map<unsigned, std::uint64_t> done_to;   // this round's writes to each destination that completed
    std::deque<unsigned> flag_due;   // destinations whose flag this round is due
    std::uint64_t posts = 0, round = 0;
};

void ClusterWorkload::program(RdmaProcess& app) {
    const unsigned me = app.node();
    const Peer& self = peers_[me];
    Arrival a;
    Sender s(app, a);
    map_buffers(s);
    publish(app, kRxBase, self.rx_base);
    if (arrivals_ == Arrivals::Flags) publish(app, kFlags, a.flags);
    ready_and_wait(app, static_cast<unsigned>(apps_.size()));
    if (!self.registered)
        throw std::runtime_error(app.group() + ": could not register the receive area (rdma.strategy)");
    for (s.round = 0; s.round < rounds_; ++s.round) {
        s.done_to.clear();
        for (std::uint64_t k = 0; k < writes_; ++k) {
            for (unsigned d : out_[me]) {
                // Slot k % slots_ of d's area for me was last written by write
                // k - slots_ to d, at least `window` posts ago: retired.
                make_room(s);
                post_flags(s);
                make_room(s);
                post_write(s, d, k);
            }
        }
        finish_sends(s);
        wait_arrivals(app, a, s.round);
    }
    app.finish_registrations();
    ++ended_;
    program_ended(app);
}

void ClusterWorkload::map_buffers(Sender& s) {
    RdmaProcess& app = s.app;
    const unsigned me = app.node();
    Peer& self = peers_[me];
    Arrival& a = s.arrival;
    s.per = app.records_for(msg_);
    const std::uint64_t sends = writes_ * out_[me].size();   // per round
    s.sbufs = std::max<std::uint64_t>(1, std::min(window_, sends));
    // Receive area, registered once; source buffers and records for the
    // writes in flight; the arrival detection's own memory: the
    // notification ring (two rounds of arrivals, a neighbour can be one
    // round ahead, at most 4096 records), or the flag array.
    const std::uint64_t rx_bytes = receive_bytes(me);
    if (rx_bytes) self.rx_base = app.alloc(rx_bytes, populate_, advice_);
    self.registered = app.register_receive(self.rx_base, rx_bytes);
    s.src_base = app.alloc(s.sbufs * msg_, populate_, advice_);
    s.records = app.alloc_locked(s.sbufs * s.per * sizeof(CompletionRecord));
    a.got.assign(self.in.size(), 0);
    if (arrivals_ == Arrivals::Ring) {
        a.ring = ring_entries(me);
        app.setup_rx_ring(a.ring);
    } else if (arrivals_ == Arrivals::Flags) {
        // The flags are data the peers write: mapped and registered as the
        // receive area is; the sources of this node's own flag writes too.
        a.round.assign(self.in.size(), 0);
        if (!self.in.empty()) {
            a.flags = app.alloc(self.in.size() * 8, true);
            app.watch_polled(a.flags, self.in.size() * 8);
            if (!app.register_receive(a.flags, self.in.size() * 8))
                throw std::runtime_error(app.group() + ": could not register the flag array (rdma.strategy)");
        }
        s.flag_src = app.alloc(s.sbufs * 8, true);
    }
}

void ClusterWorkload::retire(Sender& s) {
    RdmaProcess& app = s.app;
    const unsigned me = app.node();
    Sender::InFlight f = s.inflight.front();
    s.inflight.pop_front();
    const CompletionRecord rec = app.complete(f.m);
    if (f.flag) {
        // A lost flag would leave its node waiting for ever: stop loudly.
        if (rec.status != kStatusOk || rec.tag != f.key)
            throw std::runtime_error(app.group() + ": the flag write of round " + std::to_string(s.round) +
                                     " to node " + std::to_string(f.dst) + " failed");
        log_.traffic_done(app.now());
        return;
    }
    if (rec.status == kStatusOk && rec.tag != f.key) {
        std::cerr << "vrdmasim: completion record of transfer " << f.key << " carries tag " << rec.tag << "\n";
        log_.verified(f.m.len, false);
    }
    const sc_time latency = app.now() - f.posted;
    // A transfer refused at registration rang no doorbell: no latency.
    report(app, f.dst, f.dst_addr, f.m.len, f.key, rec, f.m.parts > 0 ? &latency : nullptr, static_cast<int>(me));
    if (arrivals_ == Arrivals::Ring) take_ring(app, s.arrival, app.rx_events());   // the ring never fills up
    if (arrivals_ == Arrivals::Flags && ++s.done_to[f.dst] == writes_) {
        s.flag_due.push_back(f.dst);
        completed_[{me, f.dst, s.round}] = app.now();
    }
}

void ClusterWorkload::make_room(Sender& s) {
    while (s.inflight.size() >= window_) retire(s);
}

void ClusterWorkload::post_flags(Sender& s) {
    RdmaProcess& app = s.app;
    const unsigned me = app.node();
    const std::uint64_t n = apps_.size();
    // Each destination's flag once its writes of the round have completed
    // (completion: the data is in its memory, whatever the route taken).
    while (!s.flag_due.empty()) {
        make_room(s);
        const unsigned d = s.flag_due.front();
        s.flag_due.pop_front();
        const std::uint64_t src = s.flag_src + (s.posts % s.sbufs) * 8;
        app.store(src, s.round + 1);
        RdmaProcess::Message m;
        m.src = src;
        // The destinations' areas as their programs published them before the barrier.
        m.dst = published(d, kFlags) + peers_[d].slot(me) * 8;
        m.len = 8;
        m.tag = (std::uint64_t(1) << 62) | ((s.round * n + me) * n + d);
        m.dst_node = d;
        m.records = s.records + (s.posts % s.sbufs) * s.per * sizeof(CompletionRecord);
        if (!app.send(m))
            throw std::runtime_error(app.group() +
                                     ": could not register a flag write (rdma.strategy): " + to_string(m.error));
        flag_writes_.inc();
        s.inflight.push_back({m, d, m.dst, m.tag, app.now(), true});
        ++s.posts;
    }
}

void ClusterWorkload::post_write(Sender& s, unsigned d, std::uint64_t k) {
    RdmaProcess& app = s.app;
    const unsigned me = app.node();
    const std::uint64_t n = apps_.size();
    const Peer& to = peers_[d];
    const std::uint64_t dst_addr = published(d, kRxBase) + (to.slot(me) * slots_ + k % slots_) * msg_;
    const std::uint64_t src = s.src_base + (s.posts % s.sbufs) * msg_;
    const std::uint64_t len = std::min(msg_, bytes_ - k * msg_);
    const std::uint64_t key = ((s.round * n + me) * n + d) * writes_ + k;
    prepare(app, me, src, d, dst_addr, len, key);
    const sc_time posted = app.now();
    log_.posted(posted);
    RdmaProcess::Message m;
    m.src = src;
    m.dst = dst_addr;
    m.len = len;
    m.tag = key;
    m.dst_node = d;
    m.records = s.records + (s.posts % s.sbufs) * s.per * sizeof(CompletionRecord);
    // ring: the receiver reads its notification record; counter:
    // the write counts on the receiver's event counter of the
    // round's parity; flags: nothing (the flag says it later).
    m.flags = arrivals_ == Arrivals::Ring ? kFlagNotify : arrivals_ == Arrivals::Counter ? kFlagCounter : 0;
    m.counter = static_cast<std::uint32_t>(s.round % 2);
    if (!app.send(m))
        throw std::runtime_error(app.group() + ": could not register a message (rdma.strategy): " + to_string(m.error));
    s.inflight.push_back({m, d, dst_addr, key, posted, false});
    ++s.posts;
}

void ClusterWorkload::finish_sends(Sender& s) {
    while (!s.inflight.empty() || !s.flag_due.empty()) {
        if (!s.flag_due.empty()) post_flags(s);
        else retire(s);
    }
}

void ClusterWorkload::wait_arrivals(RdmaProcess& app, Arrival& a, std::uint64_t r) {
    // The round ends when everything addressed to this node has come.
    const sc_time waiting = app.now();
    switch (arrivals_) {
    case Arrivals::Ring: wait_ring(app, a, r); break;
    case Arrivals::Counter: wait_counter(app, a, r); break;
    case Arrivals::Flags: wait_flags(app, a, r); break;
    }
    if (!peers_[app.node()].in.empty()) arrival_wait_.add(to_us(app.now() - waiting));
}

void ClusterWorkload::take_ring(RdmaProcess& app, Arrival& a, std::uint64_t upto) {
    // Arrivals: cumulative per source, matched by the record's source node
    // and destination address (any order: channels, retransmissions).
    const Peer& self = peers_[app.node()];
    if (upto - a.consumed > a.ring)
        throw std::runtime_error(app.group() + ": receive ring overflow (" + std::to_string(upto - a.consumed) +
                                 " notifications unread, " + std::to_string(a.ring) + " entries)");
    for (; a.consumed < upto; ++a.consumed) {
        const CompletionRecord r = app.read_rx_record(a.consumed);
        const std::size_t si = self.find_slot(r.node);
        const std::uint64_t lo = si == self.in.size() ? 0 : self.rx_base + si * slots_ * msg_;
        const bool known = si != self.in.size() && r.addr >= lo && r.addr < lo + slots_ * msg_;
        if (!known || a.got[si] >= rounds_ * writes_) {
            std::ostringstream os;
            os << "DATA MISMATCH: " << app.group() << " notified of a write from node" << r.node << " to 0x" << std::hex
               << r.addr << std::dec << (known ? " beyond what that node sends" : " it never expected");
            std::cerr << "vrdmasim: " << os.str() << "\n";
            log_.verified(0, false);
            continue;
        }
        ++a.got[si];
    }
}

void ClusterWorkload::wait_ring(RdmaProcess& app, Arrival& a, std::uint64_t r) {
    auto round_in = [&]() {
        for (std::uint64_t g : a.got)
            if (g < (r + 1) * writes_) return false;
        return true;
    };
    take_ring(app, a, app.rx_events());
    while (!round_in()) {
        app.wait_rx(a.consumed + 1);
        take_ring(app, a, app.rx_events());
    }
}

void ClusterWorkload::wait_counter(RdmaProcess& app, Arrival&, std::uint64_t r) {
    // The writes of round r count on event counter r % 2 of the receiving
    // channel (a neighbour may be one round ahead, never two: its writes of
    // round r + 1 count on the other counter). The counter of parity r % 2
    // has counted rounds r % 2, r % 2 + 2, ..., r: it reaches
    // (r / 2 + 1) arrivals per round when round r is in.
    app.wait_counter(static_cast<unsigned>(r % 2), (r / 2 + 1) * writes_ * peers_[app.node()].in.size());
}

void ClusterWorkload::wait_flags(RdmaProcess& app, Arrival& a, std::uint64_t r) {
    // Spin over the peers' flags, each a timed load of this node's memory,
    // until every one says round r is complete; a sweep reads only the flags
    // not seen yet. Each sweep starts in step with the simulation (a wait),
    // so that it sees every flag that landed before it began.
    const Peer& self = peers_[app.node()];
    const sc_time start = app.now();
    sc_time landed = sc_core::SC_ZERO_TIME;   // the latest landing of a flag that completed the round
    for (;;) {
        bool all = true;
        for (std::size_t s = 0; s < self.in.size(); ++s) {
            if (a.round[s] > r) continue;
            sc_time written;
            const std::uint64_t v = app.load_polled(a.flags + s * 8, &written);
            if (v > r) landed = std::max(landed, written);
            flag_loads_.inc();
            // A source is at most one round ahead: to complete round r + 1 it
            // needs this node's writes of round r + 1, sent after round r.
            if (v > r + 2 || v < a.round[s])
                throw std::runtime_error(app.group() + ": flag of node " + std::to_string(self.in[s]) + " reads " +
                                         std::to_string(v) + " in round " + std::to_string(r) +
                                         ": a source is never more than one round ahead, nor goes back");
            a.round[s] = v;
            if (v <= r) all = false;
        }
        if (all) break;
        app.sync_time();
    }
    // Each source's flag came after its writes of the round had completed.
    for (unsigned src : self.in) {
        const auto it = completed_.find({src, app.node(), r});
        if (it == completed_.end() || it->second > app.now()) {
            early_arrivals_.inc();
            std::cerr << "vrdmasim: " << app.group() << " saw round " << r << " from node " << src
                      << " complete before its writes had completed\n";
        }
        if (it != completed_.end()) completed_.erase(it);
    }
    app.busy_since("poll", start);   // the core spun all along
    // A flag seen at the first look may have landed long before (the node
    // was still sending): the delay counts from the later of the two.
    if (!self.in.empty()) flag_delay_.add(to_us(app.now() - std::max(landed, start)));
}

namespace {

// alltoall, halo, incast, permutation: one family, one factory (ClusterWorkload::create).
WorkloadKind cluster_kind(const std::string& name, int order, const std::string& help) {
    WorkloadKind k;
    k.name = name;
    k.order = order;
    k.help = name + ": " + help;
    k.create = [](const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job,
                  const std::vector<FileSystem*>&) { return ClusterWorkload::create(ctx, apps, job); };
    k.read_refusal = WorkloadKind::built;
    k.two_sided_refusal = WorkloadKind::built;   // workload.two-sided: isend and irecv
    // ClusterWorkload::create and the constructor (and workload.arrivals
    // its read_settings); each kind its own rounds or bytes, halo its grid,
    // incast its receiver and senders.
    k.reads = {"workload.message-size", "workload.window", "workload.arrivals"};
    if (name == "alltoall" || name == "halo") k.reads.push_back("workload.iterations");
    if (name == "incast" || name == "permutation") k.reads.push_back("workload.total-bytes");
    if (name == "halo") k.reads.push_back("workload.grid");
    if (name == "incast") k.reads.insert(k.reads.end(), {"workload.dst-node", "workload.senders"});
    if (name == "alltoall") k.declare_metrics = ClusterWorkload::declare_metrics;   // the family's, once
    return k;
}

const WorkloadKind::Declare alltoall(cluster_kind("alltoall", 40,
                                                  "every node sends message-size to every other, `iterations` rounds"));
const WorkloadKind::Declare halo(
    cluster_kind("halo", 50, "3-D periodic nearest-neighbour exchange on workload.grid, `iterations` rounds"));
const WorkloadKind::Declare incast([] {
    WorkloadKind k = cluster_kind("incast", 60, "workload.senders nodes send total-bytes each to dst-node");
    // workload.arrivals's effect (tests/system/param_effect_test.cpp), the
    // family's: how a node learns its arrivals are in, ring records, the
    // event counter, or per-peer flags (one round: the counter takes one).
    k.trial.effects.emplace_back("workload.arrivals", WorkloadKind::Settings{{"workload.dst-node", "0"},
                                                                             {"workload.total-bytes", "32KiB"},
                                                                             {"workload.message-size", "8KiB"}});
    return k;
}());
const WorkloadKind::Declare permutation(cluster_kind(
    "permutation", 70,
    "each node sends total-bytes to its image under a seeded (sim.seed) permutation without fixed points"));

}   // namespace

}   // namespace vrdmasim
