// Synthetic traffic (workload.kind = synthetic): the interconnect's own
// experiment, as BookSim and Garnet run it. Every node is an open-loop
// source: it creates messages of synthetic.message-size at synthetic.load
// (a fraction of its NI link's rate, in flits; Bernoulli or Poisson
// arrivals drawn from sim.seed), each to the destination the pattern gives
// (models/interconnect/synthetic_pattern.hpp), into an unbounded source queue, and
// posts them through the RDMA library (RdmaProcess::send: every
// registration strategy, guard and completion mode) as its window of
// synthetic.outstanding messages allows. After synthetic.warmup, the
// messages created during synthetic.measure are measured: latency from
// creation (source queueing included) to the last tail out of the
// destination's NI link, and the network latency from the first head onto
// the source's NI link; the accepted throughput is what the destinations'
// NI links delivered during the window. The sources go on creating for
// synthetic.drain more, so that the measured messages cross a loaded
// network; then they stop, and what their queues still hold is abandoned
// (counted: `synthetic_abandoned`). See workloads/README.md "Synthetic
// traffic".
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/core/metrics.hpp"
#include "models/interconnect/synthetic_pattern.hpp"
#include "workloads/workload.hpp"

namespace vrdmasim {

struct SyntheticParams {
    SyntheticParams();
    ParamSet set;
    EnumParam pattern;
    RealParam load;
    EnumParam arrivals;
    SizeParam message_size;
    TimeParam warmup;
    TimeParam measure;
    TimeParam drain;
    IntParam outstanding;
    IntParam hotspot_node;
    RealParam hotspot_fraction;
};

class SyntheticWorkload : public Workload {
public:
    static void declare_params(ParamRegistry& reg);
    static void declare_metrics(MetricRegistry& reg);
    // workload.kind = synthetic on these apps (one per node, all present,
    // numbered as topology.* numbers them); nullptr for another kind.
    // ConfigError for settings that do not fit (a pattern the topology
    // cannot take, a hot node that does not exist, ...).
    static std::unique_ptr<Workload> create(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job);
    SyntheticWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job,
                      const synthetic::Shape& shape);
    // A message of configuration `c`: its bytes (synthetic.message-size,
    // 0: one packet's payload) and the data packets the engine cuts it into.
    struct Message {
        std::uint64_t bytes = 0;
        synthetic::Packets packets;
        std::uint64_t packet_flits = 0;   // its largest packet's
    };
    static Message message_of(const Config& c);

    std::string kind() const override { return "synthetic"; }
    // Its programs in this process (a partitioned run's rank: those of its
    // own nodes) have ended.
    bool finished() const override { return ended_ == present_; }
    std::uint64_t programs() const override { return apps_.size(); }
    // A source's message seen at its destination (packet_arrived, on the
    // destination's side), for the source's side.
    void take_note(const Note& n) override;
    // A partitioned run's end: each rank's tallies, and all of them added
    // (figures(), the scalars and the self-checks then the whole system's).
    Bytes end_part() const override;
    void merge_end(const std::vector<Bytes>& all) override;

    // What System tells it of the network before the run: the NI link's
    // flit time (the offered load's unit) and each message's zero-load
    // network latency (src/sim/channel_load.hpp), from the same models the
    // run builds.
    bool observes_network() const override { return true; }
    void set_network(sc_core::sc_time ni_flit, ZeroLoadFn zero_load) override;
    // A data packet of this job reached node `dst`'s engine: from node
    // `src`, written at `dst_va`, `flits` long, its head onto src's NI link
    // at `injected`, its tail out of dst's at `tail` (Pldma::on_data_arrival,
    // wired by System, on dst's side). Measurement only: its message's
    // source learns of it by a note (Workload::leave_note).
    // The read form (workload.operation = read): the same for a read
    // request (its tail into `dst`'s engine, dst_va in dst's read source
    // area) and for a read's data (from the responder `src` to the
    // requester `dst`, written at dst's destination buffer).
    void packet_arrived(unsigned src, unsigned dst, std::uint64_t dst_va, std::uint64_t flits, std::uint64_t payload,
                        sc_core::sc_time injected, sc_core::sc_time tail) override;
    // The read form across boards with workload.fill-source (the harness
    // fills a read's source on the responder when the requester posts it).
    std::string partition_refusal() const override;
    bool reads() const { return read_; }

    // Data flits of one message (what the offered load counts).
    std::uint64_t message_flits() const { return flits_; }
    std::uint64_t message_bytes() const { return msg_; }
    // The measurement window [begin, end), absolute (known once the
    // programs passed their start barrier).
    sc_core::sc_time window_begin() const { return w0_; }
    sc_core::sc_time window_end() const { return w1_; }

    // The run's figures (valid once finished()).
    struct Figures {
        std::uint64_t created = 0, delivered = 0, failed = 0, abandoned = 0;
        std::uint64_t measured = 0, measured_delivered = 0;
        double offered = 0, accepted = 0, accepted_gbps = 0;   // per node, fractions of the NI link's rate
        double backlog_growth = 0;   // (backlog at the window's end - at its start) / messages created in it
        double waiting_rise_us = 0;   // mean waiting of the window's second half minus its first's
        bool waiting_rises =
            false;   // by more than 3 standard errors (of batch means) and a tenth of the first half's latency
        bool saturated = false;
    };
    const Figures& figures() const { return fig_; }
    // The workload's self-checks (src/sim/invariants.cpp): (name, detail)
    // for each violation.
    std::vector<std::pair<std::string, std::string>> self_check() const override;

private:
    struct Slot;
    struct Source;
    // The constructor's steps: synthetic.*'s settings, then the nodes.
    void read_settings(const Config& c);
    void plan_nodes(const Config& c);
    void program(RdmaProcess& app);
    // program's steps.
    void start_sources(RdmaProcess& app, Source& s);
    void next_creation(Source& s) const;
    void create_due(RdmaProcess& app, Source& s, sc_core::sc_time stop);
    void map_buffers(RdmaProcess& app, Source& s);
    void post(RdmaProcess& app, Source& s);
    // Wait until a message in flight has completed, and retire the one
    // that completed first.
    void retire_one(RdmaProcess& app, Source& s);
    void retire(RdmaProcess& app, Source& s, std::size_t slot, sc_core::sc_time completed);
    // retire's steps: the order of a delivered message's times; a measured
    // one's latencies against its zero-load sum.
    void check_order(const Source& s, const Slot& sl, sc_core::sc_time at);
    void measure(const Source& s, const Slot& sl, sc_core::sc_time at, sc_core::sc_time latency, std::uint64_t now);
    // The read form: a read's data arrived at its requester (from its
    // responder), and its request at the responder (by a note).
    void reply_arrived(unsigned requester, unsigned responder, std::uint64_t dst_va, sc_core::sc_time injected,
                       sc_core::sc_time tail);
    void request_arrived(unsigned requester, unsigned responder, std::uint64_t src_va, std::uint64_t flits,
                         sc_core::sc_time injected, sc_core::sc_time tail);
    bool completed(RdmaProcess& app, const Slot& sl, sc_core::sc_time& at) const;
    void finalize();
    // Where node `src`'s slot `slot` lies in node `dst`'s receive area (the
    // read form: the area dst's readers read); the slot in flight an address
    // of that area is (nullptr: none).
    std::uint64_t dst_addr(unsigned src, unsigned dst, std::uint64_t slot) const;
    Slot* slot_at(unsigned src, unsigned dst, std::uint64_t va);

    std::vector<RdmaProcess*> apps_;   // by node (nullptr: another rank's)
    std::size_t present_ = 0;   // of them in this process
    synthetic::Shape shape_;
    synthetic::Pattern pattern_;
    synthetic::Hotspot hot_;
    double load_;
    bool poisson_;
    bool read_ = false;   // workload.operation = read: each message a read of the destination's bytes
    std::uint64_t msg_, flits_, window_;
    std::uint64_t packet_flits_;   // the largest data packet's flits
    sc_core::sc_time warmup_, measure_, drain_;
    sc_core::sc_time ni_flit_;
    ZeroLoadFn zero_load_;
    std::vector<std::vector<unsigned>> sources_;   // by destination: who sends to it (increasing)
    std::vector<std::unique_ptr<Source>> nodes_;   // by node (nullptr: another rank's)
    // Every node's receive area and whether it registered, as published
    // before the start barrier (read after it).
    std::vector<std::uint64_t> rx_base_;
    std::vector<bool> registered_;
    sc_core::sc_time t0_, w0_, w1_, stop_;
    bool started_ = false;
    std::size_t ended_ = 0;
    Figures fig_;
    // What the figures are made of, counted by each event's own simulated
    // time, in integers (picoseconds for times), so that a partitioned
    // run's ranks add their parts to the very totals one process counts.
    struct Half {
        std::uint64_t n = 0;
        std::int64_t sum_ps = 0;
        double mean_us() const { return n > 0 ? static_cast<double>(sum_ps) * 1e-6 / static_cast<double>(n) : 0; }
    };
    // The first message found wrong of a kind, described, and its
    // completion time and source (the earliest, whatever the partition).
    struct First {
        std::uint64_t at_ps = 0;
        unsigned node = 0;
        std::string what;
        void offer(std::uint64_t at, unsigned from, const std::string& w, bool none_yet);
    };
    static constexpr unsigned kBatches = 10;
    struct Tally {
        std::uint64_t created = 0, delivered = 0, failed = 0, abandoned = 0, measured = 0, measured_delivered = 0;
        std::uint64_t created_before_w0 = 0, created_before_w1 = 0, created_in_window = 0;
        std::uint64_t delivered_before_w0 = 0, delivered_before_w1 = 0;
        // The measured messages' waiting (latency minus their zero-load
        // sum) by the half of the window they were created in. A saturated
        // flow's waiting grows with the time it was created.
        Half half[2];
        // The same by batch, kBatches equal spans of the window by
        // creation time (half in each half): the standard error of a
        // half's mean is taken from its batches' means (the method of
        // batch means), since consecutive messages' waitings are not
        // independent (they queue behind each other), and one from the
        // messages themselves is far too small: a queue's slow swings read
        // as a rise.
        Half batch[kBatches];
        std::uint64_t zero_load_sum_ps[2] = {0, 0};   // their zero-load sums
        std::uint64_t measured_abandoned = 0;
        std::vector<std::uint64_t> rx_window_flits, tx_window_flits;   // by node: NI links' packets in the window
        std::uint64_t accepted_window_flits = 0;   // data flits of the messages delivered in the window
        std::uint64_t causality_errors = 0, below_zero_load = 0, unmatched_packets = 0;
        First first_causality, first_below;
        void add(const Tally& o);
        void put(ByteWriter& w) const;
        static Tally get(ByteReader& r);
    };
    Tally tally_;
    Counter& created_;
    Counter& abandoned_;
    Counter& exact_;   // measured messages whose network latency is their zero-load sum, to the picosecond
    Histogram& latency_;   // measured: creation to the last tail out of the destination's NI link, us
    Histogram& net_latency_;   // measured: first head onto the source's NI link to that tail, us
    Histogram& zero_load_us_;   // measured: their zero-load sums, us
    Histogram& excess_;   // measured: network latency minus its zero-load sum, us
    Histogram* turnaround_ = nullptr;   // the read form, measured: request's tail in to the data's head out, us
    Scalar& offered_;
    Scalar& accepted_;
    Scalar& accepted_gbps_;
    Scalar& backlog_growth_;
    Scalar& waiting_rise_;
    Scalar& saturated_;
};

}   // namespace vrdmasim
