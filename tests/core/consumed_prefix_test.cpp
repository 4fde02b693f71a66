// Tests of drop_consumed: a list read from its front and written behind it
// keeps only what it still holds, even if it never empties.
#include <catch2/catch.hpp>

#include "src/core/consumed_prefix.hpp"

#include <algorithm>
#include <cstddef>
#include <vector>

using namespace vrdmasim;

TEST_CASE("consumed prefix: a list that never empties keeps only what it holds, in order", "[lazy_deque]") {
    // As a busy link's credits on their way: three held at any time, one
    // read and one written per step, 100,000 steps.
    std::vector<int> v{0, 1, 2};
    std::size_t first = 0;
    int next = 3, expect = 0;
    std::size_t most = 0;
    for (int step = 0; step < 100000; ++step) {
        REQUIRE(v[first] == expect++);
        ++first;
        drop_consumed(v, first);
        v.push_back(next++);
        most = std::max(most, v.size());
    }
    // Held: 3; read and not dropped yet: fewer than kConsumedDropAt or than
    // what is held.
    CHECK(v.size() - first == 3);
    CHECK(most <= 3 + kConsumedDropAt + 1);
    // Read to the end: empty, its index back at 0.
    first = v.size();
    drop_consumed(v, first);
    CHECK(v.empty());
    CHECK(first == 0);
}
