// fill_pattern: the data every transfer carries and every check compares.
// Its four-words-at-a-time loop must write exactly the words of the
// definition (word i = z ^ (z >> 31), z = ((key + 1) + (i + 1)) * C * M),
// whatever the length and the alignment of the buffer.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <vector>

#include "workloads/workload.hpp"

using namespace vrdmasim;

namespace {

// The definition, one word at a time.
std::vector<unsigned char> reference(std::uint64_t len, std::uint64_t key) {
    constexpr std::uint64_t C = 0x9E3779B97F4A7C15ull, M = 0xBF58476D1CE4E5B9ull;
    std::vector<unsigned char> out(len);
    for (std::uint64_t i = 0; i < len; i += 8) {
        const std::uint64_t z = ((key + 1) * C + (i / 8 + 1) * C) * M;
        const std::uint64_t w = z ^ (z >> 31);
        std::memcpy(out.data() + i, &w, len - i < 8 ? len - i : 8);
    }
    return out;
}

}  // namespace

namespace {

void check_definition(void (*fill)(unsigned char*, std::uint64_t, std::uint64_t)) {
    for (std::uint64_t key : {0ull, 1ull, 0x1234ull, ~0ull}) {
        for (std::uint64_t len = 0; len <= 300; ++len) {
            for (std::size_t shift = 0; shift < 8; shift += 3) {
                std::vector<unsigned char> buf(len + shift + 1, 0xEE);
                fill(buf.data() + shift, len, key);
                const std::vector<unsigned char> want = reference(len, key);
                INFO("key " << key << " len " << len << " shift " << shift);
                REQUIRE(std::memcmp(buf.data() + shift, want.data(), len) == 0);
                CHECK(buf[shift + len] == 0xEE);   // nothing written past the end
            }
        }
    }
    // A long buffer too (a 16 KiB message).
    std::vector<unsigned char> big(16384 + 5);
    fill(big.data(), big.size(), 77);
    CHECK(big == reference(big.size(), 77));
}

}  // namespace

TEST_CASE("fill_pattern: the words of its definition at every length and alignment", "[pattern]") {
    check_definition(fill_pattern);
}

TEST_CASE("fill_pattern: the portable and the AVX2 loops write the same words", "[pattern]") {
    check_definition(fill_pattern_portable);
    if (fill_pattern_has_avx2())
        check_definition(fill_pattern_avx2);
    else
        WARN("this CPU has no AVX2: only the portable loop checked");
}
