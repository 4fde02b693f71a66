#include "workloads/mpi/preload/residency.hpp"

#include <link.h>
#include <fcntl.h>
#include <sys/prctl.h>
#include <unistd.h>
#include <sys/mman.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "workloads/mpi/preload/channel.hpp"
#include "workloads/mpi/preload/heap.hpp"
#include "workloads/mpi/preload/mappings.hpp"

namespace vrdmasim {
namespace mpipreload {

namespace {

constexpr std::uint64_t kPage = 4096;

struct State {
    bool on = false;
    std::vector<Range> segments;   // the program's writable segments
    std::uintptr_t stack_top = 0;
    // By region (its first page; the stack's by its top), one byte per
    // page: resident when last looked at. The stack's from its top down.
    std::map<std::uintptr_t, std::vector<unsigned char>> known;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> in_flight;   // real receives posted
    std::vector<Range> blocks, freed, mappings;   // scratch
    std::vector<unsigned char> now;   // scratch: mincore's answer
    std::vector<std::uint64_t> entries;   // scratch: /proc/self/pagemap's answer
    int pagemap = -1;
};

State& state() {
    static State s;
    return s;
}

int writable_segments(dl_phdr_info* info, std::size_t, void* data) {
    auto& out = *static_cast<std::vector<Range>*>(data);
    if (info->dlpi_name && info->dlpi_name[0]) return 0;   // the program is the one without a name
    for (int i = 0; i < info->dlpi_phnum; ++i) {
        const ElfW(Phdr)& ph = info->dlpi_phdr[i];
        if (ph.p_type != PT_LOAD || !(ph.p_flags & PF_W)) continue;
        const std::uintptr_t lo = (info->dlpi_addr + ph.p_vaddr) & ~(kPage - 1);
        const std::uintptr_t hi = (info->dlpi_addr + ph.p_vaddr + ph.p_memsz + kPage - 1) & ~(kPage - 1);
        out.push_back({lo, hi - lo});
    }
    return 1;
}

std::uintptr_t find_stack_top() {
    std::FILE* f = std::fopen("/proc/self/maps", "r");
    if (!f) fail("cannot read /proc/self/maps to find the program's stack");
    char line[512];
    std::uintptr_t top = 0;
    while (std::fgets(line, sizeof line, f))
        if (std::strstr(line, "[stack]")) {
            unsigned long lo = 0, hi = 0;
            if (std::sscanf(line, "%lx-%lx", &lo, &hi) == 2) top = hi;
        }
    std::fclose(f);
    if (!top) fail("no [stack] in /proc/self/maps");
    return top;
}

bool in_flight(const State& s, std::uint64_t page) {
    for (const auto& [va, len] : s.in_flight)
        if (page + kPage > va && page < va + len) return true;
    return false;
}

// The writable segments' pages this process has written or read as zeros:
// present in its page table and not the file's page (kernel's
// Documentation/admin-guide/mm/pagemap.rst: bit 63 present, bit 61 a
// file page). mincore would answer whether the page cache holds the
// program's file there, host state: what exec read ahead, what other
// ranks read, what was evicted.
void segment_residency(State& s, std::uintptr_t lo, std::size_t pages) {
    if (s.pagemap < 0) s.pagemap = ::open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
    s.entries.resize(pages);
    const std::size_t bytes = pages * sizeof(std::uint64_t);
    if (s.pagemap < 0 || ::pread(s.pagemap, s.entries.data(), bytes,
                                 static_cast<off_t>(lo / kPage * sizeof(std::uint64_t))) != static_cast<ssize_t>(bytes))
        fail(
            (std::string("cannot read /proc/self/pagemap for the program's writable segments: ") + std::strerror(errno))
                .c_str());
    for (std::size_t i = 0; i < pages; ++i) s.now[i] = (s.entries[i] >> 63 & 1) && !(s.entries[i] >> 61 & 1) ? 1 : 0;
}

// Region [lo, lo + len) known under `key` (`down`: indexed from its top, the
// stack's): pages resident now and not before appended to `touched` as
// runs (if `report`), and taken as known, but for real receives' pages.
void look(State& s, std::uintptr_t key, std::uintptr_t lo, std::size_t len, bool down, bool report,
          std::vector<std::uint64_t>* touched, bool segment = false) {
    const std::size_t pages = len / kPage;
    if (pages == 0) return;
    s.now.resize(pages);
    if (segment) segment_residency(s, lo, pages);
    else if (::mincore(reinterpret_cast<void*>(lo), len, s.now.data()) != 0)
        fail(("mincore of the program's memory at " + std::to_string(lo) + " (" + std::to_string(len) +
              " B) failed: " + std::strerror(errno))
                 .c_str());
    std::vector<unsigned char>& k = s.known[key];
    if (k.size() < pages) k.resize(pages, 0);
    for (std::size_t i = 0; i < pages; ++i) {
        const std::size_t at = down ? pages - 1 - i : i;   // the page's index in `known`
        if (!(s.now[i] & 1) || k[at]) continue;
        const std::uint64_t page = lo + i * kPage;
        if (!s.in_flight.empty() && in_flight(s, page)) continue;
        k[at] = 1;
        if (!report) continue;
        if (touched->size() >= 2 && (*touched)[touched->size() - 2] + touched->back() == page) touched->back() += kPage;
        else touched->insert(touched->end(), {page, kPage});
    }
}

void look_all(State& s, bool report, std::vector<std::uint64_t>* touched) {
    for (const Range& r : s.segments) look(s, r.at, r.at, r.len, false, report, touched, true);
    const std::uintptr_t sp = reinterpret_cast<std::uintptr_t>(__builtin_frame_address(0)) & ~(kPage - 1);
    look(s, s.stack_top, sp, s.stack_top - sp, true, report, touched);
    const Range heap = heap_in_use();
    look(s, heap.at, heap.at, (heap.len + kPage - 1) & ~(kPage - 1), false, report, touched);
    if (!large_blocks(s.blocks))
        fail(
            "the program has more than 65,536 large blocks allocated at once: their pages cannot all be watched "
            "(mpi.program-memory = buffers-only does without)");
    for (const Range& r : s.blocks) look(s, r.at, r.at, r.len, false, report, touched);
    if (!program_mappings(s.mappings))
        fail(
            "the program has more than 65,536 mappings of its own at once: their pages cannot all be watched "
            "(mpi.program-memory = buffers-only does without)");
    for (const Range& r : s.mappings) look(s, r.at, r.at, r.len, false, report, touched);
}

// [lo, lo + len) unmapped: what was known of its pages goes (a region it
// splits keeps the rest, under the key its remaining piece is looked at
// by: its first page). The stack is never unmapped.
void forget(State& s, std::uint64_t lo, std::uint64_t len) {
    const std::uint64_t hi = lo + len;
    for (auto it = s.known.begin(); it != s.known.end();) {
        const std::uint64_t a = it->first, b = a + it->second.size() * kPage;
        if (a == s.stack_top || b <= lo || a >= hi) {
            ++it;
            continue;
        }
        std::vector<unsigned char> pages = std::move(it->second);
        it = s.known.erase(it);
        if (a < lo) s.known[a].assign(pages.begin(), pages.begin() + static_cast<std::ptrdiff_t>((lo - a) / kPage));
        if (hi < b) s.known[hi].assign(pages.begin() + static_cast<std::ptrdiff_t>((hi - a) / kPage), pages.end());
    }
}

}   // namespace

void watch() {
    State& s = state();
    // A page resident is a page the program touched only without
    // transparent huge pages (the launcher turns them off: launcher.cpp).
    if (::prctl(PR_GET_THP_DISABLE, 0, 0, 0, 0) != 1)
        fail(
            "transparent huge pages are on in the program's process, so the pages resident are not the pages it "
            "touched (vrdmasim's launcher turns them off with prctl(PR_SET_THP_DISABLE); mpi.program-memory = "
            "buffers-only does without)");
    dl_iterate_phdr(writable_segments, &s.segments);
    s.stack_top = find_stack_top();
    s.on = true;
    look_all(s, false, nullptr);
    take_freed(s.freed);   // before MPI_Init: not the simulation's
    take_unmapped(s.mappings);
}

bool watching() { return state().on; }

void since_last_call(std::vector<std::uint64_t>& unmapped, std::vector<std::uint64_t>& touched) {
    State& s = state();
    unmapped.clear();
    touched.clear();
    if (!s.on) return;
    if (!take_freed(s.freed))
        fail(
            "the program freed more than 65,536 large blocks between two MPI calls: their unmapping cannot all be "
            "reported (mpi.program-memory = buffers-only does without)");
    if (!take_unmapped(s.mappings))
        fail(
            "the program unmapped more than 65,536 ranges of its own mappings between two MPI calls: they cannot "
            "all be reported (mpi.program-memory = buffers-only does without)");
    s.freed.insert(s.freed.end(), s.mappings.begin(), s.mappings.end());
    for (const Range& r : s.freed) {
        unmapped.insert(unmapped.end(), {r.at, r.len});
        forget(s, r.at, r.len);   // its place may be mapped again: new pages
    }
    look_all(s, true, &touched);
    // Touched runs in address order, as the simulation applies them.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> runs;
    for (std::size_t i = 0; i + 1 < touched.size(); i += 2) runs.emplace_back(touched[i], touched[i + 1]);
    std::sort(runs.begin(), runs.end());
    touched.clear();
    for (const auto& [va, len] : runs) touched.insert(touched.end(), {va, len});
}

void settle() {
    State& s = state();
    if (s.on) look_all(s, false, nullptr);
}

void receiving(std::uint64_t va, std::uint64_t len) {
    if (state().on && len) state().in_flight.emplace_back(va, len);
}

void received(std::uint64_t va, std::uint64_t len) {
    auto& f = state().in_flight;
    const auto it = std::find(f.begin(), f.end(), std::make_pair(va, len));
    if (it != f.end()) f.erase(it);
}

}   // namespace mpipreload
}   // namespace vrdmasim
