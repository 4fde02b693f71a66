// Statistics: counters, scalars and histograms, registered by each model
// under its hierarchical SystemC name ("node1.dram.reads").
//
// Part of the simulator core; knows nothing about models.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <deque>
#include <limits>
#include <map>
#include <memory>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <unordered_map>
#include <vector>

#include "src/core/bytes.hpp"
#include "src/core/stat_store.hpp"

namespace vrdmasim {

// A statistic's hierarchical name ("node1.dram.read_bytes"), kept as its
// prefix ("node1.dram") and its last component ("read_bytes"), each interned
// (kept once for the whole process, until it exits): a model registers many statistics under one prefix, and
// the same last components on every node, so a name costs two pointers
// instead of a string of its own (on a torus of thousands of nodes, names
// were the largest part of the statistics' memory). A name without a dot
// has no prefix.
class StatName {
public:
    StatName();
    StatName(const std::string& full);   // NOLINT: implicit, assigns as a string
    StatName(const char* full);   // NOLINT
    std::string str() const;
    operator std::string() const { return str(); }   // NOLINT
    std::string_view prefix() const { return prefix_ ? std::string_view(*prefix_) : std::string_view(); }
    std::string_view leaf() const { return *leaf_; }
    std::size_t size() const;
    // Whether the name ends with `tail` (as its string would).
    bool ends_with(std::string_view tail) const;
    // Whether the name is `full`.
    bool equals(std::string_view full) const;
    // <0, 0, >0 as the two names' strings compare.
    static int compare(const StatName& a, const StatName& b);
    friend bool operator==(const StatName& a, const std::string& b) { return a.equals(b); }
    friend bool operator==(const StatName& a, const char* b) { return a.equals(b); }
    friend bool operator<(const StatName& a, const StatName& b) { return compare(a, b) < 0; }
    friend std::ostream& operator<<(std::ostream& os, const StatName& n);

private:
    const std::string* prefix_;   // in the pool of interned texts; null: no dot in the name
    const std::string* leaf_;
};

// A statistic's name, unit ("B", "us", "" ...) and one line of help. Each
// model registers the same statistics on every node, so the (unit, help)
// pair is interned like the name's pieces: one pointer per statistic
// instead of a copy of each text (on a torus of 16,384 nodes, texts were a
// third of the statistics' memory). The texts live until the process exits.
class StatInfo {
public:
    StatInfo();
    StatInfo(const StatName& name, const std::string& unit, const std::string& help);
    StatName name;   // hierarchical: "node1.dram.read_bytes"
    const std::string& unit() const { return texts_->unit; }
    const std::string& help() const { return texts_->help; }
    void set_unit(const std::string& unit);   // keeps the help
    void set_help(const std::string& help);   // keeps the unit

    struct Texts {
        std::string unit, help;
    };

private:
    const Texts* texts_;   // in the process-wide pool
};

// A counter's and a scalar's value alone: its name, unit and help are the
// registry's (StatRegistry::info), kept apart so that a model's values
// share cache lines (stat_store.hpp).
class Counter {
public:
    void inc(std::uint64_t n = 1) { value_ += n; }
    std::uint64_t value() const { return value_; }

private:
    std::uint64_t value_ = 0;
};

class Scalar {
public:
    // How a scalar reads over a part of the run (a region of interest:
    // StatRegistry::window()). A Sum grows with the activity it measures
    // (busy time, time waited): its value over a region is its growth
    // there. A Level is a state or a figure of the whole run (a peak, a
    // gauge, a ratio computed at the end): no difference of two readings
    // gives it over a region, so a region has none (NaN; stats.json null,
    // an empty summary cell). Every registration says which.
    enum class Kind : std::uint8_t { Sum, Level };
    void set(double v) { value_ = v; }
    void add(double v) { value_ += v; }
    double value() const { return value_; }

private:
    double value_ = 0;
};

// A Sum scalar fed with amounts spread evenly over simulated intervals (a
// packet's payload over its time on a wire), so that its reading at a
// simulated time T (a region's end: StatRegistry::begin_window) holds
// exactly the parts of the amounts that came before T: those added before
// the reading (by models running ahead of T: loosely timed models add at
// their local time, at or after the kernel's) and those added after it for
// intervals that began before T. The scalar itself holds every amount
// added. Times are in the simulation's resolution units (sc_time::value()).
// Memory: the amounts whose interval ends after the kernel's time when
// they are added (in flight), not one per amount; and one value per reading.
class Spread {
public:
    Spread(Scalar& sum, const StatInfo& info, std::size_t index, const std::vector<std::uint64_t>& readings,
           const bool& read);
    // `amount` over [from, to] (from <= to; to == from: at that instant);
    // `now` is the kernel's time (no reading not yet taken can be before it).
    // Without readings to come (StatRegistry::will_read), a plain sum.
    void add(double amount, std::uint64_t from, std::uint64_t to, std::uint64_t now) {
        sum_->add(amount);
        if (*read_) add_for_readings(amount, from, to, now);
    }
    // Takes a reading at `at` (at or after the kernel's time of every add
    // so far); its value is reading(k), k in the order they were taken.
    void take_reading(std::uint64_t at);
    double reading(std::size_t k) const { return readings_[k].second; }
    std::size_t readings() const { return readings_.size(); }
    std::size_t scalar_index() const { return index_; }
    const Scalar& sum() const { return *sum_; }

private:
    struct Part {
        double amount;
        std::uint64_t from, to;
    };
    static double share(const Part& p, std::uint64_t at);
    void add_for_readings(double amount, std::uint64_t from, std::uint64_t to, std::uint64_t now);
    Scalar* sum_;
    const StatInfo* info_;   // the scalar's, in its registry
    const bool* read_;   // the registry's will_read()
    std::size_t index_;   // the scalar's, in its registry
    std::vector<Part> pending_;
    std::size_t prune_at_ = 64;
    std::vector<std::pair<std::uint64_t, double>> readings_;   // (time, amount before it)
};

// Exact count, sum, min and max; quantiles from log-linear buckets (each
// power of two split into 128 sub-buckets, so a quantile is within 0.8 % of
// the true sample value). Samples must be >= 0 (negative samples are clamped
// to 0 and counted in clamped()).
//
// Memory: nothing until the first nonzero sample; then the buckets are kept
// in chunks of kChunk counts, allocated as samples first reach them, behind
// a directory of one 4-byte entry per chunk spanned (min to max). A model
// registers histograms per link, DRAM and engine, most of which see few
// distinct values: they cost a few chunks, not 128 counts per power of two
// spanned. A chunk's counts are as narrow as its largest needs: one byte
// each at first, two, four or eight once one of them outgrows that (a
// link's few thousand samples spread over some hundred buckets, so most
// chunks stay at 16 bytes, an eighth of 8-byte counts; the counts, and so
// every quantile and bucket, are exact at any width). Adding a sample is a
// few integer operations on its bits.
class Histogram {
public:
    void add(double v) {
        if (v > 0 && v < kLargeFinite) {   // the usual case; not NaN, not a clamp
            if (count_ == 0) {
                min_ = max_ = v;
            } else {
                if (v < min_) min_ = v;
                if (v > max_) max_ = v;
            }
            ++count_;
            if (exact_) add_exact(v);
            else sum_ += v;
            bump(key_of(v));
            return;
        }
        if (v == 0 && count_ != 0) {   // a queue without wait: common too
            if (v < min_) min_ = v;
            ++count_;
            sum_ += v;
            ++zeros_;
            return;
        }
        add_rare(v);
    }
    std::uint64_t count() const { return count_; }
    double sum() const { return sum_; }
    double mean() const { return count_ ? sum_ / count_ : 0.0; }
    double min() const { return count_ ? min_ : 0.0; }
    double max() const { return count_ ? max_ : 0.0; }
    // q in [0,1]; 0 with no samples. Returns a value within [min, max].
    double quantile(double q) const;
    // quantile(qa) and quantile(qb) in one pass over the buckets (the
    // outputs' p50 and p99 of every histogram).
    std::pair<double, double> quantile_pair(double qa, double qb) const;
    std::uint64_t clamped() const { return clamped_; }
    // Keep the sum exact (before any sample): the sum of samples in fixed
    // point (2^-64), whatever their order, so that a histogram every node
    // adds to (a workload's latencies) has the same sum when a partitioned
    // run's ranks add their samples apart and merge them (docs/scaling.md).
    // A double's sum depends on the order of its additions. Samples of
    // 2^62 or more are summed as doubles (then in order again).
    void keep_exact_sum() { exact_ = true; }
    // Add every sample of `other` (as if each had been added here).
    void merge(const Histogram& other);
    // The distribution as kept: one entry per non-empty bucket, in
    // increasing order, its bounds clipped to [min, max] (the zeros, if
    // any, first as [0, 0]). The counts add up to count(). For drawing a
    // histogram at a coarser resolution (a run report's plots).
    struct Bucket {
        double lo = 0, hi = 0;
        std::uint64_t count = 0;
    };
    std::vector<Bucket> buckets() const;
    // Every sample as plain bytes (appended to `out`), and their merge here
    // (from `p`, advanced past them): a partitioned run's histograms
    // gathered from its ranks.
    void pack(ByteWriter& out) const;
    void merge_packed(ByteReader& in);

private:
    static constexpr int kSub = 128;
    static constexpr int kChunk = 16;   // bucket counts allocated together
    // The largest finite double is the clamp of +inf: it (and larger) goes
    // through add_rare().
    static constexpr double kLargeFinite = 1.7976931348623157e308;
    // Bucket keys are >= 0: key = idx + kKeyBias, idx = e * kSub + s as in
    // stats.cpp (e >= -1073 for the smallest subnormal).
    static constexpr int kKeyBias = 1074 * kSub;
    // The bucket of a positive finite sample: for a normal double its
    // biased exponent (frexp's e + 1022) and the top 7 bits of its
    // mantissa (floor((m - 0.5) * 2 * kSub), exactly).
    static std::uint32_t key_of(double v) {
        std::uint64_t bits;
        std::memcpy(&bits, &v, sizeof bits);
        if ((bits >> 52) == 0) return subnormal_key(v);
        return static_cast<std::uint32_t>(bits >> 45) - 1022 * kSub + kKeyBias;
    }
    static std::uint32_t subnormal_key(double v);
    static int idx_of_key(std::uint32_t key) { return static_cast<int>(key) - kKeyBias; }
    void add_rare(double v);   // zero, negative, NaN, inf, the largest double
    void add_exact(double v);   // sum_ from exact_sum_ (keep_exact_sum)
    // A chunk's directory entry: kNoChunk, or its first word in words_
    // (<< kWidthBits) and the width of its counts (kWidth8 .. kWidth64: 1,
    // 2, 4 or 8 bytes each). A chunk of width 2^w bytes takes 2 << w words.
    static constexpr std::uint32_t kNoChunk = ~std::uint32_t{0};
    static constexpr int kWidthBits = 3;
    static constexpr std::uint32_t kWidthMask = (1u << kWidthBits) - 1;
    enum : std::uint32_t { kWidth8 = 0, kWidth16 = 1, kWidth32 = 2, kWidth64 = 3 };
    unsigned char* chunk_bytes(std::uint32_t entry) {
        return reinterpret_cast<unsigned char*>(words_.data() + (entry >> kWidthBits));
    }
    const unsigned char* chunk_bytes(std::uint32_t entry) const {
        return reinterpret_cast<const unsigned char*>(words_.data() + (entry >> kWidthBits));
    }
    // One more sample in bucket `key`: inline while its chunk exists with
    // counts of one or two bytes (a count that wraps to 0 there is carried
    // into a wider chunk), else add_count().
    void bump(std::uint32_t key) {
        const std::uint32_t c = key / kChunk - first_chunk_;   // wraps below the first chunk
        if (c < dir_.size()) {
            const std::uint32_t d = dir_[c];
            if ((d & kWidthMask) == kWidth8) {
                if (++chunk_bytes(d)[key % kChunk] == 0) carry(dir_[c], key);
                return;
            }
            if ((d & kWidthMask) == kWidth16) {
                unsigned char* p = chunk_bytes(d) + 2 * (key % kChunk);
                std::uint16_t n;
                std::memcpy(&n, p, sizeof n);
                ++n;
                std::memcpy(p, &n, sizeof n);
                if (n == 0) carry(dir_[c], key);
                return;
            }
        }
        add_count(key, 1);
    }
    // Bucket `key`'s count in the chunk of `entry` wrapped to 0 at its width:
    // the chunk widened, the count 2^(its former width's bits).
    void carry(std::uint32_t& entry, std::uint32_t key);
    // n more samples in bucket `key`: the chunk made if new, widened if the
    // count outgrows its width.
    void add_count(std::uint32_t key, std::uint64_t n);
    std::uint32_t& entry_of(std::uint32_t key);   // its chunk's entry, the chunk made if new
    std::uint64_t count_at(std::uint32_t entry, int j) const;   // bucket j of the chunk
    void widen(std::uint32_t& entry, std::uint32_t width);   // the chunk's counts made wider
    // f(lo, hi, count) for each non-empty bucket above zero, in increasing
    // order, its bounds clipped to [min, max]; f returns false to stop.
    template <class F>
    void for_each_bucket(F f) const;
    // What add() reads first, together (a link's queue delay is added at
    // every hop: on a large torus each line it touches is a miss): then
    // dir_[c - first_chunk_], the entry of the chunk of keys c * kChunk ..
    // c * kChunk + kChunk - 1 (kNoChunk: none of them seen yet); words_
    // holds the chunks' counts (a chunk widened leaves its old words unused).
    std::uint64_t count_ = 0;
    double min_ = 0, max_ = 0, sum_ = 0;
    std::uint32_t first_chunk_ = 0;
    bool exact_ = false;
    std::vector<std::uint32_t> dir_;
    std::vector<std::uint64_t> words_;
    std::uint64_t zeros_ = 0, clamped_ = 0;
    __int128 exact_sum_ = 0;   // keep_exact_sum(): the sum in units of 2^-64
    double inexact_ = 0;   // and what was too large for it

public:
    StatInfo info;   // (last: read only by the outputs)
};

// Owns every statistic of one simulation. References returned by the
// registration calls stay valid for the registry's lifetime. Registering a
// name twice is a programming error (std::logic_error).
class StatRegistry {
public:
    StatRegistry() = default;
    // Its indexes hold views of the statistics' own names: not copyable
    // (a move keeps the deques' elements where they are).
    StatRegistry(const StatRegistry&) = delete;
    StatRegistry& operator=(const StatRegistry&) = delete;
    StatRegistry(StatRegistry&&) = default;
    StatRegistry& operator=(StatRegistry&&) = default;
    Counter& counter(const std::string& name, const std::string& unit, const std::string& help);
    Scalar& scalar(const std::string& name, const std::string& unit, const std::string& help, Scalar::Kind kind);
    Histogram& histogram(const std::string& name, const std::string& unit, const std::string& help);
    // A Sum scalar fed through a Spread (the scalar is registered under
    // `name`; the Spread is what the model adds to). In a region (window())
    // it is exact: the parts of its amounts between the region's ends.
    Spread& spread(const std::string& name, const std::string& unit, const std::string& help);

    // Statistics a model registers only once a part is first used (an SMMU
    // context bank no software programs has none): their names, given
    // without the part's own prefix ("smmu.cbN.translated"), so that the
    // require_* sums below read an honest 0 while none has been made, and
    // still refuse a suffix nothing declares. Declaring a name again does
    // nothing.
    void declare_counter(const std::string& path);
    void declare_histogram(const std::string& path);

    // The name, unit and help of a counter or scalar registered here
    // (std::logic_error for one that is not).
    const StatInfo& info(const Counter& c) const { return counter_info_[counters_.index_of(&c)]; }
    const StatInfo& info(const Scalar& s) const { return scalar_info_[scalars_.index_of(&s)]; }

    const Counter* find_counter(const std::string& name) const;
    const Scalar* find_scalar(const std::string& name) const;
    const Histogram* find_histogram(const std::string& name) const;
    // Every histogram, sorted by name (for generic reports).
    std::vector<const Histogram*> histograms() const;
    // Every counter whose name contains `part` ("mpi.untimed."), sorted by
    // name: a family whose members a model names as it meets them.
    std::vector<const Counter*> counters_containing(const std::string& part) const;

    // Sum of every counter whose name ends with "." + suffix ("packets_sent").
    std::uint64_t sum_counters(const std::string& suffix) const;
    // The same over scalars.
    double sum_scalars(const std::string& suffix) const;
    // Every histogram whose name ends with "." + suffix, merged into one.
    Histogram merge_histograms(const std::string& suffix) const;
    // How many counters / scalars / histograms have a name ending with
    // "." + suffix. A derived figure (a summary column) built from a suffix
    // that matches nothing would read 0 without saying why: callers check
    // this first (see the require_* calls below).
    std::size_t count_counters(const std::string& suffix) const;
    std::size_t count_scalars(const std::string& suffix) const;
    // Every scalar whose name ends with "." + suffix, in registration order
    // (a check of each one: no busy time below zero).
    std::vector<const Scalar*> scalars_ending(const std::string& suffix) const;
    std::size_t count_histograms(const std::string& suffix) const;
    // The sums above, but a suffix that matches no statistic of that kind is
    // a programming error (std::logic_error naming the suffix): a renamed or
    // unregistered statistic must not turn into a plausible 0.
    std::uint64_t require_sum_counters(const std::string& suffix) const;
    double require_sum_scalars(const std::string& suffix) const;
    Histogram require_merge_histograms(const std::string& suffix) const;

    // A region of the run (a region of interest, src/sim/roi.hpp).
    // begin_window() and end_window() mark its two ends, once each and in
    // that order; window() is then what happened between them, as a
    // registry of its own with the same statistics: each counter and Sum
    // scalar its growth over the region, each Level scalar NaN (it has no
    // value over a part of the run), each histogram exactly the samples
    // added in between (min and max included). A statistic registered
    // during the region starts it at zero; one registered after it is
    // zero in it. This registry keeps the whole run's values: at
    // begin_window() each histogram sets its samples so far aside and
    // starts empty, end_window() merges them back (read in between, a
    // histogram holds the region's samples only; the outputs read them
    // after the run). std::logic_error when called out of order.
    // `at`: the simulated time of the reading (resolution units), at which
    // every Spread reads (Spread::take_reading). A region must be announced
    // before anything is added to a Spread (will_read(), by whatever will
    // mark one: src/sim/roi.hpp), so that Spreads keep what its readings
    // need; without one they are plain sums (the cost of every packet).
    void will_read();
    bool will_be_read() const { return *will_read_; }   // will_read() was called
    // A count of `c` or a sample of `h` (both registered here) that belongs
    // at simulated time `at` (a transfer's completion), added by a model at
    // the kernel's time `now` (at or before `at`: loosely timed models run
    // ahead): a region counts it by `at`, whenever it was added. With a
    // region announced, one whose time the kernel has not reached is held
    // until a reading or flush_timed() passes it (the statistic lags
    // meanwhile); without one it is added at once.
    void count_at(Counter& c, std::uint64_t n, std::uint64_t at, std::uint64_t now) {
        if (!*will_read_) return c.inc(n);   // (inline: once a hop in exact time order)
        count_held(c, n, at, now);
    }
    void sample_at(Histogram& h, double v, std::uint64_t at, std::uint64_t now);
    // Adds the held counts and samples up to `upto` (a time-series sample's
    // time), or all of them (the run's end: the outputs refuse to be
    // written while any is held).
    void flush_timed(std::uint64_t upto);
    void count_held(Counter& c, std::uint64_t n, std::uint64_t at, std::uint64_t now);   // count_at's hold
    void flush_timed() { flush_timed(std::numeric_limits<std::uint64_t>::max()); }
    void begin_window(std::uint64_t at);
    void end_window(std::uint64_t at);
    bool window_begun() const { return window_begun_; }
    bool window_ended() const { return window_ended_; }
    StatRegistry window() const;

    // Every statistic, its kind, unit, help and value, as plain bytes; and
    // their merge into this registry (statistics it lacks are registered):
    // counters and Sum scalars add, Level scalars take the larger,
    // histograms add sample by sample. A partitioned run's ranks each hold
    // their own nodes' and links' statistics (docs/scaling.md); rank 0
    // merges every rank's.
    Bytes pack() const;
    void merge_packed(const Bytes& bytes);

    // Frees the index the sums by suffix keep (built again by the next sum):
    // for a caller done with sums, before the outputs.
    void release_sum_indexes() const;

    // Statistics registered so far (of all kinds).
    std::size_t registered() const { return named_; }
    // Sizes the name index for `n` statistics in all, as registering them
    // one by one would end (the same memory), without the rehashes on the
    // way: the system builder calls it once the first node shows how many
    // a node registers.
    void reserve(std::size_t n);

    // Every statistic, sorted by name. Histograms as objects with count,
    // mean, min, max, p50, p99.
    // One JSON object: {"<name>": value, ..., "units": {"<name>": "<unit>", ...}}
    // -- counters as integers, scalars as numbers (shortest exact form; 0 for
    // NaN/inf), histograms as {"count","mean","min","max","p50","p99","unit"};
    // the final "units" object gives the unit of every statistic (so "units"
    // is a reserved name: registering it is a std::logic_error).
    void write_json(std::ostream& os) const;
    // A readable table, gem5's stats.txt: name, value (or
    // count/mean/min/max/p50/p99), unit and "# description" (the statistic's
    // help), each in its column. A statistic registered without help has no
    // description column.
    void write_text(std::ostream& os) const;

private:
    // Throws std::logic_error for a reserved name or one already registered;
    // returns the name's hash.
    std::uint32_t claim(const std::string& name) const;
    // The statistic named `name` (hash `h`), as a reference (see names_),
    // 0 if none.
    std::uint32_t lookup(const std::string& name, std::uint32_t h) const;
    const StatInfo& info_of(std::uint32_t ref) const;
    const void* stat_of(std::uint32_t ref) const;
    // Adds the statistic just registered (kind, index in its deque).
    void index(std::uint32_t h, int kind, std::size_t i);
    // Whether a declared path (declare_*) of that kind ends with
    // "." + suffix or is the suffix.
    static bool declares(const std::vector<std::string>& paths, const std::string& suffix);
    std::vector<std::string> declared_counters_, declared_histograms_;
    StatStore<Counter> counters_;
    std::deque<StatInfo> counter_info_;   // counters_[i]'s
    StatStore<Scalar> scalars_;
    std::deque<StatInfo> scalar_info_;   // scalars_[i]'s
    std::vector<bool> scalar_level_;   // per scalar: Scalar::Kind::Level
    std::deque<Histogram> histograms_;
    std::deque<Spread> spreads_;
    std::vector<std::uint64_t> readings_;   // the region's ends so far
    // count_at() and sample_at() held until the kernel reaches their time.
    struct Held {
        std::uint64_t at;
        std::uint32_t index;   // in counters_ or histograms_
        bool sample;
        double value;
    };
    std::vector<Held> held_;
    std::vector<Held> due_;   // flush_timed's, in their times' order
    std::size_t held_prune_at_ = 64;
    void hold(const Held& e, std::uint64_t now);
    // Adds it where it belongs: the statistic, and the readings already
    // taken at or after its time (late: added after a reading it precedes).
    void apply(const Held& e);
    std::uint32_t index_of(const std::string& name, int kind) const;
    // index_of for a histogram held (sample_at), found once. (A counter's
    // index is found from its address: StatStore::index_of.)
    std::uint32_t held_index(const Histogram& h);
    std::unordered_map<const void*, std::uint32_t> held_index_;
    void require_flushed(const char* what) const;
    // Whether a region will be read (will_read()): on the heap, where the
    // Spreads look, so that a moved registry keeps them right.
    std::unique_ptr<bool> will_read_ = std::make_unique<bool>(false);
    // The region (begin_window()/end_window()): counters and scalars as
    // they were at its two ends, histograms' samples from before it (until
    // its end) and of it (from its end).
    bool window_begun_ = false, window_ended_ = false;
    std::vector<std::uint64_t> counters_at_begin_, counters_at_end_;
    std::vector<double> scalars_at_begin_, scalars_at_end_;
    std::vector<Histogram> histograms_before_, histograms_in_window_;
    // Every statistic by name, to refuse duplicates and for the find_*
    // calls (which the run's end makes for every node: a scan would cost
    // statistics x nodes there). Open addressing, at most 3/4 full: each
    // slot is the name hash's top 6 bits, the kind and (index in its deque
    // + 1), 0 an empty slot; a slot whose bits match has its name compared
    // through its statistic (the hash is computed again when the table
    // grows). Four bytes per slot, where a node-based hash map cost some 60
    // per statistic.
    std::vector<std::uint32_t> names_;
    std::size_t named_ = 0;
    // Every statistic's reference, sorted by name (the outputs' order).
    // Sorted once for both outputs (a big torus has millions of names to
    // sort) and again only if statistics were registered since.
    const std::vector<std::uint32_t>& sorted_refs() const;
    mutable std::vector<std::uint32_t> sorted_;
    struct Entry {
        const StatName* name;
        int kind;
        const void* stat;
        const std::string* unit;   // in the pool of interned texts
        const std::string* help;   // likewise
    };
    Entry entry(std::uint32_t ref) const;
    // Counters and scalars by the last component of their name
    // ("packets_sent"), in registration order, for the sums by suffix: the
    // run's end makes one per summary figure and invariant, and a scan of
    // every statistic each time cost more than the simulation on big tori.
    // Built when a sum asks, built again if statistics were registered
    // since (so nothing is kept while the simulation runs): one array of
    // deque indexes grouped by last component (four bytes per statistic)
    // and, per distinct last component, its range in that array.
    struct LeafIndex {
        struct Range {
            std::uint32_t begin = 0, end = 0;
        };
        std::unordered_map<std::string_view, Range> by_leaf;
        std::vector<std::uint32_t> order;
        std::size_t indexed = 0;   // statistics of the deque in `order`
        bool built = false;
        void release() {
            std::unordered_map<std::string_view, Range>().swap(by_leaf);
            std::vector<std::uint32_t>().swap(order);
            indexed = 0;
            built = false;
        }
        // The indexes (into `infos`, a kind's names) of the statistics
        // whose last component is the suffix's, in registration order.
        std::pair<const std::uint32_t*, const std::uint32_t*> with_leaf(const std::deque<StatInfo>& infos,
                                                                        const std::string& suffix);
    };
    mutable LeafIndex counter_leaves_;
    mutable LeafIndex scalar_leaves_;
};

}   // namespace vrdmasim
