// Vm: the Linux-like virtual memory of one node's kernel (first part:
// address spaces, page tables, demand paging with THP at fault time,
// protection, pins, MMU notifiers). Page tables are ARMv8 stage-1 tables in
// the node's DRAM — the same tables an SMMU context bank walks (TTBR0 = a
// process's root, its ASID) — and user pages are frames of that DRAM, holding
// the process's real bytes. Every software path costs CPU time on the node's
// cores (CpuCores), each cost a named parameter.
//
// Loosely timed: calls take the absolute time `at` at which the caller asks
// and return when the work is done (VmResult::done); they never wait().
// Second part: reclaim to a swap Ssd (clock / second chance over the access
// flag), major faults, direct reclaim, khugepaged collapse, compaction; the
// daemons that call them periodically are VmDaemons (vm_daemons.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <systemc>
#include <tlm>

#include "src/core/context.hpp"
#include "models/os/cpu.hpp"
#include "models/os/frame_allocator.hpp"
#include "models/os/ssd.hpp"
#include "models/os/vm_params.hpp"
#include "models/smmu/page_table_writer.hpp"
#include "models/common/data_pattern.hpp"

namespace vrdmasim {

namespace mm {
struct Mm;   // the Vm's state (mm.hpp, private to models/os)
}
class FileSystem;   // filesystem.hpp
class FileReader;   // filesystem.hpp

// errno-like outcomes.
enum class VmError {
    Ok,
    NoMemory,   // ENOMEM: no frame, or no such mapping for mlock/pin
    Fault,   // EFAULT: address not mapped (a user access or get_user_pages)
    Access,   // EACCES: write to a read-only mapping
    Invalid,   // EINVAL: unaligned or zero length, bad process
    MemlockLimit,   // ENOMEM from RLIMIT_MEMLOCK
    Exists,   // EEXIST: MAP_FIXED_NOREPLACE over an existing mapping
};
const char* to_string(VmError e);

struct VmResult {
    VmError error = VmError::Ok;
    sc_core::sc_time done;   // absolute time the call returned
    std::uint64_t value = 0;   // mmap: the address; faults: pages made present
    bool ok() const { return error == VmError::Ok; }
};

// A khugepaged collapse whose window is open (Vm::collapsing): the PTEs of
// the 2 MiB range [va, va + 2 MiB) of process pid were cleared at `clear`;
// the block is installed at `install` (Vm::collapse_end).
struct VmCollapse {
    bool open = false;
    int pid = 0;
    std::uint64_t va = 0;
    sc_core::sc_time clear, install;
};

// A compaction whose migration window is open (Vm::migrating): the PTEs of
// `pages` 4 KiB pages were replaced by migration entries at `clear` (their
// cached translations invalidated, the SMMU's too); the new frames are mapped
// at `install` (Vm::compact_end).
struct VmMigration {
    bool open = false;
    std::uint64_t pages = 0;
    sc_core::sc_time clear, install;
};

// Who holds a physical frame now (Vm::frame_owner): what a physical-address
// engine would be writing into (the ownership check of the "why pinning
// exists" experiment, src/sim/frame_check.hpp).
struct FrameOwner {
    enum class Kind {
        Process,   // a leaf of process `pid` maps it, at `va` (the byte's own address)
        StalePin,   // no longer mapped, but still pinned by process `pid` (a collapse over pins)
        Kernel,   // allocated, mapped by no process: page tables, a block being filled by
        // khugepaged or compaction, or memory outside the page allocator
        Free,   // in the page allocator's free lists
        PageCache,   // a page-cache page: byte `offset` of file `file` (processes may map it too)
    };
    Kind kind = Kind::Free;
    int pid = 0;
    std::uint64_t va = 0;
    unsigned file = 0;
    std::uint64_t offset = 0;
};
const char* to_string(FrameOwner::Kind k);

enum class Prot : unsigned { None = 0, Read = 1, Write = 2, ReadWrite = 3 };

enum class Advice { HugePage, NoHugePage, PopulateWrite, DontNeed };

// What the application's CPU (EL0) may do with a range beside its VMA's
// protection (Vm::guard_user, buffer_guard.cpp): Full (AP[1] set, AP[2] as
// the protection says), ReadOnly (AP[2:1] = 11: read-only for EL0 and EL1),
// NoAccess (AP[1] clear: EL1 only, AP[2] as the protection says).
enum class UserAccess { Full, ReadOnly, NoAccess };

// A change of mappings that cached translations of (asid, [va, va+len)) must
// forget before the old frames are reused (an MMU notifier). The callee (the
// SMMU driver) returns when its invalidation is done, starting at `at`.
using InvalidateFn = std::function<sc_core::sc_time(int pid, std::uint16_t asid, std::uint64_t va, std::uint64_t len,
                                                    sc_core::sc_time at)>;

// A leaf (a 4 KiB page or a 2 MiB block) a Vm call made present, for a map
// notifier: a device that keeps its own copy of the translations (the NetVM
// NI's shadow page table, models/os/shadow_pager.hpp).
struct VmLeaf {
    int pid = 0;
    std::uint64_t va = 0, size = 0, pa = 0;
    bool writable = false;
};
// Called with the leaves made present by one call (fault, populate,
// swap-in, collapse, split, migration's new frames) when the call's work is
// done at `at`; returns when the device is updated (the call returns then).
using MapFn = std::function<sc_core::sc_time(const std::vector<VmLeaf>& leaves, sc_core::sc_time at)>;
// Whether a device holds the page of `va` of `pid` locked at the Vm's time
// `at` (NetVM: the NI while it accesses it): reclaim and migration skip it.
using PageLockFn = std::function<bool(int pid, std::uint64_t va, sc_core::sc_time at)>;

class Vm {
public:
    // Section "vm": thp (always|madvise|never; transhuge.rst), memlock-limit
    // (RLIMIT_MEMLOCK, 8 MiB from Linux 5.16; 64 KiB before), the costs:
    // minor-fault (1 us *estimate* for an A53; docs/references.md), zero-fill-page
    // (time to clear 4 KiB), huge-zero-fill (clear 2 MiB), syscall (entry and
    // exit), pte-update (per PTE written or cleared), pin-call and pin-page
    // (registration; docs/references.md), plus user-access (a present page touched
    // by the CPU).
    static void declare_params(ParamRegistry& reg);
    // Its columns of summary.csv (vmstat.cpp, next to its statistics).
    static void declare_metrics(MetricRegistry& reg);

    // `memory` is the node's DRAM target (debug transport: page tables and
    // page contents, untimed — the time is charged as CPU work). Frames come
    // from `frames` (the kernel's free memory); page tables too.
    Vm(const SimContext& ctx, const std::string& prefix, const std::string& group, tlm::tlm_fw_transport_if<>& memory,
       FrameAllocator& frames, CpuCores& cpu);

    // Called on every mapping change of a process (unmap, protection change,
    // and later swap-out, collapse, split, migration) before the frames are
    // reused. Without one, changes cost no invalidation. set_invalidate sets
    // (or replaces) the first notifier (the SMMU driver); add_invalidate
    // appends a further one (e.g. an RDMA library's registration cache). All
    // are called in order, chained: each starts at the time the previous one
    // returned, and the change is done when the last one returns.
    void set_invalidate(InvalidateFn fn);
    void add_invalidate(InvalidateFn fn);
    // The map notifier (one; see MapFn) and the device's page locks (see
    // PageLockFn): reclaim, compaction and khugepaged skip a locked page.
    void set_map_notifier(MapFn fn);
    void set_page_lock(PageLockFn fn);
    // The swap device. Without one, reclaim evicts nothing (anonymous pages
    // can only go to swap) and a failed allocation is NoMemory at once.
    void set_swap(Ssd& ssd);
    // Called (synchronously, from inside the allocating call) whenever an
    // allocation leaves free memory below vm.low-watermark: VmDaemons binds it
    // to kswapd's wake-up event.
    void set_low_memory(std::function<void()> fn);

    // ---- processes
    int create_process(const std::string& name);   // pid >= 1; ASID = pid
    std::uint64_t root(int pid) const;   // page-table root (TTBR0)
    std::uint16_t asid(int pid) const;
    unsigned t0sz() const { return 16; }   // 48-bit user addresses

    // ---- system calls (each charges `syscall` plus its work on a core)
    // Anonymous private mapping of `len` bytes (rounded up to 4 KiB), placed
    // at an address aligned to 2 MiB when len >= 2 MiB (as Linux does for
    // THP). `populate`: MAP_POPULATE (fault every page in now).
    VmResult mmap(int pid, std::uint64_t len, Prot prot, bool populate, sc_core::sc_time at);
    // mmap(va, len, prot, MAP_FIXED_NOREPLACE): the mapping placed at `va`
    // (page aligned), as a program asks for an address of its own; EEXIST
    // when any page of the range is mapped already, EINVAL outside the
    // user range (below vm.mmap_min_addr, or above 48 bits).
    VmResult mmap_fixed(int pid, std::uint64_t va, std::uint64_t len, Prot prot, bool populate, sc_core::sc_time at);
    VmResult munmap(int pid, std::uint64_t va, std::uint64_t len, sc_core::sc_time at);
    VmResult mprotect(int pid, std::uint64_t va, std::uint64_t len, Prot prot, sc_core::sc_time at);
    VmResult madvise(int pid, std::uint64_t va, std::uint64_t len, Advice advice, sc_core::sc_time at);
    VmResult mlock(int pid, std::uint64_t va, std::uint64_t len, sc_core::sc_time at);
    VmResult munlock(int pid, std::uint64_t va, std::uint64_t len, sc_core::sc_time at);

    // ---- page faults
    // A user access by the CPU: costs `user-access` if present (and sets the
    // access flag), else a fault (minor: zero fill, 2 MiB when THP allows
    // and a 2 MiB frame is free; Fault/Access errors for bad addresses).
    VmResult touch(int pid, std::uint64_t va, bool write, sc_core::sc_time at);
    // get_user_pages over [va, va+len): makes every page present (writable
    // if `write`), charging faults as touch does; value = pages faulted in.
    // Stops at the first bad page with its error (pages before it stay in).
    VmResult fault_in(int pid, std::uint64_t va, std::uint64_t len, bool write, sc_core::sc_time at);

    // ---- pins (pin_user_pages with FOLL_LONGTERM)
    // Fault in and pin every page: per-page pin counts; pinned pages are
    // never moved. Counts against memlock-limit per process (MemlockLimit,
    // nothing pinned, when exceeded).
    VmResult pin(int pid, std::uint64_t va, std::uint64_t len, sc_core::sc_time at);
    VmResult unpin(int pid, std::uint64_t va, std::uint64_t len, sc_core::sc_time at);
    unsigned pin_count(int pid, std::uint64_t va) const;
    std::uint64_t pinned_bytes(int pid) const;
    // The self-check of the pin count pinned_bytes keeps as pins are taken
    // and dropped: empty when it equals the pins counted one by one, else
    // which process disagrees and by how much.
    std::string pin_count_mismatch() const;

    // ---- inspection and harness access (untimed)
    // Physical address backing va, if present.
    bool translate(int pid, std::uint64_t va, std::uint64_t& pa) const;
    bool present(int pid, std::uint64_t va) const;
    // The present leaf (4 KiB page or 2 MiB block) mapping va, as a map
    // notifier is told it; false if none.
    bool present_leaf(int pid, std::uint64_t va, VmLeaf& out);
    // Who holds the frame of physical address `pa` now (frame_owner.cpp).
    // Untimed inspection; a reverse map of every process's leaves, rebuilt
    // only after a leaf changed.
    FrameOwner frame_owner(std::uint64_t pa) const;
    // Name of process `pid` (create_process), "" if none.
    std::string process_name(int pid) const;
    // Copy bytes to/from user memory by virtual address; pages not present
    // are faulted in first, untimed (the workload's CPU filling its buffers).
    // False for an address that is not mapped.
    bool write_user(int pid, std::uint64_t va, const unsigned char* data, std::uint64_t len);
    bool read_user(int pid, std::uint64_t va, unsigned char* data, std::uint64_t len);
    // Read user memory without changing anything (no fault, no access flag,
    // no statistics, no time): present pages from their frames (PROT_NONE
    // ones too), swapped pages from their swap slot, pages never touched as
    // zeros. False if some byte lies outside every VMA.
    bool peek_user(int pid, std::uint64_t va, unsigned char* data, std::uint64_t len) const;
    // Write user memory where it is present; pages not present (never
    // touched, swapped out, in a collapse window) are left as they are. No
    // fault, no time, no statistics. False if some byte lies outside every VMA.
    bool poke_user(int pid, std::uint64_t va, const unsigned char* data, std::uint64_t len);
    // write_user and peek_user with the data pattern's bytes from `at`
    // (data_pattern.hpp; a workload's fill of a source and check of a
    // destination), the same effect and answer without making or reading
    // the bytes where the DRAM keeps the pattern by its places
    // (DebugAccess::debug_pattern). peek_user_pattern: `first`, the first
    // byte that differs from the pattern's (`len`: none).
    bool write_user_pattern(int pid, std::uint64_t va, std::uint64_t len, PatternPlace at);
    bool peek_user_pattern(int pid, std::uint64_t va, std::uint64_t len, PatternPlace at, std::uint64_t& first) const;

    std::uint64_t free_bytes() const { return frames_.free_pages() * FrameAllocator::kPage; }

    // ---- second part: reclaim, khugepaged, compaction (activities "kswapd",
    // "khugepaged", "kcompactd" on CpuCores; see README.md "Vm")
    // Evict LRU (second-chance) unpinned, unlocked user pages to swap until
    // free_bytes() >= target_free_bytes. value = pages swapped out; NoMemory
    // if the target was not reached (nothing evictable, swap full or no swap).
    VmResult reclaim(std::uint64_t target_free_bytes, sc_core::sc_time at);
    // One khugepaged pass of up to khugepaged.pages-to-scan PTEs, every
    // collapse's two phases done in this one call (for callers without a
    // thread; the tables jump to their final state at once). value = ranges
    // collapsed; NoMemory if an order-9 allocation failed (the pass stops
    // there: khugepaged then sleeps alloc-sleep). Goes on with a pass that
    // collapse_begin left in progress.
    VmResult khugepaged_scan(sc_core::sc_time at);
    // The same pass in two phases per collapse (VmDaemons' khugepaged thread):
    // collapse_begin scans on from the hand (starting a pass, or going on
    // with the one in progress) up to the next collapse and runs its phase 1:
    // the range's PTEs cleared, the notifier called, the bytes copied into
    // the new block; collapsing() is then open and done = its install time
    // (value = collapses completed so far in the pass). Or the pass ends:
    // collapsing() is not open and the result is the pass's, as
    // khugepaged_scan's. Until collapse_end, any fault, user copy, munmap,
    // mprotect or madvise on the range completes the collapse first and
    // starts its work at the install time (mmap_lock).
    VmResult collapse_begin(sc_core::sc_time at);
    // Phase 2: install the block, free the old frames and the page table.
    // done = max(at, install time); value = 1, or 0 (done = at) when no
    // window is open (a fault already completed it).
    VmResult collapse_end(sc_core::sc_time at);
    VmCollapse collapsing() const;
    // Migrate at most max_pages unpinned 4 KiB user pages out of one 2 MiB
    // physical block to free it whole. value = pages migrated; NoMemory if no
    // block could be freed within max_pages. Both phases below in one call
    // (the tables jump to their final state at once).
    VmResult compact(std::uint64_t max_pages, sc_core::sc_time at);
    // The same run in two phases (VmDaemons' kcompactd thread), as Linux's
    // migrate_pages: compact_begin picks the block, allocates the new frames,
    // replaces the pages' PTEs by migration entries (non-present: the SMMU
    // faults on them), invalidates the cached translations through the
    // notifiers, and copies the bytes; migrating() is then open and done =
    // the install time (value = pages being migrated). Until compact_end, a
    // fault (CPU or SMMU via the driver), user copy, munmap, mprotect or
    // madvise on one of the pages waits for the migration
    // (__migration_entry_wait): the migration is completed and the call's
    // work starts at the install time. With no block to free, nothing opens
    // and the result is compact's. A compact_begin with a window still open
    // ends it first.
    VmResult compact_begin(std::uint64_t max_pages, sc_core::sc_time at);
    // Phase 2: the migration entries become PTEs to the new frames, the old
    // frames are freed. done = max(at, install time); value = pages migrated;
    // error as compact's. With no window open (a fault completed it), done =
    // at and NoMemory.
    VmResult compact_end(sc_core::sc_time at);
    VmMigration migrating() const;
    // Whether va's page is being migrated (its PTE a migration entry).
    bool migrating(int pid, std::uint64_t va) const;

    // ---- the user-access guard (buffer_guard.cpp; README.md "Buffer guard")
    // An mprotect of [va, va+len) (va page aligned) that sets what EL0 may
    // do (`access`) and leaves the privileged access of the VMA's protection:
    // the VMA records it, so leaves created later get it too. Costs the
    // syscall, a PTE update per leaf changed, `tlbi_page` per page (at most
    // 512: then one ASID flush) and the MMU notifiers (the SMMU's TLBs).
    VmResult guard_user(int pid, std::uint64_t va, std::uint64_t len, UserAccess access, sc_core::sc_time tlbi_page,
                        sc_core::sc_time at);
    // Whether the CPU at EL0 may load (or store, `write`) va: its leaf is
    // present and its AP bits allow it. Untimed inspection.
    bool user_permits(int pid, std::uint64_t va, bool write) const;
    // ---- files and the page cache (filemap.cpp, pagecache.cpp, readahead.cpp;
    // README.md "Files and the page cache"). Only on a node with a file
    // system (set_file_system); elsewhere these are std::logic_error.
    void set_file_system(FileSystem& fs);
    // A node without the SSD: the same files, its own page cache, the
    // blocks read through `reader` (a RemoteBlock, remote_block.hpp).
    void set_file_system(FileSystem& fs, FileReader& reader);
    bool has_files() const;
    // open(2) of file `file` read-only: value = the fd (Invalid: no such file).
    VmResult open(int pid, unsigned file, sc_core::sc_time at);
    VmResult close(int pid, int fd, sc_core::sc_time at);
    // read(2): up to len bytes from `offset` into the user buffer at `buf`
    // (faulted in as the copy reaches it), through the page cache; misses
    // read from the SSD with Linux's readahead (fs.readahead). Waits for
    // pages under I/O. value = bytes copied (short at EOF; 0 past it);
    // Fault for a bad buffer (unless some bytes were copied).
    VmResult read(int pid, int fd, std::uint64_t offset, std::uint64_t len, std::uint64_t buf, sc_core::sc_time at);
    // mmap(2) of a file, shared and read-only (the files are read-only:
    // Write is Access): the pages are the page cache's; a first touch of an
    // uncached page is a major fault reading it (with read-around) from the
    // SSD. value = the address. `populate`: MAP_POPULATE over the file's part.
    VmResult mmap_file(int pid, int fd, std::uint64_t offset, std::uint64_t len, Prot prot, bool populate,
                       sc_core::sc_time at);
    // GUP pins of page-cache pages (a zero-copy send of the file, as
    // sendfile/splice registering the cache's pages): [offset, offset+len)
    // of fd's file read in if needed, pinned (never reclaimed while pinned),
    // uptodate at done; their frames appended to `frames`. value = pages.
    // Costs pin-call + pin-page per page; kernel pins, not RLIMIT_MEMLOCK.
    VmResult pin_file(int pid, int fd, std::uint64_t offset, std::uint64_t len, sc_core::sc_time at,
                      std::vector<std::uint64_t>* frames = nullptr);
    VmResult unpin_file(int pid, int fd, std::uint64_t offset, std::uint64_t len, sc_core::sc_time at);
    // Inspection (untimed): pages cached; whether a file's page is cached; its pins.
    std::uint64_t cached_pages() const;
    bool file_cached(unsigned file, std::uint64_t offset) const;
    unsigned file_pins(unsigned file, std::uint64_t offset) const;

    // ---- reads in flight (inflight.cpp; README.md "Reads in flight")
    // A swap-in or a file fault whose SSD read is not done maps its page
    // only when the read completes: complete_io(upto) writes the PTEs of
    // every read done by `upto` (in time order, the map notifier told at
    // each one's time) and returns next_io(). VmDaemons calls it at each
    // completion time; every Vm call also completes those done by its
    // start (the kernel's time when the simulation runs, else its `at`).
    sc_core::sc_time complete_io(sc_core::sc_time upto);
    // The earliest completion still to come (sc_max_time() if none).
    sc_core::sc_time next_io() const;
    // Told (synchronously) of each new completion time: VmDaemons' wake-up.
    void set_io_wake(std::function<void(sc_core::sc_time)> fn);
    // Told of each frame a read is filling and when it completes: the
    // DRAM's check that no one reads it before (Dram::hold).
    void set_io_guard(std::function<void(std::uint64_t pa, sc_core::sc_time until)> fn);

    std::uint64_t low_watermark() const;
    std::uint64_t high_watermark() const;
    // Whether va's PTE is a swap entry (the page is on the swap device).
    bool swapped(int pid, std::uint64_t va) const;

private:
    std::shared_ptr<mm::Mm> mm_;
    FrameAllocator& frames_;
};

}   // namespace vrdmasim
