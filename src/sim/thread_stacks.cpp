#include "src/sim/thread_stacks.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <unordered_map>
#include <utility>
#include <vector>

#include <systemc>
#include <valgrind/valgrind.h>

// AddressSanitizer's interface (weak: null outside a sanitizer build).
extern "C" void __asan_unpoison_memory_region(void const volatile* addr, std::size_t size) __attribute__((weak));

namespace vrdmasim::thread_stacks {

namespace {

// Pages of the zone below SystemC's stack besides its red-zone page.
constexpr std::size_t kExtraZonePages = 3;
// The arena's chunks: the first, and the largest the doubling reaches.
constexpr std::size_t kFirstChunk = std::size_t{64} << 20;
constexpr std::size_t kMaxChunk = std::size_t{1} << 30;
// Chunks at most (1 TiB of stacks, 4 million threads of 256 KiB).
constexpr std::size_t kMaxChunks = 1024;
// Words at the top of a new stack where QuickThreads leaves the thread's
// first frame (sc_cor_pkg_qt::create: QUICKTHREADS_ARGS), read for the
// sc_thread_process it runs, and how many of them are kept.
constexpr std::size_t kTopWords = 32;
constexpr std::size_t kCandidates = 4;
// check_now_and_then: at least this much host time between checks, and at
// least this many times the last check's duration.
constexpr double kMinInterval = 10.0;
constexpr double kIntervalPerCheck = 100.0;
// Pagemap entries check() reads at once (32 KiB, the zones of 60 stacks).
constexpr std::size_t kWindow = 4096;

// ---- The next definitions of the three calls (RTLD_NEXT), or the system
// calls themselves before dlsym can be asked (a call made while resolving).

using MmapFn = void* (*)(void*, std::size_t, int, int, int, off_t);
using MunmapFn = int (*)(void*, std::size_t);
using MprotectFn = int (*)(void*, std::size_t, int);

std::atomic<MmapFn> g_next_mmap{nullptr};
std::atomic<MunmapFn> g_next_munmap{nullptr};
std::atomic<MprotectFn> g_next_mprotect{nullptr};
thread_local bool t_resolving = false;

template <class Fn>
Fn next_of(std::atomic<Fn>& slot, const char* name) {
    Fn f = slot.load(std::memory_order_acquire);
    if (f || t_resolving) return f;
    t_resolving = true;
    f = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, name));
    t_resolving = false;
    if (f) slot.store(f, std::memory_order_release);
    return f;
}

void* next_mmap(void* addr, std::size_t len, int prot, int flags, int fd, off_t off) {
    if (MmapFn f = next_of(g_next_mmap, "mmap")) return f(addr, len, prot, flags, fd, off);
    return reinterpret_cast<void*>(syscall(SYS_mmap, addr, len, prot, flags, fd, off));
}
int next_munmap(void* addr, std::size_t len) {
    if (MunmapFn f = next_of(g_next_munmap, "munmap")) return f(addr, len);
    return static_cast<int>(syscall(SYS_munmap, addr, len));
}
int next_mprotect(void* addr, std::size_t len, int prot) {
    if (MprotectFn f = next_of(g_next_mprotect, "mprotect")) return f(addr, len, prot);
    return static_cast<int>(syscall(SYS_mprotect, addr, len, prot));
}

// ---- The chunks' address ranges, read without a lock by every munmap and
// mprotect of the process (published: the range first, then the count).

std::atomic<std::uintptr_t> g_chunk_lo[kMaxChunks];
std::atomic<std::uintptr_t> g_chunk_hi[kMaxChunks];
std::atomic<std::size_t> g_chunk_count{0};

bool in_arena(const void* p) {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    const std::size_t n = g_chunk_count.load(std::memory_order_acquire);
    for (std::size_t i = 0; i < n; ++i)
        if (a >= g_chunk_lo[i].load(std::memory_order_relaxed) && a < g_chunk_hi[i].load(std::memory_order_relaxed))
            return true;
    return false;
}

// ---- The mode, fixed once.

struct Setup {
    std::size_t page = 4096;
    bool arena = false;
    const char* why_systemc = "";
    // libsystemc's executable segments.
    std::uintptr_t text_lo[8] = {}, text_hi[8] = {};
    int texts = 0;
    const char* path = nullptr;   // libsystemc's file
};

int find_systemc(dl_phdr_info* info, std::size_t, void* data) {
    if (!info->dlpi_name || !std::strstr(info->dlpi_name, "libsystemc")) return 0;
    auto* s = static_cast<Setup*>(data);
    s->path = info->dlpi_name;
    for (int i = 0; i < info->dlpi_phnum && s->texts < 8; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_X)) continue;
        s->text_lo[s->texts] = info->dlpi_addr + ph.p_vaddr;
        s->text_hi[s->texts] = s->text_lo[s->texts] + ph.p_memsz;
        ++s->texts;
    }
    return 1;
}

// Made at the first use, maybe from a call of tcmalloc's own with its lock
// held: nothing here allocates (getenv, dl_iterate_phdr, sysconf).
const Setup& setup() {
    static const Setup s = [] {
        Setup r;
        r.page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
        const char* guard = std::getenv("VRDMASIM_STACK_GUARD_PAGES");
        dl_iterate_phdr(find_systemc, &r);
        if (guard && *guard && std::strcmp(guard, "0") != 0) r.why_systemc = "VRDMASIM_STACK_GUARD_PAGES is set";
        // Under valgrind, whose address-space manager places and refuses
        // mappings otherwise than the kernel (the arena's chunk hints were
        // refused: "failed to allocate stack memory"), SystemC's own stacks,
        // which valgrind tracks itself.
        else if (RUNNING_ON_VALGRIND) r.why_systemc = "the process runs under valgrind";
        else if (r.texts == 0) r.why_systemc = "libsystemc is not a shared library of this process";
        else r.arena = true;
        return r;
    }();
    return s;
}

bool from_systemc(const void* return_address) {
    const auto a = reinterpret_cast<std::uintptr_t>(return_address);
    const Setup& s = setup();
    for (int i = 0; i < s.texts; ++i)
        if (a >= s.text_lo[i] && a < s.text_hi[i]) return true;
    return false;
}

std::size_t round_up(std::size_t n, std::size_t to) { return (n + to - 1) / to * to; }

// A slot: [base, base + bytes), SystemC's stack the top `stack` bytes, the
// zone from base to the end of that stack's first page.
struct Slot {
    char* base = nullptr;
    std::size_t bytes = 0, stack = 0;
    std::uint32_t chunk = 0;
    bool live = false, reported = false;
    // Words of the thread's first frame that may be its sc_thread_process.
    std::uintptr_t candidates[kCandidates] = {};
    char* stack_begin() const { return base + bytes - stack; }
    std::size_t zone_bytes(std::size_t page) const { return bytes - stack + page; }
};

struct Overflow {
    std::string thread;   // "" unknown
    std::size_t stack = 0;
    bool ended = false;
};

struct Arena {
    std::mutex m;
    std::deque<Slot> slots;   // (no copy of all when one more is made)
    std::unordered_map<std::uintptr_t, std::uint32_t> by_stack;   // stack_begin -> slot
    std::vector<std::pair<std::size_t, std::vector<std::uint32_t>>> free;   // by stack size
    char* floor = nullptr;   // the current chunk's unused part, [floor, bump): slots are
    char* bump = nullptr;   // carved from its top down
    std::size_t bytes = 0;
    std::size_t live = 0;
    std::vector<Overflow> overflows;
    int pagemap = -2;   // -2: not opened yet, -1: cannot be read
    std::uint64_t window[kWindow];   // check()'s pagemap entries
    std::chrono::steady_clock::time_point last_check{};
    double last_check_seconds = 0;
};

// Never destroyed: SystemC may release stacks while the process exits.
Arena& arena() {
    static Arena* a = new Arena;
    return *a;
}

std::size_t chunk_size(std::size_t index, std::size_t at_least) {
    const std::size_t doubled = index < 5 ? kFirstChunk << index : kMaxChunk;
    return std::max(std::min(doubled, kMaxChunk), at_least);
}

// A new chunk, below the last one where the kernel allows (the two then
// merge into one mapping). False when none can be mapped.
bool new_chunk(Arena& a, std::size_t at_least) {
    const std::size_t n = g_chunk_count.load(std::memory_order_relaxed);
    if (n == kMaxChunks) return false;
    const std::size_t size = round_up(chunk_size(n, at_least), setup().page);
    // The hint only where it is an address (a chunk mapped low, as valgrind
    // maps them, has no room below it); a hint refused (valgrind refuses
    // some the kernel would ignore) is retried without one.
    const std::uintptr_t below = n > 0 ? g_chunk_lo[n - 1].load() : 0;
    void* hint = below > size ? reinterpret_cast<void*>(below - size) : nullptr;
    const int prot = PROT_READ | PROT_WRITE, flags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    void* p = next_mmap(hint, size, prot, flags, -1, 0);
    if (p == MAP_FAILED && hint) p = next_mmap(nullptr, size, prot, flags, -1, 0);
    if (p == MAP_FAILED) return false;
    madvise(p, size, MADV_NOHUGEPAGE);
    auto* lo = static_cast<char*>(p);
    g_chunk_lo[n].store(reinterpret_cast<std::uintptr_t>(lo), std::memory_order_relaxed);
    g_chunk_hi[n].store(reinterpret_cast<std::uintptr_t>(lo + size), std::memory_order_relaxed);
    g_chunk_count.store(n + 1, std::memory_order_release);
    a.floor = lo;
    a.bump = lo + size;
    a.bytes += size;
    return true;
}

std::vector<std::uint32_t>& free_list(Arena& a, std::size_t stack) {
    for (auto& [size, list] : a.free)
        if (size == stack) return list;
    a.free.emplace_back(stack, std::vector<std::uint32_t>{});
    return a.free.back().second;
}

// A stack of `len` bytes (SystemC's request, a multiple of the page); null
// with errno set when the arena cannot grow.
void* allocate(std::size_t len) {
    Arena& a = arena();
    const std::lock_guard<std::mutex> lock(a.m);
    const std::size_t page = setup().page;
    std::vector<std::uint32_t>& list = free_list(a, len);
    std::uint32_t index;
    if (!list.empty()) {
        index = list.back();   // zeros since its release
        list.pop_back();
    } else {
        const std::size_t bytes = round_up(len, page) + kExtraZonePages * page;
        if (a.bump == nullptr || static_cast<std::size_t>(a.bump - a.floor) < bytes) {
            if (!new_chunk(a, bytes)) {
                errno = ENOMEM;
                return nullptr;
            }
        }
        a.bump -= bytes;
        Slot s;
        s.base = a.bump;
        s.bytes = bytes;
        s.stack = len;
        s.chunk = static_cast<std::uint32_t>(g_chunk_count.load() - 1);
        index = static_cast<std::uint32_t>(a.slots.size());
        a.slots.push_back(s);
    }
    Slot& s = a.slots[index];
    s.live = true;
    s.reported = false;
    std::fill(std::begin(s.candidates), std::end(s.candidates), 0);
    a.by_stack[reinterpret_cast<std::uintptr_t>(s.stack_begin())] = index;
    ++a.live;
    return s.stack_begin();
}

// ---- Reading the zones.

int pagemap(Arena& a) {
    if (a.pagemap == -2) a.pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    return a.pagemap < 0 ? -1 : a.pagemap;
}

// Whether page entries of /proc/self/pagemap show a page ever touched:
// present (a page or the zero page mapped) or swapped out.
constexpr std::uint64_t kPresent = std::uint64_t{1} << 63;
constexpr std::uint64_t kSwapped = std::uint64_t{1} << 62;

// The pagemap entries of `pages` pages from `addr`; false if unreadable.
bool read_pagemap(Arena& a, const char* addr, std::size_t pages, std::uint64_t* out) {
    const int fd = pagemap(a);
    if (fd < 0) return false;
    const std::size_t bytes = pages * sizeof(std::uint64_t);
    const off_t at = static_cast<off_t>(reinterpret_cast<std::uintptr_t>(addr) / setup().page * sizeof(std::uint64_t));
    return pread(fd, out, bytes, at) == static_cast<ssize_t>(bytes);
}

// Not instrumented: a stack's frames leave AddressSanitizer's poison on
// what they overflowed into.
__attribute__((no_sanitize_address)) bool page_written(const char* p, std::size_t page) {
    const auto* w = reinterpret_cast<const std::uint64_t*>(p);
    std::uint64_t any = 0;
    for (std::size_t i = 0; i < page / sizeof(std::uint64_t); ++i) any |= w[i];
    return any != 0;
}

// Whether the slot's zone holds a non-zero byte. `entries`: the pagemap
// entries of its zone's pages, or null to read every page.
bool zone_written(const Slot& s, const std::uint64_t* entries) {
    const std::size_t page = setup().page;
    const std::size_t pages = s.zone_bytes(page) / page;
    for (std::size_t i = 0; i < pages; ++i) {
        if (entries && !(entries[i] & (kPresent | kSwapped))) continue;   // never touched: zeros
        if (page_written(s.base + i * page, page)) return true;
    }
    return false;
}

// ---- The threads, to name a stack's.

void collect_threads(const sc_core::sc_object& o, std::unordered_map<std::uintptr_t, const sc_core::sc_object*>& out) {
    const std::string kind = o.kind();
    if (kind == "sc_thread_process" || kind == "sc_cthread_process") out[reinterpret_cast<std::uintptr_t>(&o)] = &o;
    for (const sc_core::sc_object* c : o.get_child_objects()) collect_threads(*c, out);
}

std::unordered_map<std::uintptr_t, const sc_core::sc_object*> all_threads() {
    std::unordered_map<std::uintptr_t, const sc_core::sc_object*> out;
    for (const sc_core::sc_object* o : sc_core::sc_get_top_level_objects()) collect_threads(*o, out);
    return out;
}

// The thread of a slot: QuickThreads' first frame holds its argument, the
// sc_thread_process (an sc_object at the same address), among the words
// kept when SystemC protected the red zone.
std::string name_of(const Slot& s, const std::unordered_map<std::uintptr_t, const sc_core::sc_object*>& threads) {
    for (const std::uintptr_t w : s.candidates) {
        if (w == 0) continue;
        const auto it = threads.find(w);
        if (it != threads.end()) return it->second->name();
    }
    return "";
}

void release(void* addr, std::size_t len) {
    Arena& a = arena();
    const std::lock_guard<std::mutex> lock(a.m);
    const auto it = a.by_stack.find(reinterpret_cast<std::uintptr_t>(addr));
    if (it == a.by_stack.end() || a.slots[it->second].stack != len) {
        std::fprintf(stderr, "vrdmasim: internal error: munmap(%p, %zu) of the thread-stack arena is no stack of it\n",
                     addr, len);
        std::abort();
    }
    Slot& s = a.slots[it->second];
    const std::size_t page = setup().page;
    std::uint64_t entries[64];
    const std::size_t pages = s.zone_bytes(page) / page;
    const bool known = pages <= 64 && read_pagemap(a, s.base, pages, entries);
    if (!s.reported && zone_written(s, known ? entries : nullptr)) {
        // The thread is being destroyed: its object is still in the tree.
        a.overflows.push_back(Overflow{name_of(s, all_threads()), s.stack, true});
    }
    // What munmap would do: the memory back to the system, and the next
    // stack here as fresh as a new mapping (zeros); under AddressSanitizer,
    // what its munmap does: no poison left from this stack's frames.
    madvise(s.base, s.bytes, MADV_DONTNEED);
    if (__asan_unpoison_memory_region) __asan_unpoison_memory_region(s.base, s.bytes);
    s.live = false;
    --a.live;
    free_list(a, s.stack).push_back(it->second);
    a.by_stack.erase(it);
}

// SystemC protects a new stack's red zone right after making it, with the
// thread's first frame written: keep its words that may be the thread.
__attribute__((no_sanitize_address)) void remember_thread(void* addr) {
    Arena& a = arena();
    const std::lock_guard<std::mutex> lock(a.m);
    const auto it = a.by_stack.find(reinterpret_cast<std::uintptr_t>(addr));
    if (it == a.by_stack.end()) return;
    Slot& s = a.slots[it->second];
    const auto* top = reinterpret_cast<const std::uintptr_t*>(s.base + s.bytes);
    std::size_t n = 0;
    for (std::size_t i = 1; i <= kTopWords && n < kCandidates; ++i) {
        const std::uintptr_t w = top[-static_cast<std::ptrdiff_t>(i)];
        if (w != 0 && !from_systemc(reinterpret_cast<const void*>(w))) s.candidates[n++] = w;
    }
}

std::string kib(std::size_t bytes) { return std::to_string(bytes >> 10) + " KiB"; }

std::string describe(const std::vector<Overflow>& found) {
    std::string text = found.size() == 1
                           ? "the stack of a SystemC thread overflowed: "
                           : "the stacks of " + std::to_string(found.size()) + " SystemC threads overflowed: ";
    constexpr std::size_t kNamed = 8;
    for (std::size_t i = 0; i < found.size() && i < kNamed; ++i) {
        const Overflow& o = found[i];
        if (i > 0) text += ", ";
        text += (o.thread.empty() ? std::string("a thread") : o.thread) + " (" + kib(o.stack) +
                (o.stack == default_stack_bytes() ? ", SystemC's default" : "") + (o.ended ? ", since ended" : "") +
                ")";
    }
    if (found.size() > kNamed) text += " and " + std::to_string(found.size() - kNamed) + " more";
    return text +
           ". What it wrote below its stack may have overwritten another thread's, so the run's results cannot "
           "be trusted. Give the thread a larger stack where its model makes it: set_stack_size(bytes) after "
           "its SC_THREAD, or sc_spawn_options::set_stack_size(bytes) where it is spawned. To stop at the "
           "overflowing function in a debugger, run again with VRDMASIM_STACK_GUARD_PAGES=1: SystemC's own "
           "stacks, each with a guard page (src/sim/thread_stacks.hpp)";
}

}   // namespace

namespace {

// The mode, and why SystemC's: the setup's, and the stacks are SystemC's
// only if its threads are QuickThreads coroutines (sc_cor_pkg_qt, not a
// pthreads build, whose stacks glibc maps). Asked outside the
// interposed calls, or from SystemC's own (dlopen may allocate).
const char* why_not_arena() {
    static const char* const why = [] {
        const Setup& s = setup();
        if (!s.arena) return s.why_systemc;
        void* lib = dlopen(s.path, RTLD_LAZY | RTLD_NOLOAD);
        const bool qt = lib && dlsym(lib, "_ZN7sc_core13sc_cor_pkg_qt6createEmPFvPvES1_");
        if (lib) dlclose(lib);
        return qt ? "" : "libsystemc's threads are not QuickThreads coroutines (sc_cor_pkg_qt)";
    }();
    return why;
}

}   // namespace

Mode mode() { return *why_not_arena() ? Mode::SystemC : Mode::Arena; }

std::string why_systemc() { return why_not_arena(); }

std::size_t default_stack_bytes() { return static_cast<std::size_t>(sc_core::SC_DEFAULT_STACK_SIZE); }

std::size_t capacity_bytes() { return kMaxChunks * kMaxChunk; }

Need need_for(std::size_t threads, std::size_t stack_bytes) {
    Need n;
    const std::size_t page = setup().page;
    if (mode() == Mode::SystemC) {
        n.mappings = 2 * threads;
        n.bytes = threads * round_up(stack_bytes, page);
        return n;
    }
    const std::size_t slot = round_up(stack_bytes, page) + kExtraZonePages * page;
    for (std::size_t left = threads; left > 0 && n.fits; ++n.mappings) {
        const std::size_t size = chunk_size(n.mappings, slot);
        left -= std::min(left, size / slot);
        n.bytes += size;
        n.fits = n.mappings < kMaxChunks;
    }
    return n;
}

std::string check() {
    if (mode() != Mode::Arena) return "";
    Arena& a = arena();
    const auto start = std::chrono::steady_clock::now();
    const std::lock_guard<std::mutex> lock(a.m);
    const std::size_t page = setup().page;
    std::vector<std::uint32_t> found;
    // The pagemap entries of a window of pages at a time (the zones of
    // slots carved one below the other), then the zones.
    std::uintptr_t lo = 0, hi = 0;   // the window's pages
    bool known = false;
    for (std::uint32_t i = 0; i < a.slots.size(); ++i) {
        const Slot& s = a.slots[i];
        if (!s.live || s.reported) continue;
        const std::uintptr_t first = reinterpret_cast<std::uintptr_t>(s.base) / page;
        const std::uintptr_t end = first + s.zone_bytes(page) / page;
        if (first < lo || end > hi) {
            const std::uintptr_t chunk_lo = g_chunk_lo[s.chunk].load() / page;
            const std::uintptr_t chunk_hi = g_chunk_hi[s.chunk].load() / page;
            lo = end > chunk_lo + kWindow ? end - kWindow : chunk_lo;
            hi = std::min(lo + kWindow, chunk_hi);
            known = read_pagemap(a, reinterpret_cast<const char*>(lo * page), hi - lo, a.window);
        }
        if (zone_written(s, known ? a.window + (first - lo) : nullptr)) found.push_back(i);
    }
    if (!found.empty()) {
        const auto threads = all_threads();
        for (const std::uint32_t i : found) {
            a.slots[i].reported = true;
            a.overflows.push_back(Overflow{name_of(a.slots[i], threads), a.slots[i].stack, false});
        }
    }
    a.last_check = std::chrono::steady_clock::now();
    a.last_check_seconds = std::chrono::duration<double>(a.last_check - start).count();
    return a.overflows.empty() ? "" : describe(a.overflows);
}

std::string check_now_and_then() {
    if (mode() != Mode::Arena) return "";
    Arena& a = arena();
    {
        const std::lock_guard<std::mutex> lock(a.m);
        const double since = std::chrono::duration<double>(std::chrono::steady_clock::now() - a.last_check).count();
        if (a.last_check.time_since_epoch().count() == 0) {
            // The first call starts the clock: the run has just begun.
            a.last_check = std::chrono::steady_clock::now();
            return "";
        }
        if (since < std::max(kMinInterval, kIntervalPerCheck * a.last_check_seconds)) return "";
    }
    return check();
}

Usage usage() {
    Usage u;
    if (mode() != Mode::Arena) return u;
    Arena& a = arena();
    const std::lock_guard<std::mutex> lock(a.m);
    u.live = a.live;
    u.slots = a.slots.size();
    u.chunks = g_chunk_count.load();
    u.bytes = a.bytes;
    return u;
}

std::string thread_of(const void* address) {
    if (mode() != Mode::Arena) return "";
    Arena& a = arena();
    const std::lock_guard<std::mutex> lock(a.m);
    const auto* p = static_cast<const char*>(address);
    for (const Slot& s : a.slots)
        if (s.live && p >= s.base && p < s.base + s.bytes) return name_of(s, all_threads());
    return "";
}

}   // namespace vrdmasim::thread_stacks

// ---- The interposed calls (see the header). Everything but SystemC's
// stacks goes on to the next definition unchanged.

using vrdmasim::thread_stacks::Mode;

extern "C" void* mmap(void* addr, std::size_t len, int prot, int flags, int fd, off_t off) noexcept {
    namespace ts = vrdmasim::thread_stacks;
    if (addr == nullptr && fd == -1 && off == 0 && prot == (PROT_READ | PROT_WRITE) &&
        flags == (MAP_PRIVATE | MAP_ANONYMOUS) && len > 0 && ts::from_systemc(__builtin_return_address(0)) &&
        ts::mode() == Mode::Arena) {
        void* p = ts::allocate(len);
        return p ? p : MAP_FAILED;
    }
    return ts::next_mmap(addr, len, prot, flags, fd, off);
}

extern "C" int munmap(void* addr, std::size_t len) noexcept {
    namespace ts = vrdmasim::thread_stacks;
    if (ts::in_arena(addr)) {
        ts::release(addr, len);
        return 0;
    }
    return ts::next_munmap(addr, len);
}

extern "C" int mprotect(void* addr, std::size_t len, int prot) noexcept {
    namespace ts = vrdmasim::thread_stacks;
    if (ts::in_arena(addr)) {
        // The red zone: the zone below the stack stands for it.
        if (prot == PROT_NONE) ts::remember_thread(addr);
        return 0;
    }
    return ts::next_mprotect(addr, len, prot);
}
