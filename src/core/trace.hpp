// Timeline tracing in Chrome trace-event JSON (opens in ui.perfetto.dev and
// Chromium's DevTools Performance panel), plus an optional narrated event
// log in plain text.
//
// One track per (group, model): a group is a process in the viewer (a node,
// "node1"), a track a thread in it ("dma", "link->node0", "dram"). Spans
// that overlap on a track (transfers in flight at once) are drawn on lanes,
// extra threads "dma lane 2", "dma lane 3", ... (async_span).
// Part of the simulator core; knows nothing about models.
#pragma once

#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <systemc>

#include "src/core/bytes.hpp"
#include "src/core/format.hpp"
#include "src/core/json.hpp"
#include "src/core/time_sorted_spool.hpp"

struct gzFile_s;

namespace vrdmasim {

// Which lines of the log, or tracks of the trace, to keep, by the names of
// nodes and models: the terms of --log-filter and --trace-filter. A term
// matches a dot-separated component of a name ("node1.smmu_driver",
// "node1.smmu tcu") that equals it or starts with it followed by '_', '-'
// or ' ' ("smmu" matches node0.smmu, node0.smmu_driver and node0.smmu tcu);
// a model term also matches the component followed by digits only ("cpu"
// matches cpu0..cpu3). Terms naming groups (nodes) and the others (models)
// are matched separately: a name must match one of each kind given.
class NameFilter {
public:
    void set(std::vector<std::string> terms);
    bool empty() const { return terms_.empty(); }
    // `groups`: the groups (nodes) known, to tell node terms from model terms;
    // read at the first call after set().
    // `more_groups`: groups known besides (a partitioned run's other ranks' nodes).
    bool keep(const std::string& name, const std::map<std::string, int>& groups,
              const std::vector<std::string>* more_groups = nullptr);
    // Terms that matched no name so far (a misspelt node or model).
    std::vector<std::string> unmatched() const;
    // Term `term` matched elsewhere (another rank's names).
    void matched(const std::string& term) {
        if (hits_.count(term)) ++hits_[term];
    }

private:
    std::vector<std::string> terms_, group_terms_, model_terms_;
    std::map<std::string, std::uint64_t> hits_;
    bool split_ = false;
};

class Tracer {
public:
    struct Track {
        int pid = 0;
        int tid = 0;
    };
    // Where and when a noted event happened, so that a later event it
    // causes can name it: `after #id` in the log, a flow arrow from it in
    // the trace. Models keep it with whatever carries the story on (a
    // fault, a transfer); an empty Cause (id 0) names nothing.
    //
    // `id` is a raw id, unique across the ranks of a partitioned run (the
    // rank in its high bits): the files show the number the step gets in
    // the canonical order when they are written (docs/trace.md "Order and
    // numbering"). `noted` and `depth` place the step in that order: its
    // own time, and how many steps of its story come before it at that time
    // (a cause is written before its effects).
    struct Cause {
        std::uint64_t id = 0;
        Track track;
        sc_core::sc_time at;
        sc_core::sc_time noted;
        std::uint32_t depth = 0;
        explicit operator bool() const { return id != 0; }
    };

    // Disabled until open() succeeds: every call is then a cheap no-op.
    Tracer() = default;
    ~Tracer();
    Tracer(const Tracer&) = delete;
    Tracer& operator=(const Tracer&) = delete;

    // Start writing trace events to `json_path` (if not empty; a path that
    // ends in ".gz" is written gzip-compressed, as Perfetto and the DevTools
    // panel open it) and narrated lines to `log_path` (if not empty). Throws
    // std::runtime_error if a file cannot be opened.
    void open(const std::string& json_path, const std::string& log_path = "");
    // Finish the JSON (closing brackets) and flush. Idempotent.
    void close();
    // The first failure to write the trace, the log or their run files
    // (a full disk, a file-size limit), while the run simulated or at
    // close(); "" if none. The write threw std::runtime_error with it.
    const std::string& write_error() const { return write_error_; }

    // Plain flags, set by open() and close(): asked on every packet, and
    // std::ofstream::is_open() is a call into the C++ library.
    bool enabled() const { return json_open_; }
    bool narrating() const { return log_open_; }

    // Get (or create) the track for group/name; cheap to call once per model
    // at construction. Valid also while disabled (then it records nothing).
    Track track(const std::string& group, const std::string& name);

    // A span [start, end) on a track ("X" event). `args` become the event's
    // args object: pairs of key and already-formatted JSON value text
    // (use json_number / json_string).
    void span(Track t, const char* name, sc_core::sc_time start, sc_core::sc_time end,
              const std::vector<std::pair<std::string, std::string>>& args = {});
    // A span that may overlap others on its track: transfers in flight at
    // once, page-table walks, SSD reads. Written as a slice ("X", cat
    // "async") on a lane of the track: the track itself when nothing else
    // draws slices there, then "<track> lane 2", "lane 3", ... (extra
    // threads of the group, named when first used), the lowest lane free
    // at the span's start, so that the slices of one lane never overlap,
    // in any viewer (the DevTools Performance panel draws no async events).
    // Lanes are chosen while the time-sorted file is written, in start
    // order, whatever order the spans were recorded in. `id` names the span
    // for the caller (args carry what the viewer shows).
    void async_span(Track t, const char* name, std::uint64_t id, sc_core::sc_time start, sc_core::sc_time end,
                    const std::vector<std::pair<std::string, std::string>>& args = {});
    // A point event ("i" event, thread scope).
    void instant(Track t, const char* name, sc_core::sc_time at,
                 const std::vector<std::pair<std::string, std::string>>& args = {});
    // Every line of the narrated log is a step: numbered, with its cause
    // when it has one (there is no unnumbered line: a line without a
    // cause is the first step of its story).
    // A step of a story: a slice `name` of `dur` on track `t` in the trace
    // (with `args`), the line "#id <text> (after #cause)" in the log, and a
    // flow arrow from `because` to this slice. An empty `because` means the
    // current Scope's cause (below), if any. Track{} (pid 0): a line of the
    // log only; arrows from it start at the nearest earlier step's slice.
    // Slices of one track must nest: give a duration only on a track where
    // the model never overlaps work (a core), zero elsewhere. Returns the
    // Cause naming this step (an empty one when nothing is recorded).
    Cause note(Track t, const char* name, sc_core::sc_time at, sc_core::sc_time dur, const std::string& who,
               const std::string& text, const Cause& because,
               const std::vector<std::pair<std::string, std::string>>& args = {});
    // A step that follows whatever the calling process is doing for a story
    // (the innermost Scope open in this SystemC process), or the first step
    // of a story when none is open.
    Cause note(Track t, const char* name, sc_core::sc_time at, sc_core::sc_time dur, const std::string& who,
               const std::string& text);

    // Whether note() records anything (a trace, a log or a kept story):
    // models build their notes' text only then.
    bool noting() const { return enabled() || narrating() || story_cap_ > 0; }

    // "Everything this process does now follows `c`": while a Scope is alive,
    // note() without an explicit cause, called from the same SystemC process,
    // names `c`. Lets a story cross a call into another model (the fault
    // library into the VM) without widening its interface. Scopes nest; a
    // process that waits keeps its scope, other processes do not see it.
    // Inline test, out-of-line work: a run that notes nothing pays a compare
    // (scopes sit on every packet's path).
    class Scope {
    public:
        Scope(Tracer& tr, const Cause& c) : tr_(tr), active_(tr.noting()) {
            if (active_) open(c);
        }
        ~Scope() {
            if (active_) close();
        }
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;

    private:
        void open(const Cause& c);
        void close();
        Tracer& tr_;
        const void* process_ = nullptr;
        Cause saved_;
        bool had_ = false;
        bool active_;
    };
    // The cause of the innermost Scope open in the calling process (empty if none).
    Cause current() const;

    // One step of a story as kept in memory for a report (keep_story).
    struct StoryStep {
        std::uint64_t id = 0, after = 0;   // after: the cause's id, 0 if none
        sc_core::sc_time at, dur;
        std::string who, name, text;
    };
    // Keep the first `max_steps` noted steps in memory (0: none), whether or
    // not a trace or log is written: the run report's timeline.
    void keep_story(std::size_t max_steps) { story_cap_ = max_steps; }
    const std::vector<StoryStep>& story() const { return story_; }
    // Steps noted after the kept ones were full.
    std::uint64_t story_dropped() const { return story_dropped_; }
    // Only lines whose `who` matches are written: `terms` such as
    // {"node1", "smmu"} (NameFilter: "smmu" matches node0.smmu and
    // node0.smmu_driver; a line must match a node term and a model term
    // when both kinds are given). Empty: every line.
    void set_log_filter(std::vector<std::string> terms);
    // Filter terms that matched no line so far (a misspelt node or model).
    std::vector<std::string> unmatched_filter_terms() const { return log_filter_.unmatched(); }
    // Only the trace's tracks whose "group.name" matches are written, with
    // the same terms and rules as the log's (NameFilter). An arrow is kept
    // when both its ends are.
    void set_trace_filter(std::vector<std::string> terms);
    std::vector<std::string> unmatched_trace_filter_terms() const { return trace_filter_.unmatched(); }
    // Only what happens within [from, to] of simulated time is written, to
    // the trace and the log alike: slices that overlap it (whole, not
    // clipped), instants and log lines within it, arrows whose both ends
    // are within it. Kept stories (keep_story) are not windowed.
    void set_window(sc_core::sc_time from, sc_core::sc_time to) {
        window_from_ = from.value();
        window_to_ = to.value();
    }

    // Spans and instants written so far (metadata events not counted).
    std::uint64_t events_written() const { return events_; }
    // Bytes of trace events and of log lines recorded so far: about the
    // sizes of trace.json (uncompressed) and events.log once written.
    std::uint64_t trace_bytes() const { return json_bytes_; }
    std::uint64_t log_bytes() const { return log_bytes_; }
    // Call `warn(file, bytes)` when the trace's ("trace") or the log's
    // ("log") recorded bytes first reach `first_bytes`, and again at each
    // further factor of 4: a run can say how big its outputs are growing
    // while it simulates. 0: never.
    void watch_size(std::uint64_t first_bytes, std::function<void(const char* file, std::uint64_t bytes)> warn) {
        json_warn_at_ = log_warn_at_ = first_bytes;
        size_warn_ = std::move(warn);
    }

    // JSON value text for args (core/json.hpp).
    static std::string json_string(const std::string& s) { return vrdmasim::json_string(s); }
    template <typename T>
    static std::string json_number(T v) {
        return vrdmasim::json_number(v);
    }
    // Addresses are written in hex everywhere, trace and log alike: "0x7efffffff000".
    static std::string hex(std::uint64_t v) { return vrdmasim::hex(v); }
    static std::string json_hex(std::uint64_t v) { return json_string(hex(v)); }
    // A time as JSON, in microseconds as "ts" is written (to the
    // picosecond, trailing zeros dropped).
    static std::string json_us(sc_core::sc_time t);

    // A partitioned run (docs/scaling.md, "Traces and logs across ranks"):
    // every rank records what its models do, and the writer (rank 0) writes
    // the files from every rank's records, as one process would.
    // This tracer is rank `rank`'s: its ids are unique across the ranks.
    void set_rank(unsigned rank);
    // Record as open() would, without writing files (a rank other than the
    // writer): a trace (`trace`) and a log (`log`), sorted runs spilled to
    // `<spill_prefix>.runN`. What is recorded is handed over (export_*).
    void record_only(bool trace, bool log, const std::string& spill_prefix);
    // The groups in the order their pids number them: these first, in this
    // order (the nodes, in node order), then any other by name. Without it
    // every group by name.
    void set_group_order(const std::vector<std::string>& groups);
    // A track as a Cause carries it to another rank: `rank`'s track `t`
    // (the writer resolves it when the files are written).
    static Track portable(unsigned rank, Track t);
    // What the writer needs of this rank before its records: the groups and
    // tracks (names, in creation order), which tracks have slices, how many
    // steps were noted, the filter terms that matched.
    Bytes export_tables() const;
    // The writer: rank `from`'s tables (every other rank's, in rank order,
    // before any of their records).
    void import_tables(unsigned from, const Bytes& tables);
    // Every record of this rank (stream 0 the trace's events, 1 the log's
    // lines, 2 the steps' places in the numbering), with its time and tie;
    // then nothing is held.
    void export_records(const std::function<void(std::uint8_t stream, std::uint64_t ts, const TimeSortedSpool::Tie& tie,
                                                 const std::string& record)>& emit);
    // The writer: a record of rank `from`, as export_records gave it.
    void import_record(unsigned from, std::uint8_t stream, std::uint64_t ts, const TimeSortedSpool::Tie& tie,
                       std::string record);
    // Records made outside any SystemC process count as made by a process
    // named `name` ("" unless set): tests that stand in for processes.
    void set_outside_process(const std::string& name) { outside_process_ = name; }
    // While one is alive, records made count as made by a process named
    // `name` (a C string that outlives it), whichever process runs: a
    // process that acts for many models, each of which lives on one rank
    // of a partitioned run (the hop queue, serving each link's events),
    // names the model, so that same-time records keep their order on any
    // number of ranks (docs/trace.md "Order and numbering").
    class ActingAs {
    public:
        explicit ActingAs(const char* name) : before_(acting_) { acting_ = name; }
        ~ActingAs() { acting_ = before_; }
        ActingAs(const ActingAs&) = delete;
        ActingAs& operator=(const ActingAs&) = delete;

    private:
        const char* before_;
    };
    // ActingAs's name while one is alive (one kernel a host process).
    static const char* acting() { return acting_; }
    // The number the step of raw id `id` got in the canonical order (after
    // close(); 0 if none): what the files show as #N.
    std::uint64_t number_of(std::uint64_t id) const;

    // Events (and log lines) held in memory before a sorted run is spilled
    // to a temporary file beside the trace (tests lower it to exercise the merge).
    void set_spill_bytes(std::size_t bytes) {
        events_spool_.set_spill_bytes(bytes);
        log_spool_.set_spill_bytes(bytes);
        ids_spool_.set_spill_bytes(bytes);
    }

private:
    // One line of the log: "  12.345678 us  node1.dma  <text>" (note() adds
    // the step's number and cause). Lines are written sorted by time at
    // close(), in bounded memory (sorted runs spill to disk beside the log,
    // as the trace's events do).
    void narrate(sc_core::sc_time at, const std::string& who, const std::string& text, std::uint64_t me,
                 std::uint64_t because, std::uint32_t depth);
    // Events come out in simulated-time order (models emit them out of
    // order under temporal decoupling, and spans that started long ago).
    void write_event_head(char ph, Track t, const char* name, sc_core::sc_time ts);
    void write_args(const std::vector<std::pair<std::string, std::string>>& args);
    // The event in ev_ into the spool (`close`: its closing brace added first).
    void end_event(std::uint32_t depth = 0, bool close = true);
    void start_recording(const std::string& events_prefix, const std::string& log_prefix,
                         const std::string& ids_prefix);
    bool numbered_ = false;
    void flow(const Cause& from, Track to, sc_core::sc_time at, std::uint32_t depth);
    // The record's place among same-time records: `depth`, then the calling
    // SystemC process (a hash of its name) and how many records it made
    // before (docs/trace.md "Order and numbering").
    TimeSortedSpool::Tie tie(std::uint32_t depth);
    // A track of a record as the writer knows it (portable ones resolved;
    // Track{} if unknown).
    Track resolve(Track t) const;
    // Writes a record of the events' spool (close()).
    void write_record(const std::string& record);
    // The numbers of the noted steps, in canonical order (close()).
    void number_steps();
    std::string number_text(std::uint64_t id) const;
    void write_all_meta();
    bool recording_ = false;   // record_only(): spools without files
    std::string outside_process_;
    static inline const char* acting_ = nullptr;
    unsigned rank_ = 0;
    std::vector<std::string> group_order_;
    // Per rank (other than this one): its tracks (by its pid - 1, tid - 1) as this tracer's.
    std::vector<std::vector<std::vector<Track>>> foreign_;
    // Per rank: noted steps (raw id & kIdMask - 1) -> their number.
    std::vector<std::vector<std::uint64_t>> numbers_;
    std::vector<std::uint64_t> rank_steps_;   // per rank: steps noted there (imported)
    // Per process (a hash of its name): records it made so far.
    std::unordered_map<std::uint64_t, std::uint64_t> process_records_;
    const void* last_process_ = nullptr;
    std::uint64_t last_hash_ = 0;
    std::unordered_map<std::uint64_t, std::uint64_t> flow_numbers_;   // raw flow id -> written id, until its second end
    std::uint64_t flows_written_ = 0;
    std::vector<int> canon_pid_;   // per pid - 1: the pid written
    bool keep_line(const std::string& who);
    // Whether a slice [start, end] or a point is within the window.
    bool in_window(sc_dt::uint64 start, sc_dt::uint64 end) const { return end >= window_from_ && start <= window_to_; }
    // Whether events of track `t` are written (the trace filter), cached per track.
    bool keep_track(Track t);
    bool keep_track_slow(Track t);
    // A slice other than an async span is on track `t`: its spans take lanes beside it.
    void mark_sliced(Track t);
    void grew(std::uint64_t& bytes, std::uint64_t& warn_at, std::size_t more, const char* file);
    // The JSON file, plain or gzip, written through a buffer.
    void out(const std::string& text);
    void flush_out();
    // Records `what` as the write error (the first) and throws it.
    [[noreturn]] void write_failed(const std::string& what);
    // A record into one of the spools; a failed run-file write is a write error.
    template <class... Args>
    void spool_add(TimeSortedSpool& spool, Args&&... args) {
        try {
            spool.add(std::forward<Args>(args)...);
        } catch (const std::runtime_error& e) {
            write_failed(e.what());
        }
    }
    void begin_event();
    void write_process_meta(int pid, const std::string& group);
    void write_thread_meta(Track t, const std::string& name, int sort_index);
    // A span of async_span as the time-sorted file is written: its lane chosen.
    void write_lane_slice(const std::string& record);
    TimeSortedSpool events_spool_, log_spool_, ids_spool_;
    NameFilter log_filter_, trace_filter_;
    // Per group (pid - 1), per track (tid - 1): 0 not decided yet, 1 kept, 2 dropped.
    std::vector<std::vector<char>> track_kept_;
    // Per group, per track: whether slices other than async spans were written there.
    std::vector<std::vector<char>> track_sliced_;
    // Lanes while the file is written: per base track, the end of each lane's
    // last slice (lane 0 is the track itself) and each extra lane's tid.
    struct Lanes {
        std::vector<sc_dt::uint64> ends;
        std::vector<int> tids;
    };
    std::map<std::pair<int, int>, Lanes> lanes_;
    std::vector<int> next_tid_;   // per group: the tid the next lane gets
    sc_dt::uint64 window_from_ = 0, window_to_ = ~sc_dt::uint64{0};
    std::uint64_t json_bytes_ = 0, log_bytes_ = 0, json_warn_at_ = 0, log_warn_at_ = 0;
    std::function<void(const char*, std::uint64_t)> size_warn_;
    std::uint64_t next_cause_ = 1;
    std::map<const void*, Cause> scopes_;   // SystemC process -> its innermost Scope's cause
    std::size_t story_cap_ = 0;
    std::vector<StoryStep> story_;
    std::uint64_t story_dropped_ = 0;
    std::uint64_t next_flow_ = 1;
    std::string ev_;   // the event being written
    sc_dt::uint64 ev_ts_ = 0;
    std::string json_path_;
    std::string log_path_;
    std::string write_error_;
    std::ofstream json_, log_;
    gzFile_s* gz_ = nullptr;   // the trace when written gzip-compressed (json_ closed)
    std::string out_buf_;
    bool json_open_ = false, log_open_ = false;   // the trace (json_ or gz_) and log_ open
    // Each group's id (pid) by name, and per pid its tracks' names in
    // creation order (tid = position + 1): a group (a node) has a few
    // tracks, found by a scan; a torus has thousands of groups.
    std::map<std::string, int> groups_;
    std::vector<std::vector<std::string>> track_names_;
    std::uint64_t events_ = 0;
    bool first_ = true;
};

}   // namespace vrdmasim
