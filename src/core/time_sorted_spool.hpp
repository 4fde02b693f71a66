// Records that arrive roughly but not exactly in time order (models run
// ahead of each other under temporal decoupling) and must come out sorted
// by time, in bounded memory: each record is kept with its time, a tie key
// the caller gives (the trace's canonical order among same-time records,
// docs/trace.md "Order and numbering") and its arrival number, sorted runs
// are spilled to temporary files beside the output once they exceed a byte
// budget, and drain() merges them. The trace's events
// and the narrated log's lines both go through one.
// Part of the simulator core; knows nothing about models.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace vrdmasim {

class TimeSortedSpool {
public:
    // Run files are named `<spill_prefix>.runN`.
    explicit TimeSortedSpool(std::string spill_prefix = "") : prefix_(std::move(spill_prefix)) {}
    ~TimeSortedSpool() { discard(); }
    TimeSortedSpool(const TimeSortedSpool&) = delete;
    TimeSortedSpool& operator=(const TimeSortedSpool&) = delete;

    void set_prefix(std::string spill_prefix) { prefix_ = std::move(spill_prefix); }
    // Bytes held in memory before a sorted run is spilled (tests lower it).
    void set_spill_bytes(std::size_t bytes) { spill_bytes_ = bytes; }

    // Records that tie in time come out by `tie` (compared in order), then
    // in arrival order.
    struct Tie {
        std::uint64_t a = 0, b = 0, c = 0;
    };
    void add(std::uint64_t ts, std::string text) { add(ts, Tie{}, std::move(text)); }
    void add(std::uint64_t ts, const Tie& tie, std::string text);
    // Every record in (time, tie, arrival) order, then nothing is held and the
    // run files are gone. Throws std::runtime_error if a run file fails.
    void drain(const std::function<void(const std::string&)>& emit);
    // Drop everything, run files included.
    void discard();
    // Every record with its time and tie, in no particular order (the
    // in-memory ones first, then each run file's), then nothing is held:
    // what a rank hands to the one that writes the files.
    void take_all(const std::function<void(std::uint64_t ts, const Tie& tie, const std::string& text)>& emit);

    std::size_t runs() const { return runs_.size(); }

private:
    struct Record {
        std::uint64_t ts;
        Tie tie;
        std::uint64_t seq;
        std::string text;
    };
    void spill();
    std::string prefix_;
    std::vector<Record> pending_;
    std::size_t pending_bytes_ = 0;
    std::size_t spill_bytes_ = std::size_t(64) << 20;
    std::uint64_t seq_ = 0;
    std::vector<std::string> runs_;
};

}   // namespace vrdmasim
