#include "src/sim/event_order.hpp"
#include "src/core/event_identity.hpp"
#include "src/core/libsystemc_symbol.hpp"

#include <dlfcn.h>

#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>
#include <unordered_map>
#include <vector>

#include <systemc>

namespace vrdmasim::event_order {
namespace {

Order g_order = Order::Heap;
std::uint64_t g_salt = 0;   // from sim.event-order-seed: which permutation of the keys

// The key of each live sc_event, by address (see the header); made only
// while ties are broken by key.
std::unordered_map<const void*, std::uint64_t>& keys() {
    static auto* m = new std::unordered_map<const void*, std::uint64_t>();   // never destroyed: events outlive main
    return *m;
}
// How many events of each identity (name, maker) were made before.
std::unordered_map<std::uint64_t, std::uint64_t>& made() {
    static auto* m = new std::unordered_map<std::uint64_t, std::uint64_t>();
    return *m;
}
std::uint64_t g_keyed = 0;

std::uint64_t mix(std::uint64_t z) {   // splitmix64's finaliser
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

std::uint64_t fnv1a(const char* s, std::uint64_t h = 0xcbf29ce484222325ull) {
    for (; *s; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 0x100000001b3ull;
    return h;
}

// An event's key: its hierarchical name when SystemC gave it one of its
// own; for the kernel's events (a process's timeout event is named after
// its module only) and for events made while the simulation runs (SystemC
// names none), that name and the name of the process being made or
// running; then how many events of that identity came before.
void key(const void* event) {
    const auto* e = static_cast<const sc_core::sc_event*>(event);
    const char* name = e->name();
    std::uint64_t id = fnv1a(name);
    if (const std::uint64_t given = event_identity::take_next()) {
        // A model said what it is (src/core/event_identity.hpp).
        id = fnv1a("|given", given);
    } else if (!*name || std::strstr(name, "$$$$kernel_event$$$$")) {
        const sc_core::sc_process_handle p = sc_core::sc_get_current_process_handle();
        id = fnv1a(p.valid() ? p.name() : "", fnv1a("|", id));
    }
    const std::uint64_t before = made()[id]++;
    keys()[event] = mix(id + 0x9e3779b97f4a7c15ull * (before + 1)) | 1;   // never kUnset
    ++g_keyed;
}

// The word before each timed notification: its event's key, fixed at
// the notification's first comparison.
constexpr std::uint64_t kUnset = 0;
constexpr std::uint64_t kCancelled = 2;   // cancelled before it was ever compared
constexpr std::uint64_t kUnknown = 4;   // an event made before ties were broken by key

std::uint64_t key_of(const void* event) {
    const auto& m = keys();
    const auto it = m.find(event);
    return it == m.end() ? kUnknown : it->second;
}

// The pool of timed notifications: blocks of a word and a notification.
struct Block {
    std::uint64_t key;
    alignas(alignof(std::max_align_t)) unsigned char timed[sizeof(sc_core::sc_event_timed)];
};
std::vector<Block*>& free_blocks() {
    static auto* v = new std::vector<Block*>();
    return *v;
}
Block* block_of(const void* timed) {
    return reinterpret_cast<Block*>(const_cast<unsigned char*>(static_cast<const unsigned char*>(timed)) -
                                    offsetof(Block, timed));
}

// The library's own definitions, for the constructors this file wraps.
template <class F>
F next(const char* symbol) {
    // Nothing can run without it: SystemC's events are made from here.
    return libsystemc_symbol<F>(symbol, "src/sim/event_order.cpp");
}

}   // namespace

void set(Order o, std::uint64_t seed) {
    if (o == Order::Keyed && !interposed())
        throw std::runtime_error(
            "sim.event-order = keyed: SystemC's calls do not reach this program's event order (it must be linked "
            "into the executable, which exports it to libsystemc; src/sim/event_order.hpp)");
    g_order = o;
    g_salt = mix(seed + 0x632be59bd9b4e019ull);
    event_identity::enable(o == Order::Keyed);
}

Order current() { return g_order; }

Order parse(const std::string& choice) {
    if (choice == "heap") return Order::Heap;
    if (choice == "keyed") return Order::Keyed;
    throw std::invalid_argument("event order '" + choice + "': heap or keyed");
}

std::uint64_t events_keyed() { return g_keyed; }

}   // namespace vrdmasim::event_order

// ---- libsystemc's functions, defined here (see the header).

namespace {

// sc_event's constructors, as free functions of the same ABI: `this` first.
// The kernel tag is an empty class (private to sc_event): any empty class
// is passed alike.
struct KernelTag {};
using CtorDefault = void (*)(void*);
using CtorNamed = void (*)(void*, const char*);
using CtorKernel = void (*)(void*, KernelTag, const char*);

}   // namespace

extern "C" void vrdmasim_sc_event_c1(void* self) __asm__("_ZN7sc_core8sc_eventC1Ev");
extern "C" void vrdmasim_sc_event_c2(void* self) __asm__("_ZN7sc_core8sc_eventC2Ev");
extern "C" void vrdmasim_sc_event_named_c1(void* self, const char* name) __asm__("_ZN7sc_core8sc_eventC1EPKc");
extern "C" void vrdmasim_sc_event_named_c2(void* self, const char* name) __asm__("_ZN7sc_core8sc_eventC2EPKc");
extern "C" void vrdmasim_sc_event_kernel_c1(void* self, KernelTag tag,
                                            const char* name) __asm__("_ZN7sc_core8sc_eventC1ENS0_10kernel_tagEPKc");
extern "C" void vrdmasim_sc_event_kernel_c2(void* self, KernelTag tag,
                                            const char* name) __asm__("_ZN7sc_core8sc_eventC2ENS0_10kernel_tagEPKc");

extern "C" void vrdmasim_sc_event_c1(void* self) {
    static const auto f = vrdmasim::event_order::next<CtorDefault>("_ZN7sc_core8sc_eventC1Ev");
    f(self);
    if (vrdmasim::event_order::g_order == vrdmasim::event_order::Order::Keyed) vrdmasim::event_order::key(self);
}
extern "C" void vrdmasim_sc_event_c2(void* self) { vrdmasim_sc_event_c1(self); }
extern "C" void vrdmasim_sc_event_named_c1(void* self, const char* name) {
    static const auto f = vrdmasim::event_order::next<CtorNamed>("_ZN7sc_core8sc_eventC1EPKc");
    f(self, name);
    if (vrdmasim::event_order::g_order == vrdmasim::event_order::Order::Keyed) vrdmasim::event_order::key(self);
}
extern "C" void vrdmasim_sc_event_named_c2(void* self, const char* name) { vrdmasim_sc_event_named_c1(self, name); }
extern "C" void vrdmasim_sc_event_kernel_c1(void* self, KernelTag tag, const char* name) {
    static const auto f = vrdmasim::event_order::next<CtorKernel>("_ZN7sc_core8sc_eventC1ENS0_10kernel_tagEPKc");
    f(self, tag, name);
    if (vrdmasim::event_order::g_order == vrdmasim::event_order::Order::Keyed) vrdmasim::event_order::key(self);
}
extern "C" void vrdmasim_sc_event_kernel_c2(void* self, KernelTag tag, const char* name) {
    vrdmasim_sc_event_kernel_c1(self, tag, name);
}

namespace sc_core {

void* sc_event_timed::allocate() {
    auto& pool = vrdmasim::event_order::free_blocks();
    if (pool.empty()) {
        constexpr std::size_t kBatch = 256;
        auto* blocks =
            static_cast<vrdmasim::event_order::Block*>(std::malloc(kBatch * sizeof(vrdmasim::event_order::Block)));
        if (!blocks) throw std::bad_alloc();
        for (std::size_t i = kBatch; i-- > 0;) pool.push_back(&blocks[i]);
    }
    vrdmasim::event_order::Block* b = pool.back();
    pool.pop_back();
    b->key = vrdmasim::event_order::kUnset;
    return b->timed;
}

void sc_event_timed::deallocate(void* p) {
    if (p) vrdmasim::event_order::free_blocks().push_back(vrdmasim::event_order::block_of(p));
}

// Earlier first (1: p1 pops before p2), as SystemC's own; ties by creation
// when sim.event-order = keyed.
int sc_notify_time_compare(const void* p1, const void* p2) {
    const auto* a = static_cast<const sc_event_timed*>(p1);
    const auto* b = static_cast<const sc_event_timed*>(p2);
    if (a->m_notify_time < b->m_notify_time) return 1;
    if (b->m_notify_time < a->m_notify_time) return -1;
    if (vrdmasim::event_order::g_order == vrdmasim::event_order::Order::Heap) return 0;
    namespace eo = vrdmasim::event_order;
    std::uint64_t& ka = eo::block_of(p1)->key;
    if (ka == eo::kUnset) ka = a->m_event ? eo::key_of(a->m_event) : eo::kCancelled;
    std::uint64_t& kb = eo::block_of(p2)->key;
    if (kb == eo::kUnset) kb = b->m_event ? eo::key_of(b->m_event) : eo::kCancelled;
    // A permutation of the keys that changes with the time: no event wins
    // every tie (as no port of a round-robin arbiter does); which
    // permutation, sim.event-order-seed says.
    const std::uint64_t t = 0x9e3779b97f4a7c15ull * a->m_notify_time.value() + eo::g_salt;
    const std::uint64_t ha = eo::mix(ka ^ t), hb = eo::mix(kb ^ t);
    if (ha != hb) return ha < hb ? 1 : -1;
    return ka < kb ? 1 : (kb < ka ? -1 : 0);
}

}   // namespace sc_core

namespace vrdmasim::event_order {

bool interposed() {
    // Each symbol as the dynamic linker resolves it for everyone, libsystemc
    // included: ours when it comes from another object than the library.
    Dl_info lib{};
    if (!dladdr(reinterpret_cast<const void*>(&sc_core::sc_time_stamp), &lib) || !lib.dli_fbase) return false;
    for (const char* symbol : {"_ZN7sc_core22sc_notify_time_compareEPKvS1_", "_ZN7sc_core14sc_event_timed8allocateEv",
                               "_ZN7sc_core14sc_event_timed10deallocateEPv", "_ZN7sc_core8sc_eventC1Ev",
                               "_ZN7sc_core8sc_eventC1EPKc", "_ZN7sc_core8sc_eventC1ENS0_10kernel_tagEPKc"}) {
        void* resolved = dlsym(RTLD_DEFAULT, symbol);
        Dl_info at{};
        if (!resolved || !dladdr(resolved, &at) || at.dli_fbase == lib.dli_fbase) return false;
    }
    return true;
}

}   // namespace vrdmasim::event_order
