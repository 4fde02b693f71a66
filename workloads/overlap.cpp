#include "workloads/overlap.hpp"
#include "workloads/registry.hpp"

#include "library/messaging/endpoint.hpp"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace vrdmasim {

using sc_core::sc_time;

namespace {
constexpr std::uint64_t kPage = 4096;
constexpr std::uint64_t kWorkBytes = 64 * 1024;   // the program's private working memory
}   // namespace

OverlapParams::OverlapParams()
    : set("overlap", "the overlap workload: compute phases beside transfers in flight (workload.kind = overlap)"),
      mode(set.choice("mode", "nonblocking", {"blocking", "nonblocking"},
                      "blocking: wait for each transfer's completion before computing (no overlap, no race); "
                      "nonblocking: compute while it is in flight (rdma.buffer-guard says whether the touches "
                      "race or fault)")),
      touch_probability(set.real("touch-probability", "0.25",
                                 "probability that a compute phase's store goes into the buffer of the transfer in "
                                 "flight (a write's source, a read's destination) instead of private memory")
                            .range("0", "1")),
      phases(set.integer("phases", "4", "compute phases per transfer, each ending with one 8-byte store")
                 .range("1", "1000000")),
      compute(
          set.time("compute", "10us", "CPU time of one compute phase (the store not included)").range("0ps", "1s")) {}

void OverlapWorkload::declare_params(ParamRegistry& reg) { reg.add(params_of<OverlapParams>().set); }

void OverlapWorkload::declare_metrics(MetricRegistry& reg) {
    const auto overlap_run = [](const Config& c) { return c[params_of<WorkloadParams>().kind] == "overlap"; };
    // Job 0's, as the summary's other per-job figures: a fraction or a span
    // of each job does not add up over jobs (`jobP.workload.overlap.*` for
    // the others).
    const auto job0 = [overlap_run](const char* stat) {
        return [overlap_run, stat](const MetricInputs& in) {
            if (!overlap_run(in.config)) return format_metric(0.0);
            const Scalar* v = in.stats.find_scalar(stat);
            if (!v) throw std::logic_error(std::string("statistic ") + stat + " missing");
            return format_metric(v->value());
        };
    };
    reg.add("overlap_fraction", "fraction",
            "overlap workload: the share of the transfers' time hidden behind compute, (transfer + compute "
            "- iteration time) / transfer time summed over the iterations, clamped to [0, 1] "
            "(`workload.overlap.overlap`: job 0's, with node.processes > 1); 0 in other runs.",
            job0("workload.overlap.overlap"));
    reg.add("overlap_end_to_end_us", "us",
            "overlap workload: first post to the last iteration's end, checks excluded "
            "(`workload.overlap.end_to_end`: job 0's); 0 in other runs.",
            job0("workload.overlap.end_to_end"));
    reg.sum_counters("overlap_inflight_touches",
                     "overlap workload: stores the program made into a buffer while its transfer was in flight "
                     "(`workload.overlap.inflight_touches`; 0 when blocking or guarded); 0 in other runs.",
                     {"overlap.inflight_touches"}, overlap_run);
    reg.sum_counters("overlap_corrupted_transfers",
                     "overlap workload: transfers whose destination the check found corrupted by the program's own "
                     "stores while in flight: application races, caught and reported, not simulator failures "
                     "(`workload.overlap.corrupted_transfers`); 0 in other runs.",
                     {"overlap.corrupted_transfers"}, overlap_run);
}

OverlapWorkload::OverlapWorkload(const SimContext& ctx, RdmaProcess& src, RdmaProcess& dst, unsigned job)
    : Workload(ctx, job),
      src_(src),
      dst_(dst),
      read_(ctx.config[params_of<WorkloadParams>().operation] == "read"),
      two_sided_(ctx.config[params_of<WorkloadParams>().two_sided]),
      blocking_(ctx.config[params_of<OverlapParams>().mode] == "blocking"),
      guarded_(src.guards_buffers()),
      touch_p_(ctx.config[params_of<OverlapParams>().touch_probability]),
      phases_(static_cast<std::uint64_t>(ctx.config[params_of<OverlapParams>().phases])),
      compute_(ctx.config[params_of<OverlapParams>().compute]),
      msg_(ctx.config[params_of<WorkloadParams>().message_size]),
      iterations_(static_cast<std::uint64_t>(ctx.config[params_of<WorkloadParams>().iterations])),
      rng_(seed_ ^ 0x6f7665726c6170ull),
      iterations_done_(ctx.stats.counter(stats_prefix(job) + "overlap.iterations", "", "transfers with their compute")),
      touches_(ctx.stats.counter(stats_prefix(job) + "overlap.touches", "",
                                 "stores into the transfer's buffer (the others went to private memory)")),
      inflight_touches_(ctx.stats.counter(stats_prefix(job) + "overlap.inflight_touches", "",
                                          "stores into the buffer performed while its transfer was in flight")),
      corrupted_(ctx.stats.counter(stats_prefix(job) + "overlap.corrupted_transfers", "",
                                   "transfers the check found corrupted by the program's own stores in flight "
                                   "(application races, caught)")),
      raced_bytes_(ctx.stats.counter(stats_prefix(job) + "overlap.corrupted_bytes", "B",
                                     "bytes of the corrupted transfers (delivered, not verified equal)")),
      transfer_time_(ctx.stats.scalar(stats_prefix(job) + "overlap.transfer_time", "us",
                                      "sum over transfers of post to completion record written", Scalar::Kind::Level)),
      compute_time_(ctx.stats.scalar(stats_prefix(job) + "overlap.compute_time", "us",
                                     "sum of the compute phases' CPU time", Scalar::Kind::Level)),
      iteration_time_(ctx.stats.scalar(stats_prefix(job) + "overlap.iteration_time", "us",
                                       "sum over iterations of post to the program having both computed and seen "
                                       "the completion",
                                       Scalar::Kind::Level)),
      overlap_(ctx.stats.scalar(stats_prefix(job) + "overlap.overlap", "fraction",
                                "share of the transfer time hidden behind compute: (transfer + compute - iteration) "
                                "/ transfer, clamped to [0, 1]",
                                Scalar::Kind::Level)),
      end_to_end_(ctx.stats.scalar(stats_prefix(job) + "overlap.end_to_end", "us",
                                   "first post to the end of the last iteration", Scalar::Kind::Level)) {
    const Config& c = ctx.config;
    if (msg_ < 8)
        throw c.refuse(params_of<WorkloadParams>().message_size,
                       "the overlap workload's stores are 8 bytes: messages of at least 8 B");
    span_ = (msg_ + kPage - 1) / kPage * kPage;
    RdmaProcess& init = read_ ? dst_ : src_;
    RdmaProcess& other = read_ ? src_ : dst_;
    const std::uint64_t per = read_ ? 1 : init.records_for(msg_);
    if (two_sided_) {
        // The two-sided library's endpoints, one per process (read has no
        // two-sided form: refused before, docs/composition.md R3).
        check_fits(src_, span_ + kWorkBytes + msg::Endpoint::mapped_bytes(c, 1));
        check_fits(dst_, span_ + msg::Endpoint::mapped_bytes(c, 1));
        for (RdmaProcess* a : {&src_, &dst_}) check_locked(*a, msg::Endpoint::locked_regions(c, 1));
        eps_.assign(std::max(src_.node(), dst_.node()) + 1, nullptr);
        owned_.push_back(std::make_unique<msg::Endpoint>(ctx, src_, std::vector<unsigned>{dst_.node()}));
        owned_.push_back(std::make_unique<msg::Endpoint>(ctx, dst_, std::vector<unsigned>{src_.node()}));
        eps_[src_.node()] = owned_[0].get();
        eps_[dst_.node()] = owned_[1].get();
        src_.program = [this](RdmaProcess& a) { initiator_two_sided(a); };
        dst_.program = [this](RdmaProcess& a) { target_two_sided(a); };
        return;
    }
    check_fits(init, span_ + kWorkBytes + per * sizeof(CompletionRecord));
    check_fits(other, span_);
    check_locked(init, {per * sizeof(CompletionRecord)});
    init.program = [this](RdmaProcess& a) { initiator(a); };
    other.program = [this](RdmaProcess& a) { target(a); };
}

OverlapWorkload::~OverlapWorkload() = default;

std::string OverlapWorkload::partition_refusal() const {
    std::string why = Workload::partition_refusal();
    if (why.empty())
        why = across_boards(src_.node(), dst_.node(), "",
                            "its check compares the destination with the source's bytes as they were at the post "
                            "and with the stores the initiator made in flight (the initiator reads the other node's "
                            "buffer; two-sided, both programs settle one shared record of each message), so it "
                            "needs both nodes' memory at once; and its target's buffer (remote_buf_) is read by the "
                            "initiator directly, not published through the start barrier (GlobalSync)");
    return why;
}

double OverlapWorkload::uniform() { return static_cast<double>(rng_() >> 11) * (1.0 / 9007199254740992.0); }

// The passive side: maps its buffer and registers it once for the run
// (write: the destination; read: the source the reads fetch).
void OverlapWorkload::target(RdmaProcess& app) {
    remote_buf_ = app.alloc(span_, populate_, advice_);
    remote_ok_ = read_ ? app.register_read_source(remote_buf_, msg_) : app.register_receive(remote_buf_, msg_);
    ready_and_wait(app, 2);
    program_ended(app);   // (before the initiator's first post: finished() waits for the initiator)
}

// The program's phases between the post and the wait: compute, and with
// probability workload.touch a store into the buffer in flight (else into
// its own work area). Both draws every phase, whatever the mode: the runs
// compared touch the same words at the same phases. `finish` waits for the
// transfer (blocking: before the first phase).
std::vector<OverlapWorkload::Touch> OverlapWorkload::compute_phases(RdmaProcess& app, std::uint64_t buf,
                                                                    std::uint64_t work,
                                                                    const std::vector<unsigned char>& expect,
                                                                    double& sum_c) {
    const std::uint64_t words = msg_ / 8;
    std::vector<Touch> touches;
    for (std::uint64_t k = 0; k < phases_; ++k) {
        app.compute("compute", compute_);
        sum_c += to_us(compute_);
        const bool touch = uniform() < touch_p_;
        const std::uint64_t off = (rng_() % words) * 8;
        if (touch) {
            std::uint64_t e = 0;
            std::memcpy(&e, expect.data() + off, 8);
            const std::uint64_t value = ~e;
            app.sync_time();   // the store happens at its simulated time among the engine's accesses
            const sc_time at = app.store_at(buf + off, value);
            touches.push_back({off, value, at});
            touches_.inc();
        } else {
            app.store(work + off % kWorkBytes, k);
        }
    }
    return touches;
}

// When the transfer completed: its last record as the engine wrote it.
sc_time OverlapWorkload::engine_done(RdmaProcess& app, std::uint64_t records, std::uint64_t parts, sc_time t0) {
    sc_time done = t0;
    for (std::uint64_t k = 0; k < parts; ++k) {
        sc_time w;
        if (app.record_written(records + k * sizeof(CompletionRecord), w)) done = std::max(done, w);
    }
    return done;
}

void OverlapWorkload::initiator(RdmaProcess& app) {
    const std::uint64_t per = read_ ? 1 : app.records_for(msg_);
    const std::uint64_t buf = app.alloc(span_, populate_, advice_);   // the buffer in flight
    const std::uint64_t work = app.alloc(kWorkBytes, true);
    const std::uint64_t records = app.alloc_locked(per * sizeof(CompletionRecord));
    bool local_ok = true;
    if (read_) local_ok = app.register_receive(buf, msg_);
    ready_and_wait(app, 2);
    RdmaProcess& other = read_ ? src_ : dst_;
    sc_time first = sc_core::sc_max_time(), last;
    double sum_x = 0, sum_c = 0, sum_i = 0;
    for (std::uint64_t i = 0; i < iterations_; ++i) {
        if (read_) prepare(app, other.node(), remote_buf_, app.node(), buf, msg_, i);
        else prepare(app, app.node(), buf, other.node(), remote_buf_, msg_, i);
        // What the transfer must deliver: the source as it is at the post
        // (the pattern, or with workload.fill-source = false what earlier
        // iterations' stores left in it).
        std::vector<unsigned char> expect(msg_, 0);
        if (!(read_ ? other.debug_read(remote_buf_, expect.data(), msg_) : app.debug_read(buf, expect.data(), msg_)))
            throw std::logic_error("overlap: the source of transfer " + std::to_string(i) + " is unreadable");
        const sc_time t0 = app.now();
        first = std::min(first, t0);
        log_.posted(t0);
        RdmaProcess::Message m;
        const bool posted = remote_ok_ && local_ok;
        if (!read_) {
            m.src = buf;
            m.dst = remote_buf_;
            m.len = msg_;
            m.tag = i;
            m.dst_node = other.node();
            m.records = records;
            if (posted) app.send(m);
            else m.failed = true;
        } else if (posted) {
            app.get(other.node(), remote_buf_, buf, msg_, i, records);
        }
        CompletionRecord rec;
        rec.status = kStatusError;
        auto finish = [&] {
            if (!read_) rec = app.complete(m);
            else if (posted) rec = app.wait_record(records);
        };
        if (blocking_) finish();
        const std::vector<Touch> touches = compute_phases(app, buf, work, expect, sum_c);
        if (!blocking_) finish();
        const sc_time t_end = app.now();
        last = std::max(last, t_end);
        const sc_time done = engine_done(app, records, read_ ? 1 : m.parts, t0);
        for (const Touch& t : touches)
            if (t.at < done) inflight_touches_.inc();
        sum_x += to_us(done - t0);
        sum_i += to_us(t_end - t0);
        iterations_done_.inc();
        const bool ok = rec.status == kStatusOk;
        const sc_time latency = done - t0;
        log_.finished(t_end, ok, ok ? rec.bytes : 0, &latency);
        if (!ok) continue;
        if (rec.bytes != msg_) {
            log_.verified(msg_, false);
            std::cerr << "vrdmasim: DATA MISMATCH: transfer " << i << " reported " << rec.bytes << " of " << msg_
                      << " B delivered with success status\n";
            continue;
        }
        check(read_ ? app : other, read_ ? buf : remote_buf_, expect, i, touches, done);
    }
    transfer_time_.set(sum_x);
    compute_time_.set(sum_c);
    iteration_time_.set(sum_i);
    overlap_.set(sum_x > 0 ? std::clamp((sum_x + sum_c - sum_i) / sum_x, 0.0, 1.0) : 0.0);
    end_to_end_.set(iterations_ ? to_us(last - first) : 0.0);
    app.finish_registrations();
    finished_ = true;
    program_ended(app);
}

// workload.two-sided: the target posts a receive per iteration into its
// buffer; the bytes it received are kept until the sender's half is in.
void OverlapWorkload::target_two_sided(RdmaProcess& app) {
    msg::Endpoint& ep = *eps_[app.node()];
    remote_buf_ = app.alloc(span_, populate_, advice_);
    ep.setup();
    ready_and_wait(app, 2);
    ep.connect(eps_);
    for (std::uint64_t i = 0; i < iterations_; ++i) {
        guard_destination(app, remote_buf_, msg_, i);
        const msg::Status st = ep.wait(ep.irecv(src_.node(), i, remote_buf_, msg_));
        Pending& p = pending_[i];
        p.got.assign(msg_, 0);
        p.received_ok =
            st.ok && st.len == msg_ && st.source == src_.node() && app.debug_read(remote_buf_, p.got.data(), msg_);
        p.received = true;
        settle(i);
    }
    ep.finalize();
    app.finish_registrations();
    target_done_ = true;
    program_ended(app);
}

// workload.two-sided: the initiator's program with isend in place of the
// library's one-sided send; the two-sided library guards the buffer from
// isend to the request's completion (rdma.buffer-guard = mprotect), and a
// touch of it meanwhile waits for that completion.
void OverlapWorkload::initiator_two_sided(RdmaProcess& app) {
    msg::Endpoint& ep = *eps_[app.node()];
    const std::uint64_t buf = app.alloc(span_, populate_, advice_);
    const std::uint64_t work = app.alloc(kWorkBytes, true);
    ep.setup();
    ready_and_wait(app, 2);
    ep.connect(eps_);
    const std::uint64_t words = msg_ / 8;
    sc_time first = sc_core::sc_max_time(), last;
    double sum_x = 0, sum_c = 0, sum_i = 0;
    for (std::uint64_t i = 0; i < iterations_; ++i) {
        fill_source(app, buf, msg_, i);
        Pending& p = pending_[i];
        p.expect.assign(msg_, 0);
        if (!app.debug_read(buf, p.expect.data(), msg_))
            throw std::logic_error("overlap: the source of transfer " + std::to_string(i) + " is unreadable");
        const sc_time t0 = app.now();
        first = std::min(first, t0);
        log_.posted(t0);
        const msg::Endpoint::Request req = ep.isend(dst_.node(), i, buf, msg_);
        msg::Status st;
        bool completed = false;
        if (blocking_) st = ep.wait(req), completed = true;
        for (std::uint64_t k = 0; k < phases_; ++k) {
            app.compute("compute", compute_);
            sum_c += to_us(compute_);
            const bool touch = uniform() < touch_p_;
            const std::uint64_t off = (rng_() % words) * 8;
            if (touch) {
                std::uint64_t e = 0;
                std::memcpy(&e, p.expect.data() + off, 8);
                const std::uint64_t value = ~e;
                app.sync_time();
                const sc_time at = app.store_at(buf + off, value);
                p.touches.push_back({off, value, at});
                touches_.inc();
            } else {
                app.store(work + off % kWorkBytes, k);
            }
        }
        if (!completed) st = ep.wait(req);
        const sc_time t_end = app.now();
        last = std::max(last, t_end);
        // The send completed when the library completed it: the buffer is
        // the program's again from then (an eager copy taken, a rendezvous
        // read done).
        p.done = std::max(t0, st.completed);
        for (const Touch& t : p.touches)
            if (t.at < p.done) inflight_touches_.inc();
        sum_x += to_us(p.done - t0);
        sum_i += to_us(t_end - t0);
        iterations_done_.inc();
        const sc_time latency = p.done - t0;
        log_.finished(t_end, st.ok, st.ok ? st.len : 0, &latency);
        if (!st.ok) {
            pending_.erase(i);   // failed: nothing delivered to check
            continue;
        }
        p.sent = true;
        settle(i);
    }
    transfer_time_.set(sum_x);
    compute_time_.set(sum_c);
    iteration_time_.set(sum_i);
    overlap_.set(sum_x > 0 ? std::clamp((sum_x + sum_c - sum_i) / sum_x, 0.0, 1.0) : 0.0);
    end_to_end_.set(iterations_ ? to_us(last - first) : 0.0);
    ep.finalize();
    app.finish_registrations();
    finished_ = true;
    program_ended(app);
}

void OverlapWorkload::settle(std::uint64_t i) {
    auto it = pending_.find(i);
    if (it == pending_.end() || !it->second.sent || !it->second.received) return;
    Pending& p = it->second;
    if (!p.received_ok) {
        log_.verified(msg_, false);
        std::cerr << "vrdmasim: DATA MISMATCH: overlap message " << i << " to " << dst_.group()
                  << " was not received whole from " << src_.group() << "\n";
    } else {
        check(dst_, remote_buf_, p.expect, i, p.touches, p.done, &p.got);
    }
    pending_.erase(it);
}

void OverlapWorkload::check(RdmaProcess& dst, std::uint64_t dst_addr, const std::vector<unsigned char>& expect,
                            std::uint64_t i, const std::vector<Touch>& touches, sc_time done,
                            const std::vector<unsigned char>* given) {
    const std::uint64_t len = expect.size();
    std::vector<unsigned char> got(len);
    bool bad = given ? given->size() != len : !dst.debug_read(dst_addr, got.data(), len);
    if (given && !bad) got = *given;
    bool corrupted = false;
    std::uint64_t first_bad = len;
    for (std::uint64_t off = 0; !bad && off < len; off += 8) {
        const std::uint64_t n = std::min<std::uint64_t>(8, len - off);
        if (n < 8 || std::none_of(touches.begin(), touches.end(), [&](const Touch& t) { return t.offset == off; })) {
            if (std::memcmp(got.data() + off, expect.data() + off, n) != 0) bad = true, first_bad = off;
            continue;
        }
        std::uint64_t a = 0, e = 0;
        std::memcpy(&a, got.data() + off, 8);
        std::memcpy(&e, expect.data() + off, 8);
        // The word's stores: before the completion each may have reached
        // the destination (a source store read by the engine, a destination
        // store not yet overwritten); after it, a destination store is the
        // program's own later write and must be what the word holds (a
        // source store can no longer reach the destination).
        const Touch* last_after = nullptr;
        bool allowed = a == e;
        for (const Touch& t : touches) {
            if (t.offset != off) continue;
            if (t.at >= done) last_after = &t;
            else allowed = allowed || a == t.value;
        }
        if (read_ && last_after) {
            if (a != last_after->value) bad = true, first_bad = off;
            continue;
        }
        if (!allowed) bad = true, first_bad = off;
        else if (a != e) corrupted = true;
    }
    if (bad) {
        log_.verified(len, false);
        std::ostringstream os;
        os << "DATA MISMATCH: overlap transfer " << i << " to " << dst.group() << " 0x" << std::hex << dst_addr
           << std::dec << " (" << len << " B) holds at byte " << first_bad
           << " neither its source's data nor a value the program stored";
        std::cerr << "vrdmasim: " << os.str() << "\n";
        if (ctx_.tracer.noting())
            ctx_.tracer.note(Tracer::Track{}, "data mismatch", sc_core::sc_time_stamp(), sc_core::SC_ZERO_TIME,
                             "workload", os.str());
        return;
    }
    if (corrupted) {
        corrupted_.inc();
        raced_bytes_.inc(len);
        if (ctx_.tracer.noting()) {
            std::ostringstream os;
            os << "application race caught: overlap transfer " << i << " delivered data the program overwrote in "
               << "flight (" << (read_ ? "destination" : "source") << " touched before the completion)";
            ctx_.tracer.note(Tracer::Track{}, "race caught", done, sc_core::SC_ZERO_TIME, "workload", os.str());
        }
        return;
    }
    log_.verified(len, true);
}

std::vector<std::pair<std::string, std::string>> OverlapWorkload::self_check() const {
    std::vector<std::pair<std::string, std::string>> out;
    const bool open = unguarded();
    if (corrupted() > 0 && (!open || inflight_touches() == 0))
        out.emplace_back("race-only-unguarded", std::to_string(corrupted()) + " transfer(s) found corrupted with " +
                                                    std::to_string(inflight_touches()) + " store(s) made in flight" +
                                                    (open ? "" : " in a blocking or guarded run"));
    if (!open && inflight_touches() > 0)
        out.emplace_back("guard-keeps-off", std::to_string(inflight_touches()) +
                                                " store(s) reached a buffer in flight in a blocking or guarded run");
    return out;
}

namespace {

const WorkloadKind::Declare declared([] {
    WorkloadKind k;
    k.name = "overlap";
    k.order = 90;
    k.help =
        "overlap: one process computes beside its transfers in flight and touches their buffers now and then "
        "(section [overlap], rdma.buffer-guard)";
    k.create = [](const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job,
                  const std::vector<FileSystem*>&) -> std::unique_ptr<Workload> {
        const auto [src, dst] = Workload::two_nodes(ctx.config, apps);
        Workload::require_all_present(apps, "overlap");
        return std::make_unique<OverlapWorkload>(ctx, *apps[src], *apps[dst], job);
    };
    k.declare_params = OverlapWorkload::declare_params;
    k.declare_metrics = OverlapWorkload::declare_metrics;
    k.read_refusal = WorkloadKind::built;
    k.two_sided_refusal = WorkloadKind::built;   // isend and irecv
    k.reads = {"workload.src-node", "workload.dst-node", "workload.message-size", "workload.iterations"};
    k.findings = [](const Config&, const StatRegistry& stats) -> std::string {
        const std::uint64_t raced = stats.sum_counters("overlap.corrupted_transfers");
        if (!raced) return "";
        return "vrdmasim: " + std::to_string(raced) +
               " transfer(s) corrupted by the application's own stores into buffers in flight (an application "
               "race, caught by the byte check; not a simulator failure)\n";
    };
    // overlap.mode's effect (tests/system/param_effect_test.cpp): 16
    // transfers of 16 KiB, half the compute phases touching a buffer in
    // flight, blocking waits first.
    k.trial.effects.emplace_back("overlap.mode", WorkloadKind::Settings{{"workload.message-size", "16KiB"},
                                                                        {"workload.iterations", "16"},
                                                                        {"overlap.touch-probability", "0.5"},
                                                                        {"sim.time-limit", "1s"}});
    return k;
}());

}   // namespace

}   // namespace vrdmasim
