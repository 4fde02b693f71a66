#include "src/sim/event_order.hpp"
#include "src/core/event_identity.hpp"
#include "src/core/force_inline.hpp"
#include "src/core/libsystemc_symbol.hpp"
#include "src/core/timed_notifications.hpp"

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
    ++vrdmasim::timed_notifications::g_made;
    vrdmasim::timed_notifications::g_counting = true;
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

namespace {

// A timed notification's fields, as sc_event_timed lays them out (its
// members are private to the kernel and sc_notify_time_compare): what the
// heap's comparison reads, inline in the heap's loops below.
struct TimedLayout {
    sc_event* event;
    sc_time notify_time;
};
static_assert(sizeof(TimedLayout) == sizeof(sc_event_timed), "sc_event_timed is an event and a time");

const TimedLayout& timed_fields(const void* p) { return *static_cast<const TimedLayout*>(p); }

// A tie when sim.event-order = keyed: by the events' keys.
[[gnu::noinline]] int keyed_tie(const void* p1, const void* p2) {
    namespace eo = vrdmasim::event_order;
    const TimedLayout& a = timed_fields(p1);
    const TimedLayout& b = timed_fields(p2);
    std::uint64_t& ka = eo::block_of(p1)->key;
    if (ka == eo::kUnset) ka = a.event ? eo::key_of(a.event) : eo::kCancelled;
    std::uint64_t& kb = eo::block_of(p2)->key;
    if (kb == eo::kUnset) kb = b.event ? eo::key_of(b.event) : eo::kCancelled;
    // A permutation of the keys that changes with the time: no event wins
    // every tie (as no port of a round-robin arbiter does); which
    // permutation, sim.event-order-seed says.
    const std::uint64_t t = 0x9e3779b97f4a7c15ull * a.notify_time.value() + eo::g_salt;
    const std::uint64_t ha = eo::mix(ka ^ t), hb = eo::mix(kb ^ t);
    if (ha != hb) return ha < hb ? 1 : -1;
    return ka < kb ? 1 : (kb < ka ? -1 : 0);
}

// Earlier first (1: p1 pops before p2), as SystemC's own; ties by creation
// when sim.event-order = keyed.
VRDMASIM_FORCE_INLINE int notify_time_compare(const void* p1, const void* p2) {
    const sc_time& a = timed_fields(p1).notify_time;
    const sc_time& b = timed_fields(p2).notify_time;
    if (a < b) return 1;
    if (b < a) return -1;
    if (vrdmasim::event_order::g_order == vrdmasim::event_order::Order::Heap) return 0;
    return keyed_tie(p1, p2);
}

struct NotifyTimeCompare {
    int operator()(const void* p1, const void* p2) const { return notify_time_compare(p1, p2); }
};

}   // namespace

int sc_notify_time_compare(const void* p1, const void* p2) { return notify_time_compare(p1, p2); }

// The kernel's heaps (sc_ppq_base: its timed notifications, and
// sc_event_queue's), defined here too: libsystemc's own binary heap, the
// same comparisons in the same order and the same moves (so the same order
// of events, ties included), with the timed notifications' comparison
// (sc_notify_time_compare, above) inlined where the library calls it
// through a pointer, a call for every level of the heap: on the 64-node halo
// of `bench --instructions` some 150 instructions a packet-hop.
namespace {

template <class Compare>
VRDMASIM_FORCE_INLINE void ppq_sift_down(void** heap, int size, int i, Compare compare) {
    for (int l = 2 * i; l <= size; l = 2 * i) {
        int largest = compare(heap[l], heap[i]) > 0 ? l : i;
        const int r = l + 1;
        if (r <= size && compare(heap[r], heap[largest]) > 0) largest = r;
        if (largest == i) return;
        void* const t = heap[i];
        heap[i] = heap[largest];
        heap[largest] = t;
        i = largest;
    }
}

template <class Compare>
VRDMASIM_FORCE_INLINE void ppq_sift_up(void** heap, int i, void* elem, Compare compare) {
    while (i > 1 && compare(heap[i >> 1], elem) < 0) {
        heap[i] = heap[i >> 1];
        i >>= 1;
    }
    heap[i] = elem;
}

}   // namespace

void sc_ppq_base::heapify(int i) {
    if (m_compar == &sc_notify_time_compare) ppq_sift_down(m_heap, m_heap_size, i, NotifyTimeCompare{});
    else ppq_sift_down(m_heap, m_heap_size, i, m_compar);
}

void* sc_ppq_base::extract_top() {
    sc_assert(m_heap_size > 0);
    void* const top = m_heap[1];
    m_heap[1] = m_heap[m_heap_size];
    --m_heap_size;
    heapify(1);
    return top;
}

void sc_ppq_base::insert(void* elem) {
    ++m_heap_size;
    if (m_heap_size > m_size_alloc) {   // grown as the library grows it
        m_size_alloc += m_size_alloc / 2;
        void** const grown = new void*[static_cast<std::size_t>(m_size_alloc) + 1];
        for (int j = 1; j < m_heap_size; ++j) grown[j] = m_heap[j];
        delete[] m_heap;
        m_heap = grown;
    }
    if (m_compar == &sc_notify_time_compare) ppq_sift_up(m_heap, m_heap_size, elem, NotifyTimeCompare{});
    else ppq_sift_up(m_heap, m_heap_size, elem, m_compar);
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
