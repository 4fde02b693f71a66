// Statistics: counters, scalars, histograms and their registry.
#include "core/stats.hpp"

#include "core/json.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <unordered_set>

namespace vrdmasim {

namespace {

// Floor division for a possibly negative bucket index.
int floor_div(int a, int b) {
    int q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

// Readable number for the text table: integers as such, others with 6
// significant digits.
std::string readable(double v) {
    char buf[64];
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15)
        std::snprintf(buf, sizeof buf, "%.0f", v);
    else
        std::snprintf(buf, sizeof buf, "%.6g", v);
    return buf;
}

enum Kind { kCounter = 0, kScalar = 1, kHistogram = 2 };

struct Entry {
    const std::string* name;
    Kind kind;
    const void* stat;
    const std::string* unit;   // in the pool of SharedText
};

}  // namespace

// ---------------------------------------------------------------- Histogram

// A positive sample v = m * 2^e with m in [0.5, 1) lands in bucket
// e * kSub + floor((m - 0.5) * 2 * kSub); bucket i spans
// [(0.5 + s/(2 kSub)) 2^e, (0.5 + (s+1)/(2 kSub)) 2^e) with e = floor(i/kSub),
// s = i - e kSub: a relative width of at most 1/kSub. Zeros are counted apart.
// NaN is clamped to 0 like a negative sample; +inf is clamped to the largest
// finite double (both counted in clamped()). add() takes the usual positive
// finite samples; the rest come here.
void Histogram::add_rare(double v) {
    if (!(v >= 0)) {   // negative or NaN
        v = 0;
        ++clamped_;
    } else if (std::isinf(v)) {
        v = std::numeric_limits<double>::max();
        ++clamped_;
    }
    if (count_ == 0) {
        min_ = max_ = v;
    } else {
        min_ = std::min(min_, v);
        max_ = std::max(max_, v);
    }
    ++count_;
    sum_ += v;
    if (v == 0) {
        ++zeros_;
        return;
    }
    ++slot(key_of(v));
}

std::uint32_t Histogram::subnormal_key(double v) {
    int e = 0;
    const double m = std::frexp(v, &e);   // m in [0.5, 1)
    int sub = static_cast<int>((m - 0.5) * 2 * kSub);
    sub = std::clamp(sub, 0, kSub - 1);
    return static_cast<std::uint32_t>(e * kSub + sub + kKeyBias);
}

std::uint64_t& Histogram::new_slot(std::uint32_t key) {
    const std::uint32_t c = key / kChunk;
    if (dir_.empty()) {
        first_chunk_ = c;
        dir_.assign(1, 0);
    } else if (c < first_chunk_) {
        dir_.insert(dir_.begin(), first_chunk_ - c, 0);
        first_chunk_ = c;
    } else if (c - first_chunk_ >= dir_.size()) {
        dir_.resize(c - first_chunk_ + 1, 0);
    }
    std::uint32_t& at = dir_[c - first_chunk_];
    if (at == 0) {
        chunks_.emplace_back();
        chunks_.back().fill(0);
        at = static_cast<std::uint32_t>(chunks_.size());
    }
    return chunks_[at - 1][key % kChunk];
}

// The q-th sample is the one of rank ceil(q * count) (nearest rank). Ranks 1
// and count are the exact min and max; otherwise the value is interpolated
// linearly inside the sample's bucket (bounds clipped to [min, max]).
double Histogram::quantile(double q) const {
    if (count_ == 0) return 0.0;
    if (!(q > 0)) q = 0;   // also NaN
    if (q > 1) q = 1;
    const double n = static_cast<double>(count_);
    double r = std::ceil(q * n - 1e-9 * n);
    std::uint64_t rank = r < 1 ? 1 : static_cast<std::uint64_t>(r);
    if (rank > count_) rank = count_;
    if (rank == 1) return min_;
    if (rank == count_) return max_;
    if (rank <= zeros_) return 0.0;
    std::uint64_t cum = zeros_;
    for (std::size_t d = 0; d < dir_.size(); ++d) {
        if (dir_[d] == 0) continue;
        const auto& chunk = chunks_[dir_[d] - 1];
        for (int j = 0; j < kChunk; ++j) {
            const std::uint64_t c = chunk[static_cast<std::size_t>(j)];
            if (c == 0) continue;
            const int idx = idx_of_key((first_chunk_ + static_cast<std::uint32_t>(d)) * kChunk + static_cast<std::uint32_t>(j));
            if (cum + c >= rank) {
                const int e = floor_div(idx, kSub);
                const int s = idx - e * kSub;
                double lo = std::ldexp(0.5 + s / (2.0 * kSub), e);
                double hi = std::ldexp(0.5 + (s + 1) / (2.0 * kSub), e);
                lo = std::max(lo, min_);
                hi = std::min(hi, max_);
                const double k = static_cast<double>(rank - cum);   // 1..c within bucket
                double v = lo + (k - 0.5) / static_cast<double>(c) * (hi - lo);
                return std::clamp(v, min_, max_);
            }
            cum += c;
        }
    }
    return max_;
}

std::vector<Histogram::Bucket> Histogram::buckets() const {
    std::vector<Bucket> out;
    if (zeros_) out.push_back(Bucket{0, 0, zeros_});
    for (std::size_t d = 0; d < dir_.size(); ++d) {
        if (dir_[d] == 0) continue;
        const auto& chunk = chunks_[dir_[d] - 1];
        for (int j = 0; j < kChunk; ++j) {
            const std::uint64_t c = chunk[static_cast<std::size_t>(j)];
            if (c == 0) continue;
            const int idx = idx_of_key((first_chunk_ + static_cast<std::uint32_t>(d)) * kChunk + static_cast<std::uint32_t>(j));
            const int e = floor_div(idx, kSub);
            const int s = idx - e * kSub;
            const double lo = std::ldexp(0.5 + s / (2.0 * kSub), e);
            const double hi = std::ldexp(0.5 + (s + 1) / (2.0 * kSub), e);
            out.push_back(Bucket{std::max(lo, min_), std::min(hi, max_), c});
        }
    }
    return out;
}

// --------------------------------------------------------------- SharedText

namespace {

// The pool of SharedText: never freed (statistics may be read until exit,
// and a pool destroyed before a static registry would leave it dangling).
const std::string& intern(const std::string& s) {
    static std::mutex lock;   // sweeps may build registries in several threads
    static auto* pool = new std::unordered_set<std::string>;
    const std::lock_guard<std::mutex> g(lock);
    return *pool->insert(s).first;
}

}  // namespace

SharedText::SharedText() : s_(&intern(std::string())) {}
SharedText::SharedText(const std::string& s) : s_(&intern(s)) {}
SharedText::SharedText(const char* s) : s_(&intern(s)) {}

// ------------------------------------------------------------- StatRegistry

void StatRegistry::claim(const std::string& name) {
    if (name == "units")
        throw std::logic_error("statistic name 'units' is reserved (stats JSON units object)");
    if (names_.count(name))
        throw std::logic_error("statistic '" + name + "' registered twice");
}

void StatRegistry::index(const StatInfo& info, int kind, const void* stat) {
    names_.emplace(std::string_view(info.name), Slot{kind, stat});
}

Counter& StatRegistry::counter(const std::string& name, const std::string& unit, const std::string& help) {
    claim(name);
    counters_.emplace_back();
    counters_.back().info = StatInfo{name, unit, help};
    index(counters_.back().info, kCounter, &counters_.back());
    return counters_.back();
}

Scalar& StatRegistry::scalar(const std::string& name, const std::string& unit, const std::string& help) {
    claim(name);
    scalars_.emplace_back();
    scalars_.back().info = StatInfo{name, unit, help};
    index(scalars_.back().info, kScalar, &scalars_.back());
    return scalars_.back();
}

Histogram& StatRegistry::histogram(const std::string& name, const std::string& unit, const std::string& help) {
    claim(name);
    histograms_.emplace_back();
    histograms_.back().info = StatInfo{name, unit, help};
    index(histograms_.back().info, kHistogram, &histograms_.back());
    return histograms_.back();
}

const Counter* StatRegistry::find_counter(const std::string& name) const {
    auto it = names_.find(name);
    if (it == names_.end() || it->second.kind != kCounter) return nullptr;
    return static_cast<const Counter*>(it->second.stat);
}

const Scalar* StatRegistry::find_scalar(const std::string& name) const {
    auto it = names_.find(name);
    if (it == names_.end() || it->second.kind != kScalar) return nullptr;
    return static_cast<const Scalar*>(it->second.stat);
}

std::vector<const Histogram*> StatRegistry::histograms() const {
    std::vector<const Histogram*> out;
    for (const Histogram& h : histograms_) out.push_back(&h);
    std::sort(out.begin(), out.end(),
              [](const Histogram* a, const Histogram* b) { return a->info.name < b->info.name; });
    return out;
}

const Histogram* StatRegistry::find_histogram(const std::string& name) const {
    auto it = names_.find(name);
    if (it == names_.end() || it->second.kind != kHistogram) return nullptr;
    return static_cast<const Histogram*>(it->second.stat);
}

void Histogram::merge(const Histogram& o) {
    if (o.count_ == 0) return;
    if (count_ == 0) {
        min_ = o.min_;
        max_ = o.max_;
    } else {
        min_ = std::min(min_, o.min_);
        max_ = std::max(max_, o.max_);
    }
    count_ += o.count_;
    sum_ += o.sum_;
    zeros_ += o.zeros_;
    clamped_ += o.clamped_;
    for (std::size_t d = 0; d < o.dir_.size(); ++d) {
        if (o.dir_[d] == 0) continue;
        const auto& chunk = o.chunks_[o.dir_[d] - 1];
        for (int j = 0; j < kChunk; ++j)
            if (chunk[static_cast<std::size_t>(j)])
                slot((o.first_chunk_ + static_cast<std::uint32_t>(d)) * kChunk + static_cast<std::uint32_t>(j)) +=
                    chunk[static_cast<std::size_t>(j)];
    }
}

Histogram StatRegistry::merge_histograms(const std::string& suffix) const {
    const std::string tail = "." + suffix;
    Histogram all;
    for (const Histogram& h : histograms_) {
        const std::string& n = h.info.name;
        if (n.size() >= tail.size() && n.compare(n.size() - tail.size(), tail.size(), tail) == 0) all.merge(h);
    }
    return all;
}

namespace {
std::string_view leaf_of(std::string_view name) {
    const std::size_t dot = name.rfind('.');
    return dot == std::string_view::npos ? name : name.substr(dot + 1);
}

bool has_tail(const std::string& name, const std::string& tail) {
    return name.size() >= tail.size() && name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
}
}  // namespace

template <class T>
const std::vector<const T*>& StatRegistry::LeafIndex<T>::with_leaf(const std::deque<T>& all, const std::string& suffix) {
    for (; indexed < all.size(); ++indexed) {
        const T& s = all[indexed];
        by_leaf[leaf_of(s.info.name)].push_back(&s);
    }
    static const std::vector<const T*> none;
    auto it = by_leaf.find(leaf_of(suffix));
    return it == by_leaf.end() ? none : it->second;
}

namespace {
// The statistics whose name ends with "." + suffix all have the suffix's
// last component as their own: only those are compared, in registration
// order (the order of a sum of doubles stays that of a scan of them all).
template <typename T, typename Sum>
Sum sum_by_suffix(const std::vector<const T*>& candidates, const std::string& suffix, Sum total) {
    const std::string tail = "." + suffix;
    for (const T* c : candidates)
        if (has_tail(c->info.name, tail)) total += c->value();
    return total;
}

template <typename T>
std::size_t count_by_suffix(const std::vector<const T*>& candidates, const std::string& suffix) {
    const std::string tail = "." + suffix;
    std::size_t n = 0;
    for (const T* c : candidates)
        if (has_tail(c->info.name, tail)) ++n;
    return n;
}

template <typename T>
std::size_t count_by_suffix(const std::deque<T>& stats, const std::string& suffix) {
    const std::string tail = "." + suffix;
    std::size_t n = 0;
    for (const T& c : stats)
        if (has_tail(c.info.name, tail)) ++n;
    return n;
}

std::logic_error missing(const char* kind, const std::string& suffix) {
    return std::logic_error("no " + std::string(kind) + " named *." + suffix +
                            " is registered: a figure built from it would read 0 without cause");
}
}  // namespace

std::uint64_t StatRegistry::sum_counters(const std::string& suffix) const {
    return sum_by_suffix(counter_leaves_.with_leaf(counters_, suffix), suffix, std::uint64_t{0});
}

double StatRegistry::sum_scalars(const std::string& suffix) const {
    return sum_by_suffix(scalar_leaves_.with_leaf(scalars_, suffix), suffix, 0.0);
}

std::size_t StatRegistry::count_counters(const std::string& suffix) const {
    return count_by_suffix(counter_leaves_.with_leaf(counters_, suffix), suffix);
}
std::size_t StatRegistry::count_scalars(const std::string& suffix) const {
    return count_by_suffix(scalar_leaves_.with_leaf(scalars_, suffix), suffix);
}
std::size_t StatRegistry::count_histograms(const std::string& suffix) const {
    return count_by_suffix(histograms_, suffix);
}

std::uint64_t StatRegistry::require_sum_counters(const std::string& suffix) const {
    if (count_counters(suffix) == 0) throw missing("counter", suffix);
    return sum_counters(suffix);
}

double StatRegistry::require_sum_scalars(const std::string& suffix) const {
    if (count_scalars(suffix) == 0) throw missing("scalar", suffix);
    return sum_scalars(suffix);
}

Histogram StatRegistry::require_merge_histograms(const std::string& suffix) const {
    if (count_histograms(suffix) == 0) throw missing("histogram", suffix);
    return merge_histograms(suffix);
}

namespace {

std::vector<Entry> sorted_entries(const std::deque<Counter>& cs, const std::deque<Scalar>& ss,
                                  const std::deque<Histogram>& hs) {
    std::vector<Entry> v;
    v.reserve(cs.size() + ss.size() + hs.size());
    for (const Counter& c : cs) v.push_back({&c.info.name, kCounter, &c, &c.info.unit.str()});
    for (const Scalar& s : ss) v.push_back({&s.info.name, kScalar, &s, &s.info.unit.str()});
    for (const Histogram& h : hs) v.push_back({&h.info.name, kHistogram, &h, &h.info.unit.str()});
    std::sort(v.begin(), v.end(), [](const Entry& a, const Entry& b) { return *a.name < *b.name; });
    return v;
}

}  // namespace

void StatRegistry::write_json(std::ostream& os) const {
    const auto entries = sorted_entries(counters_, scalars_, histograms_);
    os << "{\n";
    for (const Entry& e : entries) {
        os << "  " << json_string(*e.name) << ": ";
        switch (e.kind) {
        case kCounter:
            os << json_number(static_cast<const Counter*>(e.stat)->value());
            break;
        case kScalar:
            os << json_number(static_cast<const Scalar*>(e.stat)->value());
            break;
        case kHistogram: {
            const auto* h = static_cast<const Histogram*>(e.stat);
            os << "{\"count\": " << json_number(h->count())
               << ", \"mean\": " << json_number(h->mean())
               << ", \"min\": " << json_number(h->min())
               << ", \"max\": " << json_number(h->max())
               << ", \"p50\": " << json_number(h->quantile(0.5))
               << ", \"p99\": " << json_number(h->quantile(0.99))
               << ", \"unit\": " << json_string(*e.unit) << "}";
            break;
        }
        }
        os << ",\n";
    }
    os << "  \"units\": {";
    bool first = true;
    for (const Entry& e : entries) {
        os << (first ? "\n" : ",\n") << "    " << json_string(*e.name) << ": " << json_string(*e.unit);
        first = false;
    }
    os << (first ? "}\n" : "\n  }\n") << "}\n";
}

void StatRegistry::write_text(std::ostream& os) const {
    const auto entries = sorted_entries(counters_, scalars_, histograms_);
    std::vector<std::string> values;
    values.reserve(entries.size());
    std::size_t name_w = 0, value_w = 0;
    for (const Entry& e : entries) {
        std::string v;
        switch (e.kind) {
        case kCounter:
            v = json_number(static_cast<const Counter*>(e.stat)->value());
            break;
        case kScalar:
            v = readable(static_cast<const Scalar*>(e.stat)->value());
            break;
        case kHistogram: {
            const auto* h = static_cast<const Histogram*>(e.stat);
            v = "count=" + json_number(h->count()) + " mean=" + readable(h->mean()) +
                " min=" + readable(h->min()) + " max=" + readable(h->max()) +
                " p50=" + readable(h->quantile(0.5)) + " p99=" + readable(h->quantile(0.99));
            break;
        }
        }
        name_w = std::max(name_w, e.name->size());
        value_w = std::max(value_w, v.size());
        values.push_back(std::move(v));
    }
    for (std::size_t i = 0; i < entries.size(); ++i) {
        const Entry& e = entries[i];
        std::string line = *e.name;
        line.append(name_w - e.name->size() + 2, ' ');
        line += values[i];
        if (!e.unit->empty()) {
            line.append(value_w - values[i].size() + 2, ' ');
            line += *e.unit;
        }
        os << line << '\n';
    }
}

}  // namespace vrdmasim
