// Statistics: the registry (names, lookups, regions, sums over nodes).
// Histograms are in histogram.cpp, names in stat_name.cpp, the outputs in
// stats_output.cpp.
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

namespace stats_detail {

// FNV-1a: the statistics index's hash of a name.
std::uint32_t name_hash(std::string_view s) {
    std::uint32_t h = 2166136261u;
    for (const char c : s) {
        h ^= static_cast<unsigned char>(c);
        h *= 16777619u;
    }
    return h;
}

}   // namespace stats_detail

using namespace stats_detail;

// ------------------------------------------------------------- StatRegistry

const StatInfo& StatRegistry::info_of(std::uint32_t ref) const {
    const std::size_t i = (ref & kIndexMask) - 1;
    switch (ref >> kIndexBits) {
    case kCounter: return counter_info_[i];
    case kScalar: return scalar_info_[i];
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
    Counter& c = counters_.push_back();
    counter_info_.emplace_back(name, unit, help);
    index(h, kCounter, counters_.size() - 1);
    return c;
}

Scalar& StatRegistry::scalar(const std::string& name, const std::string& unit, const std::string& help,
                             Scalar::Kind kind) {
    const std::uint32_t h = claim(name);
    Scalar& s = scalars_.push_back();
    scalar_level_.push_back(kind == Scalar::Kind::Level);
    scalar_info_.emplace_back(name, unit, help);
    index(h, kScalar, scalars_.size() - 1);
    return s;
}

Histogram& StatRegistry::histogram(const std::string& name, const std::string& unit, const std::string& help) {
    const std::uint32_t h = claim(name);
    histograms_.emplace_back();
    histograms_.back().info = StatInfo{name, unit, help};
    index(h, kHistogram, histograms_.size() - 1);
    return histograms_.back();
}

// ---------------------------------------------------------------- Spreads

Spread::Spread(Scalar& sum, const StatInfo& info, std::size_t index, const std::vector<std::uint64_t>& readings,
               const bool& read)
    : sum_(&sum), info_(&info), read_(&read), index_(index) {
    for (std::uint64_t at : readings) readings_.emplace_back(at, 0.0);
}

double Spread::share(const Part& p, std::uint64_t at) {
    if (at >= p.to) return p.amount;
    if (at <= p.from) return 0.0;
    return p.amount * (static_cast<double>(at - p.from) / static_cast<double>(p.to - p.from));
}

void Spread::add_for_readings(double amount, std::uint64_t from, std::uint64_t to, std::uint64_t now) {
    if (from > to) throw std::logic_error("statistics: " + info_->name.str() + " spread over a backward interval");
    const Part part{amount, from, to};
    // Readings already taken get their part of it (an amount added late,
    // for an interval that began before them).
    for (auto& r : readings_) r.second += share(part, r.first);
    // A reading still to come is at or after `now`: an amount wholly before
    // it counts whole there, and need not be kept.
    if (to <= now) return;
    pending_.push_back(part);
    if (pending_.size() < prune_at_) return;
    std::size_t kept = 0;
    for (const Part& p : pending_)
        if (p.to > now) pending_[kept++] = p;
    pending_.resize(kept);
    prune_at_ = std::max<std::size_t>(64, 2 * kept);
}

void Spread::take_reading(std::uint64_t at) {
    // Everything added so far, less what of the amounts in flight lies after `at`.
    double before = sum_->value();
    std::size_t kept = 0;
    for (const Part& p : pending_) {
        before -= p.amount - share(p, at);
        if (p.to > at) pending_[kept++] = p;
    }
    pending_.resize(kept);
    readings_.emplace_back(at, before);
}

Spread& StatRegistry::spread(const std::string& name, const std::string& unit, const std::string& help) {
    Scalar& sum = scalar(name, unit, help, Scalar::Kind::Sum);
    spreads_.emplace_back(sum, scalar_info_.back(), scalars_.size() - 1, readings_, *will_read_);
    return spreads_.back();
}

void StatRegistry::will_read() {
    // (Amounts added before would be missing from the readings' parts.)
    for (const Spread& sp : spreads_)
        if (sp.sum().value() != 0)
            throw std::logic_error("statistics: a region announced after " + info(sp.sum()).name.str() +
                                   " was added to");
    *will_read_ = true;
}

// ------------------------------------------------- Counts and samples at a time

std::uint32_t StatRegistry::index_of(const std::string& name, int kind) const {
    const std::uint32_t ref = lookup(name, name_hash(name));
    if (ref == 0 || static_cast<int>(ref >> kIndexBits) != kind)
        throw std::logic_error("statistics: " + name + " is not registered here");
    return (ref & kIndexMask) - 1;
}

std::uint32_t StatRegistry::held_index(const Histogram& h) {
    const auto [it, fresh] = held_index_.try_emplace(&h, 0);
    if (fresh) it->second = index_of(h.info.name.str(), kHistogram);
    return it->second;
}

void StatRegistry::count_held(Counter& c, std::uint64_t n, std::uint64_t at, std::uint64_t now) {
    hold(Held{at, static_cast<std::uint32_t>(counters_.index_of(&c)), false, static_cast<double>(n)}, now);
}

void StatRegistry::sample_at(Histogram& h, double v, std::uint64_t at, std::uint64_t now) {
    if (!*will_read_) return h.add(v);
    hold(Held{at, held_index(h), true, v}, now);
}

void StatRegistry::hold(const Held& e, std::uint64_t now) {
    // At or before the kernel's time: every reading to come is at or after
    // it, so it counts before them all (after those held for its time or
    // before: flush_timed's order).
    if (e.at <= now) {
        if (!held_.empty()) flush_timed(e.at);
        return apply(e);
    }
    held_.push_back(e);
    if (held_.size() >= held_prune_at_) {
        flush_timed(now);
        held_prune_at_ = std::max<std::size_t>(64, 2 * held_.size());
    }
}

void StatRegistry::flush_timed(std::uint64_t upto) {
    // Added in the order of their times (ties: in the order they were
    // held), however many were held and whenever they were flushed: a
    // histogram's mean depends on the order of its samples, in its last
    // bits, and that order must not depend on how many other counts were
    // held meanwhile (which sets when hold() flushes).
    std::size_t kept = 0;
    due_.clear();
    for (const Held& e : held_) {
        if (e.at <= upto) due_.push_back(e);
        else held_[kept++] = e;
    }
    held_.resize(kept);
    std::stable_sort(due_.begin(), due_.end(), [](const Held& a, const Held& b) { return a.at < b.at; });
    for (const Held& e : due_) apply(e);
}

void StatRegistry::apply(const Held& e) {
    const bool before_begin = window_begun_ && e.at <= readings_[0];
    const bool before_end = window_ended_ && e.at <= readings_[1];
    if (!e.sample) {
        const auto n = static_cast<std::uint64_t>(e.value);
        counters_[e.index].inc(n);
        // A reading taken at or after its time counts it.
        const auto bump = [&](std::vector<std::uint64_t>& at_reading) {
            if (e.index >= at_reading.size()) at_reading.resize(e.index + 1, 0);
            at_reading[e.index] += n;
        };
        if (before_begin) bump(counters_at_begin_);
        if (before_end) bump(counters_at_end_);
        return;
    }
    const auto part = [&](std::vector<Histogram>& v) -> Histogram& {
        while (v.size() <= e.index) {
            v.emplace_back();
            v.back().info = histograms_[v.size() - 1].info;
        }
        return v[e.index];
    };
    if (window_begun_ && !window_ended_ && before_begin) {
        part(histograms_before_).add(e.value);   // the region's histogram is the live one now
        return;
    }
    histograms_[e.index].add(e.value);
    if (window_ended_ && !before_begin && before_end) part(histograms_in_window_).add(e.value);
}

void StatRegistry::require_flushed(const char* what) const {
    if (!held_.empty())
        throw std::logic_error(std::string("statistics: ") + what + " with " + std::to_string(held_.size()) +
                               " count(s) or sample(s) still held (flush_timed() at the run's end)");
}

// ---------------------------------------------------------------- Regions

void StatRegistry::begin_window(std::uint64_t at) {
    if (window_begun_) throw std::logic_error("statistics: the region began twice");
    if (!*will_read_ && !spreads_.empty())
        throw std::logic_error("statistics: a region began that was not announced (will_read)");
    flush_timed(at);
    window_begun_ = true;
    readings_.push_back(at);
    for (Spread& sp : spreads_) sp.take_reading(at);
    counters_at_begin_.reserve(counters_.size());
    for (std::size_t i = 0; i < counters_.size(); ++i) counters_at_begin_.push_back(counters_[i].value());
    scalars_at_begin_.reserve(scalars_.size());
    for (std::size_t i = 0; i < scalars_.size(); ++i) scalars_at_begin_.push_back(scalars_[i].value());
    histograms_before_.reserve(histograms_.size());
    for (Histogram& h : histograms_) {
        histograms_before_.push_back(std::move(h));
        Histogram empty;
        empty.info = histograms_before_.back().info;
        h = std::move(empty);
    }
}

void StatRegistry::end_window(std::uint64_t at) {
    if (!window_begun_ || window_ended_)
        throw std::logic_error(window_begun_ ? "statistics: the region ended twice"
                                             : "statistics: the region ended before it began");
    flush_timed(at);
    readings_.push_back(at);
    for (Spread& sp : spreads_) sp.take_reading(at);
    window_ended_ = true;
    counters_at_end_.reserve(counters_.size());
    for (std::size_t i = 0; i < counters_.size(); ++i) counters_at_end_.push_back(counters_[i].value());
    scalars_at_end_.reserve(scalars_.size());
    for (std::size_t i = 0; i < scalars_.size(); ++i) scalars_at_end_.push_back(scalars_[i].value());
    histograms_in_window_.reserve(histograms_.size());
    for (std::size_t i = 0; i < histograms_.size(); ++i) {
        histograms_in_window_.push_back(histograms_[i]);
        if (i < histograms_before_.size()) histograms_[i].merge(histograms_before_[i]);
    }
    std::vector<Histogram>().swap(histograms_before_);
}

StatRegistry StatRegistry::window() const {
    if (!window_ended_) throw std::logic_error("statistics: window() before the region ended");
    require_flushed("window()");
    StatRegistry w;
    w.declared_counters_ = declared_counters_;
    w.declared_histograms_ = declared_histograms_;
    w.reserve(named_);
    // A statistic's reading at an end of the region: 0 if it did not exist yet.
    auto at = [](const auto& v, std::size_t i) { return i < v.size() ? v[i] : 0; };
    for (std::size_t i = 0; i < counters_.size(); ++i) {
        const StatInfo& c = counter_info_[i];
        const std::uint64_t end = at(counters_at_end_, i), begin = at(counters_at_begin_, i);
        w.counter(c.name.str(), c.unit(), c.help()).inc(end - begin);
    }
    // A Spread's scalar: its two readings, which amounts added after them
    // (late, for intervals that began before them) have completed.
    std::vector<const Spread*> spread_of(scalars_.size(), nullptr);
    for (const Spread& sp : spreads_) spread_of[sp.scalar_index()] = &sp;
    for (std::size_t i = 0; i < scalars_.size(); ++i) {
        const StatInfo& s = scalar_info_[i];
        const bool level = scalar_level_[i];
        Scalar& v = w.scalar(s.name.str(), s.unit(), s.help(), level ? Scalar::Kind::Level : Scalar::Kind::Sum);
        if (level) v.set(std::numeric_limits<double>::quiet_NaN());
        else if (spread_of[i]) v.set(spread_of[i]->reading(1) - spread_of[i]->reading(0));
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

std::vector<const Counter*> StatRegistry::counters_containing(const std::string& part) const {
    std::vector<std::pair<std::string, std::size_t>> found;
    for (std::size_t i = 0; i < counters_.size(); ++i)
        if (std::string name = counter_info_[i].name.str(); name.find(part) != std::string::npos)
            found.emplace_back(std::move(name), i);
    std::sort(found.begin(), found.end());
    std::vector<const Counter*> out;
    for (const auto& f : found) out.push_back(&counters_[f.second]);
    return out;
}

const Histogram* StatRegistry::find_histogram(const std::string& name) const {
    const std::uint32_t ref = lookup(name, name_hash(name));
    if (ref == 0 || ref >> kIndexBits != kHistogram) return nullptr;
    return static_cast<const Histogram*>(stat_of(ref));
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

std::pair<const std::uint32_t*, const std::uint32_t*> StatRegistry::LeafIndex::with_leaf(
    const std::deque<StatInfo>& all, const std::string& suffix) {
    if (!built || indexed != all.size()) {
        // Counted, then placed: each last component's statistics together,
        // in registration order.
        by_leaf.clear();
        for (const StatInfo& s : all) ++by_leaf[s.name.leaf()].end;
        std::uint32_t at = 0;
        for (auto& [leaf, r] : by_leaf) {
            const std::uint32_t n = r.end;
            r.begin = r.end = at;
            at += n;
        }
        order.assign(all.size(), 0);
        for (std::size_t i = 0; i < all.size(); ++i)
            order[by_leaf[all[i].name.leaf()].end++] = static_cast<std::uint32_t>(i);
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
Sum sum_by_suffix(const StatStore<T>& all, const std::deque<StatInfo>& infos,
                  std::pair<const std::uint32_t*, const std::uint32_t*> candidates, const std::string& suffix,
                  Sum total) {
    const std::string tail = "." + suffix;
    for (const std::uint32_t* i = candidates.first; i != candidates.second; ++i)
        if (infos[*i].name.ends_with(tail)) total += all[*i].value();
    return total;
}

std::size_t count_by_suffix(const std::deque<StatInfo>& infos,
                            std::pair<const std::uint32_t*, const std::uint32_t*> candidates,
                            const std::string& suffix) {
    const std::string tail = "." + suffix;
    std::size_t n = 0;
    for (const std::uint32_t* i = candidates.first; i != candidates.second; ++i)
        if (infos[*i].name.ends_with(tail)) ++n;
    return n;
}

std::size_t count_by_suffix(const std::deque<Histogram>& stats, const std::string& suffix) {
    const std::string tail = "." + suffix;
    std::size_t n = 0;
    for (const Histogram& c : stats)
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
    return sum_by_suffix(counters_, counter_info_, counter_leaves_.with_leaf(counter_info_, suffix), suffix,
                         std::uint64_t{0});
}

double StatRegistry::sum_scalars(const std::string& suffix) const {
    return sum_by_suffix(scalars_, scalar_info_, scalar_leaves_.with_leaf(scalar_info_, suffix), suffix, 0.0);
}

std::size_t StatRegistry::count_counters(const std::string& suffix) const {
    return count_by_suffix(counter_info_, counter_leaves_.with_leaf(counter_info_, suffix), suffix);
}
std::size_t StatRegistry::count_scalars(const std::string& suffix) const {
    return count_by_suffix(scalar_info_, scalar_leaves_.with_leaf(scalar_info_, suffix), suffix);
}
std::vector<const Scalar*> StatRegistry::scalars_ending(const std::string& suffix) const {
    const std::string tail = "." + suffix;
    std::vector<const Scalar*> out;
    const auto candidates = scalar_leaves_.with_leaf(scalar_info_, suffix);
    for (const std::uint32_t* i = candidates.first; i != candidates.second; ++i)
        if (scalar_info_[*i].name.ends_with(tail)) out.push_back(&scalars_[*i]);
    return out;
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

}   // namespace vrdmasim

namespace vrdmasim {

namespace {
enum class Packed : std::uint8_t { Counter = 1, Sum = 2, Level = 3, Histogram = 4 };

}   // namespace

Bytes StatRegistry::pack() const {
    require_flushed("pack()");
    Bytes out;
    ByteWriter w(out);
    auto text = [&w](const std::string& t) { w.put_bytes(reinterpret_cast<const unsigned char*>(t.data()), t.size()); };
    auto head = [&](Packed kind, const StatInfo& info) {
        w.put(kind);
        text(info.name.str());
        text(info.unit());
        text(info.help());
    };
    for (std::size_t i = 0; i < counters_.size(); ++i) {
        head(Packed::Counter, counter_info_[i]);
        w.put(counters_[i].value());
    }
    for (std::size_t i = 0; i < scalars_.size(); ++i) {
        head(scalar_level_[i] ? Packed::Level : Packed::Sum, scalar_info_[i]);
        w.put(scalars_[i].value());
    }
    for (const Histogram& h : histograms_) {
        head(Packed::Histogram, h.info);
        h.pack(w);
    }
    return out;
}

void StatRegistry::merge_packed(const Bytes& bytes) {
    ByteReader in(bytes);
    auto text = [&in] {
        std::string t;
        in.get_bytes(t);
        return t;
    };
    while (!in.done()) {
        const auto kind = in.get<Packed>();
        const std::string name = text(), unit = text(), help = text();
        switch (kind) {
        case Packed::Counter: {
            const auto v = in.get<std::uint64_t>();
            const Counter* c = find_counter(name);
            (c ? const_cast<Counter&>(*c) : counter(name, unit, help)).inc(v);
            break;
        }
        case Packed::Sum:
        case Packed::Level: {
            const auto v = in.get<double>();
            const Scalar* s = find_scalar(name);
            if (!s) {
                scalar(name, unit, help, kind == Packed::Level ? Scalar::Kind::Level : Scalar::Kind::Sum).set(v);
            } else if (kind == Packed::Level) {
                if (v > s->value()) const_cast<Scalar&>(*s).set(v);
            } else {
                const_cast<Scalar&>(*s).add(v);
            }
            break;
        }
        case Packed::Histogram: {
            const Histogram* h = find_histogram(name);
            (h ? const_cast<Histogram&>(*h) : histogram(name, unit, help)).merge_packed(in);
            break;
        }
        default: throw std::logic_error("packed statistics of an unknown kind");
        }
    }
}

}   // namespace vrdmasim
