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

TEST_CASE("held space: long runs, mostly in time order, as the sweep of their packets", "[link][time-order]") {
    // As a link counts them: starts mostly after every other (some overtake
    // or tie), freeings in about the same order, the present moving slowly,
    // so that the lists grow, are compacted and hold tens of packets, and
    // the buffer is often full.
    std::mt19937_64 rng(13);
    std::size_t most_kept = 0, waited = 0, queries = 0;
    for (int trial = 0; trial < 30; ++trial) {
        HeldSpace held;
        std::vector<HeldSpace::Packet> packets, kept;
        std::uint64_t now = 0, last = 0;
        const unsigned capacity = 40 + static_cast<unsigned>(rng() % 100);
        for (int step = 0; step < 400; ++step) {
            if (rng() % 3 == 0) {
                // The present some way behind the last start (a quantum).
                const std::uint64_t lag = rng() % 50;
                if (last > lag) now = std::max(now, last - lag);
                held.forget(ps(now));
                // The sweep needs only what can still be held.
                kept.clear();
                for (const HeldSpace::Packet& p : packets)
                    if (p.freed.value() > now) kept.push_back(p);
                packets.swap(kept);
            }
            std::uint64_t in;
            switch (rng() % 10) {
            case 0: in = now + rng() % 30; break;   // anywhere: may overtake
            case 1: in = std::max(now, last); break;   // a tie with the last
            default: in = std::max(now, last) + 1 + rng() % 4; break;
            }
            last = std::max(last, in);
            const std::uint64_t freed = in + 1 + rng() % (rng() % 4 == 0 ? 120 : 30);
            const unsigned flits = 2 + static_cast<unsigned>(rng() % 17);
            held.add(ps(in), ps(freed), flits);
            packets.push_back({ps(in), ps(freed), flits});
            const sc_time s = ps(now + rng() % 80);
            INFO("trial " << trial << " step " << step << " now " << now << " s " << s.value());
            REQUIRE(held.held_at(s) == HeldSpace::swept::held_at(packets, s));
            REQUIRE(held.most_from(s) == HeldSpace::swept::most_from(packets, s));
            const unsigned f = 2 + static_cast<unsigned>(rng() % 17);
            const sc_time fits = held.fits_from(s, f, capacity);
            REQUIRE(fits.value() == HeldSpace::swept::fits_from(packets, s, f, capacity).value());
            const sc_time until = ps(s.value() + 1 + rng() % 60);
            REQUIRE(held.most_during(s, until, f) == HeldSpace::swept::most_during(packets, s, until, f));
            most_kept = std::max(most_kept, held.size());
            waited += fits > s;
            ++queries;
        }
    }
    // The cases it is for: lists grown (and compacted) past their first
    // allocation, and a full buffer often.
    CHECK(most_kept >= 64);
    CHECK(waited * 10 >= queries);
}

TEST_CASE("held space: a router's input read from its link's credits, each packet a shift after its start",
          "[link][time-order]") {
    // The link counts each packet from its start; the router's input holds
    // it from its head's arrival, `shift` later (a flit and the latency),
    // until it is freed, never before that arrival. The link keeps the
    // starts after now less the shift.
    std::mt19937_64 rng(17);
    for (int trial = 0; trial < 100; ++trial) {
        HeldSpace held;
        std::vector<HeldSpace::Packet> link, router;
        std::uint64_t now = 0, last = 0;
        const std::uint64_t shift = rng() % 12;
        const unsigned capacity = 40 + static_cast<unsigned>(rng() % 60);
        for (int step = 0; step < 150; ++step) {
            if (rng() % 3 == 0) {
                const std::uint64_t lag = rng() % 30;
                if (last > lag) now = std::max(now, last - lag);
                held.forget(ps(now), ps(shift));
            }
            const std::uint64_t in = rng() % 5 == 0 ? now + rng() % 20 : std::max(now, last) + rng() % 4;
            last = std::max(last, in);
            const std::uint64_t freed = in + shift + rng() % 40;   // at or after the arrival
            const unsigned flits = 2 + static_cast<unsigned>(rng() % 17);
            held.add(ps(in), ps(freed), flits);
            link.push_back({ps(in), ps(freed), flits});
            router.push_back({ps(in + shift), ps(freed), flits});
            for (int q = 0; q < 3; ++q) {
                const sc_time s = ps(now + rng() % 60), until = ps(s.value() + 1 + rng() % 40);
                const unsigned f = 2 + static_cast<unsigned>(rng() % 17);
                INFO("trial " << trial << " step " << step << " now " << now << " shift " << shift << " s "
                              << s.value());
                REQUIRE(held.most_during_shifted(s, until, ps(shift), f) ==
                        HeldSpace::swept::most_during(router, s, until, f));
                // The link's own answers are as without the starts kept longer.
                REQUIRE(held.most_from(s) == HeldSpace::swept::most_from(link, s));
                REQUIRE(held.fits_from(s, f, capacity).value() ==
                        HeldSpace::swept::fits_from(link, s, f, capacity).value());
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
            // The calendar keeps the busy blocks: reservations back to back
            // are one.
            std::size_t blocks = 0;
            std::uint64_t block_end = 0;
            for (const auto& r : busy) {
                if (blocks == 0 || r.first != block_end) ++blocks;
                block_end = r.second;
            }
            REQUIRE(wire.size() == blocks);
        }
    }
}
