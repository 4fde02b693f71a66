#include "workloads/collective.hpp"
#include "workloads/registry.hpp"

#include <algorithm>
#include <iostream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "library/collectives/params.hpp"
#include "library/messaging/params.hpp"

namespace vrdmasim {

using sc_core::sc_time;

void CollectiveWorkload::declare_params(ParamRegistry& reg) { CollParams::declare_params(reg); }

void CollectiveWorkload::declare_metrics(MetricRegistry& reg) {
    const auto run = [](const Config& c) { return c[params_of<WorkloadParams>().kind] == "collective"; };
    reg.quantile("collective_latency_us_p50", "us",
                 "collective workload: median time of one collective at one rank, from its start (after the "
                 "iteration's barrier) to its end there (`workload.collective.latency`; OSU reports the mean over "
                 "ranks of this; collective.call = nonblocking: from the start to the wait's return, "
                 "collective.overlap-compute included); 0 in other runs.",
                 "collective.latency", 0.5, run);
    reg.quantile("collective_latency_us_max", "us",
                 "collective workload: the longest time of one collective at one rank "
                 "(`workload.collective.latency`); 0 in other runs.",
                 "collective.latency", 1.0, run);
    reg.sum_counters("collective_messages",
                     "collective workload: messages the ranks sent for the measured "
                     "collectives (`workload.collective.messages`); 0 in other runs.",
                     {"collective.messages"}, run);
    reg.sum_counters("collective_control_writes",
                     "collective workload, collective.transport = one-sided: the "
                     "ready, offer and token writes the ranks posted for the measured collectives "
                     "(`workload.collective.control_writes`); 0 in other runs.",
                     {"collective.control_writes"}, run);
    reg.sum_counters("collective_reduced_bytes",
                     "collective workload: bytes the ranks' cores summed "
                     "(`workload.collective.reduced_bytes`); 0 in other runs.",
                     {"collective.reduced_bytes"}, run);
}

CollectiveWorkload::CollectiveWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job)
    : Workload(ctx, job),
      apps_(apps),
      eps_(apps.size(), nullptr),
      op_(coll::op_of(ctx.config[params_of<CollParams>().op])),
      bytes_(ctx.config[params_of<WorkloadParams>().message_size]),
      iterations_(static_cast<std::uint64_t>(ctx.config[params_of<WorkloadParams>().iterations])),
      root_(static_cast<unsigned>(ctx.config[params_of<CollParams>().root])),
      nonblocking_(ctx.config[params_of<CollParams>().call] == "nonblocking"),
      overlap_(ctx.config[params_of<CollParams>().overlap_compute]),
      outstanding_(static_cast<unsigned>(ctx.config[params_of<CollParams>().outstanding])),
      messages_(ctx.stats.counter(stats_prefix(job) + "collective.messages", "",
                                  "messages the ranks sent for the measured collectives")),
      sent_bytes_(ctx.stats.counter(stats_prefix(job) + "collective.sent_bytes", "B", "bytes of those messages")),
      reduced_bytes_(
          ctx.stats.counter(stats_prefix(job) + "collective.reduced_bytes", "B", "bytes the ranks' cores summed")),
      control_writes_(ctx.stats.counter(stats_prefix(job) + "collective.control_writes", "",
                                        "collective.transport = one-sided: the ready, offer and token writes the "
                                        "ranks posted for the measured collectives")),
      latency_(shared_histogram(ctx.stats, stats_prefix(job) + "collective.latency", "us",
                                "one collective at one rank, start to end")) {
    const Config& c = ctx.config;
    const auto& P = params_of<CollParams>();
    const unsigned n = static_cast<unsigned>(apps.size());
    if (n < 2) throw c.refuse(params_of<WorkloadParams>().kind, "a collective needs two ranks (nodes) or more");
    if (root_ >= n) throw c.refuse(P.root, "the system has " + std::to_string(n) + " ranks (nodes)");
    const coll::Reduction red = reduction(c, n);
    // The algorithm parameter of this collective (barrier, bcast and
    // reduce have one algorithm each).
    const EnumParam* which = coll::algorithm_param(op_);
    refuse_settings(c, which);
    std::string why;
    const CollectiveData sizes{op_, n, root_, bytes_, {}, {}, red};
    const std::uint64_t chosen_by = sizes.algorithm_bytes();
    if (!coll::resolve(op_, coll::configured_algorithm(c, op_), n, chosen_by, algorithm_, why))
        throw c.refuse(*which, why);
    // Rank r on node r (apps[r]: nullptr on a node of another rank in a partitioned run).
    for (unsigned r = 0; r < n; ++r) nodes_.push_back(apps[r] ? apps[r]->node() : r);
    // Each rank's send and receive buffers and the library's scratch.
    const bool one_sided = c[P.transport] == "one-sided";
    for (unsigned r = 0; r < n; ++r) {
        // Two-sided: the endpoint's peers are the partners of the
        // collective's algorithm and of the barrier (a message elsewhere
        // would be an error of the endpoint's).
        std::set<unsigned> partners = coll::Communicator::partners(op_, algorithm_, n, r);
        const std::set<unsigned> barrier = coll::Communicator::partners(coll::Op::Barrier, coll::Algorithm::Auto, n, r);
        partners.insert(barrier.begin(), barrier.end());
        if (!apps[r]) {   // its rank builds it
            if (one_sided) os_.push_back(nullptr);
            continue;
        }
        const CollectiveData mine = sizes.for_rank(r);
        check_fits(*apps[r],
                   outstanding_ * (mine.send_bytes() + mine.receive_bytes() +
                                   coll::Communicator::scratch_bytes(op_, n, chosen_by)) +
                       (one_sided ? coll::OneSided::mapped_bytes(n) : msg::Endpoint::mapped_bytes(c, partners.size())));
        check_locked(*apps[r],
                     one_sided ? coll::OneSided::locked_regions() : msg::Endpoint::locked_regions(c, partners.size()));
        if (one_sided) {
            one_sided_.push_back(std::make_unique<coll::OneSided>(c, *apps[r], nodes_, r,
                                                                  c[params_of<WorkloadParams>().operation] == "read"
                                                                      ? coll::OneSided::Mode::Read
                                                                      : coll::OneSided::Mode::Write));
            os_.push_back(one_sided_.back().get());
        } else {
            std::vector<unsigned> peers;
            for (unsigned q : partners) peers.push_back(nodes_[q]);
            owned_.push_back(std::make_unique<msg::Endpoint>(ctx, *apps[r], peers));
            eps_[nodes_[r]] = owned_.back().get();
        }
        apps[r]->program = [this, r](RdmaProcess& app) { program(app, r); };
    }
    data_ = sizes;
    // What program() logs: each rank's result_bytes, times the calls in
    // flight, each iteration.
    planned_bytes_ = iterations_ * outstanding_ * sizes.total_result_bytes();
}

coll::Reduction CollectiveWorkload::reduction(const Config& c, unsigned ranks) const {
    const auto& P = params_of<CollParams>();
    const coll::Reduction red{coll::reduce_op_of(c[P.reduce_op]), coll::datatype_of(c[P.datatype])};
    if (!coll::is_reduction(op_)) {   // (a parameter that would change nothing)
        for (const EnumParam* p : {&P.reduce_op, &P.datatype})
            if (c[*p] != c.registry().find(p->name())->default_text)
                throw c.refuse(*p, std::string("chooses a reduction's, and collective.op = ") + coll::name_of(op_) +
                                       " is not a reduction");
        return red;
    }
    std::string why;
    if (!red.valid(why)) throw c.refuse(P.reduce_op, why + " (collective.datatype = " + c[P.datatype] + ")");
    if (bytes_ % red.element_bytes() != 0)
        throw c.refuse(params_of<WorkloadParams>().message_size,
                       "a reduction takes a multiple of " + std::to_string(red.element_bytes()) +
                           " B per rank (the size of an element of collective.datatype = " + c[P.datatype] + ")");
    if (red.op == coll::ReduceOp::Prod && red.type == coll::Datatype::Float && ranks > 126)
        throw c.refuse(P.datatype,
                       "the workload's float products (of +-0.5, 1 and 2) are exact in any order up to "
                       "126 ranks, not " +
                           std::to_string(ranks) + ": use double");
    return red;
}

void CollectiveWorkload::refuse_settings(const Config& c, const EnumParam* which) const {
    const auto& P = params_of<CollParams>();
    // Another collective's algorithm set to other than its default is a
    // mistake (this workload measures one collective).
    for (const EnumParam* other :
         {&P.allreduce_algorithm, &P.allgather_algorithm, &P.alltoall_algorithm, &P.reduce_scatter_algorithm})
        if (other != which && c[*other] != c.registry().find(other->name())->default_text)
            throw c.refuse(*other, std::string("chooses the algorithm of another collective than collective.op = ") +
                                       coll::name_of(op_));
    if (!nonblocking_ && overlap_ > sc_core::SC_ZERO_TIME)
        throw c.refuse(P.overlap_compute,
                       "is the compute between a non-blocking collective's start and its wait: "
                       "collective.call = nonblocking only");
    if (!nonblocking_ && outstanding_ > 1)
        throw c.refuse(P.outstanding, "counts non-blocking collectives in flight: collective.call = nonblocking only");
    if (!nonblocking_ && c[P.progress] == "in-call")
        throw c.refuse(P.progress, "is how a non-blocking collective progresses: collective.call = nonblocking only");
    if (nonblocking_ && c[P.transport] == "one-sided")
        throw c.refuse(P.transport, coll::Communicator::kOneSidedNonBlocking);
}

void CollectiveWorkload::entered(std::uint64_t it, unsigned rank, sc_time at) {
    if (op_ != coll::Op::Barrier) return;
    BarrierRound& r = rounds_[it];
    if (r.entered.empty()) {
        r.entered.assign(apps_.size(), sc_core::SC_ZERO_TIME);
        r.left.assign(apps_.size(), sc_core::SC_ZERO_TIME);
    }
    r.entered[rank] = at;
}

void CollectiveWorkload::left(std::uint64_t it, unsigned rank, sc_time at) {
    if (op_ != coll::Op::Barrier) return;
    BarrierRound& r = rounds_.at(it);
    r.left[rank] = at;
    if (++r.gone < apps_.size()) return;
    // Every rank has entered and left: no rank left before the last entered.
    const sc_time last_in = *std::max_element(r.entered.begin(), r.entered.end());
    for (const sc_time& t : r.left) early_ += t < last_in;
    ++rounds_checked_;
    rounds_.erase(it);
}

CollectiveWorkload::~CollectiveWorkload() = default;

std::string CollectiveWorkload::partition_refusal() const {
    std::string why = Workload::partition_refusal();
    // Each rank checks its own result (CollectiveData: a function of the
    // ranks, the call and the offset); the barrier's self-check is not its own.
    for (unsigned r = 1; why.empty() && op_ == coll::Op::Barrier && r < nodes_.size(); ++r)
        why = across_boards(nodes_[0], nodes_[r], "collective.op = barrier",
                            "its self-check (collective-barrier) compares every rank's entry into and exit from "
                            "each barrier, kept in one table (rounds_) that every rank's program writes");
    return why;
}

bool CollectiveWorkload::check(RdmaProcess& app, const CollectiveData& data, std::uint64_t buf, unsigned rank,
                               std::uint64_t it, const char* what) {
    const std::vector<unsigned char> want = data.expected(rank, it);
    const std::uint64_t bytes = want.size();
    std::vector<unsigned char> got;
    bool ok = data.result(app, buf, rank, got) && got.size() == bytes;
    std::uint64_t bad = bytes;
    for (std::uint64_t b = 0; ok && b < bytes; ++b)
        if (got[b] != want[b]) bad = b, ok = false;
    log_.verified(bytes, ok);
    if (!ok) {
        std::ostringstream os;
        os << "DATA MISMATCH: " << what << " (" << coll::name_of(algorithm_) << ") iteration " << it << " at rank "
           << rank << " (" << app.group() << ")";
        if (bad < bytes)
            os << ": byte " << bad << " (of the result's parts, in rank order) is " << int(got[bad]) << ", "
               << int(want[bad]) << " expected";
        else os << ": the result buffer is unreadable";
        std::cerr << "vrdmasim: " << os.str() << "\n";
        if (ctx_.tracer.noting())
            ctx_.tracer.note(Tracer::Track{}, "data mismatch", app.now(), sc_core::SC_ZERO_TIME, app.group(), os.str());
    }
    return ok;
}

void CollectiveWorkload::program(RdmaProcess& app, unsigned rank) {
    const unsigned n = static_cast<unsigned>(apps_.size());
    msg::Endpoint* ep = eps_[app.node()];
    const CollectiveData data = data_.for_rank(rank);   // a v-variant's blocks as this rank sees them
    const std::uint64_t slen = data.send_bytes(), rlen = data.receive_bytes();
    // Buffers of its own for each call in flight at once.
    std::vector<std::uint64_t> sbufs, rbufs;
    for (unsigned k = 0; k < outstanding_; ++k) {
        sbufs.push_back(app.alloc(std::max<std::uint64_t>(slen, 1), populate_, advice_));
        rbufs.push_back(app.alloc(std::max<std::uint64_t>(rlen, 1), populate_, advice_));
    }
    // The wire-up through the start barrier: each rank publishes its
    // endpoint's slots and credit words (or its mailbox) after the setup
    // and connects from the others' after the barrier.
    if (ep) {
        ep->setup();
        publish_endpoint(app, *ep);
    } else {
        os_[rank]->setup();
        publish_mailbox(app, *os_[rank]);
    }
    ready_and_wait(app, n);
    if (ep) connect_endpoint(*ep);
    else connect_mailboxes(*os_[rank], nodes_);
    coll::Communicator comm =
        ep ? coll::Communicator(ctx_, app, *ep, nodes_, rank) : coll::Communicator(ctx_, app, *os_[rank], nodes_, rank);
    for (std::uint64_t it = 0; it < iterations_; ++it) {
        // The program's data for this iteration (as the application wrote it).
        for (unsigned k = 0; k < outstanding_; ++k)
            if (data.prepare(app, sbufs[k], rbufs[k], rank, it)) poison(app, rbufs[k], rlen, it * n + rank);
        // osu_*: the ranks meet, then each times its own call.
        comm.barrier(coll::Algorithm::Dissemination);
        const std::uint64_t m0 = comm.messages(), b0 = comm.sent_bytes(), s0 = comm.reduced_bytes();
        const std::uint64_t w0 = ep ? 0 : os_[rank]->control_writes();
        const sc_time t0 = app.now();
        log_.posted(t0);
        entered(it, rank, t0);
        if (nonblocking_) {
            // osu_iallreduce: start, compute, wait.
            std::vector<coll::Communicator::Request> calls;
            for (unsigned k = 0; k < outstanding_; ++k)
                calls.push_back(comm.start([this, &data, s = sbufs[k], r = rbufs[k]](coll::Communicator& own) {
                    data.run(own, algorithm_, s, r);
                }));
            if (overlap_ > sc_core::SC_ZERO_TIME) app.compute(overlap_);
            for (const auto& call : calls) comm.wait(call);
        } else {
            data.run(comm, algorithm_, sbufs[0], rbufs[0]);
        }
        left(it, rank, app.now());
        const sc_time latency = app.now() - t0;
        latency_.add(to_us(latency));
        messages_.inc(comm.messages() - m0);
        sent_bytes_.inc(comm.sent_bytes() - b0);
        reduced_bytes_.inc(comm.reduced_bytes() - s0);
        if (!ep) control_writes_.inc(os_[rank]->control_writes() - w0);
        const std::uint64_t got = data.result_bytes(rank);
        for (unsigned k = 0; k < outstanding_; ++k) check(app, data, rbufs[k], rank, it, coll::name_of(op_));
        log_.finished(app.now(), true, got * outstanding_, &latency);
    }
    if (ep) ep->finalize();
    app.finish_registrations();
    ++done_;
    program_ended(app);
}

std::vector<std::pair<std::string, std::string>> CollectiveWorkload::self_check() const {
    std::vector<std::pair<std::string, std::string>> out;
    if (op_ != coll::Op::Barrier || !finished()) return out;
    // No rank leaves a barrier before the last has entered it (checked as
    // each barrier's last rank left it), and every barrier was checked.
    const std::uint64_t early = early_;
    if (rounds_checked_ != iterations_ || !rounds_.empty())
        out.push_back({"collective-barrier", std::to_string(rounds_checked_) + " of " + std::to_string(iterations_) +
                                                 " barriers were left by every rank"});
    if (early)
        out.push_back({"collective-barrier", std::to_string(early) + " rank-iteration(s) left the barrier before its "
                                                                     "last rank entered it"});
    return out;
}

namespace {

bool one_sided(const Config& c) { return c[params_of<CollParams>().transport] == "one-sided"; }

// Each parameter's effect (tests/system/param_effect_test.cpp), on 8 ranks
// (two QFDBs), 64 B per rank: which collective, each one's algorithms, and
// how the steps move (messages, or writes into the receiver). An
// algorithm's default, auto, makes MPICH's choice by size, the same as one
// other value in the first scenario: a second, at a size where auto
// chooses otherwise.
// Each operation but minloc and maxloc on int32; each datatype but the
// pair types under max (byte: bor; bool: lor; the complex types: sum).
WorkloadKind::Trial::Effect::ValueNeeds op_needs() {
    WorkloadKind::Trial::Effect::ValueNeeds needs;
    for (const std::string& op : coll::reduce_op_names())
        if (op != "minloc" && op != "maxloc") needs.push_back({op, {{"collective.datatype", "int32"}}});
    return needs;
}
WorkloadKind::Trial::Effect::ValueNeeds type_needs() {
    WorkloadKind::Trial::Effect::ValueNeeds needs;
    for (const std::string& t : coll::datatype_names()) {
        const coll::Datatype type = coll::datatype_of(t);
        if (coll::is_pair(type)) continue;
        const char* op = t == "byte" ? "bor" : t == "bool" ? "lor" : coll::is_complex(type) ? "sum" : "max";
        needs.push_back({t, {{"collective.reduce-op", op}}});
    }
    return needs;
}

std::vector<WorkloadKind::Trial::Effect> collective_effects() {
    using Settings = WorkloadKind::Settings;
    auto small = [](const Settings& more) {
        Settings s{{"topology.kind", "torus"},
                   {"topology.x", "2"},
                   {"workload.message-size", "64B"},
                   {"workload.iterations", "2"}};
        for (const auto& [key, value] : more) {   // each key once (a JSON object's in `params --json`)
            const auto it = std::find_if(s.begin(), s.end(), [&key = key](const auto& kv) { return kv.first == key; });
            if (it != s.end()) it->second = value;
            else s.emplace_back(key, value);
        }
        return s;
    };
    return {
        {"collective.op", small({})},
        {"collective.transport", small({})},
        {"collective.call", small({})},
        // In-call: the rounds after the first wait for the wait, after the compute.
        {"collective.progress", small({{"collective.call", "nonblocking"}, {"collective.overlap-compute", "20us"}})},
        {"collective.allreduce-algorithm", small({}), "", small({{"workload.message-size", "64KiB"}})},
        {"collective.allgather-algorithm", small({{"collective.op", "allgather"}}), "",
         small({{"collective.op", "allgather"}, {"workload.message-size", "16KiB"}})},
        {"collective.alltoall-algorithm", small({{"collective.op", "alltoall"}}), "",
         small({{"collective.op", "alltoall"}, {"workload.message-size", "1KiB"}})},
        {"collective.reduce-scatter-algorithm", small({{"collective.op", "reduce_scatter_block"}}), "",
         small({{"collective.op", "reduce_scatter_block"}, {"workload.message-size", "128KiB"}})},
        // The operation and the datatype change the results the workload
        // computes and verifies, not the time (one collective.reduce-rate
        // for all): each scenario is one the default refuses (sum on
        // 2int, uint64 under minloc), each value with a partner it is
        // defined on, so that every value is shown to run and verify
        // (tests/system/collective_test.cpp checks what each computes).
        {"collective.reduce-op", small({{"collective.datatype", "2int"}}), "not on 2int", {}, op_needs()},
        {"collective.datatype", small({{"collective.reduce-op", "minloc"}}), "not on uint64", {}, type_needs()},
    };
}

const WorkloadKind::Declare declared([] {
    WorkloadKind k;
    k.name = "collective";
    k.order = 110;
    k.reads = {"workload.message-size", "workload.iterations"};
    k.help =
        "collective: every node takes part in collective.op of the collectives library, `iterations` times "
        "(section [collective])";
    // (absent nodes too: a partitioned run's rank builds its own ranks)
    k.create = [](const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job,
                  const std::vector<FileSystem*>&) -> std::unique_ptr<Workload> {
        return std::make_unique<CollectiveWorkload>(ctx, apps, job);
    };
    k.declare_params = CollectiveWorkload::declare_params;
    k.declare_metrics = CollectiveWorkload::declare_metrics;
    // (a collective's steps go as RDMA writes with collective.transport = one-sided)
    k.read_refusal = [](const Config& c) -> std::string {
        if (one_sided(c)) return "";
        return "has nothing to choose in workload.kind = collective with collective.transport = two-sided: " +
               std::string(Workload::kProtocolDecides);
    };
    k.two_sided_refusal = [](const Config&) {
        return std::string("the collectives are built on the two-sided library already");
    };
    k.two_sided_library = [](const Config& c) { return !one_sided(c); };
    // How the steps move: messages, or writes into the receiver.
    k.trial.matrix_axes = {"collective.transport"};
    k.trial.effects = collective_effects();
    return k;
}());

}   // namespace

}   // namespace vrdmasim
