// LazyThread (src/core/lazy_thread.hpp): no thread, no method and no event
// until the wake-up event's first use; no thread until its first
// notification; then the same work at the same times as an SC_THREAD that
// waited on that event from the start. Each TEST_CASE is its own elaboration
// (ctest runs each in its own process).
#include <catch2/catch.hpp>

#include <deque>
#include <initializer_list>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>

#include "src/core/lazy_thread.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

// Threads under `o`, itself included.
unsigned threads_under(const sc_object& o) {
    unsigned n = std::string(o.kind()) == "sc_thread_process";
    for (const sc_object* c : o.get_child_objects()) n += threads_under(*c);
    return n;
}

std::vector<sc_time> ns(std::initializer_list<int> v) {
    std::vector<sc_time> out;
    for (int x : v) out.emplace_back(x, SC_NS);
    return out;
}

const sc_object* child(const sc_object& o, const std::string& basename) {
    for (const sc_object* c : o.get_child_objects())
        if (c->basename() == basename) return c;
    return nullptr;
}

const std::string kWorkerAttribute = std::string(LazyThread::kAttribute) + "worker";

// A queue served by a worker, lazy or an SC_THREAD; work arrives at `arrivals`
// (ns). The worker takes 3 ns per item and notes when it finished each. With
// `watch`, another thread waits for the wake-up event from the start (and
// notes when it was woken).
struct Bench : sc_module {
    std::vector<int> arrivals;
    std::deque<int> queue;
    WakeEvent ev;
    sc_event never;
    std::vector<sc_time> done, watched;
    std::unique_ptr<LazyThread> lazy;

    Bench(sc_module_name n, bool lazy_worker, std::vector<int> at, bool watch = false)
        : sc_module(n), arrivals(std::move(at)) {
        SC_HAS_PROCESS(Bench);
        SC_THREAD(producer);
        if (watch) SC_THREAD(watcher);
        if (lazy_worker) lazy = std::make_unique<LazyThread>("worker", ev, [this] { worker(); });
        else SC_THREAD(worker);
    }
    void producer() {
        for (int t : arrivals) {
            if (sc_time(t, SC_NS) > sc_time_stamp()) wait(sc_time(t, SC_NS) - sc_time_stamp());
            queue.push_back(t);
            ev.notify(SC_ZERO_TIME);
        }
        wait(never);   // alive to the end: a thread that ended leaves the object tree
    }
    void worker() {
        for (;;) {
            while (queue.empty()) wait(ev.get());
            queue.pop_front();
            wait(3, SC_NS);
            done.push_back(sc_time_stamp());
        }
    }
    void watcher() {
        for (;;) {
            wait(ev.get());
            watched.push_back(sc_time_stamp());
        }
    }
};

}   // namespace

TEST_CASE("lazy thread: no thread before the first notification, then the work of an SC_THREAD", "[lazy_thread]") {
    Bench b("b", true, {10, 11, 30});
    // Elaborated: the producer is the only thread and the only process; the
    // module carries the attribute that stands for the thread the worker
    // can become (thread_processes_under counts it).
    CHECK(threads_under(b) == 1);
    CHECK(child(b, "worker") == nullptr);
    CHECK(b.get_attribute(kWorkerAttribute) != nullptr);
    CHECK_FALSE(b.ev.made());
    sc_start(5, SC_NS);
    CHECK_FALSE(b.ev.made());
    CHECK_FALSE(b.lazy->armed());
    CHECK_FALSE(b.lazy->spawned());
    CHECK(threads_under(b) == 1);
    sc_start(10, SC_NS);   // the first notification, at 10 ns, made the event and the method, then the thread
    CHECK(b.ev.made());
    CHECK(b.lazy->armed());
    CHECK(b.lazy->spawned());
    const sc_object* worker = child(b, "worker");
    REQUIRE(worker != nullptr);
    CHECK(std::string(worker->kind()) == "sc_method_process");
    CHECK(child(*worker, "run") != nullptr);
    CHECK(b.get_attribute(kWorkerAttribute) == nullptr);   // now counted as the thread it is
    sc_start();
    CHECK(threads_under(b) == 2);
    CHECK(b.done == ns({13, 16, 33}));
    CHECK(b.queue.empty());
}

TEST_CASE("lazy thread: a waiter that asks for the event first arms the method, the first notification spawns",
          "[lazy_thread]") {
    Bench b("b", true, {10, 11, 30}, true);
    sc_start(5, SC_NS);   // the watcher waits from time 0: the event and the method exist, not the thread
    CHECK(b.ev.made());
    CHECK(b.lazy->armed());
    CHECK_FALSE(b.lazy->spawned());
    CHECK(threads_under(b) == 2);
    CHECK(b.get_attribute(kWorkerAttribute) != nullptr);
    sc_start();
    CHECK(b.lazy->spawned());
    CHECK(threads_under(b) == 3);
    CHECK(b.done == ns({13, 16, 33}));
    CHECK(b.watched == ns({10, 11, 30}));
}

TEST_CASE("lazy thread: made outside a module, or on a wake-up that already wakes another, is refused",
          "[lazy_thread]") {
    WakeEvent loose;
    CHECK_THROWS_AS(LazyThread("worker", loose, [] {}), std::logic_error);
    struct Two : sc_module {
        WakeEvent ev;
        std::unique_ptr<LazyThread> a, b;
        bool refused = false;
        explicit Two(sc_module_name n) : sc_module(n) {
            a = std::make_unique<LazyThread>("a", ev, [] {});
            try {
                b = std::make_unique<LazyThread>("b", ev, [] {});
            } catch (const std::logic_error&) {
                refused = true;
            }
        }
    };
    Two two("two");
    CHECK(two.refused);
    CHECK(two.a != nullptr);
}

TEST_CASE("lazy thread: an SC_THREAD waiting from the start does the same work at the same times", "[lazy_thread]") {
    Bench b("b", false, {10, 11, 30}, true);
    sc_start();
    CHECK(b.done == ns({13, 16, 33}));
    CHECK(b.watched == ns({10, 11, 30}));
}

TEST_CASE("lazy thread: never notified, never spawned", "[lazy_thread]") {
    Bench b("b", true, {});
    sc_start(1, SC_US);
    CHECK_FALSE(b.ev.made());
    CHECK_FALSE(b.lazy->armed());
    CHECK_FALSE(b.lazy->spawned());
    CHECK(child(b, "worker") == nullptr);
    CHECK(b.get_attribute(kWorkerAttribute) != nullptr);
    CHECK(threads_under(b) == 1);
    CHECK(b.done.empty());
}
