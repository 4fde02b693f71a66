#include "workloads/mpi/mpi_workload.hpp"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <stdexcept>
#include <utility>

#include "library/collectives/params.hpp"
#include "library/messaging/endpoint.hpp"
#include "workloads/mpi/collective_calls.hpp"
#include "workloads/collective_data.hpp"
#include "src/core/format.hpp"
#include "workloads/registry.hpp"

namespace vrdmasim {

using mpiwire::Call;
using mpiwire::Op;
using mpiwire::Reply;
using sc_core::sc_time;

namespace {
// The step in which simulated time goes on while a rank is in an untimed
// call (its real MPI may wait for ranks that wait for simulated time).
const sc_time kAwayStep(1, sc_core::SC_US);
std::uint64_t ps_of(sc_time t) { return static_cast<std::uint64_t>(t.to_seconds() * 1e12 + 0.5); }
}   // namespace

MpiParams::MpiParams()
    : set("mpi", "an MPI program (workload.kind = mpi): its real processes, their calls timed by the simulation"),
      program(set.string("program", "",
                         "the MPI program to run: a path or a command on PATH, dynamically linked with Debian's Open "
                         "MPI (C, C++ or Fortran; unmodified, not recompiled)")),
      args(set.string("args", "", "the program's arguments, separated by spaces")),
      launcher(set.string("launcher", "mpirun",
                          "the launcher that starts the program's processes (Open MPI's mpirun, or a path to it)")),
      ranks(
          set.integer("ranks", "2", "MPI ranks (processes) of the program; rank r runs on node r").range("1", "4096")),
      compute(set.choice("compute", "none", {"none", "fixed", "measured"},
                         "the program's compute between two MPI calls, in simulated time: none (the calls follow "
                         "each other at once), fixed (mpi.compute-time before every call), measured (the host CPU "
                         "time the rank spent between the calls, times mpi.compute-scale); none and fixed give the "
                         "same figures in every run, measured does not")),
      compute_time(set.time("compute-time", "0us", "mpi.compute = fixed: the compute before every MPI call")),
      compute_scale(set.real("compute-scale", "1",
                             "mpi.compute = measured: host CPU time between calls times this (estimate: the host's "
                             "time as it is; a simulated Cortex-A53 is slower than the host's core, so a factor "
                             "above 1 models it better, measured by running a kernel of the program on both)")
                        .range("0", "1000")),
      untimed(set.choice("untimed", "refuse", {"refuse", "count"},
                         "an MPI call the simulation does not time (workloads/mpi/README.md \"What is timed\"): "
                         "refuse (the run stops at it, naming it), count (it runs in real MPI at no simulated time, "
                         "and the summary says which calls and how many)")),
      record(set.path("record", "",
                      "an OTF2 trace of the program's MPI calls to write, as the simulation carried them out "
                      "(simulated timestamps, the program's buffer addresses as attributes), for workload.kind = "
                      "trace to replay: the archive's directory, which must not exist (NAME.otf2 in it is the "
                      "anchor, NAME the directory's name), written when the program has finished; a path, "
                      "relative to the config or sweep file that sets it (on the command line: to the directory "
                      "vrdmasim runs in); empty: none (workloads/mpi/README.md \"Record, then replay\")")),
      memory(set.choice("program-memory", "observed", {"observed", "buffers-only"},
                        "what the rank's simulated process sees of the program's own memory use "
                        "(workloads/mpi/README.md \"The program's memory\"): observed (the pages the program "
                        "touched first between two calls, as the kernel made them resident, are made present "
                        "before the next call, and the large blocks it freed are unmapped, which drops their "
                        "registrations and pin-down cache entries), buffers-only (only the buffers its calls name: "
                        "each page first touched by the library or the engine, and nothing ever unmapped)")) {}

void MpiWorkload::declare_params(ParamRegistry& reg) { reg.add(params_of<MpiParams>().set); }

void MpiWorkload::declare_metrics(MetricRegistry& reg) {
    const auto run = [](const Config& c) { return c[params_of<WorkloadParams>().kind] == "mpi"; };
    reg.sum_scalars("mpi_app_time_us", "us",
                    "mpi: the program's time to solution in simulated time, MPI_Init to the last rank's "
                    "MPI_Finalize (`workload.mpi.app_time`); 0 in other runs.",
                    "mpi.app_time", 6, run);
    reg.sum_scalars("mpi_compute_us", "us",
                    "mpi: compute between MPI calls in simulated time, over every rank (`workload.mpi.compute_time`, "
                    "as mpi.compute says); 0 in other runs.",
                    "mpi.compute_time", 6, run);
    reg.sum_counters("mpi_calls", "mpi: MPI calls the simulation timed, over every rank (`workload.mpi.calls`).",
                     {"mpi.calls"}, run);
    reg.sum_counters("mpi_untimed_calls",
                     "mpi: MPI calls let through untimed (mpi.untimed = count), over every rank "
                     "(`workload.mpi.untimed_calls`; the run's findings name them).",
                     {"mpi.untimed_calls"}, run);
}

namespace {
const char* const kStandInHelp =
    "reductions of a user-defined MPI_Op, every rank's: timed at collective.reduce-rate over their bytes, bxor on "
    "those bytes standing in for the program's operation on the simulated data";
}   // namespace

MpiWorkload::MpiWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job)
    : Workload(ctx, job),
      calls_(ctx.stats.counter(stats_prefix(job) + "mpi.calls", "", "MPI calls timed, every rank's")),
      messages_(ctx.stats.counter(stats_prefix(job) + "mpi.messages", "", "point-to-point messages sent")),
      collectives_(ctx.stats.counter(stats_prefix(job) + "mpi.collectives", "", "collective calls, every rank's")),
      untimed_(ctx.stats.counter(stats_prefix(job) + "mpi.untimed_calls", "",
                                 "MPI calls let through untimed (mpi.untimed = count)")),
      pages_touched_(ctx.stats.counter(stats_prefix(job) + "mpi.pages_touched", "",
                                       "pages the program touched first between calls (mpi.program-memory = "
                                       "observed), every rank's; made present in its simulated process")),
      unmaps_(ctx.stats.counter(stats_prefix(job) + "mpi.unmaps", "",
                                "mappings the program unmapped between calls (its large blocks freed; "
                                "mpi.program-memory = observed), every rank's")),
      stand_ins_(ctx.stats.counter(stats_prefix(job) + "mpi.stand_in_reductions", "", kStandInHelp)),
      compute_us_(ctx.stats.scalar(stats_prefix(job) + "mpi.compute_time", "us",
                                   "compute between calls, simulated, every rank", Scalar::Kind::Sum)),
      mpi_us_(ctx.stats.scalar(stats_prefix(job) + "mpi.mpi_time", "us", "time in MPI calls, every rank",
                               Scalar::Kind::Sum)),
      app_us_(ctx.stats.scalar(stats_prefix(job) + "mpi.app_time", "us", "MPI_Init to the last MPI_Finalize",
                               Scalar::Kind::Level)) {
    const Config& c = ctx.config;
    const auto& P = params_of<MpiParams>();
    if (c[P.program].empty()) throw c.refuse(P.program, "workload.kind = mpi runs a program: name it");
    ranks_ = static_cast<unsigned>(c[P.ranks]);
    if (ranks_ > apps.size())
        throw c.refuse(P.ranks, "more ranks than nodes (" + std::to_string(apps.size()) +
                                    "): rank r runs on node r, one rank a node");
    if (!c.boolean("smmu.enabled"))
        throw c.refuse("smmu.enabled",
                       "workload.kind = mpi needs smmu.enabled = true: the program's buffers are "
                       "virtual memory at its own addresses (the physical-address experiment is not "
                       "built for it)");
    settings_.launcher = c[P.launcher];
    settings_.program.push_back(c[P.program]);
    std::istringstream words(c[P.args]);
    for (std::string w; words >> w;) settings_.program.push_back(w);
    settings_.ranks = ranks_;
    const std::string mode = c[P.compute];
    settings_.compute = mode == "fixed"      ? "fixed:" + std::to_string(ps_of(c[P.compute_time]))
                        : mode == "measured" ? "measured:" + c.text(P.compute_scale)
                                             : "none";
    settings_.untimed = c[P.untimed];
    settings_.memory = c[P.memory];
    record_ = c[P.record];
    if (!record_.empty()) {
        std::error_code ec;
        if (std::filesystem::exists(record_, ec) || ec)
            throw c.refuse(P.record, record_ + " exists: vrdmasim writes a new archive there and overwrites nothing");
        if (settings_.untimed == "count")
            throw c.refuse(P.record,
                           "a recorded trace holds the timed calls only: with mpi.untimed = count its replay would "
                           "leave the untimed ones out (not built)");
        if (job != 0)
            throw c.refuse(P.record,
                           "node.processes > 1: each job's program would record to the same path (not "
                           "built)");
        recorder_ = std::make_unique<MpiRecorder>(ranks_);
    }
    for (unsigned r = 0; r < ranks_; ++r) {
        apps_.push_back(apps[r]);
        nodes_.push_back(apps[r]->node());
        rank_of_node_[apps[r]->node()] = r;
    }
    // Every rank may talk to every other: each endpoint has all as peers.
    eps_.assign(apps.size(), nullptr);
    for (unsigned r = 0; r < ranks_; ++r) {
        std::vector<unsigned> peers;
        for (unsigned q = 0; q < ranks_; ++q)
            if (q != r) peers.push_back(nodes_[q]);
        check_fits(*apps_[r], msg::Endpoint::mapped_bytes(c, peers.size()));
        std::vector<std::uint64_t> locked = msg::Endpoint::locked_regions(c, peers.size());
        locked.push_back(kPage);   // one-sided windows: their records and lock words (one_sided.cpp)
        check_locked(*apps_[r], locked);
        owned_.push_back(std::make_unique<msg::Endpoint>(ctx, *apps_[r], peers));
        eps_[nodes_[r]] = owned_.back().get();
        apps_[r]->program = [this, r](RdmaProcess& app) { program(app, r); };
    }
    state_.resize(ranks_);
    comms_ = MpiCommunicators(ranks_);
}

MpiWorkload::~MpiWorkload() = default;

std::string MpiWorkload::partition_refusal() const {
    return "workload.kind = mpi: the program's processes talk to one simulation process (its socket), so the "
           "simulation cannot be split across ranks";
}

// What the library's windows need of this workload (MpiOneSided::Host).
struct MpiWorkload::OneSidedHost : MpiOneSided::Host {
    explicit OneSidedHost(MpiWorkload& w) : w(w) {}
    MpiWorkload& w;
    void map(RdmaProcess& app, unsigned rank, std::uint64_t va, std::uint64_t len) override {
        w.map(app, rank, va, len);
    }
    std::uint64_t scratch(RdmaProcess& app, unsigned rank, std::uint64_t len) override {
        return w.scratch(app, rank, len);
    }
    const std::vector<unsigned>& members(unsigned rank, std::uint32_t ctx) const override {
        return w.comms_.members(rank, ctx);
    }
    coll::Communicator& collectives(RdmaProcess& app, unsigned rank, std::uint32_t ctx) override {
        return w.coll_of(app, rank, ctx);
    }
    coll::Algorithm algorithm(unsigned rank, coll::Op op, unsigned n, std::uint64_t bytes) const override {
        return w.algorithm(rank, op, n, bytes);
    }
    void meet(RdmaProcess& app, unsigned rank, std::uint32_t ctx, std::uint64_t key, unsigned n,
              const Reply& r) override {
        w.meet(app, rank, {ctx, key}, n, r);
    }
    std::uint64_t& fills(unsigned rank) override { return w.state_[rank].fills; }
};

MpiOneSided& MpiWorkload::one_sided() {
    if (!one_sided_) {
        one_sided_host_ = std::make_unique<OneSidedHost>(*this);
        one_sided_ = std::make_unique<MpiOneSided>(*one_sided_host_, *this, ctx_.stats, stats_prefix(job_) + "mpi.",
                                                   apps_, nodes_, eps_);
    }
    return *one_sided_;
}

void MpiWorkload::launch() {
    // The program's stdout and stderr, copied into the run's outputs (a
    // name of its own for each job's program).
    settings_.output_dir = ctx_.files_dir;
    settings_.output_name = job_ == 0 ? "program" : "program-job" + std::to_string(job_);
    launcher_ = std::make_unique<MpiLauncher>(settings_);
    launcher_->start();
}

void MpiWorkload::map(RdmaProcess& app, unsigned rank, std::uint64_t va, std::uint64_t len) {
    state_[rank].buffers.map(app, va, len, "mpi: rank " + std::to_string(rank));
}

void MpiWorkload::received(RdmaProcess& app, unsigned rank, const msg::Status& st, const Rank::Open& open, Reply& r) {
    const auto it = rank_of_node_.find(st.source);
    if (it == rank_of_node_.end()) throw std::logic_error("mpi: a message from a node no rank runs on");
    r.source = static_cast<std::int32_t>(comms_.rank_in(open.comm, it->second));
    r.tag = MpiCommunicators::mpi_tag(st.tag);
    r.bytes = st.len;
    const bool ok = st.ok && delivered_intact(app, it->second, rank, st.tag, open.va, st.len);
    if (!ok)
        std::cerr << "vrdmasim: DATA MISMATCH: mpi rank " << rank << " received " << st.len << " B from rank "
                  << it->second << " (tag " << r.tag << ") that differ from what was sent\n";
    const sc_time latency = app.now() - open.posted;
    log_.finished(app.now(), st.ok, st.len, &latency);
}

std::uint64_t MpiWorkload::user_or_packed(RdmaProcess& app, unsigned rank, std::uint64_t va, std::uint64_t len,
                                          std::pair<std::uint64_t, std::uint64_t>& pack) {
    if (va != 0 || len == 0) {
        map(app, rank, va, len);
        return va;
    }
    pack = state_[rank].buffers.pooled(app, len, populate_, advice_);
    return pack.first;
}

void MpiWorkload::unpack(unsigned rank, msg::Endpoint& ep, std::pair<std::uint64_t, std::uint64_t> pack, bool receive,
                         std::uint64_t len) {
    if (!pack.second) return;
    if (receive) ep.charge_copy(len);
    state_[rank].buffers.give_back(pack);
}

void MpiWorkload::sending(RdmaProcess& app, unsigned rank, const Call& c, std::uint64_t va) {
    Rank& r = state_[rank];
    bool shared = false;
    for (const auto& [q, range] : r.sending) shared = shared || (range.first < va + c.bytes && va < range.second);
    if (!shared) fill_source(app, va, c.bytes, (std::uint64_t(rank) << 48) ^ r.fills++);
    std::vector<unsigned char> data(c.bytes);
    if (c.bytes && !app.debug_read(va, data.data(), c.bytes))
        throw std::logic_error("mpi: a send buffer the simulation mapped cannot be read");
    in_flight_[{rank, comms_.world_of(rank, c.comm, c.peer), tag_of(c.comm, c.tag)}].push_back(std::move(data));
}

bool MpiWorkload::delivered_intact(RdmaProcess& app, unsigned from, unsigned to, std::uint64_t tag, std::uint64_t va,
                                   std::uint64_t len) {
    auto& queue = in_flight_[{from, to, tag}];
    if (queue.empty()) throw std::logic_error("mpi: a message received that no rank sent");
    const std::vector<unsigned char> want = std::move(queue.front());
    queue.pop_front();
    const bool ok = want.size() == len && ProgramBuffers::holds(app, va, want);
    log_.verified(len, ok);
    return ok;
}

std::uint64_t MpiWorkload::scratch(RdmaProcess& app, unsigned rank, std::uint64_t len) {
    return state_[rank].buffers.scratch(app, len, populate_, advice_);
}

void MpiWorkload::program(RdmaProcess& app, unsigned rank) {
    msg::Endpoint& ep = *eps_[app.node()];
    ep.setup();
    ready_and_wait(app, ranks_);
    ep.connect(eps_);
    if (!launcher_) launch();   // the first rank to get here starts the program (host time, not simulated)
    const sc_time start = app.now();
    log_.began(start);
    Reply hello;
    hello.time_ps = ps_of(start);
    if (recorder_) recorder_->init(rank, hello.time_ps);
    launcher_->reply(rank, hello);
    bool away = false;   // in an untimed call: real MPI, which may wait for other ranks' simulated progress
    for (;;) {
        // After an untimed call the rank may be waiting, in real MPI, for
        // ranks that wait for the simulation: simulated time goes on in
        // steps of kAwayStep until its next call comes (so a run with
        // untimed calls is not a function of its configuration alone).
        while (away && !launcher_->ready(rank, 1)) {
            app.advance_to(app.now() + kAwayStep);
            app.sync_time();
        }
        const Call c = launcher_->receive(rank);
        state_[rank].ids = launcher_->receive_words(rank, c.count, "values (request ids, blocks)");
        away = static_cast<Op>(c.op) == Op::Untimed;
        if (c.compute_ps) {
            const sc_time t(static_cast<double>(c.compute_ps), sc_core::SC_PS);
            app.compute("compute", t);
            compute_us_.add(to_us(t));
        }
        // The call reaches the simulation now; what the program did with its
        // memory before it (its frees' munmap) is its own time, not MPI's.
        const std::uint64_t entered = ps_of(app.now());
        program_memory(app, rank, c);
        const sc_time t0 = app.now();
        Reply r;
        state_[rank].serving = c.op;
        state_[rank].serving_since = ps_of(t0);
        const bool more = serve(app, rank, ep, c, r);
        state_[rank].serving = 0;
        mpi_us_.add(to_us(app.now() - t0));
        r.time_ps = ps_of(app.now());
        if (!more) {
            end_freed(rank, ep);
            while (one_sided_ && one_sided_->finish_oldest(app, rank)) {   // one-sided operations still in flight
            }
            ep.finalize();
            app.finish_registrations();
            r.time_ps = ps_of(app.now());
            last_ = std::max(last_, app.now());
            if (recorder_) recorder_->call(rank, c, r, entered, r.time_ps, state_[rank].ids, comms_);
            if (++done_ == ranks_) app_us_.set(to_us(last_ - start));
            launcher_->reply(rank, r);
            break;
        }
        if (recorder_) recorder_->call(rank, c, r, entered, r.time_ps, state_[rank].ids, comms_);
        if (!std::exchange(state_[rank].replied, false)) launcher_->reply(rank, r);
    }
    if (done_ == ranks_) {
        const std::string how = launcher_->wait_for_exit(60);
        if (!how.empty()) throw std::runtime_error("mpi: the program failed after MPI_Finalize: " + how);
        if (recorder_) {
            const std::string anchor = recorder_->write(record_, comms_);
            std::cerr << "vrdmasim: mpi.record: the program's calls written to " << anchor
                      << " (replay: --workload.kind=trace --trace.file=" << anchor << ")\n";
        }
    }
    program_ended(app);
}

void MpiWorkload::program_memory(RdmaProcess& app, unsigned rank, const Call& c) {
    Rank& st = state_[rank];
    st.unmapped = launcher_->receive_words(rank, 2 * c.unmapped_runs, "unmapped runs");
    st.touched = launcher_->receive_words(rank, 2 * c.touched_runs, "touched runs");
    for (std::size_t i = 0; i < st.unmapped.size(); i += 2) st.buffers.unmap(app, st.unmapped[i], st.unmapped[i + 1]);
    for (std::size_t i = 0; i < st.touched.size(); i += 2) {
        st.buffers.touch(app, st.touched[i], st.touched[i + 1]);
        pages_touched_.inc(st.touched[i + 1] / kPage);
    }
    unmaps_.inc(c.unmapped_runs);
    if (recorder_) recorder_->memory(rank, st.unmapped, st.touched);
}

unsigned MpiWorkload::peer_node(unsigned rank, std::uint32_t ctx, std::int32_t peer) const {
    if (peer == mpiwire::kAnySource) {
        comms_.members(rank, ctx);   // a communicator it is in
        return msg::kAnySource;
    }
    // Itself too: the messaging library copies a self message (library/messaging/README.md).
    return node_of(comms_.world_of(rank, ctx, peer));
}

std::uint64_t MpiWorkload::tag_of(std::uint32_t ctx, std::int32_t tag) {
    return tag == mpiwire::kAnyTag ? MpiCommunicators::any_tag(ctx) : MpiCommunicators::tag(ctx, tag);
}

coll::Communicator& MpiWorkload::coll_of(RdmaProcess& app, unsigned rank, std::uint32_t ctx) {
    std::unique_ptr<coll::Communicator>& comm = state_[rank].colls[ctx];
    if (!comm) {
        coll::Communicator::Group group;
        group.members = comms_.members(rank, ctx);
        group.context = ctx;
        comm = std::make_unique<coll::Communicator>(ctx_, app, *eps_[app.node()], nodes_, group,
                                                    comms_.rank_in(ctx, rank));
    }
    return *comm;
}

bool MpiWorkload::serve(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const Call& c, Reply& r) {
    if (static_cast<Op>(c.op) == Op::Matched) {   // the library's question, not a call
        matched(rank, ep, c, r);
        return true;
    }
    calls_.inc();
    if (nonblocking_call(app, rank, c, r)) return true;
    if (MpiOneSided::ends_request(c)) {   // a request-based one-sided operation's end
        one_sided().end_request(app, rank, c, r);
        return true;
    }
    if (mpiwire::is_active_target(static_cast<Op>(c.op))) {   // MPI_Win_post, _start, _complete, _wait, _test
        try {
            one_sided().active_target(app, rank, c, state_[rank].ids, r);
        } catch (const MpiOneSided::Erroneous& e) {
            refusal_ = e.what();   // the program's error: refused (exit status 2)
            throw;
        }
        return true;
    }
    return carry_out(app, rank, ep, c, r);
}

std::string MpiWorkload::stalled() const {
    std::string s;
    unsigned in_calls = 0;
    for (unsigned rank = 0; rank < state_.size(); ++rank) {
        if (!state_[rank].serving) continue;
        ++in_calls;
        s += (s.empty() ? "rank " : "; rank ") + std::to_string(rank) + " in " +
             MpiRecorder::call_name(state_[rank].serving) + " since " +
             format_time_ps(static_cast<std::int64_t>(state_[rank].serving_since));
        const std::string w = one_sided_ ? one_sided_->waiting(rank) : "";
        if (!w.empty()) s += ", waiting for " + w;
    }
    // Every rank still running waits in a call: nothing but another rank's
    // call could end one (or a call longer than the run was let run).
    if (in_calls && in_calls == ranks_ - done_)
        s = "every rank still running waits in an MPI call (a deadlock, unless sim.time-limit cut a long one short): " +
            s;
    return s;
}

namespace {
// Where a call ends the run: MPI_Abort, or a call carry_out() does not
// carry out (one served before it, the library's own, another version's).
[[noreturn]] void stop_at(unsigned rank, const Call& c) {
    if (static_cast<Op>(c.op) == Op::Abort)
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + " called MPI_Abort (error code " +
                                 std::to_string(c.tag) + ")");
    const std::string name = static_cast<Op>(c.op) >= Op::Hello && static_cast<Op>(c.op) <= Op::WinTest
                                 ? MpiRecorder::call_name(c.op) + " (call " + std::to_string(c.op) + ")"
                                 : "call " + std::to_string(c.op);
    throw std::runtime_error("mpi: rank " + std::to_string(rank) + " sent " + name +
                             ", which this vrdmasim does not carry out here (not modelled; a preloaded library of "
                             "another version?)");
}
}   // namespace

// Every Op is listed, and no default: a new one this switch does not
// carry out is a compile-time error (-Wswitch, made an error here), not a
// call silently missed. MPI_Abort, the ones served before carry_out
// (serve()) and the library's own (Hello, Matched) reach stop_at(), the
// latter by name, as an Op of another version does. (The non-blocking
// collectives in a table: the function stays within a page.)
#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wswitch"
bool MpiWorkload::carry_out(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const Call& c, Reply& r) {
    switch (static_cast<Op>(c.op)) {
    case Op::Finalize: nonblocking_finalize(app, rank); return false;
    case Op::Untimed: untimed(rank, c); return true;
    case Op::CommSplit: split(app, rank, c, r); return true;
    case Op::Send:
    case Op::Isend:
    case Op::Recv:
    case Op::Irecv:
    case Op::Wait:
    case Op::Test:
    case Op::Cancel:
    case Op::RequestFree:
    case Op::Sendrecv: point_to_point(app, rank, ep, c, r); return true;
    case Op::Waitany:
    case Op::Testany:
    case Op::Testall: any_or_all(app, rank, ep, c, r); return true;
    case Op::Probe:
    case Op::Iprobe: probe(rank, ep, c, r); return true;
    case Op::Barrier:
    case Op::Bcast:
    case Op::Reduce:
    case Op::Allreduce:
    case Op::Allgather:
    case Op::Alltoall:
    case Op::Scan:
    case Op::Exscan:
    case Op::Gather:
    case Op::Scatter:
    case Op::Gatherv:
    case Op::Scatterv:
    case Op::Allgatherv:
    case Op::Alltoallv:
    case Op::ReduceScatter:
    case Op::ReduceScatterBlock: collective(app, rank, c, r); return true;
    case Op::WinCreate:
    case Op::WinFree:
    case Op::Put:
    case Op::Get:
    case Op::Accumulate:
    case Op::FetchOp:
    case Op::CompareSwap:
    case Op::Fence:
    case Op::Lock:
    case Op::Unlock:
    case Op::LockAll:
    case Op::UnlockAll:
    case Op::Flush:
    case Op::FlushAll:
    case Op::GetAccumulate:
    case Op::Rput:
    case Op::Rget:
    case Op::Raccumulate:
    case Op::RgetAccumulate: one_sided().serve(app, rank, c, r); return true;
    // clang-format off
    case Op::Ibarrier: case Op::Ibcast: case Op::Ireduce: case Op::Iallreduce: case Op::Iallgather:
    case Op::Ialltoall: case Op::Iscan: case Op::Iexscan: case Op::Igather: case Op::Iscatter: case Op::Igatherv:
    case Op::Iscatterv: case Op::Iallgatherv: case Op::Ialltoallv: case Op::IreduceScatter:
    case Op::IreduceScatterBlock:   // the non-blocking collectives: nonblocking_call() in serve()
    // clang-format on
    case Op::WinPost:   // MpiOneSided::active_target() in serve()
    case Op::WinStart:
    case Op::WinComplete:
    case Op::WinWait:
    case Op::WinTest:
    case Op::Hello:   // the launcher's (MpiLauncher::accept_ranks)
    case Op::Matched:   // matched() in serve()
    case Op::Abort: break;
    }
    stop_at(rank, c);
}
#pragma GCC diagnostic pop

void MpiWorkload::matched(unsigned rank, msg::Endpoint& ep, const Call& c, Reply& r) {
    const auto it = state_[rank].receives.find(c.request);
    if (it == state_[rank].receives.end())
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + " asks whether request " +
                                 std::to_string(c.request) + " matched, which is no open receive of it");
    msg::Status st;
    if (!ep.matched(c.request, st)) return;
    r.flag = 1;
    r.source = static_cast<std::int32_t>(comms_.rank_in(it->second.comm, rank_of_node_.at(st.source)));
    r.tag = MpiCommunicators::mpi_tag(st.tag);
    r.bytes = st.len;
}

void MpiWorkload::probe(unsigned rank, msg::Endpoint& ep, const Call& c, Reply& r) {
    msg::Status st;
    const unsigned from = peer_node(rank, c.comm, c.peer);
    if (static_cast<Op>(c.op) == Op::Probe) st = ep.probe(from, tag_of(c.comm, c.tag));
    else if (!ep.iprobe(from, tag_of(c.comm, c.tag), st)) return;
    r.flag = 1;
    r.source = static_cast<std::int32_t>(comms_.rank_in(c.comm, rank_of_node_.at(st.source)));
    r.tag = MpiCommunicators::mpi_tag(st.tag);
    r.bytes = st.len;
}

void MpiWorkload::split(RdmaProcess& app, unsigned rank, const Call& c, Reply& r) {
    static_assert(MpiCommunicators::kUndefined == mpiwire::kUndefinedColor, "MPI_UNDEFINED's colour");
    const std::uint64_t n = comms_.members(rank, c.comm).size();
    const std::uint64_t split = comms_.contribute(rank, c.comm, c.peer, c.tag);
    coll::Communicator& parent = coll_of(app, rank, c.comm);
    // Open MPI's ompi_comm_split: every member's (colour, key), 8 bytes, to
    // every member; then the members agree on the new context (an
    // allreduce of one word, ompi_comm_nextcid).
    const std::uint64_t buf = scratch(app, rank, 8 * (n + 1));
    const unsigned members = static_cast<unsigned>(n);
    const coll::Algorithm gather = algorithm(rank, coll::Op::Allgather, members, 8);
    const coll::Algorithm reduce = algorithm(rank, coll::Op::Allreduce, members, 8);
    collectives_.inc();
    parent.allgather(buf, buf + 8, 8, gather);
    parent.allreduce(buf, buf + 8, 1, reduce, coll::Reduction{});
    const std::uint32_t made = comms_.created(rank, c.comm, split);
    r.request = made == MpiCommunicators::kNone ? mpiwire::kNoComm : made;
    if (made != MpiCommunicators::kNone) {
        r.source = static_cast<std::int32_t>(comms_.rank_in(made, rank));
        r.bytes = comms_.members(rank, made).size();
    }
    meet(app, rank, {c.comm, split}, n, r);
}

coll::Algorithm MpiWorkload::algorithm(unsigned rank, coll::Op op, unsigned n, std::uint64_t bytes) const {
    coll::Algorithm a = coll::Algorithm::Auto;
    std::string why;
    if (!coll::resolve(op, coll::configured_algorithm(ctx_.config, op), n, bytes, a, why))
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + ": " + coll::name_of(op) + ": " + why);
    return a;
}

void MpiWorkload::meet(RdmaProcess& app, unsigned rank, std::pair<std::uint32_t, std::uint64_t> split, std::uint64_t n,
                       const Reply& r) {
    std::shared_ptr<Meeting>& at = meetings_[split];
    if (!at) at = std::make_shared<Meeting>();
    const std::shared_ptr<Meeting> m = at;
    m->replies.emplace_back(rank, r);
    state_[rank].replied = true;
    if (m->replies.size() < n) {
        app.wait_until([&] { return m->replies.size() == n && m->released; }, m->done);
        return;
    }
    // The last member: every member returns now, and is told so before any
    // waits for its next call (real MPI's split waits for them all).
    app.sync_time();
    meetings_.erase(split);
    m->released = true;
    for (auto& [q, reply] : m->replies) {
        reply.time_ps = ps_of(app.now());
        launcher_->reply(q, reply);
    }
    m->done.notify(sc_core::SC_ZERO_TIME);
}

void MpiWorkload::untimed(unsigned rank, const Call& c) {
    const std::string name(c.name, strnlen(c.name, sizeof c.name));
    if (c.tag == mpiwire::kCannotRun) {
        refusal_ = "mpi: rank " + std::to_string(rank) + " called " + name +
                   ", which the simulation does not time and which cannot run untimed either (workloads/mpi/README.md "
                   "\"One-sided\")";
        throw std::runtime_error(refusal_);
    }
    if (c.tag == mpiwire::kErroneous) {
        refusal_ = "mpi: rank " + std::to_string(rank) + " called " + name +
                   ", which MPI makes erroneous: refused whatever mpi.untimed says";
        throw std::runtime_error(refusal_);
    }
    if (ctx_.config[params_of<MpiParams>().untimed] != "count") {
        refusal_ = "mpi: rank " + std::to_string(rank) + " called " + name +
                   ", which the simulation does not time (workloads/mpi/README.md \"What is timed\"); mpi.untimed = "
                   "count lets it run untimed, counted in the summary";
        throw std::runtime_error(refusal_);
    }
    untimed_.inc();
    Counter*& named = untimed_by_name_[name];
    if (!named)
        named = &ctx_.stats.counter(stats_prefix(job_) + "mpi.untimed." + name, "", "untimed calls of this name");
    named->inc();
}

void MpiWorkload::any_or_all(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const Call& c, Reply& r) {
    const std::vector<WaitanyRequest> list = waitany_list(rank);
    switch (static_cast<Op>(c.op)) {
    case Op::Waitany:
        r.request = waitany(app, ep, list);
        r.flag = 1;
        break;
    case Op::Testany:
        r.request = testany(app, ep, list);
        r.flag = r.request < list.size();
        break;
    default: r.flag = testall(app, ep, list); break;   // Testall
    }
}

void MpiWorkload::end_freed(unsigned rank, msg::Endpoint& ep) {
    Rank& me = state_[rank];
    for (const std::uint64_t q : me.freed) {
        ep.wait(q);
        me.sending.erase(q);
        const auto pk = me.packed.find(q);
        if (pk != me.packed.end()) {
            unpack(rank, ep, pk->second, false, 0);
            me.packed.erase(pk);
        }
    }
    me.freed.clear();
}

void MpiWorkload::point_to_point(RdmaProcess& app, unsigned rank, msg::Endpoint& ep, const Call& c, Reply& r) {
    Rank& me = state_[rank];
    const Op op = static_cast<Op>(c.op);
    if (op == Op::RequestFree) {
        if (me.receives.count(c.request)) return;   // it goes on (the library's MPI_Wait at MPI_Finalize)
        if (!me.sending.count(c.request))
            throw std::runtime_error("mpi: rank " + std::to_string(rank) + " frees request " +
                                     std::to_string(c.request) + ", which is no send of it in flight");
        me.freed.push_back(c.request);
        return;
    }
    if (op == Op::Cancel) {
        if (!me.receives.count(c.request))
            throw std::runtime_error("mpi: rank " + std::to_string(rank) + " cancels request " +
                                     std::to_string(c.request) + ", which is no open receive of it");
        r.flag = ep.cancel(c.request);
        return;
    }
    if (op == Op::Wait || op == Op::Test) {
        // A request's end: a receive's status is what it matched.
        r.flag = op == Op::Wait || ep.test(c.request);
        if (!r.flag) return;
        const msg::Status st = ep.wait(c.request);
        me.sending.erase(c.request);
        const auto it = me.receives.find(c.request);
        const auto pk = me.packed.find(c.request);
        if (pk != me.packed.end()) {
            unpack(rank, ep, pk->second, it != me.receives.end() && !st.cancelled, st.len);
            me.packed.erase(pk);
        }
        if (it == me.receives.end()) return;
        if (st.cancelled) r.cancelled = 1;
        else received(app, rank, st, it->second, r);
        me.receives.erase(it);
        return;
    }
    const bool sends = op == Op::Send || op == Op::Isend || op == Op::Sendrecv;
    const bool receives = op == Op::Recv || op == Op::Irecv || op == Op::Sendrecv;
    // Sendrecv's receive is in the second buffer.
    std::uint64_t rva = op == Op::Sendrecv ? c.va2 : c.va;
    const std::uint64_t rlen = op == Op::Sendrecv ? c.bytes2 : c.bytes;
    msg::Endpoint::Request sq = 0, rq = 0;
    std::pair<std::uint64_t, std::uint64_t> spack{0, 0}, rpack{0, 0};
    const sc_time posted = app.now();
    if (sends) {
        const std::uint64_t sva = user_or_packed(app, rank, c.va, c.bytes, spack);
        messages_.inc();
        sending(app, rank, c, sva);
        if (spack.second) ep.charge_copy(c.bytes);   // packed by the library
        log_.posted(app.now());
        sq = ep.isend(peer_node(rank, c.comm, c.peer), tag_of(c.comm, c.tag), sva, c.bytes);
    }
    if (receives) {
        rva = user_or_packed(app, rank, rva, rlen, rpack);
        poison(app, rva, rlen, calls_.value());
        const std::int32_t from = op == Op::Sendrecv ? c.peer2 : c.peer, tag = op == Op::Sendrecv ? c.tag2 : c.tag;
        rq = ep.irecv(peer_node(rank, c.comm, from), tag_of(c.comm, tag), rva, std::max<std::uint64_t>(rlen, 1));
    }
    const Rank::Open open{posted, rva, c.comm};
    if (op == Op::Isend) {
        r.request = sq;
        me.sending[sq] = {c.va ? c.va : spack.first, (c.va ? c.va : spack.first) + c.bytes};
        if (spack.second) me.packed[sq] = spack;
    } else if (op == Op::Irecv) {
        r.request = rq;
        me.receives[rq] = open;
        if (rpack.second) me.packed[rq] = rpack;
    } else {
        if (receives) {
            const msg::Status st = ep.wait(rq);
            received(app, rank, st, open, r);
            unpack(rank, ep, rpack, true, st.len);
        }
        if (sends) {
            ep.wait(sq);
            unpack(rank, ep, spack, false, 0);
        }
    }
}

namespace {
// A reduction's operation and datatype as the preload sent them
// (preload/reduction.cpp), checked.
coll::Reduction reduction_of(unsigned rank, const Call& c) {
    const std::string who = "mpi: rank " + std::to_string(rank) + ": a reduction ";
    const std::uint32_t op = c.reduce_op & ~mpiwire::kStandIn;
    if (op >= coll::reduce_op_names().size() || c.datatype >= coll::datatype_names().size())
        throw std::runtime_error(who + "of operation " + std::to_string(op) + " on datatype " +
                                 std::to_string(c.datatype) + ", which this vrdmasim does not know");
    const coll::Reduction red{static_cast<coll::ReduceOp>(op), static_cast<coll::Datatype>(c.datatype)};
    std::string why;
    if (!red.valid(why)) throw std::runtime_error(who + "the simulation cannot run: " + why);
    return red;
}
}   // namespace

void MpiWorkload::collective(RdmaProcess& app, unsigned rank, const Call& c, Reply& r) {
    const bool nonblocking = mpiwire::is_nonblocking(static_cast<Op>(c.op));
    const Op op = mpiwire::blocking_of(static_cast<Op>(c.op));
    coll::Communicator& comm = coll_of(app, rank, c.comm);
    const unsigned me = comm.rank();
    CollectiveData d;
    d.ranks = comm.size();
    if (!mpiwire::collective_of(op, d.op))
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + " sent call " + std::to_string(c.op) +
                                 ", which this vrdmasim does not know");
    const bool reduction = coll::is_reduction(d.op);
    // A reduction: the program's operation on its elements (counts are
    // elements, of the library's layout: the datatype's extent).
    if (reduction) d.red = reduction_of(rank, c);
    if (reduction && (c.reduce_op & mpiwire::kStandIn)) stand_ins_.inc();
    d.bytes = d.op == coll::Op::Barrier ? 0 : reduction ? c.elements * d.red.element_bytes() : c.bytes;
    d.root = coll::has_root(d.op) ? static_cast<unsigned>(c.root) : 0;
    if (coll::takes_blocks(d.op)) blocks(rank, d);
    if (d.root >= d.ranks)
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + ": a collective's root " +
                                 std::to_string(c.root) + " outside the communicator's " + std::to_string(d.ranks) +
                                 " ranks");
    const coll::Algorithm a = algorithm(rank, d.op, d.ranks, std::max<std::uint64_t>(d.bytes, 8));
    // The program's buffers; the library's own where MPI has none to give
    // (MPI_IN_PLACE's input, a non-root's reduce result) or a root's two
    // buffers overlap, or the data of a non-contiguous datatype are packed.
    std::uint64_t sbuf = c.va, rbuf = d.op == coll::Op::Bcast ? c.va : c.va2;
    std::pair<std::uint64_t, std::uint64_t> pack{0, 0};   // a non-contiguous datatype's data, packed
    // A scatter's data are the root's alone.
    const std::uint64_t sbytes = d.op == coll::Op::Scatter && me != d.root ? 0 : d.send_bytes();
    if (d.op != coll::Op::Barrier) {
        sbuf = user_or_packed(app, rank, sbuf, sbytes, pack);
        if (d.op == coll::Op::Bcast) rbuf = sbuf;
        if (pack.second && (d.op != coll::Op::Bcast || me == d.root)) eps_[app.node()]->charge_copy(sbytes);
        if (rbuf) map(app, rank, rbuf, d.receive_bytes());
    }
    // MPI_IN_PLACE (or a root's own buffers that overlap) sends from the
    // library's buffer; a non-root's reduce result lands there.
    // (A non-blocking call's own buffer: others may be in flight with it.)
    // (An in-place alltoall's or alltoallv's blocks too: a block received
    // must not overwrite one still to be sent.)
    std::pair<std::uint64_t, std::uint64_t> own_buffer{0, 0};
    state_[rank].buffers.own_buffer(app, d, sbytes, sbuf, rbuf, populate_, advice_,
                                    nonblocking ? &own_buffer : nullptr);
    // Input a collective in flight reads too (MPI lets two calls read one
    // buffer): the simulation's data (a pattern a call) need one of their
    // own, so this call reads the library's buffer instead.
    std::pair<std::uint64_t, std::uint64_t> own_input{0, 0};
    if (d.op != coll::Op::Bcast && in_flight_reads(rank, sbuf, sbytes))
        sbuf = user_or_packed(app, rank, 0, std::max<std::uint64_t>(sbytes, 8), own_input);
    collectives_.inc();
    // Its number on its communicator, the communicator's context above:
    // data of two communicators never look alike.
    const std::uint64_t call = std::uint64_t(c.comm) << 32 | state_[rank].collectives[c.comm]++;
    // (Poisoned first: an in-place gather's or scatter's block lies in it.)
    if (d.fills(me) && rbuf && rbuf != sbuf) poison(app, rbuf, d.receive_bytes(), call);
    d.prepare(app, sbuf, rbuf, me, call);
    const sc_time t0 = app.now();
    log_.posted(t0);
    CollectiveCall k{&comm, nullptr, d, me, sbuf, sbytes, rbuf, call, pack, own_buffer, own_input, t0};
    if (nonblocking) {
        // Started: the library runs it while the rank serves its next calls.
        k.request = comm.start([d, a, sbuf, rbuf](coll::Communicator& own) { d.run(own, a, sbuf, rbuf); });
        r.request = mpiwire::kCollectiveRequest | state_[rank].starts++;
        state_[rank].started.emplace(r.request, std::move(k));
        return;
    }
    d.run(comm, a, sbuf, rbuf);
    collective_end(app, rank, k);
}

void MpiWorkload::collective_end(RdmaProcess& app, unsigned rank, const CollectiveCall& k) {
    const CollectiveData& d = k.d;
    const std::uint64_t got = d.result_bytes(k.me);
    const std::vector<unsigned char> want = d.expected(k.me, k.call);
    std::vector<unsigned char> have;
    const bool ok = d.result(app, k.rbuf, k.me, have) && have == want;
    log_.verified(got, ok);
    if (!ok)
        std::cerr << "vrdmasim: DATA MISMATCH: mpi collective " << k.call << " (" << coll::name_of(d.op) << ") at rank "
                  << rank << "\n";
    unpack(rank, *eps_[app.node()], k.pack, d.op == coll::Op::Bcast && k.me != d.root, got);
    unpack(rank, *eps_[app.node()], k.own, false, 0);
    unpack(rank, *eps_[app.node()], k.input, false, 0);
    const sc_time latency = app.now() - k.t0;
    log_.finished(app.now(), true, got, &latency);
}

void MpiWorkload::blocks(unsigned rank, CollectiveData& d) const {
    // The values after the Call (protocol.hpp): lengths sent to each rank,
    // their offsets, lengths received from each, their offsets.
    const std::vector<std::uint64_t>& v = state_[rank].ids;
    const std::size_t n = d.ranks;
    if (v.size() != 4 * n)
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + ": " + coll::name_of(d.op) + " with " +
                                 std::to_string(v.size()) + " values of blocks for a communicator of " +
                                 std::to_string(n) + " ranks (4 each expected)");
    auto part = [&](std::size_t k) {
        return std::vector<std::uint64_t>(v.begin() + static_cast<std::ptrdiff_t>(k * n),
                                          v.begin() + static_cast<std::ptrdiff_t>((k + 1) * n));
    };
    d.sends = {part(0), part(1)};
    d.receives = {part(2), part(3)};
}

std::string MpiWorkload::findings(const Config& c, const StatRegistry& stats) {
    if (c[params_of<WorkloadParams>().kind] != "mpi") return "";
    std::string stand_in;
    if (const std::uint64_t k = stats.sum_counters("mpi.stand_in_reductions"))
        stand_in = "mpi: " + std::to_string(k) +
                   " reduction(s) of a user-defined MPI_Op timed with a stand-in (collective.reduce-rate over "
                   "their bytes; bxor on those bytes in place of the program's operation on the simulated data)\n";
    const std::uint64_t n = stats.sum_counters("mpi.untimed_calls");
    if (!n) return stand_in;
    std::string which;
    for (const Counter* k : stats.counters_containing("mpi.untimed.")) {
        const std::string name = stats.info(*k).name.str();
        which += (which.empty() ? "" : ", ") + name.substr(name.find("mpi.untimed.") + 12) + " " +
                 std::to_string(k->value());
    }
    return "mpi: " + std::to_string(n) +
           " MPI call(s) ran untimed (mpi.untimed = count: real MPI, no simulated time; the figures leave them "
           "out): " +
           which + "\n" + stand_in;
}

namespace {

const WorkloadKind::Declare declared([] {
    WorkloadKind k;
    k.name = "mpi";
    k.order = 125;
    k.help =
        "mpi: an unmodified MPI program's processes, their MPI calls timed on the simulated cluster (section "
        "[mpi])";
    k.create = [](const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job,
                  const std::vector<FileSystem*>&) -> std::unique_ptr<Workload> {
        Workload::require_all_present(apps, "mpi");
        return std::make_unique<MpiWorkload>(ctx, apps, job);
    };
    k.declare_params = MpiWorkload::declare_params;
    k.declare_metrics = MpiWorkload::declare_metrics;
    k.read_refusal = [](const Config&) {
        return "has nothing to choose in workload.kind = mpi: " + std::string(Workload::kProtocolDecides);
    };
    k.two_sided_refusal = [](const Config&) {
        return std::string("an MPI program's messages and collectives go through the two-sided library already");
    };
    k.two_sided_library = [](const Config&) { return true; };
    k.one_channel = true;
    k.findings = MpiWorkload::findings;
    // A real MPI program of our own (tests/mpi_ring.cpp, built beside
    // vrdmasim's folder when the tests are), on the SMMU's translations.
    k.trial.needs = {
        {"smmu.enabled", "true"}, {"mpi.program", "{build}/workloads/mpi/mpi_ring"}, {"mpi.args", "1024 1"}};
    // 2 rounds of 8 KiB messages and the collectives; under mpirun, about a
    // second of host time a run: one combination in 6.
    k.trial.matrix = {{"mpi.args", "8192 2"}};
    k.trial.matrix_sample = 6;
    k.trial.effects = {
        // An MPI program's compute between its calls.
        {"mpi.compute", {{"mpi.compute-time", "5us"}, {"sim.time-limit", "1s"}}, ""},
        // A call the simulation does not time: refused (the default: the
        // run stops at it), or counted.
        {"mpi.untimed",
         {{"mpi.program", "{build}/workloads/mpi/mpi_clock"}, {"mpi.args", "untimed"}},
         "MPI_Comm_split_type"},
        // The program's own first touches and frees between its calls.
        {"mpi.program-memory", {{"mpi.program", "{build}/workloads/mpi/mpi_memory"}, {"mpi.args", "touch"}}, ""},
    };
    return k;
}());

}   // namespace

}   // namespace vrdmasim
