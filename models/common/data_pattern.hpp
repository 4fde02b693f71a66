// The data pattern: deterministic pseudo-random bytes that every workload
// writes into a transfer's source and checks at its destination, and that
// the DRAM's store recognises and keeps as a few words instead of their
// bytes (models/memory/README.md, "The store").
//
// Definition: the pattern of key k is a sequence of 8-byte little-endian
// words, word i = z ^ (z >> 31) with z = (s + 2 + i) * C * M (mod 2^64),
// s = pattern_spread(k). So a word's z steps by C * M, and z (hence the
// whole rest of the stream) can be recovered from any one word: z ^ (z >>
// 31) is invertible. All keys' patterns are stretches of one stream (C * M
// is odd: z runs through every value), key k's from position s on; the
// spread, a bijection that scatters neighbouring keys (SplitMix64's
// finaliser), puts any two keys' stretches some 2^63 words apart on
// average, so every word depends on the key and its position: data moved
// within its transfer, left by a transfer of another key at the same place
// or near it, or duplicated, does not match. (With s = k, as before
// 2026-12-01, key k + 1's stream was key k's one word on: data of a key one
// apart, misplaced by exactly one word, matched. A workload's pattern key
// is seed ^ its transfer's key, and transfers whose keys differ only in
// bit 0 are common.)
#pragma once

#include <cstdint>

namespace vrdmasim {

// Where key k's pattern starts in the stream: SplitMix64's finaliser (a
// bijection of 64-bit values; Steele, Lea and Flood, "Fast splittable
// pseudorandom number generators", OOPSLA 2014).
constexpr std::uint64_t pattern_spread(std::uint64_t k) {
    k = (k ^ (k >> 30)) * 0xBF58476D1CE4E5B9ull;
    k = (k ^ (k >> 27)) * 0x94D049BB133111EBull;
    return k ^ (k >> 31);
}
// Deterministic pseudo-random contents for transfer `key` (seeded).
void fill_pattern(unsigned char* buf, std::uint64_t len, std::uint64_t key);
// Its two implementations, the same words (tests): four words per
// iteration in 16-byte vectors (any x86-64), and sixteen, then eight, in
// 32-byte vectors where the CPU has AVX2 (fill_pattern_has_avx2(); without
// it, the portable one). fill_pattern picks the AVX2 one when it can.
void fill_pattern_portable(unsigned char* buf, std::uint64_t len, std::uint64_t key);
void fill_pattern_avx2(unsigned char* buf, std::uint64_t len, std::uint64_t key);
bool fill_pattern_has_avx2();
// The offset of the first byte of buf[0, len) that differs from
// fill_pattern(key)'s, len if none: compared word by word against the
// pattern as it is generated (no buffer of expected bytes). Its portable
// and AVX2 implementations likewise (tests).
std::uint64_t pattern_mismatch(const unsigned char* buf, std::uint64_t len, std::uint64_t key);
std::uint64_t pattern_mismatch_portable(const unsigned char* buf, std::uint64_t len, std::uint64_t key);
std::uint64_t pattern_mismatch_avx2(const unsigned char* buf, std::uint64_t len, std::uint64_t key);

// A place in the pattern, whatever its key: byte `phase` (0 to 7) of the
// word whose z is `z`. Two stretches of bytes continue each other when the
// first one's end is the second one's place.
struct PatternPlace {
    std::uint64_t z = 0;
    std::uint8_t phase = 0;
    bool operator==(const PatternPlace& o) const { return z == o.z && phase == o.phase; }
    bool operator!=(const PatternPlace& o) const { return !(*this == o); }
};
// How z steps from a word to the next: C * M (mod 2^64).
constexpr std::uint64_t kPatternStep = 0x9E3779B97F4A7C15ull * 0xBF58476D1CE4E5B9ull;
// The place of byte 0 of fill_pattern(key).
PatternPlace pattern_place(std::uint64_t key);
// The place `bytes` further on.
inline PatternPlace pattern_advance(PatternPlace p, std::uint64_t bytes) {
    const std::uint64_t t = p.phase + bytes;
    return PatternPlace{p.z + (t / 8) * kPatternStep, static_cast<std::uint8_t>(t % 8)};
}
// The len bytes of the pattern from `p` on.
void pattern_bytes(unsigned char* buf, std::uint64_t len, PatternPlace p);
// The first byte of buf[0, len) that differs from the pattern's bytes from
// `p` on, len if none.
std::uint64_t pattern_bytes_mismatch(const unsigned char* buf, std::uint64_t len, PatternPlace p);
// Whether buf[0, len) is a stretch of the pattern (of any key, from any
// place): then `p` is the place of buf[0]. Decided from two consecutive
// words (the second must be the first one's successor: chance 2^-64 for
// other data), then every byte compared. Needs kPatternFindMin bytes (every
// alignment of the words then has two whole ones); shorter ones are never
// found.
bool pattern_find(const unsigned char* buf, std::uint64_t len, PatternPlace& p);
constexpr std::uint64_t kPatternFindMin = 23;

}   // namespace vrdmasim
