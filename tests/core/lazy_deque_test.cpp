// Tests of LazyDeque: a std::deque that allocates on its first element.
#include <catch2/catch.hpp>

#include "src/core/lazy_deque.hpp"

#include <algorithm>
#include <deque>
#include <random>

using namespace vrdmasim;

TEST_CASE("lazy deque: nothing allocated until the first element, then std::deque's behaviour", "[lazy_deque]") {
    LazyDeque<int> q;
    CHECK_FALSE(q.allocated());
    CHECK(q.empty());
    CHECK(q.size() == 0);
    CHECK(q.begin() == q.end());
    const LazyDeque<int>& cq = q;
    CHECK(cq.begin() == cq.end());
    // A sorted insert into a never-used queue (as the completion signals do).
    CHECK(std::upper_bound(q.begin(), q.end(), 5) == q.end());
    CHECK_FALSE(q.allocated());
    q.insert(std::upper_bound(q.begin(), q.end(), 5), 5);
    CHECK(q.allocated());
    CHECK(q.size() == 1);
    CHECK(q.front() == 5);
    q.pop_front();
    CHECK(q.empty());
    CHECK(q.allocated());   // kept once used
}

TEST_CASE("lazy deque: random operations match std::deque", "[lazy_deque]") {
    std::mt19937 rng(7);
    for (int round = 0; round < 20; ++round) {
        LazyDeque<int> q;
        std::deque<int> ref;
        for (int step = 0; step < 2000; ++step) {
            const int v = static_cast<int>(rng() % 1000);
            switch (rng() % 7) {
            case 0: q.push_back(v), ref.push_back(v); break;
            case 1: q.push_front(v), ref.push_front(v); break;
            case 2:
                q.insert(std::upper_bound(q.begin(), q.end(), v), v);
                ref.insert(std::upper_bound(ref.begin(), ref.end(), v), v);
                break;
            case 3:
                if (!ref.empty()) q.pop_front(), ref.pop_front();
                break;
            case 4:
                if (!ref.empty()) q.pop_back(), ref.pop_back();
                break;
            case 5:
                if (!ref.empty()) {
                    const auto k = static_cast<long>(rng() % ref.size());
                    q.erase(q.begin() + k), ref.erase(ref.begin() + k);
                }
                break;
            default: q.emplace_back(v), ref.emplace_back(v); break;
            }
            REQUIRE(q.size() == ref.size());
            REQUIRE(std::equal(q.begin(), q.end(), ref.begin(), ref.end()));
            if (!ref.empty()) {
                REQUIRE(q.front() == ref.front());
                REQUIRE(q.back() == ref.back());
                REQUIRE(q[ref.size() / 2] == ref[ref.size() / 2]);
            }
        }
        LazyDeque<int> copy = q;
        CHECK(std::equal(copy.begin(), copy.end(), ref.begin(), ref.end()));
        LazyDeque<int> empty_copy = LazyDeque<int>();
        CHECK_FALSE(empty_copy.allocated());
    }
}
