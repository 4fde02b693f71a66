// The data pattern: deterministic pseudo-random bytes that every workload
// writes into a transfer's source and checks at its destination, and that
// the DRAM's store recognises and keeps as a few words instead of their
// bytes (models/memory/README.md, "The store").
//
// Definition: the pattern of key k is a sequence of 8-byte little-endian
// words, word i = z ^ (z >> 31) with z = (k + 2 + i) * C * M (mod 2^64). So
// a word's z steps by C * M, and z (hence the whole rest of the stream) can
// be recovered from any one word: z ^ (z >> 31) is invertible. Every word
// depends on the key and its position, but through their sum: data moved
// within its transfer, or left by a transfer of another key at the same
// place, or duplicated, does not match; the stream of key k + 1 is key k's
// one word on, though (its word i is k's word i + 1), so the data of a key
// one apart, misplaced by exactly one word, would. (A workload's pattern
// key is seed ^ its transfer's key: transfers whose keys differ only in
// bit 0 get patterns one apart.)
#pragma once

#include <cstdint>

namespace vrdmasim {

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
