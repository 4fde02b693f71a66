// The state of one node's virtual memory, shared by every file of the Vm
// (private to models/os): the mm_struct-like record of each process (its
// page-table root, VMAs and pins), reclaim's LRU of resident leaves, the
// state of khugepaged and of a migration, and what the Vm works with (DRAM,
// frames, cores, swap, MMU notifiers, parameters, statistics). A plain data
// structure: the code that changes it lives in the file named for each
// concept (README.md "Vm: files", after Linux's mm/).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <unordered_map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>

#include "src/core/context.hpp"
#include "models/common/aarch64_descriptors.hpp"
#include "models/common/debug_access.hpp"
#include "models/os/cpu.hpp"
#include "models/os/frame_allocator.hpp"
#include "models/os/khugepaged.hpp"
#include "models/os/migrate.hpp"
#include "models/os/ssd.hpp"
#include "models/os/vm.hpp"
#include "models/os/vm_params.hpp"
#include "models/os/vmstat.hpp"
#include "models/smmu/page_table_writer.hpp"

namespace vrdmasim {
namespace mm {

constexpr std::uint64_t kPage = aarch64::kPageSize;
constexpr std::uint64_t kHuge = aarch64::kBlockSize;
// Frames kept for page tables: user pages never take the last ones.
constexpr std::uint64_t kTableReserve = 64;

inline std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }
inline std::uint64_t align_down(std::uint64_t v, std::uint64_t a) { return v / a * a; }
inline bool can_write(Prot p) { return static_cast<unsigned>(p) & static_cast<unsigned>(Prot::Write); }

struct OutOfFrames {};
struct PageCache;   // the page cache (pagecache.hpp)   // a table frame could not be had

enum class HugeAdvice { Default, Huge, NoHuge };

struct Vma {
    std::uint64_t end;
    Prot prot;
    HugeAdvice advice = HugeAdvice::Default;
    bool locked = false;
    UserAccess user = UserAccess::Full;   // the user-access guard (buffer_guard.cpp)
    // A shared file mapping (filemap.cpp): file >= 0, the open file `fd`
    // whose readahead state it uses; byte va of the VMA is byte
    // va - file_base of the file (so a split needs no change).
    int file = -1;
    int fd = -1;
    std::uint64_t file_base = 0;
};

struct PinRec {
    unsigned count = 0;
    std::uint64_t pa = 0;
};

struct Process {
    std::string name;
    int pid;
    std::uint16_t asid;
    std::unique_ptr<PageTableWriter> pt;
    std::map<std::uint64_t, Vma> vmas;   // by start, non-overlapping
    std::map<std::uint64_t, PinRec> pins;   // by VA page: pins of the page mapped there
    std::multimap<std::uint64_t, PinRec> orphans;   // pinned pages no longer mapped (by old VA)
    // Page pins held, on pins and orphans together (Linux's mm->pinned_vm):
    // kept as pins are taken and dropped, so reading it is not a walk of
    // every pin (the registrar reads it after each call for its peak).
    std::uint64_t pinned_pages = 0;
    // The level-3 table the last walk of this process reached and its 2 MiB
    // region (va >> 21), valid while Mm::descriptor_writes is still
    // walk_gen: a walk in that region reads only its leaf (leaf_slot), as
    // the CPU's walk cache would let it. Host work only: the same answer.
    mutable std::uint64_t walk_region = ~std::uint64_t{0};
    mutable std::uint64_t walk_table = 0;
    mutable std::uint64_t walk_gen = ~std::uint64_t{0};
};

// A leaf of the LRU: (pid, va).
using Key = std::pair<int, std::uint64_t>;

// Where a clock (reclaim's, khugepaged's) goes on from.
struct Hand {
    int pid = 0;
    std::uint64_t va = 0;
};

// A page whose read is in flight (Linux: a locked, not yet uptodate page in
// the swap cache or the page cache): its frame is allocated and holds the
// bytes, but its PTE is written only when the read completes (`done`), as
// do_swap_page and filemap_fault map a page only once it is uptodate. Until
// then walkers (the SMMU's, the CPU's) see the old entry: a swap entry, or
// nothing for a file page. README.md "Reads in flight".
struct Inflight {
    enum class Kind { SwapIn, File };
    Kind kind = Kind::SwapIn;
    std::uint64_t pa = 0;   // the frame the PTE will map
    std::uint64_t slot = 0;   // SwapIn: the swap slot read (freed at completion)
    unsigned file = 0;   // File: the page-cache page (file, index) it maps
    std::uint64_t index = 0;
    sc_core::sc_time done;   // the read completes then: the PTE written
    bool cancelled = false;   // unmapped meanwhile (munmap, MADV_DONTNEED): nothing is mapped
    bool pinned = false;   // SwapIn cancelled while pinned: the pin keeps the frame
    Tracer::Cause story;   // the fault that started the read, in the narrated story
};

// A step of a call's story, told when the call's CPU work is placed
// (call_return): what happened to one page and why. Collected only while
// the tracer is noting.
struct PageStep {
    std::string text;
    int pid = 0;
    std::uint64_t page = 0;
    bool read_in_flight = false;   // a read started for the page: its completion follows this step
};

// Work accumulated by one call: CPU time and pages made present.
struct Work {
    sc_core::sc_time cpu = sc_core::SC_ZERO_TIME;
    sc_core::sc_time at = sc_core::SC_ZERO_TIME;   // when the call started (device I/O is issued from it)
    sc_core::sc_time io = sc_core::SC_ZERO_TIME;   // waits for devices (SSD, notifier) on top of the CPU time
    std::uint64_t faulted = 0;
    bool fault_taken = false;   // a fault (not a plain access) was taken
    std::vector<PageStep> story;   // what happened, page by page (only while noting)
};

// Add a step to the call's story, if the run notes its stories: `text()`
// says it (called only then; a fault is common, its sentence is not).
bool noting(const Mm& m);
template <class Text>
void tell(Mm& m, Work& w, int pid, std::uint64_t page, Text&& text, bool read_in_flight = false) {
    if (noting(m)) w.story.push_back(PageStep{text(), pid, page, read_in_flight});
}

struct Mm {
    Mm(const SimContext& c, const std::string& prefix, const std::string& group, tlm::tlm_fw_transport_if<>& m,
       FrameAllocator& f, CpuCores& cores)
        : ctx(c),
          mem(m),
          direct(dynamic_cast<DebugAccess*>(&m)),
          frames(f),
          cpu(cores),
          params(read_vm_config(c.config)),
          track(c.tracer.track(group, "vm")),
          stats(c.stats, prefix),
          prefix(prefix) {}

    const SimContext& ctx;
    tlm::tlm_fw_transport_if<>& mem;
    // `mem`'s debug transport without a payload, if it offers one (a BusPort
    // does): mm::access's fast path, the same bytes and effect.
    DebugAccess* direct;
    FrameAllocator& frames;
    CpuCores& cpu;
    const VmConfig params;
    Tracer::Track track;
    VmStats stats;
    std::string prefix;   // of the statistics ("node0.vm")

    Ssd* ssd = nullptr;
    std::vector<InvalidateFn> notifiers;   // MMU notifiers, called in order (the first: set_invalidate)
    MapFn map_notifier;   // leaves made present (set_map_notifier)
    std::vector<Key> mapped;   // leaves made present, not yet told to map_notifier
    PageLockFn page_lock;   // a device's page locks (set_page_lock)
    Counter* locked_skips[3] = {};   // reclaim, compaction, khugepaged skips of locked pages
    std::function<void()> low_memory;
    std::shared_ptr<PageCache> cache;   // files and their page cache (set_file_system); none without files

    std::map<int, Process> procs;
    // Reclaim's LRU: every present leaf (a valid 4 KiB PTE or 2 MiB block
    // descriptor) of every process, in (pid, va) order, kept up to date by
    // every path that makes a leaf valid or not. Reclaim's clock walks it
    // from its hand, so its host work is proportional to the pages it looks
    // at, as Linux's LRU lists make it, not to every PTE of every VMA.
    std::set<Key> resident;
    // Bumped whenever a leaf becomes valid or not (res_set, res_clear):
    // frame_owner's reverse map, built at generation `rmap_generation`
    // (pa of a leaf's frame -> its pid, va and size), is stale after it.
    std::uint64_t leaf_generation = 0;
    std::uint64_t rmap_generation = ~std::uint64_t{0};
    struct RmapEntry {
        int pid;
        std::uint64_t va, size;
    };
    std::map<std::uint64_t, RmapEntry> rmap;
    // Reads in flight by (pid, page) (Inflight), and their completions in
    // time order. io_wake (VmDaemons) is told of each new completion time
    // so that it completes them at that simulated time (Vm::complete_io).
    // Cancelled ones (their page unmapped meanwhile) wait in `zombies` for
    // their completion to release the frame and slot. io_guard (System: the
    // DRAM's early-access check) is told of each frame under I/O.
    std::map<Key, Inflight> inflight;
    // The frames of the reads in flight, each with its completion time
    // (check_uptodate's index; kept with `inflight`, by defer_map and
    // erase_inflight).
    std::unordered_multimap<std::uint64_t, sc_core::sc_time> inflight_frames;
    std::multimap<sc_core::sc_time, Key> io_queue;
    std::multimap<sc_core::sc_time, std::pair<Key, Inflight>> zombies;
    std::function<void(sc_core::sc_time)> io_wake;
    std::function<void(std::uint64_t pa, sc_core::sc_time until)> io_guard;
    Counter* io_waits = nullptr;   // faults that waited for a read in flight (registered at the first)
    Hand reclaim_hand, khugepaged_hand;
    Khugepaged khugepaged;
    Migration mig;
    std::uint64_t mig_blocks_before = 0;   // free 2 MiB blocks when the compaction run began

    // Descriptor writes so far (mm::wr, mm::zero, the page-table writer's):
    // a process's remembered walk (Process::walk_*) is good only while this
    // has not moved.
    std::uint64_t descriptor_writes = 0;
};

}   // namespace mm
}   // namespace vrdmasim
