// The lock workload (see lock_workload.hpp; workloads/README.md "The lock workload").
#include "workloads/lock_workload.hpp"
#include "workloads/registry.hpp"

#include <algorithm>
#include <cmath>
#include <iostream>
#include <limits>
#include <sstream>
#include <stdexcept>

namespace vrdmasim {

using sc_core::sc_time;

LockParams::LockParams()
    : set("lock",
          "the lock workload (workload.kind = lock): one lock or semaphore per job, every node's process "
          "of the job contending"),
      kind(set.choice("kind", "spin", {"spin", "mcs", "semaphore", "wait-queue", "bakery", "plain-semaphore"},
                      "spin: test-and-set by swap with back-off; mcs: MCS queue lock (swap on the tail, "
                      "compare-and-swap to release, hand-over by a notifying RDMA write); semaphore: counting "
                      "semaphore by fetch-and-add; wait-queue: sleeping lock, waiters queue up and are woken by a "
                      "notification; bakery: Lamport's bakery lock from plain RDMA reads and writes; "
                      "plain-semaphore: counting semaphore whose count is guarded by a bakery lock")),
      home_node(
          set.integer("home-node", "0", "node whose memory holds the lock and the shared counter").range("0", "65535")),
      acquisitions(set.integer("acquisitions", "20", "times each process takes the lock (a workload choice)")
                       .range("1", "1000000")),
      critical_section(set.time("critical-section", "1us",
                                "CPU time inside the critical section, besides the shared counter's read and "
                                "write (a workload choice)")
                           .range("0ps", "1s")),
      think_time(set.time("think-time", "1us", "CPU time between a release and the next acquire (a workload choice)")
                     .range("0ps", "1s")),
      semaphore_count(set.integer("semaphore-count", "1",
                                  "semaphore, plain-semaphore: holders at once (1: a lock, and the shared counter "
                                  "is checked); the lock kinds need 1")
                          .range("1", "65535")),
      backoff(set.time("backoff", "500ns",
                       "first wait between two polls of a busy lock (spin, semaphore, bakery; doubled after each "
                       "failed poll up to lock.backoff-max): about one network round trip (*estimate*)")
                  .range("0ps", "1ms")),
      backoff_max(set.time("backoff-max", "8us", "longest wait between two polls (*estimate*)").range("0ps", "10ms")) {}

void LockWorkload::declare_metrics(MetricRegistry& reg) {
    auto lock_run = [](const Config& c) { return c[params_of<WorkloadParams>().kind] == "lock"; };
    reg.quantile("lock_acquire_us_p50", "us",
                 "lock workload: median acquire latency, acquire called to lock held (`workload.lock.acquire_latency`; "
                 "with node.processes > 1, over every job's acquisitions).",
                 "lock.acquire_latency", 0.5, lock_run);
    reg.quantile("lock_acquire_us_p99", "us", "lock workload: 99th percentile of the same.", "lock.acquire_latency",
                 0.99, lock_run);
    // Over every job: all acquire and release operations over all
    // acquisitions (one job: its `lock.ops_per_acquire`).
    reg.add("lock_ops_per_acquire", "",
            "lock workload: engine operations (network atomics, RDMA reads and writes) that acquiring and "
            "releasing cost per acquisition, the critical section's counter update not included (every job's "
            "`lock.lock_operations` over every job's `lock.acquisitions`).",
            [lock_run](const MetricInputs& in) {
                if (!lock_run(in.config)) return format_metric(0.0);
                const std::uint64_t ops = in.stats.require_sum_counters("lock.lock_operations");
                const std::uint64_t acquired = in.stats.require_sum_counters("lock.acquisitions");
                return format_metric(acquired ? static_cast<double>(ops) / static_cast<double>(acquired) : 0.0);
            });
    // Each job's index is over its own processes (they contend for its
    // lock); the column is the least fair job's, never an average that a
    // fair job could lift.
    reg.add("lock_fairness", "fraction",
            "lock workload: Jain's fairness index of the processes' mean acquire latencies (1: all wait alike; "
            "1/n: one process does all the waiting); with node.processes > 1, each job's index is over its own "
            "processes (`jobP.workload.lock.fairness`) and this is the lowest of them.",
            [lock_run](const MetricInputs& in) {
                if (!lock_run(in.config)) return format_metric(0.0);
                const auto jobs = static_cast<unsigned>(in.config[params_of<NodeParams>().processes]);
                double least = std::numeric_limits<double>::infinity();
                for (unsigned j = 0; j < jobs; ++j) {
                    const std::string name = Workload::stats_prefix(j) + "lock.fairness";
                    const Scalar* f = in.stats.find_scalar(name);
                    if (!f) throw std::logic_error("summary metric lock_fairness: no statistic " + name);
                    if (std::isnan(f->value())) return format_metric(f->value());   // no value over a region
                    least = std::min(least, f->value());
                }
                return format_metric(least);
            });
}

LockWorkload::LockWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job)
    : Workload(ctx, job),
      apps_(apps),
      lock_kind_(ctx.config[params_of<LockParams>().kind]),
      acquisitions_(static_cast<std::uint64_t>(ctx.config[params_of<LockParams>().acquisitions])),
      critical_(ctx.config[params_of<LockParams>().critical_section]),
      think_(ctx.config[params_of<LockParams>().think_time]),
      exclusive_(!is_semaphore(lock_kind_) || ctx.config[params_of<LockParams>().semaphore_count] == 1),
      acquired_(ctx.stats.counter(stats_prefix(job) + "lock.acquisitions", "",
                                  "lock acquisitions, all processes of the job")),
      acquire_us_(
          shared_histogram(ctx.stats, stats_prefix(job) + "lock.acquire_latency", "us", "acquire called to lock held")),
      lock_ops_(ctx.stats.counter(stats_prefix(job) + "lock.lock_operations", "",
                                  "engine operations posted by acquire and release (atomics, reads, writes)")),
      cs_ops_(ctx.stats.counter(stats_prefix(job) + "lock.cs_operations", "",
                                "engine operations of the critical sections (the shared counter's read and write)")),
      violations_(ctx.stats.counter(stats_prefix(job) + "lock.violations", "",
                                    "failed checks: counter, holders at once, lock left held, operation count")),
      ops_per_acquire_(ctx.stats.scalar(stats_prefix(job) + "lock.ops_per_acquire", "",
                                        "lock_operations / acquisitions", Scalar::Kind::Level)),
      fairness_(ctx.stats.scalar(stats_prefix(job) + "lock.fairness", "fraction",
                                 "Jain's index of the processes' mean acquire latencies", Scalar::Kind::Level)),
      max_holders_(ctx.stats.scalar(stats_prefix(job) + "lock.max_holders", "",
                                    "most processes holding the lock at once (simulated time)", Scalar::Kind::Level)),
      final_counter_(ctx.stats.scalar(stats_prefix(job) + "lock.counter", "",
                                      "the shared counter at the end (= acquisitions for a lock)",
                                      Scalar::Kind::Level)) {
    const Config& c = ctx.config;
    const auto n = static_cast<unsigned>(apps.size());
    const auto home = static_cast<std::uint64_t>(c[params_of<LockParams>().home_node]);
    if (home >= n) throw c.refuse(params_of<LockParams>().home_node, "the system has " + std::to_string(n) + " nodes");
    const auto count = static_cast<unsigned>(c[params_of<LockParams>().semaphore_count]);
    if (!is_semaphore(lock_kind_) && count != 1)
        throw c.refuse(params_of<LockParams>().semaphore_count,
                       "applies to lock.kind = semaphore or plain-semaphore; lock.kind = " + lock_kind_ + " needs 1");
    if (c[params_of<LockParams>().backoff_max] < c[params_of<LockParams>().backoff])
        throw c.refuse(params_of<LockParams>().backoff_max, "must be at least lock.backoff");
    site_.home = static_cast<unsigned>(home);
    site_.processes = n;
    site_.local.assign(n, 0);
    site_.count = count;
    site_.backoff = c[params_of<LockParams>().backoff];
    site_.backoff_max = c[params_of<LockParams>().backoff_max];
    const auto probe = make_lock(lock_kind_, site_);
    initial_ = probe->initial_words();
    check_fits(*apps[site_.home], 8 * (initial_.size() + 1));
    for (RdmaProcess* a : apps) {
        check_locked(*a, {sizeof(CompletionRecord) + 8, RemoteMemory::kRing * sizeof(CompletionRecord),
                          8 * std::max(1u, probe->local_words())});
        a->program = [this](RdmaProcess& app) { program(app); };
    }
    latency_sum_us_.assign(n, 0.0);
}

std::string LockWorkload::partition_refusal() const {
    std::string why = Workload::partition_refusal();
    for (unsigned n = 0; why.empty() && n < apps_.size(); ++n)
        why = across_boards(site_.home, n, "",
                            "every process's holding intervals, acquire latencies and engine operations go into "
                            "one object, and the last program to end checks them there, reads the home's counter "
                            "and lock words and sums every node's engine completions (count_engine_completions); "
                            "and the lock's words (site_.base, site_.local) are read by every node directly, not "
                            "published through the start barrier (GlobalSync)");
    return why;
}

void LockWorkload::program(RdmaProcess& app) {
    const unsigned me = app.node();
    RemoteMemory rm(app);
    rm.setup();
    auto lock = make_lock(lock_kind_, site_);
    if (lock->local_words()) site_.local[me] = app.alloc_locked(8 * lock->local_words());
    if (me == site_.home) {
        // The counter, then the lock's words; fresh memory reads 0, so only
        // other initial values are written (a cold area stays cold).
        const std::uint64_t bytes = 8 * (initial_.size() + 1);
        counter_ = app.alloc(bytes, populate_, advice_);
        site_.base = counter_ + 8;
        for (std::size_t k = 0; k < initial_.size(); ++k)
            if (initial_[k] != 0)
                app.debug_write(site_.word(static_cast<unsigned>(k)),
                                reinterpret_cast<const unsigned char*>(&initial_[k]), 8);
        if (!app.register_receive(counter_, bytes))
            throw std::runtime_error(app.group() + ": could not register the lock's memory (rdma.strategy)");
    }
    ready_and_wait(app, static_cast<unsigned>(apps_.size()));
    for (std::uint64_t i = 0; i < acquisitions_; ++i) {
        const sc_time start = app.now();
        log_.posted(start);
        std::uint64_t ops = rm.operations();
        lock->acquire(rm, me);
        const sc_time got = app.now();
        lock_ops_.inc(rm.operations() - ops);
        app.compute(critical_);
        if (exclusive_) {
            ops = rm.operations();
            const std::uint64_t v = rm.get(site_.home, counter_);
            rm.put(site_.home, counter_, v + 1);
            cs_ops_.inc(rm.operations() - ops);
        }
        held_.push_back({got, app.now()});
        ops = rm.operations();
        lock->release(rm, me);
        lock_ops_.inc(rm.operations() - ops);
        const sc_time waited = got - start;
        acquired_.inc();
        acquire_us_.add(to_us(waited));
        latency_sum_us_[me] += to_us(waited);
        log_.finished(got, true, 0, &waited);
        app.compute(think_);
    }
    library_ops_ += rm.operations();
    ++ended_;
    if (finished()) conclude(*apps_[site_.home]);
    program_ended(app);
}

void LockWorkload::fail(const std::string& what) {
    violations_.inc();
    log_.verified(8, false);   // a mismatch: the run fails (exit status 1)
    const std::string job = job_ == 0 ? "" : ", job " + std::to_string(job_);
    std::cerr << "vrdmasim: LOCK MISMATCH (" << lock_kind_ << job << "): " << what << "\n";
    if (ctx_.tracer.noting())
        ctx_.tracer.note(Tracer::Track{}, "lock mismatch", sc_core::sc_time_stamp(), sc_core::SC_ZERO_TIME, "workload",
                         "LOCK MISMATCH" + job + ": " + what);
}

void LockWorkload::conclude(RdmaProcess& home) {
    const std::uint64_t total = acquisitions_ * apps_.size();
    // The shared counter: every increment under the lock, none lost.
    std::uint64_t counter = 0;
    home.debug_read(counter_, reinterpret_cast<unsigned char*>(&counter), 8);
    final_counter_.set(static_cast<double>(counter));
    if (exclusive_ && counter != total)
        fail("shared counter is " + std::to_string(counter) + " after " + std::to_string(total) + " acquisitions");
    // Holders at once, in simulated time: a sweep over the intervals.
    std::vector<std::pair<sc_time, int>> edges;
    for (const Held& h : held_) {
        edges.emplace_back(h.from, +1);
        edges.emplace_back(h.to, -1);
    }
    std::sort(edges.begin(), edges.end());   // at equal times a release (-1) sorts before a grant
    int depth = 0, deepest = 0;
    for (const auto& e : edges) deepest = std::max(deepest, depth += e.second);
    max_holders_.set(deepest);
    if (deepest > static_cast<int>(site_.count))
        fail(std::to_string(deepest) + " processes held it at once (at most " + std::to_string(site_.count) + ")");
    // Every acquisition released: the lock's words say "free".
    std::vector<std::uint64_t> words(initial_.size());
    home.debug_read(site_.base, reinterpret_cast<unsigned char*>(words.data()), 8 * words.size());
    const std::string idle = make_lock(lock_kind_, site_)->check_idle(words);
    if (!idle.empty()) fail("left held: " + idle);
    // The job's operation count against the engines' own: every operation
    // one of its processes posted completed on one of that process's
    // channels (a completion counted on another job's channel, or an
    // operation of another job's counted here, breaks it). The sum over
    // jobs against the engines' posted counts is a run invariant
    // (src/sim/invariants.cpp, "engine-operations").
    if (!engine_completions_) throw std::logic_error("lock workload: no engine count for job " + std::to_string(job_));
    const std::uint64_t engine_ops = engine_completions_();
    if (engine_ops != library_ops_)
        fail("the library posted " + std::to_string(library_ops_) + " engine operations, the engines completed " +
             std::to_string(engine_ops) + " on the job's channels");
    ops_per_acquire_.set(total ? static_cast<double>(lock_ops_.value()) / static_cast<double>(total) : 0.0);
    // Jain's index of the per-process mean acquire latencies.
    double sum = 0, sq = 0;
    for (double l : latency_sum_us_) {
        const double mean = l / static_cast<double>(acquisitions_);
        sum += mean;
        sq += mean * mean;
    }
    fairness_.set(sq > 0 ? sum * sum / (static_cast<double>(latency_sum_us_.size()) * sq) : 1.0);
}

namespace {

const WorkloadKind::Declare declared([] {
    WorkloadKind k;
    k.name = "lock";
    k.order = 80;
    k.help =
        "lock: every node contends for one lock or semaphore at lock.home-node, each job its own (section "
        "[lock])";
    k.create = [](const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job,
                  const std::vector<FileSystem*>&) -> std::unique_ptr<Workload> {
        Workload::require_all_present(apps, "lock");
        return std::make_unique<LockWorkload>(ctx, apps, job);
    };
    k.declare_params = [](ParamRegistry& reg) { reg.add(params_of<LockParams>().set); };
    k.declare_metrics = LockWorkload::declare_metrics;
    k.read_refusal = [](const Config&) {
        return std::string(
            "has nothing to choose in workload.kind = lock: its engine operations are remote atomics "
            "and loads on the lock's words, not messages a write or a read could move");
    };
    k.two_sided_refusal = [](const Config&) {
        return std::string("the lock workload moves no messages (remote atomics and loads)");
    };
    k.guard_refusal = [](const Config&) {
        return std::string(
            "has nothing to guard in workload.kind = lock: its engine operations are atomics on lock "
            "words the library owns, not application buffers in flight");
    };
    // lock.kind's effect (tests/system/param_effect_test.cpp): every kind
    // its own operations on the wire and its own acquire latencies.
    k.trial.effects.emplace_back("lock.kind",
                                 WorkloadKind::Settings{{"lock.acquisitions", "4"}, {"sim.time-limit", "1s"}});
    return k;
}());

}   // namespace

}   // namespace vrdmasim
