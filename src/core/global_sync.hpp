// What every workload shares across all nodes, as rendezvous in simulated
// time: a job's start barrier (Workload::ready_and_wait) and the end of
// every program of every job (System stops the kernel's daemons then), plus
// the values a node publishes before a barrier for the others to read after
// it (buffer addresses, registration flags). docs/scaling.md, "What the
// workloads share across nodes".
//
// Two ways to release a rendezvous:
//   - at once (deferred = false, board-link.handoff = call): when its last
//     party arrives, at that party's local time, the barrier as it has
//     always been;
//   - deferred (board-link.handoff = message): at the latest arrival's local
//     time plus the lookahead L (board-link.latency), the time a partitioned
//     run's window loop can release it at: every rank learns the arrivals of
//     a window at its end, and the release must be in a later window. The
//     one-rank reference of a partitioned run releases so too.
// In a partitioned run (set_partitioned(true)) arrivals and published values
// are only collected; the window loop exchanges take()'s contributions of
// every rank and hands them all to merge(), which completes rendezvous and
// schedules their releases at latest + L.
//
// Only SystemC: nothing of the models (src/core, so that workloads may hold it).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <systemc>

namespace vrdmasim {

class GlobalSync {
public:
    // deferred = false: a rendezvous releases at its last arrival's local time (today's barrier);
    // deferred = true: at the latest arrival's local time + lookahead (board-link.handoff = message).
    GlobalSync(sc_core::sc_time lookahead, bool deferred);
    ~GlobalSync();
    GlobalSync(const GlobalSync&) = delete;
    GlobalSync& operator=(const GlobalSync&) = delete;

    sc_core::sc_time lookahead() const { return lookahead_; }
    bool deferred() const { return deferred_; }

    // A rendezvous of `parties` arrivals in the whole system (all ranks).
    // Every rank registers the same rendezvous in the same order (ids are
    // equal across ranks). Returns its id. `event`: the event to notify at
    // the release instead of one of its own (a workload's start barrier
    // keeps the event it always had, so that a run with handoff = call
    // notifies the very same event at the very same time: the kernel's
    // same-time order, keyed or by heap, is unchanged).
    unsigned rendezvous(const std::string& name, std::uint64_t parties, sc_core::sc_event* event = nullptr);
    const std::string& name(unsigned id) const { return at(id).name; }
    std::uint64_t parties(unsigned id) const { return at(id).parties; }
    // Arrivals counted so far (in a partitioned run: merged ones).
    std::uint64_t arrivals(unsigned id) const { return at(id).arrived; }
    // The latest local time among them.
    sc_core::sc_time latest(unsigned id) const { return at(id).latest; }
    // One party arrives at local time `t` (>= sc_time_stamp()).
    void arrive(unsigned id, sc_core::sc_time t);
    // Released: at once, when complete; deferred, once the kernel reached
    // the release time.
    bool released(unsigned id) const;
    // When it is (or will be) released: valid once complete (std::logic_error before).
    sc_core::sc_time release_time(unsigned id) const;
    bool complete(unsigned id) const { return at(id).complete; }
    // Notified when released (at the release time). Released at once, the
    // event is notified only if asked for before the release (or given to
    // rendezvous()): a notification nobody waits for would still change the
    // kernel's heap, and so a handoff = call run's same-time order.
    sc_core::sc_event& release_event(unsigned id);
    // `fn()` when released: at once, in the last arrival's call to arrive()
    // (as today's end of the programs stops the daemons); deferred, from a
    // method process at the release time.
    void on_release(unsigned id, std::function<void()> fn);

    // Values a node publishes before the start barrier (buffer addresses,
    // registration flags...), visible to every node once the barrier that
    // follows is released. Keyed (node, slot). In one process a value is
    // visible as soon as it is published (the barrier orders the reads after
    // it); in a partitioned run another rank's values arrive with merge().
    void publish(unsigned node, std::uint32_t slot, std::uint64_t value);
    std::uint64_t published(unsigned node, std::uint32_t slot) const;   // std::logic_error if absent
    bool has_published(unsigned node, std::uint32_t slot) const;

    // ---- for the window loop of a partitioned run (set_partitioned(true):
    // arrivals and published values are only collected; a rendezvous is
    // released by merge(), never by arrive()) ----
    void set_partitioned(bool on) { partitioned_ = on; }
    bool partitioned() const { return partitioned_; }
    struct Contribution {
        std::uint32_t id;   // the rendezvous; kNoRendezvous: published values alone
        std::uint64_t arrivals;
        sc_core::sc_time latest;
        std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>> values;   // (node, slot, value)
        bool operator==(const Contribution& o) const {
            return id == o.id && arrivals == o.arrivals && latest == o.latest && values == o.values;
        }
    };
    static constexpr std::uint32_t kNoRendezvous = 0xffffffffu;
    // This rank's arrivals and values since the last take(), one
    // contribution per rendezvous arrived at (by id), the values with the
    // first (or alone, under kNoRendezvous).
    std::vector<Contribution> take();
    // Every rank's contributions, in rank order (this rank's own included):
    // values made visible, arrivals added; a rendezvous whose arrivals are
    // all in is released at its latest arrival + the lookahead (std::logic_error
    // if that is before the kernel's time, or if arrivals exceed its parties).
    void merge(const std::vector<Contribution>& all);
    // Plain bytes (little-endian words; times in picoseconds) and back
    // (std::invalid_argument for bytes that are not a serialization).
    static std::vector<unsigned char> serialize(const std::vector<Contribution>& cs);
    static std::vector<Contribution> deserialize(const std::vector<unsigned char>& bytes);

private:
    struct Rendezvous {
        std::string name;
        std::uint64_t parties = 0;
        std::uint64_t arrived = 0;
        sc_core::sc_time latest = sc_core::SC_ZERO_TIME;
        bool complete = false;
        sc_core::sc_time release_at = sc_core::SC_ZERO_TIME;
        sc_core::sc_event* event = nullptr;   // the one to notify (own or given)
        std::unique_ptr<sc_core::sc_event> own;
        bool watched = false;   // release_event() asked for, or event given
        std::vector<std::function<void()>> callbacks;
        // This rank's arrivals since the last take() (partitioned).
        std::uint64_t pending = 0;
        sc_core::sc_time pending_latest = sc_core::SC_ZERO_TIME;
    };
    Rendezvous& at(unsigned id);
    const Rendezvous& at(unsigned id) const;
    // Complete: released at `when` (at once: now, callbacks called here).
    void release(unsigned id, sc_core::sc_time when, bool at_once);
    sc_core::sc_time lookahead_;
    bool deferred_;
    bool partitioned_ = false;
    std::vector<std::unique_ptr<Rendezvous>> rv_;
    std::map<std::pair<unsigned, std::uint32_t>, std::uint64_t> values_;
    std::vector<std::tuple<std::uint32_t, std::uint32_t, std::uint64_t>> pending_values_;
};

}   // namespace vrdmasim
