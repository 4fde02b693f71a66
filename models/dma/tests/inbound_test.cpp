// Inbound's record of which packets of a transfer have landed (bits in
// 64-packet words): each index once, the first one missing (where a resend
// starts), completion once the last index and every one before it landed.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdint>
#include <random>
#include <set>
#include <vector>

#include "models/dma/receive.hpp"

using vrdmasim::Inbound;

TEST_CASE("Inbound: landed packets in any order, across words", "[dma][receive]") {
    Inbound in;
    REQUIRE(in.first_missing() == 0);
    REQUIRE_FALSE(in.has_landed(0));
    REQUIRE_FALSE(in.has_landed(1000));
    // Indices 0..199 in a random order, 63 and 64 (a word's last bit and the
    // next word's first) and 127/128 among them.
    std::vector<std::uint64_t> order;
    for (std::uint64_t i = 0; i < 200; ++i) order.push_back(i);
    std::shuffle(order.begin(), order.end(), std::mt19937_64(7));
    std::set<std::uint64_t> landed;
    for (const std::uint64_t i : order) {
        REQUIRE_FALSE(in.has_landed(i));
        in.land(i);
        landed.insert(i);
        REQUIRE(in.has_landed(i));
        std::uint64_t expect = 0;
        while (landed.count(expect)) ++expect;
        REQUIRE(in.first_missing() == expect);
        REQUIRE(in.landed_count == landed.size());
    }
    REQUIRE(in.first_missing() == 200);
    REQUIRE_FALSE(in.has_landed(200));
    REQUIRE_FALSE(in.complete());   // no last packet yet
    in.last_index = 199;
    REQUIRE(in.complete());
}

TEST_CASE("Inbound: a full word and a gap in the next", "[dma][receive]") {
    Inbound in;
    for (std::uint64_t i = 0; i < 64; ++i) in.land(i);
    REQUIRE(in.first_missing() == 64);
    in.land(65);
    REQUIRE(in.first_missing() == 64);
    REQUIRE_FALSE(in.has_landed(64));
    in.land(64);
    REQUIRE(in.first_missing() == 66);
    in.land(1000);   // far ahead: grown to it
    REQUIRE(in.has_landed(1000));
    REQUIRE_FALSE(in.has_landed(999));
    REQUIRE(in.first_missing() == 66);
}
