// Statistics written out: stats.json and stats.txt, in name order (stats.hpp).
#include "src/core/stats.hpp"

#include "src/core/json.hpp"
#include "src/core/stats_detail.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <unordered_map>
#include <unordered_set>

namespace vrdmasim {

using namespace stats_detail;

namespace {

// Readable number for the text table: integers as such, others with 6
// significant digits.
void append_readable(std::string& out, double v) {
    char buf[64];
    int n;
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) n = std::snprintf(buf, sizeof buf, "%.0f", v);
    else n = std::snprintf(buf, sizeof buf, "%.6g", v);
    out.append(buf, static_cast<std::size_t>(n));
}

// A description on one line: a line break or another control character
// in a help text as a space (a statistic's line must stay one line).
void append_description(std::string& out, const std::string& help) {
    for (const char ch : help) out += static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f ? ' ' : ch;
}

}   // namespace

namespace {
// A statistic's name as a JSON string, without assembling it.
void append_json_name(std::string& out, const StatName& n) {
    out += '"';
    if (n.prefix().data()) {   // a name with a dot (an empty prefix is ".leaf")
        append_json_escaped(out, n.prefix());
        out += '.';
    }
    append_json_escaped(out, n.leaf());
    out += '"';
}

// An output built a block at a time and written to its stream in blocks:
// millions of small pieces (names, numbers) cost the stream's per-call
// overhead each, and a copy of the whole output would set the run's peak.
class BlockWriter {
public:
    explicit BlockWriter(std::ostream& os) : os_(os) { buf_.reserve(kBlock + 4096); }
    ~BlockWriter() { flush(); }
    BlockWriter(const BlockWriter&) = delete;
    BlockWriter& operator=(const BlockWriter&) = delete;
    std::string& buf() { return buf_; }
    // After each entry: writes the block once it is full.
    void entry_done() {
        if (buf_.size() >= kBlock) flush();
    }
    void flush() {
        os_.write(buf_.data(), static_cast<std::streamsize>(buf_.size()));
        buf_.clear();
    }

private:
    static constexpr std::size_t kBlock = 1 << 16;
    std::ostream& os_;
    std::string buf_;
};
}   // namespace

namespace {

// A statistic's group key for sorted_refs: its name's text up to its first
// dot, or the whole name if it has none.
struct Key {
    std::string_view text;   // without the dot
    bool dotted;
    bool operator==(const Key& o) const { return dotted == o.dotted && text == o.text; }
};
struct KeyHash {
    std::size_t operator()(const Key& k) const { return std::hash<std::string_view>()(k.text) ^ k.dotted; }
};
Key key_of(const StatName& n) {
    const std::string_view p = n.prefix();
    if (!p.data()) return Key{n.leaf(), false};
    return Key{p.substr(0, p.find('.')), true};
}
// <0, 0, >0 as the keys' texts (with the dot) compare.
int compare_keys(const Key& a, const Key& b) {
    const std::size_t k = std::min(a.text.size(), b.text.size());
    if (const int c = a.text.substr(0, k).compare(b.text.substr(0, k))) return c;
    // One text begins the other: the next character ('.' or none) decides.
    auto at = [](const Key& x, std::size_t i) {
        return i < x.text.size()                ? int(static_cast<unsigned char>(x.text[i]))
               : i == x.text.size() && x.dotted ? '.'
                                                : -1;
    };
    return at(a, k) - at(b, k);
}

}   // namespace

const std::vector<std::uint32_t>& StatRegistry::sorted_refs() const {
    // References (4 bytes each), not copies of the entries: on a big torus
    // this list sets the peak memory of writing the outputs.
    if (sorted_.size() == counters_.size() + scalars_.size() + histograms_.size()) return sorted_;
    //
    // Sorted a first component at a time. A name's group key is its text up
    // to and with its first dot ("x1y0z2f3."), or the whole name if it has
    // none. Names sort by their strings; every name of a group starts with
    // its key, and of two different keys either neither is a prefix of the
    // other (then the keys order every pair of their names) or the shorter
    // is a whole name without a dot (which sorts before every name it
    // begins). So the groups, in the order of their keys, each sorted on its
    // own, are the sorted list: a node's few hundred statistics sorted
    // together, in cache, instead of one sort of millions whose comparisons
    // walk the registry at random.
    const std::size_t total = counters_.size() + scalars_.size() + histograms_.size();
    auto for_each_ref = [this](auto f) {
        for (std::size_t i = 0; i < counters_.size(); ++i) f((kCounter << kIndexBits) | std::uint32_t(i + 1));
        for (std::size_t i = 0; i < scalars_.size(); ++i) f((kScalar << kIndexBits) | std::uint32_t(i + 1));
        for (std::size_t i = 0; i < histograms_.size(); ++i) f((kHistogram << kIndexBits) | std::uint32_t(i + 1));
    };
    std::unordered_map<Key, std::size_t, KeyHash> group;   // key -> statistics, then -> its first slot
    // Statistics come in registration order, a node's together: the group
    // of the one before is looked up again only when the key changes.
    Key last_key{};
    std::size_t* last = nullptr;
    auto group_of = [&](std::uint32_t ref) -> std::size_t& {
        const Key k = key_of(info_of(ref).name);
        if (!last || !(k == last_key)) {
            last_key = k;
            last = &group[k];
        }
        return *last;
    };
    for_each_ref([&](std::uint32_t ref) { ++group_of(ref); });
    std::vector<std::pair<Key, std::size_t>> keys(group.begin(), group.end());
    std::sort(keys.begin(), keys.end(),
              [&](const auto& a, const auto& b) { return compare_keys(a.first, b.first) < 0; });
    std::vector<std::size_t> starts;
    starts.reserve(keys.size() + 1);
    std::size_t at = 0;
    for (const auto& k : keys) {
        starts.push_back(at);
        group[k.first] = at;
        at += k.second;
    }
    starts.push_back(at);
    std::vector<std::uint32_t>& v = sorted_;
    v.assign(total, 0);
    last = nullptr;
    for_each_ref([&](std::uint32_t ref) { v[group_of(ref)++] = ref; });
    for (std::size_t g = 0; g + 1 < starts.size(); ++g)
        std::sort(v.begin() + static_cast<std::ptrdiff_t>(starts[g]),
                  v.begin() + static_cast<std::ptrdiff_t>(starts[g + 1]), [this](std::uint32_t a, std::uint32_t b) {
                      return StatName::compare(info_of(a).name, info_of(b).name) < 0;
                  });
    return v;
}

StatRegistry::Entry StatRegistry::entry(std::uint32_t ref) const {
    const StatInfo& info = info_of(ref);
    return Entry{&info.name, static_cast<int>(ref >> kIndexBits), stat_of(ref), &info.unit(), &info.help()};
}

void StatRegistry::write_json(std::ostream& os) const {
    require_flushed("write_json");
    const auto& refs = sorted_refs();
    BlockWriter w(os);
    std::string& out = w.buf();
    out += "{\n";
    for (const std::uint32_t ref : refs) {
        const Entry e = entry(ref);
        out += "  ";
        append_json_name(out, *e.name);
        out += ": ";
        switch (e.kind) {
        case kCounter: append_json_number(out, static_cast<const Counter*>(e.stat)->value()); break;
        case kScalar: {
            // NaN: no value (a Level scalar over a region), not a 0.
            const double v = static_cast<const Scalar*>(e.stat)->value();
            if (std::isnan(v)) out += "null";
            else append_json_number(out, v);
            break;
        }
        case kHistogram: {
            const auto* h = static_cast<const Histogram*>(e.stat);
            const auto [p50, p99] = h->quantile_pair(0.5, 0.99);
            out += "{\"count\": ";
            append_json_number(out, h->count());
            out += ", \"mean\": ";
            append_json_number(out, h->mean());
            out += ", \"min\": ";
            append_json_number(out, h->min());
            out += ", \"max\": ";
            append_json_number(out, h->max());
            out += ", \"p50\": ";
            append_json_number(out, p50);
            out += ", \"p99\": ";
            append_json_number(out, p99);
            out += ", \"unit\": \"";
            append_json_escaped(out, *e.unit);
            out += "\"}";
            break;
        }
        }
        out += ",\n";
        w.entry_done();
    }
    out += "  \"units\": {";
    bool first = true;
    for (const std::uint32_t ref : refs) {
        const Entry e = entry(ref);
        out += first ? "\n    " : ",\n    ";
        append_json_name(out, *e.name);
        out += ": \"";
        append_json_escaped(out, *e.unit);
        out += '"';
        first = false;
        w.entry_done();
    }
    out += first ? "}\n" : "\n  }\n";
    out += "}\n";
}

void StatRegistry::write_text(std::ostream& os) const {
    require_flushed("write_text");
    const auto& refs = sorted_refs();
    // Each value is formatted twice, to measure the columns and to write
    // them, rather than kept: on a big torus the kept strings set the run's
    // peak memory. Only each histogram's p50 and p99 are kept from the first
    // pass (`quantiles`, in the order written): finding them is the costly part.
    std::vector<std::pair<double, double>> quantiles;
    auto append_value = [](std::string& out, const Entry& e, const std::pair<double, double>& q) {
        switch (e.kind) {
        case kCounter: append_json_number(out, static_cast<const Counter*>(e.stat)->value()); break;
        case kScalar: {
            const double v = static_cast<const Scalar*>(e.stat)->value();
            if (std::isnan(v)) out += "none";   // a Level scalar over a region
            else append_readable(out, v);
            break;
        }
        case kHistogram: {
            const auto* h = static_cast<const Histogram*>(e.stat);
            const auto [p50, p99] = q;
            out += "count=";
            append_json_number(out, h->count());
            out += " mean=";
            append_readable(out, h->mean());
            out += " min=";
            append_readable(out, h->min());
            out += " max=";
            append_readable(out, h->max());
            out += " p50=";
            append_readable(out, p50);
            out += " p99=";
            append_readable(out, p99);
            break;
        }
        }
    };
    std::size_t name_w = 0, value_w = 0, unit_w = 0;
    std::string v;
    for (const std::uint32_t ref : refs) {
        const Entry e = entry(ref);
        name_w = std::max(name_w, e.name->size());
        unit_w = std::max(unit_w, e.unit->size());
        if (e.kind == kHistogram) quantiles.push_back(static_cast<const Histogram*>(e.stat)->quantile_pair(0.5, 0.99));
        v.clear();
        append_value(v, e, e.kind == kHistogram ? quantiles.back() : std::pair<double, double>());
        value_w = std::max(value_w, v.size());
    }
    BlockWriter w(os);
    std::string& out = w.buf();
    std::size_t next_quantiles = 0;
    for (const std::uint32_t ref : refs) {
        const Entry e = entry(ref);
        const std::string_view prefix = e.name->prefix();
        if (prefix.data()) {
            out += prefix;
            out += '.';
        }
        out += e.name->leaf();
        out.append(name_w - e.name->size() + 2, ' ');
        const std::size_t at = out.size();
        append_value(out, e, e.kind == kHistogram ? quantiles[next_quantiles++] : std::pair<double, double>());
        if (!e.unit->empty() || !e.help->empty()) {
            out.append(value_w - (out.size() - at) + 2, ' ');
            out += *e.unit;
        }
        // The description, gem5's "# ..." column: after the widest unit
        // (right after the values when no statistic has a unit).
        if (!e.help->empty()) {
            out.append(unit_w - e.unit->size() + (unit_w > 0 ? 2 : 0), ' ');
            out += "# ";
            append_description(out, *e.help);
        }
        out += '\n';
        w.entry_done();
    }
}

}   // namespace vrdmasim
