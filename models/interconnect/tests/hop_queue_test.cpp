// HopQueue (hop_queue.hpp): events served at their times in (time, key,
// serial) order, whatever order they were posted in; at a time, only once no
// other process is runnable at it, so that a poster that runs later in the
// same time's deltas still gets its place by key; a handler's post for the
// present served in the same time; a post before the present refused. Each
// TEST_CASE is its own elaboration (ctest runs each in its own process).
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>

#include "models/interconnect/hop_queue.hpp"

using namespace vrdmasim;
using sc_core::SC_NS;
using sc_core::sc_time;

namespace {

sc_time ns(double v) { return sc_time(v, SC_NS); }

struct Served {
    sc_time at;   // the event's time (HopQueue::time())
    sc_time kernel;   // the kernel's when it was served
    std::uint64_t key;
    std::uint64_t serial;
};

// Records what it serves; `then` (if set) runs in the handler.
struct Recorder : HopHandler {
    std::vector<Served> log;
    std::function<void(HopQueue&, std::uint64_t)> then;
    void on_hop_event(HopQueue& q, std::uint64_t key, void* what, std::uint32_t) override {
        log.push_back({q.time(), sc_core::sc_time_stamp(), key,
                       static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(what))});
        if (then) then(q, key);
    }
};

HopQueue::Event ev(sc_time t, std::uint64_t key, std::uint64_t serial, Recorder& r) {
    (void)r;   // (served by the recorder its queue was given for link 0: serve_link)
    return HopQueue::Event{t, key, serial, reinterpret_cast<void*>(static_cast<std::uintptr_t>(serial))};
}

// Threads that run a script each.
struct Script : sc_core::sc_module {
    std::function<void()> body;
    Script(sc_core::sc_module_name n, std::function<void()> b) : sc_module(n), body(std::move(b)) {
        SC_HAS_PROCESS(Script);
        SC_THREAD(run);
    }
    void run() { body(); }
};

}   // namespace

TEST_CASE("hop queue: events posted out of order are served at their times, by time, key and serial") {
    HopQueue q("q");
    Recorder r;
    q.serve_link(0, r);
    // One poster, running ahead of the kernel (as a temporally decoupled
    // sender does): it posts for later times first.
    Script s("s", [&] {
        q.post(ev(ns(30), 2, 1, r));
        q.post(ev(ns(10), 5, 2, r));
        q.post(ev(ns(30), 1, 3, r));
        q.post(ev(ns(10), 5, 1, r));
        q.post(ev(ns(20), 0, 4, r));
        CHECK(q.size() == 5);   // all queued before the first is served
    });
    sc_core::sc_start();
    REQUIRE(r.log.size() == 5);
    CHECK(r.log[0].at == ns(10));
    CHECK(r.log[0].serial == 1);   // same time and key: the lower serial first
    CHECK(r.log[1].at == ns(10));
    CHECK(r.log[1].serial == 2);
    CHECK(r.log[2].at == ns(20));
    CHECK(r.log[3].at == ns(30));
    CHECK(r.log[3].key == 1);   // same time: the lower key first, though posted after
    CHECK(r.log[4].key == 2);
    CHECK(q.served() == 5);
    CHECK(q.size() == 0);
}

TEST_CASE("hop queue: a poster that runs later in the same time's deltas still gets its place by key") {
    HopQueue q("q");
    Recorder r;
    q.serve_link(0, r);
    sc_core::sc_event go;
    // A posts key 9 for 50 ns at 50 ns and wakes B a delta later, which
    // wakes C a delta after that; C posts key 1 for the same time. Served:
    // key 1 first, because the queue waits until no process is runnable at
    // 50 ns.
    sc_core::sc_event c_go;
    Script a("a", [&] {
        sc_core::wait(ns(50));
        q.post(ev(ns(50), 9, 1, r));
        go.notify(sc_core::SC_ZERO_TIME);
    });
    Script b("b", [&] {
        sc_core::wait(go);
        c_go.notify(sc_core::SC_ZERO_TIME);
    });
    Script c("c", [&] {
        sc_core::wait(c_go);
        q.post(ev(ns(50), 1, 2, r));
    });
    sc_core::sc_start();
    REQUIRE(r.log.size() == 2);
    CHECK(r.log[0].key == 1);
    CHECK(r.log[1].key == 9);
    CHECK(r.log[0].at == ns(50));
    CHECK(r.log[1].at == ns(50));
    CHECK(q.deferrals() >= 2);
}

TEST_CASE("hop queue: a handler's post for the present is served at the same time, in key order") {
    HopQueue q("q");
    Recorder r;
    q.serve_link(0, r);
    r.then = [&](HopQueue& hq, std::uint64_t key) {
        if (key == 5) hq.post(ev(hq.time(), 3, 7, r));   // lower key, posted while serving
        if (key == 3) hq.post(ev(hq.time() + ns(1), 0, 8, r));
    };
    Script s("s", [&] {
        q.post(ev(ns(5), 5, 1, r));
        q.post(ev(ns(5), 6, 2, r));
    });
    sc_core::sc_start();
    REQUIRE(r.log.size() == 4);
    CHECK(r.log[0].key == 5);
    CHECK(r.log[1].key == 3);   // before key 6: the order of the heap, not of posting
    CHECK(r.log[1].at == ns(5));
    CHECK(r.log[2].key == 6);
    CHECK(r.log[3].at == ns(6));
}

TEST_CASE("hop queue: an event for a time before the present is refused") {
    HopQueue q("q");
    Recorder r;
    q.serve_link(0, r);
    std::string what;
    Script s("s", [&] {
        sc_core::wait(ns(100));
        try {
            q.post(ev(ns(99), 0, 1, r));
        } catch (const std::logic_error& e) {
            what = e.what();
        }
    });
    sc_core::sc_start();
    CHECK(what.find("before the present") != std::string::npos);
    CHECK(q.size() == 0);
    CHECK(r.log.empty());
}

TEST_CASE("hop queue: events before the next time another process acts are served ahead of the kernel") {
    HopQueue q("q");
    Recorder r;
    q.serve_link(0, r);
    sc_core::sc_event wake;
    sc_time woken_at;
    // The event at 20 ns wakes a process for its own time (as a delivery
    // does): the event at 30 ns must then wait for the kernel to pass 20.
    r.then = [&](HopQueue& hq, std::uint64_t key) {
        if (key == 2) {
            wake.notify(hq.time() - sc_core::sc_time_stamp());
            hq.woke(hq.time());
        }
    };
    Script s("s", [&] {
        q.post(ev(ns(10), 1, 1, r));
        q.post(ev(ns(20), 2, 2, r));
        q.post(ev(ns(30), 3, 3, r));
    });
    Script w("w", [&] {
        sc_core::wait(wake);
        woken_at = sc_core::sc_time_stamp();
    });
    sc_core::sc_start();
    REQUIRE(r.log.size() == 3);
    CHECK(r.log[0].at == ns(10));
    CHECK(r.log[1].at == ns(20));
    CHECK(r.log[2].at == ns(30));
    // 10 and 20 in one wake-up at 10 ns: nothing else had anything to do
    // before 20.
    CHECK(r.log[0].kernel == ns(10));
    CHECK(r.log[1].kernel == ns(10));
    // 30 only once the woken process had run at 20.
    CHECK(woken_at == ns(20));
    CHECK(r.log[2].kernel >= ns(20));
}

TEST_CASE("hop queue: events near and far (beyond the calendar's ring), posted in any order, are served in order") {
    // Times from 0 to 40 us (the ring holds some 4.2 us ahead of the
    // present), many in one 1,024 ps bucket, some at the same time; posted
    // by a handler as it serves (each event posts two more, as links do)
    // and by a thread up front, scrambled. The order served must be the
    // sorted order of (time, key, serial), whichever part of the calendar
    // held each.
    HopQueue q("q");
    Recorder r;
    q.serve_link(0, r);
    std::uint64_t lcg = 12345, posted = 0;
    auto next = [&] { return lcg = lcg * 6364136223846793005ull + 1442695040888963407ull; };
    const std::uint64_t kMore = 3000;
    r.then = [&](HopQueue& hq, std::uint64_t) {
        for (int i = 0; i < 2 && posted < kMore; ++i, ++posted) {
            const std::uint64_t v = next();
            // Mostly a few ns ahead; one in eight up to 40 us ahead.
            const std::uint64_t ps = (v >> 61) == 0 ? (v >> 20) % 40'000'000 : (v >> 20) % 3'000;
            hq.post(ev(hq.time() + sc_time(static_cast<double>(ps), sc_core::SC_PS), (v >> 8) % 4, posted + 100, r));
        }
    };
    Script s("s", [&] {
        for (std::uint64_t i = 0; i < 40; ++i) {
            const std::uint64_t v = next();
            q.post(ev(sc_time(static_cast<double>((v >> 20) % 40'000'000), sc_core::SC_PS), (v >> 8) % 4, i, r));
        }
    });
    sc_core::sc_start();
    REQUIRE(r.log.size() == 40 + kMore);
    for (std::size_t i = 1; i < r.log.size(); ++i) {
        const Served& a = r.log[i - 1];
        const Served& b = r.log[i];
        INFO("event " << i << " at " << b.at << " after " << a.at);
        CHECK((a.at < b.at || (a.at == b.at && (a.key < b.key || (a.key == b.key && a.serial < b.serial)))));
    }
    CHECK(q.size() == 0);
}

TEST_CASE("hop queue: the calendar's buckets narrow where events are dense and widen where sparse and keep the order") {
    // Dense: 200 events in flight, each posting the next a random 1..4,000
    // ps ahead (some 100 to a 2,048 ps bucket, posted out of order); then
    // sparse: one chain, 50 ns apart. A ticker every 100 ns stops the
    // queue's serving (the queue looks at its buckets then). The width must
    // come down to the narrowest (256 ps) in the first and up to the widest
    // (16,384 ps, past the first's 2,048) in the second, and the order
    // served stay (time, key, serial) throughout, across the re-bucketings.
    HopQueue q("q");
    Recorder r;
    q.serve_link(0, r);
    std::uint64_t lcg = 7, serial = 1000;
    auto next = [&] { return lcg = lcg * 6364136223846793005ull + 1442695040888963407ull; };
    const std::uint64_t kDense = 60000, kAll = 100000;
    std::uint64_t narrowest = q.bucket_ps(), at_dense_end = 0;
    r.then = [&](HopQueue& hq, std::uint64_t) {
        narrowest = std::min(narrowest, hq.bucket_ps());
        const std::uint64_t n = r.log.size();
        if (n == kDense) at_dense_end = hq.bucket_ps();
        if (serial >= kAll || (n > kDense && hq.size() > 0)) return;   // sparse: one chain
        const std::uint64_t v = next();
        const double ps = n < kDense ? static_cast<double>(1 + (v >> 20) % 4000) : 50000.0;   // (never the present)
        hq.post(ev(hq.time() + sc_time(ps, sc_core::SC_PS), (v >> 8) % 4, serial++, r));
    };
    Script s("s", [&] {
        for (std::uint64_t i = 0; i < 200; ++i)
            q.post(ev(sc_time(static_cast<double>(next() % 4000), sc_core::SC_PS), i % 4, i, r));
    });
    Script ticker("ticker", [&] {
        while (sc_core::sc_time_stamp() < sc_time(3, sc_core::SC_MS)) sc_core::wait(ns(100));
    });
    sc_core::sc_start();
    CHECK(q.size() == 0);
    CHECK(at_dense_end == 256);
    CHECK(narrowest == 256);
    CHECK(q.bucket_ps() == 16384);
    REQUIRE(r.log.size() > kDense + 3 * 4096);
    for (std::size_t i = 1; i < r.log.size(); ++i) {
        const Served& a = r.log[i - 1];
        const Served& b = r.log[i];
        if (!(a.at < b.at || (a.at == b.at && (a.key < b.key || (a.key == b.key && a.serial < b.serial))))) {
            FAIL("event " << i << " at " << b.at << " (key " << b.key << ", serial " << b.serial << ") after " << a.at
                          << " (key " << a.key << ", serial " << a.serial << ")");
        }
    }
}
