// The program's own mappings, the same in every run (workloads/mpi/README.md
// "The program's memory"): as the heap places the program's allocations
// (heap.cpp), the mappings the program's own code asks for without a fixed
// address are placed here, in an address range of their own, one after
// another, an unmapped place reused by the next mapping of its length (as
// the kernel's top-down search finds the hole a munmap left), so that they
// do not depend on where Open MPI's mappings landed in host time. Each is
// listed while it lives, and what is unmapped (munmap, a fixed mapping
// over it, mremap moving or shrinking it) is reported with the next call:
// the simulated process unmaps the same ranges. Open MPI's libraries and
// this one map as they always do (the real calls, unlisted).
#include "workloads/mpi/preload/mappings.hpp"

#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdarg>
#include <cstddef>
#include <cstdint>

#include "workloads/mpi/preload/libraries.hpp"

namespace {

using vrdmasim::mpipreload::Range;

constexpr std::uintptr_t kBase = 0x300000000000ull;   // 48 TiB: above the heap's ranges (heap.cpp)
constexpr std::uintptr_t kEnd = kBase + (1ull << 42);
constexpr std::uintptr_t kPage = 4096;
constexpr std::uintptr_t kHuge = 2u << 20;   // MAP_HUGETLB's default page
constexpr std::size_t kList = 1u << 16;
constexpr std::size_t kHoles = 256;

struct Mapping {
    std::uintptr_t at;
    std::size_t len;
    bool anon;
};

pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
Mapping live[kList];   // fixed arrays: no allocation under a wrapper of mmap
std::size_t n_live = 0;
bool live_lost = false;
Range gone[kList];   // unmapped since residency.cpp last looked
std::size_t n_gone = 0;
bool gone_lost = false;
Range holes[kHoles];   // unmapped places in [kBase, kEnd)
std::size_t n_holes = 0;
std::uintptr_t next = kBase;

std::uintptr_t up(std::uintptr_t v, std::uintptr_t to) { return (v + to - 1) & ~(to - 1); }

void* sys_mmap(void* at, std::size_t len, int prot, int flags, int fd, off_t off) {
    return reinterpret_cast<void*>(::syscall(SYS_mmap, at, len, prot, flags, fd, off));
}

// A place for `len` bytes aligned to `align` (0: none left).
std::uintptr_t place(std::size_t len, std::uintptr_t align) {
    for (std::size_t i = 0; i < n_holes; ++i)
        if (holes[i].len == len && holes[i].at % align == 0) {
            const std::uintptr_t at = holes[i].at;
            holes[i] = holes[--n_holes];
            return at;
        }
    const std::uintptr_t at = up(next, align);
    if (at + len > kEnd || at + len < at) return 0;
    next = at + len;
    return at;
}

void listed(std::uintptr_t at, std::size_t len, bool anon) {
    if (n_live < kList) live[n_live++] = Mapping{at, len, anon};
    else live_lost = true;
}

// [lo, hi) is no longer mapped: the listed mappings lose it (split where it
// falls inside one), and what they lose is reported as unmapped.
void forget(std::uintptr_t lo, std::uintptr_t hi) {
    for (std::size_t i = 0; i < n_live;) {
        const Mapping m = live[i];
        const std::uintptr_t a = m.at > lo ? m.at : lo, b = m.at + m.len < hi ? m.at + m.len : hi;
        if (a >= b) {
            ++i;
            continue;
        }
        if (n_gone < kList) gone[n_gone++] = Range{a, b - a};
        else gone_lost = true;
        if (a >= kBase && b <= kEnd && n_holes < kHoles) holes[n_holes++] = Range{a, b - a};
        live[i] = live[--n_live];
        if (m.at < a) listed(m.at, a - m.at, m.anon);
        if (b < m.at + m.len) listed(b, m.at + m.len - b, m.anon);
    }
}

const Mapping* find(std::uintptr_t at) {
    for (std::size_t i = 0; i < n_live; ++i)
        if (live[i].at == at) return &live[i];
    return nullptr;
}

}   // namespace

bool vrdmasim::mpipreload::program_mappings(std::vector<Range>& out) {
    out.reserve(kList);   // before the lock: this allocation is the library's own
    out.clear();
    pthread_mutex_lock(&lock);
    for (std::size_t i = 0; i < n_live; ++i)
        if (live[i].anon) out.push_back(Range{live[i].at, live[i].len});
    const bool complete = !live_lost;
    pthread_mutex_unlock(&lock);
    return complete;
}

bool vrdmasim::mpipreload::take_unmapped(std::vector<Range>& out) {
    out.reserve(kList);
    pthread_mutex_lock(&lock);
    out.assign(gone, gone + n_gone);
    n_gone = 0;
    const bool complete = !gone_lost;
    gone_lost = false;
    pthread_mutex_unlock(&lock);
    return complete;
}

extern "C" {

void* mmap(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
    if (len == 0 || (flags & (MAP_GROWSDOWN | MAP_STACK)) ||
        !vrdmasim::mpipreload::program_call(__builtin_return_address(0)))
        return sys_mmap(addr, len, prot, flags, fd, off);
    const std::uintptr_t align = (flags & MAP_HUGETLB) ? kHuge : kPage;
    const std::size_t n = up(len, align);
    const bool fixed = flags & (MAP_FIXED | MAP_FIXED_NOREPLACE);
    void* p = MAP_FAILED;
    if (!fixed) {
        pthread_mutex_lock(&lock);
        const std::uintptr_t at = place(n, align);
        pthread_mutex_unlock(&lock);
        if (at) {
            p = sys_mmap(reinterpret_cast<void*>(at), len, prot, flags | MAP_FIXED_NOREPLACE, fd, off);
            if (p != MAP_FAILED && reinterpret_cast<std::uintptr_t>(p) != at) {   // a kernel before 4.17
                ::syscall(SYS_munmap, p, len);
                p = MAP_FAILED;
            }
        }
    }
    // A fixed address, or none of ours served: the kernel places it (and
    // says why it cannot).
    if (p == MAP_FAILED) p = sys_mmap(addr, len, prot, flags, fd, off);
    if (p == MAP_FAILED) return p;
    const auto at = reinterpret_cast<std::uintptr_t>(p);
    pthread_mutex_lock(&lock);
    if (flags & MAP_FIXED) forget(at, at + n);   // it replaced what was there
    listed(at, n, flags & MAP_ANONYMOUS);
    pthread_mutex_unlock(&lock);
    return p;
}

void* mmap64(void* addr, size_t len, int prot, int flags, int fd, off_t off) {
    return mmap(addr, len, prot, flags, fd, off);
}

int munmap(void* addr, size_t len) {
    const int rc = static_cast<int>(::syscall(SYS_munmap, addr, len));
    if (rc == 0 && len) {
        const auto at = reinterpret_cast<std::uintptr_t>(addr);
        pthread_mutex_lock(&lock);
        forget(at, up(at + len, kPage));
        pthread_mutex_unlock(&lock);
    }
    return rc;
}

// A listed mapping resized: in place it keeps what it keeps (a shrink
// unmaps the rest); moved, it is all unmapped and mapped anew, at a place
// of this range's if the program let the kernel choose.
void* mremap(void* old, size_t old_len, size_t new_len, int flags, ...) {
    void* want = nullptr;
    if (flags & MREMAP_FIXED) {
        va_list ap;
        va_start(ap, flags);
        want = va_arg(ap, void*);
        va_end(ap);
    }
    const auto from = reinterpret_cast<std::uintptr_t>(old);
    pthread_mutex_lock(&lock);
    const Mapping* m = find(from);
    const bool ours = m != nullptr;
    const bool anon = ours && m->anon;
    std::uintptr_t at = 0;
    if (ours && (flags & MREMAP_MAYMOVE) && !(flags & MREMAP_FIXED) && up(new_len, kPage) > up(old_len, kPage))
        at = place(up(new_len, kPage), kPage);
    pthread_mutex_unlock(&lock);
    void* p;
    if (at) {
        p = reinterpret_cast<void*>(::syscall(SYS_mremap, old, old_len, new_len, flags | MREMAP_FIXED, at));
        if (p == MAP_FAILED) p = reinterpret_cast<void*>(::syscall(SYS_mremap, old, old_len, new_len, flags, want));
    } else {
        p = reinterpret_cast<void*>(::syscall(SYS_mremap, old, old_len, new_len, flags, want));
    }
    if (p == MAP_FAILED || !ours) return p;
    const auto to = reinterpret_cast<std::uintptr_t>(p);
    const std::uintptr_t old_end = up(from + old_len, kPage), new_end = up(to + new_len, kPage);
    pthread_mutex_lock(&lock);
    if (to == from) {
        if (new_end < old_end) forget(new_end, old_end);
        for (std::size_t i = 0; i < n_live; ++i)
            if (live[i].at == from) live[i].len = new_end - from;
    } else {
        forget(from, old_end);
        // MREMAP_DONTUNMAP leaves the old range mapped, its pages moved away:
        // empty, as a new mapping.
        if (flags & MREMAP_DONTUNMAP) listed(from, old_end - from, anon);
        forget(to, new_end);   // a fixed target replaced what was there
        listed(to, new_end - to, anon);
    }
    pthread_mutex_unlock(&lock);
    return p;
}

}   // extern "C"
