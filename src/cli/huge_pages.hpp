#pragma once
// Transparent huge pages for the simulator's heap.
//
// A torus of thousands of nodes is hundreds of MiB of small objects (models,
// statistics, events, queued packets) that every window of simulated time
// touches all over: with 4 KiB pages, each of a packet's hops walks the
// host's page tables for several of them. On hosts whose
// /sys/kernel/mm/transparent_hugepage/enabled is `madvise` (Debian's default
// kernel config) memory is backed by 2 MiB pages only where the program asks
// with madvise(MADV_HUGEPAGE). The vrdmasim executable allocates through
// tcmalloc; install_huge_page_heap() gives tcmalloc a system allocator that
// takes its memory from the system in whole, aligned 2 MiB pieces and asks
// for huge pages on each (docs/clusters.md, "Host memory and huge pages").
// Simulated results do not depend on it; the host's time does.

namespace vrdmasim {

// Installs the allocator when the executable is linked with tcmalloc
// (VRDMASIM_TCMALLOC); otherwise, and when tcmalloc refuses, does nothing.
// Returns whether it is installed. Call first thing in main. The summary's
// host_huge_pages_mib shows what the kernel gave.
bool install_huge_page_heap();
}   // namespace vrdmasim
