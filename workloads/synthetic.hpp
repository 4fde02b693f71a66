// Synthetic traffic (workload.kind = synthetic): the interconnect's own
// experiment, as BookSim and Garnet run it. Every node is an open-loop
// source: it creates messages of synthetic.message-size at synthetic.load
// (a fraction of its NI link's rate, in flits; Bernoulli or Poisson
// arrivals drawn from sim.seed), each to the destination the pattern gives
// (workloads/synthetic_pattern.hpp), into an unbounded source queue, and
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
#include "workloads/synthetic_pattern.hpp"
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
    bool finished() const override { return ended_ == apps_.size(); }
    std::uint64_t programs() const override { return apps_.size(); }

    // What System tells it of the network before the run: the NI link's
    // flit time (the offered load's unit) and each message's zero-load
    // network latency (src/sim/channel_load.hpp), from the same models the
    // run builds.
    using ZeroLoadFn = std::function<sc_core::sc_time(unsigned src, unsigned dst, std::uint64_t flits)>;
    void set_network(sc_core::sc_time ni_flit, ZeroLoadFn zero_load);
    // A data packet of this job reached node `dst`'s engine: from node
    // `src`, written at `dst_va`, `flits` long, its head onto src's NI link
    // at `injected`, its tail out of dst's at `tail` (Pldma::on_data_arrival,
    // wired by System). Measurement only.
    void packet_arrived(unsigned src, unsigned dst, std::uint64_t dst_va, std::uint64_t flits, std::uint64_t payload,
                        sc_core::sc_time injected, sc_core::sc_time tail);

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
    std::vector<std::pair<std::string, std::string>> self_check() const;

private:
    struct Slot;
    struct Source;
    void program(RdmaProcess& app);
    void map_buffers(RdmaProcess& app, Source& s);
    void post(RdmaProcess& app, Source& s);
    // Wait until a message in flight has completed, and retire the one
    // that completed first.
    void retire_one(RdmaProcess& app, Source& s);
    void retire(RdmaProcess& app, Source& s, std::size_t slot, sc_core::sc_time completed);
    bool completed(RdmaProcess& app, const Slot& sl, sc_core::sc_time& at) const;
    void finalize();
    // Where node `src`'s slot `slot` lies in node `dst`'s receive area.
    std::uint64_t dst_addr(unsigned src, unsigned dst, std::uint64_t slot) const;

    std::vector<RdmaProcess*> apps_;
    synthetic::Shape shape_;
    synthetic::Pattern pattern_;
    synthetic::Hotspot hot_;
    double load_;
    bool poisson_;
    std::uint64_t msg_, flits_, window_;
    std::uint64_t packet_flits_;   // the largest data packet's flits
    sc_core::sc_time warmup_, measure_, drain_;
    sc_core::sc_time ni_flit_;
    ZeroLoadFn zero_load_;
    std::vector<std::vector<unsigned>> sources_;   // by destination: who sends to it (increasing)
    std::vector<std::unique_ptr<Source>> nodes_;   // by node
    sc_core::sc_time t0_, w0_, w1_, stop_;
    bool started_ = false;
    std::size_t ended_ = 0;
    Figures fig_;
    // Window bookkeeping, exact by each event's own simulated time.
    std::uint64_t created_before_w0_ = 0, created_before_w1_ = 0, created_in_window_ = 0;
    std::uint64_t delivered_before_w0_ = 0, delivered_before_w1_ = 0;
    // The measured messages' waiting (latency minus their zero-load sum, us)
    // by the half of the window they were created in: count and sum. A
    // saturated flow's waiting grows with the time it was created.
    struct Half {
        double n = 0, sum = 0;
        double mean() const { return n > 0 ? sum / n : 0; }
    };
    Half half_[2];
    // The same by batch, kBatches equal spans of the window by creation
    // time (half in each half): the standard error of a half's mean is
    // taken from its batches' means (the method of batch means), since
    // consecutive messages' waitings are not independent (they queue
    // behind each other), and one from the messages themselves is far too
    // small: a queue's slow swings read as a rise.
    static constexpr unsigned kBatches = 10;
    Half batch_[kBatches];
    double zero_load_sum_[2] = {0, 0};   // their zero-load sums, us
    std::uint64_t measured_abandoned_ = 0;
    std::vector<std::uint64_t> rx_window_flits_, tx_window_flits_;   // by node: NI links' packets in the window
    std::uint64_t rx_window_payload_ = 0;
    std::uint64_t accepted_window_flits_ = 0;   // data flits of the messages delivered in the window
    std::uint64_t causality_errors_ = 0, below_zero_load_ = 0, unmatched_packets_ = 0;
    std::string first_below_, first_causality_;   // the first message faster than its zero-load sum, described
    Counter& created_;
    Counter& abandoned_;
    Counter& exact_;   // measured messages whose network latency is their zero-load sum, to the picosecond
    Histogram& latency_;   // measured: creation to the last tail out of the destination's NI link, us
    Histogram& net_latency_;   // measured: first head onto the source's NI link to that tail, us
    Histogram& zero_load_us_;   // measured: their zero-load sums, us
    Histogram& excess_;   // measured: network latency minus its zero-load sum, us
    Scalar& offered_;
    Scalar& accepted_;
    Scalar& accepted_gbps_;
    Scalar& backlog_growth_;
    Scalar& waiting_rise_;
    Scalar& saturated_;
};

}   // namespace vrdmasim
