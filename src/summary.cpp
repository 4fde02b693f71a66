#include "summary.hpp"

namespace vrdmasim {

const std::vector<SummaryColumn>& summary_columns() {
    static const std::vector<SummaryColumn> columns = {
        {"workload", "text", "`workload.kind` of the run."},
        {"strategy", "text", "`rdma.strategy` of the run."},
        {"nodes", "", "MPSoCs simulated."},
        {"sim_seconds", "s", "Simulated time at the end of the run."},
        {"host_seconds", "s", "Wall-clock time the simulation took on the host."},
        {"sim_events", "",
         "Transactions served by the models (sum of every `*.transactions` counter: bus, DRAM, links, "
         "PLDMA registers and packets, SSD)."},
        {"packets", "", "Data packets sent by all PLDMAs (sum of `*.packets_sent`)."},
        {"transfers", "", "RDMA transfers that finished, successfully or not."},
        {"transfer_errors", "", "Transfers that completed with an error status."},
        {"bytes_delivered", "B", "Payload bytes of the transfers that reported success."},
        {"bytes_verified", "B", "Delivered bytes compared with the source at the destination."},
        {"data_mismatches", "", "Transfers reported successful whose destination bytes differ from the source "
                                "(any makes the run fail, exit status 1)."},
        {"throughput_gbps", "Gb/s",
         "Delivered bytes × 8 over the workload's span, first post to last completion."},
        {"latency_us_mean", "us", "Mean transfer latency: stream and cluster workloads, doorbell to the completion seen by the "
                                   "application; pingpong, half the round trip (`workloads/README.md`)."},
        {"latency_us_p50", "us", "Median transfer latency."},
        {"latency_us_p99", "us", "99th-percentile transfer latency."},
        {"latency_us_p50_by_hops", "text",
         "Median latency per number of router-to-router hops, `hops:us` pairs separated by `;` "
         "(`1:2.1;2:3.0`); histograms `workload.latency_hops<h>` in stats.json."},
        {"link_util_max", "fraction",
         "Busy time of the busiest link between routers (not the NI links) over the workload's span."},
        {"link_util_mean", "fraction", "Mean over all links between routers of busy time over the span."},
        {"busiest_link", "text", "Name of the link of `link_util_max`."},
        {"packet_hops", "", "Packets (data, responses, control) times the router-to-router links they crossed."},
        {"smmu_translations", "",
         "Transactions translated by the SMMUs' context banks (sum of `*.translated`; 0 with "
         "`smmu.enabled = false`)."},
        {"smmu_micro_tlb_hit_rate", "fraction",
         "Micro-TLB hits over hits + misses, all TBUs of all nodes (0 with no lookups, e.g. "
         "`smmu.enabled = false`)."},
        {"smmu_macro_tlb_hits", "", "Macro-TLB (TCU) hits (sum of `*.macro_tlb_hits`)."},
        {"smmu_walks", "", "Page-table walks by the TCUs (sum of `*.tcu.walks`)."},
        {"smmu_walk_reads", "", "Descriptor reads of those walks: 3 per walk of a 2 MiB block, 4 of a 4 KiB page, fewer on "
                                   "walk-cache hits (sum of `*.tcu.walk_reads`)."},
        {"smmu_faults", "",
         "SMMU faults recorded by the context banks: translation + access flag + permission + external."},
        {"faults_minor", "", "Zero-fill page faults served by the VMs, 4 KiB (`faults_minor`) and 2 MiB THP "
                             "(`faults_huge`)."},
        {"faults_major", "", "Faults on swapped-out pages (read back from the SSD)."},
        {"faults_smmu_read", "", "SMMU faults of reads (FSYNR0.WNR = 0)."},
        {"faults_smmu_write", "", "SMMU faults of writes (FSYNR0.WNR = 1)."},
        {"fault_service_us_p50", "us",
         "Median service time of an SMMU fault by the driver: its context interrupt raised to the "
         "outcome (the fault library done; in stall mode, RESUME written) (histograms "
         "`*.smmu_driver.service_time`)."},
        {"fault_service_us_p99", "us", "99th percentile of the same."},
        {"pages_pinned", "", "4 KiB page pins taken by the VMs."},
        {"swap_outs", "", "4 KiB pages written to swap by reclaim."},
        {"swap_ins", "", "4 KiB pages read back from swap."},
        {"thp_collapses", "", "2 MiB ranges collapsed by khugepaged."},
        {"thp_splits", "", "2 MiB mappings split into 4 KiB pages."},
        {"invalidations", "", "MMU-notifier invalidate calls made by the VMs (`*.vm.invalidations`)."},
        {"registration_us", "us", "Time the user libraries spent in registration calls (acquire, release: sum of call durations, `*.rdma.registration_time`)."},
        {"pinned_peak_bytes", "B", "Sum over nodes of each library's peak of pinned bytes."},
        {"registration_failures", "", "Registrations refused (RLIMIT_MEMLOCK)."},
        {"pin_cache_hits", "", "Pin-down cache lookups covered by one entry (`rdma.strategy = pin-cache`)."},
        {"pin_cache_misses", "", "Pin-down cache lookups that pinned a new entry."},
        {"parks", "", "PLDMA channels parked on a source-read fault (fault-tolerant engine)."},
        {"nacks", "", "NACKs sent by receiving PLDMAs for payload writes that faulted."},
        {"retransmitted_bytes", "B", "Payload bytes sent again on retransmit requests."},
        {"fault_timeouts", "", "Faults whose outcome did not come within `dma.fault-timeout`."},
        {"kernel_copy_bytes", "B", "Bytes redirected into the NetVM kernel buffer and copied in by the kernel."},
        {"rx_stalled_us", "us", "Time receiving PLDMAs' payload writes were held beyond 1 us (stalled translations; the packets behind wait in the link buffers; sum of `*.dma.rx_stalled`)."},
        {"cpu_busy_us", "us",
         "CPU time on the application cores, every software activity of every node (sum of "
         "`*.cpu.cores_busy_time`, itself the sum of the `*.cpu.<activity>.busy_time` scalars); "
         "DRAM, link and NI busy times are not CPU and are not counted."},
        {"peak_rss_mib", "MiB", "Peak resident memory of the simulator process on the host."},
    };
    return columns;
}

void write_metrics_markdown(std::ostream& os) {
    os << "<!-- Generated by `vrdmasim metrics --markdown` (scripts/gen_docs.py); do not edit: "
          "edit src/summary.cpp. -->\n"
          "# Summary metrics (summary.csv)\n\n"
          "Each run writes `summary.csv`: one header row and one row of values, in this order (a sweep's "
          "`results.csv` has them after its own columns: point, swept parameters, status). Every column is computed "
          "from the run's statistics (stats.json); a statistic a column needs that is missing stops the "
          "run with an error rather than reading 0. Units: `us` microseconds, `B` bytes, `Gb/s` "
          "10^9 bits per second, `fraction` a number in [0, 1], an empty unit a count.\n\n"
          "| column | unit | meaning |\n|---|---|---|\n";
    for (const auto& c : summary_columns()) {
        std::string d = c.description;
        std::string escaped;
        for (char ch : d) {
            if (ch == '|') escaped += "\\|";
            else escaped += ch;
        }
        os << "| `" << c.name << "` | " << c.unit << " | " << escaped << " |\n";
    }
}

}  // namespace vrdmasim
