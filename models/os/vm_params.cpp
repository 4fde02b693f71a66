// The Vm's parameters: their declaration (Vm::declare_params, sections "vm"
// and "khugepaged", each with its source) and their one read (read_vm_config).
#include "models/os/vm_params.hpp"

#include "models/common/noise.hpp"

#include "models/os/vm.hpp"

namespace vrdmasim {

VmConfig read_vm_config(const Config& c) {
    VmConfig p;
    p.thp = c[params_of<VmParams>().thp];
    p.memlock_limit = c[params_of<VmParams>().memlock_limit];
    p.minor_fault = c[params_of<VmParams>().minor_fault];
    p.zero_fill_page = c[params_of<VmParams>().zero_fill_page];
    p.huge_zero_fill = c[params_of<VmParams>().huge_zero_fill];
    p.syscall = c[params_of<VmParams>().syscall];
    p.pte_update = c[params_of<VmParams>().pte_update];
    p.pin_call = c[params_of<VmParams>().pin_call];
    p.pin_page = c[params_of<VmParams>().pin_page];
    p.user_access = c[params_of<VmParams>().user_access];
    p.low_wm = c[params_of<VmParams>().low_watermark];
    p.high_wm = c[params_of<VmParams>().high_watermark];
    p.direct_reclaim_pages = static_cast<std::uint64_t>(c[params_of<VmParams>().direct_reclaim_pages]);
    p.pages_to_scan = static_cast<std::uint64_t>(c[params_of<KhugepagedParams>().pages_to_scan]);
    p.max_ptes_none = static_cast<std::uint64_t>(c[params_of<KhugepagedParams>().max_ptes_none]);
    p.max_ptes_swap = static_cast<std::uint64_t>(c[params_of<KhugepagedParams>().max_ptes_swap]);
    p.pins_block_collapse = c[params_of<VmParams>().pins_block_thp_collapse];
    p.swap_out_page = c[params_of<VmParams>().swap_out_page];
    p.major_fault = c[params_of<VmParams>().major_fault];
    p.scan_pte = c[params_of<VmParams>().scan_pte];
    p.copy_page = c[params_of<VmParams>().copy_page];
    if (p.high_wm < p.low_wm)
        throw ConfigError("vm.high-watermark (" + c.text(params_of<VmParams>().high_watermark) +
                          ") must not be below vm.low-watermark (" + c.text(params_of<VmParams>().low_watermark) + ")");
    return p;
}

VmParams::VmParams() : set("vm", "Linux-like virtual memory of one node's kernel (mm)") {
    declare_faults_and_pins();
    declare_reclaim();
    declare_daemons();
}

// Page faults, system calls and pinning: the fault policy (thp), the pin
// limit, and what the kernel's paths cost.
void VmParams::declare_faults_and_pins() {
    thp = set.choice("thp", "always", {"always", "madvise", "never"},
                     "transparent huge pages at fault time: /sys/kernel/mm/transparent_hugepage/enabled "
                     "(Kconfig default always, distributions often madvise; transhuge.rst)");
    copy_rate = set.rate("copy-rate", "2GB/s",
                         "kernel memcpy into user pages (NetVM receive copies; *estimate* for a 1.5 GHz A53)")
                    .range("1Kbps", "10Tbps");
    memlock_limit = set.size("memlock-limit", "8MiB",
                             "RLIMIT_MEMLOCK per process, for mlock and pins together: 8 MiB from Linux 5.16, "
                             "64 KiB up to 5.15 (include/uapi/linux/resource.h history)")
                        .range("0B", "1TiB");
    minor_fault = set.time("minor-fault", "2us",
                           "fault entry, VMA lookup, page allocation and exit, without the clearing: *estimate*: "
                           "about 1 us on a fast x86 core, 3.5-5.7 us measured in an RDMA fault path (NP-RDMA paper; "
                           "docs/references.md); an in-order 1.5 GHz Cortex-A53 is about half as fast as such a core")
                      .range("0ps", "1ms");
    zero_fill_page =
        set.time("zero-fill-page", "1us",
                 "clearing one 4 KiB page: *estimate* (4 KiB at about 4 GB/s of A53 store bandwidth, DC ZVA)")
            .range("0ps", "1ms");
    huge_zero_fill = set.time("huge-zero-fill", "500us",
                              "clearing one 2 MiB page: *estimate* (2 MiB at about 4 GB/s, as zero-fill-page)")
                         .range("0ps", "100ms");
    syscall = set.time("syscall", "500ns", "system call entry and exit: *estimate* (about 750 cycles at 1.5 GHz)")
                  .range("0ps", "1ms");
    pte_update =
        set.time("pte-update", "20ns", "writing or clearing one page-table descriptor (plus barrier): *estimate*")
            .range("0ps", "1ms");
    pin_call = set.time("pin-call", "20us",
                        "fixed cost of one pin/unpin (registration) call: *estimate* from public registration "
                        "timings, tens of us per call (docs/references.md)")
                   .range("0ps", "10ms");
    pin_page = set.time("pin-page", "500ns",
                        "per 4 KiB page pinned or unpinned: *estimate*, 0.3-0.7 us per page in bulk registration "
                        "(docs/references.md)")
                   .range("0ps", "1ms");
    user_access = set.time("user-access", "100ns", "a CPU access to a present page (about one DRAM access): *estimate*")
                      .range("0ps", "1ms");
}

// Reclaim and swap: the watermarks and the per-page costs of reclaim,
// khugepaged's scan and compaction.
void VmParams::declare_reclaim() {
    low_watermark =
        set.size("low-watermark", "20MiB",
                 "free memory below which kswapd wakes: *estimate* from Linux's watermarks (min_free_kbytes = "
                 "sqrt(16 x lowmem KiB) = 16 MiB for 16 GiB, low = min x 5/4; mm/page_alloc.c)")
            .range("0B", "1TiB");
    high_watermark = set.size("high-watermark", "24MiB",
                              "free memory kswapd reclaims up to: *estimate*, high = min x 3/2 (mm/page_alloc.c); "
                              "must be >= low-watermark")
                         .range("0B", "1TiB");
    direct_reclaim_pages =
        set.integer("direct-reclaim-pages", "32",
                    "pages a failed fault allocation reclaims synchronously before retrying: SWAP_CLUSTER_MAX "
                    "(include/linux/swap.h)")
            .range("1", "1048576");
    swap_out_page =
        set.time("swap-out-page", "2us",
                 "CPU per page swapped out (unmap, swap cache, bio set-up), besides the SSD write: *estimate*")
            .range("0ps", "1ms");
    major_fault = set.time("major-fault", "10us",
                           "CPU of a fault on a swapped-out page besides the SSD read: *estimate* so that with "
                           "ssd.read-latency 50us a major fault is about 60 us (NP-RDMA paper; docs/references.md)")
                      .range("0ps", "10ms");
    scan_pte = set.time("scan-pte", "10ns",
                        "examining one PTE in reclaim's clock, khugepaged's scan or compaction's walk: *estimate*")
                   .range("0ps", "1ms");
    copy_page =
        set.time("copy-page", "2us",
                 "copying one 4 KiB page (collapse, migration): *estimate* (4 KiB read + written at about 4 GB/s)")
            .range("0ps", "1ms");
}

// The daemons (VmDaemons): khugepaged and pins, kswapd and kcompactd.
void VmParams::declare_daemons() {
    pins_block_thp_collapse =
        set.boolean("pins-block-thp-collapse", "true",
                    "khugepaged skips a range with a pinned page (FOLL_LONGTERM pins, modern mm/khugepaged.c); "
                    "false: collapsed anyway, the pinned old frames stay allocated (stale pins), as with the "
                    "plain get_user_pages refcounts of older kernels (docs/references.md)");
    kswapd_interval =
        set.time("kswapd-interval", "100ms",
                 "VmDaemons: kswapd also checks the watermark this often besides wake-ups: *estimate* (Linux "
                 "kswapd only sleeps until woken)")
            .range("1us", "1000s");
    compact_interval =
        set.time("compact-interval", "0s",
                 "VmDaemons: kcompactd runs compaction this often; 0 = off (*estimate*: proactive compaction "
                 "is off by default in Linux, vm.compaction_proactiveness aside)")
            .range("0s", "1000s");
    compact_pages = set.integer("compact-pages", "512",
                                "VmDaemons: pages one compaction run may migrate (*estimate*: one 2 MiB block)")
                        .range("1", "1048576");
}

KhugepagedParams::KhugepagedParams()
    : set("khugepaged", "khugepaged: collapsing 4 KiB pages into transparent huge pages (mm/khugepaged.c)"),
      pages_to_scan(set.integer("pages-to-scan", "4096",
                                "PTEs scanned per pass: khugepaged_pages_to_scan default (mm/khugepaged.c)")
                        .range("1", "1073741824")),
      scan_sleep(
          set.time("scan-sleep", "10s", "VmDaemons: sleep between passes: scan_sleep_millisecs 10000 (mm/khugepaged.c)")
              .range("1us", "10000s")),
      alloc_sleep(
          set.time(
                 "alloc-sleep", "60s",
                 "VmDaemons: sleep after a failed huge-page allocation: alloc_sleep_millisecs 60000 (mm/khugepaged.c)")
              .range("1us", "10000s")),
      max_ptes_none(
          set.integer("max-ptes-none", "511",
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
    NoiseParams::declare_params(reg);   // noise.daemon-phase (VmDaemons)
}

}   // namespace vrdmasim
