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

}   // namespace

namespace {

// Separator before every event but the first of the array.
void begin_event(std::ofstream& os, bool& first) {
    if (!first) os << ",\n";
    first = false;
}

void write_process_meta(std::ofstream& os, bool& first, int pid, const std::string& group) {
    begin_event(os, first);
    os << "{\"ph\":\"M\",\"pid\":" << pid
       << ",\"name\":\"process_name\",\"args\":{\"name\":" << Tracer::json_string(group) << "}},\n";
    os << "{\"ph\":\"M\",\"pid\":" << pid << ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":" << pid
       << "}}";
}

void write_thread_meta(std::ofstream& os, bool& first, Tracer::Track t, const std::string& name) {
    begin_event(os, first);
    os << "{\"ph\":\"M\",\"pid\":" << t.pid << ",\"tid\":" << t.tid
       << ",\"name\":\"thread_name\",\"args\":{\"name\":" << Tracer::json_string(name) << "}},\n";
    os << "{\"ph\":\"M\",\"pid\":" << t.pid << ",\"tid\":" << t.tid
       << ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":" << t.tid << "}}";
}

}   // namespace

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
        if (!json) throw std::runtime_error("cannot open trace file '" + json_path + "': " + std::strerror(errno));
    }
    std::ofstream log;
    if (!log_path.empty()) {
        log.open(log_path, std::ios::out | std::ios::trunc);
        if (!log) throw std::runtime_error("cannot open event log '" + log_path + "': " + std::strerror(errno));
    }
    json_ = std::move(json);
    log_ = std::move(log);
    json_open_ = json_.is_open();
    log_open_ = log_.is_open();
    json_path_ = json_path;
    first_ = true;
    events_spool_.discard();
    log_spool_.discard();
    events_spool_.set_prefix(json_path);
    log_spool_.set_prefix(log_path);
    if (!json_.is_open()) return;
    json_ << "{\"traceEvents\":[\n";

    // Metadata of tracks created before open(), in creation order.
    std::vector<const std::string*> group_of(track_names_.size());
    for (const auto& [name, pid] : groups_) group_of[static_cast<std::size_t>(pid - 1)] = &name;
    for (std::size_t g = 0; g < track_names_.size(); ++g) {
        if (track_names_[g].empty()) continue;
        const int pid = static_cast<int>(g) + 1;
        write_process_meta(json_, first_, pid, *group_of[g]);
        for (std::size_t k = 0; k < track_names_[g].size(); ++k)
            write_thread_meta(json_, first_, Track{pid, static_cast<int>(k) + 1}, track_names_[g][k]);
    }
}

void Tracer::close() {
    try {
        if (json_.is_open()) {
            events_spool_.drain([this](const std::string& text) {
                begin_event(json_, first_);
                json_ << text;
            });
            json_ << "\n],\n\"displayTimeUnit\":\"ns\"}\n";
            json_.close();
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
        first_ = true;
        throw;
    }
    events_spool_.discard();
    log_spool_.discard();
    first_ = true;
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
    events_spool_.add(ev_ts_, ev_);
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

void Tracer::async_span(Track t, const char* name, std::uint64_t id, sc_core::sc_time start, sc_core::sc_time end,
                        const std::vector<std::pair<std::string, std::string>>& args) {
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
    if (!narrating() || !keep_line(who)) return;
    char buf[48];
    std::snprintf(buf, sizeof buf, "%12s us  ", us_fixed6(at).c_str());
    log_spool_.add(at.value(), buf + who + "  " + text + "\n");
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
    if (enabled() && sliced) {
        write_event_head('X', t, name, at);
        // The slice has the flows' cat: the DevTools Performance panel binds
        // a flow event only to a slice of its thread that starts at the same
        // ts with the same cat (chrome://tracing and Perfetto bind to the
        // enclosing slice, whatever its cat).
        ev_ += ",\"cat\":\"cause\",\"dur\":" + us_trimmed(dur);
        auto all = args;
        all.emplace_back("event", json_string("#" + std::to_string(me.id)));
        if (because) all.emplace_back("after", json_string("#" + std::to_string(because.id)));
        write_args(all);
        end_event();
        ++events_;
        if (because && because.track.pid != 0) flow(because, t, at);
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

void Tracer::set_log_filter(std::vector<std::string> terms) {
    filter_ = std::move(terms);
    filter_split_ = false;
    term_hits_.clear();
    for (const auto& t : filter_) term_hits_[t] = 0;
}

std::vector<std::string> Tracer::unmatched_filter_terms() const {
    std::vector<std::string> out;
    for (const auto& t : filter_)
        if (term_hits_.at(t) == 0) out.push_back(t);
    return out;
}

bool Tracer::keep_line(const std::string& who) {
    if (filter_.empty()) return true;
    if (!filter_split_) {   // groups are known once the models built their tracks
        group_terms_.clear();
        model_terms_.clear();
        for (const auto& t : filter_) (groups_.count(t) ? group_terms_ : model_terms_).push_back(t);
        filter_split_ = true;
    }
    auto component_matches = [&who](const std::string& term) {
        std::size_t b = 0;
        while (b <= who.size()) {
            std::size_t e = who.find('.', b);
            if (e == std::string::npos) e = who.size();
            const std::string c = who.substr(b, e - b);
            if (c == term || (c.size() > term.size() && c.compare(0, term.size(), term) == 0 &&
                              (c[term.size()] == '_' || c[term.size()] == '-')))
                return true;
            b = e + 1;
        }
        return false;
    };
    auto any = [&](const std::vector<std::string>& terms) {
        if (terms.empty()) return true;
        bool hit = false;
        for (const auto& t : terms)
            if (component_matches(t)) {
                ++term_hits_[t];
                hit = true;
            }
        return hit;
    };
    const bool group_ok = any(group_terms_);
    const bool model_ok = any(model_terms_);
    return group_ok && model_ok;
}

}   // namespace vrdmasim
