// Words the engine writes that software polls without a notification (the
// classic one-sided completion flag). The model writes a payload into memory
// when the engine's thread makes the call, which may be ahead of the
// simulated time of a CPU polling that memory; a poller must not see a word
// before the time the engine wrote it. The watch records, for the words of
// the ranges asked for, each value the engine wrote there and when the
// write was done, so that a load at time t reads the value as of t
// (README.md "Polled words").
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <utility>
#include <vector>

#include <systemc>

namespace vrdmasim {

class WriteWatch {
public:
    // Watch the 8-byte words of [va, va + len) of stream `sid` (the
    // receiving channel's: the address space the engine writes them in).
    // `va` and `len` must be multiples of 8.
    void watch(std::uint32_t sid, std::uint64_t va, std::uint64_t len);
    bool any() const { return !ranges_.empty(); }
    // The engine wrote [va, va + len) of stream `sid` (`data`), done at `done`.
    void wrote(std::uint32_t sid, std::uint64_t va, const unsigned char* data, std::uint64_t len,
               sc_core::sc_time done);
    // The value of the watched word at `va` as a load at time `t` sees it,
    // given `now`, what memory holds at the call: the last value the engine
    // wrote by `t`, or, if the engine wrote it only after `t`, what it held
    // before. False if `va` is not watched.
    // `written`, when given, receives when the engine wrote the value seen
    // (zero: the engine has not written it).
    bool visible(std::uint32_t sid, std::uint64_t va, sc_core::sc_time t, std::uint64_t now, std::uint64_t& value,
                 sc_core::sc_time* written = nullptr) const;

private:
    struct Write {
        sc_core::sc_time done;
        std::uint64_t before, after;   // the word's value before and after the write
    };
    bool watched(std::uint32_t sid, std::uint64_t va) const;
    std::vector<std::pair<std::uint32_t, std::pair<std::uint64_t, std::uint64_t>>> ranges_;   // sid, [lo, hi)
    std::map<std::pair<std::uint32_t, std::uint64_t>, std::deque<Write>> words_;
};

}   // namespace vrdmasim
