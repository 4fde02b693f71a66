// Tests of RingList: a FIFO on a ring with insertion anywhere, as the
// exact links' queues and credits and the DRAM's pending writes use it.
#include <catch2/catch.hpp>

#include "src/core/ring_list.hpp"

#include <algorithm>
#include <cstddef>
#include <deque>
#include <random>
#include <vector>

using namespace vrdmasim;

TEST_CASE("ring list: held entries in order, counted", "[lazy_deque]") {
    // A busy list as a RingList, and an insertion by time, as a
    // credit given out of order joins the list of those on their way.
    RingList<int> l;
    CHECK(l.empty());
    for (int k = 0; k < 3; ++k) l.push_back(k);
    int next = 3, expect = 0;
    for (int step = 0; step < 100000; ++step) {
        REQUIRE(l.size() == 3);
        REQUIRE(l.front() == expect++);
        REQUIRE(l[2] == next - 1);
        l.pop_front();
        l.push_back(next++);
    }
    // 10, 20, 40 held: 30 goes between 20 and 40.
    RingList<int> t;
    for (int v : {5, 10, 20, 40}) t.push_back(v);
    t.pop_front();
    t.insert(t.begin() + 2, 30);
    REQUIRE(t.size() == 4);
    CHECK(std::vector<int>(t.begin(), t.end()) == std::vector<int>{10, 20, 30, 40});
    CHECK(t.back() == 40);
    while (!t.empty()) t.pop_front();
    CHECK(t.size() == 0);
    CHECK(t.begin() == t.end());
    t.push_back(7);
    CHECK(t.front() == 7);
}

TEST_CASE("ring list: a ring that wraps and grows keeps every order a deque keeps", "[lazy_deque]") {
    // Random reads from the front, writes behind and insertions anywhere
    // (as credits and arrivals out of order), the ring wrapping and
    // growing under them, checked at every step against a std::deque.
    std::mt19937_64 rng(7);
    RingList<int> l;
    std::deque<int> d;
    int next = 0;
    std::size_t most = 0;
    for (int step = 0; step < 200000; ++step) {
        // Sizes that swing between 0 and some 1,000, crossing every power of two.
        const unsigned r = static_cast<unsigned>(rng() % 100);
        const bool grow = (step / 5000) % 2 == 0;
        if (!d.empty() && r < (grow ? 40u : 60u)) {
            REQUIRE(l.front() == d.front());
            l.pop_front();
            d.pop_front();
        } else if (!d.empty() && r < (grow ? 55u : 70u)) {
            const std::size_t at = static_cast<std::size_t>(rng() % (d.size() + 1));
            l.insert(l.begin() + static_cast<std::ptrdiff_t>(at), next);
            d.insert(d.begin() + static_cast<std::ptrdiff_t>(at), next);
            ++next;
        } else {
            l.push_back(next);
            d.push_back(next);
            ++next;
        }
        most = std::max(most, d.size());
        REQUIRE(l.size() == d.size());
        REQUIRE(l.empty() == d.empty());
        if (!d.empty()) {
            REQUIRE(l.back() == d.back());
            const std::size_t k = static_cast<std::size_t>(rng() % d.size());
            REQUIRE(l[k] == d[k]);
        }
        if (step % 997 == 0) REQUIRE(std::equal(l.begin(), l.end(), d.begin(), d.end()));
    }
    CHECK(most > 64);   // (it grew past several sizes)
    // Walked backwards from the end, as a queue finds a late packet's place.
    std::vector<int> back;
    for (auto it = l.end(); it != l.begin();) back.push_back(*--it);
    CHECK(std::equal(back.begin(), back.end(), d.rbegin(), d.rend()));
}
