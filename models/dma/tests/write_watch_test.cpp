// The polled-word watch: a load at time t sees a word as the engine had
// written it by t, never a value written later in simulated time.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>

#include "models/dma/write_watch.hpp"

using namespace vrdmasim;
using sc_core::SC_NS;
using sc_core::sc_time;

namespace {
void put(WriteWatch& w, std::uint32_t sid, std::uint64_t va, std::uint64_t v, double ns) {
    unsigned char b[8];
    std::memcpy(b, &v, 8);
    w.wrote(sid, va, b, 8, sc_time(ns, SC_NS));
}
}   // namespace

TEST_CASE("write watch: a load sees the value written by its time, not a later one", "[dma][watch]") {
    WriteWatch w;
    w.watch(7, 0x1000, 16);
    std::uint64_t v = 99;
    // Never written: what memory holds.
    REQUIRE(w.visible(7, 0x1000, sc_time(5, SC_NS), 0, v));
    CHECK(v == 0);
    put(w, 7, 0x1000, 1, 100);
    put(w, 7, 0x1000, 2, 300);   // memory now holds 2 (written at call time)
    REQUIRE(w.visible(7, 0x1000, sc_time(50, SC_NS), 2, v));
    CHECK(v == 0);
    REQUIRE(w.visible(7, 0x1000, sc_time(100, SC_NS), 2, v));
    CHECK(v == 1);
    REQUIRE(w.visible(7, 0x1000, sc_time(299, SC_NS), 2, v));
    CHECK(v == 1);
    REQUIRE(w.visible(7, 0x1000, sc_time(300, SC_NS), 2, v));
    CHECK(v == 2);
}

TEST_CASE("write watch: only watched words of the same stream, partial writes merge into the word", "[dma][watch]") {
    WriteWatch w;
    w.watch(7, 0x1000, 8);
    std::uint64_t v = 0;
    CHECK_FALSE(w.visible(8, 0x1000, sc_time(1, SC_NS), 0, v));   // another stream's address space
    CHECK_FALSE(w.visible(7, 0x1008, sc_time(1, SC_NS), 0, v));   // not watched
    // A 16-byte payload over the word and the next: only the watched word is recorded.
    unsigned char b[16];
    for (unsigned i = 0; i < 16; ++i) b[i] = static_cast<unsigned char>(i + 1);
    w.wrote(7, 0x0ffc, b, 16, sc_time(10, SC_NS));
    std::uint64_t expect = 0;
    std::memcpy(&expect, b + 4, 8);
    REQUIRE(w.visible(7, 0x1000, sc_time(10, SC_NS), expect, v));
    CHECK(v == expect);
    REQUIRE(w.visible(7, 0x1000, sc_time(9, SC_NS), expect, v));
    CHECK(v == 0);
    CHECK_THROWS_AS(w.watch(7, 0x1004, 8), std::invalid_argument);
}
