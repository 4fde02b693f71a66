// The program's heap, the same in every run (workloads/mpi/README.md "The
// buffers"): the program's buffers are simulated at their own addresses,
// so where its allocations land must depend on the program alone. Under
// glibc's malloc they do not: Open MPI's start-up (and the C library
// working for it) takes memory whose size follows its identifiers' decimal
// lengths, and after start-up Open MPI's allocations interleave with the
// program's in host-time order. So the program's own calls (malloc, free
// and the rest, from any code but Open MPI's libraries and this one) are
// served here, from address ranges of their own, the way glibc serves
// them: blocks up to glibc's mmap threshold (128 KiB) from a heap, a freed
// one reused first by the next request of its size; larger ones as
// mappings of their own, unmapped when freed (their addresses reused by
// the next of the same size, as the kernel's mmap does). Open MPI's
// libraries keep glibc's malloc.
#include <sys/mman.h>
#include <dlfcn.h>
#include <pthread.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "workloads/mpi/preload/calls.hpp"
#include "workloads/mpi/preload/heap.hpp"
#include "workloads/mpi/preload/libraries.hpp"

extern "C" {
void* __libc_malloc(size_t);
void __libc_free(void*);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void* __libc_memalign(size_t, size_t);
}

namespace {

constexpr std::uintptr_t kSmallBase = 0x100000000000ull;   // 16 TiB: the heap (below glibc's, above nothing)
constexpr std::uintptr_t kSmallEnd = kSmallBase + (1ull << 40);
constexpr std::uintptr_t kLargeBase = 0x200000000000ull;   // 32 TiB: the large blocks' mappings
constexpr std::uintptr_t kLargeEnd = kLargeBase + (1ull << 42);
constexpr std::size_t kChunk = 64u << 20;   // the heap grows by this much
constexpr std::size_t kThreshold = 128u << 10;   // glibc's M_MMAP_THRESHOLD default
constexpr std::size_t kClasses = kThreshold / 16 + 2;
constexpr std::size_t kLargeLists = 256;

struct Header {   // just before each block
    std::uint32_t front;   // bytes from the block's base to this header
    std::uint32_t unused;
    std::uint64_t total;   // the block's size from its base
};

pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
std::uintptr_t bump = kSmallBase, mapped_to = kSmallBase;
void* free_list[kClasses];   // by total / 16: LIFO, the next pointer in each free block
std::uintptr_t large_next = kLargeBase;
struct Hole {
    std::uintptr_t at;
    std::size_t len;
};
Hole holes[kLargeLists];   // freed large mappings' places, reused by an equal size
std::size_t n_holes = 0;
// For residency.cpp: the large blocks' mappings in use, and those freed
// (unmapped) since it last looked. Fixed arrays: this is the allocator.
constexpr std::size_t kLive = 1u << 16;
vrdmasim::mpipreload::Range live[kLive];
std::size_t n_live = 0;
vrdmasim::mpipreload::Range freed[kLive];
std::size_t n_freed = 0;
bool freed_lost = false;   // more freed than the list holds between two looks
bool live_lost = false;   // more large blocks at once than the list holds

void large_mapped(std::uintptr_t at, std::size_t len) {
    if (n_live < kLive) live[n_live++] = {at, len};
    else live_lost = true;
}

void large_unmapped(std::uintptr_t at, std::size_t len) {
    for (std::size_t i = 0; i < n_live; ++i)
        if (live[i].at == at) {
            live[i] = live[--n_live];
            break;
        }
    if (n_freed < kLive) freed[n_freed++] = {at, len};
    else freed_lost = true;
}

bool ours(const void* p) {
    const auto a = reinterpret_cast<std::uintptr_t>(p);
    return (a >= kSmallBase && a < kSmallEnd) || (a >= kLargeBase && a < kLargeEnd);
}

bool map_at(std::uintptr_t at, std::size_t n) {
    void* p = ::mmap(reinterpret_cast<void*>(at), n, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
    if (p == MAP_FAILED) return false;
    if (reinterpret_cast<std::uintptr_t>(p) != at) {   // a kernel without MAP_FIXED_NOREPLACE
        ::munmap(p, n);
        return false;
    }
    return true;
}

char* large_block(std::size_t total) {
    const std::size_t len = (total + 4095) & ~std::size_t(4095);
    for (std::size_t i = 0; i < n_holes; ++i)
        if (holes[i].len == len) {
            const std::uintptr_t at = holes[i].at;
            holes[i] = holes[--n_holes];
            if (!map_at(at, len)) return nullptr;
            large_mapped(at, len);
            return reinterpret_cast<char*>(at);
        }
    if (large_next + len > kLargeEnd || !map_at(large_next, len)) return nullptr;
    const std::uintptr_t at = large_next;
    large_next += len;
    large_mapped(at, len);
    return reinterpret_cast<char*>(at);
}

char* small_block(std::size_t total) {
    void*& head = free_list[total / 16];
    if (head) {
        char* base = static_cast<char*>(head);
        head = *static_cast<void**>(head);
        return base;
    }
    while (bump + total > mapped_to) {
        if (mapped_to + kChunk > kSmallEnd || !map_at(mapped_to, kChunk)) return nullptr;
        mapped_to += kChunk;
    }
    char* base = reinterpret_cast<char*>(bump);
    bump += total;
    return base;
}

void* alloc(std::size_t n, std::size_t align) {
    if (align < 16) align = 16;
    const std::size_t total = (n + sizeof(Header) + (align - 16) + 15) & ~std::size_t(15);
    if (total < n) return nullptr;
    pthread_mutex_lock(&lock);
    char* base = total > kThreshold ? large_block(total) : small_block(total);
    pthread_mutex_unlock(&lock);
    if (!base) return nullptr;
    char* user = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(base) + sizeof(Header) + align - 1) &
                                         ~(std::uintptr_t(align) - 1));
    Header* h = reinterpret_cast<Header*>(user - sizeof(Header));
    *h = Header{static_cast<std::uint32_t>(user - sizeof(Header) - base), 0, total};
    return user;
}

const Header& header(const void* p) {
    return *reinterpret_cast<const Header*>(static_cast<const char*>(p) - sizeof(Header));
}

std::size_t usable(const void* p) { return header(p).total - header(p).front - sizeof(Header); }

void release(void* p) {
    const Header h = header(p);
    char* base = static_cast<char*>(p) - sizeof(Header) - h.front;
    pthread_mutex_lock(&lock);
    if (h.total > kThreshold) {
        const std::size_t len = (h.total + 4095) & ~std::size_t(4095);
        ::munmap(base, len);
        large_unmapped(reinterpret_cast<std::uintptr_t>(base), len);
        if (n_holes < kLargeLists) holes[n_holes++] = Hole{reinterpret_cast<std::uintptr_t>(base), len};
    } else {
        void*& head = free_list[h.total / 16];
        *reinterpret_cast<void**>(base) = head;
        head = base;
    }
    pthread_mutex_unlock(&lock);
}

// Whether the code at `caller` belongs to Open MPI's libraries (or this
// one): their allocations stay with glibc. A table of answers, filled
// without allocating (dladdr may allocate: its own calls count as MPI's).
constexpr std::size_t kSlots = 8192;
struct Slot {
    void* caller;
    unsigned char kind;   // kind_of's
};
Slot slots[kSlots];
pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
thread_local bool inside = false;

}   // namespace

int vrdmasim::mpipreload::InLibrary::depth = 0;

vrdmasim::mpipreload::Range vrdmasim::mpipreload::heap_in_use() {
    pthread_mutex_lock(&lock);
    const Range r{kSmallBase, bump - kSmallBase};
    pthread_mutex_unlock(&lock);
    return r;
}

bool vrdmasim::mpipreload::large_blocks(std::vector<Range>& out) {
    out.reserve(kLive);   // allocated before the lock (the caller's allocations are glibc's: InLibrary)
    pthread_mutex_lock(&lock);
    out.assign(live, live + n_live);
    const bool complete = !live_lost;
    pthread_mutex_unlock(&lock);
    return complete;
}

bool vrdmasim::mpipreload::take_freed(std::vector<Range>& out) {
    out.reserve(kLive);
    pthread_mutex_lock(&lock);
    out.assign(freed, freed + n_freed);
    n_freed = 0;
    const bool complete = !freed_lost;
    freed_lost = false;
    pthread_mutex_unlock(&lock);
    return complete;
}

namespace {
// What the code at `caller` is: the program's (0), Open MPI's or this
// library's (1), or Open MPI's Fortran bindings (2, which are Open MPI's
// too).
unsigned char kind_of(void* caller) {
    const std::size_t i = (reinterpret_cast<std::uintptr_t>(caller) >> 2) % kSlots;
    pthread_mutex_lock(&slots_lock);
    const Slot s = slots[i];
    pthread_mutex_unlock(&slots_lock);
    if (s.caller == caller) return s.kind;
    inside = true;
    Dl_info info{};
    const bool known = dladdr(caller, &info) && info.dli_fname;
    const unsigned char kind = !known                                                   ? 0
                               : vrdmasim::mpipreload::fortran_bindings(info.dli_fname) ? 2
                               : vrdmasim::mpipreload::mpi_library(info.dli_fname)      ? 1
                                                                                        : 0;
    inside = false;
    pthread_mutex_lock(&slots_lock);
    slots[i] = Slot{caller, kind};
    pthread_mutex_unlock(&slots_lock);
    return kind;
}
}   // namespace

bool vrdmasim::mpipreload::mpi_caller(void* caller) { return inside || kind_of(caller) != 0; }

bool vrdmasim::mpipreload::wrapped_caller(void* caller) { return !inside && kind_of(caller) != 1; }

namespace {
// The program's allocations: its main thread's, from its own code. Open
// MPI's threads (PMIx, its event loop) call the C library, which allocates
// on their behalf at host-timed moments; served here, they would move the
// program's later buffers from one run to the next.
// Nor are this library's own (its C++ containers allocate through
// libstdc++, which is no MPI library): they happen inside its wrappers
// (InLibrary), and would move the program's buffers with every change of
// this library.
thread_local int main_thread = -1;   // unknown until the thread's first allocation
bool program(void* caller) { return vrdmasim::mpipreload::program_call(caller); }
}   // namespace

bool vrdmasim::mpipreload::program_call(void* caller) {
    if (main_thread < 0) main_thread = ::syscall(SYS_gettid) == ::getpid();
    return main_thread && vrdmasim::mpipreload::InLibrary::depth == 0 && !vrdmasim::mpipreload::mpi_caller(caller);
}

// MPI_Win_allocate's memory (calls.hpp): the program's, from its heap,
// whoever asks (the library's wrapper does).
void* vrdmasim::mpipreload::program_alloc(std::size_t bytes) { return alloc(bytes ? bytes : 1, 64); }
void vrdmasim::mpipreload::program_free(void* p) {
    if (p) release(p);
}

extern "C" {

void* malloc(size_t n) { return program(__builtin_return_address(0)) ? alloc(n, 16) : __libc_malloc(n); }

void free(void* p) {
    if (!p) return;
    if (ours(p)) release(p);
    else __libc_free(p);
}

void* calloc(size_t n, size_t m) {
    if (!program(__builtin_return_address(0))) return __libc_calloc(n, m);
    if (m && n > static_cast<size_t>(-1) / m) return nullptr;
    void* p = alloc(n * m, 16);
    if (p) std::memset(p, 0, n * m);
    return p;
}

void* realloc(void* p, size_t n) {
    if (p && ours(p)) {
        const std::size_t old = usable(p);
        if (n <= old) return p;
        void* q = alloc(n, 16);
        if (q) {
            std::memcpy(q, p, old);
            release(p);
        }
        return q;
    }
    if (!p && program(__builtin_return_address(0))) return alloc(n, 16);
    return __libc_realloc(p, n);
}

int posix_memalign(void** out, size_t align, size_t n) {
    if (align % sizeof(void*) || (align & (align - 1))) return EINVAL;
    void* p = program(__builtin_return_address(0)) ? alloc(n, align) : __libc_memalign(align, n);
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}

void* aligned_alloc(size_t align, size_t n) {
    return program(__builtin_return_address(0)) ? alloc(n, align) : __libc_memalign(align, n);
}

void* memalign(size_t align, size_t n) {
    return program(__builtin_return_address(0)) ? alloc(n, align) : __libc_memalign(align, n);
}

void* valloc(size_t n) { return program(__builtin_return_address(0)) ? alloc(n, 4096) : __libc_memalign(4096, n); }

size_t malloc_usable_size(void* p) {
    if (!p) return 0;
    if (ours(p)) return usable(p);
    static const auto real = reinterpret_cast<size_t (*)(void*)>(dlsym(RTLD_NEXT, "malloc_usable_size"));
    return real ? real(p) : 0;
}

}   // extern "C"
