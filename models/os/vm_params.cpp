// The Vm's parameters: their declaration (Vm::declare_params, sections "vm"
// and "khugepaged", each with its source) and their one read (read_vm_params).
#include "models/os/vm_params.hpp"

#include "models/os/vm.hpp"

namespace vrdmasim {

VmParams read_vm_params(const Config& c) {
    VmParams p;
    p.thp = c.string("vm.thp");
    p.memlock_limit = c.size("vm.memlock-limit");
    p.minor_fault = c.time("vm.minor-fault");
    p.zero_fill_page = c.time("vm.zero-fill-page");
    p.huge_zero_fill = c.time("vm.huge-zero-fill");
    p.syscall = c.time("vm.syscall");
    p.pte_update = c.time("vm.pte-update");
    p.pin_call = c.time("vm.pin-call");
    p.pin_page = c.time("vm.pin-page");
    p.user_access = c.time("vm.user-access");
    p.low_wm = c.size("vm.low-watermark");
    p.high_wm = c.size("vm.high-watermark");
    p.direct_reclaim_pages = static_cast<std::uint64_t>(c.integer("vm.direct-reclaim-pages"));
    p.pages_to_scan = static_cast<std::uint64_t>(c.integer("khugepaged.pages-to-scan"));
    p.max_ptes_none = static_cast<std::uint64_t>(c.integer("khugepaged.max-ptes-none"));
    p.max_ptes_swap = static_cast<std::uint64_t>(c.integer("khugepaged.max-ptes-swap"));
    p.pins_block_collapse = c.boolean("vm.pins-block-thp-collapse");
    p.swap_out_page = c.time("vm.swap-out-page");
    p.major_fault = c.time("vm.major-fault");
    p.scan_pte = c.time("vm.scan-pte");
    p.copy_page = c.time("vm.copy-page");
    p.kswapd_interval = c.time("vm.kswapd-interval");
    p.scan_sleep = c.time("khugepaged.scan-sleep");
    p.alloc_sleep = c.time("khugepaged.alloc-sleep");
    p.compact_interval = c.time("vm.compact-interval");
    p.compact_pages = static_cast<std::uint64_t>(c.integer("vm.compact-pages"));
    if (p.high_wm < p.low_wm)
        throw ConfigError("vm.high-watermark (" + c.text("vm.high-watermark") +
                          ") must not be below vm.low-watermark (" + c.text("vm.low-watermark") + ")");
    return p;
}

void Vm::declare_params(ParamRegistry& reg) {
    reg.section("vm", "Linux-like virtual memory of one node's kernel (mm)")
        .choice("thp", "always", {"always", "madvise", "never"},
                "transparent huge pages at fault time: /sys/kernel/mm/transparent_hugepage/enabled "
                "(Kconfig default always, distributions often madvise; transhuge.rst)")
        .rate("copy-rate", "2GB/s",
              "kernel memcpy into user pages (NetVM receive copies; *estimate* for a 1.5 GHz A53)")
        .range("1Kbps", "10Tbps")
        .size("memlock-limit", "8MiB",
              "RLIMIT_MEMLOCK per process, for mlock and pins together: 8 MiB from Linux 5.16, "
              "64 KiB up to 5.15 (include/uapi/linux/resource.h history)")
        .range("0B", "1TiB")
        .time("minor-fault", "2us",
              "fault entry, VMA lookup, page allocation and exit, without the clearing: *estimate*: "
              "about 1 us on a fast x86 core, 3.5-5.7 us measured in an RDMA fault path (NP-RDMA paper; "
              "docs/references.md); an in-order 1.5 GHz Cortex-A53 is about half as fast as such a core")
        .range("0ps", "1ms")
        .time("zero-fill-page", "1us",
              "clearing one 4 KiB page: *estimate* (4 KiB at about 4 GB/s of A53 store bandwidth, DC ZVA)")
        .range("0ps", "1ms")
        .time("huge-zero-fill", "500us",
              "clearing one 2 MiB page: *estimate* (2 MiB at about 4 GB/s, as zero-fill-page)")
        .range("0ps", "100ms")
        .time("syscall", "500ns", "system call entry and exit: *estimate* (about 750 cycles at 1.5 GHz)")
        .range("0ps", "1ms")
        .time("pte-update", "20ns",
              "writing or clearing one page-table descriptor (plus barrier): *estimate*")
        .range("0ps", "1ms")
        .time("pin-call", "20us",
              "fixed cost of one pin/unpin (registration) call: *estimate* from public registration "
              "timings, tens of us per call (docs/references.md)")
        .range("0ps", "10ms")
        .time("pin-page", "500ns",
              "per 4 KiB page pinned or unpinned: *estimate*, 0.3-0.7 us per page in bulk registration "
              "(docs/references.md)")
        .range("0ps", "1ms")
        .time("user-access", "100ns",
              "a CPU access to a present page (about one DRAM access): *estimate*")
        .range("0ps", "1ms")
        .size("low-watermark", "20MiB",
              "free memory below which kswapd wakes: *estimate* from Linux's watermarks (min_free_kbytes = "
              "sqrt(16 x lowmem KiB) = 16 MiB for 16 GiB, low = min x 5/4; mm/page_alloc.c)")
        .range("0B", "1TiB")
        .size("high-watermark", "24MiB",
              "free memory kswapd reclaims up to: *estimate*, high = min x 3/2 (mm/page_alloc.c); "
              "must be >= low-watermark")
        .range("0B", "1TiB")
        .integer("direct-reclaim-pages", "32",
                 "pages a failed fault allocation reclaims synchronously before retrying: SWAP_CLUSTER_MAX "
                 "(include/linux/swap.h)")
        .range("1", "1048576")
        .time("swap-out-page", "2us",
              "CPU per page swapped out (unmap, swap cache, bio set-up), besides the SSD write: *estimate*")
        .range("0ps", "1ms")
        .time("major-fault", "10us",
              "CPU of a fault on a swapped-out page besides the SSD read: *estimate* so that with "
              "ssd.read-latency 50us a major fault is about 60 us (NP-RDMA paper; docs/references.md)")
        .range("0ps", "10ms")
        .time("scan-pte", "10ns",
              "examining one PTE in reclaim's clock, khugepaged's scan or compaction's walk: *estimate*")
        .range("0ps", "1ms")
        .time("copy-page", "2us",
              "copying one 4 KiB page (collapse, migration): *estimate* (4 KiB read + written at about 4 GB/s)")
        .range("0ps", "1ms")
        .boolean("pins-block-thp-collapse", "true",
                 "khugepaged skips a range with a pinned page (FOLL_LONGTERM pins, modern mm/khugepaged.c); "
                 "false: collapsed anyway, the pinned old frames stay allocated (stale pins), as with the "
                 "plain get_user_pages refcounts of older kernels (docs/references.md)")
        .time("kswapd-interval", "100ms",
              "VmDaemons: kswapd also checks the watermark this often besides wake-ups: *estimate* (Linux "
              "kswapd only sleeps until woken)")
        .range("1us", "1000s")
        .time("compact-interval", "0s",
              "VmDaemons: kcompactd runs compaction this often; 0 = off (*estimate*: proactive compaction "
              "is off by default in Linux, vm.compaction_proactiveness aside)")
        .range("0s", "1000s")
        .integer("compact-pages", "512",
                 "VmDaemons: pages one compaction run may migrate (*estimate*: one 2 MiB block)")
        .range("1", "1048576");
    reg.section("khugepaged", "khugepaged: collapsing 4 KiB pages into transparent huge pages (mm/khugepaged.c)")
        .integer("pages-to-scan", "4096", "PTEs scanned per pass: khugepaged_pages_to_scan default (mm/khugepaged.c)")
        .range("1", "1073741824")
        .time("scan-sleep", "10s",
              "VmDaemons: sleep between passes: scan_sleep_millisecs 10000 (mm/khugepaged.c)")
        .range("1us", "10000s")
        .time("alloc-sleep", "60s",
              "VmDaemons: sleep after a failed huge-page allocation: alloc_sleep_millisecs 60000 (mm/khugepaged.c)")
        .range("1us", "10000s")
        .integer("max-ptes-none", "511",
                 "unmapped PTEs a range may have and still be collapsed: max_ptes_none = HPAGE_PMD_NR - 1 "
                 "(mm/khugepaged.c)")
        .range("0", "511")
        .integer("max-ptes-swap", "64",
                 "swapped-out PTEs a range may have (read back during the collapse): max_ptes_swap = "
                 "HPAGE_PMD_NR / 8 (mm/khugepaged.c)")
        .range("0", "512");
}

}  // namespace vrdmasim
