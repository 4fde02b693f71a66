#define SC_INCLUDE_DYNAMIC_PROCESSES   // sc_spawn
#include "src/core/global_sync.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

namespace vrdmasim {

using sc_core::sc_time;

GlobalSync::GlobalSync(sc_time lookahead, bool deferred) : lookahead_(lookahead), deferred_(deferred) {}

GlobalSync::~GlobalSync() = default;

GlobalSync::Rendezvous& GlobalSync::at(unsigned id) {
    if (id >= rv_.size()) throw std::logic_error("global sync: no rendezvous " + std::to_string(id));
    return *rv_[id];
}

const GlobalSync::Rendezvous& GlobalSync::at(unsigned id) const {
    if (id >= rv_.size()) throw std::logic_error("global sync: no rendezvous " + std::to_string(id));
    return *rv_[id];
}

unsigned GlobalSync::rendezvous(const std::string& name, std::uint64_t parties, sc_core::sc_event* event) {
    if (rv_.size() >= kNoRendezvous) throw std::logic_error("global sync: too many rendezvous");
    auto r = std::make_unique<Rendezvous>();
    r->name = name;
    r->parties = parties;
    if (event) {
        r->event = event;
        r->watched = true;
    }
    rv_.push_back(std::move(r));
    return static_cast<unsigned>(rv_.size() - 1);
}

void GlobalSync::arrive(unsigned id, sc_time t) {
    Rendezvous& r = at(id);
    if (r.complete || r.arrived + r.pending >= r.parties)
        throw std::logic_error("global sync: rendezvous " + r.name + " has all its " + std::to_string(r.parties) +
                               " parties already");
    if (partitioned_) {   // counted by merge(), with every rank's
        r.pending_latest = r.pending ? std::max(r.pending_latest, t) : t;
        ++r.pending;
        return;
    }
    r.latest = r.arrived ? std::max(r.latest, t) : t;
    if (++r.arrived < r.parties) return;
    // At once: the last arrival's local time (the barrier's release as it
    // always was); deferred: the latest arrival's, a lookahead later.
    if (deferred_) release(id, r.latest + lookahead_, false);
    else release(id, t, true);
}

namespace {

// A process's name for the release of rendezvous `name` (no '.': SystemC's
// hierarchy separator).
std::string process_name(const std::string& name) {
    std::string out = "global_sync_";
    for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
    return out;
}

}   // namespace

void GlobalSync::release(unsigned id, sc_time when, bool at_once) {
    Rendezvous& r = at(id);
    const sc_time now = sc_core::sc_time_stamp();
    if (when < now)
        throw std::logic_error("global sync: rendezvous " + r.name + " released at " + when.to_string() +
                               ", before the kernel's time " + now.to_string());
    r.complete = true;
    r.release_at = when;
    if (at_once) {
        if (r.watched) r.event->notify(when - now);
        auto fns = std::move(r.callbacks);
        r.callbacks.clear();
        for (auto& fn : fns) fn();
        return;
    }
    sc_core::sc_event& ev = release_event(id);
    // The callbacks run at the release, from a method woken by the event.
    sc_core::sc_spawn_options opts;
    opts.spawn_method();
    opts.set_sensitivity(&ev);
    opts.dont_initialize();
    sc_core::sc_spawn(
        [this, id] {
            Rendezvous& rr = at(id);
            auto fns = std::move(rr.callbacks);
            rr.callbacks.clear();
            for (auto& fn : fns) fn();
        },
        sc_core::sc_gen_unique_name(process_name(r.name).c_str()), &opts);
    ev.notify(when - now);
}

bool GlobalSync::released(unsigned id) const {
    const Rendezvous& r = at(id);
    if (!r.complete) return false;
    return !deferred_ && !partitioned_ ? true : sc_core::sc_time_stamp() >= r.release_at;
}

sc_time GlobalSync::release_time(unsigned id) const {
    const Rendezvous& r = at(id);
    if (!r.complete) throw std::logic_error("global sync: rendezvous " + r.name + " is not complete");
    return r.release_at;
}

sc_core::sc_event& GlobalSync::release_event(unsigned id) {
    Rendezvous& r = at(id);
    if (!r.event) {
        r.own = std::make_unique<sc_core::sc_event>();
        r.event = r.own.get();
    }
    r.watched = true;
    return *r.event;
}

void GlobalSync::on_release(unsigned id, std::function<void()> fn) {
    Rendezvous& r = at(id);
    if (r.complete && (!deferred_ && !partitioned_)) {
        fn();   // released at once already
        return;
    }
    if (released(id)) {
        fn();
        return;
    }
    r.callbacks.push_back(std::move(fn));
}

void GlobalSync::publish(unsigned node, std::uint32_t slot, std::uint64_t value) {
    values_[{node, slot}] = value;
    if (partitioned_) pending_values_.emplace_back(node, slot, value);
}

bool GlobalSync::has_published(unsigned node, std::uint32_t slot) const { return values_.count({node, slot}) != 0; }

std::uint64_t GlobalSync::published(unsigned node, std::uint32_t slot) const {
    const auto it = values_.find({node, slot});
    if (it == values_.end())
        throw std::logic_error("global sync: node " + std::to_string(node) + " published nothing in slot " +
                               std::to_string(slot));
    return it->second;
}

std::vector<GlobalSync::Contribution> GlobalSync::take() {
    std::vector<Contribution> out;
    for (std::size_t id = 0; id < rv_.size(); ++id) {
        Rendezvous& r = *rv_[id];
        if (!r.pending) continue;
        out.push_back({static_cast<std::uint32_t>(id), r.pending, r.pending_latest, {}});
        r.pending = 0;
        r.pending_latest = sc_core::SC_ZERO_TIME;
    }
    if (!pending_values_.empty()) {
        if (out.empty()) out.push_back({kNoRendezvous, 0, sc_core::SC_ZERO_TIME, {}});
        out.front().values = std::move(pending_values_);
        pending_values_.clear();
    }
    return out;
}

void GlobalSync::merge(const std::vector<Contribution>& all) {
    // Values first: a rendezvous completed by this merge releases with them.
    for (const Contribution& c : all)
        for (const auto& [node, slot, value] : c.values) values_[{node, slot}] = value;
    std::vector<unsigned> completed;
    for (const Contribution& c : all) {
        if (c.id == kNoRendezvous) continue;
        Rendezvous& r = at(c.id);
        if (c.arrivals == 0) continue;
        if (r.complete || r.arrived + c.arrivals > r.parties)
            throw std::logic_error("global sync: rendezvous " + r.name + " merged more than its " +
                                   std::to_string(r.parties) + " parties");
        r.latest = r.arrived ? std::max(r.latest, c.latest) : c.latest;
        r.arrived += c.arrivals;
        if (r.arrived == r.parties) completed.push_back(c.id);
    }
    for (unsigned id : completed) release(id, at(id).latest + lookahead_, false);
}

namespace {

void put32(std::vector<unsigned char>& b, std::uint32_t v) {
    for (int i = 0; i < 4; ++i) b.push_back(static_cast<unsigned char>(v >> (8 * i)));
}
void put64(std::vector<unsigned char>& b, std::uint64_t v) {
    for (int i = 0; i < 8; ++i) b.push_back(static_cast<unsigned char>(v >> (8 * i)));
}

struct Reader {
    const std::vector<unsigned char>& b;
    std::size_t at = 0;
    std::uint64_t get(int bytes) {
        if (b.size() - at < static_cast<std::size_t>(bytes))
            throw std::invalid_argument("global sync: truncated contributions");
        std::uint64_t v = 0;
        for (int i = 0; i < bytes; ++i) v |= std::uint64_t(b[at++]) << (8 * i);
        return v;
    }
};

constexpr std::uint32_t kMagic = 0x31595347;   // "GSY1"

}   // namespace

std::vector<unsigned char> GlobalSync::serialize(const std::vector<Contribution>& cs) {
    std::vector<unsigned char> b;
    put32(b, kMagic);
    put64(b, cs.size());
    for (const Contribution& c : cs) {
        put32(b, c.id);
        put64(b, c.arrivals);
        put64(b, c.latest.value());
        put64(b, c.values.size());
        for (const auto& [node, slot, value] : c.values) {
            put32(b, node);
            put32(b, slot);
            put64(b, value);
        }
    }
    return b;
}

std::vector<GlobalSync::Contribution> GlobalSync::deserialize(const std::vector<unsigned char>& bytes) {
    Reader r{bytes};
    if (r.get(4) != kMagic) throw std::invalid_argument("global sync: not a serialization of contributions");
    const std::uint64_t n = r.get(8);
    std::vector<Contribution> out;
    for (std::uint64_t i = 0; i < n; ++i) {
        Contribution c;
        c.id = static_cast<std::uint32_t>(r.get(4));
        c.arrivals = r.get(8);
        c.latest = sc_time::from_value(r.get(8));
        const std::uint64_t values = r.get(8);
        if (values > (bytes.size() - r.at) / 16) throw std::invalid_argument("global sync: truncated contributions");
        for (std::uint64_t k = 0; k < values; ++k) {
            const auto node = static_cast<std::uint32_t>(r.get(4));
            const auto slot = static_cast<std::uint32_t>(r.get(4));
            c.values.emplace_back(node, slot, r.get(8));
        }
        out.push_back(std::move(c));
    }
    if (r.at != bytes.size()) throw std::invalid_argument("global sync: trailing bytes after contributions");
    return out;
}

}   // namespace vrdmasim
