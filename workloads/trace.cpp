#include "workloads/trace.hpp"
#include "workloads/registry.hpp"

#include <otf2/OTF2_Events.h>

#include <algorithm>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>
#include <tuple>

#include "library/collectives/params.hpp"
#include "library/messaging/params.hpp"
#include "workloads/collective_data.hpp"
#include "workloads/mpi/communicators.hpp"

namespace vrdmasim {

using sc_core::sc_time;

namespace {
coll::Op collective_op(int op) {
    switch (op) {
    case OTF2_COLLECTIVE_OP_BARRIER: return coll::Op::Barrier;
    case OTF2_COLLECTIVE_OP_BCAST: return coll::Op::Bcast;
    case OTF2_COLLECTIVE_OP_REDUCE: return coll::Op::Reduce;
    case OTF2_COLLECTIVE_OP_ALLREDUCE: return coll::Op::Allreduce;
    case OTF2_COLLECTIVE_OP_ALLGATHER: return coll::Op::Allgather;
    case OTF2_COLLECTIVE_OP_ALLTOALL: return coll::Op::Alltoall;
    case OTF2_COLLECTIVE_OP_GATHER: return coll::Op::Gather;
    case OTF2_COLLECTIVE_OP_SCATTER: return coll::Op::Scatter;
    case OTF2_COLLECTIVE_OP_SCAN: return coll::Op::Scan;
    case OTF2_COLLECTIVE_OP_EXSCAN: return coll::Op::Exscan;
    case OTF2_COLLECTIVE_OP_GATHERV: return coll::Op::Gatherv;
    case OTF2_COLLECTIVE_OP_SCATTERV: return coll::Op::Scatterv;
    case OTF2_COLLECTIVE_OP_ALLGATHERV: return coll::Op::Allgatherv;
    case OTF2_COLLECTIVE_OP_ALLTOALLV: return coll::Op::Alltoallv;
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER: return coll::Op::ReduceScatter;
    case OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK: return coll::Op::ReduceScatterBlock;
    default: throw std::logic_error("trace: a collective check() lets through");
    }
}
}   // namespace

TraceParams::TraceParams()
    : set("trace", "trace replay (workload.kind = trace): an MPI application's OTF2 trace"),
      file(set.path("file", "",
                    "the OTF2 archive's anchor file (NAME.otf2, beside its NAME.def and NAME/ directory), as "
                    "Score-P writes it; a path, relative to the config or sweep file that sets it (on the command "
                    "line: to the directory vrdmasim runs in); configs/traces/ has the project's test traces")),
      compute_scale(set.real("compute-scale", "1",
                             "the recorded compute time between two MPI calls of a rank is replayed times this "
                             "(a trace from a faster CPU than the simulated Cortex-A53s: above 1; an experiment's "
                             "choice)")
                        .range("0", "1000")),
      mapping(set.choice("mapping", "linear", {"linear", "round-robin", "file"},
                         "which node each MPI rank runs on (one rank a node; with node.processes, job p's process "
                         "of that node): linear (rank r on node r), round-robin (ranks dealt across the QFDBs in "
                         "turn, rank r on the (r / boards)-th FPGA of QFDB r mod boards, as mpirun --map-by node "
                         "deals them across hosts), file (trace.mapping-file)")),
      mapping_file(set.path("mapping-file", "",
                            "with trace.mapping = file: one node index per line, rank 0's first (# starts a "
                            "comment); the node of x, y, z, FPGA f is ((z * y-size + y) * x-size + x) * 4 + f, "
                            "as in the run's node names; a path, relative to the config or sweep file that sets it "
                            "(on the command line: to the directory vrdmasim runs in)")),
      buffers(set.choice("buffers", "auto", {"auto", "invented"},
                         "the application's message and collective buffers: auto (at the program's own virtual "
                         "addresses when every message and collective of the trace carries them, as a trace "
                         "vrdmasim recorded does, mpi.record, and the run's findings say so; by the replay's rule "
                         "when none does, as in Score-P's traces; refused when some do), invented (by the rule "
                         "whatever the trace carries: one buffer per direction, peer and length, reused once "
                         "free)")) {}

void TraceWorkload::declare_params(ParamRegistry& reg) { reg.add(params_of<TraceParams>().set); }

void TraceWorkload::declare_metrics(MetricRegistry& reg) {
    const auto run = [](const Config& c) { return c[params_of<WorkloadParams>().kind] == "trace"; };
    reg.add(
        "trace_app_time_us", "us",
        "trace replay: the application's time to solution, from the first rank's start to the last rank's end "
        "(`workload.trace.app_time`); with node.processes, each job replays its own copy and this is the "
        "longest job's (`jobP.workload.trace.app_time`); 0 in other runs.",
        [run](const MetricInputs& in) {
            double longest = 0;
            if (run(in.config))
                for (unsigned p = 0; p < in.config[params_of<NodeParams>().processes]; ++p) {
                    const Scalar* s = in.stats.find_scalar(stats_prefix(p) + "trace.app_time");
                    if (!s)
                        throw std::logic_error("trace_app_time_us: no statistic " + stats_prefix(p) + "trace.app_time");
                    longest = std::max(longest, s->value());
                }
            return format_metric(longest);
        });
    reg.sum_scalars("trace_compute_us", "us",
                    "trace replay: compute time replayed, over every rank (`workload.trace.compute_time`); 0 in other "
                    "runs.",
                    "trace.compute_time", 6, run);
    reg.sum_scalars("trace_mpi_us", "us",
                    "trace replay: time in MPI calls, over every rank (`workload.trace.mpi_time`); 0 in other runs.",
                    "trace.mpi_time", 6, run);
    reg.sum_counters("trace_messages",
                     "trace replay: point-to-point messages sent (`workload.trace.messages`); 0 in "
                     "other runs.",
                     {"trace.messages"}, run);
    reg.sum_counters("trace_collectives",
                     "trace replay: collective calls, each rank's counted "
                     "(`workload.trace.collectives`); 0 in other runs.",
                     {"trace.collectives"}, run);
}

TraceWorkload::TraceWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job)
    : Workload(ctx, job),
      messages_(ctx.stats.counter(stats_prefix(job) + "trace.messages", "", "point-to-point messages sent")),
      collectives_(ctx.stats.counter(stats_prefix(job) + "trace.collectives", "", "collective calls, every rank's")),
      events_(ctx.stats.counter(stats_prefix(job) + "trace.events", "", "trace events replayed")),
      compute_us_(ctx.stats.scalar(stats_prefix(job) + "trace.compute_time", "us", "compute replayed, every rank",
                                   Scalar::Kind::Sum)),
      mpi_us_(ctx.stats.scalar(stats_prefix(job) + "trace.mpi_time", "us", "time in MPI calls, every rank",
                               Scalar::Kind::Sum)),
      app_us_(ctx.stats.scalar(stats_prefix(job) + "trace.app_time", "us", "first rank's start to last rank's end",
                               Scalar::Kind::Level)) {
    const Config& c = ctx.config;
    const auto& P = params_of<TraceParams>();
    const std::string file = c[P.file];
    if (file.empty()) throw c.refuse(P.file, "workload.kind = trace replays a trace: name its OTF2 anchor file");
    reader_ = std::make_unique<TraceReader>(c, P.file.name(), file);
    ranks_ = reader_->ranks();
    if (ranks_ > apps.size())
        throw c.refuse(P.file, file + " has " + std::to_string(ranks_) + " ranks, the system " +
                                   std::to_string(apps.size()) + " nodes (one rank a node)");
    // Every event: one the replay cannot do is refused now (exit 2).
    BytesPlan plan;
    const TraceSummary summary = check_and_plan(plan);
    planned_ = summary.receives + summary.collective_calls;
    if (plan.known) planned_bytes_ = static_cast<std::int64_t>(plan.bytes);
    check_largest(c, summary, apps, file);
    scale_ = c[P.compute_scale];
    openmpi_ = reader_->recorded_by_vrdmasim();
    recorded_ = choose_buffers(c, summary, file);
    if (recorded_)
        ctx.stats
            .counter(stats_prefix(job) + "trace.recorded_buffers", "",
                     "1: the replay is at the program's recorded buffer addresses (trace.buffers)")
            .inc();
    const std::vector<unsigned> where = map_ranks(c, static_cast<unsigned>(apps.size()));
    for (unsigned r = 0; r < ranks_; ++r) {
        apps_.push_back(apps[where[r]]);
        nodes_.push_back(apps[where[r]]->node());
        rank_compute_.push_back(
            &ctx.stats.scalar(stats_prefix(job) + "trace.rank" + std::to_string(r) + ".compute_time", "us",
                              "rank r's compute replayed", Scalar::Kind::Sum));
        rank_mpi_.push_back(&ctx.stats.scalar(stats_prefix(job) + "trace.rank" + std::to_string(r) + ".mpi_time", "us",
                                              "rank r's time in MPI calls", Scalar::Kind::Sum));
    }
    build_endpoints(ctx, summary, collective_ops(c, summary, file), apps.size());
    state_.resize(ranks_);
    first_ = sc_core::sc_max_time();
    if (summary.one_sided) {
        if (!recorded_)
            throw c.refuse(P.buffers, file +
                                          " has one-sided calls, which are replayed at the program's recorded "
                                          "addresses only (its windows): not with trace.buffers = invented");
        for (RdmaProcess* app : apps_) check_locked(*app, {MpiOneSided::kPage});   // the windows' records and locks
        planned_ += summary.rma_transfers;
        for (const auto& [len, n] : summary.puts) planned_ += n * MpiOneSided::put_transfers(*apps_.at(0), len);
        one_sided_host_ = std::make_unique<OneSidedHost>(*this);
        windows_ = std::make_unique<MpiOneSided>(*one_sided_host_, *this, ctx.stats, stats_prefix(job) + "trace.",
                                                 apps_, nodes_, eps_);
    }
}

// What the library's windows need of the replay (MpiOneSided::Host), as
// the mpi workload gives them.
struct TraceWorkload::OneSidedHost : MpiOneSided::Host {
    explicit OneSidedHost(TraceWorkload& w) : w(w) {}
    TraceWorkload& w;
    void map(RdmaProcess& app, unsigned rank, std::uint64_t va, std::uint64_t len) override {
        w.state_[rank].program.map(app, va, len, "trace: rank " + std::to_string(rank));
    }
    std::uint64_t scratch(RdmaProcess& app, unsigned rank, std::uint64_t len) override {
        return w.state_[rank].program.scratch(app, len, w.populate_, w.advice_);
    }
    const std::vector<unsigned>& members(unsigned, std::uint32_t ctx) const override {
        return w.reader_->communicators().at(ctx);
    }
    coll::Communicator& collectives(RdmaProcess& app, unsigned rank, std::uint32_t ctx) override {
        return w.communicator(app, rank, *w.eps_[app.node()], ctx, *w.state_[rank].comms);
    }
    coll::Algorithm algorithm(unsigned rank, coll::Op op, unsigned n, std::uint64_t bytes) const override {
        coll::Algorithm a = coll::Algorithm::Auto;
        std::string why;
        if (!coll::resolve(op, coll::configured_algorithm(w.ctx_.config, op), n, bytes, a, why))
            throw std::runtime_error("trace: rank " + std::to_string(rank) + ": a window's " + coll::name_of(op) +
                                     ": " + why);
        return a;
    }
    void meet(RdmaProcess& app, unsigned, std::uint32_t ctx, std::uint64_t key, unsigned n,
              const mpiwire::Reply&) override {
        w.meet(app, {ctx, key}, n);
    }
    std::uint64_t& fills(unsigned rank) override { return w.state_[rank].fills; }
};

TraceWorkload::~TraceWorkload() = default;

void TraceWorkload::one_sided(RdmaProcess& app, unsigned rank, const TraceEvent& e) {
    const auto op = static_cast<mpiwire::Op>(e.op);
    if (op == mpiwire::Op::Wait || op == mpiwire::Op::Test) return rma_request_end(app, rank, e);
    Rank& r = state_[rank];
    mpiwire::Call c{};
    c.op = static_cast<decltype(c.op)>(e.op);
    c.comm = e.comm;
    c.peer = static_cast<std::int32_t>(e.peer);
    c.va = e.va;
    c.va2 = e.va2;
    c.va3 = e.va3;
    c.bytes = e.length;
    c.disp = e.disp;
    c.offset = e.offset;
    c.amo = e.amo;
    c.tag = static_cast<std::int32_t>(e.tag);
    c.root = static_cast<std::int32_t>(e.root);
    const bool create = static_cast<mpiwire::Op>(e.op) == mpiwire::Op::WinCreate;
    if (!create) {
        const auto w = r.windows.find(e.win);
        if (w == r.windows.end())
            throw std::runtime_error("trace: rank " + std::to_string(rank) + " uses window " + std::to_string(e.win) +
                                     ", which it has not created");
        c.win = w->second;
    }
    if (mpiwire::is_active_target(static_cast<mpiwire::Op>(e.op))) return active_target(app, rank, e, c);
    mpiwire::Reply reply{};
    windows_->serve(app, rank, c, reply);
    if (create) r.windows[e.win] = reply.request;
    if (mpiwire::operation_of(op) != op &&
        !r.rma_requests.emplace(e.request, std::make_pair(reply.request, false)).second)
        throw std::runtime_error("trace: rank " + std::to_string(rank) + " starts request-based RMA request " +
                                 std::to_string(e.request) + " twice");
    if (static_cast<mpiwire::Op>(e.op) == mpiwire::Op::WinFree) r.windows.erase(e.win);
}

void TraceWorkload::active_target(RdmaProcess& app, unsigned rank, const TraceEvent& e, mpiwire::Call& c) {
    const auto op = static_cast<mpiwire::Op>(e.op);
    if ((op == mpiwire::Op::WinPost || op == mpiwire::Op::WinStart) && !e.group)
        throw std::logic_error("trace: an MPI_Win_post or MPI_Win_start without its group");
    const std::vector<std::uint64_t> none, &group = e.group ? *e.group : none;
    c.count = group.size();
    mpiwire::Reply reply{};
    if (op != mpiwire::Op::WinWait && op != mpiwire::Op::WinTest)
        return windows_->active_target(app, rank, c, group, reply);
    // An exposure epoch's end as the program saw it: a wait, or tests
    // (the last with flag 1). Replayed at another configuration, the epoch
    // may end at an earlier test (the later ones and the wait find it
    // ended: nothing to do) or not at the one that ended it in the
    // recording (then waited for, as the program's tests would have gone
    // on until it ended).
    if (!windows_->exposing(rank, c.win)) return;
    windows_->active_target(app, rank, c, group, reply);
    if (op == mpiwire::Op::WinTest && !reply.flag && e.tag) {
        c.op = static_cast<std::uint32_t>(mpiwire::Op::WinWait);
        windows_->active_target(app, rank, c, group, reply);
    }
}

void TraceWorkload::rma_request_end(RdmaProcess& app, unsigned rank, const TraceEvent& e) {
    Rank& r = state_[rank];
    const auto it = r.rma_requests.find(e.request);
    const bool test = static_cast<mpiwire::Op>(e.op) == mpiwire::Op::Test;
    if (it == r.rma_requests.end() || (test && it->second.second))
        throw std::runtime_error("trace: rank " + std::to_string(rank) + (test ? " tests" : " completes") +
                                 " request-based RMA request " + std::to_string(e.request) +
                                 (it == r.rma_requests.end() ? ", which it has not started" : ", which a test ended"));
    if (!test && it->second.second) {   // the test before it ended it
        r.rma_requests.erase(it);
        return;
    }
    mpiwire::Call c{};
    c.op = static_cast<decltype(c.op)>(e.op);
    c.request = it->second.first;
    mpiwire::Reply reply{};
    windows_->end_request(app, rank, c, reply);
    if (test) it->second.second = reply.flag != 0;
    else r.rma_requests.erase(it);
}

bool TraceWorkload::choose_buffers(const Config& c, const TraceSummary& summary, const std::string& file) const {
    const auto& P = params_of<TraceParams>();
    const std::string how = c[P.buffers];
    const std::uint64_t with = summary.with_buffers, without = summary.without_buffers;
    if (how == "invented") return false;
    if (with > 0 && without > 0)
        throw c.refuse(P.buffers, file + ": " + std::to_string(with) +
                                      " of its messages and collectives carry the "
                                      "program's buffer addresses, " +
                                      std::to_string(without) +
                                      " do not: trace.buffers = invented replays it by the rule");
    if (with > 0 && !c.boolean("smmu.enabled"))
        throw c.refuse(P.buffers, file +
                                      " carries the program's buffer addresses, which are virtual: they need "
                                      "smmu.enabled = true (trace.buffers = invented replays the trace with "
                                      "physical addresses)");
    return with > 0;
}

// The largest message: it must fit in its rank's memory, and the host must
// hold it at both ends and in the byte check's copy.
void TraceWorkload::check_largest(const Config& c, const TraceSummary& summary, const std::vector<RdmaProcess*>& apps,
                                  const std::string& file) const {
    if (summary.largest == 0) return;
    const auto& P = params_of<TraceParams>();
    const std::string which = "its largest message, " + std::to_string(summary.largest) + " B (rank " +
                              std::to_string(summary.largest_rank) + " at tick " +
                              std::to_string(summary.largest_tick) + ")";
    for (const RdmaProcess* a : apps)
        if (a && summary.largest > a->capacity())
            throw c.refuse(P.file, file + ": " + which + " does not fit in a node's memory: at most " +
                                       std::to_string(a->capacity()) + " B can be mapped (dram.size + ssd.swap-size)");
    check_host_memory(P.file.name(), summary.largest > ~0ull / 3 ? ~0ull : 3 * summary.largest,
                      file + ": " + which +
                          " is held in the sender's and the receiver's simulated memory and in the byte "
                          "check's copy");
}

// The collectives the trace calls, each with its algorithm
// (collective.*-algorithm) checked against the trace's number of ranks now.
std::vector<std::pair<int, coll::Op>> TraceWorkload::collective_ops(const Config& c, const TraceSummary& summary,
                                                                    const std::string& file) const {
    std::vector<std::pair<int, coll::Op>> ops;
    const auto& comms = reader_->communicators();
    for (int op : summary.collectives) {
        const coll::Op o = collective_op(op);
        for (std::uint32_t context : summary.collective_comms.at(op)) {
            const unsigned n = static_cast<unsigned>(comms.at(context).size());
            coll::Algorithm chosen;
            std::string why;
            if (!coll::resolve(o, coll::configured_algorithm(c, o), n, 8, chosen, why))
                throw c.refuse(*coll::algorithm_param(o),
                               why + " (" + file + " calls " + coll::name_of(o) +
                                   (context ? " on a communicator of " + std::to_string(n) + " ranks" : "") + ")");
        }
        ops.push_back({op, o});
    }
    return ops;
}

// Each rank's endpoint has the peers it needs: its point-to-point peers in
// the trace and, with two-sided collectives, the partners of the
// collectives it calls (so that a trace of thousands of ranks does not keep
// eager slots for every pair); and its program.
void TraceWorkload::build_endpoints(const SimContext& ctx, const TraceSummary& summary,
                                    const std::vector<std::pair<int, coll::Op>>& ops, std::size_t nodes) {
    const Config& c = ctx.config;
    const bool one_sided = c[params_of<CollParams>().transport] == "one-sided";
    eps_.assign(nodes, nullptr);
    for (unsigned r = 0; r < ranks_; ++r) {
        std::set<unsigned> peer_ranks(summary.peers[r].begin(), summary.peers[r].end());
        // Recorded by vrdmasim: every rank a peer, as the mpi workload's
        // endpoints have them.
        for (unsigned q = 0; openmpi_ && q < ranks_; ++q) peer_ranks.insert(q);
        if (!one_sided)
            for (const auto& [op, o] : ops)
                for (std::uint32_t context : summary.collective_comms.at(op)) {
                    // The partners of its rank there, as ranks of the world.
                    const std::vector<unsigned>& members = reader_->communicators().at(context);
                    const auto me = std::find(members.begin(), members.end(), r);
                    if (me == members.end()) continue;
                    const auto n = static_cast<unsigned>(members.size());
                    const auto at = static_cast<unsigned>(me - members.begin());
                    for (unsigned q : coll::Communicator::partners(o, coll::configured_algorithm(c, o), n, at))
                        peer_ranks.insert(members[q]);
                }
        peer_ranks.erase(r);
        std::vector<unsigned> peers;
        for (unsigned q : peer_ranks) peers.push_back(nodes_[q]);
        check_fits(*apps_[r], msg::Endpoint::mapped_bytes(c, peers.size()) +
                                  (one_sided ? coll::OneSided::mapped_bytes(ranks_) : 0));
        check_locked(*apps_[r], msg::Endpoint::locked_regions(c, peers.size()));
        if (one_sided) {
            check_locked(*apps_[r], coll::OneSided::locked_regions());
            one_sided_.push_back(std::make_unique<coll::OneSided>(c, *apps_[r], nodes_, r));
            os_.push_back(one_sided_.back().get());
        }
        owned_.push_back(std::make_unique<msg::Endpoint>(ctx, *apps_[r], peers));
        eps_[nodes_[r]] = owned_.back().get();
        apps_[r]->program = [this, r](RdmaProcess& app) { program(app, r); };
    }
}

std::string TraceWorkload::partition_refusal() const {
    std::string why = Workload::partition_refusal();
    // Each rank checks what it receives (its own count of each peer's
    // messages gives the key); the run's span is every rank's.
    for (unsigned r = 1; why.empty() && r < nodes_.size(); ++r)
        why = across_boards(nodes_[0], nodes_[r], "",
                            "trace.app_time is the first rank's start to the last rank's end, two times every "
                            "rank's program writes into one object (first_, last_) and the last to end reads; and "
                            "msg::Endpoint::connect reads every peer's endpoint directly, not published through "
                            "the start barrier (GlobalSync)");
    return why;
}

std::vector<unsigned> read_mapping(const Config& c, std::istream& in, const std::string& path, unsigned nodes,
                                   unsigned ranks) {
    const auto& P = params_of<TraceParams>();
    std::vector<unsigned> where;
    std::string line;
    for (unsigned n = 1; std::getline(in, line); ++n) {
        if (n == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);   // UTF-8 BOM, as in configs
        line = line.substr(0, line.find('#'));
        std::istringstream is(line);
        std::string word, extra;
        if (!(is >> word)) continue;
        std::size_t used = 0;
        unsigned long v = 0;
        try {
            v = std::stoul(word, &used);
        } catch (const std::exception&) {
            used = 0;
        }
        if (used != word.size() || (is >> extra))
            throw c.refuse(P.mapping_file, path + ":" + std::to_string(n) + ": '" + clip_for_message(line) + "'" +
                                               " is not a node index (one a line, rank 0's first)");
        if (v >= nodes)
            throw c.refuse(P.mapping_file, path + ":" + std::to_string(n) + ": node " + word + " of " +
                                               std::to_string(nodes) + " (0 to " + std::to_string(nodes - 1) + ")");
        if (where.size() == ranks)
            throw c.refuse(P.mapping_file, path + ":" + std::to_string(n) + ": more lines than the trace's " +
                                               std::to_string(ranks) + " ranks");
        where.push_back(static_cast<unsigned>(v));
    }
    if (where.size() < ranks)
        throw c.refuse(P.mapping_file, path + " places " + std::to_string(where.size()) + " ranks, the trace has " +
                                           std::to_string(ranks));
    return where;
}

std::vector<unsigned> TraceWorkload::map_ranks(const Config& c, unsigned nodes) const {
    const auto& P = params_of<TraceParams>();
    std::vector<unsigned> where;
    const std::string& how = c[P.mapping];
    if (!c[P.mapping_file].empty() && how != "file")
        throw c.refuse(P.mapping_file, "names a mapping file, but trace.mapping = " + how);
    if (how == "linear") {
        for (unsigned r = 0; r < ranks_; ++r) where.push_back(r);
    } else if (how == "round-robin") {
        // The QFDB of node i is i / 4 (models/interconnect/topology.hpp).
        const unsigned boards = (nodes + 3) / 4;
        std::vector<unsigned> used(boards, 0);
        for (unsigned r = 0, b = 0; r < ranks_; ++r) {
            // The next QFDB in turn with an FPGA left.
            while (b * 4 + used[b] >= nodes || used[b] >= 4) b = (b + 1) % boards;
            where.push_back(b * 4 + used[b]++);
            b = (b + 1) % boards;
        }
    } else {
        const std::string path = c[P.mapping_file];
        if (path.empty()) throw c.refuse(P.mapping_file, "trace.mapping = file needs a mapping file");
        std::ifstream in(path);
        if (!in) throw c.refuse(P.mapping_file, "cannot read " + path);
        where = read_mapping(c, in, path, nodes, ranks_);
    }
    std::vector<int> rank_of(nodes, -1);
    for (unsigned r = 0; r < ranks_; ++r) {
        if (rank_of[where[r]] >= 0)
            throw c.refuse(how == "file" ? P.mapping_file.name() : P.mapping.name(),
                           "places ranks " + std::to_string(rank_of[where[r]]) + " and " + std::to_string(r) +
                               " on node " + std::to_string(where[r]) +
                               ": the engine delivers a job's writes to the one receiving channel of its "
                               "protection domain on a node, so a second rank of the job there could not receive "
                               "from the network (one rank a node; node.processes runs a copy of the application "
                               "per process)");
        rank_of[where[r]] = static_cast<int>(r);
    }
    return where;
}

std::uint64_t TraceWorkload::message_key(unsigned from, unsigned to, std::uint64_t tag, std::uint64_t seq) const {
    // Unique per message of the run (the pattern of a key differs from any
    // other's at every 8-byte word: Workload::fill_source); the context
    // (tag's top bits, coll::Communicator::p2p_tag) scattered over the word.
    return ((std::uint64_t(from) * ranks_ + to) << 40) ^ ((tag & 0xFFFFFFFFu) << 24) ^ seq ^
           ((tag >> 48) * 0x9E3779B97F4A7C15ull);
}

std::uint64_t TraceWorkload::acquire(RdmaProcess& app, Rank& r, const Rank::Key& key) {
    auto& pool = r.buffers[key];
    for (Rank::Buffer& b : pool)
        if (!b.busy) {
            b.busy = true;
            return b.addr;
        }
    // None free: the application's next buffer for such messages (mapped
    // when its first message comes).
    pool.push_back({app.alloc(std::max<std::uint64_t>(std::get<2>(key), 1), populate_, advice_), true});
    return pool.back().addr;
}

void TraceWorkload::release(Rank& r, const Rank::Key& key, std::uint64_t addr) {
    for (Rank::Buffer& b : r.buffers[key])
        if (b.addr == addr) b.busy = false;
}

// A reduction's operation, datatype and bytes: as recorded (vrdmasim's
// traces: recorded::kReduction), else (a trace that does not say) a sum of
// 64-bit words, its bytes rounded up to whole words.
void TraceWorkload::reduction(const TraceEvent& end, CollectiveData& d) {
    d.bytes = (end.sent + 7) / 8 * 8;
    if (!end.reduction) return;
    recorded_reduction(end, d);
    if (end.sent % d.red.element_bytes())
        throw std::runtime_error("trace: a recorded reduction of " + std::to_string(end.sent) +
                                 " B, not whole elements of " + coll::name_of(d.red.type));
    d.bytes = end.sent;
}

void TraceWorkload::recorded_reduction(const TraceEvent& end, CollectiveData& d) {
    const std::uint64_t code = end.reduction - 1, op = code >> 8, type = code & 0xff;
    if (op >= coll::reduce_op_names().size() || type >= coll::datatype_names().size())
        throw std::runtime_error("trace: a recorded reduction of operation " + std::to_string(op) + " on datatype " +
                                 std::to_string(type) + ", which this vrdmasim does not know");
    d.red = {static_cast<coll::ReduceOp>(op), static_cast<coll::Datatype>(type)};
    std::string why;
    if (!d.red.valid(why)) throw std::runtime_error("trace: a recorded reduction: " + why);
}

void TraceWorkload::collective(RdmaProcess& app, Rank& r, coll::Communicator& comm, const TraceEvent& end) {
    const Rank::Started k = collective_start(app, r, comm, end, false);
    k.d.run(comm, k.a, k.sbuf, k.rbuf);
    collective_end(app, r, k);
}

TraceWorkload::Rank::Started TraceWorkload::collective_start(RdmaProcess& app, Rank& r, coll::Communicator& comm,
                                                             const TraceEvent& end, bool nonblocking) {
    // Its ranks are the communicator's (the data each contributes and must
    // hold after it is a function of its rank there and of the call).
    const unsigned n = comm.size(), rank = comm.rank();
    Rank::Started k;
    k.comm = &comm;
    k.me = rank;
    // Numbered apart: the blocking ones as check() counts them (a Score-P
    // v-variant's blocks are found by it), the non-blocking ones above.
    const std::uint64_t number =
        nonblocking ? r.nonblocking[end.comm]++ | std::uint64_t(1) << 62 : r.collective[end.comm]++;
    k.d = describe(end, n, rank, number);
    const CollectiveData& d = k.d;
    // The communicator's calls so far (each member's count is the same),
    // its context scattered over the number.
    k.call = number ^ (std::uint64_t(end.comm) * 0x9E3779B97F4A7C15ull);
    collective_buffers(app, r, k, end, nonblocking);
    collectives_.inc();
    // (Poisoned first: an in-place gather's or scatter's block lies in it.)
    if (d.fills(rank) && !(recorded_ && k.rbuf == k.sbuf)) poison(app, k.rbuf, d.receive_bytes(), k.call);
    d.prepare(app, k.sbuf, k.rbuf, rank, k.call);
    k.t0 = app.now();
    log_.posted(k.t0);
    std::string why;
    if (!coll::resolve(d.op, coll::configured_algorithm(ctx_.config, d.op), n, d.bytes, k.a, why))
        throw std::logic_error("trace: " + why);   // (checked at construction)
    return k;
}

void TraceWorkload::collective_buffers(RdmaProcess& app, Rank& r, Rank::Started& k, const TraceEvent& end,
                                       bool nonblocking) {
    const CollectiveData& d = k.d;
    const unsigned rank = k.me;
    const std::uint64_t slen = std::max<std::uint64_t>(d.send_bytes(), 1),
                        rlen = std::max<std::uint64_t>(d.receive_bytes(), 1);
    if (!recorded_ && nonblocking) {   // buffers of its own, apart from those of the others in flight
        k.own = r.program.pooled(app, slen, populate_, advice_);
        k.output = r.program.pooled(app, rlen, populate_, advice_);
        k.sbuf = k.own.first, k.rbuf = k.output.first;
    } else if (!recorded_) {
        if (std::max(slen, rlen) > r.coll_len) {
            r.coll_len = std::max(slen, rlen);
            r.coll_buffers = {app.alloc(r.coll_len, populate_, advice_), app.alloc(r.coll_len, populate_, advice_)};
        }
        std::tie(k.sbuf, k.rbuf) = r.coll_buffers;
    } else {   // the program's, as the mpi workload maps them
        std::tie(k.sbuf, k.rbuf) = r.program.collective(app, d, end.va, end.va2, populate_, advice_,
                                                        "trace: rank " + std::to_string(rank) + " of a communicator",
                                                        nonblocking ? &k.own : nullptr);
        // Input a collective in flight reads too: the library's buffer
        // instead (workloads/mpi/README.md "Non-blocking collectives").
        k.sbytes = d.op == coll::Op::Scatter && rank != d.root ? 0 : d.send_bytes();
        bool shared = false;
        for (const auto& [q, o] : r.started) {
            const std::uint64_t len = o.d.receive_bytes();
            shared = shared || (k.sbytes && o.sbytes && k.sbuf < o.sbuf + o.sbytes && o.sbuf < k.sbuf + k.sbytes) ||
                     (k.sbytes && len && k.sbuf < o.rbuf + len && o.rbuf < k.sbuf + k.sbytes);
        }
        if (d.op != coll::Op::Bcast && shared) {
            k.input = r.program.pooled(app, std::max<std::uint64_t>(k.sbytes, 8), populate_, advice_);
            k.sbuf = k.input.first;
        }
    }
}

void TraceWorkload::collective_end(RdmaProcess& app, Rank& r, const Rank::Started& k) {
    const CollectiveData& d = k.d;
    const std::uint64_t got = d.result_bytes(k.me);
    const std::vector<unsigned char> want = d.expected(k.me, k.call);
    std::vector<unsigned char> have;
    const bool ok = d.result(app, k.rbuf, k.me, have) && have == want;
    log_.verified(got, ok);
    if (!ok)
        std::cerr << "vrdmasim: DATA MISMATCH: trace collective " << k.call << " (" << coll::name_of(d.op)
                  << ") at rank " << k.me << "\n";
    for (const ProgramBuffers::Pooled& b : {k.own, k.input, k.output}) r.program.give_back(b);
    const sc_time latency = app.now() - k.t0;
    log_.finished(app.now(), true, got, &latency);
}

void TraceWorkload::start_nonblocking(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const TraceEvent& e,
                                      std::map<std::uint32_t, std::unique_ptr<coll::Communicator>>& comms) {
    Rank& r = state_[rank];
    TraceEvent done;
    const auto completes = [&e](const TraceEvent& x) {
        return x.kind == TraceEvent::Kind::CollectiveComplete && x.request == e.request;
    };
    if (r.started.count(e.request) || !reader_->peek(rank, completes, done))
        throw std::runtime_error("trace: rank " + std::to_string(rank) + "'s non-blocking collective (request " +
                                 std::to_string(e.request) + ") " +
                                 (r.started.count(e.request) ? "starts while one of its request is in flight"
                                                             : "never completes in the trace"));
    coll::Communicator& comm = communicator(app, rank, ep, done.comm, comms);
    Rank::Started k = collective_start(app, r, comm, done, true);
    // Started: the library runs it while the rank replays its next calls.
    k.request =
        comm.start([d = k.d, a = k.a, s = k.sbuf, b = k.rbuf](coll::Communicator& own) { d.run(own, a, s, b); });
    r.started.emplace(e.request, std::move(k));
}

void TraceWorkload::end_nonblocking(RdmaProcess& app, unsigned rank, const TraceEvent& e) {
    Rank& r = state_[rank];
    const auto it = r.started.find(e.request);
    if (it == r.started.end())
        throw std::logic_error("trace: a non-blocking collective completes that was never started");
    it->second.comm->wait(it->second.request);
    collective_end(app, r, it->second);
    r.started.erase(it);
}

CollectiveData TraceWorkload::describe(const TraceEvent& end, unsigned n, unsigned rank, std::uint64_t number) const {
    CollectiveData d;
    d.ranks = n;
    d.op = collective_op(end.op);
    // TraceReader::check() refused a root outside the communicator.
    const bool rooted = coll::has_root(d.op);
    if (rooted && end.root >= n)
        throw std::logic_error("trace: a collective's root outside the communicator passed check()");
    d.root = rooted ? end.root : 0;
    switch (d.op) {
    case coll::Op::Barrier: break;
    case coll::Op::Bcast: d.bytes = rank == d.root ? end.sent : end.received; break;
    case coll::Op::Reduce:
    case coll::Op::Allreduce:
    case coll::Op::Scan:
    case coll::Op::Exscan: reduction(end, d); break;
    case coll::Op::Allgather:
    case coll::Op::Gather: d.bytes = end.sent; break;
    case coll::Op::Scatter: d.bytes = end.received; break;   // each rank's block
    case coll::Op::Alltoall: d.bytes = end.sent / n; break;
    case coll::Op::ReduceScatter:
    case coll::Op::ReduceScatterBlock:
        if (end.reduction) recorded_reduction(end, d);
        blocks(d, rank, end, number);
        break;
    default: blocks(d, rank, end, number); break;   // the v-variants
    }
    return d;
}

TraceSummary TraceWorkload::check_and_plan(BytesPlan& plan) {
    const TraceSummary summary = reader_->check([this, &plan](unsigned rank, const TraceEvent& e) {
        std::uint64_t bytes = 0;
        if (!plan.known) return;
        plan.known = event_bytes(rank, e, bytes);
        plan.bytes += bytes;
    });
    vectors_ = summary.vectors;
    std::uint64_t bytes = 0;
    if (plan.known) plan.known = plan_vectors(bytes);
    plan.bytes += bytes;
    return summary;
}

bool TraceWorkload::event_bytes(unsigned rank, const TraceEvent& e, std::uint64_t& bytes) const {
    using K = TraceEvent::Kind;
    bytes = 0;
    // A receive: finish_receive() logs the message's length.
    if (e.kind == K::Recv || e.kind == K::Irecv) {
        bytes = e.length;
        return true;
    }
    // A put or a get (MpiOneSided::put_or_get, its pieces' lengths adding
    // up to the call's); an atomic's 8-byte operands are logged as none.
    if (e.kind == K::Rma) {
        const mpiwire::Op base = mpiwire::operation_of(static_cast<mpiwire::Op>(e.op));
        if (base == mpiwire::Op::Put || base == mpiwire::Op::Get) bytes = e.length;
        return true;
    }
    if (e.kind != K::CollectiveEnd && e.kind != K::CollectiveComplete) return true;
    // What program() does not replay as a collective: a local one, and
    // Open MPI's split in a trace vrdmasim recorded (split(): nothing logged).
    if (e.op == TraceEvent::kLocal || (e.create && reader_->recorded_by_vrdmasim())) return true;
    try {
        // A blocking v-variant without its blocks is plan_vectors()'s; a
        // non-blocking one the replay cannot size (blocks() throws).
        if (coll::takes_blocks(collective_op(e.op)) && !e.blocks) return e.kind == K::CollectiveEnd;
        // The communicator as communicator() makes it: its size and the
        // rank's place in it.
        unsigned n = ranks_, me = rank;
        if (e.comm != 0) {
            const std::vector<unsigned>& members = reader_->communicators().at(e.comm);
            n = static_cast<unsigned>(members.size());
            me = static_cast<unsigned>(std::find(members.begin(), members.end(), rank) - members.begin());
            if (me >= n) return false;
        }
        bytes = describe(e, n, me, 0).result_bytes(me);   // (the number only finds a v-variant's derived blocks)
        return true;
    } catch (const std::exception&) {   // the replay fails at this call: what it delivers is not known
        bytes = 0;
        return false;
    }
}

bool TraceWorkload::plan_vectors(std::uint64_t& bytes) const {
    bytes = 0;
    try {
        for (const auto& [key, v] : vectors_) {
            // Each member's call, as collective_start() describes it.
            TraceEvent end;
            end.kind = TraceEvent::Kind::CollectiveEnd;
            end.op = v.op;
            end.root = v.root;
            end.comm = key.first;
            const auto n = static_cast<unsigned>(v.bytes.size());
            for (unsigned q = 0; q < n; ++q) bytes += describe(end, n, q, key.second).result_bytes(q);
        }
        return true;
    } catch (const std::exception&) {   // as event_bytes()
        bytes = 0;
        return false;
    }
}

void TraceWorkload::blocks(CollectiveData& d, unsigned rank, const TraceEvent& end, std::uint64_t number) const {
    const unsigned n = d.ranks;
    if (end.blocks) {   // as the rank made the call (recorded::kBlocks), as the mpi workload carried it out
        const std::vector<std::uint64_t>& v = end.blocks->values;
        auto part = [&](std::size_t k) {
            return std::vector<std::uint64_t>(v.begin() + static_cast<std::ptrdiff_t>(k * n),
                                              v.begin() + static_cast<std::ptrdiff_t>((k + 1) * n));
        };
        d.bytes = end.blocks->bytes;
        d.sends = {part(0), part(1)};
        d.receives = {part(2), part(3)};
        return;
    }
    // Score-P's record: derived from every member's bytes (check() found
    // them adding up), each buffer's blocks one after the other in rank
    // order (the program's displacements are not in the trace).
    const auto it = vectors_.find({end.comm, number});
    if (it == vectors_.end()) throw std::logic_error("trace: a v-variant without blocks that check() did not see");
    const auto& bytes = it->second.bytes;
    const bool halves = d.op == coll::Op::ReduceScatter || d.op == coll::Op::ReduceScatterBlock;
    std::vector<std::uint64_t> each(n), none(n, 0);
    for (unsigned q = 0; q < n; ++q) {
        // A gatherv's or allgatherv's block is its sender's bytes, a
        // scatterv's or reduce-scatter's its receiver's (a reduction's
        // rounded up to whole 64-bit words, as reductions are timed).
        const std::uint64_t b =
            d.op == coll::Op::Gatherv || d.op == coll::Op::Allgatherv ? bytes[q].first : bytes[q].second;
        each[q] = halves ? (b + 7) / 8 * 8 : b;
    }
    auto packed = [&] {
        coll::Blocks b{each, none};
        for (unsigned q = 1; q < n; ++q) b.displs[q] = b.displs[q - 1] + each[q - 1];
        return b;
    };
    auto only = [&](unsigned at, std::uint64_t len) {
        coll::Blocks b{none, none};
        b.counts[at] = len;
        return b;
    };
    const unsigned root = d.root;
    switch (d.op) {
    case coll::Op::Gatherv:
        d.bytes = each[rank];
        d.sends = only(root, each[rank]);
        d.receives = rank == root ? packed() : coll::Blocks{none, none};
        break;
    case coll::Op::Scatterv:
        d.bytes = each[rank];
        d.sends = rank == root ? packed() : coll::Blocks{none, none};
        d.receives = only(root, each[rank]);
        break;
    case coll::Op::Allgatherv:
        d.bytes = each[rank];
        d.sends = {std::vector<std::uint64_t>(n, each[rank]), none};
        d.receives = packed();
        break;
    default:   // reduce-scatter: every rank's vector is the blocks of every rank
        d.sends = packed();
        d.bytes = d.sends.span();
        d.receives = only(rank, each[rank]);
        break;
    }
}

void TraceWorkload::program(RdmaProcess& app, unsigned rank) {
    msg::Endpoint& ep = *eps_[app.node()];
    Rank& r = state_[rank];
    ep.setup();
    if (!os_.empty()) os_[rank]->setup();
    ready_and_wait(app, ranks_);
    ep.connect(eps_);
    if (!os_.empty()) os_[rank]->connect(os_);
    std::map<std::uint32_t, std::unique_ptr<coll::Communicator>> comms;
    r.comms = &comms;
    first_ = std::min(first_, app.now());
    const double tick = 1.0 / static_cast<double>(reader_->ticks_per_second());
    bool started = false;
    std::uint64_t last = 0;   // the trace's time of the rank's last MPI call's end
    sc_time mpi_start = app.now();
    TraceEvent e;
    while (reader_->next(rank, e)) {
        events_.inc();
        if (!started) started = true, last = e.time;
        switch (e.kind) {
        case TraceEvent::Kind::Enter:
            if (!e.mpi) break;
            if (e.time > last) {
                // The application computed between its MPI calls.
                const sc_time t(static_cast<double>(e.time - last) * tick * scale_, sc_core::SC_SEC);
                app.compute("compute", t);
                compute_us_.add(to_us(t));
                rank_compute_[rank]->add(to_us(t));
            }
            if (recorded_ && e.memory) {   // the program's own memory use before the call
                for (std::size_t i = 0; i + 1 < e.memory->unmapped.size(); i += 2)
                    r.program.unmap(app, e.memory->unmapped[i], e.memory->unmapped[i + 1]);
                for (std::size_t i = 0; i + 1 < e.memory->touched.size(); i += 2)
                    r.program.touch(app, e.memory->touched[i], e.memory->touched[i + 1]);
            }
            mpi_start = app.now();
            r.sendrecv = e.sendrecv;
            r.entered = e;
            r.tested.clear();
            break;
        case TraceEvent::Kind::Leave:
            if (!e.mpi) break;
            if (r.entered.call != TraceEvent::Call::None) finish_call(rank, ep);
            r.sendrecv = false;
            last = e.time;
            mpi_us_.add(to_us(app.now() - mpi_start));
            rank_mpi_[rank]->add(to_us(app.now() - mpi_start));
            break;
        case TraceEvent::Kind::Send:
        case TraceEvent::Kind::Recv: blocking(app, rank, ep, e); break;
        case TraceEvent::Kind::Isend: send_message(app, rank, ep, e); break;
        case TraceEvent::Kind::IsendComplete: complete_isend(rank, ep, e); break;
        case TraceEvent::Kind::IrecvRequest: post_irecv(app, rank, ep, e); break;
        case TraceEvent::Kind::Irecv: receive_message(app, rank, ep, e); break;
        case TraceEvent::Kind::CollectiveBegin: {
            TraceEvent end;
            if (!reader_->peek(
                    rank, [](const TraceEvent& x) { return x.kind == TraceEvent::Kind::CollectiveEnd; }, end))
                throw std::runtime_error("trace: rank " + std::to_string(rank) +
                                         "'s collective never ends in the trace");
            if (end.create && openmpi_) split(app, rank, communicator(app, rank, ep, end.comm, comms), end);
            else if (end.op != TraceEvent::kLocal)
                collective(app, r, communicator(app, rank, ep, end.comm, comms), end);
            break;
        }
        case TraceEvent::Kind::CollectiveEnd: break;   // done at its begin
        case TraceEvent::Kind::CollectiveRequest: start_nonblocking(app, rank, ep, e, comms); break;
        case TraceEvent::Kind::CollectiveComplete: end_nonblocking(app, rank, e); break;
        case TraceEvent::Kind::RequestTest: request_test(rank, ep, e); break;
        case TraceEvent::Kind::Rma: one_sided(app, rank, e); break;
        }
    }
    while (windows_ && windows_->finish_oldest(app, rank)) {   // one-sided operations still in flight
    }
    end_program(app, rank, ep);
}

void TraceWorkload::end_program(RdmaProcess& app, unsigned rank, msg::Endpoint& ep) {
    const Rank& r = state_[rank];
    if (!r.requests.empty() || !r.started.empty() || !r.rma_requests.empty())
        throw std::runtime_error("trace: rank " + std::to_string(rank) + " ends with " +
                                 std::to_string(r.requests.size() + r.started.size() + r.rma_requests.size()) +
                                 " request(s) the trace never completes");
    ep.finalize();
    app.finish_registrations();
    last_ = std::max(last_, app.now());
    if (++done_ == ranks_) app_us_.set(to_us(last_ - first_));
    program_ended(app);
}

coll::Communicator& TraceWorkload::communicator(RdmaProcess& app, unsigned rank, msg::Endpoint& ep,
                                                std::uint32_t context,
                                                std::map<std::uint32_t, std::unique_ptr<coll::Communicator>>& comms) {
    std::unique_ptr<coll::Communicator>& c = comms[context];
    if (c) return *c;
    if (context == 0) {
        c = os_.empty() ? std::make_unique<coll::Communicator>(ctx_, app, ep, nodes_, rank)
                        : std::make_unique<coll::Communicator>(ctx_, app, *os_[rank], nodes_, rank);
        return *c;
    }
    const coll::Communicator::Group g{reader_->communicators().at(context), context};
    const auto at = static_cast<unsigned>(std::find(g.members.begin(), g.members.end(), rank) - g.members.begin());
    c = os_.empty() ? std::make_unique<coll::Communicator>(ctx_, app, ep, nodes_, g, at)
                    : std::make_unique<coll::Communicator>(ctx_, app, *os_[rank], nodes_, g, at);
    return *c;
}

TraceWorkload::Rank::Pending TraceWorkload::start_send(RdmaProcess& app, unsigned rank, msg::Endpoint& ep,
                                                       const TraceEvent& e) {
    Rank& r = state_[rank];
    Rank::Pending p;
    p.owner = Rank::Key{true, e.peer, e.length};
    p.tag = coll::Communicator::p2p_tag(e.comm, e.tag);
    p.length = e.length;
    const std::uint64_t key = message_key(rank, e.peer, p.tag, r.sent[{e.peer, p.tag}]++);
    if (recorded_) {
        p.buf = e.va;
        r.program.map(app, e.va, e.length, "trace: rank " + std::to_string(rank));
        fill_recorded(app, rank, p, e.peer);
    } else {
        p.buf = acquire(app, r, p.owner);
        fill_source(app, p.buf, e.length, key);
    }
    log_.posted(app.now());
    messages_.inc();
    p.request = ep.isend(nodes_[e.peer], p.tag, p.buf, e.length);
    return p;
}

void TraceWorkload::send_message(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const TraceEvent& e) {
    Rank& r = state_[rank];
    const Rank::Pending p = start_send(app, rank, ep, e);
    if (e.kind == TraceEvent::Kind::Send) {
        ep.wait(p.request);
        release(r, p.owner, p.buf);
    } else {
        r.requests[e.request] = p;
    }
}

void TraceWorkload::blocking(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const TraceEvent& e) {
    Rank& r = state_[rank];
    const bool send = e.kind == TraceEvent::Kind::Send;
    bool& skip = send ? r.skip_send : r.skip_recv;
    if (skip) {   // done with the other half of its MPI_Sendrecv
        skip = false;
        return;
    }
    const TraceEvent::Kind other = send ? TraceEvent::Kind::Recv : TraceEvent::Kind::Send;
    TraceEvent half;
    if (r.sendrecv &&
        reader_->peek(
            rank,
            [other](const TraceEvent& x) { return x.kind == other || (x.kind == TraceEvent::Kind::Leave && x.mpi); },
            half) &&
        half.kind == other) {
        (send ? r.skip_recv : r.skip_send) = true;
        sendrecv(app, rank, ep, send ? e : half, send ? half : e);
        return;
    }
    // Alone (MPI_Send, MPI_Recv; an MPI_Sendrecv with MPI_PROC_NULL on one
    // side records only the other).
    if (send) send_message(app, rank, ep, e);
    else receive_message(app, rank, ep, e);
}

void TraceWorkload::sendrecv(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const TraceEvent& send,
                             const TraceEvent& recv) {
    // As MPI libraries do it (MPICH's MPIC_Sendrecv): the receive posted
    // first, then the send, then both waited for; a ring of them whose
    // messages are above the eager threshold does not deadlock.
    // A trace vrdmasim recorded: as its mpi workload carried it out, the
    // send started first.
    const sc_time t0 = app.now();
    Rank::Pending in, out;
    if (openmpi_) out = start_send(app, rank, ep, send);
    in = post_receive(app, rank, ep, recv);
    if (!openmpi_) out = start_send(app, rank, ep, send);
    finish_receive(app, rank, ep, in, t0);
    ep.wait(out.request);
    release(state_[rank], out.owner, out.buf);
}

void TraceWorkload::complete_isend(unsigned rank, msg::Endpoint& ep, const TraceEvent& e) {
    Rank& r = state_[rank];
    const auto it = r.requests.find(e.request);
    if (it == r.requests.end() || it->second.recv)
        throw std::runtime_error("trace: rank " + std::to_string(rank) + " completes send request " +
                                 std::to_string(e.request) + " it never started");
    ep.wait(it->second.request);
    release(r, it->second.owner, it->second.buf);
    r.requests.erase(it);
}

void TraceWorkload::post_irecv(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const TraceEvent& e) {
    // What it receives is in its completion (MPI_Irecv's event):
    // read ahead in the rank's stream for it.
    TraceEvent done;
    const std::uint64_t id = e.request;
    if (!reader_->peek(
            rank, [id](const TraceEvent& x) { return x.kind == TraceEvent::Kind::Irecv && x.request == id; }, done))
        throw std::runtime_error("trace: rank " + std::to_string(rank) + "'s receive request " + std::to_string(id) +
                                 " never completes in the trace");
    Rank::Pending p = post_receive(app, rank, ep, done);
    p.recv = true;
    state_[rank].requests[id] = p;
}

TraceWorkload::Rank::Pending TraceWorkload::post_receive(RdmaProcess& app, unsigned rank, msg::Endpoint& ep,
                                                         const TraceEvent& e) {
    Rank& r = state_[rank];
    Rank::Pending p;
    p.peer = e.peer;
    p.tag = coll::Communicator::p2p_tag(e.comm, e.tag);
    p.length = e.length;
    p.owner = Rank::Key{false, e.peer, e.length};
    p.key = message_key(e.peer, rank, p.tag, r.received[{e.peer, p.tag}]++);
    p.posted = app.now();
    if (recorded_) {
        // The program's buffer as it posted it (the message may be shorter).
        p.buf = e.va;
        p.capacity = e.capacity;
        r.program.map(app, p.buf, p.capacity, "trace: rank " + std::to_string(rank));
        poison(app, p.buf, p.capacity, p.key);
        p.request = ep.irecv(nodes_[e.peer], p.tag, p.buf, std::max<std::uint64_t>(p.capacity, 1));
        return p;
    }
    p.buf = acquire(app, r, p.owner);
    poison(app, p.buf, p.length, p.key);
    p.request = ep.irecv(nodes_[e.peer], p.tag, p.buf, std::max<std::uint64_t>(e.length, 1));
    return p;
}

void TraceWorkload::receive_message(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const TraceEvent& e) {
    Rank& r = state_[rank];
    const sc_time t0 = app.now();
    if (e.kind != TraceEvent::Kind::Irecv) {
        finish_receive(app, rank, ep, post_receive(app, rank, ep, e), t0);
        return;
    }
    const auto it = r.requests.find(e.request);
    if (it == r.requests.end() || !it->second.recv)
        throw std::logic_error("trace: a receive completes that was never posted");
    const Rank::Pending p = it->second;
    r.requests.erase(it);
    // A trace vrdmasim recorded: its latency from the post, as the mpi
    // workload logs it.
    finish_receive(app, rank, ep, p, openmpi_ ? p.posted : t0);
}

void TraceWorkload::finish_receive(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const Rank::Pending& p,
                                   sc_time t0) {
    const msg::Status st = ep.wait(p.request);
    if (!st.ok || st.len != p.length)
        std::cerr << "vrdmasim: DATA MISMATCH: trace rank " << rank << " received " << st.len << " B from rank "
                  << p.peer << " (tag " << (p.tag & 0xFFFFFFFFu) << ") where the trace has " << p.length << " B\n";
    const bool ok =
        st.ok && st.len == p.length &&
        (recorded_ ? delivered_recorded(app, p.peer, rank, p, p.length) : verify(app, p.buf, p.length, p.key));
    if (!(st.ok && st.len == p.length)) log_.verified(p.length, false);
    if (!recorded_) release(state_[rank], p.owner, p.buf);
    const sc_time latency = app.now() - t0;
    // The bytes that came (the trace's length when the replay is right:
    // planned_bytes() holds the run to it).
    log_.finished(app.now(), ok || st.ok, st.len, &latency);
}

void TraceWorkload::split(RdmaProcess& app, unsigned rank, coll::Communicator& parent, const TraceEvent& end) {
    Rank& r = state_[rank];
    const unsigned n = parent.size();
    // As MpiWorkload::split: the library's own buffer, 8 B each member.
    const std::uint64_t buf = r.program.scratch(app, 8 * (n + 1), populate_, advice_);
    std::string why;
    coll::Algorithm gather = coll::Algorithm::Auto, reduce = coll::Algorithm::Auto;
    if (!coll::resolve(coll::Op::Allgather, coll::configured_algorithm(ctx_.config, coll::Op::Allgather), n, 8, gather,
                       why) ||
        !coll::resolve(coll::Op::Allreduce, coll::configured_algorithm(ctx_.config, coll::Op::Allreduce), n, 8, reduce,
                       why))
        throw std::runtime_error("trace: rank " + std::to_string(rank) + ": a communicator's creation: " + why);
    collectives_.inc();
    parent.allgather(buf, buf + 8, 8, gather);
    parent.allreduce(buf, buf + 8, 1, reduce, coll::Reduction{});
    meet(app, {end.comm, r.splits[end.comm]++}, n);
}

void TraceWorkload::meet(RdmaProcess& app, std::pair<std::uint32_t, std::uint64_t> split, std::uint64_t n) {
    std::shared_ptr<Meeting>& at = meetings_[split];
    if (!at) at = std::make_shared<Meeting>();
    const std::shared_ptr<Meeting> m = at;
    if (++m->arrived < n) {
        app.wait_until([&] { return m->released; }, m->done);
        return;
    }
    // The last member: every member returns now.
    app.sync_time();
    meetings_.erase(split);
    m->released = true;
    m->done.notify(sc_core::SC_ZERO_TIME);
}

void TraceWorkload::request_test(unsigned rank, msg::Endpoint& ep, const TraceEvent& e) {
    Rank& r = state_[rank];
    WaitanyRequest q;
    q.rank = rank;
    const auto rma = r.rma_requests.find(e.request);   // (MPI_Waitany, MPI_Testany, MPI_Testall over them)
    if (rma != r.rma_requests.end() && r.entered.call != TraceEvent::Call::Test) {
        q.kind = WaitanyRequest::Kind::Rma;
        q.windows = windows_.get();
        q.rma = rma->second.first;
        r.tested.push_back(q);
        return;
    }
    const auto k = r.started.find(e.request);
    const auto it = r.requests.find(e.request);
    if (k == r.started.end() && it == r.requests.end())
        throw std::runtime_error("trace: rank " + std::to_string(rank) + " tests request " + std::to_string(e.request) +
                                 ", which is not in flight");
    if (k != r.started.end()) {
        q.kind = WaitanyRequest::Kind::Collective;
        q.comm = k->second.comm;
        q.collective = k->second.request;
    } else {
        q.message = it->second.request;
    }
    if (r.entered.call == TraceEvent::Call::Test) testany(*apps_[rank], ep, {q});   // tested now, as the mpi workload
    else r.tested.push_back(q);
}

void TraceWorkload::finish_call(unsigned rank, msg::Endpoint& ep) {
    Rank& r = state_[rank];
    using C = TraceEvent::Call;
    const TraceEvent& e = r.entered;
    if (e.call == C::Probe || e.call == C::Iprobe) {
        const std::vector<unsigned>& members = reader_->communicators().at(e.comm);
        if (e.probe_peer >= static_cast<std::int64_t>(members.size()))
            throw std::runtime_error("trace: rank " + std::to_string(rank) + " probes for rank " +
                                     std::to_string(e.probe_peer) + " of a communicator of " +
                                     std::to_string(members.size()));
        const unsigned from = e.probe_peer < 0 ? msg::kAnySource : nodes_[members[e.probe_peer]];
        const std::uint64_t tag = e.probe_tag < 0
                                      ? MpiCommunicators::any_tag(e.comm)
                                      : MpiCommunicators::tag(e.comm, static_cast<std::int32_t>(e.probe_tag));
        msg::Status st;
        if (e.call == C::Probe) ep.probe(from, tag);
        else ep.iprobe(from, tag, st);
    } else if (!r.tested.empty()) {   // as the mpi workload carries them out (waitany.hpp)
        if (e.call == C::Waitany) waitany(*apps_[rank], ep, r.tested);
        else if (e.call == C::Testany) testany(*apps_[rank], ep, r.tested);
        else if (e.call == C::Testall) testall(*apps_[rank], ep, r.tested);
    }
    r.entered.call = C::None;
}

void TraceWorkload::fill_recorded(RdmaProcess& app, unsigned rank, const Rank::Pending& p, unsigned to) {
    Rank& r = state_[rank];
    bool shared = false;
    for (const auto& [id, q] : r.requests)
        shared = shared || (!q.recv && q.buf < p.buf + p.length && p.buf < q.buf + q.length);
    if (!shared) fill_source(app, p.buf, p.length, message_key(rank, to, p.tag, r.sent[{to, p.tag}]));
    std::vector<unsigned char> data(p.length);
    if (p.length && !app.debug_read(p.buf, data.data(), p.length))
        throw std::logic_error("trace: a recorded send buffer the replay mapped cannot be read");
    in_flight_[{rank, to, p.tag}].push_back(std::move(data));
}

bool TraceWorkload::delivered_recorded(RdmaProcess& app, unsigned from, unsigned to, const Rank::Pending& p,
                                       std::uint64_t len) {
    auto& queue = in_flight_[{from, to, p.tag}];
    if (queue.empty()) throw std::logic_error("trace: a message received that no rank sent");
    const std::vector<unsigned char> want = std::move(queue.front());
    queue.pop_front();
    std::vector<unsigned char> have(len);
    bool ok = want.size() == len && (len == 0 || app.debug_read(p.buf, have.data(), len)) && have == want;
    // A source of zeros: every destination page must hold data.
    if (ok && std::all_of(want.begin(), want.end(), [](unsigned char b) { return b == 0; }))
        for (std::uint64_t a = p.buf & ~std::uint64_t(4095); len && a < p.buf + len; a += 4096)
            ok = ok && app.populated(a);
    log_.verified(len, ok);
    if (!ok)
        std::cerr << "vrdmasim: DATA MISMATCH: trace rank " << to << " received " << len << " B from rank " << from
                  << " at its recorded buffer that differ from what was sent\n";
    return ok;
}

std::string TraceWorkload::findings(const Config& c, const StatRegistry& stats) {
    if (c[params_of<WorkloadParams>().kind] != "trace") return "";
    if (!stats.sum_counters("trace.recorded_buffers")) return "";
    return "trace: replayed at the program's own buffer addresses, as the trace recorded them (trace.buffers = " +
           c.text(params_of<TraceParams>().buffers) + "; invented replays it by the rule instead)\n";
}

namespace {

const WorkloadKind::Declare declared([] {
    WorkloadKind k;
    k.name = "trace";
    k.order = 120;
    k.help = "trace: the ranks of an MPI application's OTF2 trace replay its calls (section [trace])";
    k.create = [](const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job,
                  const std::vector<FileSystem*>&) -> std::unique_ptr<Workload> {
        Workload::require_all_present(apps, "trace");
        return std::make_unique<TraceWorkload>(ctx, apps, job);
    };
    k.declare_params = TraceWorkload::declare_params;
    k.declare_metrics = TraceWorkload::declare_metrics;
    k.read_refusal = [](const Config&) {
        return "has nothing to choose in workload.kind = trace: " + std::string(Workload::kProtocolDecides) +
               "; a trace's point-to-point calls are two-sided whatever collective.transport says";
    };
    k.two_sided_refusal = [](const Config&) {
        return std::string("a trace's messages and collectives go through the two-sided library already");
    };
    k.two_sided_library = [](const Config&) { return true; };
    k.findings = TraceWorkload::findings;
    // The 4-rank test trace (trace.file has no default), on one QFDB.
    k.trial.needs = {{"trace.file", "{source}/configs/traces/farm/farm.otf2"}};
    k.trial.matrix = {{"topology.kind", "qfdb"}, {"topology.nodes", "4"}};
    // Its collectives as messages or as writes into the receivers.
    k.trial.matrix_axes = {"collective.transport"};
    // trace.mapping's effect (tests/system/param_effect_test.cpp): which
    // node each rank runs on, for the solver's ring of 8 ranks on two
    // QFDBs: round robin puts neighbours on other boards, the file reverses
    // the ranks.
    k.trial.effects.emplace_back(
        "trace.mapping",
        WorkloadKind::Settings{{"topology.kind", "torus"},
                               {"topology.x", "2"},
                               {"trace.file", "{source}/configs/traces/solver/solver.otf2"}},
        "", WorkloadKind::Settings{},
        WorkloadKind::Trial::Effect::ValueNeeds{
            {"file", {{"trace.mapping-file", "{source}/configs/traces/solver-reversed.map"}}}});
    // The buffers of a trace vrdmasim recorded (tests/fixtures/
    // recorded_ring: workloads/mpi/tests/mpi_ring on 2 ranks, "1024 1",
    // mpi.record): the program's own (auto), or the replay's rule.
    k.trial.effects.emplace_back(
        "trace.buffers",
        WorkloadKind::Settings{{"trace.file", "{source}/tests/fixtures/recorded_ring/recorded_ring.otf2"}}, "");
    return k;
}());

}   // namespace

}   // namespace vrdmasim
