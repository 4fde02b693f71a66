// fill_pattern: the data every transfer carries and every check compares.
// Its four-words-at-a-time loop must write exactly the words of the
// definition (word i = z ^ (z >> 31), z = ((s + 1) + (i + 1)) * C * M,
// s = pattern_spread(key)),
// whatever the length and the alignment of the buffer.
#include <catch2/catch.hpp>

#include <cstdint>
#include <algorithm>
#include <cstring>
#include <vector>

#include "models/common/data_pattern.hpp"

using namespace vrdmasim;

namespace {

// The definition, one word at a time.
std::vector<unsigned char> reference(std::uint64_t len, std::uint64_t key) {
    constexpr std::uint64_t C = 0x9E3779B97F4A7C15ull, M = 0xBF58476D1CE4E5B9ull;
    std::vector<unsigned char> out(len);
    for (std::uint64_t i = 0; i < len; i += 8) {
        const std::uint64_t z = ((pattern_spread(key) + 1) * C + (i / 8 + 1) * C) * M;
        const std::uint64_t w = z ^ (z >> 31);
        std::memcpy(out.data() + i, &w, len - i < 8 ? len - i : 8);
    }
    return out;
}

}   // namespace

namespace {

void check_definition(void (*fill)(unsigned char*, std::uint64_t, std::uint64_t)) {
    for (std::uint64_t key : {0ull, 1ull, 0x1234ull, ~0ull}) {
        for (std::uint64_t len = 0; len <= 300; ++len) {
            for (std::size_t shift = 0; shift < 8; shift += 3) {
                std::vector<unsigned char> buf(len + shift + 1, 0xEE);
                fill(buf.data() + shift, len, key);
                const std::vector<unsigned char> want = reference(len, key);
                INFO("key " << key << " len " << len << " shift " << shift);
                // std::equal, not memcmp: an empty `want` has a null data() (UB for memcmp, found by UBSan).
                REQUIRE(std::equal(want.begin(), want.end(), buf.begin() + static_cast<std::ptrdiff_t>(shift)));
                CHECK(buf[shift + len] == 0xEE);   // nothing written past the end
            }
        }
    }
    // A long buffer too (a 16 KiB message).
    std::vector<unsigned char> big(16384 + 5);
    fill(big.data(), big.size(), 77);
    CHECK(big == reference(big.size(), 77));
}

}   // namespace

TEST_CASE("fill_pattern: the words of its definition at every length and alignment", "[pattern]") {
    check_definition(fill_pattern);
}

TEST_CASE("fill_pattern: the portable and the AVX2 loops write the same words", "[pattern]") {
    check_definition(fill_pattern_portable);
    if (fill_pattern_has_avx2()) check_definition(fill_pattern_avx2);
    else WARN("this CPU has no AVX2: only the portable loop checked");
}

namespace {

// pattern_mismatch against the definition: len for the pattern itself, and
// the first changed byte wherever one or two bytes are changed.
void check_mismatch(std::uint64_t (*mismatch)(const unsigned char*, std::uint64_t, std::uint64_t)) {
    for (std::uint64_t key : {0ull, 5ull, ~0ull}) {
        for (std::uint64_t len = 0; len <= 200; ++len) {
            for (std::size_t shift = 0; shift < 8; shift += 5) {
                const std::vector<unsigned char> want = reference(len, key);
                std::vector<unsigned char> buf(len + shift);
                std::copy(want.begin(), want.end(), buf.begin() + static_cast<std::ptrdiff_t>(shift));
                INFO("key " << key << " len " << len << " shift " << shift);
                REQUIRE(mismatch(buf.data() + shift, len, key) == len);
                for (std::uint64_t at = 0; at < len; ++at) {
                    buf[shift + at] ^= 0x10;
                    REQUIRE(mismatch(buf.data() + shift, len, key) == at);
                    if (at + 9 < len) {   // a second change further on: still the first
                        buf[shift + at + 9] ^= 0x01;
                        REQUIRE(mismatch(buf.data() + shift, len, key) == at);
                        buf[shift + at + 9] ^= 0x01;
                    }
                    buf[shift + at] ^= 0x10;
                }
                // Another key's pattern differs in the first byte that differs.
                if (len > 0) {
                    const std::vector<unsigned char> other = reference(len, key + 1);
                    std::uint64_t first = 0;
                    while (first < len && other[first] == want[first]) ++first;
                    REQUIRE(mismatch(other.data(), len, key) == first);
                }
            }
        }
    }
    // A 16 KiB message changed in its last byte, and zeros.
    std::vector<unsigned char> big = reference(16384, 77);
    CHECK(mismatch(big.data(), big.size(), 77) == big.size());
    big.back() ^= 1;
    CHECK(mismatch(big.data(), big.size(), 77) == big.size() - 1);
    const std::vector<unsigned char> zeros(16384, 0);
    CHECK(mismatch(zeros.data(), zeros.size(), 77) < 8);
}

}   // namespace

TEST_CASE("pattern_mismatch: the first byte that differs from the pattern", "[pattern]") {
    check_mismatch(pattern_mismatch);
    check_mismatch(pattern_mismatch_portable);
    if (fill_pattern_has_avx2()) check_mismatch(pattern_mismatch_avx2);
    else WARN("this CPU has no AVX2: only the portable loop checked");
}

TEST_CASE("pattern_mismatch: data of a neighbouring key, at any place near, does not pass for the pattern",
          "[pattern]") {
    // A workload's pattern keys differ in bit 0 for the two transfers of a
    // pair, and by one for a sequence: a transfer's data landing a few
    // words off in another's buffer must still show. (Without the key's
    // spread, key k's data from word 1 on is key k + 1's pattern.)
    constexpr std::uint64_t kWords = 1024, kLen = 256;
    for (const std::uint64_t key : {0ull, 1ull, 2ull, 41ull, 0x1234ull, ~0ull - 1}) {
        const std::vector<unsigned char> data = reference((kWords + kLen / 8) * 8, key);
        for (const std::uint64_t other : {key + 1, key - 1, key ^ 1}) {
            INFO("data of key " << key << " checked as key " << other);
            for (std::uint64_t m = 0; m < kWords; ++m) REQUIRE(pattern_mismatch(data.data() + 8 * m, kLen, other) < 8);
        }
    }
}

TEST_CASE("pattern_bytes: any stretch of a pattern, from its place", "[pattern]") {
    for (std::uint64_t key : {0ull, 9ull, ~0ull - 3}) {
        const std::vector<unsigned char> whole = reference(400, key);
        for (std::uint64_t from = 0; from < 40; ++from) {
            for (std::uint64_t len : {0ull, 1ull, 7ull, 8ull, 9ull, 63ull, 64ull, 65ull, 300ull}) {
                INFO("key " << key << " from " << from << " len " << len);
                const PatternPlace p = pattern_advance(pattern_place(key), from);
                CHECK(p == pattern_advance(pattern_advance(pattern_place(key), from / 2), from - from / 2));
                std::vector<unsigned char> buf(len + 1, 0xEE);
                pattern_bytes(buf.data(), len, p);
                REQUIRE(std::equal(buf.begin(), buf.begin() + static_cast<std::ptrdiff_t>(len),
                                   whole.begin() + static_cast<std::ptrdiff_t>(from)));
                CHECK(buf[len] == 0xEE);
                CHECK(pattern_bytes_mismatch(buf.data(), len, p) == len);
                if (len > 0) {
                    buf[len / 2] ^= 0x40;
                    CHECK(pattern_bytes_mismatch(buf.data(), len, p) == len / 2);
                }
            }
        }
    }
    // Every key's pattern is a stretch of one stream, from its spread on:
    // the place says so; neighbouring keys' are not a word apart.
    for (std::uint64_t key : {0ull, 4ull, ~0ull}) {
        CHECK(pattern_place(key) == PatternPlace{(pattern_spread(key) + 2) * kPatternStep, 0});
        CHECK(pattern_advance(pattern_place(key), 8) != pattern_place(key + 1));
    }
}

TEST_CASE("pattern_find: a stretch of any pattern is found with its place, anything else is not", "[pattern]") {
    const std::vector<unsigned char> whole = reference(5000, 0x51);
    for (std::uint64_t from = 0; from < 24; ++from) {
        for (std::uint64_t len : std::vector<std::uint64_t>{kPatternFindMin - 1, kPatternFindMin, 24, 100, 4096}) {
            INFO("from " << from << " len " << len);
            PatternPlace p{1, 1};
            const bool found = pattern_find(whole.data() + from, len, p);
            REQUIRE(found == (len >= kPatternFindMin));
            if (found) CHECK(p == pattern_advance(pattern_place(0x51), from));
            // One byte changed anywhere: not a stretch of the pattern.
            if (found) {
                std::vector<unsigned char> bad(whole.begin() + static_cast<std::ptrdiff_t>(from),
                                               whole.begin() + static_cast<std::ptrdiff_t>(from + len));
                for (std::uint64_t at : std::vector<std::uint64_t>{0, len / 3, len - 1}) {
                    bad[at] ^= 0x01;
                    CHECK_FALSE(pattern_find(bad.data(), len, p));
                    bad[at] ^= 0x01;
                }
            }
        }
    }
    // Zeros, a repeated byte, and counting bytes are not.
    std::vector<unsigned char> other(4096, 0);
    PatternPlace p;
    CHECK_FALSE(pattern_find(other.data(), other.size(), p));
    std::fill(other.begin(), other.end(), 0xA5);
    CHECK_FALSE(pattern_find(other.data(), other.size(), p));
    for (std::size_t i = 0; i < other.size(); ++i) other[i] = static_cast<unsigned char>(i);
    CHECK_FALSE(pattern_find(other.data(), other.size(), p));
}
