// Timeline tracing in Chrome trace-event JSON (opens in ui.perfetto.dev and
// chrome://tracing), plus an optional narrated event log in plain text.
//
// One track per (group, model): a group is a process in the viewer (a node,
// "node1"), a track a thread in it ("dma", "link->node0", "dram").
// Part of the simulator core; knows nothing about models.
#pragma once

#include <cstdint>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <systemc>

#include "core/json.hpp"

namespace vrdmasim {

class Tracer {
public:
    struct Track { int pid = 0; int tid = 0; };

    // Disabled until open() succeeds: every call is then a cheap no-op.
    Tracer() = default;
    ~Tracer();
    Tracer(const Tracer&) = delete;
    Tracer& operator=(const Tracer&) = delete;

    // Start writing trace events to `json_path` (if not empty) and narrated
    // lines to `log_path` (if not empty). Throws std::runtime_error if a
    // file cannot be opened.
    void open(const std::string& json_path, const std::string& log_path = "");
    // Finish the JSON (closing brackets) and flush. Idempotent.
    void close();

    bool enabled() const { return json_.is_open(); }
    bool narrating() const { return log_.is_open(); }

    // Get (or create) the track for group/name; cheap to call once per model
    // at construction. Valid also while disabled (then it records nothing).
    Track track(const std::string& group, const std::string& name);

    // A span [start, end) on a track ("X" event). `args` become the event's
    // args object: pairs of key and already-formatted JSON value text
    // (use json_number / json_string).
    void span(Track t, const char* name, sc_core::sc_time start, sc_core::sc_time end,
              const std::vector<std::pair<std::string, std::string>>& args = {});
    // A span that may overlap others on its track (async "b"/"e" pair with
    // `id`): transfers in flight at once, each drawn on its own row.
    void async_span(Track t, const char* name, std::uint64_t id, sc_core::sc_time start, sc_core::sc_time end,
                    const std::vector<std::pair<std::string, std::string>>& args = {});
    // A point event ("i" event, thread scope).
    void instant(Track t, const char* name, sc_core::sc_time at,
                 const std::vector<std::pair<std::string, std::string>>& args = {});
    // One narrated line: "  12.345678 us  node1.dma  <text>". Lines are kept
    // and written sorted by time at close() (narration is for small runs).
    void narrate(sc_core::sc_time at, const std::string& who, const std::string& text);

    // Spans and instants written so far (metadata events not counted).
    std::uint64_t events_written() const { return events_; }

    // JSON value text for args (core/json.hpp).
    static std::string json_string(const std::string& s) { return vrdmasim::json_string(s); }
    template <typename T>
    static std::string json_number(T v) { return vrdmasim::json_number(v); }

    // Events held in memory before a sorted run is spilled to a temporary
    // file beside the trace (tests lower it to exercise the merge).
    void set_spill_bytes(std::size_t bytes) { spill_bytes_ = bytes; }

private:
    // Events come out in simulated-time order (models emit them out of
    // order under temporal decoupling, and spans that started long ago):
    // each is kept with its time, sorted in runs of bounded memory spilled
    // to temporary files, and merged into the trace at close().
    struct Pending {
        sc_dt::uint64 ts;
        std::uint64_t seq;
        std::string text;
    };
    void write_event_head(char ph, Track t, const char* name, sc_core::sc_time ts);
    void write_args(const std::vector<std::pair<std::string, std::string>>& args);
    void end_event();
    void spill();
    void merge_runs();
    std::vector<Pending> pending_;
    std::size_t pending_bytes_ = 0;
    std::size_t spill_bytes_ = std::size_t(64) << 20;
    std::uint64_t seq_ = 0;
    std::string ev_;                 // the event being written
    sc_dt::uint64 ev_ts_ = 0;
    std::string json_path_;
    std::vector<std::string> runs_;  // spilled run files, each sorted
    std::ofstream json_, log_;
    std::map<std::pair<std::string, std::string>, Track> tracks_;
    std::map<std::string, int> groups_;
    std::vector<int> next_tid_;
    std::uint64_t events_ = 0;
    std::vector<std::pair<sc_dt::uint64, std::string>> narration_;
    bool first_ = true;
};

}  // namespace vrdmasim
