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
// the file is written.
constexpr char kLaneRecord = '\x01';
constexpr std::size_t kLaneHeader = 1 + sizeof(std::int32_t) * 2 + sizeof(sc_dt::uint64) * 2;
// Every other record of the events' spool starts with its kind:
// kEvent: ph, pid, tid, then the JSON from `,"name"` on (its closing '}'
// included); kNote: pid, tid, the step's raw id and its cause's (0: none),
// then the JSON from `,"name"` to the args' object open (the model's args
// and a comma if any): the numbers are written with the file; kFlow: ph,
// the track it is drawn on and the other end's (an arrow is written only
// when both ends' tracks are), its raw id, then the JSON from `,"name"` on
// without `,"id"` and the closing '}'. Tracks may be portable (another
// rank's, resolved when written).
constexpr char kEvent = 'E';
constexpr char kNote = 'N';
constexpr char kFlow = 'F';
constexpr std::size_t kEventHeader = 2 + sizeof(std::int32_t) * 2;
constexpr std::size_t kNoteHeader = 1 + sizeof(std::int32_t) * 2 + sizeof(std::uint64_t) * 2;
constexpr std::size_t kFlowHeader = 2 + sizeof(std::int32_t) * 4 + sizeof(std::uint64_t);
// A log line in its spool: the step's raw id and its cause's, the length of
// the line's head (time and who), the head, then the text.
constexpr std::size_t kLineHeader = sizeof(std::uint64_t) * 2 + sizeof(std::uint32_t);

// Raw ids: the rank in the bits above these.
constexpr int kRankShift = 40;
constexpr std::uint64_t kIdMask = (std::uint64_t(1) << kRankShift) - 1;
// Portable tracks: pid = -(rank << kPortableShift | pid).
constexpr int kPortableShift = 20;

template <typename T>
void put_at(std::string& s, std::size_t at, T v) {
    std::memcpy(&s[at], &v, sizeof v);
}
template <typename T>
T get_at(const std::string& s, std::size_t at) {
    T v;
    std::memcpy(&v, s.data() + at, sizeof v);
    return v;
}

// FNV-1a of the calling SystemC process's name (`outside` outside any process).
std::uint64_t process_hash(const std::string& outside) {
    const char* name = Tracer::acting();
    if (!name) {
        sc_core::sc_process_handle h = sc_core::sc_get_current_process_handle();
        name = h.valid() ? h.name() : outside.c_str();
    }
    std::uint64_t x = 1469598103934665603ull;
    for (const char* c = name; *c; ++c) {
        x ^= static_cast<unsigned char>(*c);
        x *= 1099511628211ull;
    }
    return x;
}

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
            write_failed("cannot write trace file '" + json_path_ +
                         "': " + (err == Z_ERRNO ? std::strerror(errno) : what));
        }
    } else {
        json_.write(out_buf_.data(), static_cast<std::streamsize>(out_buf_.size()));
        if (!json_) write_failed("cannot write trace file '" + json_path_ + "': " + std::strerror(errno));
    }
    out_buf_.clear();
}

void Tracer::write_failed(const std::string& what) {
    if (write_error_.empty()) write_error_ = what;
    throw std::runtime_error(what);
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
    log_path_ = log_path;
    write_error_.clear();
    start_recording(json_path, log_path, json_path.empty() ? log_path : json_path);
}

void Tracer::record_only(bool trace, bool log, const std::string& spill_prefix) {
    close();
    json_open_ = trace;
    log_open_ = log;
    recording_ = trace || log;
    start_recording(spill_prefix + ".trace", spill_prefix + ".log", spill_prefix);
}

void Tracer::start_recording(const std::string& events_prefix, const std::string& log_prefix,
                             const std::string& ids_prefix) {
    first_ = true;
    out_buf_.clear();
    json_bytes_ = log_bytes_ = 0;
    events_spool_.discard();
    log_spool_.discard();
    ids_spool_.discard();
    events_spool_.set_prefix(events_prefix);
    log_spool_.set_prefix(log_prefix);
    ids_spool_.set_prefix(ids_prefix + ".ids");
    track_kept_.clear();
    track_sliced_.clear();
    lanes_.clear();
    next_tid_.clear();
    numbers_.clear();
    numbered_ = false;
}

void Tracer::set_rank(unsigned rank) { rank_ = rank; }

void Tracer::set_group_order(const std::vector<std::string>& groups) { group_order_ = groups; }

Tracer::Track Tracer::portable(unsigned rank, Track t) {
    if (t.pid <= 0) return t;
    return Track{-static_cast<int>((rank << kPortableShift) | static_cast<unsigned>(t.pid)), t.tid};
}

Tracer::Track Tracer::resolve(Track t) const {
    if (t.pid >= 0) return t;
    const auto v = static_cast<unsigned>(-t.pid);
    const unsigned from = v >> kPortableShift;
    const auto pid = static_cast<int>(v & ((1u << kPortableShift) - 1));
    if (from == rank_) return Track{pid, t.tid};
    const auto g = static_cast<std::size_t>(pid - 1), k = static_cast<std::size_t>(t.tid - 1);
    if (from < foreign_.size() && pid > 0 && g < foreign_[from].size() && t.tid > 0 && k < foreign_[from][g].size())
        return foreign_[from][g][k];
    return Track{};
}

std::uint64_t Tracer::number_of(std::uint64_t id) const {
    const auto from = static_cast<std::size_t>(id >> kRankShift);
    const std::uint64_t n = id & kIdMask;
    if (!numbered_) return id;
    if (n == 0 || from >= numbers_.size() || n > numbers_[from].size()) return 0;
    return numbers_[from][n - 1];
}

std::string Tracer::number_text(std::uint64_t id) const { return "#" + std::to_string(number_of(id)); }

void Tracer::number_steps() {
    // Every noted step, filtered or not, in the canonical order: its number
    // is its place there (ids do not change with --log-filter or the window).
    numbers_.assign(std::max<std::size_t>(rank_steps_.size(), rank_ + 1), {});
    for (std::size_t r = 0; r < rank_steps_.size(); ++r) numbers_[r].assign(rank_steps_[r], 0);
    numbers_[rank_].assign(next_cause_ - 1, 0);
    std::uint64_t n = 0;
    ids_spool_.drain([&](const std::string& rec) {
        const auto id = get_at<std::uint64_t>(rec, 0);
        const auto from = static_cast<std::size_t>(id >> kRankShift);
        const std::uint64_t k = id & kIdMask;
        if (from < numbers_.size() && k >= 1 && k <= numbers_[from].size()) numbers_[from][k - 1] = ++n;
    });
    numbered_ = true;
    for (StoryStep& step : story_) {
        step.id = number_of(step.id);
        step.after = step.after ? number_of(step.after) : 0;
    }
}

void Tracer::write_all_meta() {
    // pids: the groups in the order set_group_order gave, then the others by
    // name; tids: a group's tracks in creation order (one rank makes them
    // all, in the order one process does).
    std::vector<std::pair<std::pair<std::size_t, std::string>, int>> order;
    std::map<std::string, std::size_t> given;
    for (std::size_t k = 0; k < group_order_.size(); ++k) given.emplace(group_order_[k], k);
    for (const auto& [name, pid] : groups_) {
        const auto it = given.find(name);
        order.push_back({{it == given.end() ? group_order_.size() : it->second, name}, pid});
    }
    std::sort(order.begin(), order.end());
    canon_pid_.assign(track_names_.size(), 0);
    for (std::size_t k = 0; k < order.size(); ++k)
        canon_pid_[static_cast<std::size_t>(order[k].second - 1)] = int(k) + 1;
    for (const auto& [key, pid] : order) {
        const auto g = static_cast<std::size_t>(pid - 1);
        const int out_pid = canon_pid_[g];
        write_process_meta(out_pid, key.second);
        for (std::size_t k = 0; k < track_names_[g].size(); ++k) {
            const int tid = static_cast<int>(k) + 1;
            write_thread_meta(Track{out_pid, tid}, track_names_[g][k], tid * kLaneSort);
        }
    }
}

void Tracer::write_record(const std::string& rec) {
    const auto out_pid = [this](int pid) { return std::to_string(canon_pid_[static_cast<std::size_t>(pid - 1)]); };
    switch (rec[0]) {
    case kLaneRecord: write_lane_slice(rec); return;
    case kEvent: {
        const auto pid = get_at<std::int32_t>(rec, 2), tid = get_at<std::int32_t>(rec, 6);
        begin_event();
        out(std::string("{\"ph\":\"") + rec[1] + "\",\"pid\":" + out_pid(pid) + ",\"tid\":" + std::to_string(tid));
        out(rec.substr(kEventHeader));
        return;
    }
    case kNote: {
        const auto pid = get_at<std::int32_t>(rec, 1), tid = get_at<std::int32_t>(rec, 5);
        const auto me = get_at<std::uint64_t>(rec, 9), because = get_at<std::uint64_t>(rec, 17);
        begin_event();
        out("{\"ph\":\"X\",\"pid\":" + out_pid(pid) + ",\"tid\":" + std::to_string(tid));
        out(rec.substr(kNoteHeader));
        out("\"event\":\"" + number_text(me) + "\"" +
            (because ? ",\"after\":\"" + number_text(because) + "\"" : std::string()) + "}}");
        return;
    }
    case kFlow: {
        const Track drawn = resolve(Track{get_at<std::int32_t>(rec, 2), get_at<std::int32_t>(rec, 6)});
        const Track other = resolve(Track{get_at<std::int32_t>(rec, 10), get_at<std::int32_t>(rec, 14)});
        // An arrow only between slices that are both in the file.
        if (drawn.pid <= 0 || other.pid <= 0 || !keep_track(drawn) || !keep_track(other)) return;
        const auto raw = get_at<std::uint64_t>(rec, 18);
        std::uint64_t id = 0;
        const auto it = flow_numbers_.find(raw);
        if (it == flow_numbers_.end()) {
            id = ++flows_written_;
            flow_numbers_.emplace(raw, id);
        } else {
            id = it->second;
            flow_numbers_.erase(it);
        }
        begin_event();
        out(std::string("{\"ph\":\"") + rec[1] + "\",\"pid\":" + out_pid(drawn.pid) +
            ",\"tid\":" + std::to_string(drawn.tid));
        out(rec.substr(kFlowHeader));
        out(",\"id\":" + std::to_string(id) + "}");
        return;
    }
    default: throw std::logic_error("a trace record of unknown kind");
    }
}

void Tracer::close() {
    const bool had = json_open_ || log_open_;
    if (recording_) {   // a rank that hands its records over: nothing to write
        events_spool_.discard();
        log_spool_.discard();
        ids_spool_.discard();
        json_open_ = log_open_ = recording_ = false;
        return;
    }
    try {
        if (had) number_steps();
        if (json_open_) {
            out("{\"traceEvents\":[\n");
            write_all_meta();
            // Lanes get tids after every track's (tracks may be made while
            // the run simulates, the lanes only now).
            next_tid_.assign(track_names_.size(), 0);
            for (std::size_t g = 0; g < track_names_.size(); ++g)
                next_tid_[g] = static_cast<int>(track_names_[g].size()) + 1;
            flow_numbers_.clear();
            flows_written_ = 0;
            events_spool_.drain([this](const std::string& rec) { write_record(rec); });
            out("\n],\n\"displayTimeUnit\":\"ns\"}\n");
            flush_out();
            if (gz_ != nullptr) {
                gzFile gz = gz_;
                gz_ = nullptr;
                if (gzclose(gz) != Z_OK)
                    write_failed("cannot write trace file '" + json_path_ + "' (gzip close failed)");
            } else {
                json_.close();
            }
            json_open_ = false;
        }
        // Processes run ahead of each other (temporal decoupling), so lines
        // arrive slightly out of time order: they come out sorted.
        if (log_.is_open()) {
            log_spool_.drain([this](const std::string& rec) {
                const auto me = get_at<std::uint64_t>(rec, 0), because = get_at<std::uint64_t>(rec, 8);
                const auto head = get_at<std::uint32_t>(rec, 16);
                log_ << rec.substr(kLineHeader, head) << number_text(me) << ' ' << rec.substr(kLineHeader + head)
                     << (because ? " (after " + number_text(because) + ")" : std::string()) << '\n';
            });
            log_.flush();
            if (!log_) write_failed("cannot write event log '" + log_path_ + "': " + std::strerror(errno));
            log_.close();
        }
        log_open_ = false;
    } catch (...) {
        events_spool_.discard();   // no run file left behind after a failed merge
        log_spool_.discard();
        ids_spool_.discard();
        if (gz_ != nullptr) gzclose(gz_);
        gz_ = nullptr;
        json_open_ = log_open_ = false;
        out_buf_.clear();
        first_ = true;
        throw;
    }
    events_spool_.discard();
    log_spool_.discard();
    ids_spool_.discard();
    lanes_.clear();
    flow_numbers_.clear();
    first_ = true;
}

Bytes Tracer::export_tables() const {
    Bytes out;
    ByteWriter w(out);
    std::vector<const std::string*> group_of(track_names_.size());
    for (const auto& [name, pid] : groups_) group_of[static_cast<std::size_t>(pid - 1)] = &name;
    auto put_string = [&w](const std::string& s) {
        w.put_bytes(reinterpret_cast<const unsigned char*>(s.data()), s.size());
    };
    w.put(static_cast<std::uint64_t>(track_names_.size()));
    for (std::size_t g = 0; g < track_names_.size(); ++g) {
        put_string(*group_of[g]);
        w.put(static_cast<std::uint64_t>(track_names_[g].size()));
        for (std::size_t k = 0; k < track_names_[g].size(); ++k) {
            put_string(track_names_[g][k]);
            const bool sliced = g < track_sliced_.size() && k < track_sliced_[g].size() && track_sliced_[g][k];
            w.put(static_cast<std::uint8_t>(sliced));
        }
    }
    w.put(static_cast<std::uint64_t>(next_cause_ - 1));
    for (const NameFilter* f : {&log_filter_, &trace_filter_}) {
        const std::vector<std::string> unmatched = f->unmatched();
        w.put(static_cast<std::uint64_t>(unmatched.size()));
        for (const auto& t : unmatched) put_string(t);
    }
    return out;
}

void Tracer::import_tables(unsigned from, const Bytes& tables) {
    ByteReader r(tables);
    auto get_string = [&r] {
        std::string s;
        r.get_bytes(s);
        return s;
    };
    if (foreign_.size() <= from) foreign_.resize(from + 1);
    if (rank_steps_.size() <= from) rank_steps_.resize(from + 1, 0);
    auto& map = foreign_[from];
    map.assign(static_cast<std::size_t>(r.get<std::uint64_t>()), {});
    for (auto& tracks : map) {
        const std::string group = get_string();
        tracks.resize(static_cast<std::size_t>(r.get<std::uint64_t>()));
        for (Track& t : tracks) {
            t = track(group, get_string());
            if (r.get<std::uint8_t>()) mark_sliced(t);
        }
    }
    rank_steps_[from] = r.get<std::uint64_t>();
    // A term matched if it matched on any rank: those the other rank matched count here.
    for (NameFilter* f : {&log_filter_, &trace_filter_}) {
        std::vector<std::string> unmatched(static_cast<std::size_t>(r.get<std::uint64_t>()));
        for (auto& t : unmatched) t = get_string();
        for (const auto& t : f->unmatched())
            if (std::find(unmatched.begin(), unmatched.end(), t) == unmatched.end()) f->matched(t);
    }
}

void Tracer::export_records(
    const std::function<void(std::uint8_t, std::uint64_t, const TimeSortedSpool::Tie&, const std::string&)>& emit) {
    events_spool_.take_all(
        [&](std::uint64_t ts, const TimeSortedSpool::Tie& tie, const std::string& rec) { emit(0, ts, tie, rec); });
    log_spool_.take_all(
        [&](std::uint64_t ts, const TimeSortedSpool::Tie& tie, const std::string& rec) { emit(1, ts, tie, rec); });
    ids_spool_.take_all(
        [&](std::uint64_t ts, const TimeSortedSpool::Tie& tie, const std::string& rec) { emit(2, ts, tie, rec); });
}

void Tracer::import_record(unsigned from, std::uint8_t stream, std::uint64_t ts, const TimeSortedSpool::Tie& tie,
                           std::string rec) {
    if (stream == 1) {
        spool_add(log_spool_, ts, tie, std::move(rec));
        return;
    }
    if (stream == 2) {
        spool_add(ids_spool_, ts, tie, std::move(rec));
        return;
    }
    // The sending rank's tracks as this tracer's (portable ones stay: resolved when written).
    const auto local = [&](std::size_t at) {
        const auto pid = get_at<std::int32_t>(rec, at), tid = get_at<std::int32_t>(rec, at + 4);
        if (pid <= 0) return;
        const auto g = static_cast<std::size_t>(pid - 1), k = static_cast<std::size_t>(tid - 1);
        if (from >= foreign_.size() || g >= foreign_[from].size() || tid <= 0 || k >= foreign_[from][g].size())
            throw std::logic_error("a trace record of rank " + std::to_string(from) + " on a track it did not make");
        const Track t = foreign_[from][g][k];
        put_at<std::int32_t>(rec, at, t.pid);
        put_at<std::int32_t>(rec, at + 4, t.tid);
    };
    switch (rec.at(0)) {
    case kLaneRecord:
    case kNote:
        local(1);
        ++events_;
        break;
    case kEvent:
        local(2);
        ++events_;
        break;
    case kFlow:
        local(2);
        local(10);
        break;
    default: throw std::logic_error("a trace record of unknown kind from rank " + std::to_string(from));
    }
    spool_add(events_spool_, ts, tie, std::move(rec));
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
    const int out_pid = canon_pid_[g];
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
        write_thread_meta(Track{out_pid, lane_tid},
                          track_names_[g][static_cast<std::size_t>(tid - 1)] + " lane " + std::to_string(lane + 1),
                          tid * kLaneSort + static_cast<int>(std::min<std::size_t>(lane, kLaneSort - 1)));
    }
    lanes.ends[lane] = std::max(end, start);
    const int out_tid = lane == 0 ? tid : lanes.tids[lane - 1];
    begin_event();
    out("{\"ph\":\"X\",\"pid\":" + std::to_string(out_pid) + ",\"tid\":" + std::to_string(out_tid));
    out(record.substr(kLaneHeader));
}

Tracer::Track Tracer::track(const std::string& group, const std::string& name) {
    auto g = groups_.find(group);
    if (g == groups_.end()) {
        g = groups_.emplace(group, static_cast<int>(groups_.size()) + 1).first;
        track_names_.emplace_back();
    }
    Track t;
    t.pid = g->second;
    std::vector<std::string>& names = track_names_[static_cast<std::size_t>(t.pid - 1)];
    for (std::size_t k = 0; k < names.size(); ++k)
        if (names[k] == name) return Track{t.pid, static_cast<int>(k) + 1};
    names.push_back(name);
    t.tid = static_cast<int>(names.size());
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
        keep = trace_filter_.keep(group + "." + track_names_[g][k], groups_, &group_order_);
    }
    track_kept_[g][k] = keep ? 1 : 2;
    return keep;
}

TimeSortedSpool::Tie Tracer::tie(std::uint32_t depth) {
    const std::uint64_t process = process_hash(outside_process_);
    return TimeSortedSpool::Tie{depth, process, process_records_[process]++};
}

void Tracer::write_event_head(char ph, Track t, const char* name, sc_core::sc_time ts) {
    ev_.assign(kEventHeader, kEvent);
    ev_[1] = ph;
    put_at<std::int32_t>(ev_, 2, t.pid);
    put_at<std::int32_t>(ev_, 6, t.tid);
    ev_ts_ = ts.value();
    ev_ += ",\"name\":" + json_string(name ? name : "") + ",\"ts\":" + us_trimmed(ts);
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

void Tracer::end_event(std::uint32_t depth, bool close) {
    if (close) ev_ += '}';
    // The event's size in the file: its head `{"ph":"X","pid":P,"tid":T`
    // and ",\n" written then in place of the record's binary head, and a
    // step's numbers or an arrow's id (as many digits as the raw ones here).
    const auto digits = [](std::uint64_t v) { return std::to_string(v).size(); };
    const auto head = [&](std::size_t at) {
        return 23 + digits(static_cast<std::uint32_t>(get_at<std::int32_t>(ev_, at))) +
               digits(static_cast<std::uint32_t>(get_at<std::int32_t>(ev_, at + 4))) + 2;
    };
    std::size_t bytes = ev_.size();
    switch (ev_[0]) {
    case kEvent: bytes += head(2) - kEventHeader; break;
    case kLaneRecord: bytes += head(1) - kLaneHeader; break;
    case kNote: {
        const auto me = get_at<std::uint64_t>(ev_, 9) & kIdMask, because = get_at<std::uint64_t>(ev_, 17) & kIdMask;
        bytes += head(1) - kNoteHeader + 12 + digits(me) + (because ? 12 + digits(because) : 0) + 2;
        break;
    }
    default:   // kFlow
        bytes += head(2) - kFlowHeader + 7 + digits(get_at<std::uint64_t>(ev_, 18) & kIdMask);
        break;
    }
    grew(json_bytes_, json_warn_at_, bytes, "trace");
    spool_add(events_spool_, ev_ts_, tie(depth), ev_);
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
    (void)id;
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

void Tracer::narrate(sc_core::sc_time at, const std::string& who, const std::string& text, std::uint64_t me,
                     std::uint64_t because, std::uint32_t depth) {
    if (!narrating() || !in_window(at.value(), at.value()) || !keep_line(who)) return;
    char buf[48];
    std::snprintf(buf, sizeof buf, "%12s us  ", us_fixed6(at).c_str());
    const std::string head = buf + who + "  ";
    std::string rec(kLineHeader, '\0');
    put_at<std::uint64_t>(rec, 0, me);
    put_at<std::uint64_t>(rec, 8, because);
    put_at<std::uint32_t>(rec, 16, static_cast<std::uint32_t>(head.size()));
    rec += head;
    rec += text;
    // About the line's size (its number and cause written then).
    grew(log_bytes_, log_warn_at_, head.size() + text.size() + (because ? 18 : 6), "log");
    spool_add(log_spool_, at.value(), tie(depth), std::move(rec));
}

Tracer::Cause Tracer::note(Track t, const char* name, sc_core::sc_time at, sc_core::sc_time dur, const std::string& who,
                           const std::string& text, const Cause& given,
                           const std::vector<std::pair<std::string, std::string>>& args) {
    if (!noting()) return {};
    const Cause because = given ? given : current();
    // A step without a slice (Track{}) is a line of the log only; arrows
    // from it start at the slice of the nearest step before it that has one.
    const bool sliced = t.pid != 0;
    // Its place among the steps of its time: after its cause when that is
    // of the same time (docs/trace.md "Order and numbering").
    const std::uint32_t depth = because && because.noted == at ? because.depth + 1 : 0;
    const Cause me{(static_cast<std::uint64_t>(rank_) << kRankShift) | next_cause_++, sliced ? t : because.track,
                   sliced ? at : because.at, at, depth};
    if (story_cap_ > 0) {
        if (story_.size() < story_cap_)
            story_.push_back(StoryStep{me.id, because.id, at, dur, who, name ? name : "", text});
        else ++story_dropped_;
    }
    if (enabled() || narrating()) {
        // Every step has its place in the numbering, written or not.
        std::string rec(sizeof me.id, '\0');
        put_at<std::uint64_t>(rec, 0, me.id);
        spool_add(ids_spool_, at.value(), tie(depth), std::move(rec));
    }
    if (enabled() && sliced && in_window(at.value(), (at + dur).value()) && keep_track(t)) {
        mark_sliced(t);
        ev_.assign(kNoteHeader, kNote);
        put_at<std::int32_t>(ev_, 1, t.pid);
        put_at<std::int32_t>(ev_, 5, t.tid);
        put_at<std::uint64_t>(ev_, 9, me.id);
        put_at<std::uint64_t>(ev_, 17, because.id);
        ev_ts_ = at.value();
        // The slice has the flows' cat: the DevTools Performance panel binds
        // a flow event only to a slice of its thread that starts at the same
        // ts with the same cat (chrome://tracing and Perfetto bind to the
        // enclosing slice, whatever its cat).
        ev_ += ",\"name\":" + json_string(name ? name : "") + ",\"ts\":" + us_trimmed(at) +
               ",\"cat\":\"cause\",\"dur\":" + dur_text(at, dur) + ",\"args\":{";
        for (const auto& [k, v] : args) ev_ += json_string(k) + ':' + v + ',';
        end_event(depth, false);
        ++events_;
        // An arrow only between slices that are both in the file: the
        // cause's starts at because.at (window permitting here, the trace
        // filter when the file is written, where every rank's tracks are known).
        if (because && because.track.pid != 0 && in_window(at.value(), at.value()) &&
            in_window(because.at.value(), because.at.value()))
            flow(because, t, at, depth);
    }
    narrate(at, who, text, me.id, because.id, depth);
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

void Tracer::flow(const Cause& from, Track to, sc_core::sc_time at, std::uint32_t depth) {
    // Trace-event flow: "s" inside the cause's slice, "f" bound to the
    // enclosing slice of the effect ("bp":"e"); paired by cat and id.
    // One arrow per effect: a cause with several effects starts several.
    // Numbered as the file is written (in its order).
    const std::uint64_t raw = (static_cast<std::uint64_t>(rank_) << kRankShift) | next_flow_++;
    const auto record = [&](char ph, Track drawn, Track other, sc_core::sc_time ts) {
        ev_.assign(kFlowHeader, kFlow);
        ev_[1] = ph;
        put_at<std::int32_t>(ev_, 2, drawn.pid);
        put_at<std::int32_t>(ev_, 6, drawn.tid);
        put_at<std::int32_t>(ev_, 10, other.pid);
        put_at<std::int32_t>(ev_, 14, other.tid);
        put_at<std::uint64_t>(ev_, 18, raw);
        ev_ts_ = ts.value();
        ev_ += ",\"name\":\"cause\",\"ts\":" + us_trimmed(ts) + ",\"cat\":\"cause\"";
        if (ph == 'f') ev_ += ",\"bp\":\"e\"";
        end_event(depth, false);
    };
    record('s', from.track, to, from.at);
    record('f', to, from.track, at);
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

bool NameFilter::keep(const std::string& name, const std::map<std::string, int>& groups,
                      const std::vector<std::string>* more_groups) {
    if (terms_.empty()) return true;
    if (!split_) {   // groups are known once the models built their tracks
        group_terms_.clear();
        model_terms_.clear();
        for (const auto& t : terms_) {
            const bool group =
                groups.count(t) > 0 ||
                (more_groups && std::find(more_groups->begin(), more_groups->end(), t) != more_groups->end());
            (group ? group_terms_ : model_terms_).push_back(t);
        }
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

bool Tracer::keep_line(const std::string& who) { return log_filter_.keep(who, groups_, &group_order_); }

std::string Tracer::json_us(sc_core::sc_time t) { return us_trimmed(t); }

}   // namespace vrdmasim
