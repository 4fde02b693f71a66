// Histograms: log-linear buckets, quantiles, merging (stats.hpp).
#include "src/core/stats.hpp"

#include "src/core/json.hpp"
#include "src/core/stats_detail.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstring>
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
    if (exact_) add_exact(v);
    else sum_ += v;
    if (v == 0) {
        ++zeros_;
        return;
    }
    bump(key_of(v));
}

void Histogram::add_exact(double v) {
    if (v < 0x1p62) exact_sum_ += static_cast<__int128>(std::ldexp(v, 64));   // exact: v's bits at or above 2^-64
    else inexact_ += v;
    sum_ = static_cast<double>(std::ldexp(static_cast<long double>(exact_sum_), -64)) + inexact_;
}

std::uint32_t Histogram::subnormal_key(double v) {
    int e = 0;
    const double m = std::frexp(v, &e);   // m in [0.5, 1)
    int sub = static_cast<int>((m - 0.5) * 2 * kSub);
    sub = std::clamp(sub, 0, kSub - 1);
    return static_cast<std::uint32_t>(e * kSub + sub + kKeyBias);
}

std::uint32_t& Histogram::entry_of(std::uint32_t key) {
    const std::uint32_t c = key / kChunk;
    if (dir_.empty()) {
        first_chunk_ = c;
        dir_.assign(1, kNoChunk);
    } else if (c < first_chunk_) {
        dir_.insert(dir_.begin(), first_chunk_ - c, kNoChunk);
        first_chunk_ = c;
    } else if (c - first_chunk_ >= dir_.size()) {
        dir_.resize(c - first_chunk_ + 1, kNoChunk);
    }
    std::uint32_t& at = dir_[c - first_chunk_];
    if (at == kNoChunk) {   // a new chunk: one-byte counts, all 0
        const std::size_t w = words_.size();
        if (w > (kNoChunk >> kWidthBits) - 2 * kChunk)
            throw std::length_error("Histogram: more buckets than its directory can address");
        words_.resize(w + kChunk / 8, 0);
        at = static_cast<std::uint32_t>(w << kWidthBits) | kWidth8;
    }
    return at;
}

std::uint64_t Histogram::count_at(std::uint32_t entry, int j) const {
    const unsigned char* p = chunk_bytes(entry);
    switch (entry & kWidthMask) {
    case kWidth8: return p[j];
    case kWidth16: {
        std::uint16_t n;
        std::memcpy(&n, p + 2 * j, sizeof n);
        return n;
    }
    case kWidth32: {
        std::uint32_t n;
        std::memcpy(&n, p + 4 * j, sizeof n);
        return n;
    }
    default: {
        std::uint64_t n;
        std::memcpy(&n, p + 8 * j, sizeof n);
        return n;
    }
    }
}

void Histogram::widen(std::uint32_t& entry, std::uint32_t width) {
    std::uint64_t counts[kChunk];
    for (int j = 0; j < kChunk; ++j) counts[j] = count_at(entry, j);
    const std::size_t w = words_.size();
    const std::size_t words = (std::size_t{kChunk} << width) / 8;
    if (w > (kNoChunk >> kWidthBits) - words)
        throw std::length_error("Histogram: more buckets than its directory can address");
    words_.resize(w + words, 0);
    entry = static_cast<std::uint32_t>(w << kWidthBits) | width;
    unsigned char* p = chunk_bytes(entry);
    const std::size_t bytes = std::size_t{1} << width;
    for (int j = 0; j < kChunk; ++j) {
        // Little or big endian alike: the count's value, `bytes` wide.
        switch (width) {
        case kWidth16: {
            const auto n = static_cast<std::uint16_t>(counts[j]);
            std::memcpy(p + bytes * j, &n, bytes);
            break;
        }
        case kWidth32: {
            const auto n = static_cast<std::uint32_t>(counts[j]);
            std::memcpy(p + bytes * j, &n, bytes);
            break;
        }
        default: std::memcpy(p + bytes * j, &counts[j], bytes); break;
        }
    }
}

void Histogram::carry(std::uint32_t& entry, std::uint32_t key) {
    const std::uint32_t width = entry & kWidthMask;   // kWidth8 or kWidth16
    widen(entry, width + 1);
    unsigned char* p = chunk_bytes(entry) + (std::size_t{2} << width) * (key % kChunk);
    if (width == kWidth8) {
        const std::uint16_t n = 256;
        std::memcpy(p, &n, sizeof n);
    } else {
        const std::uint32_t n = 65536;
        std::memcpy(p, &n, sizeof n);
    }
}

void Histogram::add_count(std::uint32_t key, std::uint64_t n) {
    std::uint32_t& entry = entry_of(key);
    const int j = static_cast<int>(key % kChunk);
    const std::uint64_t now = count_at(entry, j) + n;
    std::uint32_t width = entry & kWidthMask;
    while (width < kWidth64 && (now >> (8u << width)) != 0) ++width;
    if (width != (entry & kWidthMask)) widen(entry, width);
    unsigned char* p = chunk_bytes(entry);
    switch (width) {
    case kWidth8: p[j] = static_cast<unsigned char>(now); break;
    case kWidth16: {
        const auto v = static_cast<std::uint16_t>(now);
        std::memcpy(p + 2 * j, &v, sizeof v);
        break;
    }
    case kWidth32: {
        const auto v = static_cast<std::uint32_t>(now);
        std::memcpy(p + 4 * j, &v, sizeof v);
        break;
    }
    default: std::memcpy(p + 8 * j, &now, sizeof now); break;
    }
}

template <class F>
void Histogram::for_each_bucket(F f) const {
    for (std::size_t d = 0; d < dir_.size(); ++d) {
        if (dir_[d] == kNoChunk) continue;
        for (int j = 0; j < kChunk; ++j) {
            const std::uint64_t c = count_at(dir_[d], j);
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
    if (exact_ && o.exact_) {
        exact_sum_ += o.exact_sum_;
        inexact_ += o.inexact_;
        sum_ = static_cast<double>(std::ldexp(static_cast<long double>(exact_sum_), -64)) + inexact_;
    } else {
        sum_ += o.sum_;
    }
    zeros_ += o.zeros_;
    clamped_ += o.clamped_;
    for (std::size_t d = 0; d < o.dir_.size(); ++d) {
        if (o.dir_[d] == kNoChunk) continue;
        for (int j = 0; j < kChunk; ++j)
            if (const std::uint64_t c = o.count_at(o.dir_[d], j))
                add_count((o.first_chunk_ + static_cast<std::uint32_t>(d)) * kChunk + static_cast<std::uint32_t>(j), c);
    }
}

}   // namespace vrdmasim

namespace vrdmasim {

void Histogram::pack(ByteWriter& out) const {
    out.put(count_);
    out.put(zeros_);
    out.put(clamped_);
    out.put(sum_);
    out.put(min_);
    out.put(max_);
    out.put(exact_);
    out.put(exact_sum_);
    out.put(inexact_);
    std::uint64_t buckets = 0;
    for (std::size_t d = 0; d < dir_.size(); ++d)
        if (dir_[d] != kNoChunk)
            for (int j = 0; j < kChunk; ++j) buckets += count_at(dir_[d], j) ? 1 : 0;
    out.put(buckets);
    for (std::size_t d = 0; d < dir_.size(); ++d) {
        if (dir_[d] == kNoChunk) continue;
        for (int j = 0; j < kChunk; ++j) {
            const std::uint64_t n = count_at(dir_[d], j);
            if (!n) continue;
            out.put(static_cast<std::uint32_t>((first_chunk_ + static_cast<std::uint32_t>(d)) * kChunk +
                                               static_cast<std::uint32_t>(j)));
            out.put(n);
        }
    }
}

void Histogram::merge_packed(ByteReader& in) {
    const auto count = in.get<std::uint64_t>();
    const auto zeros = in.get<std::uint64_t>();
    const auto clamped = in.get<std::uint64_t>();
    const auto sum = in.get<double>();
    const auto mn = in.get<double>();
    const auto mx = in.get<double>();
    const auto exact = in.get<bool>();
    const auto exact_sum = in.get<__int128>();
    const auto inexact = in.get<double>();
    const auto buckets = in.get<std::uint64_t>();
    if (count > 0) {
        if (count_ == 0) {
            min_ = mn;
            max_ = mx;
        } else {
            min_ = std::min(min_, mn);
            max_ = std::max(max_, mx);
        }
        // The first rank's sum as it is: a histogram only one rank adds to
        // (a node's, a link's) keeps its exact value.
        if (exact && exact_) {
            exact_sum_ += exact_sum;
            inexact_ += inexact;
            sum_ = static_cast<double>(std::ldexp(static_cast<long double>(exact_sum_), -64)) + inexact_;
        } else {
            sum_ = count_ == 0 ? sum : sum_ + sum;
        }
        count_ += count;
        zeros_ += zeros;
        clamped_ += clamped;
    }
    for (std::uint64_t b = 0; b < buckets; ++b) {
        const auto key = in.get<std::uint32_t>();
        add_count(key, in.get<std::uint64_t>());
    }
}

}   // namespace vrdmasim
