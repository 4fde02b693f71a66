#include "models/common/data_pattern.hpp"

#include <algorithm>
#include <cstring>

namespace vrdmasim {

namespace {

// The pattern's words: a Weyl sequence through one multiply and xor-shift
// per 8 bytes. Word i is z ^ (z >> 31) with z = x_i * M, x_i = (s + 1) * C
// + (i + 1) * C (mod 2^64), s = pattern_spread(key): z itself steps by
// C * M, so it is kept by one addition per word. Below, `z` is the z of
// the word before the first one written or compared.
constexpr std::uint64_t kPatC = 0x9E3779B97F4A7C15ull, kPatM = 0xBF58476D1CE4E5B9ull;
constexpr std::uint64_t kStep = kPatC * kPatM;
static_assert(kStep == kPatternStep, "the header's step is the definition's");

inline std::uint64_t mix(std::uint64_t z) { return z ^ (z >> 31); }
// mix's inverse: y ^ (y >> 31) = z ^ (z >> 62), and (y >> 62) = (z >> 62).
inline std::uint64_t unmix(std::uint64_t w) { return w ^ (w >> 31) ^ (w >> 62); }

#if defined(__GNUC__)
// N vectors of L words per iteration (GCC's and Clang's vector extension),
// from word i on: lane k of v[n] holds word i + n L + k's z, each stepping
// by `step` = N L C M. `z` is the z of the word before word i.
template <class V, unsigned L, unsigned N>
inline __attribute__((always_inline)) void start_vectors(std::uint64_t z, V (&v)[N], V& step) {
    for (unsigned k = 0; k < L; ++k) step[k] = N * L * kStep;
    for (unsigned n = 0; n < N; ++n)
        for (unsigned k = 0; k < L; ++k) v[n][k] = z + (n * L + k + 1) * kStep;
}

// Writes the words from i on, N vectors at a time; advances i and z past
// the words written.
template <class V, unsigned L, unsigned N>
inline __attribute__((always_inline)) void fill_vectors(unsigned char* buf, std::uint64_t len, std::uint64_t& z,
                                                        std::uint64_t& i) {
    constexpr std::uint64_t kBytes = N * L * 8;
    if (len < kBytes || i > len - kBytes) return;
    V v[N], step;
    start_vectors<V, L, N>(z, v, step);
    // One pointer steps (the loop's own cost: an add, a compare, a branch).
    unsigned char* p = buf + i;
    for (const unsigned char* last = buf + (len - kBytes); p <= last; p += kBytes) {
        for (unsigned n = 0; n < N; ++n) {
            const V w = v[n] ^ (v[n] >> 31);
            std::memcpy(p + n * sizeof w, &w, sizeof w);
            v[n] += step;
        }
    }
    const auto done = static_cast<std::uint64_t>(p - buf);
    z += ((done - i) / 8) * kStep;
    i = done;
}

// Compares the words from i on with the pattern the same way (no buffer of
// expected bytes); advances i and z past the words compared. False if any
// differs.
template <class V, unsigned L, unsigned N>
inline __attribute__((always_inline)) bool same_vectors(const unsigned char* buf, std::uint64_t len, std::uint64_t& z,
                                                        std::uint64_t& i) {
    constexpr std::uint64_t kBytes = N * L * 8;
    if (len < kBytes || i > len - kBytes) return true;
    V v[N], step, diff = {};
    start_vectors<V, L, N>(z, v, step);
    const unsigned char* p = buf + i;
    for (const unsigned char* last = buf + (len - kBytes); p <= last; p += kBytes) {
        for (unsigned n = 0; n < N; ++n) {
            V got;
            std::memcpy(&got, p + n * sizeof got, sizeof got);
            diff |= got ^ v[n] ^ (v[n] >> 31);
            v[n] += step;
        }
    }
    const auto done = static_cast<std::uint64_t>(p - buf);
    z += ((done - i) / 8) * kStep;
    i = done;
    std::uint64_t any = 0;
    for (unsigned k = 0; k < L; ++k) any |= diff[k];
    return any == 0;
}
#endif

// The words from i on, one at a time (the last one cut at len).
inline void fill_rest(unsigned char* buf, std::uint64_t len, std::uint64_t z, std::uint64_t i) {
    for (; i + 8 <= len; i += 8) {
        z += kStep;
        const std::uint64_t w = mix(z);
        std::memcpy(buf + i, &w, 8);
    }
    if (i < len) {
        z += kStep;
        const std::uint64_t w = mix(z);
        std::memcpy(buf + i, &w, len - i);
    }
}

// The first byte from i on that differs from the pattern (z as fill_rest
// takes it), len if none: word by word.
std::uint64_t mismatch_rest(const unsigned char* buf, std::uint64_t len, std::uint64_t z, std::uint64_t i) {
    for (; i < len; i += 8) {
        z += kStep;
        const std::uint64_t w = mix(z);
        unsigned char want[8];
        std::memcpy(want, &w, 8);
        const std::uint64_t n = std::min<std::uint64_t>(8, len - i);
        if (std::memcmp(buf + i, want, n) == 0) continue;
        for (std::uint64_t k = 0;; ++k)
            if (buf[i + k] != want[k]) return i + k;
    }
    return len;
}

void fill_from_portable(unsigned char* buf, std::uint64_t len, std::uint64_t z) {
    std::uint64_t i = 0;
#if defined(__GNUC__)
    typedef std::uint64_t Words2 __attribute__((vector_size(16)));   // SSE2 on plain x86-64
    fill_vectors<Words2, 2, 2>(buf, len, z, i);
#endif
    fill_rest(buf, len, z, i);
}

std::uint64_t mismatch_from_portable(const unsigned char* buf, std::uint64_t len, std::uint64_t z0) {
    std::uint64_t z = z0, i = 0;
#if defined(__GNUC__)
    typedef std::uint64_t Words2 __attribute__((vector_size(16)));
    if (!same_vectors<Words2, 2, 2>(buf, len, z, i)) return mismatch_rest(buf, len, z0, 0);
#endif
    return mismatch_rest(buf, len, z, i);
}

#if defined(__GNUC__) && defined(__x86_64__)
#define VRDMASIM_PATTERN_AVX2 1
bool cpu_has_avx2() {
    static const bool has = __builtin_cpu_supports("avx2");
    return has;
}

// The same words eight at a time in 32-byte vectors, for a CPU with AVX2
// (chosen at run time: the build targets plain x86-64).
__attribute__((target("avx2"))) void fill_from_avx2(unsigned char* buf, std::uint64_t len, std::uint64_t z) {
    std::uint64_t i = 0;
    typedef std::uint64_t Words4 __attribute__((vector_size(32)));
    fill_vectors<Words4, 4, 4>(buf, len, z, i);   // 128 bytes an iteration, then 64
    fill_vectors<Words4, 4, 2>(buf, len, z, i);
    fill_rest(buf, len, z, i);
}

__attribute__((target("avx2"))) std::uint64_t mismatch_from_avx2(const unsigned char* buf, std::uint64_t len,
                                                                 std::uint64_t z0) {
    std::uint64_t z = z0, i = 0;
    typedef std::uint64_t Words4 __attribute__((vector_size(32)));
    if (!same_vectors<Words4, 4, 4>(buf, len, z, i) || !same_vectors<Words4, 4, 2>(buf, len, z, i))
        return mismatch_rest(buf, len, z0, 0);
    return mismatch_rest(buf, len, z, i);
}
#endif

void fill_from(unsigned char* buf, std::uint64_t len, std::uint64_t z) {
#ifdef VRDMASIM_PATTERN_AVX2
    if (cpu_has_avx2()) {
        fill_from_avx2(buf, len, z);
        return;
    }
#endif
    fill_from_portable(buf, len, z);
}

std::uint64_t mismatch_from(const unsigned char* buf, std::uint64_t len, std::uint64_t z) {
#ifdef VRDMASIM_PATTERN_AVX2
    if (cpu_has_avx2()) return mismatch_from_avx2(buf, len, z);
#endif
    return mismatch_from_portable(buf, len, z);
}

// The z of the word before fill_pattern(key)'s first: the key spread over
// the stream (the data pattern's definition, data_pattern.hpp).
inline std::uint64_t z_before(std::uint64_t key) { return (pattern_spread(key) + 1) * kStep; }

}   // namespace

void fill_pattern_portable(unsigned char* buf, std::uint64_t len, std::uint64_t key) {
    fill_from_portable(buf, len, z_before(key));
}

#ifdef VRDMASIM_PATTERN_AVX2
void fill_pattern_avx2(unsigned char* buf, std::uint64_t len, std::uint64_t key) {
    fill_from_avx2(buf, len, z_before(key));
}
bool fill_pattern_has_avx2() { return cpu_has_avx2(); }
std::uint64_t pattern_mismatch_avx2(const unsigned char* buf, std::uint64_t len, std::uint64_t key) {
    return mismatch_from_avx2(buf, len, z_before(key));
}
#else
void fill_pattern_avx2(unsigned char* buf, std::uint64_t len, std::uint64_t key) {
    fill_pattern_portable(buf, len, key);
}
bool fill_pattern_has_avx2() { return false; }
std::uint64_t pattern_mismatch_avx2(const unsigned char* buf, std::uint64_t len, std::uint64_t key) {
    return pattern_mismatch_portable(buf, len, key);
}
#endif

void fill_pattern(unsigned char* buf, std::uint64_t len, std::uint64_t key) { fill_from(buf, len, z_before(key)); }

std::uint64_t pattern_mismatch_portable(const unsigned char* buf, std::uint64_t len, std::uint64_t key) {
    return mismatch_from_portable(buf, len, z_before(key));
}

std::uint64_t pattern_mismatch(const unsigned char* buf, std::uint64_t len, std::uint64_t key) {
    return mismatch_from(buf, len, z_before(key));
}

PatternPlace pattern_place(std::uint64_t key) { return PatternPlace{z_before(key) + kStep, 0}; }

void pattern_bytes(unsigned char* buf, std::uint64_t len, PatternPlace p) {
    std::uint64_t z = p.z;
    if (p.phase != 0 && len > 0) {   // the rest of a word first
        const std::uint64_t w = mix(z);
        const std::uint64_t n = std::min<std::uint64_t>(len, 8 - p.phase);
        std::memcpy(buf, reinterpret_cast<const unsigned char*>(&w) + p.phase, n);
        buf += n;
        len -= n;
        z += kStep;
    }
    fill_from(buf, len, z - kStep);
}

std::uint64_t pattern_bytes_mismatch(const unsigned char* buf, std::uint64_t len, PatternPlace p) {
    std::uint64_t z = p.z, done = 0;
    if (p.phase != 0 && len > 0) {
        const std::uint64_t w = mix(z);
        const unsigned char* want = reinterpret_cast<const unsigned char*>(&w) + p.phase;
        const std::uint64_t n = std::min<std::uint64_t>(len, 8 - p.phase);
        for (std::uint64_t k = 0; k < n; ++k)
            if (buf[k] != want[k]) return k;
        done = n;
        z += kStep;
    }
    return done + mismatch_from(buf + done, len - done, z - kStep);
}

bool pattern_find(const unsigned char* buf, std::uint64_t len, PatternPlace& p) {
    if (len < kPatternFindMin) return false;
    // A word starts at buf + s for one s in 0..7: its z is unmix(the word),
    // and the next 8 bytes must be the next word.
    for (unsigned s = 0; s < 8; ++s) {
        std::uint64_t w1, w2;
        std::memcpy(&w1, buf + s, 8);
        std::memcpy(&w2, buf + s + 8, 8);
        const std::uint64_t z1 = unmix(w1);
        if (mix(z1 + kStep) != w2) continue;
        const PatternPlace at =
            s == 0 ? PatternPlace{z1, 0} : PatternPlace{z1 - kStep, static_cast<std::uint8_t>(8 - s)};
        if (pattern_bytes_mismatch(buf, len, at) == len) {
            p = at;
            return true;
        }
    }
    return false;
}

}   // namespace vrdmasim
