// The stack arena (src/sim/thread_stacks.hpp): SystemC's thread stacks in a
// few memory mappings, a thread that overflows its stack found and named,
// more threads than SystemC's own stacks could map under the host's
// vm.max_map_count, and the thread budget counting what the arena maps.
// Each TEST_CASE is its own elaboration (ctest runs each in its own process).
#define SC_INCLUDE_DYNAMIC_PROCESSES
#include <catch2/catch.hpp>

#include <cstddef>
#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include "src/core/params.hpp"
#include "src/sim/thread_budget.hpp"
#include "src/sim/thread_stacks.hpp"

using namespace sc_core;
namespace ts = vrdmasim::thread_stacks;

namespace {

std::size_t mappings_now() {
    std::ifstream f("/proc/self/maps");
    std::size_t n = 0;
    for (std::string line; std::getline(f, line);) ++n;
    return n;
}

std::size_t max_map_count() {
    std::ifstream f("/proc/sys/vm/max_map_count");
    std::size_t v = 0;
    return f >> v ? v : 0;
}

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

// Uses at least `bytes` of the stack below `top` (an address in the
// caller's frame), writing every frame: what a deep recursion does.
__attribute__((noinline)) int dig(std::uintptr_t top, std::size_t bytes) {
    volatile char pad[512];
    for (std::size_t i = 0; i < sizeof pad; ++i) pad[i] = static_cast<char>(i | 1);
    const auto here = reinterpret_cast<std::uintptr_t>(&pad[0]);
    if (top - here < bytes) return dig(top, bytes) + pad[7];
    return pad[0];
}
std::uintptr_t address(const void* p) { return reinterpret_cast<std::uintptr_t>(p); }

// Threads with a stack of `stack` bytes each, each using `use` bytes of it
// and then waiting forever (alive at the end), noting where its stack is.
struct Diggers : sc_module {
    std::vector<std::size_t> uses;
    std::size_t stack;
    std::vector<const void*> where;
    std::vector<std::string> names;
    sc_event never;
    Diggers(sc_module_name n, std::size_t stack_bytes, std::vector<std::size_t> use)
        : sc_module(n), uses(std::move(use)), stack(stack_bytes), where(uses.size()), names(uses.size()) {
        for (std::size_t i = 0; i < uses.size(); ++i) {
            sc_spawn_options o;
            o.set_stack_size(stack);
            sc_spawn([this, i] { run(i); }, ("digger" + std::to_string(i)).c_str(), &o);
        }
    }
    void run(std::size_t i) {
        char top = 0;
        where[i] = &top;
        names[i] = sc_get_current_process_handle().name();
        if (uses[i] > 0) dig(address(&top), uses[i]);
        wait(never);
    }
};

}   // namespace

TEST_CASE("thread stacks: SystemC's stacks are the arena's, each named by its thread", "[thread_stacks]") {
    REQUIRE(ts::mode() == ts::Mode::Arena);
    Diggers d("d", 64 << 10, {0, 0, 0, 16 << 10});
    sc_start(1, SC_NS);
    const ts::Usage u = ts::usage();
    CHECK(u.live == 4);
    CHECK(u.slots == 4);
    CHECK(u.chunks == 1);
    for (std::size_t i = 0; i < d.names.size(); ++i) {
        INFO("thread " << d.names[i]);
        CHECK(ts::thread_of(d.where[i]) == d.names[i]);
    }
    CHECK(ts::check().empty());
}

TEST_CASE("thread stacks: a thread that overflows its stack fails the check, named with its stack size",
          "[thread_stacks]") {
    // 64 KiB: SystemC's red zone takes its lowest page; the zone begins there.
    // One digger stays well within its stack, one uses all but 1 KiB of what
    // SystemC leaves it, one runs 2 KiB into the red zone's page.
    Diggers d("d", 64 << 10, {32 << 10, 58 << 10, 62 << 10});
    sc_start(1, SC_NS);
    const std::string e = ts::check();
    INFO(e);
    CHECK(contains(e, "the stack of a SystemC thread overflowed: d.digger2 (64 KiB)"));
    CHECK_FALSE(contains(e, "digger0"));
    CHECK_FALSE(contains(e, "digger1"));
    CHECK(contains(e, "cannot be trusted"));
    CHECK(contains(e, "set_stack_size"));
    CHECK(contains(e, "VRDMASIM_STACK_GUARD_PAGES=1"));
    // Reported again by every later check: the run stays failed.
    CHECK(ts::check() == e);
}

TEST_CASE("thread stacks: an overflow of a thread that ended is found when its stack is released", "[thread_stacks]") {
    struct Ends : sc_module {
        sc_process_handle h;
        explicit Ends(sc_module_name n) : sc_module(n) {
            sc_spawn_options o;
            o.set_stack_size(64 << 10);
            h = sc_spawn(
                [] {
                    char top = 0;
                    dig(address(&top), 62 << 10);
                },
                "overflows", &o);
        }
    } m("m");
    sc_start(1, SC_NS);
    REQUIRE(m.h.terminated());
    // The thread's object, and with it its stack, goes with its last handle.
    m.h = sc_process_handle();
    sc_start(1, SC_NS);
    CHECK(ts::usage().live == 0);
    const std::string e = ts::check();
    INFO(e);
    CHECK(contains(e, "m.overflows (64 KiB, since ended)"));
}

TEST_CASE("thread stacks: more threads than SystemC's own stacks could map run in a few mappings", "[thread_stacks]") {
    // SystemC's own stacks cost two mappings each: this many threads would
    // exceed vm.max_map_count. Each waits three times, so that all are alive
    // (and have touched their stacks) at once.
    const std::size_t limit = max_map_count();
    REQUIRE(limit > 0);
    if (limit > 65530) {
        WARN("vm.max_map_count is raised here (" << limit << "): SystemC's own stacks would fit; nothing to show");
        return;
    }
    const std::size_t threads = limit / 2 + 1000;
    const std::size_t before = mappings_now();
    struct Many : sc_module {
        std::size_t woken = 0;
        std::size_t peak_mappings = 0;
        sc_event never;
        Many(sc_module_name n, std::size_t count) : sc_module(n) {
            for (std::size_t i = 0; i < count; ++i)
                sc_spawn(
                    [this, i] {
                        for (int k = 0; k < 3; ++k) wait(1 + i % 7, SC_NS);
                        ++woken;
                        // Alive to the end: a thread that ends is taken
                        // out of SystemC's process list by a linear search.
                        wait(never);
                    },
                    ("t" + std::to_string(i)).c_str());
            sc_spawn(
                [this] {
                    wait(2, SC_NS);
                    peak_mappings = mappings_now();
                },
                "count");
        }
    } many("many", threads);
    sc_start();
    CHECK(many.woken == threads);
    INFO("mappings before " << before << ", during the run " << many.peak_mappings << ", limit " << limit);
    CHECK(2 * threads > limit);
    // The stacks (about 8.6 GiB of address space) take a few chunks.
    const ts::Usage u = ts::usage();
    CHECK(u.slots >= threads);
    CHECK(u.chunks <= ts::need_for(threads + 1, ts::default_stack_bytes()).mappings);
    CHECK(many.peak_mappings < before + 100);
    CHECK(ts::check().empty());
}

TEST_CASE("thread stacks: the thread budget counts the arena's mappings", "[thread_stacks]") {
    REQUIRE(ts::mode() == ts::Mode::Arena);
    // A 16 x 16 x 16 torus of QFDBs: 16,384 nodes of up to 7 threads, 2 x
    // 114,688 mappings with SystemC's own stacks; 30 GiB in the arena.
    const ts::Need n = ts::need_for(7 * 16384, ts::default_stack_bytes());
    CHECK(n.fits);
    CHECK(n.mappings <= 40);
    CHECK(n.bytes >= 7 * 16384 * std::size_t{256 << 10});
    CHECK_NOTHROW(vrdmasim::check_thread_budget(7, 16384, "a torus of 16384 nodes"));
    // Beyond the arena's address space: refused, saying so.
    try {
        vrdmasim::check_thread_budget(7, 1u << 20, "a system of 1048576 nodes");
        FAIL("not refused");
    } catch (const vrdmasim::ConfigError& e) {
        INFO(e.what());
        CHECK(contains(e.what(), "a system of 1048576 nodes has up to 7340032 SystemC threads"));
        CHECK(contains(e.what(), "1024 GiB of address space of the stack arena"));
    }
}
