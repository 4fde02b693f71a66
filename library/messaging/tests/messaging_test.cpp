// The two-sided library's matching and credit logic on their own (no
// simulation): MPI's matching order, wildcards and the unexpected queue;
// credits that never let a slot be written before it was freed.
#include <catch2/catch.hpp>

#include <stdexcept>

#include "library/messaging/credits.hpp"
#include "library/messaging/matching.hpp"

using namespace vrdmasim::msg;

TEST_CASE("matching: a message matches the first posted receive that accepts it", "[msg]") {
    MatchQueues q;
    std::uint64_t m = 0;
    CHECK_FALSE(q.post_receive(1, 7, 100, m));
    CHECK_FALSE(q.post_receive(kAnySource, 7, 101, m));
    CHECK_FALSE(q.post_receive(2, kAnyTag, 102, m));
    // From node 2, tag 7: receive 100 wants node 1; 101 (any source) is first.
    REQUIRE(q.arrive(2, 7, 1, m));
    CHECK(m == 101);
    // From node 2, tag 9: only 102 (any tag) takes it.
    REQUIRE(q.arrive(2, 9, 2, m));
    CHECK(m == 102);
    // From node 1, tag 8: nobody; unexpected.
    CHECK_FALSE(q.arrive(1, 8, 3, m));
    CHECK(q.unexpected() == 1);
    REQUIRE(q.arrive(1, 7, 4, m));
    CHECK(m == 100);
    CHECK(q.posted() == 0);
}

TEST_CASE("matching: a context's wildcard tag takes that context's tags only", "[msg]") {
    MatchQueues q;
    std::uint64_t m = 0;
    const std::uint64_t ctx1 = std::uint64_t(1) << 41, ctx2 = std::uint64_t(2) << 41;
    CHECK_FALSE(q.arrive(3, 5, 10, m));   // context 0
    CHECK_FALSE(q.arrive(3, ctx2 | 5, 11, m));
    CHECK_FALSE(q.arrive(3, (std::uint64_t(1) << 40) | 5, 12, m));   // above bit 40: not a context-0 tag
    CHECK_FALSE(q.arrive(3, ctx1 | 7, 13, m));
    REQUIRE(q.post_receive(3, ctx1 | kContextAnyTag, 200, m));
    CHECK(m == 13);
    REQUIRE(q.post_receive(kAnySource, ctx2 | kContextAnyTag, 201, m));
    CHECK(m == 11);
    REQUIRE(q.post_receive(3, kContextAnyTag, 202, m));
    CHECK(m == 10);
    CHECK_FALSE(q.post_receive(3, ctx1 | kContextAnyTag, 203, m));   // message 12 is no context's p2p tag
    CHECK(q.unexpected() == 1);
    REQUIRE(q.post_receive(3, kAnyTag, 204, m));
    CHECK(m == 12);
    CHECK_THROWS(q.arrive(3, ctx1 | kContextAnyTag, 14, m));
}

TEST_CASE("matching: a receive takes the oldest unexpected message it accepts (non-overtaking)", "[msg]") {
    MatchQueues q;
    std::uint64_t m = 0;
    CHECK_FALSE(q.arrive(3, 5, 10, m));
    CHECK_FALSE(q.arrive(4, 5, 11, m));
    CHECK_FALSE(q.arrive(3, 5, 12, m));
    CHECK_FALSE(q.arrive(3, 6, 13, m));
    // A probe sees what a receive would take, and leaves it.
    REQUIRE(q.peek(kAnySource, 5, m));
    CHECK(m == 10);
    REQUIRE(q.peek(3, 6, m));
    CHECK(m == 13);
    CHECK(q.searched() == 4);
    CHECK_FALSE(q.peek(4, 6, m));
    CHECK(q.unexpected() == 4);
    REQUIRE(q.post_receive(3, 5, 200, m));
    CHECK(m == 10);   // the first of the two (3, 5) messages
    REQUIRE(q.post_receive(3, 5, 201, m));
    CHECK(m == 12);
    REQUIRE(q.post_receive(kAnySource, kAnyTag, 202, m));
    CHECK(m == 11);   // the oldest left
    CHECK(q.searched() == 1);
    REQUIRE(q.post_receive(3, kAnyTag, 203, m));
    CHECK(m == 13);
    CHECK(q.unexpected() == 0);
    CHECK_FALSE(q.post_receive(3, 5, 204, m));
    CHECK(q.posted() == 1);
    CHECK_THROWS_AS(q.arrive(kAnySource, 5, 14, m), std::logic_error);
}

TEST_CASE("matching: a cancelled receive leaves the queue, a matched one cannot be cancelled", "[msg]") {
    MatchQueues q;
    std::uint64_t m = 0;
    CHECK_FALSE(q.post_receive(kAnySource, 7, 100, m));
    CHECK_FALSE(q.post_receive(2, 7, 101, m));
    CHECK_FALSE(q.post_receive(kAnySource, kAnyTag, 102, m));
    REQUIRE(q.cancel(100));
    CHECK(q.posted() == 2);
    CHECK_FALSE(q.cancel(100));   // gone already
    // Receive 100 withdrawn: node 2's tag 7 goes to 101, the next in order.
    REQUIRE(q.arrive(2, 7, 1, m));
    CHECK(m == 101);
    CHECK_FALSE(q.cancel(101));   // matched
    REQUIRE(q.arrive(3, 7, 2, m));
    CHECK(m == 102);
    CHECK(q.posted() == 0);
}

TEST_CASE("credits: a sender never has more than `slots` messages unfreed", "[msg]") {
    SendCredits out(4);
    RecvCredits in(4);
    for (std::uint64_t k = 0; k < 4; ++k) CHECK(out.take() == k);
    CHECK_FALSE(out.available());
    CHECK_THROWS_AS(out.take(), std::logic_error);   // slot 0 not copied out yet
    in.free_one();
    CHECK_FALSE(in.due());   // one of four: below half
    in.free_one();
    REQUIRE(in.due());
    out.update(in.freed());
    in.returned(in.freed());
    CHECK_FALSE(in.due());
    CHECK(out.take() == 4);   // slot 0 again, after it was freed
    CHECK(out.take() == 5);
    CHECK_FALSE(out.available());
    // A stale count (an older update seen late) gives nothing back.
    out.update(1);
    CHECK(out.freed() == 2);
    CHECK_FALSE(out.available());
    // More freed than sent is a protocol error.
    CHECK_THROWS_AS(out.update(7), std::logic_error);
}

TEST_CASE("credits: one slot returns at every free", "[msg]") {
    RecvCredits in(1);
    CHECK_FALSE(in.due());
    in.free_one();
    CHECK(in.due());
}
