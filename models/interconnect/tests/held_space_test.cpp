// HeldSpace and WireCalendar, the time-ordered link's and router's
// bookkeeping, against their definitions: random packets counted out of
// time order (as a time-ordered link counts them), forgotten as the
// simulated time advances, and every query compared with the sweep of the
// packets counted (HeldSpace::swept) or with the wire's reservations kept
// in a std::map (the model before the calendar).
#include <catch2/catch.hpp>

#include <algorithm>
#include <iterator>
#include <map>
#include <random>
#include <vector>

#include "models/interconnect/held_space.hpp"
#include "models/interconnect/wire_calendar.hpp"

using namespace vrdmasim;
using sc_core::sc_time;

namespace {

sc_time ps(std::uint64_t v) { return sc_time::from_value(v); }

}   // namespace

TEST_CASE("held space: the calendar answers as the sweep of its packets", "[link][time-order]") {
    std::mt19937_64 rng(7);
    for (int trial = 0; trial < 200; ++trial) {
        HeldSpace held;
        std::vector<HeldSpace::Packet> packets;   // every packet counted, none forgotten
        std::uint64_t now = 0;
        const unsigned capacity = 64;
        // Small times so that ties (equal starts, equal freeings, a start
        // at another's freeing) are common.
        const std::uint64_t span = 1 + rng() % 40;
        for (int step = 0; step < 60; ++step) {
            if (rng() % 4 == 0) {
                now += rng() % 6;
                held.forget(ps(now));
            }
            const std::uint64_t in = now + rng() % span;
            const std::uint64_t freed = in + 1 + rng() % span;
            const unsigned flits = 1 + static_cast<unsigned>(rng() % 18);
            held.add(ps(in), ps(freed), flits);
            packets.push_back({ps(in), ps(freed), flits});
            for (int q = 0; q < 4; ++q) {
                const sc_time s = ps(now + rng() % (2 * span + 2));
                INFO("trial " << trial << " step " << step << " now " << now << " s " << s.value());
                REQUIRE(held.held_at(s) == HeldSpace::swept::held_at(packets, s));
                REQUIRE(held.most_from(s) == HeldSpace::swept::most_from(packets, s));
                const unsigned f = 1 + static_cast<unsigned>(rng() % 18);
                REQUIRE(held.fits_from(s, f, capacity).value() ==
                        HeldSpace::swept::fits_from(packets, s, f, capacity).value());
                const sc_time until = ps(s.value() + 1 + rng() % span);
                REQUIRE(held.most_during(s, until, f) == HeldSpace::swept::most_during(packets, s, until, f));
            }
        }
    }
}

TEST_CASE("held space: packets counted in time order take the fast path, and it forgets", "[link][time-order]") {
    HeldSpace held;
    // A link that sends one packet of 18 flits every 10 ps, each freed 95 ps
    // after it starts: about 9.5 packets held at any time.
    for (std::uint64_t k = 0; k < 1000; ++k) {
        held.forget(ps(k * 10));
        held.add(ps(k * 10), ps(k * 10 + 95), 18);
        if (k < 10) continue;   // filling
        REQUIRE(held.held_at(ps(k * 10)) == 10 * 18);
        REQUIRE(held.most_from(ps(k * 10 + 5)) == 9 * 18);
        // 64 flits of room for 18 more: when at most 2 packets are held
        // from then on, 8 freed after the one just counted started.
        REQUIRE(held.fits_from(ps(k * 10), 18, 64).value() == k * 10 + 95 - 20);
    }
    // What was forgotten no longer costs: only the packets that can still
    // be held (and the starts after now) are kept, whatever has passed.
    CHECK(held.size() <= 2 * 12);
}

TEST_CASE("held space: a packet that holds nothing is not counted", "[link][time-order]") {
    HeldSpace held;
    held.add(ps(10), ps(10), 5);
    held.add(ps(20), ps(15), 5);
    CHECK(held.size() == 0);
    CHECK(held.most_from(ps(0)) == 0);
    CHECK(held.fits_from(ps(3), 8, 8).value() == 3);
}

TEST_CASE("wire calendar: the earliest gap, as the reservations in a map give it", "[link][time-order]") {
    std::mt19937_64 rng(11);
    for (int trial = 0; trial < 200; ++trial) {
        WireCalendar wire;
        std::map<std::uint64_t, std::uint64_t> busy;   // start -> end, disjoint
        std::uint64_t now = 0;
        for (int step = 0; step < 80; ++step) {
            if (rng() % 3 == 0) {
                now += rng() % 20;
                wire.forget(ps(now));
                while (!busy.empty() && busy.begin()->second <= now) busy.erase(busy.begin());
            }
            const std::uint64_t head = now + rng() % 60, ser = 1 + rng() % 12;
            const std::uint64_t min_end = head + rng() % 20;
            // The map's answer: the model before the calendar.
            std::uint64_t s = head;
            auto it = busy.upper_bound(s);
            if (it != busy.begin() && std::prev(it)->second > s) s = std::prev(it)->second;
            for (; it != busy.end(); ++it) {
                if (it->first >= std::max(s + ser, min_end)) break;
                s = std::max(s, it->second);
            }
            INFO("trial " << trial << " step " << step);
            REQUIRE(wire.gap_from(ps(head), ps(ser), ps(min_end)).value() == s);
            const std::uint64_t end = std::max(s + ser, min_end);
            wire.reserve(ps(s), ps(end));
            busy.emplace(s, end);
            REQUIRE(wire.size() == busy.size());
        }
    }
}
