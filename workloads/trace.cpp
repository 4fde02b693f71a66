#include "workloads/trace.hpp"

#include <otf2/OTF2_Events.h>

#include <algorithm>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "library/messaging/params.hpp"
#include "workloads/collective_data.hpp"

namespace vrdmasim {

using sc_core::sc_time;

TraceParams::TraceParams()
    : set("trace", "trace replay (workload.kind = trace): an MPI application's OTF2 trace"),
      file(set.string("file", "",
                      "the OTF2 archive's anchor file (NAME.otf2, beside its NAME.def and NAME/ directory), as "
                      "Score-P writes it, relative to the directory vrdmasim runs in; configs/traces/ has the "
                      "project's test traces")),
      compute_scale(set.real("compute-scale", "1",
                             "the recorded compute time between two MPI calls of a rank is replayed times this "
                             "(a trace from a faster CPU than the simulated Cortex-A53s: above 1; an experiment's "
                             "choice)")
                        .range("0", "1000")) {}

void TraceWorkload::declare_params(ParamRegistry& reg) { reg.add(params_of<TraceParams>().set); }

void TraceWorkload::declare_metrics(MetricRegistry& reg) {
    const auto run = [](const Config& c) { return c[params_of<WorkloadParams>().kind] == "trace"; };
    reg.sum_scalars("trace_app_time_us", "us",
                    "trace replay: the application's time to solution, from the first rank's start to the last "
                    "rank's end (`workload.trace.app_time`); 0 in other runs.",
                    "trace.app_time", 6, run);
    reg.sum_scalars("trace_compute_us", "us",
                    "trace replay: compute time replayed, over every rank (`workload.trace.compute_time`); 0 in other "
                    "runs.",
                    "trace.compute_time", 6, run);
    reg.sum_scalars("trace_mpi_us", "us",
                    "trace replay: time in MPI calls, over every rank (`workload.trace.mpi_time`); 0 in other runs.",
                    "trace.mpi_time", 6, run);
    reg.sum_counters("trace_messages", "trace replay: point-to-point messages sent (`workload.trace.messages`); 0 in "
                     "other runs.",
                     {"trace.messages"}, run);
    reg.sum_counters("trace_collectives", "trace replay: collective calls, each rank's counted "
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
      app_us_(ctx.stats.scalar(stats_prefix(job) + "trace.app_time", "us",
                               "first rank's start to last rank's end", Scalar::Kind::Level)) {
    const Config& c = ctx.config;
    const auto& P = params_of<TraceParams>();
    const std::string file = c[P.file];
    if (file.empty()) throw c.refuse(P.file, "workload.kind = trace replays a trace: name its OTF2 anchor file");
    if (c[params_of<NodeParams>().processes] > 1)
        throw c.refuse(params_of<NodeParams>().processes,
                       "trace replay puts rank r on node r: several processes per node are not built yet for it");
    reader_ = std::make_unique<TraceReader>(c, P.file.name(), file);
    ranks_ = reader_->ranks();
    if (ranks_ > apps.size())
        throw c.refuse(P.file, file + " has " + std::to_string(ranks_) + " ranks, the system " +
                                   std::to_string(apps.size()) + " nodes (one rank a node)");
    reader_->check();   // every event: one the replay cannot do is refused now (exit 2)
    scale_ = c[P.compute_scale];
    for (unsigned r = 0; r < ranks_; ++r) {
        apps_.push_back(apps[r]);
        nodes_.push_back(apps[r]->node());
        rank_compute_.push_back(&ctx.stats.scalar(stats_prefix(job) + "trace.rank" + std::to_string(r) + ".compute_time",
                                                  "us", "rank r's compute replayed", Scalar::Kind::Sum));
        rank_mpi_.push_back(&ctx.stats.scalar(stats_prefix(job) + "trace.rank" + std::to_string(r) + ".mpi_time", "us",
                                              "rank r's time in MPI calls", Scalar::Kind::Sum));
    }
    eps_.assign(apps.size(), nullptr);
    for (unsigned r = 0; r < ranks_; ++r) {
        std::vector<unsigned> peers;
        for (unsigned q = 0; q < ranks_; ++q)
            if (q != r) peers.push_back(nodes_[q]);
        check_locked(*apps[r], msg::Endpoint::locked_regions(c, ranks_ - 1));
        owned_.push_back(std::make_unique<msg::Endpoint>(ctx, *apps[r], peers));
        eps_[nodes_[r]] = owned_.back().get();
        apps[r]->program = [this, r](RdmaProcess& app) { program(app, r); };
    }
    state_.resize(ranks_);
    first_ = sc_core::sc_max_time();
}

TraceWorkload::~TraceWorkload() = default;

std::uint64_t TraceWorkload::message_key(unsigned from, unsigned to, std::uint32_t tag, std::uint64_t seq) const {
    // Unique per message of the run (the pattern of a key differs from any
    // other's at every 8-byte word: Workload::fill_source).
    return ((std::uint64_t(from) * ranks_ + to) << 40) ^ (std::uint64_t(tag) << 24) ^ seq;
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

void TraceWorkload::collective(RdmaProcess& app, unsigned rank, Rank& r, coll::Communicator& comm,
                               const TraceEvent& end) {
    const unsigned n = ranks_;
    CollectiveData d;
    d.ranks = n;
    d.root = end.root < n ? end.root : 0;
    switch (end.op) {
    case OTF2_COLLECTIVE_OP_BARRIER: d.op = coll::Op::Barrier; break;
    case OTF2_COLLECTIVE_OP_BCAST:
        d.op = coll::Op::Bcast;
        d.bytes = rank == d.root ? end.sent : end.received;
        break;
    case OTF2_COLLECTIVE_OP_REDUCE: d.op = coll::Op::Reduce; d.bytes = (end.sent + 7) / 8 * 8; break;
    case OTF2_COLLECTIVE_OP_ALLREDUCE: d.op = coll::Op::Allreduce; d.bytes = (end.sent + 7) / 8 * 8; break;
    case OTF2_COLLECTIVE_OP_ALLGATHER: d.op = coll::Op::Allgather; d.bytes = end.sent; break;
    case OTF2_COLLECTIVE_OP_ALLTOALL: d.op = coll::Op::Alltoall; d.bytes = end.sent / n; break;
    default: throw std::logic_error("trace: a collective check() lets through");
    }
    const std::uint64_t call = r.collective++;
    const std::uint64_t slen = std::max<std::uint64_t>(d.send_bytes(), 1), rlen = std::max<std::uint64_t>(d.receive_bytes(), 1);
    if (std::max(slen, rlen) > r.coll_len) {
        r.coll_len = std::max(slen, rlen);
        r.coll_buffers = {app.alloc(r.coll_len, populate_, advice_), app.alloc(r.coll_len, populate_, advice_)};
    }
    const auto [sbuf, rbuf] = r.coll_buffers;
    if (d.prepare(app, sbuf, rbuf, rank, call)) poison(app, rbuf, d.receive_bytes(), call);
    const sc_time t0 = app.now();
    log_.posted(t0);
    std::string why;
    coll::Algorithm a = coll::Algorithm::Auto;
    if (!coll::resolve(d.op, coll::Algorithm::Auto, n, d.bytes, a, why)) throw std::logic_error("trace: " + why);
    d.run(comm, a, sbuf, rbuf);
    collectives_.inc();
    const std::uint64_t got = d.result_bytes(rank);
    const std::vector<unsigned char> want = d.expected(rank, call);
    std::vector<unsigned char> have(got);
    bool ok = got == 0 || app.debug_read(rbuf, have.data(), got);
    ok = ok && have == want;
    log_.verified(got, ok);
    if (!ok) std::cerr << "vrdmasim: DATA MISMATCH: trace collective " << call << " (" << coll::name_of(d.op)
                       << ") at rank " << rank << "\n";
    const sc_time latency = app.now() - t0;
    log_.finished(app.now(), true, got, &latency);
}

void TraceWorkload::program(RdmaProcess& app, unsigned rank) {
    msg::Endpoint& ep = *eps_[app.node()];
    Rank& r = state_[rank];
    ep.setup();
    ready_and_wait(app, ranks_);
    ep.connect(eps_);
    coll::Communicator comm(ctx_, app, ep, nodes_, rank);
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
            mpi_start = app.now();
            break;
        case TraceEvent::Kind::Leave:
            if (!e.mpi) break;
            last = e.time;
            mpi_us_.add(to_us(app.now() - mpi_start));
            rank_mpi_[rank]->add(to_us(app.now() - mpi_start));
            break;
        case TraceEvent::Kind::Send:
        case TraceEvent::Kind::Isend: {
            const Rank::Key owner{true, e.peer, e.length};
            const std::uint64_t buf = acquire(app, r, owner);
            const std::uint64_t key = message_key(rank, e.peer, e.tag, r.sent[{e.peer, e.tag}]++);
            fill_source(app, buf, e.length, key);
            log_.posted(app.now());
            messages_.inc();
            if (e.kind == TraceEvent::Kind::Send) {
                ep.send(nodes_[e.peer], e.tag, buf, e.length);
                release(r, owner, buf);
            } else {
                Rank::Pending p;
                p.request = ep.isend(nodes_[e.peer], e.tag, buf, e.length);
                p.buf = buf;
                p.owner = owner;
                r.requests[e.request] = p;
            }
            break;
        }
        case TraceEvent::Kind::IsendComplete: {
            const auto it = r.requests.find(e.request);
            if (it == r.requests.end() || it->second.recv)
                throw std::runtime_error("trace: rank " + std::to_string(rank) + " completes send request " +
                                         std::to_string(e.request) + " it never started");
            ep.wait(it->second.request);
            release(r, it->second.owner, it->second.buf);
            r.requests.erase(it);
            break;
        }
        case TraceEvent::Kind::IrecvRequest: {
            // What it receives is in its completion (MPI_Irecv's event):
            // read ahead in the rank's stream for it.
            TraceEvent done;
            const std::uint64_t id = e.request;
            if (!reader_->peek(rank, [id](const TraceEvent& x) {
                    return x.kind == TraceEvent::Kind::Irecv && x.request == id;
                }, done))
                throw std::runtime_error("trace: rank " + std::to_string(rank) + "'s receive request " +
                                         std::to_string(id) + " never completes in the trace");
            Rank::Pending p;
            p.recv = true;
            p.peer = done.peer;
            p.tag = done.tag;
            p.length = done.length;
            p.owner = Rank::Key{false, done.peer, done.length};
            p.buf = acquire(app, r, p.owner);
            p.key = message_key(done.peer, rank, done.tag, r.received[{done.peer, done.tag}]++);
            poison(app, p.buf, p.length, p.key);
            p.request = ep.irecv(nodes_[done.peer], done.tag, p.buf, std::max<std::uint64_t>(done.length, 1));
            r.requests[id] = p;
            break;
        }
        case TraceEvent::Kind::Irecv:
        case TraceEvent::Kind::Recv: {
            Rank::Pending p;
            sc_time t0 = app.now();
            if (e.kind == TraceEvent::Kind::Irecv) {
                const auto it = r.requests.find(e.request);
                if (it == r.requests.end() || !it->second.recv)
                    throw std::logic_error("trace: a receive completes that was never posted");
                p = it->second;
                r.requests.erase(it);
            } else {
                p.peer = e.peer;
                p.tag = e.tag;
                p.length = e.length;
                p.owner = Rank::Key{false, e.peer, e.length};
                p.buf = acquire(app, r, p.owner);
                p.key = message_key(e.peer, rank, e.tag, r.received[{e.peer, e.tag}]++);
                poison(app, p.buf, p.length, p.key);
                p.request = ep.irecv(nodes_[e.peer], e.tag, p.buf, std::max<std::uint64_t>(e.length, 1));
            }
            const msg::Status st = ep.wait(p.request);
            if (!st.ok || st.len != p.length)
                std::cerr << "vrdmasim: DATA MISMATCH: trace rank " << rank << " received " << st.len << " B from rank "
                          << p.peer << " (tag " << p.tag << ") where the trace has " << p.length << " B\n";
            const bool ok = st.ok && st.len == p.length && verify(app, p.buf, p.length, p.key);
            if (!(st.ok && st.len == p.length)) log_.verified(p.length, false);
            release(r, p.owner, p.buf);
            const sc_time latency = app.now() - t0;
            log_.finished(app.now(), ok || st.ok, p.length, &latency);
            break;
        }
        case TraceEvent::Kind::CollectiveBegin: {
            TraceEvent end;
            if (!reader_->peek(rank, [](const TraceEvent& x) { return x.kind == TraceEvent::Kind::CollectiveEnd; }, end))
                throw std::runtime_error("trace: rank " + std::to_string(rank) + "'s collective never ends in the trace");
            collective(app, rank, r, comm, end);
            break;
        }
        case TraceEvent::Kind::CollectiveEnd: break;   // done at its begin
        }
    }
    if (!r.requests.empty())
        throw std::runtime_error("trace: rank " + std::to_string(rank) + " ends with " +
                                 std::to_string(r.requests.size()) + " request(s) the trace never completes");
    ep.finalize();
    app.finish_registrations();
    last_ = std::max(last_, app.now());
    if (++done_ == ranks_) app_us_.set(to_us(last_ - first_));
    program_ended();
}

}  // namespace vrdmasim
