#include "models/os/vm.hpp"

#include <algorithm>
#include <cstring>
#include <set>
#include <stdexcept>

#include "models/common/aarch64_descriptors.hpp"

namespace vrdmasim {

using sc_core::sc_time;
using namespace aarch64;

const char* to_string(VmError e) {
    switch (e) {
        case VmError::Ok: return "ok";
        case VmError::NoMemory: return "no memory (ENOMEM)";
        case VmError::Fault: return "bad address (EFAULT)";
        case VmError::Access: return "access denied (EACCES)";
        case VmError::Invalid: return "invalid argument (EINVAL)";
        case VmError::MemlockLimit: return "RLIMIT_MEMLOCK exceeded (ENOMEM)";
    }
    return "?";
}

namespace {

constexpr std::uint64_t kPage = kPageSize;
constexpr std::uint64_t kHuge = kBlockSize;
// Software bit of a descriptor whose valid bit is clear: a PROT_NONE mapping
// that keeps its frame (Linux arm64's PTE_PROT_NONE is bit 58; bits [58:55]
// are ignored by the hardware walker, so the SMMU sees a translation fault).
constexpr std::uint64_t kSwProtNone = 1ull << 58;
// Software bit of a swap entry (valid bit clear): the page is on the swap
// device, its slot number in bits [47:12] (Linux arm64 keeps the swap type and
// offset in a non-present PTE the same way). Never set with kSwProtNone.
constexpr std::uint64_t kSwSwap = 1ull << 57;
std::uint64_t swap_entry(std::uint64_t slot) { return ((slot << 12) & 0x0000fffffffff000ull) | kSwSwap; }
std::uint64_t swap_slot(std::uint64_t d) { return (d & 0x0000fffffffff000ull) >> 12; }
bool is_swap(std::uint64_t d) { return !(d & 1) && (d & kSwSwap); }
// Software bit of a migration entry (valid bit clear): the page is being
// migrated, the old frame's address kept in the entry (Linux's migration
// swap entry holds the pfn the same way, mm/migrate.c). A fault on it waits
// for the migration to finish (__migration_entry_wait); the SMMU's walker
// sees a translation fault.
constexpr std::uint64_t kSwMigration = 1ull << 56;
bool is_migration(std::uint64_t d) { return !(d & 1) && (d & kSwMigration); }
constexpr std::uint64_t kMmapBase = 0x7f0000000000ull;   // top of the mmap area (top-down)
constexpr std::uint64_t kMmapMin = 0x10000ull;           // vm.mmap_min_addr default (64 KiB)

std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }
std::uint64_t align_down(std::uint64_t v, std::uint64_t a) { return v / a * a; }
bool has_frame(std::uint64_t d) { return (d & kValid) || (d & kSwProtNone); }

struct OutOfFrames {};   // a table frame could not be had
// Frames kept for page tables: user pages never take the last ones.
constexpr std::uint64_t kTableReserve = 64;

enum class HugeAdvice { Default, Huge, NoHuge };

struct Vma {
    std::uint64_t end;
    Prot prot;
    HugeAdvice advice = HugeAdvice::Default;
    bool locked = false;
};

struct PinRec {
    unsigned count = 0;
    std::uint64_t pa = 0;
};

bool can_write(Prot p) { return static_cast<unsigned>(p) & static_cast<unsigned>(Prot::Write); }

}  // namespace

struct Vm::Impl {
    const SimContext& ctx;
    tlm::tlm_fw_transport_if<>& mem;
    FrameAllocator& frames;
    CpuCores& cpu;

    std::string thp;   // always | madvise | never
    std::uint64_t memlock_limit;
    sc_time minor_fault, zero_fill_page, huge_zero_fill, syscall, pte_update, pin_call, pin_page, user_access;

    // second part
    std::uint64_t low_wm, high_wm, direct_reclaim_pages, pages_to_scan, max_ptes_none, max_ptes_swap;
    bool pins_block_collapse;
    sc_time swap_out_page, major_fault, scan_pte, copy_page;
    Ssd* ssd = nullptr;
    std::vector<InvalidateFn> inv_fns;   // MMU notifiers, called in order (the first: set_invalidate)
    std::function<void()> low_memory;
    Tracer::Track track;
    struct Hand {
        int pid = 0;
        std::uint64_t va = 0;
    } reclaim_hand, khugepaged_hand;
    Counter &swap_outs, &swap_ins, &faults_major, &reclaim_scans, &pages_scanned, &direct_reclaims, &collapses,
        &collapse_failed_alloc, &collapse_skipped_pinned, &stale_pins, &khugepaged_scanned, &pages_migrated,
        &compactions, &compactions_failed, &migration_waits;
    Histogram& migration_window;
    Histogram& collapse_window;

    Counter &faults_minor, &faults_huge, &faults_af, &zero_fills, &pages_mapped, &pages_pinned, &mmaps, &munmaps,
        &mprotects, &madvises, &mlocks, &invalidations, &memlock_refusals, &huge_splits, &frames_freed;
    Histogram& fault_time;

    struct Process {
        std::string name;
        int pid;
        std::uint16_t asid;
        std::unique_ptr<PageTableWriter> pt;
        std::map<std::uint64_t, Vma> vmas;             // by start, non-overlapping
        std::map<std::uint64_t, PinRec> pins;          // by VA page: pins of the page mapped there
        std::multimap<std::uint64_t, PinRec> orphans;  // pinned pages no longer mapped (by old VA)
    };
    std::map<int, Process> procs;
    // Reclaim's LRU: every present leaf (a valid 4 KiB PTE or 2 MiB block
    // descriptor) of every process, in (pid, va) order, kept up to date by
    // every path that makes a leaf valid or not. Reclaim's clock walks it
    // from its hand, so its host work is proportional to the pages it looks
    // at, as Linux's LRU lists make it, not to every PTE of every VMA.
    using Key = std::pair<int, std::uint64_t>;
    std::set<Key> resident;
    void res_set(int pid, std::uint64_t va, bool valid) {
        if (valid)
            resident.insert({pid, va});
        else
            resident.erase({pid, va});
    }
    void res_clear(int pid, std::uint64_t va, std::uint64_t end) {
        resident.erase(resident.lower_bound({pid, va}), resident.lower_bound({pid, end}));
    }

    // Work accumulated by one call: CPU time and pages made present.
    struct Work {
        sc_time cpu = sc_core::SC_ZERO_TIME;
        sc_time at = sc_core::SC_ZERO_TIME;   // when the call started (device I/O is issued from it)
        sc_time io = sc_core::SC_ZERO_TIME;   // waits for devices (SSD, notifier) on top of the CPU time
        std::uint64_t faulted = 0;
        bool fault_taken = false;   // a fault (not a plain access) was taken
    };

    Impl(const SimContext& c, const std::string& prefix, const std::string& group, tlm::tlm_fw_transport_if<>& m,
         FrameAllocator& f, CpuCores& cores)
        : ctx(c),
          mem(m),
          frames(f),
          cpu(cores),
          thp(c.config[params_of<VmParams>().thp]),
          memlock_limit(c.config[params_of<VmParams>().memlock_limit]),
          minor_fault(c.config[params_of<VmParams>().minor_fault]),
          zero_fill_page(c.config[params_of<VmParams>().zero_fill_page]),
          huge_zero_fill(c.config[params_of<VmParams>().huge_zero_fill]),
          syscall(c.config[params_of<VmParams>().syscall]),
          pte_update(c.config[params_of<VmParams>().pte_update]),
          pin_call(c.config[params_of<VmParams>().pin_call]),
          pin_page(c.config[params_of<VmParams>().pin_page]),
          user_access(c.config[params_of<VmParams>().user_access]),
          low_wm(c.config[params_of<VmParams>().low_watermark]),
          high_wm(c.config[params_of<VmParams>().high_watermark]),
          direct_reclaim_pages(static_cast<std::uint64_t>(c.config[params_of<VmParams>().direct_reclaim_pages])),
          pages_to_scan(static_cast<std::uint64_t>(c.config[params_of<KhugepagedParams>().pages_to_scan])),
          max_ptes_none(static_cast<std::uint64_t>(c.config[params_of<KhugepagedParams>().max_ptes_none])),
          max_ptes_swap(static_cast<std::uint64_t>(c.config[params_of<KhugepagedParams>().max_ptes_swap])),
          pins_block_collapse(c.config[params_of<VmParams>().pins_block_thp_collapse]),
          swap_out_page(c.config[params_of<VmParams>().swap_out_page]),
          major_fault(c.config[params_of<VmParams>().major_fault]),
          scan_pte(c.config[params_of<VmParams>().scan_pte]),
          copy_page(c.config[params_of<VmParams>().copy_page]),
          track(c.tracer.track(group, "vm")),
          swap_outs(c.stats.counter(prefix + ".swap_outs", "", "4 KiB pages written to swap by reclaim")),
          swap_ins(c.stats.counter(prefix + ".swap_ins", "", "4 KiB pages read back from swap")),
          faults_major(c.stats.counter(prefix + ".faults_major", "", "faults on swapped-out pages")),
          reclaim_scans(c.stats.counter(prefix + ".reclaim_scans", "", "reclaim passes (kswapd or direct)")),
          pages_scanned(c.stats.counter(prefix + ".pages_scanned", "", "leaves examined by reclaim's clock")),
          direct_reclaims(c.stats.counter(prefix + ".direct_reclaims", "", "reclaims run by a failed allocation")),
          collapses(c.stats.counter(prefix + ".collapses", "", "2 MiB ranges collapsed by khugepaged")),
          collapse_failed_alloc(c.stats.counter(prefix + ".collapse_failed_alloc", "",
                                                "khugepaged collapses abandoned: no order-9 frame")),
          collapse_skipped_pinned(c.stats.counter(prefix + ".collapse_skipped_pinned", "",
                                                  "khugepaged ranges skipped because a page is pinned")),
          stale_pins(c.stats.counter(prefix + ".stale_pins", "",
                                     "pinned 4 KiB pages whose VA was remapped by a collapse (pin refers to "
                                     "a frame no longer mapped)")),
          khugepaged_scanned(c.stats.counter(prefix + ".khugepaged_scanned", "", "PTEs examined by khugepaged")),
          pages_migrated(c.stats.counter(prefix + ".pages_migrated", "", "4 KiB pages moved by compaction")),
          compactions(c.stats.counter(prefix + ".compactions", "", "compaction runs")),
          compactions_failed(c.stats.counter(prefix + ".compactions_failed", "",
                                             "compaction runs that freed no 2 MiB block")),
          migration_waits(c.stats.counter(prefix + ".migration_waits", "",
                                          "faults that found a migration entry and waited for the migration "
                                          "to finish (__migration_entry_wait)")),
          migration_window(c.stats.histogram(prefix + ".migration_window", "us",
                                             "PTEs replaced by migration entries to new frames mapped, per "
                                             "compaction")),
          collapse_window(c.stats.histogram(prefix + ".collapse_window", "us",
                                            "PTEs cleared to block installed, per collapse")),
          faults_minor(c.stats.counter(prefix + ".faults_minor", "", "4 KiB zero-fill faults")),
          faults_huge(c.stats.counter(prefix + ".faults_huge", "", "2 MiB (THP) zero-fill faults")),
          faults_af(c.stats.counter(prefix + ".faults_af", "", "access-flag faults on present pages")),
          zero_fills(c.stats.counter(prefix + ".zero_fills", "", "4 KiB pages cleared (a THP counts 512)")),
          pages_mapped(c.stats.counter(prefix + ".pages_mapped", "", "4 KiB pages made present by faults")),
          pages_pinned(c.stats.counter(prefix + ".pages_pinned", "", "4 KiB page pins taken")),
          mmaps(c.stats.counter(prefix + ".mmaps", "", "mmap calls")),
          munmaps(c.stats.counter(prefix + ".munmaps", "", "munmap calls")),
          mprotects(c.stats.counter(prefix + ".mprotects", "", "mprotect calls")),
          madvises(c.stats.counter(prefix + ".madvises", "", "madvise calls")),
          mlocks(c.stats.counter(prefix + ".mlocks", "", "mlock calls")),
          invalidations(c.stats.counter(prefix + ".invalidations", "", "invalidate (MMU notifier) calls")),
          memlock_refusals(c.stats.counter(prefix + ".memlock_refusals", "", "mlock/pin refused by RLIMIT_MEMLOCK")),
          huge_splits(c.stats.counter(prefix + ".huge_splits", "", "2 MiB mappings split into 4 KiB pages")),
          frames_freed(c.stats.counter(prefix + ".frames_freed", "", "4 KiB frames given back (a THP counts 512)")),
          fault_time(c.stats.histogram(prefix + ".fault_time", "us",
                                       "touch/fault_in service time (done - at) when a fault was taken")) {
        if (high_wm < low_wm)
            throw ConfigError("vm.high-watermark (" + c.config.text(params_of<VmParams>().high_watermark) +
                              ") must not be below vm.low-watermark (" + c.config.text(params_of<VmParams>().low_watermark) + ")");
    }

    // ------------------------------------------------------------ memory
    // One payload for all debug accesses (constructing one costs an
    // allocation, and descriptors are read a word at a time).
    tlm::tlm_generic_payload dbg_gp;
    void access(bool write, std::uint64_t pa, unsigned char* data, std::uint64_t len) {
        tlm::tlm_generic_payload& gp = dbg_gp;
        gp.set_command(write ? tlm::TLM_WRITE_COMMAND : tlm::TLM_READ_COMMAND);
        gp.set_address(pa);
        gp.set_data_ptr(data);
        gp.set_data_length(static_cast<unsigned>(len));
        gp.set_streaming_width(static_cast<unsigned>(len));
        if (mem.transport_dbg(gp) != len) throw std::runtime_error("Vm: cannot access DRAM at " + std::to_string(pa));
    }
    std::uint64_t rd(std::uint64_t pa) {
        std::uint64_t v = 0;
        access(false, pa, reinterpret_cast<unsigned char*>(&v), 8);
        return v;
    }
    void wr(std::uint64_t pa, std::uint64_t v) { access(true, pa, reinterpret_cast<unsigned char*>(&v), 8); }
    void zero(std::uint64_t pa, std::uint64_t len) {
        static const std::vector<unsigned char> zeros(kPage, 0);
        for (std::uint64_t off = 0; off < len; off += kPage)
            access(true, pa + off, const_cast<unsigned char*>(zeros.data()), kPage);
    }
    std::uint64_t alloc_table() {
        auto pa = frames.alloc(0);
        if (!pa) throw OutOfFrames{};
        zero(*pa, kPage);
        return *pa;
    }
    void free_frame(std::uint64_t pa, unsigned order) {
        frames.free(pa, order);
        frames_freed.inc(1ull << order);
    }
    // An order-9 frame split into 512 allocated order-0 frames.
    void split_frame(std::uint64_t pa) {
        for (unsigned o = FrameAllocator::kMaxOrder; o >= 1; --o)
            for (std::uint64_t b = pa; b < pa + kHuge; b += kPage << o) frames.split(b, o);
    }

    // ------------------------------------------------------------ tables
    // Address of the descriptor that is (or would be) the leaf for va: the
    // level-2 entry when it is not a table (empty, block, PROT_NONE block),
    // else the level-3 entry; 0 when no level-2 table exists.
    std::uint64_t leaf_slot(const Process& p, std::uint64_t va, int& level) {
        std::uint64_t table = p.pt->root();
        for (int l = start_level(16); l <= 3; ++l) {
            const std::uint64_t at = table + 8ull * index_of(va, l);
            if (l == 3) {
                level = 3;
                return at;
            }
            const std::uint64_t d = rd(at);
            const bool is_table = (d & kValid) && (d & kTableOrPage);
            if (!is_table) {
                if (l == 2) {
                    level = 2;
                    return at;
                }
                return 0;
            }
            table = d & kAddrMask;
        }
        return 0;
    }
    // The leaf descriptor for va (0 if none) and its slot/level.
    std::uint64_t leaf(const Process& p, std::uint64_t va, std::uint64_t* slot = nullptr, int* level = nullptr) {
        int l = 0;
        const std::uint64_t at = leaf_slot(p, va, l);
        if (slot) *slot = at;
        if (level) *level = l;
        return at ? rd(at) : 0;
    }

    bool translate(const Process& p, std::uint64_t va, std::uint64_t& pa) {
        if ((va >> 48) != 0) return false;
        int level = 0;
        const std::uint64_t d = leaf(p, va, nullptr, &level);
        if (!(d & kValid)) return false;
        const std::uint64_t size = level == 2 ? kHuge : kPage;
        pa = (d & kAddrMask & ~(size - 1)) + (va & (size - 1));
        return true;
    }

    // Harness access to user memory, untimed; faults pages in (no CPU time).
    bool user_copy(int pid, std::uint64_t va, unsigned char* data, std::uint64_t len, bool write) {
        Process* p = proc(pid);
        if (!p || va + len < va || ((va + len) >> 48) != 0) return false;
        std::uint64_t done = 0;
        while (done < len) {
            const std::uint64_t a = va + done;
            std::uint64_t n = std::min(len - done, kPage - (a & (kPage - 1)));
            Vma* v = find_vma(*p, a);
            if (!v || v->prot == Prot::None || (write && !can_write(v->prot))) return false;
            // Within a present 2 MiB block (and its VMA) copy to the block's end at once.
            int level = 0;
            const std::uint64_t d = in_open(pid, a, a + 1) ? 0 : leaf(*p, a, nullptr, &level);
            if (level == 2 && has_frame(d) && (d & kValid))
                n = std::min({len - done, kHuge - (a & (kHuge - 1)), v->end - a});
            std::uint64_t pa = 0;
            if (!translate(*p, a, pa)) {
                Work w;
                w.at = sc_core::sc_time_stamp();
                std::uint64_t next = 0;
                if (fault_page(*p, a, write, w, next) != VmError::Ok || !translate(*p, a, pa)) return false;
            }
            access(write, pa, data + done, n);
            done += n;
        }
        return true;
    }

    // Write user memory where it is present, leaving pages that are not (never
    // touched, swapped out) as they are: no fault, no time. False outside
    // every VMA.
    bool poke(int pid, std::uint64_t va, const unsigned char* data, std::uint64_t len) {
        Process* p = proc(pid);
        if (!p || va + len < va || ((va + len) >> 48) != 0) return false;
        std::uint64_t done = 0;
        while (done < len) {
            const std::uint64_t a = va + done;
            std::uint64_t n = std::min(len - done, kPage - (a & (kPage - 1)));
            const Vma* v = find_vma(*p, a);
            if (!v) return false;
            int level = 0;
            const bool open_range = in_open(pid, a, a + 1);
            const std::uint64_t d = open_range ? 0 : leaf(*p, a, nullptr, &level);
            if (level == 2 && has_frame(d) && (d & kValid))
                n = std::min({len - done, kHuge - (a & (kHuge - 1)), v->end - a});
            std::uint64_t pa = 0;
            if (!open_range && translate(*p, a, pa)) {
                access(true, pa, const_cast<unsigned char*>(data) + done, n);
            } else if (const std::uint64_t dst = migration_dst(pid, a)) {   // the bytes are in the new frame
                access(true, dst + (a & (kPage - 1)), const_cast<unsigned char*>(data) + done, n);
            }
            done += n;
        }
        return true;
    }

    // Read user memory without any change: frames, swap slots, zeros for
    // pages never touched; false outside every VMA.
    bool peek(int pid, std::uint64_t va, unsigned char* data, std::uint64_t len) {
        Process* p = proc(pid);
        if (!p || va + len < va || ((va + len) >> 48) != 0) return false;
        std::vector<unsigned char> page;
        for (std::uint64_t done = 0; done < len;) {
            const std::uint64_t a = va + done;
            const std::uint64_t off = a & (kPage - 1);
            std::uint64_t n = std::min(len - done, kPage - off);
            const Vma* vma = find_vma(*p, a);
            if (!vma) return false;
            int level = 0;
            const std::uint64_t d = in_open(pid, a, a + 1) ? 0 : leaf(*p, a, nullptr, &level);
            if (in_open(pid, a, a + 1)) {   // collapsing: the new block already holds the bytes
                access(false, open.block + (a - open.base), data + done, n);
            } else if (has_frame(d)) {
                const std::uint64_t size = level == 2 ? kHuge : kPage;
                if (level == 2)   // the rest of the block (and of its VMA) in one copy
                    n = std::min({len - done, kHuge - (a & (kHuge - 1)), vma->end - a});
                access(false, (d & kAddrMask & ~(size - 1)) + (a & (size - 1)), data + done, n);
            } else if (level == 3 && is_migration(d)) {   // being migrated: the new frame holds the bytes
                access(false, migration_dst(pid, a) + off, data + done, n);
            } else if (level == 3 && is_swap(d)) {
                if (!ssd) throw std::logic_error("Vm: swap entry without a swap device");
                page.resize(kPage);
                ssd->peek_page(swap_slot(d), page.data());
                std::memcpy(data + done, page.data() + off, n);
            } else {
                std::memset(data + done, 0, n);
            }
            done += n;
        }
        return true;
    }

    static PageTableWriter::Attrs attrs(Prot prot) {
        PageTableWriter::Attrs a;
        a.write = can_write(prot);
        a.user = true;
        a.af = true;
        a.global = false;
        return a;
    }

    // Replace the 2 MiB block mapping at `base` (present or PROT_NONE) by 512
    // page descriptors with the same attributes and frames; the frame is split
    // into order-0 frames. Charges 512 PTE writes.
    void split_block(Process& p, std::uint64_t base, Work& w) {
        int level = 0;
        const std::uint64_t at = leaf_slot(p, base, level);
        const std::uint64_t d = rd(at);
        if (level != 2 || !has_frame(d)) throw std::logic_error("Vm: no block to split");
        const std::uint64_t pa = d & kAddrMask;
        const std::uint64_t low = d & ~kAddrMask;
        split_frame(pa);
        const std::uint64_t table = alloc_table();
        for (unsigned i = 0; i < 512; ++i) wr(table + 8ull * i, (pa + i * kPage) | low | kTableOrPage);
        wr(at, table | kValid | kTableOrPage);
        res_set(p.pid, base, false);
        if (d & kValid)
            for (unsigned i = 0; i < 512; ++i) res_set(p.pid, base + i * kPage, true);
        huge_splits.inc();
        w.cpu += pte_update * 512;
    }

    // ------------------------------------------------------------ VMAs
    Process* proc(int pid) {
        auto it = procs.find(pid);
        return it == procs.end() ? nullptr : &it->second;
    }
    Vma* find_vma(Process& p, std::uint64_t va, std::uint64_t* start = nullptr) {
        auto it = p.vmas.upper_bound(va);
        if (it == p.vmas.begin()) return nullptr;
        --it;
        if (va >= it->second.end) return nullptr;
        if (start) *start = it->first;
        return &it->second;
    }
    void split_vma_at(Process& p, std::uint64_t a) {
        std::uint64_t s = 0;
        Vma* v = find_vma(p, a, &s);
        if (!v || s == a) return;
        Vma upper = *v;
        v->end = a;
        p.vmas.emplace(a, upper);
    }
    // Every byte of [va, end) lies in some VMA.
    bool covered(Process& p, std::uint64_t va, std::uint64_t end) {
        while (va < end) {
            std::uint64_t s = 0;
            Vma* v = find_vma(p, va, &s);
            if (!v) return false;
            va = v->end;
        }
        return true;
    }
    std::uint64_t locked_bytes(const Process& p) const {
        std::uint64_t n = 0;
        for (const auto& kv : p.vmas)
            if (kv.second.locked) n += kv.second.end - kv.first;
        return n;
    }
    std::uint64_t pinned(const Process& p) const {
        std::uint64_t n = 0;
        for (const auto& kv : p.pins) n += kv.second.count;
        for (const auto& kv : p.orphans) n += kv.second.count;
        return n * kPage;
    }

    bool thp_allowed(const Vma& v) const {
        if (v.advice == HugeAdvice::NoHuge) return false;
        if (thp == "always") return true;
        if (thp == "madvise") return v.advice == HugeAdvice::Huge;
        return false;
    }

    // ------------------------------------------------------------ faults
    // Make the page at va present (or mark it accessed); adds the work.
    // `next` is set to the end of the leaf now mapping va.
    VmError fault_page(Process& p, std::uint64_t va, bool write, Work& w, std::uint64_t& next) {
        const std::uint64_t page = align_down(va, kPage);
        next = page + kPage;
        if (settle(p, page, page + kPage, w)) {   // the fault waited for a collapse or a migration
            w.fault_taken = true;
            w.cpu += minor_fault;   // then retries and finds the block
        }
        std::uint64_t vstart = 0;
        Vma* v = find_vma(p, va, &vstart);
        if (!v) return VmError::Fault;
        if (v->prot == Prot::None || (write && !can_write(v->prot))) {
            w.fault_taken = true;
            w.cpu += minor_fault;   // the fault is taken, then refused
            return VmError::Access;
        }
        std::uint64_t at = 0;
        int level = 0;
        const std::uint64_t d = leaf(p, va, &at, &level);
        if (d & kValid) {
            if (level == 2) next = align_down(va, kHuge) + kHuge;
            if (!(d & kAf)) {   // A53 (ARMv8.0): no hardware AF update, an access-flag fault
                wr(at, d | kAf);
                faults_af.inc();
                w.fault_taken = true;
                w.cpu += minor_fault + pte_update;
            } else {
                w.cpu += user_access;
            }
            return VmError::Ok;
        }
        w.fault_taken = true;
        if (level == 3 && is_swap(d)) return swap_in(p, *v, page, d, w);
        // Not present: zero-fill fault. THP first.
        const std::uint64_t base = align_down(va, kHuge);
        if (thp_allowed(*v) && base >= vstart && base + kHuge <= v->end) {
            bool empty = true;
            std::uint64_t old_table = 0;
            if (at && level == 3) {   // a page table exists: a block may replace it only if it is empty
                old_table = at & ~(kPage - 1);
                for (unsigned i = 0; i < 512 && empty; ++i) empty = rd(old_table + 8ull * i) == 0;
            }
            if (empty) {
                if (auto pa = frames.free_pages() >= 512 + kTableReserve ? frames.alloc(FrameAllocator::kMaxOrder) : std::nullopt) {
                    low_check();
                    zero(*pa, kHuge);
                    try {
                        p.pt->map_block(base, *pa, attrs(v->prot));
                    } catch (const OutOfFrames&) {
                        free_frame(*pa, FrameAllocator::kMaxOrder);
                        return VmError::NoMemory;
                    }
                    res_set(p.pid, base, true);
                    if (old_table) free_frame(old_table, 0);
                    faults_huge.inc();
                    zero_fills.inc(512);
                    pages_mapped.inc(512);
                    w.cpu += minor_fault + huge_zero_fill + pte_update;
                    w.faulted += 512;
                    next = base + kHuge;
                    return VmError::Ok;
                }
            }
        }
        auto pa = alloc_page(w);
        if (!pa) return VmError::NoMemory;
        zero(*pa, kPage);
        try {
            p.pt->map_page(page, *pa, attrs(v->prot));
        } catch (const OutOfFrames&) {
            free_frame(*pa, 0);
            return VmError::NoMemory;
        }
        res_set(p.pid, page, true);
        faults_minor.inc();
        zero_fills.inc();
        pages_mapped.inc();
        w.cpu += minor_fault + zero_fill_page + pte_update;
        w.faulted += 1;
        return VmError::Ok;
    }

    VmError fault_range(Process& p, std::uint64_t va, std::uint64_t end, bool write, Work& w) {
        while (va < end) {
            std::uint64_t next = 0;
            const VmError e = fault_page(p, va, write, w, next);
            if (e != VmError::Ok) return e;
            va = next;
        }
        return VmError::Ok;
    }

    // ------------------------------------------------------------ dropping pages
    // Clear every leaf in [va, end) (splitting blocks at the edges), adding
    // the frames to free to `to_free` (pinned pages become orphans instead).
    void drop_range(Process& p, std::uint64_t va, std::uint64_t end, Work& w,
                    std::vector<std::pair<std::uint64_t, unsigned>>& to_free) {
        auto drop_page = [&](std::uint64_t page, std::uint64_t pa) {
            auto it = p.pins.find(page);
            if (it != p.pins.end()) {
                p.orphans.emplace(page, it->second);
                p.pins.erase(it);
            } else {
                to_free.emplace_back(pa, 0);
            }
        };
        while (va < end) {
            std::uint64_t at = 0;
            int level = 0;
            const std::uint64_t d = leaf(p, va, &at, &level);
            const std::uint64_t base = align_down(va, kHuge);
            if (!at || (level == 2 && !has_frame(d))) {
                va = base + kHuge;
                continue;
            }
            if (level == 2) {
                if (va != base || end < base + kHuge) {   // partly in range: split first
                    split_block(p, base, w);
                    continue;
                }
                wr(at, 0);
                res_set(p.pid, base, false);
                w.cpu += pte_update;
                const std::uint64_t pa = d & kAddrMask;
                bool any_pin = false;
                for (auto it = p.pins.lower_bound(base); it != p.pins.end() && it->first < base + kHuge; ++it)
                    any_pin = true;
                if (!any_pin) {
                    to_free.emplace_back(pa, FrameAllocator::kMaxOrder);
                } else {
                    split_frame(pa);
                    for (unsigned i = 0; i < 512; ++i) drop_page(base + i * kPage, pa + i * kPage);
                }
                va = base + kHuge;
                continue;
            }
            if (has_frame(d)) {
                wr(at, 0);
                res_set(p.pid, align_down(va, kPage), false);
                w.cpu += pte_update;
                drop_page(align_down(va, kPage), d & kAddrMask);
            } else if (is_swap(d)) {   // the page is on swap: its slot goes
                wr(at, 0);
                w.cpu += pte_update;
                ssd->free_slot(swap_slot(d));
            }
            va = align_down(va, kPage) + kPage;
        }
    }

    sc_time invalidate(const Vm&, Process& p, std::uint64_t va, std::uint64_t len, sc_time at) {
        return invalidate(p, va, len, at);
    }
    sc_time invalidate(Process& p, std::uint64_t va, std::uint64_t len, sc_time at) {
        bool any = false;
        for (const auto& fn : inv_fns) any = any || static_cast<bool>(fn);
        if (!any) return at;
        invalidations.inc();
        // Chained: each notifier starts when the one before it returned.
        sc_time t = at;
        for (const auto& fn : inv_fns)
            if (fn) t = max_time(t, fn(p.pid, p.asid, va, len, t));
        return t;
    }

    // ------------------------------------------------------------ second part: reclaim and swap
    void low_check() {
        if (low_memory && frames.free_pages() * kPage < low_wm) low_memory();
    }

    // Changes made by a reclaim or migration pass, applied in order by
    // complete(): invalidate (notifier) -> swap writes -> frames freed.
    struct Batch {
        struct Inv {
            int pid;
            std::uint64_t va, len;
        };
        std::vector<Inv> invs;
        std::vector<std::pair<std::uint64_t, std::vector<unsigned char>>> writes;   // slot, bytes
        std::vector<std::uint64_t> frees;                                           // order-0 frames
        std::uint64_t evicted = 0;
        void inv(int pid, std::uint64_t va, std::uint64_t len) {
            if (!invs.empty() && invs.back().pid == pid && invs.back().va + invs.back().len == va)
                invs.back().len += len;
            else
                invs.push_back({pid, va, len});
        }
    };

    sc_time complete(Batch& b, sc_time t) {
        for (const auto& i : b.invs) t = invalidate(procs.at(i.pid), i.va, i.len, t);
        sc_time end = t;
        for (auto& wv : b.writes) end = max_time(end, ssd->write_page(wv.first, wv.second.data(), t));
        for (std::uint64_t pa : b.frees) free_frame(pa, 0);
        b.invs.clear();
        b.writes.clear();
        b.frees.clear();
        return end;
    }

    bool any_pin(const Process& p, std::uint64_t va, std::uint64_t len) const {
        auto it = p.pins.lower_bound(va);
        return it != p.pins.end() && it->first < va + len;
    }

    // Swap one present 4 KiB page out (PTE -> swap entry); false if swap is full.
    bool evict(Process& p, std::uint64_t va, Batch& b, Work& w) {
        std::uint64_t slot_addr = 0;
        int level = 0;
        const std::uint64_t d = leaf(p, va, &slot_addr, &level);
        if (level != 3 || !(d & kValid)) throw std::logic_error("Vm: evicting a page that is not a present PTE");
        auto s = ssd->alloc_slot();
        if (!s) return false;
        std::vector<unsigned char> bytes(kPage);
        access(false, d & kAddrMask, bytes.data(), kPage);
        wr(slot_addr, swap_entry(*s));
        res_set(p.pid, va, false);
        w.cpu += swap_out_page + pte_update;
        b.inv(p.pid, va, kPage);
        b.writes.emplace_back(*s, std::move(bytes));
        b.frees.push_back(d & kAddrMask);
        b.evicted++;
        swap_outs.inc();
        return true;
    }

    // The clock: at most two sweeps over the reclaimable present leaves
    // (`resident` in unlocked, accessible VMAs; a 2 MiB block only when it
    // lies wholly inside one VMA), in (pid, va) order from the hand. AF set:
    // cleared (second chance); AF clear: evicted (a block is split first).
    // Stops when free + pending frees >= target_pages. The walk follows the
    // list as it changes: a page evicted earlier in the pass has left it.
    void scan(std::uint64_t target_pages, Batch& b, Work& w) {
        if (!ssd) return;
        reclaim_scans.inc();
        auto enough = [&] { return frames.free_pages() + b.frees.size() >= target_pages; };
        if (enough() || resident.empty()) return;
        auto it = resident.lower_bound({reclaim_hand.pid, reclaim_hand.va});
        if (it == resident.end()) it = resident.begin();
        const Key start = *it;
        unsigned laps = 0;   // wraps past the end of the list
        while (!enough()) {
            const Key x = *it;
            if (!visit(x, target_pages, b, w)) return;   // swap full
            it = resident.upper_bound(x);
            if (it == resident.end()) {
                if (++laps > 2 || resident.empty()) return;
                it = resident.begin();
            }
            if (laps == 2 && *it >= start) return;   // two whole sweeps done
        }
    }
    // One step of the clock at leaf x; false when swap is full.
    bool visit(const Key& x, std::uint64_t target_pages, Batch& b, Work& w) {
        reclaim_hand = {x.first, x.second + 1};
        Process& p = procs.at(x.first);
        const Vma* v = find_vma(p, x.second);
        if (!v || v->locked || v->prot == Prot::None) return true;   // not on the LRU (unevictable)
        std::uint64_t slot_addr = 0;
        int level = 0;
        const std::uint64_t d = leaf(p, x.second, &slot_addr, &level);
        if (!(d & kValid)) return true;
        if (level == 2 && x.second + kHuge > v->end) return true;   // a block across VMAs: left alone
        pages_scanned.inc();
        w.cpu += scan_pte;
        const std::uint64_t size = level == 2 ? kHuge : kPage;
        if (any_pin(p, x.second, size)) return true;
        if (d & kAf) {   // referenced: second chance
            wr(slot_addr, d & ~kAf);
            w.cpu += pte_update;
            b.inv(p.pid, x.second, size);
            return true;
        }
        if (level == 2) {   // an old huge page: split, then swap out its pages
            try {
                split_block(p, x.second, w);
            } catch (const OutOfFrames&) {
                return true;   // no frame for its page table even in the reserve: leave it
            }
            b.inv(p.pid, x.second, kHuge);
            for (unsigned i = 0; i < 512 && frames.free_pages() + b.frees.size() < target_pages; ++i)
                if (!evict(p, x.second + i * kPage, b, w)) return false;
            return true;
        }
        return evict(p, x.second, b, w);
    }

    // Order-0 frame for a fault; on failure, direct reclaim (charged to the
    // call: its CPU to w.cpu, notifier and SSD waits to w.io) and one retry.
    std::optional<std::uint64_t> alloc_page(Work& w) {
        // A user page never takes the last kTableReserve frames: those stay
        // for page tables (splitting a huge page to reclaim it needs one), as
        // Linux keeps its min watermark for the kernel's own allocations.
        auto pa = frames.free_pages() > kTableReserve ? frames.alloc(0) : std::nullopt;
        if (!pa && ssd) {
            direct_reclaims.inc();
            Batch b;
            scan(frames.free_pages() + direct_reclaim_pages, b, w);
            const sc_time t0 = w.at + w.cpu + w.io;
            w.io += complete(b, t0) - t0;
            if (frames.free_pages() > kTableReserve) pa = frames.alloc(0);
        }
        if (pa) low_check();
        return pa;
    }

    // A major fault: read the page back from its slot, map it, free the slot.
    VmError swap_in(Process& p, const Vma& v, std::uint64_t page, std::uint64_t d, Work& w) {
        if (!ssd) throw std::logic_error("Vm: swap entry without a swap device");
        auto pa = alloc_page(w);
        if (!pa) return VmError::NoMemory;
        std::vector<unsigned char> bytes(kPage);
        const sc_time issue = w.at + w.cpu + w.io;
        w.io += ssd->read_page(swap_slot(d), bytes.data(), issue) - issue;
        access(true, *pa, bytes.data(), kPage);
        try {
            p.pt->map_page(page, *pa, attrs(v.prot));
        } catch (const OutOfFrames&) {
            free_frame(*pa, 0);
            return VmError::NoMemory;
        }
        res_set(p.pid, page, true);
        ssd->free_slot(swap_slot(d));
        faults_major.inc();
        swap_ins.inc();
        pages_mapped.inc();
        w.cpu += major_fault + pte_update;
        w.faulted += 1;
        return VmError::Ok;
    }

    // ------------------------------------------------------------ khugepaged
    // Address of the level-2 descriptor for va (a table must lead to it).
    std::uint64_t l2_slot(const Process& p, std::uint64_t va) {
        std::uint64_t table = p.pt->root();
        for (int l = start_level(16); l < 2; ++l) {
            const std::uint64_t d = rd(table + 8ull * index_of(va, l));
            if (!((d & kValid) && (d & kTableOrPage))) return 0;
            table = d & kAddrMask;
        }
        return table + 8ull * index_of(va, 2);
    }

    // The khugepaged pass in progress (kept between collapse_begin calls, so
    // that a pass interrupted by a collapse window goes on after it).
    struct Pass {
        bool active = false;
        std::size_t left = 0;         // ranges still to visit
        std::uint64_t scanned = 0;    // PTEs examined
        std::uint64_t collapsed = 0;  // collapses completed
        sc_time pending = sc_core::SC_ZERO_TIME;   // scan CPU not yet charged
    } pass;
    // The collapse whose window is open: PMD cleared, block filled, not yet installed.
    struct Open {
        bool open = false;
        int pid = 0;
        std::uint64_t base = 0, block = 0, table = 0;
        Prot prot = Prot::None;
        std::vector<std::uint64_t> old;   // old frames to free at install
        sc_time clear, install;
    } open;

    bool in_open(int pid, std::uint64_t va, std::uint64_t end) const {
        return open.open && open.pid == pid && va < open.base + kHuge && end > open.base;
    }

    // Phase 2: install the block, free the old frames and the page table.
    void collapse_finish() {
        if (!open.open) return;
        Process& p = procs.at(open.pid);
        p.pt->map_block(open.base, open.block, attrs(open.prot));
        res_set(open.pid, open.base, true);
        for (std::uint64_t pa : open.old) free_frame(pa, 0);
        free_frame(open.table, 0);
        collapses.inc();
        if (pass.active) ++pass.collapsed;
        collapse_window.add(to_us(open.install - open.clear));
        ctx.tracer.span(track, "collapse-window", open.clear, open.install);
        last_collapse = {open.clear, open.install};
        open = Open{};
    }

    // A call on [va, end) of p finds the range collapsing: it waits for the
    // collapse (khugepaged holds mmap_lock for writing), which is completed
    // now; the call's work starts at the install time. True if it waited.
    // A migration entry in the range: the caller waits until the migration
    // has finished (__migration_entry_wait), completed now the same way.
    bool settle(Process& p, std::uint64_t va, std::uint64_t end, Work& w) {
        bool waited = false;
        if (in_open(p.pid, va, end)) {
            const sc_time t = open.install;
            collapse_finish();
            if (t > w.at) w.at = t;
            waited = true;
        }
        if (in_migration(p.pid, va, end)) {
            const sc_time t = mig.install;
            migration_finish();
            migration_waits.inc();
            if (t > w.at) w.at = t;
            waited = true;
        }
        return waited;
    }

    // Phase 1: scan from the hand (starting a pass, or continuing the one in
    // progress) up to the next collapse and open its window; or end the pass.
    VmResult collapse_begin(sc_time at) {
        if (open.open) {   // the caller did not end the last window: end it at its time
            at = max_time(at, open.install);
            collapse_finish();
        }
        struct Range {
            int pid;
            std::uint64_t base;
            Prot prot;
        };
        std::vector<Range> ranges;
        for (auto& pp : procs)
            for (const auto& vv : pp.second.vmas) {
                if (!thp_allowed(vv.second) || vv.second.prot == Prot::None) continue;
                for (std::uint64_t b = round_up(vv.first, kHuge); b + kHuge <= vv.second.end; b += kHuge)
                    ranges.push_back({pp.first, b, vv.second.prot});
            }
        const std::size_t n = ranges.size();
        if (!pass.active) {
            pass = Pass{};
            pass.active = true;
            pass.left = n;
        }
        sc_time t = at;
        bool failed = false;
        std::size_t start = 0;
        while (start < n && (ranges[start].pid < khugepaged_hand.pid ||
                             (ranges[start].pid == khugepaged_hand.pid && ranges[start].base < khugepaged_hand.va)))
            ++start;
        if (start == n) start = 0;
        for (std::size_t k = 0; k < n && pass.left > 0 && pass.scanned < pages_to_scan; ++k) {
            const Range& r = ranges[(start + k) % n];
            --pass.left;
            khugepaged_hand = {r.pid, r.base + kHuge};
            Process& p = procs.at(r.pid);
            int level = 0;
            const std::uint64_t table = leaf_slot(p, r.base, level);   // entry 0 of the page table
            if (!table || level == 2) {   // nothing mapped, or a block already
                pass.scanned += 1;
                pass.pending += scan_pte;
                continue;
            }
            pass.scanned += 512;
            pass.pending += scan_pte * 512;
            std::uint64_t none = 0, swp = 0, present = 0, protnone = 0;
            for (unsigned i = 0; i < 512; ++i) {
                const std::uint64_t d = rd(table + 8ull * i);
                if (d & kValid) ++present;
                else if (is_migration(d)) ++protnone;   // being migrated: SCAN_PTE_NON_PRESENT, skipped
                else if (is_swap(d)) ++swp;
                else if (d & kSwProtNone) ++protnone;
                else ++none;
            }
            if (protnone || none > max_ptes_none || swp > max_ptes_swap || present == 0) continue;
            const bool pinned = any_pin(p, r.base, kHuge);
            if (pinned && pins_block_collapse) {
                collapse_skipped_pinned.inc();
                continue;
            }
            auto h = frames.alloc(FrameAllocator::kMaxOrder);
            if (!h) {
                collapse_failed_alloc.inc();
                failed = true;
                break;
            }
            t = cpu.run("khugepaged", t, pass.pending).end;
            pass.pending = sc_core::SC_ZERO_TIME;
            // The PMD is cleared (every PTE of the range gone at once, as
            // pmdp_collapse_flush), cached translations are invalidated, the
            // bytes are copied; the block is installed at the end of the copy
            // by collapse_finish.
            const sc_time t_clear = t;
            const std::uint64_t pmd = l2_slot(p, r.base);
            std::vector<std::uint64_t> entries(512);
            for (unsigned i = 0; i < 512; ++i) entries[i] = rd(table + 8ull * i);
            wr(pmd, 0);
            res_clear(p.pid, r.base, r.base + kHuge);
            t = invalidate(p, r.base, kHuge, t);
            sc_time copy = pte_update * 2, ssd_end = t;
            std::vector<unsigned char> bytes(kPage);
            std::vector<std::uint64_t> old;
            for (unsigned i = 0; i < 512; ++i) {
                const std::uint64_t d = entries[i], va = r.base + i * kPage, dst = *h + i * kPage;
                if (d & kValid) {
                    access(false, d & kAddrMask, bytes.data(), kPage);
                    access(true, dst, bytes.data(), kPage);
                    copy += copy_page;
                    auto pin = p.pins.find(va);
                    if (pin != p.pins.end()) {   // the pin keeps the old frame: a stale pin
                        p.orphans.emplace(va, pin->second);
                        p.pins.erase(pin);
                        stale_pins.inc();
                    } else {
                        old.push_back(d & kAddrMask);
                    }
                } else if (is_swap(d)) {   // __collapse_huge_page_swapin: read it back
                    ssd_end = max_time(ssd_end, ssd->read_page(swap_slot(d), bytes.data(), t));
                    access(true, dst, bytes.data(), kPage);
                    ssd->free_slot(swap_slot(d));
                    swap_ins.inc();
                    copy += copy_page;
                } else {
                    zero(dst, kPage);
                    copy += zero_fill_page;
                }
            }
            const sc_time t_install = max_time(cpu.run("khugepaged", t, copy).end, ssd_end);
            open.open = true;
            open.pid = r.pid;
            open.base = r.base;
            open.block = *h;
            open.table = table & ~(kPage - 1);
            open.prot = r.prot;
            open.old = std::move(old);
            open.clear = t_clear;
            open.install = t_install;
            VmResult res;
            res.done = t_install;
            res.value = pass.collapsed;
            return res;
        }
        khugepaged_scanned.inc(pass.scanned);
        VmResult res;
        res.done = cpu.run("khugepaged", t, pass.pending).end;
        res.value = pass.collapsed;
        res.error = failed ? VmError::NoMemory : VmError::Ok;
        pass = Pass{};
        return res;
    }

    // A whole pass in one call: every window opened and closed at its times.
    VmResult khugepaged(sc_time at) {
        for (;;) {
            VmResult r = collapse_begin(at);
            if (!open.open) return r;
            at = open.install;
            collapse_finish();
        }
    }
    std::pair<sc_time, sc_time> last_collapse;

    // ------------------------------------------------------------ compaction
    // Visit every table frame and leaf of p.
    template <class TableFn, class LeafFn>
    void walk_all(const Process& p, TableFn on_table, LeafFn on_leaf) {
        struct Rec {
            std::uint64_t table, va;
            int level;
        };
        std::vector<Rec> stack{{p.pt->root(), 0, start_level(16)}};
        on_table(p.pt->root());
        while (!stack.empty()) {
            const Rec r = stack.back();
            stack.pop_back();
            for (unsigned i = 0; i < 512; ++i) {
                const std::uint64_t at = r.table + 8ull * i;
                const std::uint64_t d = rd(at);
                if (!d) continue;
                const std::uint64_t va = r.va | (static_cast<std::uint64_t>(i) << index_shift(r.level));
                if (r.level < 3 && (d & kValid) && (d & kTableOrPage)) {
                    on_table(d & kAddrMask);
                    stack.push_back({d & kAddrMask, va, r.level + 1});
                } else {
                    on_leaf(va, at, d, r.level);
                }
            }
        }
    }

    // The migration whose window is open: the pages' PTEs are migration
    // entries, their bytes copied to the new frames; remapped at `install`.
    struct Migration {
        bool open = false;
        struct Page {
            int pid;
            std::uint64_t va, slot, d, dst;   // d: the PTE before; dst: the new frame
        };
        std::vector<Page> pages;
        std::set<Key> keys;                  // (pid, va) of the pages, for the fault path
        std::vector<std::uint64_t> reserved; // free frames of the block held during the window
        sc_time clear, install;
    } mig;

    bool in_migration(int pid, std::uint64_t va, std::uint64_t end) const {
        if (!mig.open) return false;
        auto it = mig.keys.lower_bound({pid, va});
        return it != mig.keys.end() && it->first == pid && it->second < end;
    }
    // The new frame of a page being migrated (0 if va is not one).
    std::uint64_t migration_dst(int pid, std::uint64_t va) const {
        if (!in_migration(pid, align_down(va, kPage), align_down(va, kPage) + kPage)) return 0;
        for (const auto& pg : mig.pages)
            if (pg.pid == pid && pg.va == align_down(va, kPage)) return pg.dst;
        return 0;
    }

    // remove_migration_ptes: every migration entry becomes a PTE to the new
    // frame; the old frames go (their translations were invalidated when
    // the entries were written) and the block's held free frames are let go.
    void migration_finish() {
        if (!mig.open) return;
        for (const auto& pg : mig.pages) {
            wr(pg.slot, (pg.d & ~kAddrMask) | pg.dst);
            res_set(pg.pid, pg.va, (pg.d & kValid) != 0);
            free_frame(pg.d & kAddrMask, 0);
        }
        for (std::uint64_t pa : mig.reserved) frames.free(pa, 0);
        migration_window.add(to_us(mig.install - mig.clear));
        ctx.tracer.span(track, "migration-window", mig.clear, mig.install);
        mig = Migration{};
    }

    // Phase 1 of a compaction run (migrate_pages_batch, mm/migrate.c): pick
    // the block; allocate the new frames; replace every PTE by a migration
    // entry (try_to_migrate); invalidate the cached translations (MMU
    // notifiers: the SMMU); copy the bytes. The window is open until the
    // install time returned in done; migration_finish is phase 2.
    VmResult compact_begin(std::uint64_t max_pages, sc_time at) {
        if (mig.open) {   // the caller did not end the last window: end it at its time
            at = max_time(at, mig.install);
            migration_finish();
        }
        compactions.inc();
        Work w;
        w.at = at;
        struct Movable {
            int pid;
            std::uint64_t va, slot, d;
        };
        std::map<std::uint64_t, std::vector<Movable>> movable;   // by 2 MiB physical block
        std::map<std::uint64_t, bool> unmovable;
        auto mark = [&](std::uint64_t pa) { unmovable[align_down(pa, kHuge)] = true; };
        for (auto& pp : procs) {
            Process& p = pp.second;
            walk_all(
                p, mark, [&](std::uint64_t va, std::uint64_t slot, std::uint64_t d, int level) {
                    w.cpu += scan_pte;
                    if (!has_frame(d)) return;   // swap entries
                    const std::uint64_t pa = d & kAddrMask;
                    if (level == 3 && (d & kValid) && !p.pins.count(va))
                        movable[align_down(pa, kHuge)].push_back({p.pid, va, slot, d});
                    else
                        mark(pa);
                });
            for (const auto& o : p.orphans) mark(o.second.pa);
        }
        if (open.open) {   // a collapse window: its old frames and table are still allocated
            for (std::uint64_t pa : open.old) mark(pa);
            mark(open.table);
        }
        // The block with the fewest movable pages, no unmovable one, not more
        // than max_pages (ties: the lowest address).
        std::uint64_t best = ~0ull;
        std::size_t best_n = 0;
        for (const auto& kv : movable)
            if (!unmovable.count(kv.first) && kv.second.size() <= max_pages &&
                (best == ~0ull || kv.second.size() < best_n)) {
                best = kv.first;
                best_n = kv.second.size();
            }
        VmResult res;
        res.error = VmError::NoMemory;
        if (best == ~0ull) {
            compactions_failed.inc();
            res.done = cpu.run("kcompactd", at, w.cpu).end;
            return res;
        }
        // The new frames first (free frames inside the block are held, so
        // that no copy lands there), then the PTEs replaced by migration
        // entries at the end of the scan.
        mig_blocks_before = frames.free_blocks(FrameAllocator::kMaxOrder);
        Migration m;
        for (const Movable& mv : movable[best]) {
            std::optional<std::uint64_t> dst;
            while ((dst = frames.alloc(0)) && align_down(*dst, kHuge) == best) m.reserved.push_back(*dst);
            if (!dst) break;
            m.pages.push_back({mv.pid, mv.va, mv.slot, mv.d, *dst});
            m.keys.insert({mv.pid, mv.va});
        }
        const sc_time t_clear = cpu.run("kcompactd", at, w.cpu).end;
        Batch b;
        for (const auto& pg : m.pages) {
            wr(pg.slot, (pg.d & kAddrMask) | kSwMigration);
            res_set(pg.pid, pg.va, false);
            b.inv(pg.pid, pg.va, kPage);
        }
        sc_time t = cpu.run("kcompactd", t_clear, pte_update * static_cast<double>(m.pages.size())).end;
        for (const auto& i : b.invs) t = invalidate(procs.at(i.pid), i.va, i.len, t);   // before the copy
        std::vector<unsigned char> bytes(kPage);
        for (const auto& pg : m.pages) {
            access(false, pg.d & kAddrMask, bytes.data(), kPage);
            access(true, pg.dst, bytes.data(), kPage);
        }
        const sc_time t_install =
            cpu.run("kcompactd", t, (copy_page + pte_update) * static_cast<double>(m.pages.size())).end;
        pages_migrated.inc(m.pages.size());
        res.value = m.pages.size();
        res.done = t_install;
        m.open = true;
        m.clear = t_clear;
        m.install = t_install;
        mig = std::move(m);
        return res;
    }
    std::uint64_t mig_blocks_before = 0;   // free 2 MiB blocks when the run began

    // Phase 2 by the caller at the install time: the pages remapped, the
    // block given back. Ok if a 2 MiB block was freed.
    VmResult compact_end(sc_time at) {
        VmResult r;
        r.done = at;
        r.error = VmError::NoMemory;
        if (!mig.open) return r;
        r.done = max_time(at, mig.install);
        r.value = mig.pages.size();
        migration_finish();
        if (frames.free_blocks(FrameAllocator::kMaxOrder) > mig_blocks_before)
            r.error = VmError::Ok;
        else
            compactions_failed.inc();
        return r;
    }

    // Both phases in one call.
    VmResult compact(std::uint64_t max_pages, sc_time at) {
        VmResult r = compact_begin(max_pages, at);
        if (!mig.open) return r;
        const VmResult e = compact_end(r.done);
        r.error = e.error;
        return r;
    }

    // The common start of a system call on a range: a work record charged
    // the syscall cost, the process and the page range. `aligned`: va must
    // be page aligned and the length is rounded up (munmap, mprotect,
    // madvise); otherwise the range is widened to whole pages (mlock).
    // `covered`: every page must be mapped. Returns the error to answer.
    struct RangeCall {
        Work w;
        Process* p = nullptr;
        std::uint64_t va = 0, end = 0;
    };
    VmError begin_range(int pid, std::uint64_t va, std::uint64_t len, sc_time at, bool aligned, bool must_cover,
                        RangeCall& c) {
        c.w.at = at;
        c.w.cpu = syscall;
        c.p = proc(pid);
        if (!c.p || len == 0 || va + len < va || (aligned && (va & (kPage - 1)))) return VmError::Invalid;
        c.va = aligned ? va : align_down(va, kPage);
        c.end = aligned ? va + round_up(len, kPage) : round_up(va + len, kPage);
        if (must_cover && !covered(*c.p, c.va, c.end)) return VmError::NoMemory;
        return VmError::Ok;
    }

    VmResult finish(const char* activity, const Work& w, sc_time at, VmError e, std::uint64_t value = 0) {
        VmResult r;
        r.error = e;
        r.value = value;
        r.done = cpu.run(activity, max_time(at, w.at), w.cpu).end + w.io;   // w.at: after a collapse wait
        return r;
    }
};

VmParams::VmParams()
    : set("vm", "Linux-like virtual memory of one node's kernel (mm)"),
      thp(set.choice("thp", "always", {"always", "madvise", "never"},
                     "transparent huge pages at fault time: /sys/kernel/mm/transparent_hugepage/enabled "
                     "(Kconfig default always, distributions often madvise; transhuge.rst)")),
      copy_rate(set.rate("copy-rate", "2GB/s",
                         "kernel memcpy into user pages (NetVM receive copies; *estimate* for a 1.5 GHz A53)")
                    .range("1Kbps", "10Tbps")),
      memlock_limit(set.size("memlock-limit", "8MiB",
                             "RLIMIT_MEMLOCK per process, for mlock and pins together: 8 MiB from Linux 5.16, "
                             "64 KiB up to 5.15 (include/uapi/linux/resource.h history)")
                        .range("0B", "1TiB")),
      minor_fault(set.time("minor-fault", "2us",
                           "fault entry, VMA lookup, page allocation and exit, without the clearing: *estimate*: "
                           "about 1 us on a fast x86 core, 3.5-5.7 us measured in an RDMA fault path (NP-RDMA paper; "
                           "docs/references.md); an in-order 1.5 GHz Cortex-A53 is about half as fast as such a core")
                      .range("0ps", "1ms")),
      zero_fill_page(set.time("zero-fill-page", "1us",
                              "clearing one 4 KiB page: *estimate* (4 KiB at about 4 GB/s of A53 store bandwidth, DC ZVA)")
                         .range("0ps", "1ms")),
      huge_zero_fill(set.time("huge-zero-fill", "500us",
                              "clearing one 2 MiB page: *estimate* (2 MiB at about 4 GB/s, as zero-fill-page)")
                         .range("0ps", "100ms")),
      syscall(set.time("syscall", "500ns", "system call entry and exit: *estimate* (about 750 cycles at 1.5 GHz)")
                  .range("0ps", "1ms")),
      pte_update(set.time("pte-update", "20ns",
                          "writing or clearing one page-table descriptor (plus barrier): *estimate*")
                     .range("0ps", "1ms")),
      pin_call(set.time("pin-call", "20us",
                        "fixed cost of one pin/unpin (registration) call: *estimate* from public registration "
                        "timings, tens of us per call (docs/references.md)")
                   .range("0ps", "10ms")),
      pin_page(set.time("pin-page", "500ns",
                        "per 4 KiB page pinned or unpinned: *estimate*, 0.3-0.7 us per page in bulk registration "
                        "(docs/references.md)")
                   .range("0ps", "1ms")),
      user_access(set.time("user-access", "100ns",
                           "a CPU access to a present page (about one DRAM access): *estimate*")
                      .range("0ps", "1ms")),
      low_watermark(set.size("low-watermark", "20MiB",
                             "free memory below which kswapd wakes: *estimate* from Linux's watermarks (min_free_kbytes = "
                             "sqrt(16 x lowmem KiB) = 16 MiB for 16 GiB, low = min x 5/4; mm/page_alloc.c)")
                        .range("0B", "1TiB")),
      high_watermark(set.size("high-watermark", "24MiB",
                              "free memory kswapd reclaims up to: *estimate*, high = min x 3/2 (mm/page_alloc.c); "
                              "must be >= low-watermark")
                         .range("0B", "1TiB")),
      direct_reclaim_pages(set.integer("direct-reclaim-pages", "32",
                                       "pages a failed fault allocation reclaims synchronously before retrying: SWAP_CLUSTER_MAX "
                                       "(include/linux/swap.h)")
                               .range("1", "1048576")),
      swap_out_page(set.time("swap-out-page", "2us",
                             "CPU per page swapped out (unmap, swap cache, bio set-up), besides the SSD write: *estimate*")
                        .range("0ps", "1ms")),
      major_fault(set.time("major-fault", "10us",
                           "CPU of a fault on a swapped-out page besides the SSD read: *estimate* so that with "
                           "ssd.read-latency 50us a major fault is about 60 us (NP-RDMA paper; docs/references.md)")
                      .range("0ps", "10ms")),
      scan_pte(set.time("scan-pte", "10ns",
                        "examining one PTE in reclaim's clock, khugepaged's scan or compaction's walk: *estimate*")
                   .range("0ps", "1ms")),
      copy_page(set.time("copy-page", "2us",
                         "copying one 4 KiB page (collapse, migration): *estimate* (4 KiB read + written at about 4 GB/s)")
                    .range("0ps", "1ms")),
      pins_block_thp_collapse(set.boolean("pins-block-thp-collapse", "true",
                                          "khugepaged skips a range with a pinned page (FOLL_LONGTERM pins, modern mm/khugepaged.c); "
                                          "false: collapsed anyway, the pinned old frames stay allocated (stale pins), as with the "
                                          "plain get_user_pages refcounts of older kernels (docs/references.md)")),
      kswapd_interval(set.time("kswapd-interval", "100ms",
                               "VmDaemons: kswapd also checks the watermark this often besides wake-ups: *estimate* (Linux "
                               "kswapd only sleeps until woken)")
                          .range("1us", "1000s")),
      compact_interval(set.time("compact-interval", "0s",
                                "VmDaemons: kcompactd runs compaction this often; 0 = off (*estimate*: proactive compaction "
                                "is off by default in Linux, vm.compaction_proactiveness aside)")
                           .range("0s", "1000s")),
      compact_pages(set.integer("compact-pages", "512",
                                "VmDaemons: pages one compaction run may migrate (*estimate*: one 2 MiB block)")
                        .range("1", "1048576")) {}

KhugepagedParams::KhugepagedParams()
    : set("khugepaged", "khugepaged: collapsing 4 KiB pages into transparent huge pages (mm/khugepaged.c)"),
      pages_to_scan(set.integer("pages-to-scan", "4096", "PTEs scanned per pass: khugepaged_pages_to_scan default (mm/khugepaged.c)")
                        .range("1", "1073741824")),
      scan_sleep(set.time("scan-sleep", "10s",
                          "VmDaemons: sleep between passes: scan_sleep_millisecs 10000 (mm/khugepaged.c)")
                     .range("1us", "10000s")),
      alloc_sleep(set.time("alloc-sleep", "60s",
                           "VmDaemons: sleep after a failed huge-page allocation: alloc_sleep_millisecs 60000 (mm/khugepaged.c)")
                      .range("1us", "10000s")),
      max_ptes_none(set.integer("max-ptes-none", "511",
                                "unmapped PTEs a range may have and still be collapsed: max_ptes_none = HPAGE_PMD_NR - 1 "
                                "(mm/khugepaged.c)")
                        .range("0", "511")),
      max_ptes_swap(set.integer("max-ptes-swap", "64",
                                "swapped-out PTEs a range may have (read back during the collapse): max_ptes_swap = "
                                "HPAGE_PMD_NR / 8 (mm/khugepaged.c)")
                        .range("0", "512")) {}

void Vm::declare_params(ParamRegistry& reg) {
    reg.add(params_of<VmParams>().set);
    reg.add(params_of<KhugepagedParams>().set);
}

void Vm::declare_metrics(MetricRegistry& reg) {
    reg.sum_counters("faults_minor",
                     "Zero-fill page faults served by the VMs, 4 KiB (`faults_minor`) and 2 MiB THP "
                     "(`faults_huge`).",
                     {"faults_minor", "faults_huge"});
    reg.sum_counters("faults_major",
                     "Faults on swapped-out pages (read back from the SSD).",
                     {"faults_major"});
    reg.sum_counters("pages_pinned",
                     "4 KiB page pins taken by the VMs.",
                     {"pages_pinned"});
    reg.sum_counters("swap_outs",
                     "4 KiB pages written to swap by reclaim.",
                     {"swap_outs"});
    reg.sum_counters("swap_ins",
                     "4 KiB pages read back from swap.",
                     {"swap_ins"});
    reg.sum_counters("thp_collapses",
                     "2 MiB ranges collapsed by khugepaged.",
                     {"collapses"});
    reg.sum_counters("thp_splits",
                     "2 MiB mappings split into 4 KiB pages.",
                     {"huge_splits"});
    reg.sum_counters("invalidations",
                     "MMU-notifier invalidate calls made by the VMs (`*.vm.invalidations`).",
                     {"vm.invalidations"});
}

void Vm::set_invalidate(InvalidateFn fn) {
    if (impl_->inv_fns.empty())
        impl_->inv_fns.push_back(std::move(fn));
    else
        impl_->inv_fns.front() = std::move(fn);
}
void Vm::add_invalidate(InvalidateFn fn) {
    if (impl_->inv_fns.empty()) impl_->inv_fns.emplace_back();   // the first slot stays set_invalidate's
    impl_->inv_fns.push_back(std::move(fn));
}
void Vm::set_swap(Ssd& ssd) { impl_->ssd = &ssd; }
void Vm::set_low_memory(std::function<void()> fn) { impl_->low_memory = std::move(fn); }
std::uint64_t Vm::low_watermark() const { return impl_->low_wm; }
std::uint64_t Vm::high_watermark() const { return impl_->high_wm; }

bool Vm::swapped(int pid, std::uint64_t va) const {
    auto it = impl_->procs.find(pid);
    if (it == impl_->procs.end() || (va >> 48) != 0) return false;
    int level = 0;
    return is_swap(impl_->leaf(it->second, va, nullptr, &level)) && level == 3;
}

VmResult Vm::reclaim(std::uint64_t target_free_bytes, sc_time at) {
    Impl& m = *impl_;
    Impl::Work w;
    w.at = at;
    Impl::Batch b;
    m.scan(round_up(target_free_bytes, kPage) / kPage, b, w);
    VmResult r;
    r.done = m.complete(b, m.cpu.run("kswapd", at, w.cpu).end);
    r.value = b.evicted;
    r.error = free_bytes() >= target_free_bytes ? VmError::Ok : VmError::NoMemory;
    return r;
}

VmResult Vm::khugepaged_scan(sc_time at) { return impl_->khugepaged(at); }

VmResult Vm::collapse_begin(sc_time at) { return impl_->collapse_begin(at); }

VmResult Vm::collapse_end(sc_time at) {
    Impl& m = *impl_;
    VmResult r;
    r.done = at;
    if (!m.open.open) return r;
    r.done = max_time(at, m.open.install);
    r.value = 1;
    m.collapse_finish();
    return r;
}

VmCollapse Vm::collapsing() const {
    const Impl& m = *impl_;
    VmCollapse c;
    if (!m.open.open) return c;
    c.open = true;
    c.pid = m.open.pid;
    c.va = m.open.base;
    c.clear = m.open.clear;
    c.install = m.open.install;
    return c;
}

bool Vm::poke_user(int pid, std::uint64_t va, const unsigned char* data, std::uint64_t len) {
    return impl_->poke(pid, va, data, len);
}

bool Vm::peek_user(int pid, std::uint64_t va, unsigned char* data, std::uint64_t len) const {
    return impl_->peek(pid, va, data, len);
}

VmResult Vm::compact(std::uint64_t max_pages, sc_time at) { return impl_->compact(max_pages, at); }
VmResult Vm::compact_begin(std::uint64_t max_pages, sc_time at) { return impl_->compact_begin(max_pages, at); }
VmResult Vm::compact_end(sc_time at) { return impl_->compact_end(at); }
bool Vm::migrating(int pid, std::uint64_t va) const {
    const std::uint64_t page = align_down(va, kPage);
    return impl_->in_migration(pid, page, page + kPage);
}
VmMigration Vm::migrating() const {
    const Impl& m = *impl_;
    VmMigration r;
    r.open = m.mig.open;
    r.pages = m.mig.pages.size();
    r.clear = m.mig.clear;
    r.install = m.mig.install;
    return r;
}

Vm::Vm(const SimContext& ctx, const std::string& prefix, const std::string& group,
       tlm::tlm_fw_transport_if<>& memory, FrameAllocator& frames, CpuCores& cpu)
    : impl_(std::make_shared<Impl>(ctx, prefix, group, memory, frames, cpu)), frames_(frames) {}

int Vm::create_process(const std::string& name) {
    Impl& m = *impl_;
    const int pid = m.procs.empty() ? 1 : m.procs.rbegin()->first + 1;
    if (pid > 0xffff) throw std::runtime_error("Vm: out of ASIDs");
    Impl::Process p;
    p.name = name;
    p.pid = pid;
    p.asid = static_cast<std::uint16_t>(pid);
    Impl* mp = impl_.get();
    try {
        p.pt = std::make_unique<PageTableWriter>(PageTableWriter::over(m.mem, [mp] { return mp->alloc_table(); }, 16));
    } catch (const OutOfFrames&) {
        throw std::runtime_error("Vm: no frame for the page-table root of process '" + name + "'");
    }
    m.procs.emplace(pid, std::move(p));
    return pid;
}

std::uint64_t Vm::root(int pid) const {
    auto it = impl_->procs.find(pid);
    if (it == impl_->procs.end()) throw std::invalid_argument("Vm: no process " + std::to_string(pid));
    return it->second.pt->root();
}

std::uint16_t Vm::asid(int pid) const {
    auto it = impl_->procs.find(pid);
    if (it == impl_->procs.end()) throw std::invalid_argument("Vm: no process " + std::to_string(pid));
    return it->second.asid;
}

VmResult Vm::mmap(int pid, std::uint64_t len, Prot prot, bool populate, sc_time at) {
    Impl& m = *impl_;
    Impl::Work w;
    w.at = at;
    w.cpu = m.syscall;
    Impl::Process* p = m.proc(pid);
    if (!p || len == 0 || len > kMmapBase) return m.finish("syscall", w, at, VmError::Invalid);
    m.mmaps.inc();
    len = round_up(len, kPage);
    const std::uint64_t align = len >= kHuge ? kHuge : kPage;
    // Top-down: the highest gap below kMmapBase that fits.
    std::uint64_t hi = kMmapBase, addr = 0;
    bool found = false;
    for (auto it = p->vmas.rbegin();; ++it) {
        const std::uint64_t lo = it == p->vmas.rend() ? kMmapMin : it->second.end;
        if (hi >= len) {
            const std::uint64_t a = align_down(hi - len, align);
            if (a >= lo && a >= kMmapMin) {
                addr = a;
                found = true;
                break;
            }
        }
        if (it == p->vmas.rend()) break;
        hi = std::min(hi, it->first);
    }
    if (!found) return m.finish("syscall", w, at, VmError::NoMemory);
    p->vmas.emplace(addr, Vma{addr + len, prot});
    VmError e = VmError::Ok;
    if (populate && prot != Prot::None) e = m.fault_range(*p, addr, addr + len, can_write(prot), w);
    // MAP_POPULATE is best effort: the mapping stands even if populating failed.
    (void)e;
    return m.finish("syscall", w, at, VmError::Ok, addr);
}

VmResult Vm::munmap(int pid, std::uint64_t va, std::uint64_t len, sc_time at) {
    Impl& m = *impl_;
    Impl::RangeCall c;
    if (const VmError e = m.begin_range(pid, va, len, at, true, false, c); e != VmError::Ok)
        return m.finish("syscall", c.w, at, e);
    Impl::Work& w = c.w;
    Impl::Process* p = c.p;
    const std::uint64_t end = c.end;
    len = end - va;
    m.munmaps.inc();
    m.settle(*p, va, end, w);   // a collapse in the range is completed first
    m.split_vma_at(*p, va);
    m.split_vma_at(*p, end);
    for (auto it = p->vmas.lower_bound(va); it != p->vmas.end() && it->first < end;) it = p->vmas.erase(it);
    std::vector<std::pair<std::uint64_t, unsigned>> to_free;
    m.drop_range(*p, va, end, w, to_free);
    VmResult r = m.finish("syscall", w, at, VmError::Ok);
    r.done = m.invalidate(*this, *p, va, len, r.done);   // before the frames can be reused
    for (const auto& f : to_free) m.free_frame(f.first, f.second);
    return r;
}

VmResult Vm::mprotect(int pid, std::uint64_t va, std::uint64_t len, Prot prot, sc_time at) {
    Impl& m = *impl_;
    Impl::RangeCall c;
    if (const VmError e = m.begin_range(pid, va, len, at, true, true, c); e != VmError::Ok)
        return m.finish("syscall", c.w, at, e);
    Impl::Work& w = c.w;
    Impl::Process* p = c.p;
    const std::uint64_t end = c.end;
    len = end - va;
    m.mprotects.inc();
    m.settle(*p, va, end, w);   // a collapse in the range is completed first
    m.split_vma_at(*p, va);
    m.split_vma_at(*p, end);
    for (auto it = p->vmas.lower_bound(va); it != p->vmas.end() && it->first < end; ++it) it->second.prot = prot;
    std::uint64_t a = va;
    while (a < end) {
        std::uint64_t slot = 0;
        int level = 0;
        const std::uint64_t d = m.leaf(*p, a, &slot, &level);
        const std::uint64_t base = align_down(a, kHuge);
        if (!slot || (level == 2 && !has_frame(d))) {
            a = base + kHuge;
            continue;
        }
        if (level == 2 && (a != base || end < base + kHuge)) {
            m.split_block(*p, base, w);
            continue;
        }
        if (has_frame(d)) {
            std::uint64_t nd;
            if (prot == Prot::None) {
                nd = (d & ~kValid) | kSwProtNone;
            } else {
                nd = (d | kValid) & ~kSwProtNone;
                nd = can_write(prot) ? (nd & ~kApReadOnly) : (nd | kApReadOnly);
            }
            if (nd != d) {
                m.wr(slot, nd);
                m.res_set(p->pid, level == 2 ? base : align_down(a, kPage), (nd & kValid) != 0);
                w.cpu += m.pte_update;
            }
        }
        a = level == 2 ? base + kHuge : align_down(a, kPage) + kPage;
    }
    VmResult r = m.finish("syscall", w, at, VmError::Ok);
    r.done = m.invalidate(*this, *p, va, len, r.done);
    return r;
}

VmResult Vm::madvise(int pid, std::uint64_t va, std::uint64_t len, Advice advice, sc_time at) {
    Impl& m = *impl_;
    Impl::RangeCall c;
    if (const VmError e = m.begin_range(pid, va, len, at, true, true, c); e != VmError::Ok)
        return m.finish("syscall", c.w, at, e);
    Impl::Work& w = c.w;
    Impl::Process* p = c.p;
    const std::uint64_t end = c.end;
    len = end - va;
    m.madvises.inc();
    m.settle(*p, va, end, w);   // a collapse in the range is completed first
    switch (advice) {
        case Advice::HugePage:
        case Advice::NoHugePage: {
            m.split_vma_at(*p, va);
            m.split_vma_at(*p, end);
            for (auto it = p->vmas.lower_bound(va); it != p->vmas.end() && it->first < end; ++it)
                it->second.advice = advice == Advice::HugePage ? HugeAdvice::Huge : HugeAdvice::NoHuge;
            return m.finish("syscall", w, at, VmError::Ok);
        }
        case Advice::PopulateWrite: {
            const VmError e = m.fault_range(*p, va, end, true, w);
            return m.finish("syscall", w, at, e, w.faulted);
        }
        case Advice::DontNeed: {
            for (std::uint64_t a = va; a < end;) {   // MADV_DONTNEED on VM_LOCKED: EINVAL
                Vma* v = m.find_vma(*p, a);
                if (v->locked) return m.finish("syscall", w, at, VmError::Invalid);
                a = v->end;
            }
            std::vector<std::pair<std::uint64_t, unsigned>> to_free;
            m.drop_range(*p, va, end, w, to_free);
            VmResult r = m.finish("syscall", w, at, VmError::Ok);
            r.done = m.invalidate(*this, *p, va, len, r.done);
            for (const auto& f : to_free) m.free_frame(f.first, f.second);
            return r;
        }
    }
    return m.finish("syscall", w, at, VmError::Invalid);
}

VmResult Vm::mlock(int pid, std::uint64_t va, std::uint64_t len, sc_time at) {
    Impl& m = *impl_;
    Impl::RangeCall c;
    if (const VmError e = m.begin_range(pid, va, len, at, false, true, c); e != VmError::Ok)
        return m.finish("syscall", c.w, at, e);
    Impl::Work& w = c.w;
    Impl::Process* p = c.p;
    const std::uint64_t end = c.end;
    va = c.va;
    m.mlocks.inc();
    std::uint64_t fresh = 0;
    for (std::uint64_t a = va; a < end;) {
        Vma* v = m.find_vma(*p, a);
        const std::uint64_t e = std::min(end, v->end);
        if (!v->locked) fresh += e - a;
        a = e;
    }
    if (m.locked_bytes(*p) + m.pinned(*p) + fresh > m.memlock_limit) {
        m.memlock_refusals.inc();
        return m.finish("syscall", w, at, VmError::MemlockLimit);
    }
    m.split_vma_at(*p, va);
    m.split_vma_at(*p, end);
    VmError err = VmError::Ok;
    for (auto it = p->vmas.lower_bound(va); it != p->vmas.end() && it->first < end; ++it) {
        it->second.locked = true;
        if (err == VmError::Ok && it->second.prot != Prot::None)
            err = m.fault_range(*p, it->first, it->second.end, can_write(it->second.prot), w);
    }
    return m.finish("syscall", w, at, err, w.faulted);
}

VmResult Vm::munlock(int pid, std::uint64_t va, std::uint64_t len, sc_time at) {
    Impl& m = *impl_;
    Impl::RangeCall c;
    if (const VmError e = m.begin_range(pid, va, len, at, false, true, c); e != VmError::Ok)
        return m.finish("syscall", c.w, at, e);
    Impl::Work& w = c.w;
    Impl::Process* p = c.p;
    const std::uint64_t end = c.end;
    va = c.va;
    m.split_vma_at(*p, va);
    m.split_vma_at(*p, end);
    for (auto it = p->vmas.lower_bound(va); it != p->vmas.end() && it->first < end; ++it) it->second.locked = false;
    return m.finish("syscall", w, at, VmError::Ok);
}

VmResult Vm::touch(int pid, std::uint64_t va, bool write, sc_time at) {
    Impl& m = *impl_;
    Impl::Work w;
    w.at = at;
    Impl::Process* p = m.proc(pid);
    if (!p) return m.finish("page-fault", w, at, VmError::Invalid);
    std::uint64_t next = 0;
    const VmError e = m.fault_page(*p, va, write, w, next);
    VmResult r = m.finish(w.fault_taken ? "page-fault" : "user-access", w, at, e, w.faulted);
    if (w.fault_taken) m.fault_time.add(to_us(r.done - at));
    return r;
}

VmResult Vm::fault_in(int pid, std::uint64_t va, std::uint64_t len, bool write, sc_time at) {
    Impl& m = *impl_;
    Impl::Work w;
    w.at = at;
    Impl::Process* p = m.proc(pid);
    if (!p || len == 0 || va + len < va) return m.finish("page-fault", w, at, VmError::Invalid);
    const VmError e = m.fault_range(*p, align_down(va, kPage), va + len, write, w);
    VmResult r = m.finish("page-fault", w, at, e, w.faulted);
    if (w.fault_taken) m.fault_time.add(to_us(r.done - at));
    return r;
}

VmResult Vm::pin(int pid, std::uint64_t va, std::uint64_t len, sc_time at) {
    Impl& m = *impl_;
    Impl::Work w;
    w.at = at;
    w.cpu = m.pin_call;
    Impl::Process* p = m.proc(pid);
    if (!p || len == 0 || va + len < va) return m.finish("pin", w, at, VmError::Invalid);
    const std::uint64_t start = align_down(va, kPage), end = round_up(va + len, kPage);
    if (!m.covered(*p, start, end)) return m.finish("pin", w, at, VmError::NoMemory);
    const std::uint64_t pages = (end - start) / kPage;
    if (m.locked_bytes(*p) + m.pinned(*p) + pages * kPage > m.memlock_limit) {
        m.memlock_refusals.inc();
        return m.finish("pin", w, at, VmError::MemlockLimit);
    }
    const VmError e = m.fault_range(*p, start, end, true, w);
    if (e != VmError::Ok) return m.finish("pin", w, at, e);
    // A huge page pinned only in part is split, so that its unpinned pages
    // stay movable and reclaimable (the pins are per 4 KiB page).
    for (const std::uint64_t edge : {start, end}) {
        const std::uint64_t base = align_down(edge, kHuge);
        if (edge == base) continue;
        std::uint64_t slot = 0;
        int level = 0;
        const std::uint64_t d = m.leaf(*p, edge == end ? end - 1 : edge, &slot, &level);
        if (slot && level == 2 && has_frame(d)) {
            try {
                m.split_block(*p, base, w);
            } catch (const OutOfFrames&) {
                return m.finish("pin", w, at, VmError::NoMemory);
            }
        }
    }
    for (std::uint64_t a = start; a < end; a += kPage) {
        std::uint64_t pa = 0;
        translate(pid, a, pa);
        PinRec& r = p->pins[a];
        r.count++;
        r.pa = pa;
    }
    m.pages_pinned.inc(pages);
    w.cpu += m.pin_page * static_cast<double>(pages);
    return m.finish("pin", w, at, VmError::Ok, pages);
}

VmResult Vm::unpin(int pid, std::uint64_t va, std::uint64_t len, sc_time at) {
    Impl& m = *impl_;
    Impl::Work w;
    w.at = at;
    w.cpu = m.pin_call;
    Impl::Process* p = m.proc(pid);
    if (!p || len == 0 || va + len < va) return m.finish("pin", w, at, VmError::Invalid);
    const std::uint64_t start = align_down(va, kPage), end = round_up(va + len, kPage);
    for (std::uint64_t a = start; a < end; a += kPage)   // every page must be pinned: else nothing changes
        if (!p->pins.count(a) && !p->orphans.count(a)) return m.finish("pin", w, at, VmError::Invalid);
    std::uint64_t pages = 0;
    for (std::uint64_t a = start; a < end; a += kPage, ++pages) {
        auto it = p->pins.find(a);
        if (it != p->pins.end()) {
            if (--it->second.count == 0) p->pins.erase(it);
            continue;
        }
        auto o = p->orphans.find(a);
        if (--o->second.count == 0) {
            m.free_frame(o->second.pa, 0);   // the last pin of an unmapped page: its frame goes
            p->orphans.erase(o);
        }
    }
    w.cpu += m.pin_page * static_cast<double>(pages);
    return m.finish("pin", w, at, VmError::Ok, pages);
}

unsigned Vm::pin_count(int pid, std::uint64_t va) const {
    auto it = impl_->procs.find(pid);
    if (it == impl_->procs.end()) return 0;
    const std::uint64_t page = align_down(va, kPage);
    unsigned n = 0;
    auto l = it->second.pins.find(page);
    if (l != it->second.pins.end()) n += l->second.count;
    auto range = it->second.orphans.equal_range(page);
    for (auto o = range.first; o != range.second; ++o) n += o->second.count;
    return n;
}

std::uint64_t Vm::pinned_bytes(int pid) const {
    auto it = impl_->procs.find(pid);
    return it == impl_->procs.end() ? 0 : impl_->pinned(it->second);
}

bool Vm::translate(int pid, std::uint64_t va, std::uint64_t& pa) const {
    auto it = impl_->procs.find(pid);
    return it != impl_->procs.end() && impl_->translate(it->second, va, pa);
}

bool Vm::present(int pid, std::uint64_t va) const {
    std::uint64_t pa = 0;
    return translate(pid, va, pa);
}

bool Vm::write_user(int pid, std::uint64_t va, const unsigned char* data, std::uint64_t len) {
    return impl_->user_copy(pid, va, const_cast<unsigned char*>(data), len, true);
}

bool Vm::read_user(int pid, std::uint64_t va, unsigned char* data, std::uint64_t len) {
    return impl_->user_copy(pid, va, data, len, false);
}

}  // namespace vrdmasim
