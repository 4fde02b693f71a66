// Chrome trace-event JSON writer and narrated event log.
#include "src/core/trace.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include <zlib.h>

namespace vrdmasim {

namespace {

// The time resolution as a power of ten of femtoseconds (1 ps -> 3).
int resolution_exp_fs() {
    const double fs = sc_core::sc_get_time_resolution().to_seconds() * 1e15;
    int k = 0;
    for (double p = 1; p * 10 <= fs * 1.0000001; p *= 10) ++k;
    return k;
}

// `t` in microseconds, exactly: integer part and 9 fractional digits (fs).
// The integer sc_time value is shifted by the resolution's decimal exponent,
// so nothing overflows or rounds.
void split_us(sc_core::sc_time t, std::string& int_part, std::string& frac9) {
    std::string digits = std::to_string(t.value());
    const int k = resolution_exp_fs();
    const int frac_digits = 9 - k;   // decimal places of value() in microseconds
    if (frac_digits <= 0) {
        if (digits != "0") digits.append(static_cast<std::size_t>(-frac_digits), '0');
        int_part = digits;
        frac9.assign(9, '0');
        return;
    }
    const auto fd = static_cast<std::size_t>(frac_digits);
    if (digits.size() <= fd) digits.insert(0, fd - digits.size() + 1, '0');
    int_part = digits.substr(0, digits.size() - fd);
    frac9 = digits.substr(digits.size() - fd);
    frac9.append(9 - fd, '0');
}

// Microseconds with trailing fractional zeros (and a bare dot) removed.
std::string us_trimmed(sc_core::sc_time t) {
    std::string ip, fr;
    split_us(t, ip, fr);
    while (!fr.empty() && fr.back() == '0') fr.pop_back();
    return fr.empty() ? ip : ip + "." + fr;
}

// A slice's duration as written: exact, unless a viewer adding it to the
// start in double precision would land past the exact end, where the next
// slice of the track may start (the DevTools panel then drops one of the
// two: 9.490322 + 0.144 is 9.634322000000001). Then it is written a few
// femtoseconds short, far below any model's resolution, so that every
// viewer sees slices that touch as touching.
std::string dur_text(sc_core::sc_time start, sc_core::sc_time dur) {
    std::string exact = us_trimmed(dur);
    const int k = resolution_exp_fs();
    if (dur == sc_core::SC_ZERO_TIME || k > 9) return exact;
    // value() / 10^(9-k) is the microseconds, correctly rounded, as a
    // viewer parses the decimal text (both integers exact in a double).
    const double per_us = std::pow(10.0, 9 - k);
    const double s = static_cast<double>(start.value()) / per_us;
    const double e = static_cast<double>((start + dur).value()) / per_us;
    if (s + static_cast<double>(dur.value()) / per_us <= e) return exact;
    std::uint64_t fs = dur.value();
    for (int i = 0; i < k; ++i) fs *= 10;
    for (std::uint64_t n = 1; n < 1000 && n < fs; ++n) {
        const std::uint64_t v = fs - n;
        if (s + static_cast<double>(v) / 1e9 > e) continue;
        std::string frac = std::to_string(v % 1000000000);
        frac.insert(0, 9 - frac.size(), '0');
        while (!frac.empty() && frac.back() == '0') frac.pop_back();
        return std::to_string(v / 1000000000) + (frac.empty() ? "" : "." + frac);
    }
    return exact;
}

// Microseconds with exactly 6 decimals (finer digits dropped).
std::string us_fixed6(sc_core::sc_time t) {
    std::string ip, fr;
    split_us(t, ip, fr);
    return ip + "." + fr.substr(0, 6);
}

}   // namespace

namespace {

// A track's threads sort by their sort index: a track's lanes (async_span)
// come right after it.
constexpr int kLaneSort = 1000;

// A span of async_span in the time-sorted spool: this byte, then the base
// track (pid, tid), the span's start and end (sc_time values), and the
// event's JSON from `,"name"` on; its lane, and so its tid, is chosen when
// the file is written. JSON text starts with '{', never with this.
constexpr char kLaneRecord = '\x01';
constexpr std::size_t kLaneHeader = 1 + sizeof(std::int32_t) * 2 + sizeof(sc_dt::uint64) * 2;

constexpr std::size_t kOutBuffer = std::size_t(1) << 20;

}   // namespace

Tracer::~Tracer() {
    try {
        close();
    } catch (...) {
    }
}

void Tracer::begin_event() {
    if (!first_) out(",\n");
    first_ = false;
}

void Tracer::out(const std::string& text) {
    out_buf_ += text;
    if (out_buf_.size() >= kOutBuffer) flush_out();
}

void Tracer::flush_out() {
    if (out_buf_.empty()) return;
    if (gz_ != nullptr) {
        if (gzwrite(gz_, out_buf_.data(), static_cast<unsigned>(out_buf_.size())) !=
            static_cast<int>(out_buf_.size())) {
            int err = 0;
            const char* what = gzerror(gz_, &err);
            throw std::runtime_error("cannot write trace file '" + json_path_ +
                                     "': " + (err == Z_ERRNO ? std::strerror(errno) : what));
        }
    } else {
        json_.write(out_buf_.data(), static_cast<std::streamsize>(out_buf_.size()));
        if (!json_) throw std::runtime_error("cannot write trace file '" + json_path_ + "': " + std::strerror(errno));
    }
    out_buf_.clear();
}

void Tracer::write_process_meta(int pid, const std::string& group) {
    begin_event();
    const std::string p = std::to_string(pid);
    out("{\"ph\":\"M\",\"pid\":" + p + ",\"name\":\"process_name\",\"args\":{\"name\":" + json_string(group) +
        "}},\n{\"ph\":\"M\",\"pid\":" + p + ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":" + p + "}}");
}

void Tracer::write_thread_meta(Track t, const std::string& name, int sort_index) {
    begin_event();
    const std::string head = "{\"ph\":\"M\",\"pid\":" + std::to_string(t.pid) + ",\"tid\":" + std::to_string(t.tid);
    out(head + ",\"name\":\"thread_name\",\"args\":{\"name\":" + json_string(name) + "}},\n" + head +
        ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" + std::to_string(sort_index) + "}}");
}

void Tracer::open(const std::string& json_path, const std::string& log_path) {
    close();
    std::ofstream json;
    gzFile gz = nullptr;
    const bool gzip = json_path.size() > 3 && json_path.compare(json_path.size() - 3, 3, ".gz") == 0;
    if (gzip) {
        // Level 1: a trace's JSON repeats itself, so the fastest level
        // already shrinks it about tenfold; higher levels cost far more time.
        gz = gzopen(json_path.c_str(), "wb1");
        if (gz == nullptr)
            throw std::runtime_error("cannot open trace file '" + json_path + "': " + std::strerror(errno));
        gzbuffer(gz, 256 * 1024);
    } else if (!json_path.empty()) {
        json.open(json_path, std::ios::out | std::ios::trunc | std::ios::binary);
        if (!json) throw std::runtime_error("cannot open trace file '" + json_path + "': " + std::strerror(errno));
    }
    std::ofstream log;
    if (!log_path.empty()) {
        log.open(log_path, std::ios::out | std::ios::trunc);
        if (!log) {
            if (gz != nullptr) gzclose(gz);
            throw std::runtime_error("cannot open event log '" + log_path + "': " + std::strerror(errno));
        }
    }
    json_ = std::move(json);
    gz_ = gz;
    log_ = std::move(log);
    json_open_ = json_.is_open() || gz_ != nullptr;
    log_open_ = log_.is_open();
    json_path_ = json_path;
    first_ = true;
    out_buf_.clear();
    json_bytes_ = log_bytes_ = 0;
    events_spool_.discard();
    log_spool_.discard();
    events_spool_.set_prefix(json_path);
    log_spool_.set_prefix(log_path);
    track_kept_.clear();
    track_sliced_.clear();
    lanes_.clear();
    next_tid_.clear();
    if (!json_open_) return;
    out("{\"traceEvents\":[\n");

    // Metadata of tracks created before open(), in creation order.
    std::vector<const std::string*> group_of(track_names_.size());
    for (const auto& [name, pid] : groups_) group_of[static_cast<std::size_t>(pid - 1)] = &name;
    for (std::size_t g = 0; g < track_names_.size(); ++g) {
        if (track_names_[g].empty()) continue;
        const int pid = static_cast<int>(g) + 1;
        write_process_meta(pid, *group_of[g]);
        for (std::size_t k = 0; k < track_names_[g].size(); ++k) {
            const int tid = static_cast<int>(k) + 1;
            write_thread_meta(Track{pid, tid}, track_names_[g][k], tid * kLaneSort);
        }
    }
}

void Tracer::close() {
    try {
        if (json_open_) {
            // Lanes get tids after every track's (tracks may be made while
            // the run simulates, the lanes only now).
            next_tid_.assign(track_names_.size(), 0);
            for (std::size_t g = 0; g < track_names_.size(); ++g)
                next_tid_[g] = static_cast<int>(track_names_[g].size()) + 1;
            events_spool_.drain([this](const std::string& text) {
                if (!text.empty() && text[0] == kLaneRecord) {
                    write_lane_slice(text);
                    return;
                }
                begin_event();
                out(text);
            });
            out("\n],\n\"displayTimeUnit\":\"ns\"}\n");
            flush_out();
            if (gz_ != nullptr) {
                gzFile gz = gz_;
                gz_ = nullptr;
                if (gzclose(gz) != Z_OK)
                    throw std::runtime_error("cannot write trace file '" + json_path_ + "' (gzip close failed)");
            } else {
                json_.close();
            }
            json_open_ = false;
        }
        // Processes run ahead of each other (temporal decoupling), so lines
        // arrive slightly out of time order: they come out sorted.
        if (log_.is_open()) {
            log_spool_.drain([this](const std::string& line) { log_ << line; });
            log_.close();
            log_open_ = false;
        }
    } catch (...) {
        events_spool_.discard();   // no run file left behind after a failed merge
        log_spool_.discard();
        if (gz_ != nullptr) gzclose(gz_);
        gz_ = nullptr;
        json_open_ = false;
        out_buf_.clear();
        first_ = true;
        throw;
    }
    events_spool_.discard();
    log_spool_.discard();
    lanes_.clear();
    first_ = true;
}

void Tracer::write_lane_slice(const std::string& record) {
    std::int32_t pid = 0, tid = 0;
    sc_dt::uint64 start = 0, end = 0;
    std::memcpy(&pid, record.data() + 1, sizeof pid);
    std::memcpy(&tid, record.data() + 1 + sizeof pid, sizeof tid);
    std::memcpy(&start, record.data() + 1 + 2 * sizeof pid, sizeof start);
    std::memcpy(&end, record.data() + 1 + 2 * sizeof pid + sizeof start, sizeof end);
    // The spool hands records out in start order (whatever order the spans
    // were recorded in). Each lane holds the end of its last slice; the
    // lowest lane free at this start takes the slice (greedy interval
    // partitioning: as few lanes as spans ever overlap). Lane 0, the track
    // itself, only when no other slice is drawn there (those would have to
    // nest with the spans).
    Lanes& lanes = lanes_[{pid, tid}];
    const auto g = static_cast<std::size_t>(pid - 1);
    if (lanes.ends.empty()) {
        const bool sliced = g < track_sliced_.size() && static_cast<std::size_t>(tid - 1) < track_sliced_[g].size() &&
                            track_sliced_[g][static_cast<std::size_t>(tid - 1)];
        lanes.ends.push_back(sliced ? ~sc_dt::uint64{0} : 0);
    }
    std::size_t lane = 0;
    while (lane < lanes.ends.size() && lanes.ends[lane] > start) ++lane;
    if (lane == lanes.ends.size()) {
        lanes.ends.push_back(0);
        const int lane_tid = next_tid_[g]++;
        lanes.tids.push_back(lane_tid);
        // Named just before its first slice: metadata may come anywhere in
        // the file, and the lanes are known only now.
        write_thread_meta(Track{pid, lane_tid},
                          track_names_[g][static_cast<std::size_t>(tid - 1)] + " lane " + std::to_string(lane + 1),
                          tid * kLaneSort + static_cast<int>(std::min<std::size_t>(lane, kLaneSort - 1)));
    }
    lanes.ends[lane] = std::max(end, start);
    const int out_tid = lane == 0 ? tid : lanes.tids[lane - 1];
    begin_event();
    out("{\"ph\":\"X\",\"pid\":" + std::to_string(pid) + ",\"tid\":" + std::to_string(out_tid));
    out(record.substr(kLaneHeader));
}

Tracer::Track Tracer::track(const std::string& group, const std::string& name) {
    bool new_group = false;
    auto g = groups_.find(group);
    if (g == groups_.end()) {
        g = groups_.emplace(group, static_cast<int>(groups_.size()) + 1).first;
        track_names_.emplace_back();
        new_group = true;
    }
    Track t;
    t.pid = g->second;
    std::vector<std::string>& names = track_names_[static_cast<std::size_t>(t.pid - 1)];
    for (std::size_t k = 0; k < names.size(); ++k)
        if (names[k] == name) return Track{t.pid, static_cast<int>(k) + 1};
    names.push_back(name);
    t.tid = static_cast<int>(names.size());
    if (enabled()) {
        if (new_group) write_process_meta(t.pid, group);
        write_thread_meta(t, name, t.tid * kLaneSort);
    }
    return t;
}

void Tracer::mark_sliced(Track t) {
    const auto g = static_cast<std::size_t>(t.pid - 1);
    const auto k = static_cast<std::size_t>(t.tid - 1);
    if (g < track_sliced_.size() && k < track_sliced_[g].size() && track_sliced_[g][k]) return;
    if (track_sliced_.size() <= g) track_sliced_.resize(g + 1);
    if (track_sliced_[g].size() <= k) track_sliced_[g].resize(k + 1, 0);
    track_sliced_[g][k] = 1;
}

bool Tracer::keep_track(Track t) {
    const auto g = static_cast<std::size_t>(t.pid - 1);
    const auto k = static_cast<std::size_t>(t.tid - 1);
    if (g < track_kept_.size() && k < track_kept_[g].size() && track_kept_[g][k] != 0) return track_kept_[g][k] == 1;
    return keep_track_slow(t);
}

bool Tracer::keep_track_slow(Track t) {
    const auto g = static_cast<std::size_t>(t.pid - 1);
    const auto k = static_cast<std::size_t>(t.tid - 1);
    if (t.pid <= 0 || t.tid <= 0 || g >= track_names_.size() || k >= track_names_[g].size()) return false;
    if (track_kept_.size() < track_names_.size()) track_kept_.resize(track_names_.size());
    if (track_kept_[g].size() < track_names_[g].size()) track_kept_[g].resize(track_names_[g].size(), 0);
    bool keep = true;
    if (!trace_filter_.empty()) {
        std::string group;
        for (const auto& [name, pid] : groups_)
            if (pid == t.pid) group = name;
        keep = trace_filter_.keep(group + "." + track_names_[g][k], groups_);
    }
    track_kept_[g][k] = keep ? 1 : 2;
    return keep;
}

void Tracer::write_event_head(char ph, Track t, const char* name, sc_core::sc_time ts) {
    ev_.clear();
    ev_ts_ = ts.value();
    ev_ += "{\"ph\":\"";
    ev_ += ph;
    ev_ += "\",\"pid\":" + std::to_string(t.pid) + ",\"tid\":" + std::to_string(t.tid) +
           ",\"name\":" + json_string(name ? name : "") + ",\"ts\":" + us_trimmed(ts);
}

void Tracer::write_args(const std::vector<std::pair<std::string, std::string>>& args) {
    if (args.empty()) return;
    ev_ += ",\"args\":{";
    bool first = true;
    for (const auto& [k, v] : args) {
        if (!first) ev_ += ',';
        first = false;
        ev_ += json_string(k) + ':' + v;
    }
    ev_ += '}';
}

void Tracer::grew(std::uint64_t& bytes, std::uint64_t& warn_at, std::size_t more, const char* file) {
    bytes += more;
    if (warn_at == 0 || bytes < warn_at) return;
    while (warn_at <= bytes) warn_at *= 4;
    if (size_warn_) size_warn_(file, bytes);
}

void Tracer::end_event() {
    ev_ += '}';
    grew(json_bytes_, json_warn_at_, ev_.size() + 2, "trace");   // and its ",\n"
    events_spool_.add(ev_ts_, ev_);
}

void Tracer::span(Track t, const char* name, sc_core::sc_time start, sc_core::sc_time end,
                  const std::vector<std::pair<std::string, std::string>>& args) {
    if (!enabled()) return;
    const sc_core::sc_time dur = end > start ? end - start : sc_core::SC_ZERO_TIME;
    if (!in_window(start.value(), (start + dur).value()) || !keep_track(t)) return;
    mark_sliced(t);
    write_event_head('X', t, name, start);
    ev_ += ",\"dur\":" + dur_text(start, dur);
    write_args(args);
    end_event();
    ++events_;
}

void Tracer::async_span(Track t, const char* name, std::uint64_t id, sc_core::sc_time start, sc_core::sc_time end,
                        const std::vector<std::pair<std::string, std::string>>& args) {
    if (!enabled()) return;
    const sc_core::sc_time dur = end > start ? end - start : sc_core::SC_ZERO_TIME;
    if (!in_window(start.value(), (start + dur).value()) || !keep_track(t)) return;
    // The record: its base track and end, then the event from its name on
    // (write_lane_slice puts the head with the lane's tid before it).
    ev_.assign(kLaneHeader, kLaneRecord);
    const std::int32_t pid = t.pid, tid = t.tid;
    const sc_dt::uint64 start_value = start.value(), end_value = (start + dur).value();
    std::memcpy(&ev_[1], &pid, sizeof pid);
    std::memcpy(&ev_[1 + sizeof pid], &tid, sizeof tid);
    std::memcpy(&ev_[1 + 2 * sizeof pid], &start_value, sizeof start_value);
    std::memcpy(&ev_[1 + 2 * sizeof pid + sizeof start_value], &end_value, sizeof end_value);
    ev_ts_ = start.value();
    ev_ += ",\"name\":" + json_string(name ? name : "") + ",\"ts\":" + us_trimmed(start) +
           ",\"dur\":" + dur_text(start, dur) + ",\"cat\":\"async\"";
    write_args(args);
    end_event();
    ++events_;
}

void Tracer::instant(Track t, const char* name, sc_core::sc_time at,
                     const std::vector<std::pair<std::string, std::string>>& args) {
    if (!enabled() || !in_window(at.value(), at.value()) || !keep_track(t)) return;
    write_event_head('i', t, name, at);
    ev_ += ",\"s\":\"t\"";
    write_args(args);
    end_event();
    ++events_;
}

void Tracer::narrate(sc_core::sc_time at, const std::string& who, const std::string& text) {
    if (!narrating() || !in_window(at.value(), at.value()) || !keep_line(who)) return;
    char buf[48];
    std::snprintf(buf, sizeof buf, "%12s us  ", us_fixed6(at).c_str());
    std::string line = buf + who + "  " + text + "\n";
    grew(log_bytes_, log_warn_at_, line.size(), "log");
    log_spool_.add(at.value(), std::move(line));
}

Tracer::Cause Tracer::note(Track t, const char* name, sc_core::sc_time at, sc_core::sc_time dur, const std::string& who,
                           const std::string& text, const Cause& given,
                           const std::vector<std::pair<std::string, std::string>>& args) {
    if (!noting()) return {};
    const Cause because = given ? given : current();
    // A step without a slice (Track{}) is a line of the log only; arrows
    // from it start at the slice of the nearest step before it that has one.
    const bool sliced = t.pid != 0;
    const Cause me{next_cause_++, sliced ? t : because.track, sliced ? at : because.at};
    if (story_cap_ > 0) {
        if (story_.size() < story_cap_)
            story_.push_back(StoryStep{me.id, because.id, at, dur, who, name ? name : "", text});
        else ++story_dropped_;
    }
    if (enabled() && sliced && in_window(at.value(), (at + dur).value()) && keep_track(t)) {
        mark_sliced(t);
        write_event_head('X', t, name, at);
        // The slice has the flows' cat: the DevTools Performance panel binds
        // a flow event only to a slice of its thread that starts at the same
        // ts with the same cat (chrome://tracing and Perfetto bind to the
        // enclosing slice, whatever its cat).
        ev_ += ",\"cat\":\"cause\",\"dur\":" + dur_text(at, dur);
        auto all = args;
        all.emplace_back("event", json_string("#" + std::to_string(me.id)));
        if (because) all.emplace_back("after", json_string("#" + std::to_string(because.id)));
        write_args(all);
        end_event();
        ++events_;
        // An arrow only between slices that are both in the file: the
        // cause's starts at because.at (window and filter permitting).
        if (because && because.track.pid != 0 && in_window(at.value(), at.value()) &&
            in_window(because.at.value(), because.at.value()) && keep_track(because.track))
            flow(because, t, at);
    }
    narrate(at, who,
            "#" + std::to_string(me.id) + " " + text +
                (because ? " (after #" + std::to_string(because.id) + ")" : std::string()));
    return me;
}

Tracer::Cause Tracer::note(Track t, const char* name, sc_core::sc_time at, sc_core::sc_time dur, const std::string& who,
                           const std::string& text) {
    return note(t, name, at, dur, who, text, Cause{});
}

namespace {
const void* current_process() {
    // Outside any process (elaboration, sc_main) the handle is invalid: one key for all.
    sc_core::sc_process_handle h = sc_core::sc_get_current_process_handle();
    return h.valid() ? static_cast<const void*>(h.get_process_object()) : nullptr;
}
}   // namespace

void Tracer::Scope::open(const Cause& c) {
    process_ = current_process();
    auto it = tr_.scopes_.find(process_);
    had_ = it != tr_.scopes_.end();
    if (had_) saved_ = it->second;
    tr_.scopes_[process_] = c;
}

void Tracer::Scope::close() {
    if (had_) tr_.scopes_[process_] = saved_;
    else tr_.scopes_.erase(process_);
}

Tracer::Cause Tracer::current() const {
    if (scopes_.empty()) return {};
    auto it = scopes_.find(current_process());
    return it == scopes_.end() ? Cause{} : it->second;
}

void Tracer::flow(const Cause& from, Track to, sc_core::sc_time at) {
    // Trace-event flow: "s" inside the cause's slice, "f" bound to the
    // enclosing slice of the effect ("bp":"e"); paired by cat and id.
    // One arrow per effect: a cause with several effects starts several.
    const std::string id = std::to_string(next_flow_++);
    write_event_head('s', from.track, "cause", from.at);
    ev_ += ",\"cat\":\"cause\",\"id\":" + id;
    end_event();
    write_event_head('f', to, "cause", at);
    ev_ += ",\"cat\":\"cause\",\"bp\":\"e\",\"id\":" + id;
    end_event();
}

void NameFilter::set(std::vector<std::string> terms) {
    terms_ = std::move(terms);
    split_ = false;
    hits_.clear();
    for (const auto& t : terms_) hits_[t] = 0;
}

std::vector<std::string> NameFilter::unmatched() const {
    std::vector<std::string> out;
    for (const auto& t : terms_)
        if (hits_.at(t) == 0) out.push_back(t);
    return out;
}

bool NameFilter::keep(const std::string& name, const std::map<std::string, int>& groups) {
    if (terms_.empty()) return true;
    if (!split_) {   // groups are known once the models built their tracks
        group_terms_.clear();
        model_terms_.clear();
        for (const auto& t : terms_) (groups.count(t) ? group_terms_ : model_terms_).push_back(t);
        split_ = true;
    }
    auto component_matches = [&name](const std::string& term, bool model) {
        std::size_t b = 0;
        while (b <= name.size()) {
            std::size_t e = name.find('.', b);
            if (e == std::string::npos) e = name.size();
            const std::string c = name.substr(b, e - b);
            if (c == term) return true;
            if (c.size() > term.size() && c.compare(0, term.size(), term) == 0) {
                const char next = c[term.size()];
                if (next == '_' || next == '-' || next == ' ') return true;
                // A model term names its numbered instances: cpu -> cpu0, cpu1.
                if (model && c.find_first_not_of("0123456789", term.size()) == std::string::npos) return true;
            }
            b = e + 1;
        }
        return false;
    };
    auto any = [&](const std::vector<std::string>& terms, bool model) {
        if (terms.empty()) return true;
        bool hit = false;
        for (const auto& t : terms)
            if (component_matches(t, model)) {
                ++hits_[t];
                hit = true;
            }
        return hit;
    };
    const bool group_ok = any(group_terms_, false);
    const bool model_ok = any(model_terms_, true);
    return group_ok && model_ok;
}

void Tracer::set_log_filter(std::vector<std::string> terms) { log_filter_.set(std::move(terms)); }

void Tracer::set_trace_filter(std::vector<std::string> terms) {
    trace_filter_.set(std::move(terms));
    track_kept_.clear();
}

bool Tracer::keep_line(const std::string& who) { return log_filter_.keep(who, groups_); }

}   // namespace vrdmasim
