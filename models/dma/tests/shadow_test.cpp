// The NetVM NI's shadow page table (models/common/shadow_table.hpp) and
// sender credits (models/dma/credits.hpp) on their own: lookup, miss,
// update, lock; credits spent, waited for, returned at half, conserved.
#include <catch2/catch.hpp>

#include <stdexcept>

#include <systemc>

#include "src/core/stats.hpp"
#include "models/common/shadow_table.hpp"
#include "models/dma/credits.hpp"

using namespace vrdmasim;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_US;

TEST_CASE("shadow table: a page hits from its update time, misses before and after its clear", "[shadow]") {
    ShadowTable t;
    CHECK(t.lookup(1, 0x10000, sc_time(1, SC_US)) == nullptr);   // never mapped: a miss
    t.set(1, 0x10000, ShadowTable::kPage, 0x80004000, true, sc_time(2, SC_US));
    CHECK(t.lookup(1, 0x10010, sc_time(1, SC_US)) == nullptr);   // before the OS's write was done
    const ShadowTable::Entry* e = t.lookup(1, 0x10010, sc_time(2, SC_US));
    REQUIRE(e);
    CHECK(e->pa == 0x80004000);
    CHECK(e->writable);
    CHECK(t.lookup(2, 0x10010, sc_time(3, SC_US)) == nullptr);   // another process's address space
    CHECK(t.lookup(1, 0x11000, sc_time(3, SC_US)) == nullptr);   // the next page
    CHECK(t.clear(1, 0x10000, ShadowTable::kPage) == 1);
    CHECK(t.lookup(1, 0x10010, sc_time(3, SC_US)) == nullptr);
    CHECK(t.sets() == 1);
    CHECK(t.clears() == 1);
    CHECK(t.entries() == 0);
}

TEST_CASE("shadow table: a 2 MiB block translates every page in it and clearing one page clears the block",
          "[shadow]") {
    ShadowTable t;
    t.set(3, 0x200000, ShadowTable::kBlock, 0x40000000, false, sc_time(0, SC_NS));
    const ShadowTable::Entry* e = t.lookup(3, 0x200000 + 5 * 4096 + 7, sc_time(1, SC_NS));
    REQUIRE(e);
    CHECK(e->size == ShadowTable::kBlock);
    CHECK(e->pa + ((0x200000 + 5 * 4096 + 7) & (ShadowTable::kBlock - 1)) == 0x40000000 + 5 * 4096 + 7);
    CHECK_FALSE(e->writable);
    // A split installs 4 KiB entries; they are found first.
    t.set(3, 0x201000, ShadowTable::kPage, 0x50001000, true, sc_time(0, SC_NS));
    CHECK(t.lookup(3, 0x201000, sc_time(1, SC_NS))->pa == 0x50001000);
    // Clearing one page inside the block removes the block and that page.
    CHECK(t.clear(3, 0x201000, 4096) == 2);
    CHECK(t.lookup(3, 0x200000, sc_time(1, SC_NS)) == nullptr);
    // A range clear removes only what overlaps it.
    t.set(3, 0x400000, 4096, 0x1000, true, sc_time(0, SC_NS));
    t.set(3, 0x402000, 4096, 0x2000, true, sc_time(0, SC_NS));
    CHECK(t.clear(3, 0x401000, 4096) == 0);
    CHECK(t.clear(3, 0x400000, 3 * 4096) == 2);
}

TEST_CASE("shadow table: a lock is an interval the OS sees at its own time", "[shadow]") {
    ShadowTable t;
    t.lock(1, 0x7000 + 12, sc_time(10, SC_US), sc_time(11, SC_US));
    CHECK_FALSE(t.locked(1, 0x7000, sc_time(9, SC_US)));   // not yet: the NI's access starts later
    CHECK(t.locked(1, 0x7fff, sc_time(10, SC_US)));
    CHECK(t.locked(1, 0x7000, sc_time(10500, SC_NS)));
    CHECK_FALSE(t.locked(1, 0x7000, sc_time(11, SC_US)));   // released at the access's end
    CHECK_FALSE(t.locked(1, 0x8000, sc_time(10500, SC_NS)));
    CHECK_FALSE(t.locked(2, 0x7000, sc_time(10500, SC_NS)));
    // A later lock of the same page keeps the earlier interval (within 1 ms).
    t.lock(1, 0x7000, sc_time(20, SC_US), sc_time(21, SC_US));
    CHECK(t.locked(1, 0x7000, sc_time(10500, SC_NS)));
    CHECK(t.locked(1, 0x7000, sc_time(20500, SC_NS)));
    CHECK(t.locks_taken() == 2);
}

namespace {
// Runs `body` in an SC_THREAD (credits may wait()).
struct Thread : sc_core::sc_module {
    std::function<void()> body;
    Thread(sc_core::sc_module_name n, std::function<void()> b) : sc_module(n), body(std::move(b)) {
        SC_HAS_PROCESS(Thread);
        SC_THREAD(run);
    }
    void run() { body(); }
};
}   // namespace

TEST_CASE("credits: spent per packet, returned at half, a sender without credits waits for the return",
          "[shadow][credits]") {
    StatRegistry stats;
    SenderCredits tx, rx;   // node 0 sends to node 1
    struct Return {
        unsigned to;
        std::uint64_t bytes;
        sc_time at;
    };
    std::vector<Return> returns;
    tx.enable(stats, "n0.", 2, 1024, [](unsigned, std::uint64_t, sc_time) { FAIL("the sender returns nothing"); });
    rx.enable(stats, "n1.", 2, 1024, [&](unsigned to, std::uint64_t b, sc_time at) { returns.push_back({to, b, at}); });
    std::vector<sc_time> sent;
    Thread sender("sender", [&] {
        for (int i = 0; i < 6; ++i) sent.push_back(tx.spend(1, 256, sc_core::sc_time_stamp()));
    });
    Thread receiver("receiver", [&] {
        // Packets 0..3 are placed at 5, 6, 7, 8 us; at 6 us the receiver owes
        // 512 B (half): a credit packet, arriving at the sender 1 us later.
        for (int i = 0; i < 4; ++i) {
            sc_core::wait(i == 0 ? sc_time(5, SC_US) : sc_time(1, SC_US));
            rx.placed(0, 256, sc_core::sc_time_stamp());
            for (auto& r : returns) {
                if (r.bytes == 0) continue;
                tx.returned(1, r.bytes, r.at + sc_time(1, SC_US));
                r.bytes = 0;
            }
        }
    });
    sc_core::sc_start();
    REQUIRE(sent.size() == 6);
    for (int i = 0; i < 4; ++i) CHECK(sent[i] == sc_time(0, SC_NS));   // 4 x 256 B = the 1 KiB of credit
    // Packets 4 and 5 wait for the first return (placed at 6 us, 1 us on its way).
    CHECK(sent[4] == sc_time(7, SC_US));
    CHECK(sent[5] == sc_time(7, SC_US));
    REQUIRE(returns.size() == 2);   // at 6 us (512 B) and 8 us (512 B)
    CHECK(returns[0].to == 0);
    CHECK(returns[0].at == sc_time(6, SC_US));
    CHECK(stats.find_counter("n0.credits_spent")->value() == 6 * 256);
    CHECK(stats.find_counter("n0.credits_returned")->value() == 1024);
    CHECK(stats.find_counter("n0.credit_waits")->value() == 2);
    // 7 us (asked at 0) and 1 us (asked at 6 us, when the return was seen on its way).
    CHECK(stats.find_scalar("n0.credit_wait")->value() == Approx(8.0));
    CHECK(stats.find_counter("n1.credit_packets")->value() == 2);
    CHECK(stats.find_scalar("n1.credits_owed")->value() == 0);
    // Conserved: what the sender spent came back, is owed, or its packets are not placed yet (2 x 256 B).
    CHECK(tx.available(1) == 1024 + 1024 - 6 * 256);
    // A node keeps state only for the nodes it talks to; every other one
    // still has its whole ni.credits, and a node beyond the system is an error.
    CHECK(tx.available(0) == 1024);
    CHECK(rx.available(1) == 1024);
    CHECK_THROWS_AS(tx.available(2), std::out_of_range);
    CHECK_THROWS_AS(rx.placed(2, 256, sc_core::sc_time_stamp()), std::out_of_range);
}
