// Workloads: application models that drive the RDMA user library on the
// nodes' Apps, and check every byte they move.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "src/core/bytes.hpp"
#include "src/core/context.hpp"
#include "src/core/global_sync.hpp"
#include "library/rdma/process.hpp"
#include "models/common/data_pattern.hpp"

namespace vrdmasim {

class FileSystem;
namespace msg {
class Endpoint;
}
namespace coll {
class OneSided;
}

// The parameters of section [workload], declared in workload.cpp; read
// through params_of<WorkloadParams>().
struct WorkloadParams {
    WorkloadParams();
    ParamSet set;
    EnumParam kind;
    IntParam src_node;
    IntParam dst_node;
    SizeParam message_size;
    SizeParam total_bytes;
    IntParam window;
    IntParam iterations;
    StringParam grid;
    IntParam senders;
    BoolParam populate;
    IntParam buffers;
    EnumParam madvise;
    BoolParam fill_source;
    BoolParam two_sided;
    EnumParam sendrecv_test;
    EnumParam operation;
    IntParam cold_jobs;
    EnumParam arrivals;
    EnumParam stream_notify;
    // The shared parameters that only some kinds read, each kind listing
    // those it reads (WorkloadKind::reads), by name. The others of the
    // section every kind reads (kind, populate, madvise, fill-source,
    // cold-jobs: the Workload base), or a kind's declaration refuses
    // (operation, two-sided, stream-notify: read_refusal, ...).
    std::vector<std::string> per_kind;

private:
    // The constructor's groups of parameters, declared in this order.
    void declare_traffic();
    void declare_buffers();
    void declare_operation();
    void declare_jobs_and_arrivals();
};

// What the application saw: every transfer, its outcome and its data check.
// A histogram every node of a job adds to: its sum kept exact, in any
// order (Histogram::keep_exact_sum), as a partitioned run's ranks add
// their samples apart.
inline Histogram& shared_histogram(StatRegistry& stats, const std::string& name, const std::string& unit,
                                   const std::string& help) {
    Histogram& h = stats.histogram(name, unit, help);
    h.keep_exact_sum();
    return h;
}

class TransferLog {
public:
    // Statistics under `prefix` ("workload." for job 0, "job<p>.workload." for job p).
    explicit TransferLog(StatRegistry& stats, const std::string& prefix = "workload.");
    void posted(sc_core::sc_time at);
    // A transfer finished at `at`: ok or not, `latency` as the workload
    // defines it (and, `hops` >= 0, by its router-to-router hops), `bytes`
    // delivered.
    void finished(sc_core::sc_time at, bool ok, std::uint64_t bytes, const sc_core::sc_time* latency, int hops = -1);
    // The destination was compared with what the source held.
    void verified(std::uint64_t bytes, bool match);
    // A transfer's bytes came in without the network (a CPU copy: a
    // fileserve client's read()) over [from, to]; the network's come in
    // through the engines (payload_in_pd<domain>). A region of interest's
    // throughput counts both, each over its own time (src/sim/summary.cpp).
    void delivered_locally(std::uint64_t bytes, sc_core::sc_time from, sc_core::sc_time to);

    Counter& posted_count;   // transfers posted
    Counter& transfers;   // finished transfers, ok or not
    Counter& errors;   // finished with an error status
    Counter& bytes_delivered;   // bytes of transfers that reported success
    Counter& bytes_verified;   // bytes compared equal at the destination
    Counter& mismatches;   // transfers reported ok whose destination differs
    Histogram& latency_us;
    Spread& local_payload_in;   // delivered_locally()'s bytes
    // The same samples by the hop count between source and destination:
    // "workload.latency_hops<h>", registered at the first sample of h.
    Histogram& latency_hops(unsigned h);
    const std::map<unsigned, Histogram*>& latency_by_hops() const { return by_hops_; }
    // A program of the workload took its first action (allocation,
    // registration, pre-faulting: whatever it does before its first post).
    void began(sc_core::sc_time at) {
        if (!measured_from_set_) first_action = std::min(first_action, at);
    }
    // The measured phase starts at `at`, whatever the programs did before:
    // a preparation that stands for the system's earlier state (fileserve's
    // warm page cache) is not the workload's cost.
    void measured_from(sc_core::sc_time at) {
        first_action = at;
        measured_from_set_ = true;
    }
    sc_core::sc_time first_action = sc_core::sc_max_time();
    sc_core::sc_time first_post = sc_core::sc_max_time();
    sc_core::sc_time last_done = sc_core::SC_ZERO_TIME;
    // The spans of the summary: end to end (first action to last
    // completion: the headline throughput) and the post window (first post
    // to last completion); zero before anything completed.
    sc_core::sc_time end_to_end() const {
        return last_done > first_action && first_action != sc_core::sc_max_time() ? last_done - first_action
                                                                                  : sc_core::SC_ZERO_TIME;
    }
    sc_core::sc_time post_window() const {
        return last_done > first_post && first_post != sc_core::sc_max_time() ? last_done - first_post
                                                                              : sc_core::SC_ZERO_TIME;
    }
    // The workload's engine traffic that is not one of its transfers (the
    // per-peer flags of workload.arrivals = flags) ended at `at`: the span
    // (first post to last completion) covers it.
    void traffic_done(sc_core::sc_time at) { last_done = std::max(last_done, at); }
    // `fn(at)` after each transfer finishes (finished() above), at the
    // application's time `at` (src/sim/roi.hpp counts them).
    void observe(std::function<void(sc_core::sc_time)> fn) { observers_.push_back(std::move(fn)); }

private:
    std::vector<std::function<void(sc_core::sc_time)>> observers_;
    bool measured_from_set_ = false;
    StatRegistry& stats_;
    std::string prefix_;
    std::map<unsigned, Histogram*> by_hops_;
};

// The data every transfer carries (fill_pattern, pattern_mismatch) is
// models/common/data_pattern.hpp's.

// One step of the harness's byte check, done on the memory of one node (the
// process of the workload's job there): fill a transfer's source, guard its
// destination, or check the destination once the transfer's initiator saw
// it succeed. What the node needs is the step and the job's settings: the
// bytes meant are fill_pattern(seed ^ key) with seed = sim.seed + job, or
// zeros (workload.fill-source, workload.cold-jobs), the same on every node;
// nothing of the asking node's memory or state. A program asks it of
// another node through Workload::ask (docs/scaling.md, "What crosses a cut").
struct CheckStep {
    enum class Kind : std::uint8_t { Fill, Guard, Verify };
    Kind kind = Kind::Verify;
    unsigned from = 0;   // the node whose program asks for it
    unsigned node = 0;   // the node whose memory it is
    std::uint64_t addr = 0, len = 0, key = 0;
};

// What one node's side of a workload measured for another node's side (the
// packets of a synthetic message seen at its destination, for its source,
// which reads them once the message has completed): handed over at once in
// one process, carried to the node's rank at the end of the window in a
// partitioned run (src/sim/parallel/rank_parties.hpp). Measurement only: no model
// reads it, and the side that takes it reads it only after the model's
// own news of the same event (an acknowledgement that crossed a board
// link, a lookahead later) could have reached it.
struct Note {
    unsigned from = 0;   // the node whose side leaves it
    unsigned node = 0;   // the node whose side takes it
    std::array<std::uint64_t, 4> words{};
};

class Workload {
    // The library's one-sided windows (workloads/mpi/one_sided.hpp) fill
    // and poison the buffers of the transfers of the workload they serve.
    friend class MpiOneSided;

public:
    static void declare_params(ParamRegistry& reg);
    // Whether a run of this configuration uses the two-sided library
    // (library/messaging): sendrecv, fileserve's requests, workload.two-sided.
    static bool uses_two_sided_library(const Config& c);
    // Build the workload named by workload.kind on these apps (index = node)
    // for job `job` (process `job` of every node; its statistics under
    // stats_prefix(job)). Throws ConfigError for settings that do not fit
    // the system (a node that does not exist, a buffer larger than memory).
    // `files`: each node's file system (nullptr where it has none; empty
    // when the run has no files), for workload.kind = fileserve.
    static std::unique_ptr<Workload> create(const SimContext& ctx, const std::vector<RdmaProcess*>& apps,
                                            unsigned job = 0, const std::vector<FileSystem*>& files = {});
    // The workload whose programs these apps run, by kind (create() adds
    // what every workload has: its programs' start in its log).
    static std::unique_ptr<Workload> create_kind(const SimContext& ctx, const std::vector<RdmaProcess*>& apps,
                                                 unsigned job, const std::vector<FileSystem*>& files);
    // ConfigError (exit status 2) for the settings of [workload] that the
    // kind refuses (workloads/registry.hpp: read, two-sided, stream-notify,
    // and a setting of a shared parameter it does not read: unread_settings),
    // before anything is built.
    static void refuse_settings(const Config& c);
    // The settings of shared parameters that the run's kind does not read:
    // each parameter of WorkloadParams::per_kind that the kind does not list
    // (WorkloadKind::reads) and whose value is not its default (a run's
    // config.ini lists every parameter, at its default or not). `earlier`:
    // made in an earlier layer than workload.kind's own setting
    // (Config::layer: a base config for several kinds, a sweep's fixed
    // values under its swept kinds), which is only noted (unread_note);
    // any other is refused.
    struct Unread {
        std::string param;
        bool earlier = false;
        std::string why;   // an earlier one's: "<workload.kind described>, set over it, does not read it"
        // Who does read it: "workload.kind = stream, sendrecv, ..." (`many`)
        // or, for a kind that reads it only under a value of another of its
        // parameters, "workload.sendrecv-test = bandwidth".
        std::string only;
        bool many = true;
        std::string when;   // that other parameter ("" for a kind that does not read it at all)
    };
    static std::vector<Unread> unread_settings(const Config& c);
    // A warning line for each unread setting from an earlier layer, for the
    // run's summary (workload_kinds::findings); "" if none.
    static std::string unread_note(const Config& c);
    // For the kinds' factories (workloads/registry.hpp):
    // whether every node's process is here (not a partitioned run's rank).
    static bool all_present(const std::vector<RdmaProcess*>& apps);
    // ConfigError naming `kind` unless every node's process is here: for a
    // kind whose programs share state across nodes that a partitioned run
    // does not carry.
    static void require_all_present(const std::vector<RdmaProcess*>& apps, const std::string& kind);
    // workload.src-node and workload.dst-node, checked against the system
    // (ConfigError): the two nodes of stream, pingpong, sendrecv, overlap.
    static std::pair<unsigned, unsigned> two_nodes(const Config& c, const std::vector<RdmaProcess*>& apps);
    // The refusals' shared words (docs/composition.md, the refusal table):
    // what a two-sided message leaves to choose, and where stream's and
    // pingpong's two-sided forms are.
    static constexpr const char* kProtocolDecides =
        "two-sided messages move as the messaging protocol decides (an eager copy written, a rendezvous buffer "
        "read: msg.*)";
    static constexpr const char* kTwoSidedIsSendrecv =
        "the two-sided form of stream and pingpong is workload.kind = sendrecv (workload.sendrecv-test = "
        "bandwidth, latency)";
    // "workload." for job 0 (the names of a one-process run), "job<p>.workload." for job p.
    static std::string stats_prefix(unsigned job);
    unsigned job() const { return job_; }
    // The job maps its message buffers cold and sends them untouched
    // (workload.cold-jobs).
    bool cold() const { return cold_; }

    virtual ~Workload() = default;
    virtual std::string kind() const = 0;
    // True once every program of the workload has run to its end.
    virtual bool finished() const = 0;
    // Whether the job is over as the whole system knows it: finished(), or
    // in a partitioned run (a rank runs some programs only) the release of
    // the end of every program of every job.
    bool ended() const { return sync_ && sync_->partitioned() ? sync_->released(end_rv_) : finished(); }
    // Bytes of transfers reported successful whose destination the check
    // found corrupted by the application's own race (overlap, unguarded):
    // delivered, not verified equal, and not a simulator failure.
    virtual std::uint64_t raced_bytes() const { return 0; }
    // Transfers the workload will have finished (log().transfers) when it
    // ends, if it knows in advance; 0 if not. Only the progress line's
    // ETA uses it (src/sim/progress.hpp).
    virtual std::uint64_t planned_transfers() const { return 0; }
    // The payload bytes those transfers will have delivered
    // (log().bytes_delivered) when it ends, none failing, if it knows in
    // advance: -1 if not (the default), 0 for transfers that carry none (the
    // lock's atomics). `run --check` prints it and a sweep's ETA weighs it;
    // the self-check planned-bytes holds a run without a failed transfer to it.
    virtual std::int64_t planned_bytes() const { return -1; }
    // The most it can deliver without the network, in bits per second
    // (fileserve.access = direct: each client's read() copies); 0 when every
    // byte it counts crosses a receiver's network link. The throughput
    // self-check's ceiling adds it to the links'.
    virtual double local_ceiling_bps() const { return 0; }
    // The rendezvous every node shares (System::global_sync()): registers
    // this job's start barrier ("job<p>.start", programs() parties) and
    // notes `end`, the rendezvous of every program of every job, which
    // each program arrives at when it ends (program_ended): the system
    // stops its background daemons at its release, so the simulation can
    // end. Set by System once every job's workload exists.
    void set_global_sync(GlobalSync& sync, unsigned end);
    // The programs of this workload in the whole system (every rank's):
    // each waits at the start barrier once and ends once. By default those
    // of the apps Workload::create was given (all of them present); a
    // workload that runs with absent nodes says it itself.
    virtual std::uint64_t programs() const;
    // Whether node `node`'s process of this job is in this process's
    // system: every node in one process; in a partitioned run (apps
    // nullptr for the nodes of other ranks) only this rank's.
    bool present(unsigned node) const { return node < procs_.size() && procs_[node] != nullptr; }
    // This job's start barrier in the GlobalSync (set_global_sync).
    unsigned start_rendezvous() const { return start_rv_; }
    TransferLog& log() { return log_; }
    // Router-to-router hops from node `src` to node `dst` (set by System;
    // until then 1 for distinct nodes): the key of the latency-by-hops
    // histograms.
    using HopsFn = std::function<unsigned(unsigned, unsigned)>;
    void set_hops(HopsFn fn) { hops_ = std::move(fn); }
    unsigned hops(unsigned src, unsigned dst) const { return hops_(src, dst); }
    // The board (QFDB) of node `node` (set by System; until then every node
    // its own): what partition_refusal() calls across boards.
    using BoardFn = std::function<unsigned(unsigned)>;
    void set_boards(BoardFn fn) { board_ = std::move(fn); }
    unsigned board(unsigned node) const { return board_(node); }

    // Empty if the run can be split across ranks by whole boards as far as
    // this workload is concerned (docs/scaling.md: what crosses a board
    // goes as a packet, a check step, or a value every rank computes alike,
    // or is merged at the end); else why not, naming the workload, the
    // setting and what its programs share across boards. For the
    // partitioned run to refuse up front (exit status 2): nothing runs
    // partitioned yet.
    virtual std::string partition_refusal() const;
    // What the run met that the simulation refuses and no check before it
    // could see (an MPI program's call the simulation does not time): ""
    // if nothing. The run stops there, and exits with status 2, as a
    // refused configuration does (its statistics so far kept).
    virtual std::string refusal() const { return ""; }
    // What the workload's programs wait in when the run ended before they
    // did (out of events, or at sim.time-limit: a deadlock runs to the
    // limit while the kernel's daemons tick): "rank 0 in MPI_Win_start
    // since 83 us, waiting for ...", for the run's error; "" if it has
    // nothing to say.
    virtual std::string stalled() const { return ""; }

    // The workload's own self-checks at the end of the run (src/sim/invariants.cpp):
    // (name, detail) for each violation; none by default.
    virtual std::vector<std::pair<std::string, std::string>> self_check() const { return {}; }
    // Every job's workload is given the first job's (itself for job 0),
    // once all exist: for figures the jobs measure once together (the file
    // server's node-wide figures). Nothing by default.
    virtual void join(Workload& first) { (void)first; }
    // The engine operations (descriptors and atomics) this job's library
    // posted, if the workload accounts for all of its engine traffic:
    // where every job does, their sum must be what the engines counted
    // posted (a self-check). -1 if it does not account (the default).
    virtual std::int64_t engine_operations() const { return -1; }
    // How many descriptors of this job the engines completed: the sum, over
    // every node, of the completions counted on this job's process's
    // channels (the engines' own count, TX_COMPLETED). Set by System
    // before simulation.
    void count_engine_completions(std::function<std::uint64_t()> fn) { engine_completions_ = std::move(fn); }

    // A workload that measures the network itself (synthetic traffic) is
    // told of it by System before the run: the NI link's flit time and
    // each message's zero-load network latency (src/sim/channel_load.hpp),
    // from the same models the run builds; then every data packet of its
    // job that reaches a node's engine (packet_arrived). Not by default.
    virtual bool observes_network() const { return false; }
    using ZeroLoadFn = std::function<sc_core::sc_time(unsigned src, unsigned dst, std::uint64_t flits)>;
    virtual void set_network(sc_core::sc_time ni_flit, ZeroLoadFn zero_load);
    // A data packet of this job reached node `dst`'s engine: from node
    // `src`, written at `dst_va`, `flits` long, its head onto src's NI link
    // at `injected`, its tail out of dst's at `tail` (Pldma::on_data_arrival,
    // wired by System, on dst's side). A read request too: `dst_va` the
    // source it asks dst to read.
    virtual void packet_arrived(unsigned src, unsigned dst, std::uint64_t dst_va, std::uint64_t flits,
                                std::uint64_t payload, sc_core::sc_time injected, sc_core::sc_time tail);

    // Where a check step for another node than the asking program's goes:
    // by default to perform() at once (one process holds every node); a
    // partitioned run would carry it to the node's rank, a test may
    // intercept it. Steps for the asking node itself never come here.
    using Courier = std::function<void(const CheckStep&)>;
    void set_courier(Courier fn) { courier_ = std::move(fn); }
    // The node's side of a step: on node s.node's process of this job, with
    // nothing of node s.from's.
    void perform(const CheckStep& s);
    // Where a note for a node of another rank goes (a partitioned run's
    // courier); by default to take_note() at once.
    using NoteCourier = std::function<void(const Note&)>;
    void set_note_courier(NoteCourier fn) { note_courier_ = std::move(fn); }
    // Node n.node's side takes a note (std::logic_error for a workload that
    // leaves none).
    virtual void take_note(const Note& n);

    // A partitioned run's end (merge_ranks, src/sim/parallel/windows.hpp): each
    // rank's part of the figures only the whole system gives (a workload
    // whose figures are ratios of totals over every node), and all of them
    // (in rank order, this rank's own included), from which every rank then
    // computes the same figures. By default none.
    virtual Bytes end_part() const { return {}; }
    virtual void merge_end(const std::vector<Bytes>& all) { (void)all; }

protected:
    explicit Workload(const SimContext& ctx, unsigned job = 0);
    // To be called by each program once, when it ends, on its process:
    // arrives at the end of every program of every job (set_global_sync).
    void program_ended(RdmaProcess& app);
    // Each of `parties` programs (programs(): the job's start rendezvous)
    // calls this once its buffers are mapped; it returns when all have (so
    // that none sends into memory not yet mapped): at the last arrival's
    // local time, or with board-link.handoff = message a board link's
    // latency after the latest arrival's (GlobalSync).
    void ready_and_wait(RdmaProcess& app, unsigned parties);
    // Values a program publishes before the start barrier for the programs
    // of other nodes to read after it (buffer addresses, registration
    // flags): through the GlobalSync, so that a partitioned run carries them
    // with the barrier's release. `what` is the workload's own numbering
    // (< kLibraryValues), `index` (< 2^20) a peer or a slot; the job keeps
    // them apart.
    void publish(const RdmaProcess& app, unsigned what, std::uint64_t value, unsigned index = 0);
    std::uint64_t published(unsigned node, unsigned what, unsigned index = 0) const;
    // The libraries' wire-up the same way: a two-sided endpoint's slots and
    // credit words for each peer (msg::Endpoint::offers), a one-sided
    // collectives' mailbox; published after their setup(), connected after
    // the barrier (instead of connect() on the other nodes' objects).
    static constexpr unsigned kLibraryValues = 13;   // what = 13, 14, 15: the libraries'
    void publish_endpoint(const RdmaProcess& app, const msg::Endpoint& ep);
    void connect_endpoint(msg::Endpoint& ep) const;
    void publish_mailbox(const RdmaProcess& app, const coll::OneSided& os);
    // `nodes[q]`: the node of rank q.
    void connect_mailboxes(coll::OneSided& os, const std::vector<unsigned>& nodes) const;
    // count_engine_completions' function (nullptr until System sets it).
    std::function<std::uint64_t()> engine_completions_;
    // ConfigError unless `bytes` fit in what `app` can map.
    void check_fits(const RdmaProcess& app, std::uint64_t bytes) const;
    // ConfigError naming parameter `key` unless the host has `bytes` of
    // physical memory: what a run needs at least, `what` saying why (before
    // any is allocated, so that a run the host cannot hold is refused, not
    // swapped to death).
    void check_host_memory(const std::string& key, std::uint64_t bytes, const std::string& what) const;
    // ConfigError unless the library's locked memory (`regions`: the sizes
    // of its alloc_locked calls, completion records and notification ring,
    // each locked in whole 4 KiB pages) fits under vm.memlock-limit. Only
    // with the SMMU: without it nothing is locked.
    void check_locked(const RdmaProcess& app, const std::vector<std::uint64_t>& regions) const;
    // The start barrier's event: the GlobalSync notifies this one (not one
    // of its own), made where it always was, so that with handoff = call
    // the kernel's same-time order of a run is what it was.
    sc_core::sc_event all_ready_;
    GlobalSync* sync_ = nullptr;
    unsigned start_rv_ = 0, end_rv_ = 0;
    std::uint64_t programs_ = 0;   // counted by create() (programs())
    bool all_present_ = true;   // create() was given every node's process
    // Fill the source buffer for transfer `key` (on node `src`) and guard
    // the destination (on node `dst`), as the program on `app` (one of the
    // two) prepares the transfer: the other node's half is asked of it.
    void prepare(RdmaProcess& app, unsigned src, std::uint64_t src_addr, unsigned dst, std::uint64_t dst_addr,
                 std::uint64_t len, std::uint64_t key);
    // Step `s` for node s.node, asked by the program on `app`: performed
    // here when it is app's own node, else handed to the courier.
    void ask(const RdmaProcess& app, const CheckStep& s) {
        if (s.node == app.node()) perform(s);
        else courier_(s);
    }
    // Note `n` for node n.node's side: taken here when that node is in
    // this process, else handed to the note courier.
    void leave_note(const Note& n) {
        if (present(n.node)) take_note(n);
        else note_courier_(n);
    }
    // The two halves of prepare(), for two-sided workloads, where the
    // receiver chooses the destination (it guards it when it posts the receive).
    void fill_source(RdmaProcess& src, std::uint64_t src_addr, std::uint64_t len, std::uint64_t key);
    // Makes sure stale bytes in the destination of transfer `key` cannot
    // pass verify(). With a filled source they cannot already: the pattern
    // of a key differs in every 8-byte word from that of any other key at
    // the same offset, and from zeros (a short last word can match by
    // chance, as it can match the poison byte), and a destination range
    // only receives transfers that start where it starts (keys are unique
    // per workload; a freed frame is zeroed before reuse). Otherwise (a
    // source of zeros, or wrong bytes counted in physical mode, a count
    // defined against the poison) it poisons.
    void guard_destination(RdmaProcess& dst, std::uint64_t dst_addr, std::uint64_t len, std::uint64_t key);
    // Writes a poison byte over the destination's resident pages (for a
    // check that compares against something else than the pattern: a file).
    void poison(RdmaProcess& dst, std::uint64_t dst_addr, std::uint64_t len, std::uint64_t key);
    // Compare the destination with the pattern of transfer `key`; record it.
    bool verify(RdmaProcess& dst, std::uint64_t dst_addr, std::uint64_t len, std::uint64_t key);
    // One transfer's end as `observer` sees it from its record: count it,
    // have the destination (node `dst`) check its bytes, and add `latency`
    // to the distribution if given (and, with the transfer's source node
    // `src_node` >= 0, to that of its hop count).
    void report(RdmaProcess& observer, unsigned dst, std::uint64_t dst_addr, std::uint64_t len, std::uint64_t key,
                const CompletionRecord& rec, const sc_core::sc_time* latency, int src_node = -1);
    // The job's process on node `node` (Workload::create's apps).
    RdmaProcess& process_of(unsigned node) const;
    // "workload.kind = K (what) across boards: ..." when `a` and `b` are on
    // different boards, else empty: the form of partition_refusal()'s reasons.
    std::string across_boards(unsigned a, unsigned b, const std::string& what, const std::string& why) const;

    const SimContext& ctx_;
    unsigned job_;
    bool cold_;
    TransferLog log_;
    std::uint64_t seed_;
    bool populate_;   // message buffers mapped with MAP_POPULATE
    BufferAdvice advice_;   // madvise() of the message buffers (workload.madvise)
    bool fill_source_;   // the program writes each message's data before posting
    std::vector<unsigned char> scratch_, expect_;
    std::vector<unsigned char> poison_page_;   // one page of poison (poison())
    Counter* wrong_bytes_;   // physical-address mode only ("wrong_bytes")
    HopsFn hops_ = [](unsigned a, unsigned b) { return a == b ? 0u : 1u; };
    BoardFn board_ = [](unsigned n) { return n; };
    Courier courier_ = [this](const CheckStep& s) { perform(s); };
    NoteCourier note_courier_ = [this](const Note& n) { take_note(n); };
    std::vector<RdmaProcess*> procs_;   // by node (Workload::create)
};

}   // namespace vrdmasim
