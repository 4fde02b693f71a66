#include "workloads/workload.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <iostream>
#include <sstream>

#include "library/collectives/one_sided.hpp"
#include "library/messaging/endpoint.hpp"
#include "workloads/registry.hpp"
#include "library/rdma/strategy/strategy.hpp"

namespace vrdmasim {

using sc_core::sc_time;

TransferLog::TransferLog(StatRegistry& s, const std::string& p)
    : posted_count(s.counter(p + "transfers_posted", "", "transfers posted (each must finish, ok or not)")),
      transfers(s.counter(p + "transfers", "", "transfers finished, ok or not")),
      errors(s.counter(p + "transfer_errors", "", "transfers that finished with an error status")),
      bytes_delivered(s.counter(p + "bytes_delivered", "B", "bytes of transfers reported successful")),
      bytes_verified(s.counter(p + "bytes_verified", "B", "bytes found equal to the source at the destination")),
      mismatches(s.counter(p + "data_mismatches", "",
                           "transfers reported successful whose destination differs from the source")),
      latency_us(s.histogram(p + "latency", "us", "per-transfer latency as the workload defines it")),
      local_payload_in(s.spread(p + "local_payload_in", "B",
                                "bytes of transfers that came in without the network (CPU copies), each spread "
                                "over its copy's time")),
      stats_(s),
      prefix_(p) {
    // Every node adds to them: their sums must not depend on the order
    // (a partitioned run's ranks add theirs apart; stats.hpp).
    latency_us.keep_exact_sum();
}

Histogram& TransferLog::latency_hops(unsigned h) {
    auto it = by_hops_.find(h);
    if (it != by_hops_.end()) return *it->second;
    Histogram& hist =
        stats_.histogram(prefix_ + "latency_hops" + std::to_string(h), "us",
                         "per-transfer latency of transfers " + std::to_string(h) + " router-to-router hops long");
    hist.keep_exact_sum();
    by_hops_.emplace(h, &hist);
    return hist;
}

void TransferLog::posted(sc_time at) {
    posted_count.inc();
    first_post = std::min(first_post, at);
}

void TransferLog::finished(sc_time at, bool ok, std::uint64_t bytes, const sc_time* latency, int hops) {
    // Counted at `at` (a region of interest takes the transfers that
    // finished in it by their time, not by when a process running ahead
    // said so: StatRegistry::count_at).
    const std::uint64_t t = at.value(), now = sc_core::sc_time_stamp().value();
    stats_.count_at(transfers, 1, t, now);
    if (ok) stats_.count_at(bytes_delivered, bytes, t, now);
    else stats_.count_at(errors, 1, t, now);
    if (latency) {
        const double us = latency->to_seconds() * 1e6;
        stats_.sample_at(latency_us, us, t, now);
        if (hops >= 0) stats_.sample_at(latency_hops(static_cast<unsigned>(hops)), us, t, now);
    }
    last_done = std::max(last_done, at);
    for (const auto& fn : observers_) fn(at);
}

void TransferLog::delivered_locally(std::uint64_t bytes, sc_time from, sc_time to) {
    local_payload_in.add(static_cast<double>(bytes), from.value(), to.value(), sc_core::sc_time_stamp().value());
}

void TransferLog::verified(std::uint64_t bytes, bool match) {
    if (match) bytes_verified.inc(bytes);
    else mismatches.inc();
}

namespace {

// workload.kind's choices and help: the declared kinds (workloads/registry.hpp).
std::vector<std::string> kind_names() {
    std::vector<std::string> names;
    for (const WorkloadKind& k : workload_kinds::all()) names.push_back(k.name);
    return names;
}

// The end of the help of a parameter that only some kinds read
// (WorkloadParams::per_kind): which, as their declarations say.
std::string read_by(const std::string& key) {
    return " Read by workload.kind = " + workload_kinds::readers("workload." + key) +
           "; another kind refuses a setting of it (docs/composition.md, \"Settings a kind does not read\")";
}

std::string kind_help() {
    std::string help;
    for (const WorkloadKind& k : workload_kinds::all())
        if (!k.help.empty()) help += (help.empty() ? "" : "; ") + k.help;
    return help;
}

}   // namespace

WorkloadParams::WorkloadParams() : set("workload", "the application model that drives the run") {
    declare_traffic();
    declare_buffers();
    declare_operation();
    declare_jobs_and_arrivals();
    per_kind = {src_node.name(),   message_size.name(),  total_bytes.name(), window.name(),
                iterations.name(), grid.name(),          senders.name(),     dst_node.name(),
                buffers.name(),    sendrecv_test.name(), arrivals.name()};
}

// The traffic: which workload, between which nodes, how much and how often.
void WorkloadParams::declare_traffic() {
    kind = set.choice("kind", "stream", kind_names(), kind_help());
    src_node = set.integer("src-node", "0",
                           "node that sends (stream, sendrecv, overlap) or starts (pingpong)." + read_by("src-node"))
                   .range("0", "65535");
    dst_node = set.integer("dst-node", "1",
                           "node that receives (stream, sendrecv, overlap, incast) or answers (pingpong)." +
                               read_by("dst-node"))
                   .range("0", "65535");
    message_size = set.size("message-size", "64KiB",
                            "bytes per message (collective: per rank; synthetic: synthetic.message-size)." +
                                read_by("message-size"))
                       .range("0B", "1GiB");
    total_bytes = set.size("total-bytes", "16MiB",
                           "stream, sendrecv (bandwidth): bytes to move in all; incast, permutation: bytes each "
                           "sender moves." +
                               read_by("total-bytes"))
                      .range("1B", "64GiB");
    window = set.integer("window", "4",
                         "stream, sendrecv (bandwidth), cluster kinds: transfers outstanding at once per sending "
                         "node (each with its own buffers; synthetic: synthetic.outstanding)." +
                             read_by("window"))
                 .range("1", "4096");
    iterations = set.integer("iterations", "100",
                             "pingpong, sendrecv (latency): round trips; alltoall, halo, collective: rounds; "
                             "overlap: transfers." +
                                 read_by("iterations"))
                     .range("1", "100000000");
    grid = set.string("grid", "auto",
                      "halo: the logical 3-D periodic grid of the nodes, AxBxC (x fastest: node = x + A*(y + B*z)), "
                      "whose product must be topology's node count; auto: three near-equal factors (1296 -> "
                      "12x12x9)." +
                          read_by("grid"));
    senders =
        set.integer("senders", "0",
                    "incast: the first this many nodes other than dst-node send; 0: all of them." + read_by("senders"))
            .range("0", "65535");
}

// The message buffers: how they are mapped and filled.
void WorkloadParams::declare_buffers() {
    populate = set.boolean("populate", "true",
                           "fault the message buffers in when they are mapped (MAP_POPULATE); false: cold buffers, "
                           "whose first touch by the CPU or the engine faults");
    buffers = set.integer("buffers", "0",
                          "stream: distinct buffer slots the messages cycle through (each source and destination "
                          "buffer of a slot is reused every `buffers` messages); 0: as many as workload.window. "
                          "Set it to the number of messages to give every message buffers never used before." +
                              read_by("buffers"))
                  .range("0", "1048576");
    madvise = set.choice("madvise", "none", {"none", "hugepage", "nohugepage"},
                         "madvise() of the message buffers right after mmap and before they are populated: none; "
                         "hugepage: MADV_HUGEPAGE (huge pages at fault time and by khugepaged under vm.thp = "
                         "madvise or always); nohugepage: MADV_NOHUGEPAGE (never huge, even under vm.thp = always). "
                         "Virtual-memory runs only (madvise(2), transhuge.rst)");
    fill_source = set.boolean("fill-source", "true",
                              "the program writes each message's data into its source buffer before posting it (making "
                              "its pages present); false: it sends the buffer as it is (zeros when never touched), so "
                              "cold source pages fault in the engine");
}

// The operation: two-sided or one-sided, and which.
void WorkloadParams::declare_operation() {
    two_sided = set.boolean("two-sided", "false",
                            "alltoall, halo, incast, permutation, overlap: move the data with the two-sided library "
                            "(isend/irecv matched by source and tag, eager or rendezvous by msg.eager-threshold; the "
                            "receiver posts its receives and checks every byte) instead of one-sided RDMA writes "
                            "(overlap: the program computes beside its isend, the guard covering the request)");
    sendrecv_test = set.choice("sendrecv-test", "latency", {"latency", "bandwidth"},
                               "sendrecv: latency (src-node sends message-size to dst-node, which sends it back, "
                               "`iterations` times; latency is half of each round trip, as OSU's osu_latency) or "
                               "bandwidth (total-bytes in message-size isends, `window` outstanding, the receiver "
                               "acknowledging each window with an empty message, as osu_bw)." +
                                   read_by("sendrecv-test"));
    operation = set.choice(
        "operation", "write", {"write", "read"},
        "stream: how the messages move from src-node to dst-node: write: src-node posts RDMA "
        "writes into dst-node's buffers; read: dst-node posts RDMA reads of src-node's buffers "
        "(the data moves the same way; the initiator, its completion records and the latency are "
        "dst-node's). overlap likewise. pingpong: read: src-node reads message-size of dst-node's "
        "buffer `iterations` times, one at a time (osu_get_latency), the latency each read's. alltoall, halo, incast, permutation: read: each node pulls "
        "the messages addressed to it from its in-neighbours with RDMA reads (a round ends when "
        "its reads completed; workload.arrivals has nothing to detect). synthetic: read: each node's "
        "messages are RDMA reads of its pattern's destination's bytes (request-reply). Other workloads: see "
        "docs/composition.md");
}

// Cold jobs among a node's processes, and how a receiver learns of arrivals.
void WorkloadParams::declare_jobs_and_arrivals() {
    cold_jobs = set.integer("cold-jobs", "0",
                            "with node.processes > 1: the last this many jobs map their message buffers cold and "
                            "send them untouched (as workload.populate = false and workload.fill-source = false), "
                            "so their engine reads fault, while the other jobs run as configured: a faulting "
                            "process next to well-behaved neighbours (configs/neighbours.ini)")
                    .range("0", "16");
    arrivals = set.choice("arrivals", "ring", {"ring", "counter", "flags"},
                          "alltoall, halo, incast, permutation (one-sided): how a node learns that every write "
                          "of a round addressed to it has landed. ring: each write notifies and the engine writes a "
                          "32 B record per write into the node's receive ring, which it reads; counter: each write "
                          "notifies and the engine counts it in the receiving channel's event counter, one register "
                          "the node polls whatever the number of peers; flags: the classic one-sided scheme, no "
                          "notification: once its writes of a round to a node have completed, a sender writes the "
                          "round number into its own 8 B flag in that node's flag array, and the node polls the "
                          "flags of its peers one by one (memory and polling time grow with the peers). "
                          "workloads/README.md \"Arrival detection\"." +
                              read_by("arrivals"));
    stream_notify = set.choice("stream-notify", "none", {"none", "ring"},
                               "stream (write): how dst-node's program learns of each message. none: it does not "
                               "(the sender's completions alone); ring: each write notifies, and dst-node's program "
                               "reads one record per message from its receive ring, finds which message it names, "
                               "and counts those it sees after a later-posted one (`workload.notify_out_of_order`) "
                               "and the time from the sender's post to its seeing the record "
                               "(`workload.notify_latency`). With dma.notify-window > 0 the engine delivers them in "
                               "post order. workloads/README.md \"Ordered notifications\"");
}

std::string Workload::stats_prefix(unsigned job) {
    return job == 0 ? "workload." : "job" + std::to_string(job) + ".workload.";
}

Workload::Workload(const SimContext& ctx, unsigned job)
    : ctx_(ctx),
      job_(job),
      cold_(job + static_cast<unsigned>(ctx.config[params_of<WorkloadParams>().cold_jobs]) >=
            static_cast<unsigned>(ctx.config[params_of<NodeParams>().processes])),
      log_(ctx.stats, stats_prefix(job)),
      seed_(ctx.config[params_of<SimParams>().seed] + job),
      populate_(!cold_ && ctx.config[params_of<WorkloadParams>().populate]),
      advice_(buffer_advice(ctx.config[params_of<WorkloadParams>().madvise])),
      fill_source_(!cold_ && ctx.config[params_of<WorkloadParams>().fill_source]),
      wrong_bytes_(physical_mode(ctx.config)
                       ? &ctx.stats.counter(stats_prefix(job) + "wrong_bytes", "B",
                                            "physical-address mode: destination bytes that differ from the source "
                                            "in transfers reported successful (the byte check's count)")
                       : nullptr) {}

void Workload::declare_params(ParamRegistry& reg) {
    reg.add(params_of<WorkloadParams>().set);
    workload_kinds::declare_params(reg);
}

bool Workload::uses_two_sided_library(const Config& c) {
    const WorkloadKind& k = workload_kinds::of(c);
    return c[params_of<WorkloadParams>().two_sided] || (k.two_sided_library && k.two_sided_library(c));
}

std::unique_ptr<Workload> Workload::create(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job,
                                           const std::vector<FileSystem*>& files) {
    std::unique_ptr<Workload> w = create_kind(ctx, apps, job, files);
    w->procs_ = apps;
    for (RdmaProcess* a : apps) {
        if (!a) w->all_present_ = false;
        else if (a->program) ++w->programs_;
    }
    // Every program notes when it starts: the end-to-end span (the headline
    // throughput) begins at the workload's first action, so allocation,
    // registration and pre-faulting before the first post are inside it.
    TransferLog* log = &w->log();
    for (RdmaProcess* a : apps) {
        if (!a || !a->program) continue;
        a->program = [log, program = std::move(a->program)](RdmaProcess& app) {
            log->began(app.now());
            program(app);
        };
    }
    return w;
}

bool Workload::all_present(const std::vector<RdmaProcess*>& apps) {
    return std::find(apps.begin(), apps.end(), nullptr) == apps.end();
}

void Workload::require_all_present(const std::vector<RdmaProcess*>& apps, const std::string& kind) {
    // A run split across MPI ranks gives a workload the processes of its own
    // rank's nodes only: one that needs every node's is refused up front.
    if (!all_present(apps))
        throw ConfigError("workload.kind = " + kind +
                          " is not built for a run split across MPI ranks: its programs share state across nodes "
                          "that is not carried between ranks (docs/scaling.md, \"What the workloads share across "
                          "nodes\"); run it as one process");
}

std::pair<unsigned, unsigned> Workload::two_nodes(const Config& c, const std::vector<RdmaProcess*>& apps) {
    const auto src = static_cast<std::uint64_t>(c[params_of<WorkloadParams>().src_node]);
    const auto dst = static_cast<std::uint64_t>(c[params_of<WorkloadParams>().dst_node]);
    auto bad = [&](const std::string& key, const std::string& why) { return c.refuse("workload." + key, why); };
    if (src >= apps.size()) throw bad("src-node", "the system has " + std::to_string(apps.size()) + " nodes");
    if (dst >= apps.size()) throw bad("dst-node", "the system has " + std::to_string(apps.size()) + " nodes");
    if (src == dst) throw bad("dst-node", "must differ from workload.src-node");
    return {static_cast<unsigned>(src), static_cast<unsigned>(dst)};
}

std::vector<Workload::Unread> Workload::unread_settings(const Config& c) {
    const WorkloadParams& w = params_of<WorkloadParams>();
    const WorkloadKind& k = workload_kinds::of(c);
    const std::vector<std::string>& shared = w.per_kind;
    for (const std::string& r : k.reads)
        if (std::find(shared.begin(), shared.end(), r) == shared.end())
            throw std::logic_error("workload.kind = " + k.name + " declares that it reads " + r +
                                   ", which is not one of WorkloadParams::per_kind");
    std::vector<Unread> out;
    for (const std::string& p : shared)
        if (std::find(k.reads.begin(), k.reads.end(), p) == k.reads.end() && !c.is_default(p))
            out.push_back({p, c.layer(p) < c.layer(w.kind), c.describe(w.kind) + ", set over it, does not read it",
                           "workload.kind = " + workload_kinds::readers(p), true, ""});
    // Read only under some values of another of its parameters.
    for (const WorkloadKind::ReadsOnly& r : k.reads_only) {
        if (std::find(k.reads.begin(), k.reads.end(), r.param) == k.reads.end())
            throw std::logic_error("workload.kind = " + k.name + " declares that it reads " + r.param + " only when " +
                                   r.when + " has some values, but does not list it as read");
        if (c.is_default(r.param) || std::find(r.values.begin(), r.values.end(), c.string(r.when)) != r.values.end())
            continue;
        const bool earlier = c.layer(r.param) < std::max(c.layer(w.kind), c.layer(r.when));
        out.push_back({r.param, earlier,
                       c.describe(w.kind) + " with " + c.describe(r.when) + (earlier ? ", set over it," : "") +
                           " does not read it",
                       r.when + " = " + r.values_text(), false, r.when});
    }
    return out;
}

std::string Workload::unread_note(const Config& c) {
    std::string out;
    for (const Unread& u : unread_settings(c))
        if (u.earlier)
            out += "vrdmasim: warning: " + c.describe(u.param) + " was not read: " + u.why + " (only " + u.only +
                   (u.many ? " do)\n" : " does)\n");
    return out;
}

void Workload::refuse_settings(const Config& c) {
    const WorkloadParams& w = params_of<WorkloadParams>();
    const std::string& kind = c[w.kind];
    const WorkloadKind& k = workload_kinds::of(kind);
    for (const Unread& u : unread_settings(c))
        if (!u.earlier)
            throw c.refuse(u.param, "is not read by " + c.describe(w.kind) +
                                        (u.when.empty() ? "" : " with " + c.describe(u.when)) + ": only " + u.only +
                                        (u.many ? " read" : " reads") +
                                        " it, so it would change nothing (docs/composition.md, \"Settings a "
                                        "kind does not read\")");
    const bool read = c[w.operation] != "write";
    // docs/composition.md, the refusal table.
    if (read) {
        const std::string why =
            k.read_refusal ? k.read_refusal(c) : "the read form is not built for workload.kind = " + kind;
        if (!why.empty()) throw c.refuse(w.operation, why);
    }
    if (c[w.stream_notify] != "none" && !k.stream_notify)
        throw c.refuse(w.stream_notify, "only the stream workload reads notifications this way (workload.kind = " +
                                            kind + "; the cluster kinds have workload.arrivals)");
    if (!c[w.two_sided]) return;
    const std::string why = k.two_sided_refusal ? k.two_sided_refusal(c) : "it has no two-sided form";
    if (!why.empty()) throw c.refuse(w.two_sided, "has no meaning for workload.kind = " + kind + ": " + why);
    if (read)
        throw c.refuse(w.operation,
                       "has nothing to choose with workload.two-sided = true: " + std::string(kProtocolDecides));
}

std::unique_ptr<Workload> Workload::create_kind(const SimContext& ctx, const std::vector<RdmaProcess*>& apps,
                                                unsigned job, const std::vector<FileSystem*>& files) {
    refuse_settings(ctx.config);
    return workload_kinds::of(ctx.config).create(ctx, apps, job, files);
}

std::uint64_t Workload::programs() const {
    if (!all_present_)
        throw std::logic_error("workload.kind = " + kind() + " (job " + std::to_string(job_) +
                               "): built without every node's process, and it cannot count its programs then");
    return programs_;
}

void Workload::set_global_sync(GlobalSync& sync, unsigned end) {
    sync_ = &sync;
    end_rv_ = end;
    start_rv_ = sync.rendezvous("job" + std::to_string(job_) + ".start", programs(), &all_ready_);
}

void Workload::ready_and_wait(RdmaProcess& app, unsigned parties) {
    if (!sync_) throw std::logic_error("workload: no global sync (System::global_sync) for the start barrier");
    if (parties != sync_->parties(start_rv_))
        throw std::logic_error("workload.kind = " + kind() + ": a start barrier of " + std::to_string(parties) +
                               " programs, " + std::to_string(sync_->parties(start_rv_)) + " registered");
    sync_->arrive(start_rv_, app.now());
    app.wait_until([this] { return sync_->released(start_rv_); }, sync_->release_event(start_rv_));
}

void Workload::program_ended(RdmaProcess& app) {
    if (!sync_) throw std::logic_error("workload: no global sync (System::global_sync) for the programs' end");
    sync_->arrive(end_rv_, app.now());
}

namespace {

std::uint32_t value_slot(unsigned job, unsigned what, unsigned index) {
    if (job >= 256 || what >= 16 || index >= (1u << 20))
        throw std::logic_error("workload: published value (job " + std::to_string(job) + ", " + std::to_string(what) +
                               ", " + std::to_string(index) + ") out of range");
    return (std::uint32_t(job) << 24) | (std::uint32_t(what) << 20) | index;
}

}   // namespace

void Workload::publish(const RdmaProcess& app, unsigned what, std::uint64_t value, unsigned index) {
    if (!sync_) throw std::logic_error("workload: no global sync (System::global_sync) to publish through");
    sync_->publish(app.node(), value_slot(job_, what, index), value);
}

void Workload::publish_endpoint(const RdmaProcess& app, const msg::Endpoint& ep) {
    for (const msg::Endpoint::Offer& o : ep.offers()) {
        publish(app, kLibraryValues, o.rx, o.peer);
        publish(app, kLibraryValues + 1, o.credit_word, o.peer);
    }
}

void Workload::connect_endpoint(msg::Endpoint& ep) const {
    const unsigned me = ep.app().node();
    ep.connect([this, me](unsigned peer) {
        return std::make_pair(published(peer, kLibraryValues, me), published(peer, kLibraryValues + 1, me));
    });
}

void Workload::publish_mailbox(const RdmaProcess& app, const coll::OneSided& os) {
    publish(app, kLibraryValues + 2, os.mailbox());
}

void Workload::connect_mailboxes(coll::OneSided& os, const std::vector<unsigned>& nodes) const {
    os.connect([this, &nodes](unsigned rank) { return published(nodes.at(rank), kLibraryValues + 2); });
}

std::uint64_t Workload::published(unsigned node, unsigned what, unsigned index) const {
    if (!sync_) throw std::logic_error("workload: no global sync (System::global_sync) to read published values");
    return sync_->published(node, value_slot(job_, what, index));
}

void Workload::check_fits(const RdmaProcess& app, std::uint64_t bytes) const {
    if (bytes <= app.capacity()) return;
    const Config& c = ctx_.config;
    throw ConfigError("the workload's buffers do not fit on " + app.group() + ": " + std::to_string(bytes) +
                      " B asked, at most " + std::to_string(app.capacity()) +
                      " B can be mapped (workload.message-size = " + c.text(params_of<WorkloadParams>().message_size) +
                      ", workload.window = " + c.text(params_of<WorkloadParams>().window) +
                      ", dram.size = " + c.text("dram.size") + ")");
}

void Workload::check_host_memory(const std::string& key, std::uint64_t bytes, const std::string& what) const {
    const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    if (pages <= 0 || page <= 0) return;   // unknown: nothing to compare with
    const auto host = static_cast<std::uint64_t>(pages) * static_cast<std::uint64_t>(page);
    if (bytes <= host) return;
    auto gib = [](std::uint64_t b) { return format_metric(static_cast<double>(b) / (1ull << 30), 4) + " GiB"; };
    throw ctx_.config.refuse(
        key, "the run needs at least " + gib(bytes) + " of host memory (" + what + "); this host has " + gib(host));
}

void Workload::check_locked(const RdmaProcess& app, const std::vector<std::uint64_t>& regions) const {
    const Config& c = ctx_.config;
    if (!c.boolean("smmu.enabled") && !physical_mode(c)) return;
    std::uint64_t bytes = 0;
    for (std::uint64_t r : regions) bytes += (std::max<std::uint64_t>(r, 1) + 4095) / 4096 * 4096;
    if (bytes <= c[params_of<VmParams>().memlock_limit]) return;
    throw ConfigError(
        c.describe(params_of<VmParams>().memlock_limit) + " is below the " + format_size_bytes(bytes) +
        " the RDMA library of " + app.group() +
        " locks for its own completion records and notification ring (mlock, as libraries keep "
        "their completion queues): raise vm.memlock-limit to at least " +
        format_size_bytes(bytes) +
        (registration_strategies::of(c).pins_per_post
             ? std::string(", plus what rdma.strategy = ") + c.text(params_of<StrategyParams>().strategy) + " pins"
             : std::string()));
}

void Workload::prepare(RdmaProcess& app, unsigned src, std::uint64_t src_addr, unsigned dst, std::uint64_t dst_addr,
                       std::uint64_t len, std::uint64_t key) {
    ask(app, {CheckStep::Kind::Fill, app.node(), src, src_addr, len, key});
    ask(app, {CheckStep::Kind::Guard, app.node(), dst, dst_addr, len, key});
}

RdmaProcess& Workload::process_of(unsigned node) const {
    if (node >= procs_.size() || !procs_[node])
        throw std::logic_error("workload: no process of job " + std::to_string(job_) + " on node " +
                               std::to_string(node));
    return *procs_[node];
}

std::string Workload::across_boards(unsigned a, unsigned b, const std::string& what, const std::string& why) const {
    if (board(a) == board(b)) return "";
    return "workload.kind = " + kind() + (what.empty() ? "" : " with " + what) + " across boards (node " +
           std::to_string(a) + " on board " + std::to_string(board(a)) + ", node " + std::to_string(b) + " on board " +
           std::to_string(board(b)) + "): " + why;
}

std::string Workload::partition_refusal() const {
    // What every workload's library shares: in the physical-address mode a
    // sender translates each destination page through the keys its
    // receivers published, one table for the whole system (PhysicalKeys),
    // looked up at every post.
    if (physical_mode(ctx_.config))
        for (unsigned n = 1; n < procs_.size(); ++n)
            if (board(n) != board(0))
                return "the physical-address mode (smmu.enabled = false, rdma.strategy = " +
                       ctx_.config.text(params_of<StrategyParams>().strategy) +
                       ") across boards: every sender looks up its destination's physical pages, at each post, "
                       "in one table of the keys every receiver published (PhysicalKeys)";
    return "";
}

void Workload::set_network(sc_core::sc_time, ZeroLoadFn) {
    throw std::logic_error("workload.kind = " + kind() + ": told of the network, but it does not observe it");
}

void Workload::packet_arrived(unsigned, unsigned, std::uint64_t, std::uint64_t, std::uint64_t, sc_core::sc_time,
                              sc_core::sc_time) {
    throw std::logic_error("workload.kind = " + kind() + ": handed a packet, but it does not observe the network");
}

void Workload::take_note(const Note& n) {
    throw std::logic_error("workload.kind = " + kind() + " (job " + std::to_string(job_) + "): a note for node " +
                           std::to_string(n.node) + " from node " + std::to_string(n.from) +
                           ", but this workload leaves none");
}

void Workload::perform(const CheckStep& s) {
    RdmaProcess& app = process_of(s.node);
    switch (s.kind) {
    case CheckStep::Kind::Fill: fill_source(app, s.addr, s.len, s.key); break;
    case CheckStep::Kind::Guard: guard_destination(app, s.addr, s.len, s.key); break;
    case CheckStep::Kind::Verify: verify(app, s.addr, s.len, s.key); break;
    }
}

void Workload::guard_destination(RdmaProcess& dst, std::uint64_t dst_addr, std::uint64_t len, std::uint64_t key) {
    if (fill_source_ && !wrong_bytes_) return;
    poison(dst, dst_addr, len, key);
}

void Workload::fill_source(RdmaProcess& src, std::uint64_t src_addr, std::uint64_t len, std::uint64_t key) {
    if (!fill_source_) return;
    // The pattern's bytes (fill_pattern's), which the DRAM keeps by their
    // places without their being made.
    const PatternPlace at = pattern_place(seed_ ^ key);
    // Page by page: a page the process cannot write (unmapped or read-only,
    // as a test may make it) is left as it is; the transfer will fault there.
    if (src.debug_write_pattern(src_addr, len, at)) return;   // the usual case: all of it at once
    const std::uint64_t page = 4096;
    for (std::uint64_t off = 0; off < len;) {
        const std::uint64_t chunk = std::min(len - off, page - (src_addr + off) % page);
        src.debug_write_pattern(src_addr + off, chunk, pattern_advance(at, off));
        off += chunk;
    }
}

void Workload::poison(RdmaProcess& dst, std::uint64_t dst_addr, std::uint64_t len, std::uint64_t key) {
    // Poison the destination so that stale bytes never pass the check: its
    // pages in memory only (writing would make a cold page present; a page
    // never touched or swapped out cannot hold this transfer's data, and
    // verify() finds one the engine never wrote).
    // One page of the poison byte, written page by page: the same bytes as
    // one write of `len`, without filling a buffer of `len` first (poke
    // goes page by page anyway, and stops where a page is outside every
    // VMA, as this loop does).
    constexpr std::uint64_t kChunk = 4096;
    // Its own buffer: resizing scratch_ down and up again would zero it.
    poison_page_.resize(kChunk);
    std::memset(poison_page_.data(), static_cast<int>((key * 0x9Du) ^ 0xA5u) & 0xff, std::min(len, kChunk));
    for (std::uint64_t off = 0; off < len;) {
        const std::uint64_t n = std::min(len - off, kChunk - (dst_addr + off) % kChunk);
        if (!dst.debug_write_resident(dst_addr + off, poison_page_.data(), n)) break;
        off += n;
    }
}

bool Workload::verify(RdmaProcess& dst, std::uint64_t dst_addr, std::uint64_t len, std::uint64_t key) {
    // The usual case: every byte the pattern's, compared with it where the
    // DRAM keeps it (without the bytes). Anything else is looked at again
    // below, byte by byte, for its report.
    std::uint64_t first = 0;
    if (fill_source_ && dst.debug_check_pattern(dst_addr, len, pattern_place(seed_ ^ key), first) && first == len) {
        log_.verified(len, true);
        return true;
    }
    scratch_.resize(len);
    const bool read = dst.debug_read(dst_addr, scratch_.data(), len);
    // With a source of zeros, every destination page must hold data: a page
    // still never touched reads as zeros too. (A pattern never reads so.)
    bool written = true;
    if (!fill_source_)
        for (std::uint64_t a = dst_addr & ~std::uint64_t(4095); len && a < dst_addr + len; a += 4096)
            written = written && dst.populated(a);
    // The first byte that differs from what was sent (len: none).
    std::uint64_t off = len;
    if (read && written) {
        if (fill_source_) off = pattern_mismatch(scratch_.data(), len, seed_ ^ key);
        else   // a source never written holds zeros
            off = static_cast<std::uint64_t>(
                std::find_if(scratch_.begin(), scratch_.end(), [](unsigned char c) { return c != 0; }) -
                scratch_.begin());
    }
    const bool match = read && written && off == len;
    log_.verified(len, match);
    if (match) return true;
    if (!read || !written) off = 0;
    if (wrong_bytes_) {
        std::uint64_t wrong = len;   // unreadable or never written: all of it
        if (read && written) {
            expect_.resize(len);
            if (fill_source_) fill_pattern(expect_.data(), len, seed_ ^ key);
            else std::fill(expect_.begin(), expect_.end(), 0);
            wrong = 0;
            for (std::uint64_t i = off; i < len; ++i) wrong += scratch_[i] != expect_[i];
        }
        wrong_bytes_->inc(wrong);
    }
    std::ostringstream os;
    os << "DATA MISMATCH: transfer " << key << " to " << dst.group() << " 0x" << std::hex << dst_addr << std::dec
       << " (" << len << " B) differs from its source first at byte " << off;
    std::cerr << "vrdmasim: " << os.str() << "\n";
    if (ctx_.tracer.noting())
        ctx_.tracer.note(Tracer::Track{}, "data mismatch", sc_core::sc_time_stamp(), sc_core::SC_ZERO_TIME, "workload",
                         os.str());
    return false;
}

void Workload::report(RdmaProcess& observer, unsigned dst, std::uint64_t dst_addr, std::uint64_t len, std::uint64_t key,
                      const CompletionRecord& rec, const sc_time* latency, int src_node) {
    const bool ok = rec.status == kStatusOk;
    log_.finished(observer.now(), ok, ok ? rec.bytes : 0, latency,
                  src_node >= 0 ? static_cast<int>(hops(static_cast<unsigned>(src_node), dst)) : -1);
    if (!ok) return;
    if (rec.bytes != len) {
        // Success with the wrong byte count is a loss nobody reported.
        log_.verified(len, false);
        std::cerr << "vrdmasim: DATA MISMATCH: transfer " << key << " reported " << rec.bytes << " of " << len
                  << " B delivered with success status\n";
        return;
    }
    // The destination checks its own bytes (the expected ones are the
    // seed's and the key's): the observer never reads another node's memory.
    ask(observer, {CheckStep::Kind::Verify, observer.node(), dst, dst_addr, len, key});
}

}   // namespace vrdmasim
