// Statistics: counters, scalars, histograms and their registry.
#include "src/core/stats.hpp"

#include "src/core/json.hpp"

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

namespace {

// Floor division for a possibly negative bucket index.
int floor_div(int a, int b) {
    int q = a / b;
    if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
    return q;
}

// Readable number for the text table: integers as such, others with 6
// significant digits.
void append_readable(std::string& out, double v) {
    char buf[64];
    int n;
    if (std::isfinite(v) && v == std::floor(v) && std::fabs(v) < 1e15) n = std::snprintf(buf, sizeof buf, "%.0f", v);
    else n = std::snprintf(buf, sizeof buf, "%.6g", v);
    out.append(buf, static_cast<std::size_t>(n));
}

enum Kind { kCounter = 0, kScalar = 1, kHistogram = 2 };

// FNV-1a: the statistics index's hash of a name.
std::uint32_t name_hash(std::string_view s) {
    std::uint32_t h = 2166136261u;
    for (const char c : s) {
        h ^= static_cast<unsigned char>(c);
        h *= 16777619u;
    }
    return h;
}

}   // namespace

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

template <class F>
void Histogram::for_each_bucket(F f) const {
    for (std::size_t d = 0; d < dir_.size(); ++d) {
        if (dir_[d] == 0) continue;
        const auto& chunk = chunks_[dir_[d] - 1];
        for (int j = 0; j < kChunk; ++j) {
            const std::uint64_t c = chunk[static_cast<std::size_t>(j)];
            if (c == 0) continue;
            const int idx =
                idx_of_key((first_chunk_ + static_cast<std::uint32_t>(d)) * kChunk + static_cast<std::uint32_t>(j));
            const int e = floor_div(idx, kSub);
            const int s = idx - e * kSub;
            const double lo = std::ldexp(0.5 + s / (2.0 * kSub), e);
            const double hi = std::ldexp(0.5 + (s + 1) / (2.0 * kSub), e);
            if (!f(std::max(lo, min_), std::min(hi, max_), c)) return;
        }
    }
}

// The q-th sample is the one of rank ceil(q * count) (nearest rank). Ranks 1
// and count are the exact min and max; otherwise the value is interpolated
// linearly inside the sample's bucket (bounds clipped to [min, max]).
double Histogram::quantile(double q) const { return quantile_pair(q, q).first; }

std::pair<double, double> Histogram::quantile_pair(double qa, double qb) const {
    if (count_ == 0) return {0.0, 0.0};
    // Each quantile's rank among the samples (1..count), and the value where
    // that needs no bucket: the least, the greatest, a zero.
    struct Want {
        std::uint64_t rank;
        double v;
        bool found;
    };
    auto want = [this](double q) {
        if (!(q > 0)) q = 0;   // also NaN
        if (q > 1) q = 1;
        const double n = static_cast<double>(count_);
        const double r = std::ceil(q * n - 1e-9 * n);
        std::uint64_t rank = r < 1 ? 1 : static_cast<std::uint64_t>(r);
        if (rank > count_) rank = count_;
        if (rank == 1) return Want{rank, min_, true};
        if (rank == count_) return Want{rank, max_, true};
        if (rank <= zeros_) return Want{rank, 0.0, true};
        return Want{rank, max_, false};
    };
    Want w[2] = {want(qa), want(qb)};
    const bool swapped = w[0].rank > w[1].rank;
    if (swapped) std::swap(w[0], w[1]);
    // The buckets once, in increasing order: each rank still to find falls
    // in the first bucket whose cumulative count reaches it.
    int next = 0;   // the first quantile still to find (2: none)
    auto skip_found = [&] {
        while (next < 2 && w[next].found) ++next;
    };
    skip_found();
    if (next < 2) {
        std::uint64_t cum = zeros_;
        for_each_bucket([&](double lo, double hi, std::uint64_t c) {
            while (next < 2 && cum + c >= w[next].rank) {
                const double k = static_cast<double>(w[next].rank - cum);   // 1..c within bucket
                w[next].v = std::clamp(lo + (k - 0.5) / static_cast<double>(c) * (hi - lo), min_, max_);
                w[next].found = true;
                skip_found();
            }
            cum += c;
            return next < 2;
        });
    }
    return swapped ? std::make_pair(w[1].v, w[0].v) : std::make_pair(w[0].v, w[1].v);
}

std::vector<Histogram::Bucket> Histogram::buckets() const {
    std::vector<Bucket> out;
    if (zeros_) out.push_back(Bucket{0, 0, zeros_});
    for_each_bucket([&](double lo, double hi, std::uint64_t c) {
        out.push_back(Bucket{lo, hi, c});
        return true;
    });
    return out;
}

// --------------------------------------------------------------- SharedText

namespace {

// The pools of interned texts (the pieces of statistics' names) and of
// (unit, help) pairs: never freed (statistics may be read until exit, and a
// pool destroyed before a static registry would leave it dangling). A
// lookup copies its text into a probe kept for the purpose, so that finding
// a text already kept allocates nothing (every node registers the same
// pieces: most registrations find them), and a text is kept once, in the
// set itself (a big torus interns a prefix per model of every node).
struct TextPools {
    std::mutex lock;   // sweeps may build registries in several threads
    std::unordered_set<std::string> texts;
    struct PairHash {
        std::size_t operator()(const StatInfo::Texts& t) const {
            return std::hash<std::string>()(t.unit) * 31 + std::hash<std::string>()(t.help);
        }
    };
    struct PairEqual {
        bool operator()(const StatInfo::Texts& a, const StatInfo::Texts& b) const {
            return a.unit == b.unit && a.help == b.help;
        }
    };
    std::unordered_set<StatInfo::Texts, PairHash, PairEqual> pairs;
    std::string probe;
    StatInfo::Texts probe_pair;

    // Callers hold `lock`.
    const std::string& intern(std::string_view s) {
        probe.assign(s.data(), s.size());
        const auto it = texts.find(probe);
        if (it != texts.end()) return *it;
        return *texts.insert(probe).first;
    }
    const StatInfo::Texts& intern_pair(std::string_view unit, std::string_view help) {
        probe_pair.unit.assign(unit.data(), unit.size());
        probe_pair.help.assign(help.data(), help.size());
        const auto it = pairs.find(probe_pair);
        if (it != pairs.end()) return *it;
        return *pairs.insert(probe_pair).first;
    }
};

TextPools& pools() {
    static auto* p = new TextPools;
    return *p;
}

const StatInfo::Texts& intern_texts(std::string_view unit, std::string_view help) {
    TextPools& p = pools();
    const std::lock_guard<std::mutex> g(p.lock);
    return p.intern_pair(unit, help);
}

// The empty texts every statistic starts with (before its registry names
// it), interned once.
const StatInfo::Texts& no_texts() {
    static const StatInfo::Texts& t = intern_texts({}, {});
    return t;
}

const std::string& no_text() {
    static const std::string* t = [] {
        TextPools& p = pools();
        const std::lock_guard<std::mutex> g(p.lock);
        return &p.intern({});
    }();
    return *t;
}

}   // namespace

StatInfo::StatInfo() : texts_(&no_texts()) {}
StatInfo::StatInfo(const StatName& n, const std::string& unit, const std::string& help)
    : name(n), texts_(&intern_texts(unit, help)) {}
void StatInfo::set_unit(const std::string& unit) { texts_ = &intern_texts(unit, texts_->help); }
void StatInfo::set_help(const std::string& help) { texts_ = &intern_texts(texts_->unit, help); }

// ----------------------------------------------------------------- StatName

StatName::StatName() : prefix_(nullptr), leaf_(&no_text()) {}

StatName::StatName(const std::string& full) {
    const std::string_view s(full);
    const std::size_t dot = s.rfind('.');
    TextPools& p = pools();
    const std::lock_guard<std::mutex> g(p.lock);
    if (dot == std::string_view::npos) {
        prefix_ = nullptr;
        leaf_ = &p.intern(s);
    } else {
        prefix_ = &p.intern(s.substr(0, dot));
        leaf_ = &p.intern(s.substr(dot + 1));
    }
}

StatName::StatName(const char* full) : StatName(std::string(full)) {}

std::string StatName::str() const {
    if (!prefix_) return *leaf_;
    std::string s;
    s.reserve(prefix_->size() + 1 + leaf_->size());
    s += *prefix_;
    s += '.';
    s += *leaf_;
    return s;
}

std::size_t StatName::size() const { return prefix_ ? prefix_->size() + 1 + leaf_->size() : leaf_->size(); }

bool StatName::ends_with(std::string_view tail) const {
    const std::string_view l = *leaf_;
    if (tail.size() <= l.size()) return l.substr(l.size() - tail.size()) == tail;
    if (!prefix_) return false;
    std::size_t rest = tail.size() - l.size();
    if (tail.substr(rest) != l) return false;
    if (tail[--rest] != '.') return false;
    const std::string_view p = *prefix_;
    return rest <= p.size() && p.substr(p.size() - rest) == tail.substr(0, rest);
}

bool StatName::equals(std::string_view full) const { return full.size() == size() && ends_with(full); }

int StatName::compare(const StatName& a, const StatName& b) {
    if (a.prefix_ == b.prefix_) return a.leaf_->compare(*b.leaf_);
    // Different prefixes: the names' strings compared as std::string
    // compares them (bytes as unsigned char), without assembling them: each
    // name is up to three pieces (prefix, ".", leaf), compared a common run
    // at a time with memcmp. Sorting the outputs of a big torus makes
    // millions of these.
    struct Pieces {
        std::string_view p[3];
        int n = 0;
        explicit Pieces(const StatName& x) {
            if (x.prefix_) {
                p[n++] = *x.prefix_;
                p[n++] = std::string_view(".", 1);
            }
            p[n++] = *x.leaf_;
        }
    };
    const Pieces pa(a), pb(b);
    int ia = 0, ib = 0;
    std::size_t oa = 0, ob = 0;   // offsets into the current pieces
    while (ia < pa.n && ib < pb.n) {
        const std::string_view& sa = pa.p[ia];
        const std::string_view& sb = pb.p[ib];
        const std::size_t k = std::min(sa.size() - oa, sb.size() - ob);
        if (k) {
            if (const int c = std::memcmp(sa.data() + oa, sb.data() + ob, k)) return c;
        }
        oa += k;
        ob += k;
        if (oa == sa.size()) ++ia, oa = 0;
        if (ob == sb.size()) ++ib, ob = 0;
    }
    // Every byte of the shorter equal: the shorter sorts first.
    const bool a_left = ia < pa.n, b_left = ib < pb.n;
    return a_left == b_left ? 0 : (a_left ? 1 : -1);
}

std::ostream& operator<<(std::ostream& os, const StatName& n) {
    if (n.prefix_) os << *n.prefix_ << '.';
    return os << *n.leaf_;
}

// ------------------------------------------------------------- StatRegistry

namespace {
constexpr std::uint32_t kIndexBits = 30;   // a reference: kind << 30 | (index + 1)
constexpr std::uint32_t kIndexMask = (1u << kIndexBits) - 1;
}   // namespace

const StatInfo& StatRegistry::info_of(std::uint32_t ref) const {
    const std::size_t i = (ref & kIndexMask) - 1;
    switch (ref >> kIndexBits) {
    case kCounter: return counters_[i].info;
    case kScalar: return scalars_[i].info;
    default: return histograms_[i].info;
    }
}

const void* StatRegistry::stat_of(std::uint32_t ref) const {
    const std::size_t i = (ref & kIndexMask) - 1;
    switch (ref >> kIndexBits) {
    case kCounter: return &counters_[i];
    case kScalar: return &scalars_[i];
    default: return &histograms_[i];
    }
}

namespace {
// name_hash of a StatName's string, from its pieces (FNV-1a runs byte by
// byte, so hashing the pieces in turn is hashing the whole).
std::uint32_t stat_name_hash(const StatName& n) {
    std::uint32_t h = 2166136261u;
    auto add = [&h](std::string_view s) {
        for (const char c : s) {
            h ^= static_cast<unsigned char>(c);
            h *= 16777619u;
        }
    };
    if (n.size() > n.leaf().size()) {   // a prefix, even an empty one
        add(n.prefix());
        add(".");
    }
    add(n.leaf());
    return h;
}
std::size_t home_slot(std::uint32_t h, std::size_t mask) { return (h ^ (h >> 15)) & mask; }

// A slot of the name index (names_): the hash's top 6 bits, the kind and
// index + 1 in its deque (0: empty). The tag lets a probe pass a slot of
// another name without reading that statistic (a cache miss on a big
// torus, up to eight per lookup at 3/4 full).
constexpr std::uint32_t kSlotIndexBits = 24;
constexpr std::uint32_t kSlotIndexMask = (1u << kSlotIndexBits) - 1;
constexpr std::uint32_t kSlotTagShift = 26;
std::uint32_t slot_tag(std::uint32_t h) { return h >> kSlotTagShift; }
std::uint32_t ref_of_slot(std::uint32_t slot) {
    return ((slot >> kSlotIndexBits) & 3u) << kIndexBits | (slot & kSlotIndexMask);
}
}   // namespace

std::uint32_t StatRegistry::lookup(const std::string& name, std::uint32_t h) const {
    if (names_.empty()) return 0;
    const std::size_t mask = names_.size() - 1;
    const std::uint32_t tag = slot_tag(h);
    for (std::size_t i = home_slot(h, mask);; i = (i + 1) & mask) {
        const std::uint32_t slot = names_[i];
        if (slot == 0) return 0;
        if (slot >> kSlotTagShift != tag) continue;
        const std::uint32_t ref = ref_of_slot(slot);
        if (info_of(ref).name.equals(name)) return ref;
    }
}

std::uint32_t StatRegistry::claim(const std::string& name) const {
    if (name == "units") throw std::logic_error("statistic name 'units' is reserved (stats JSON units object)");
    const std::uint32_t h = name_hash(name);
    if (lookup(name, h) != 0) throw std::logic_error("statistic '" + name + "' registered twice");
    return h;
}

void StatRegistry::reserve(std::size_t n) {
    // Doubling from the current size (1,024 at least), as index() grows it.
    std::size_t size = std::max<std::size_t>(names_.size(), 1024);
    while (n * 4 > size * 3) size *= 2;
    if (size == names_.size()) return;
    std::vector<std::uint32_t> old(size, 0);
    old.swap(names_);
    const std::size_t mask = names_.size() - 1;
    for (const std::uint32_t slot : old) {
        if (slot == 0) continue;
        std::size_t j = home_slot(stat_name_hash(info_of(ref_of_slot(slot)).name), mask);
        while (names_[j] != 0) j = (j + 1) & mask;
        names_[j] = slot;
    }
}

void StatRegistry::index(std::uint32_t h, int kind, std::size_t i) {
    if (i + 1 > kSlotIndexMask)
        throw std::length_error("more than 2^24 - 1 statistics of one kind (counters, scalars or histograms)");
    if ((named_ + 1) * 4 > names_.size() * 3) reserve(named_ + 1);
    const std::size_t mask = names_.size() - 1;
    std::size_t j = home_slot(h, mask);
    while (names_[j] != 0) j = (j + 1) & mask;
    names_[j] = slot_tag(h) << kSlotTagShift | static_cast<std::uint32_t>(kind) << kSlotIndexBits |
                static_cast<std::uint32_t>(i + 1);
    ++named_;
}

Counter& StatRegistry::counter(const std::string& name, const std::string& unit, const std::string& help) {
    const std::uint32_t h = claim(name);
    counters_.emplace_back();
    counters_.back().info = StatInfo{name, unit, help};
    index(h, kCounter, counters_.size() - 1);
    return counters_.back();
}

Scalar& StatRegistry::scalar(const std::string& name, const std::string& unit, const std::string& help,
                             Scalar::Kind kind) {
    const std::uint32_t h = claim(name);
    scalars_.emplace_back();
    scalar_level_.push_back(kind == Scalar::Kind::Level);
    scalars_.back().info = StatInfo{name, unit, help};
    index(h, kScalar, scalars_.size() - 1);
    return scalars_.back();
}

Histogram& StatRegistry::histogram(const std::string& name, const std::string& unit, const std::string& help) {
    const std::uint32_t h = claim(name);
    histograms_.emplace_back();
    histograms_.back().info = StatInfo{name, unit, help};
    index(h, kHistogram, histograms_.size() - 1);
    return histograms_.back();
}

// ---------------------------------------------------------------- Regions

void StatRegistry::begin_window() {
    if (window_begun_) throw std::logic_error("statistics: the region began twice");
    window_begun_ = true;
    counters_at_begin_.reserve(counters_.size());
    for (const Counter& c : counters_) counters_at_begin_.push_back(c.value());
    scalars_at_begin_.reserve(scalars_.size());
    for (const Scalar& s : scalars_) scalars_at_begin_.push_back(s.value());
    histograms_before_.reserve(histograms_.size());
    for (Histogram& h : histograms_) {
        histograms_before_.push_back(std::move(h));
        Histogram empty;
        empty.info = histograms_before_.back().info;
        h = std::move(empty);
    }
}

void StatRegistry::end_window() {
    if (!window_begun_ || window_ended_)
        throw std::logic_error(window_begun_ ? "statistics: the region ended twice"
                                             : "statistics: the region ended before it began");
    window_ended_ = true;
    counters_at_end_.reserve(counters_.size());
    for (const Counter& c : counters_) counters_at_end_.push_back(c.value());
    scalars_at_end_.reserve(scalars_.size());
    for (const Scalar& s : scalars_) scalars_at_end_.push_back(s.value());
    histograms_in_window_.reserve(histograms_.size());
    for (std::size_t i = 0; i < histograms_.size(); ++i) {
        histograms_in_window_.push_back(histograms_[i]);
        if (i < histograms_before_.size()) histograms_[i].merge(histograms_before_[i]);
    }
    std::vector<Histogram>().swap(histograms_before_);
}

StatRegistry StatRegistry::window() const {
    if (!window_ended_) throw std::logic_error("statistics: window() before the region ended");
    StatRegistry w;
    w.declared_counters_ = declared_counters_;
    w.declared_histograms_ = declared_histograms_;
    w.reserve(named_);
    // A statistic's reading at an end of the region: 0 if it did not exist yet.
    auto at = [](const auto& v, std::size_t i) { return i < v.size() ? v[i] : 0; };
    for (std::size_t i = 0; i < counters_.size(); ++i) {
        const Counter& c = counters_[i];
        const std::uint64_t end = at(counters_at_end_, i), begin = at(counters_at_begin_, i);
        w.counter(c.info.name.str(), c.info.unit(), c.info.help()).inc(end - begin);
    }
    for (std::size_t i = 0; i < scalars_.size(); ++i) {
        const Scalar& s = scalars_[i];
        const bool level = scalar_level_[i];
        Scalar& v =
            w.scalar(s.info.name.str(), s.info.unit(), s.info.help(), level ? Scalar::Kind::Level : Scalar::Kind::Sum);
        if (level) v.set(std::numeric_limits<double>::quiet_NaN());
        else if (i < scalars_at_end_.size()) v.set(at(scalars_at_end_, i) - at(scalars_at_begin_, i));
    }
    for (std::size_t i = 0; i < histograms_.size(); ++i) {
        Histogram& h =
            w.histogram(histograms_[i].info.name.str(), histograms_[i].info.unit(), histograms_[i].info.help());
        if (i < histograms_in_window_.size()) {
            const StatInfo info = h.info;
            h = histograms_in_window_[i];
            h.info = info;
        }
    }
    return w;
}

const Counter* StatRegistry::find_counter(const std::string& name) const {
    const std::uint32_t ref = lookup(name, name_hash(name));
    if (ref == 0 || ref >> kIndexBits != kCounter) return nullptr;
    return static_cast<const Counter*>(stat_of(ref));
}

const Scalar* StatRegistry::find_scalar(const std::string& name) const {
    const std::uint32_t ref = lookup(name, name_hash(name));
    if (ref == 0 || ref >> kIndexBits != kScalar) return nullptr;
    return static_cast<const Scalar*>(stat_of(ref));
}

std::vector<const Histogram*> StatRegistry::histograms() const {
    std::vector<const Histogram*> out;
    for (const Histogram& h : histograms_) out.push_back(&h);
    std::sort(out.begin(), out.end(),
              [](const Histogram* a, const Histogram* b) { return a->info.name < b->info.name; });
    return out;
}

const Histogram* StatRegistry::find_histogram(const std::string& name) const {
    const std::uint32_t ref = lookup(name, name_hash(name));
    if (ref == 0 || ref >> kIndexBits != kHistogram) return nullptr;
    return static_cast<const Histogram*>(stat_of(ref));
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
    for (const Histogram& h : histograms_)
        if (h.info.name.ends_with(tail)) all.merge(h);
    return all;
}

namespace {
std::string_view leaf_of(std::string_view name) {
    const std::size_t dot = name.rfind('.');
    return dot == std::string_view::npos ? name : name.substr(dot + 1);
}
}   // namespace

template <class T>
std::pair<const std::uint32_t*, const std::uint32_t*> StatRegistry::LeafIndex<T>::with_leaf(const std::deque<T>& all,
                                                                                            const std::string& suffix) {
    if (!built || indexed != all.size()) {
        // Counted, then placed: each last component's statistics together,
        // in registration order.
        by_leaf.clear();
        for (const T& s : all) ++by_leaf[s.info.name.leaf()].end;
        std::uint32_t at = 0;
        for (auto& [leaf, r] : by_leaf) {
            const std::uint32_t n = r.end;
            r.begin = r.end = at;
            at += n;
        }
        order.assign(all.size(), 0);
        for (std::size_t i = 0; i < all.size(); ++i)
            order[by_leaf[all[i].info.name.leaf()].end++] = static_cast<std::uint32_t>(i);
        indexed = all.size();
        built = true;
    }
    auto it = by_leaf.find(leaf_of(suffix));
    if (it == by_leaf.end()) return {nullptr, nullptr};
    return {order.data() + it->second.begin, order.data() + it->second.end};
}

namespace {
// The statistics whose name ends with "." + suffix all have the suffix's
// last component as their own: only those are compared, in registration
// order (the order of a sum of doubles stays that of a scan of them all).
template <typename T, typename Sum>
Sum sum_by_suffix(const std::deque<T>& all, std::pair<const std::uint32_t*, const std::uint32_t*> candidates,
                  const std::string& suffix, Sum total) {
    const std::string tail = "." + suffix;
    for (const std::uint32_t* i = candidates.first; i != candidates.second; ++i)
        if (all[*i].info.name.ends_with(tail)) total += all[*i].value();
    return total;
}

template <typename T>
std::size_t count_by_suffix(const std::deque<T>& all, std::pair<const std::uint32_t*, const std::uint32_t*> candidates,
                            const std::string& suffix) {
    const std::string tail = "." + suffix;
    std::size_t n = 0;
    for (const std::uint32_t* i = candidates.first; i != candidates.second; ++i)
        if (all[*i].info.name.ends_with(tail)) ++n;
    return n;
}

template <typename T>
std::size_t count_by_suffix(const std::deque<T>& stats, const std::string& suffix) {
    const std::string tail = "." + suffix;
    std::size_t n = 0;
    for (const T& c : stats)
        if (c.info.name.ends_with(tail)) ++n;
    return n;
}

std::logic_error missing(const char* kind, const std::string& suffix) {
    return std::logic_error("no " + std::string(kind) + " named *." + suffix +
                            " is registered: a figure built from it would read 0 without cause");
}
}   // namespace

void StatRegistry::release_sum_indexes() const {
    counter_leaves_.release();
    scalar_leaves_.release();
}

std::uint64_t StatRegistry::sum_counters(const std::string& suffix) const {
    return sum_by_suffix(counters_, counter_leaves_.with_leaf(counters_, suffix), suffix, std::uint64_t{0});
}

double StatRegistry::sum_scalars(const std::string& suffix) const {
    return sum_by_suffix(scalars_, scalar_leaves_.with_leaf(scalars_, suffix), suffix, 0.0);
}

std::size_t StatRegistry::count_counters(const std::string& suffix) const {
    return count_by_suffix(counters_, counter_leaves_.with_leaf(counters_, suffix), suffix);
}
std::size_t StatRegistry::count_scalars(const std::string& suffix) const {
    return count_by_suffix(scalars_, scalar_leaves_.with_leaf(scalars_, suffix), suffix);
}
std::size_t StatRegistry::count_histograms(const std::string& suffix) const {
    return count_by_suffix(histograms_, suffix);
}

void StatRegistry::declare_counter(const std::string& path) {
    if (std::find(declared_counters_.begin(), declared_counters_.end(), path) == declared_counters_.end())
        declared_counters_.push_back(path);
}

void StatRegistry::declare_histogram(const std::string& path) {
    if (std::find(declared_histograms_.begin(), declared_histograms_.end(), path) == declared_histograms_.end())
        declared_histograms_.push_back(path);
}

bool StatRegistry::declares(const std::vector<std::string>& paths, const std::string& suffix) {
    const std::string tail = "." + suffix;
    for (const std::string& p : paths)
        if (p == suffix || (p.size() > tail.size() && p.compare(p.size() - tail.size(), tail.size(), tail) == 0))
            return true;
    return false;
}

std::uint64_t StatRegistry::require_sum_counters(const std::string& suffix) const {
    if (count_counters(suffix) == 0 && !declares(declared_counters_, suffix)) throw missing("counter", suffix);
    return sum_counters(suffix);
}

double StatRegistry::require_sum_scalars(const std::string& suffix) const {
    if (count_scalars(suffix) == 0) throw missing("scalar", suffix);
    return sum_scalars(suffix);
}

Histogram StatRegistry::require_merge_histograms(const std::string& suffix) const {
    if (count_histograms(suffix) == 0 && !declares(declared_histograms_, suffix)) throw missing("histogram", suffix);
    return merge_histograms(suffix);
}

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
    struct Key {
        std::string_view text;   // without the dot
        bool dotted;
        bool operator==(const Key& o) const { return dotted == o.dotted && text == o.text; }
    };
    struct KeyHash {
        std::size_t operator()(const Key& k) const { return std::hash<std::string_view>()(k.text) ^ k.dotted; }
    };
    auto key_of = [](const StatName& n) {
        const std::string_view p = n.prefix();
        if (!p.data()) return Key{n.leaf(), false};
        return Key{p.substr(0, p.find('.')), true};
    };
    // <0, 0, >0 as the keys' texts (with the dot) compare.
    auto compare_keys = [](const Key& a, const Key& b) {
        const std::size_t k = std::min(a.text.size(), b.text.size());
        if (const int c = a.text.substr(0, k).compare(b.text.substr(0, k))) return c;
        // One text begins the other: the next character ('.' or none) decides.
        auto at = [](const Key& x, std::size_t i) {
            return i < x.text.size()                ? int(static_cast<unsigned char>(x.text[i]))
                   : i == x.text.size() && x.dotted ? '.'
                                                    : -1;
        };
        return at(a, k) - at(b, k);
    };
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
    return Entry{&info.name, static_cast<int>(ref >> kIndexBits), stat_of(ref), &info.unit()};
}

void StatRegistry::write_json(std::ostream& os) const {
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
    std::size_t name_w = 0, value_w = 0;
    std::string v;
    for (const std::uint32_t ref : refs) {
        const Entry e = entry(ref);
        name_w = std::max(name_w, e.name->size());
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
        if (!e.unit->empty()) {
            out.append(value_w - (out.size() - at) + 2, ' ');
            out += *e.unit;
        }
        out += '\n';
        w.entry_done();
    }
}

}   // namespace vrdmasim
