// LazyThread (src/core/lazy_thread.hpp): no thread until the wake-up event's
// first notification; then the same work at the same times as an SC_THREAD
// that waited on that event from the start. Each TEST_CASE is its own
// elaboration (ctest runs each in its own process).
#include <catch2/catch.hpp>

#include <deque>
#include <initializer_list>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "core/lazy_thread.hpp"

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

// A queue served by a worker, lazy or an SC_THREAD; work arrives at `arrivals`
// (ns). The worker takes 3 ns per item and notes when it finished each.
struct Bench : sc_module {
    std::vector<int> arrivals;
    std::deque<int> queue;
    sc_event ev, never;
    std::vector<sc_time> done;
    std::unique_ptr<LazyThread> lazy;

    Bench(sc_module_name n, bool lazy_worker, std::vector<int> at) : sc_module(n), arrivals(std::move(at)) {
        SC_HAS_PROCESS(Bench);
        SC_THREAD(producer);
        if (lazy_worker)
            lazy = std::make_unique<LazyThread>("worker", ev, [this] { worker(); });
        else
            SC_THREAD(worker);
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
            while (queue.empty()) wait(ev);
            queue.pop_front();
            wait(3, SC_NS);
            done.push_back(sc_time_stamp());
        }
    }
};

}  // namespace

TEST_CASE("lazy thread: no thread before the first notification, then the work of an SC_THREAD", "[lazy_thread]") {
    Bench b("b", true, {10, 11, 30});
    // Elaborated: the producer is the only thread; the worker is a method
    // marked as the thread it can become.
    CHECK(threads_under(b) == 1);
    const sc_object* worker = nullptr;
    for (const sc_object* c : b.get_child_objects())
        if (std::string(c->basename()) == "worker") worker = c;
    REQUIRE(worker != nullptr);
    CHECK(std::string(worker->kind()) == "sc_method_process");
    CHECK(worker->get_attribute(LazyThread::kAttribute) != nullptr);
    sc_start(5, SC_NS);
    CHECK_FALSE(b.lazy->spawned());
    CHECK(threads_under(b) == 1);
    sc_start();
    CHECK(b.lazy->spawned());
    CHECK(threads_under(b) == 2);
    CHECK(b.done == ns({13, 16, 33}));
    CHECK(b.queue.empty());
}

TEST_CASE("lazy thread: an SC_THREAD waiting from the start does the same work at the same times",
          "[lazy_thread]") {
    Bench b("b", false, {10, 11, 30});
    sc_start();
    CHECK(b.done == ns({13, 16, 33}));
}

TEST_CASE("lazy thread: never notified, never spawned", "[lazy_thread]") {
    Bench b("b", true, {});
    sc_start(1, SC_US);
    CHECK_FALSE(b.lazy->spawned());
    CHECK(threads_under(b) == 1);
    CHECK(b.done.empty());
}
