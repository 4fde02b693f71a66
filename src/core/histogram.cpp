// Histograms: log-linear buckets, quantiles, merging (stats.hpp).
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
    ++slot(key_of(v));
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
        if (o.dir_[d] == 0) continue;
        const auto& chunk = o.chunks_[o.dir_[d] - 1];
        for (int j = 0; j < kChunk; ++j)
            if (chunk[static_cast<std::size_t>(j)])
                slot((o.first_chunk_ + static_cast<std::uint32_t>(d)) * kChunk + static_cast<std::uint32_t>(j)) +=
                    chunk[static_cast<std::size_t>(j)];
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
        if (dir_[d])
            for (int j = 0; j < kChunk; ++j) buckets += chunks_[dir_[d] - 1][static_cast<std::size_t>(j)] ? 1 : 0;
    out.put(buckets);
    for (std::size_t d = 0; d < dir_.size(); ++d) {
        if (!dir_[d]) continue;
        for (int j = 0; j < kChunk; ++j) {
            const std::uint64_t n = chunks_[dir_[d] - 1][static_cast<std::size_t>(j)];
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
        slot(key) += in.get<std::uint64_t>();
    }
}

}   // namespace vrdmasim
