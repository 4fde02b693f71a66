// Chrome trace-event JSON writer and narrated event log.
#include "core/trace.hpp"

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <queue>
#include <stdexcept>
#include <system_error>

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

// Microseconds with exactly 6 decimals (finer digits dropped).
std::string us_fixed6(sc_core::sc_time t) {
    std::string ip, fr;
    split_us(t, ip, fr);
    return ip + "." + fr.substr(0, 6);
}

}  // namespace

namespace {

// Separator before every event but the first of the array.
void begin_event(std::ofstream& os, bool& first) {
    if (!first) os << ",\n";
    first = false;
}

void write_process_meta(std::ofstream& os, bool& first, int pid, const std::string& group) {
    begin_event(os, first);
    os << "{\"ph\":\"M\",\"pid\":" << pid << ",\"name\":\"process_name\",\"args\":{\"name\":"
       << Tracer::json_string(group) << "}},\n";
    os << "{\"ph\":\"M\",\"pid\":" << pid
       << ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":" << pid << "}}";
}

void write_thread_meta(std::ofstream& os, bool& first, Tracer::Track t, const std::string& name) {
    begin_event(os, first);
    os << "{\"ph\":\"M\",\"pid\":" << t.pid << ",\"tid\":" << t.tid
       << ",\"name\":\"thread_name\",\"args\":{\"name\":" << Tracer::json_string(name) << "}},\n";
    os << "{\"ph\":\"M\",\"pid\":" << t.pid << ",\"tid\":" << t.tid
       << ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" << t.tid << "}}";
}

}  // namespace

Tracer::~Tracer() {
    try {
        close();
    } catch (...) {
    }
}

void Tracer::open(const std::string& json_path, const std::string& log_path) {
    close();
    std::ofstream json;
    if (!json_path.empty()) {
        json.open(json_path, std::ios::out | std::ios::trunc);
        if (!json)
            throw std::runtime_error("cannot open trace file '" + json_path + "': " + std::strerror(errno));
    }
    std::ofstream log;
    if (!log_path.empty()) {
        log.open(log_path, std::ios::out | std::ios::trunc);
        if (!log)
            throw std::runtime_error("cannot open event log '" + log_path + "': " + std::strerror(errno));
    }
    json_ = std::move(json);
    log_ = std::move(log);
    json_path_ = json_path;
    first_ = true;
    narration_.clear();
    if (!json_.is_open()) return;
    json_ << "{\"traceEvents\":[\n";

    // Metadata of tracks created before open(), in creation order.
    std::vector<std::pair<Track, const std::pair<std::string, std::string>*>> known;
    for (const auto& [key, t] : tracks_) known.push_back({t, &key});
    std::sort(known.begin(), known.end(), [](const auto& a, const auto& b) {
        return a.first.pid != b.first.pid ? a.first.pid < b.first.pid : a.first.tid < b.first.tid;
    });
    int last_pid = 0;
    for (const auto& [t, key] : known) {
        if (t.pid != last_pid) {
            write_process_meta(json_, first_, t.pid, key->first);
            last_pid = t.pid;
        }
        write_thread_meta(json_, first_, t, key->second);
    }
}

void Tracer::spill() {
    std::stable_sort(pending_.begin(), pending_.end(),
                     [](const Pending& a, const Pending& b) { return a.ts != b.ts ? a.ts < b.ts : a.seq < b.seq; });
    const std::string path = json_path_ + ".run" + std::to_string(runs_.size());
    std::ofstream run(path, std::ios::binary | std::ios::trunc);
    for (const Pending& p : pending_) {
        const std::uint64_t len = p.text.size();
        run.write(reinterpret_cast<const char*>(&p.ts), sizeof p.ts);
        run.write(reinterpret_cast<const char*>(&p.seq), sizeof p.seq);
        run.write(reinterpret_cast<const char*>(&len), sizeof len);
        run.write(p.text.data(), static_cast<std::streamsize>(len));
    }
    if (!run) throw std::runtime_error("cannot write trace run file '" + path + "': " + std::strerror(errno));
    runs_.push_back(path);
    pending_.clear();
    pending_bytes_ = 0;
}

void Tracer::merge_runs() {
    auto less = [](const Pending& a, const Pending& b) { return a.ts != b.ts ? a.ts < b.ts : a.seq < b.seq; };
    if (runs_.empty()) {
        std::stable_sort(pending_.begin(), pending_.end(), less);
        for (const Pending& p : pending_) {
            begin_event(json_, first_);
            json_ << p.text;
        }
        pending_.clear();
        return;
    }
    if (!pending_.empty()) spill();
    // k-way merge of the sorted runs.
    std::vector<std::ifstream> in;
    for (const auto& r : runs_) in.emplace_back(r, std::ios::binary);
    auto next = [&](std::size_t i, Pending& p) {
        std::uint64_t len = 0;
        if (!in[i].read(reinterpret_cast<char*>(&p.ts), sizeof p.ts)) return false;
        in[i].read(reinterpret_cast<char*>(&p.seq), sizeof p.seq);
        in[i].read(reinterpret_cast<char*>(&len), sizeof len);
        p.text.resize(len);
        in[i].read(p.text.data(), static_cast<std::streamsize>(len));
        return static_cast<bool>(in[i]);
    };
    using Head = std::pair<Pending, std::size_t>;
    auto greater = [&](const Head& a, const Head& b) { return less(b.first, a.first); };
    std::priority_queue<Head, std::vector<Head>, decltype(greater)> heap(greater);
    for (std::size_t i = 0; i < in.size(); ++i) {
        Pending p;
        if (next(i, p)) heap.push({std::move(p), i});
    }
    while (!heap.empty()) {
        Head h = heap.top();
        heap.pop();
        begin_event(json_, first_);
        json_ << h.first.text;
        Pending p;
        if (next(h.second, p)) heap.push({std::move(p), h.second});
    }
    in.clear();
    for (const auto& r : runs_) std::remove(r.c_str());
    runs_.clear();
}

void Tracer::close() {
    if (json_.is_open()) {
        merge_runs();
        json_ << "\n],\n\"displayTimeUnit\":\"ns\"}\n";
        json_.close();
    }
    for (const auto& r : runs_) std::remove(r.c_str());   // a close after a failed merge
    runs_.clear();
    pending_.clear();
    pending_bytes_ = 0;
    if (log_.is_open()) {
        // Processes run ahead of each other (temporal decoupling), so lines
        // arrive slightly out of time order: sort them, stably, once.
        std::stable_sort(narration_.begin(), narration_.end(),
                         [](const auto& a, const auto& b) { return a.first < b.first; });
        for (const auto& line : narration_) log_ << line.second;
        narration_.clear();
        log_.close();
    }
    first_ = true;
}

Tracer::Track Tracer::track(const std::string& group, const std::string& name) {
    auto key = std::make_pair(group, name);
    auto it = tracks_.find(key);
    if (it != tracks_.end()) return it->second;

    bool new_group = false;
    auto g = groups_.find(group);
    if (g == groups_.end()) {
        g = groups_.emplace(group, static_cast<int>(groups_.size()) + 1).first;
        next_tid_.push_back(1);
        new_group = true;
    }
    Track t;
    t.pid = g->second;
    t.tid = next_tid_[static_cast<std::size_t>(t.pid - 1)]++;
    tracks_.emplace(std::move(key), t);
    if (enabled()) {
        if (new_group) write_process_meta(json_, first_, t.pid, group);
        write_thread_meta(json_, first_, t, name);
    }
    return t;
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

void Tracer::end_event() {
    ev_ += '}';
    pending_bytes_ += ev_.size() + sizeof(Pending);
    pending_.push_back(Pending{ev_ts_, seq_++, ev_});
    if (pending_bytes_ >= spill_bytes_) spill();
}

void Tracer::span(Track t, const char* name, sc_core::sc_time start, sc_core::sc_time end,
                  const std::vector<std::pair<std::string, std::string>>& args) {
    if (!enabled()) return;
    const sc_core::sc_time dur = end > start ? end - start : sc_core::SC_ZERO_TIME;
    write_event_head('X', t, name, start);
    ev_ += ",\"dur\":" + us_trimmed(dur);
    write_args(args);
    end_event();
    ++events_;
}

void Tracer::async_span(Track t, const char* name, std::uint64_t id, sc_core::sc_time start,
                        sc_core::sc_time end, const std::vector<std::pair<std::string, std::string>>& args) {
    if (!enabled()) return;
    write_event_head('b', t, name, start);
    ev_ += ",\"cat\":\"async\",\"id\":" + std::to_string(id);
    write_args(args);
    end_event();
    write_event_head('e', t, name, end > start ? end : start);
    ev_ += ",\"cat\":\"async\",\"id\":" + std::to_string(id);
    end_event();
    ++events_;
}

void Tracer::instant(Track t, const char* name, sc_core::sc_time at,
                     const std::vector<std::pair<std::string, std::string>>& args) {
    if (!enabled()) return;
    write_event_head('i', t, name, at);
    ev_ += ",\"s\":\"t\"";
    write_args(args);
    end_event();
    ++events_;
}

void Tracer::narrate(sc_core::sc_time at, const std::string& who, const std::string& text) {
    if (!narrating()) return;
    char buf[48];
    std::snprintf(buf, sizeof buf, "%12s us  ", us_fixed6(at).c_str());
    narration_.emplace_back(at.value(), buf + who + "  " + text + "\n");
}

}  // namespace vrdmasim
