#include "src/sim/invariants.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>

#include "library/rdma/buffer_guard.hpp"
#include "src/sim/energy.hpp"
#include "src/sim/system.hpp"
#include "src/sim/node.hpp"

namespace vrdmasim {

namespace {

// Relative slack for sums of rounded picosecond times.
constexpr double kSlack = 1e-9;

std::string num(double v) {
    std::ostringstream os;
    os.precision(9);
    os << v;
    return os.str();
}

std::uint64_t counter(const StatRegistry& stats, const std::string& name, std::vector<Violation>& out) {
    const Counter* c = stats.find_counter(name);
    if (!c) {
        out.push_back({"statistics-present", "statistic " + name + " is missing"});
        return 0;
    }
    return c->value();
}

// The best payload fraction of the wire any packet of at most `max_payload`
// bytes achieves: payload / (header + payload + footer flits).
double best_payload_fraction(std::uint64_t max_payload) {
    double best = 0;
    for (std::uint64_t p = 1; p <= max_payload; ++p) {
        const double flits = 2.0 + static_cast<double>((p + kFlitBytes - 1) / kFlitBytes);
        best = std::max(best, static_cast<double>(p) / (flits * kFlitBytes));
    }
    return best;
}

void check_link(const Link& link, const StatRegistry& stats, double run_us, std::vector<Violation>& out) {
    const std::string name = link.name();
    const double busy = link.busy_us();
    // No link busier than the time there was.
    if (busy > run_us * (1 + kSlack) + 1e-6)
        out.push_back({"link-utilisation", name + " was busy " + num(busy) + " us in a run of " + num(run_us) +
                                               " us (" + num(busy / run_us * 100) + " %)"});
    // The payload it carried needs at least its serialisation time.
    const double payload = static_cast<double>(counter(stats, name + ".payload_bytes", out));
    const double wire_us = payload * 8.0 / link.params().rate_bps * 1e6;
    if (wire_us > busy * (1 + kSlack) + 1e-6)
        out.push_back({"link-payload", name + " carried " + num(payload) + " B of payload, " + num(wire_us) +
                                           " us at " + num(link.params().rate_bps / 1e9) + " Gb/s, but was busy only " +
                                           num(busy) + " us"});
    // Credits: no VC buffer at the far end ever held more than it has (as
    // the published high-water-mark statistics say).
    for (unsigned vc = 0; vc < std::max(1u, link.params().vcs); ++vc) {
        const std::string stat = name + ".vc" + std::to_string(vc) + ".buffer_hwm";
        const Scalar* hwm = stats.find_scalar(stat);
        if (!hwm) {
            out.push_back({"statistics-present", "statistic " + stat + " is missing"});
            continue;
        }
        if (hwm->value() > link.params().buffer_flits)
            out.push_back({"credit-overflow", name + " VC " + std::to_string(vc) + " held " + num(hwm->value()) +
                                                  " flits in a buffer of " +
                                                  std::to_string(link.params().buffer_flits)});
    }
}

}   // namespace

// NetVM's network interface (ni.translation = shadow): every entry the OS
// wrote or cleared in the NI's table was charged as CPU work (the table's
// own count against the pager's statistic, and the CPU's busy time for the
// activity against updates x ni.shadow-update); and with NetVM's credits,
// no packet ever found the system buffer full (the credits bound it) and
// every credit a sender spent came back or is still owed by its receiver.
void check_shadow_ni(System& sys, const StatRegistry& stats, std::vector<Violation>& out) {
    std::uint64_t spent = 0, returned = 0, full = 0;
    double owed = 0;
    bool credits = false;
    for (std::size_t i = 0; i < sys.size(); ++i) {
        if (!sys.present(i)) continue;   // another rank's node: that rank checks it
        Node& n = sys.node(i);
        if (!n.shadow_table) continue;
        const std::uint64_t written = n.shadow_table->sets() + n.shadow_table->clears();
        const std::uint64_t charged = counter(stats, n.group + ".ni.shadow_updates", out);
        if (written != charged)
            out.push_back({"shadow-updates-charged", n.group + ": " + std::to_string(written) +
                                                         " shadow-table entries written or cleared, " +
                                                         std::to_string(charged) + " charged to the CPU"});
    }
    // The credits by name: a partitioned run's ranks have every node's
    // statistics, merged, and a credit spent on one rank may come back on
    // another.
    for (std::size_t i = 0; i < sys.size(); ++i) {
        const std::string p = sys.coord_name(i) + ".dma.";
        if (stats.find_counter(p + "credits_spent")) {
            credits = true;
            spent += counter(stats, p + "credits_spent", out);
            returned += counter(stats, p + "credits_returned", out);
            full += counter(stats, p + "netvm_full", out);
            const Scalar* o = stats.find_scalar(p + "credits_owed");
            if (o) owed += o->value();
        }
    }
    if (!credits) return;
    if (full > 0)
        out.push_back({"credits-bound-buffer", std::to_string(full) +
                                                   " packet(s) found the NetVM system buffer "
                                                   "full although the senders' credits should bound it"});
    if (static_cast<double>(spent) != static_cast<double>(returned) + owed && sys.workload().ended())
        out.push_back({"credits-conserved", std::to_string(spent) + " B of credit spent, " + std::to_string(returned) +
                                                " B returned and " + num(owed) + " B still owed by the receivers"});
}

// Ordered notifications (dma.notify-window): every notification of a
// sender and domain delivered in doorbell order, none twice or beyond the
// window; at the end of a finished run none held and every number answered.
void check_notify_order(System& sys, const StatRegistry& stats, std::vector<Violation>& out) {
    std::uint64_t reordered = 0, errors = 0, held = 0, unanswered = 0;
    bool ordered = false;
    for (std::size_t i = 0; i < sys.size(); ++i) {
        if (!sys.present(i)) continue;   // another rank's node: that rank checks it
        Pldma& dma = sys.node(i).dma;
        const std::string p = std::string(dma.name()) + ".";
        errors += counter(stats, p + "notify_seq_errors", out);
        if (dma.notify_window() == 0) continue;
        ordered = true;
        reordered += counter(stats, p + "notify_reordered", out);
        held += dma.notifications_held();
        unanswered += dma.window_unanswered();
    }
    if (errors > 0)
        out.push_back({"notifications-numbered", std::to_string(errors) + " notification number(s) delivered twice or "
                                                                          "beyond the sequence window"});
    if (!ordered) return;
    if (reordered > 0)
        out.push_back({"notifications-in-order", std::to_string(reordered) +
                                                     " notification(s) delivered after a "
                                                     "later-posted one of the same sender and domain, with "
                                                     "dma.notify-window > 0"});
    bool finished = true;
    for (const auto& w : sys.workloads()) finished = finished && w->ended();
    if (finished && (held > 0 || unanswered > 0))
        out.push_back({"notifications-released", std::to_string(held) + " notification(s) still held and " +
                                                     std::to_string(unanswered) +
                                                     " number(s) never answered at the "
                                                     "end of a finished run"});
}

// Files read over the board network (models/os/remote_block.hpp): every
// command a node sent was served once by its SSD node and answered with
// every byte it asked for; none is left outstanding.
void check_remote_files(System& sys, std::vector<Violation>& out) {
    std::uint64_t reads = 0, served = 0, asked = 0, delivered = 0, sent = 0, outstanding = 0;
    for (std::size_t i = 0; i < sys.size(); ++i) {
        if (!sys.present(i)) continue;   // a board's files stay on its rank
        const Node& n = sys.node(i);
        if (!n.remote_fs) continue;
        reads += n.remote_fs->reads();
        served += n.remote_fs->served();
        asked += n.remote_fs->bytes_requested();
        delivered += n.remote_fs->bytes_delivered();
        sent += n.remote_fs->served_bytes();
        outstanding += n.remote_fs->outstanding();
    }
    if (reads != served || asked != delivered || sent != delivered || outstanding > 0)
        out.push_back({"remote-file-reads", std::to_string(reads) + " remote file reads sent, " +
                                                std::to_string(served) + " served; " + std::to_string(asked) +
                                                " B asked, " + std::to_string(sent) + " B sent, " +
                                                std::to_string(delivered) + " B delivered; " +
                                                std::to_string(outstanding) + " outstanding"});
}

// Prefetch advice (library/rdma/prefetch.hpp): each process's worker made
// present only pages its library advised, and the library advised only
// pages of the process's own mappings.
void check_prefetch(System& sys, std::vector<Violation>& out) {
    const auto procs = static_cast<unsigned>(sys.config()[params_of<NodeParams>().processes]);
    for (std::size_t i = 0; i < sys.size(); ++i)
        for (unsigned p = 0; p < procs && sys.present(i); ++p) {
            const RdmaProcess& a = sys.node(i).process(p);
            const Prefetcher* pf = a.prefetcher();
            if (!pf) continue;
            std::uint64_t mapped = 0;
            for (const auto& [va, bytes] : a.allocations()) mapped += (bytes + 4095) / 4096;
            if (pf->populated_pages() > pf->advised_pages() || pf->advised_pages() > mapped)
                out.push_back({"prefetch-advised-only", a.group() + ": the prefetch worker made " +
                                                            std::to_string(pf->populated_pages()) +
                                                            " page(s) present, " + std::to_string(pf->advised_pages()) +
                                                            " advised, of " + std::to_string(mapped) + " mapped"});
        }
}

// Where every job's workload accounts for all of its engine traffic (the
// lock workload: atomics and loads on its words), the engine operations
// their libraries posted, summed over the jobs, are what the engines counted
// posted (each job's own against the completions on its channels is the
// workload's check at its end).
void check_engine_operations(System& sys, const StatRegistry& stats, std::vector<Violation>& out) {
    std::uint64_t library = 0;
    for (const auto& w : sys.workloads()) {
        const std::int64_t ops = w->engine_operations();
        if (ops < 0) return;
        library += static_cast<std::uint64_t>(ops);
    }
    // (reads count in transfers_posted too; atomics only in atomics_posted)
    const std::uint64_t engines = stats.sum_counters("dma.atomics_posted") + stats.sum_counters("dma.transfers_posted");
    if (library != engines)
        out.push_back({"engine-operations", std::to_string(sys.workloads().size()) + " job(s) posted " +
                                                std::to_string(library) + " engine operations, the engines counted " +
                                                std::to_string(engines) +
                                                " posted (`*.dma.atomics_posted` + "
                                                "`transfers_posted`)"});
}

// A workload that announces its total (the progress line's ETA divides by
// it) finished exactly that many transfers.
void check_planned_transfers(System& sys, std::vector<Violation>& out) {
    for (const auto& w : sys.workloads()) {
        const std::uint64_t planned = w->planned_transfers(), done = w->log().transfers.value();
        if (planned > 0 && planned != done)
            out.push_back({"planned-transfers", (w->job() == 0 ? "" : "job " + std::to_string(w->job()) + ": ") +
                                                    w->kind() + " announced " + std::to_string(planned) +
                                                    " transfers but finished " + std::to_string(done)});
    }
}

// A workload that announces the payload bytes it will deliver (`run
// --check` prints them) delivered exactly that many, when none of its
// transfers failed.
void check_planned_bytes(System& sys, std::vector<Violation>& out) {
    for (const auto& w : sys.workloads()) {
        const std::int64_t planned = w->planned_bytes();
        const std::uint64_t done = w->log().bytes_delivered.value();
        if (planned >= 0 && w->log().errors.value() == 0 && static_cast<std::uint64_t>(planned) != done)
            out.push_back({"planned-bytes", (w->job() == 0 ? "" : "job " + std::to_string(w->job()) + ": ") +
                                                w->kind() + " announced " + std::to_string(planned) +
                                                " bytes of payload but delivered " + std::to_string(done)});
    }
}

// What the receivers can take in as payload: a node takes payload in
// through its one NI link, fed by the links into its router that carried
// anything (workloads never send to their own node): the lesser of the two
// rates bounds what it can receive, times the payload share of a packet.
static double payload_ceiling_bps(System& sys, const StatRegistry& stats) {
    // By name: a partitioned run's ranks have every link's and node's
    // statistics (merged), not every link and node.
    std::vector<double> feed_bps(sys.size(), 0.0);
    for (std::size_t i = 0; i < sys.links().size(); ++i) {
        const Counter* packets = stats.find_counter(sys.link_name(i) + ".packets");
        if (packets && packets->value() > 0) feed_bps[sys.link_to(i)] += sys.params_of_link(i).rate_bps;
    }
    double ceiling_bps = 0;
    Node& some = sys.any_node();   // every node's engine and NI link are alike
    const double fraction = best_payload_fraction(some.dma.packet_size());
    for (std::size_t i = 0; i < sys.size(); ++i) {
        const Counter* received = stats.find_counter(sys.coord_name(i) + ".dma.bytes_received");
        if (received && received->value() > 0)
            ceiling_bps += std::min(some.eject.params().rate_bps, feed_bps[i]) * fraction;
    }
    // What the workloads deliver without the network (their own bound).
    for (const auto& w : sys.workloads()) ceiling_bps += w->local_ceiling_bps();
    return ceiling_bps;
}

RunFigures run_figures(System& sys) {
    RunFigures f;
    const TransferLog& l = sys.workload().log();
    sc_core::sc_time first = l.first_post, last = l.last_done;   // of all jobs
    for (const auto& w : sys.workloads()) {
        first = std::min(first, w->log().first_post);
        last = std::max(last, w->log().last_done);
    }
    f.span_s = last > first ? (last - first).to_seconds() : 0.0;
    f.run_s = sc_core::sc_time_stamp().to_seconds();
    const auto gbps = [&l](sc_core::sc_time span) {
        return span > sc_core::SC_ZERO_TIME
                   ? static_cast<double>(l.bytes_delivered.value()) * 8 / span.to_seconds() / 1e9
                   : 0.0;
    };
    f.throughput_gbps = gbps(l.end_to_end());
    f.post_window_gbps = gbps(l.post_window());
    return f;
}

namespace {

// Each workload's own checks: conservation, verified bytes, and what its
// kind promises (fileserve, collective, overlap).
void check_workloads(System& sys, std::vector<Violation>& out) {
    for (const auto& w : sys.workloads()) {
        TransferLog& log = w->log();
        const std::string job = w->job() == 0 ? "" : "job " + std::to_string(w->job()) + ": ";
        // Conservation: every posted transfer finished, ok or failed.
        if (log.posted_count.value() != log.transfers.value())
            out.push_back({"transfers-conserved", job + std::to_string(log.posted_count.value()) +
                                                      " transfers posted but " + std::to_string(log.transfers.value()) +
                                                      " finished (" + std::to_string(log.errors.value()) +
                                                      " of them failed)"});
        // Every byte reported delivered was compared equal at its destination
        // (or, overlap unguarded, found corrupted by the application's race).
        if (log.mismatches.value() == 0 && log.bytes_verified.value() + w->raced_bytes() != log.bytes_delivered.value())
            out.push_back({"bytes-verified", job + std::to_string(log.bytes_delivered.value()) + " B delivered but " +
                                                 std::to_string(log.bytes_verified.value()) + " B verified" +
                                                 (w->raced_bytes() ? " and " + std::to_string(w->raced_bytes()) +
                                                                         " B found corrupted by the application"
                                                                   : std::string())});
        // The workload's own (fileserve: every request answered once, bytes
        // served verified; collective: no rank leaves a barrier before the
        // last entered it; synthetic: messages conserved, no faster than
        // their zero-load sum; overlap: a race only where nothing kept the
        // program off the buffer).
        for (const auto& [name, detail] : w->self_check()) out.push_back({name, job + detail});
    }
}

// Causality of reads in flight, and the stream IDs of every access.
void check_memory_visibility(System& sys, const StatRegistry& stats, std::vector<Violation>& out) {
    // Causality of reads in flight: no timed access reached a frame an SSD
    // read was still filling (a swapped-in or file page visible before its
    // data; models/os/README.md "Reads in flight"). The physical-address
    // experiment's stale addresses may land anywhere (frame_check): its
    // result, not this.
    for (std::size_t i = 0; i < sys.size(); ++i) {
        if (!sys.present(i)) continue;   // another rank's node: that rank checks it
        Node& n = sys.node(i);
        if (n.frame_check || n.dram.early_accesses() == 0) continue;
        out.push_back({"io-visibility", std::string(n.dram.name()) + ": " + std::to_string(n.dram.early_accesses()) +
                                            " timed access(es) reached a frame before the SSD read filling it had "
                                            "completed"});
    }
    // Stream IDs: every access of every engine carried the stream ID of a
    // process the node's kernel attached (node.processes: one per process,
    // from the channel's control word); one the SMMU matched to no context
    // bank, or that came without a stream ID, went to no process.
    if (sys.smmu_enabled()) {
        const std::uint64_t unmatched = stats.sum_counters("unmatched_streams");
        const std::uint64_t missing = stats.sum_counters("missing_stream_id");
        if (unmatched + missing > 0)
            out.push_back({"stream-ids", std::to_string(unmatched) +
                                             " SMMU transaction(s) with a stream ID no "
                                             "process was attached with, " +
                                             std::to_string(missing) + " without a stream ID"});
    }
}

// Pins: each kernel's running count (the registrar's peak, RLIMIT_MEMLOCK)
// is the sum of the pins themselves.
void check_pin_counts(System& sys, std::vector<Violation>& out) {
    for (std::size_t i = 0; i < sys.size(); ++i) {
        if (!sys.present(i)) continue;
        const std::string mismatch = sys.node(i).vm.pin_count_mismatch();
        if (!mismatch.empty()) out.push_back({"pin-count", sys.node(i).group + ": " + mismatch});
    }
}

void check_frame_check_coverage(System& sys, const StatRegistry& stats, std::vector<Violation>& out) {
    // Physical-address mode: the ownership check saw every byte the engine
    // wrote (the payload it received at least).
    for (std::size_t i = 0; i < sys.size(); ++i) {
        if (!sys.present(i)) continue;
        Node& n = sys.node(i);
        if (!n.frame_check) continue;
        const std::uint64_t checked = counter(stats, n.group + ".frame_check.write_bytes", out);
        const std::uint64_t received = counter(stats, std::string(n.dma.name()) + ".bytes_received", out);
        if (checked < received)
            out.push_back({"frame-check-coverage", n.group + ": the engine received " + std::to_string(received) +
                                                       " B but the ownership check saw only " +
                                                       std::to_string(checked) + " B written"});
    }
}

// The user library's promises: guards lifted, completions after the engine wrote them.
void check_library(const StatRegistry& stats, std::vector<Violation>& out) {
    // The buffer guard: every guard installed was lifted.
    const std::uint64_t guards = stats.sum_counters("rdma.guard.installed");
    const std::uint64_t lifted = stats.sum_counters("rdma.guard.lifted");
    if (guards != lifted)
        out.push_back({"guards-lifted",
                       std::to_string(guards) + " buffer guard(s) installed, " + std::to_string(lifted) + " lifted"});
    // Causality: the library never saw a completion before the engine wrote it.
    const std::uint64_t early = stats.sum_counters("rdma.early_completions");
    if (early > 0)
        out.push_back({"completion-after-engine", std::to_string(early) +
                                                      " completion record(s) seen by the application before the "
                                                      "engine had written them"});
}

// The engines' conservation: packets, reads, atomics, event counters.
void check_engine_conservation(const StatRegistry& stats, std::vector<Violation>& out) {
    // Receivers, in whatever order packets arrive (adaptive routing): every
    // packet index of a transfer landed once, and no payload was written
    // before its packet arrived.
    const std::uint64_t twice = stats.sum_counters("dma.rx_double_landings");
    const std::uint64_t before_arrival = stats.sum_counters("dma.rx_early_writes");
    if (twice + before_arrival > 0)
        out.push_back({"packets-land-once", std::to_string(twice) + " packet(s) landed on an index already landed, " +
                                                std::to_string(before_arrival) +
                                                " payload write(s) done before their packet arrived"});

    // Payload: what the engines accepted (payload_in_pd<domain>: written,
    // or buffered by NetVM, each packet once) is at least what they wrote
    // into memory and at most what the engines sent (resends included). A
    // region's throughput is read from the accepted payload.
    double accepted = 0;
    for (unsigned pd = 0; pd <= 16; ++pd) accepted += stats.sum_scalars("dma.payload_in_pd" + std::to_string(pd));
    const double written = static_cast<double>(stats.sum_counters("dma.bytes_received"));
    const double sent = static_cast<double>(stats.sum_counters("dma.bytes_sent"));
    if (accepted < written || accepted > sent)
        out.push_back({"payload-accepted", "the engines accepted " + num(accepted) + " B of payload, wrote " +
                                               num(written) + " B into memory and sent " + num(sent) +
                                               " B: accepted must lie between the two"});

    // RDMA reads: every read posted completed at its initiator (ok or
    // failed; its latency sample is taken at completion), and every read
    // request a responder took ended (served or failed): none left
    // outstanding on either side, none answered twice.
    const std::uint64_t reads = stats.sum_counters("dma.reads_posted");
    const std::uint64_t reads_done = stats.merge_histograms("dma.read_latency").count();
    const std::uint64_t requests = stats.sum_counters("dma.read_requests");
    const std::uint64_t replies =
        stats.sum_counters("dma.read_requests_served") + stats.sum_counters("dma.read_replies_failed");
    if (reads != reads_done || requests != replies || requests > reads)
        out.push_back({"reads-conserved", std::to_string(reads) + " reads posted, " + std::to_string(reads_done) +
                                              " completed; " + std::to_string(requests) + " read requests served, " +
                                              std::to_string(replies) + " of them ended"});

    // Network atomics: each posted one completed at its initiator, and each
    // that completed ok was executed exactly once by a target's atomic unit.
    const std::uint64_t atomics = stats.sum_counters("dma.atomics_posted");
    const std::uint64_t atomics_ok = stats.sum_counters("dma.atomics_completed");
    const std::uint64_t atomics_done = atomics_ok + stats.sum_counters("dma.atomics_failed");
    const std::uint64_t executed = stats.sum_counters("dma.atomics_executed");
    if (atomics != atomics_done || executed != atomics_ok)
        out.push_back({"atomics-conserved", std::to_string(atomics) + " atomics posted, " +
                                                std::to_string(atomics_done) + " completed (" +
                                                std::to_string(atomics_ok) + " ok); " + std::to_string(executed) +
                                                " executed at their targets"});

    // Event counters: every write naming one that completed ok at its
    // sender incremented its counter exactly once at the receiver (never
    // for a failed one, never twice for a retransmitted one).
    const std::uint64_t counted = stats.sum_counters("dma.counter_increments");
    const std::uint64_t counter_writes = stats.sum_counters("dma.counter_writes");
    const std::uint64_t counter_failed = stats.sum_counters("dma.counter_failed");
    const std::uint64_t counter_writes_failed = stats.sum_counters("dma.counter_writes_failed");
    if (counted != counter_writes || counter_failed > counter_writes_failed)
        out.push_back({"counters-conserved", std::to_string(counter_writes) +
                                                 " writes naming an event counter "
                                                 "completed ok but " +
                                                 std::to_string(counted) + " increments were made; " +
                                                 std::to_string(counter_failed) + " failed at receivers, " +
                                                 std::to_string(counter_writes_failed) + " at senders"});
}

// Links, energy and routers' buffers.
void check_links_energy(System& sys, const StatRegistry& stats, double run_us, std::vector<Violation>& out) {
    // Links: utilisation, payload against wire time, credits.
    // A node takes payload in through its one NI link, fed by the links
    // into its router that carried anything (workloads never send to their
    // own node): the lesser of the two rates bounds what it can receive.
    // The links simulated here (each rank checks its own).
    for (const auto& l : sys.links())
        if (l) check_link(*l, stats, run_us, out);
    for (std::size_t i = 0; i < sys.size(); ++i) {
        if (!sys.present(i)) continue;
        check_link(sys.node(i).inject, stats, run_us, out);
        check_link(sys.node(i).eject, stats, run_us, out);
    }
    // Energy: no component below its static power over the run, no core
    // busier than the run was long (src/sim/energy.cpp).
    for (const auto& d : energy_violations(energy_of(sys.config(), sys, stats, sc_core::sc_time_stamp().to_seconds())))
        out.push_back({"energy", d});
    // Routers: no input buffer ever held more flits than it has (the
    // upstream link's credits must keep it from overflowing).
    if (const std::uint64_t o = stats.sum_counters("router.buffer_overflows"))
        out.push_back({"router-buffer", std::to_string(o) + " packet(s) found a router's input buffer fuller than it "
                                                            "is (`*.router.buffer_overflows`): the upstream link's "
                                                            "credits and the router's buffer disagree"});
}

// Cut links (board-link.handoff = message): every packet message a near end
// posted was delivered by its far end, every delivery answered with a credit
// the near end received, nothing left in a delivery queue or owed, and no
// packet refused at a far end (its sender could not have been told). A
// packet lost between the halves cannot hide.
void check_handoff(System& sys, const StatRegistry& stats, std::vector<Violation>& out) {
    // Counts by name, from the statistics (a partitioned run's near and far
    // ends are on two ranks, each rank has both's statistics merged); what
    // is still queued or owed from the ends simulated here.
    std::uint64_t posted = 0, delivered = 0, credits_sent = 0, credits_got = 0, refused = 0, queued = 0, owed = 0;
    std::string first;
    auto value = [&stats](const std::string& name) {
        const Counter* c = stats.find_counter(name);
        return c ? c->value() : 0;
    };
    for (std::size_t i = 0; i < sys.links().size(); ++i) {
        const std::string& name = sys.link_name(i);
        if (!stats.find_counter(name + ".handoff.packets_posted")) continue;   // not a cut link
        const std::uint64_t p = value(name + ".handoff.packets_posted"), d = value(name + ".handoff.packets_delivered"),
                            cs = value(name + ".handoff.credits_posted"),
                            cg = value(name + ".handoff.credits_received"), rf = value(name + ".handoff.refused");
        std::uint64_t q = 0, o = 0;
        bool busy = false;
        if (const Link* l = sys.links()[i].get()) {
            o = l->credits_outstanding();
            if (const CutLinkFar* f = l->cut_far()) q = f->queued(), busy = f->delivering();
        }
        posted += p, delivered += d, credits_sent += cs, credits_got += cg, refused += rf, queued += q, owed += o;
        if (first.empty() && (p != d || cs != d || cg != cs || q || busy || rf || o))
            first = name + ": " + std::to_string(p) + " posted, " + std::to_string(d) + " delivered, " +
                    std::to_string(q) + " queued, " + std::to_string(cs) + " credits posted, " + std::to_string(cg) +
                    " received, " + std::to_string(o) + " owed, " + std::to_string(rf) + " refused";
    }
    for (const auto& e : sys.far_ends()) {
        const CutLinkFar& f = e->end.far();
        queued += f.queued();
        if (first.empty() && (f.queued() || f.delivering()))
            first = std::string(e->name()) + ": " + std::to_string(f.queued()) + " queued at its far end here";
    }
    if (first.empty()) return;
    out.push_back({"handoff-delivered",
                   "cut links: " + std::to_string(posted) + " packet messages posted, " + std::to_string(delivered) +
                       " delivered, " + std::to_string(queued) + " still queued; " + std::to_string(credits_sent) +
                       " credits posted, " + std::to_string(credits_got) + " received, " + std::to_string(owed) +
                       " owed; " + std::to_string(refused) + " packets refused at a far end (" + first + ")"});
}

// Exact time order (router.link-order = exact): at the end nothing is left
// in a link's queues or a network interface's delivery lanes, every credit
// is back, no packet in flight, none refused where its sender could not be
// told. A packet lost between hops cannot hide.
void check_hop_events(System& sys, std::vector<Violation>& out) {
    const HopQueue* q = sys.hops();
    if (!q) return;
    std::size_t waiting = 0, credits = 0;
    std::uint64_t refused = 0;
    std::string first;
    auto look = [&](const Link& l) {
        const std::size_t w = l.exact_waiting(), c = l.exact_credits_out();
        const std::uint64_t r = l.exact_refused();
        waiting += w, credits += c, refused += r;
        if (first.empty() && (w || c || r))
            first = std::string(l.name()) + ": " + std::to_string(w) + " waiting, " + std::to_string(c) +
                    " flits of credit not back, " + std::to_string(r) + " refused";
    };
    for (std::size_t i = 0; i < sys.size(); ++i) {
        if (!sys.present(i)) continue;
        look(sys.node(i).inject);
        look(sys.node(i).eject);
    }
    for (const auto& l : sys.links())
        if (l) look(*l);
    // The far ends here of links cut between ranks: every packet message
    // taken reached its router.
    for (const auto& e : sys.hop_far_ends())
        if (const std::uint64_t a = e->far().arriving()) {
            waiting += a;
            if (first.empty()) first = std::string(e->name()) + ": " + std::to_string(a) + " packet(s) still arriving";
        }
    if (first.empty() && q->packets_in_flight() == 0) return;
    out.push_back({"hop-events", "exact time order: " + std::to_string(q->packets_in_flight()) +
                                     " packet(s) still in flight at the end, " + std::to_string(waiting) +
                                     " waiting at a link or an interface, " + std::to_string(credits) +
                                     " flits of credit not back, " + std::to_string(refused) +
                                     " refused by the interface at the far end" +
                                     (first.empty() ? std::string() : " (" + first + ")")});
}

// The printed figures against physical limits: link utilisation, the
// end-to-end span against the post window, throughput against the
// receivers' payload ceiling.
void check_figures(System& sys, const StatRegistry& stats, const RunFigures& f, std::vector<Violation>& out) {
    const double fraction = best_payload_fraction(sys.any_node().dma.packet_size());
    const double ceiling_bps = payload_ceiling_bps(sys, stats);
    if (f.link_util_max > 1 + kSlack)
        out.push_back({"link-utilisation",
                       "link_util_max = " + num(f.link_util_max) + ": a link was busier than the workload's span"});
    // The end-to-end span holds the post window: its throughput can only be
    // lower (a workload whose first action came after its first post, or a
    // span that lost its start, would be reported too fast).
    if (f.throughput_gbps > f.post_window_gbps * (1 + kSlack) + 1e-9)
        out.push_back({"end-to-end-span", "end-to-end throughput " + num(f.throughput_gbps) +
                                              " Gb/s is above the post window's " + num(f.post_window_gbps) +
                                              " Gb/s: the end-to-end span is shorter than the post window"});
    for (const auto& w : sys.workloads()) {
        const TransferLog& l = w->log();
        if (l.first_post != sc_core::sc_max_time() && l.first_action > l.first_post)
            out.push_back({"end-to-end-span", w->kind() + ": first post at " + num(l.first_post.to_seconds() * 1e6) +
                                                  " us, before the workload's first action at " +
                                                  num(l.first_action.to_seconds() * 1e6) + " us"});
    }
    // Throughput: never above what the receivers' links can carry as payload
    // (the post window's: the higher of the two).
    if (f.post_window_gbps * 1e9 > ceiling_bps * (1 + kSlack))
        out.push_back({"throughput-ceiling",
                       "throughput " + num(f.post_window_gbps) + " Gb/s is above the receivers' payload ceiling of " +
                           num(ceiling_bps / 1e9) + " Gb/s (the links into them x " + num(fraction) +
                           " payload per wire byte, and what the workloads "
                           "deliver without the network)"});
}

// No busy time (a link's, a DRAM channel's, a CPU activity's or a node's
// cores') below zero or not a number: time something was busy is counted
// from intervals that close after they open.
void check_busy_times(const StatRegistry& stats, std::vector<Violation>& out) {
    for (const char* suffix : {"busy_time", "cores_busy_time"})
        for (const Scalar* s : stats.scalars_ending(suffix))
            if (!(s->value() >= 0))
                out.push_back(
                    {"busy-time", stats.info(*s).name.str() + " = " + num(s->value()) + " us: a busy time below zero"});
}

}   // namespace

std::vector<Violation> check_invariants(System& sys, const StatRegistry& stats, const RunFigures& f) {
    std::vector<Violation> out;
    check_prefetch(sys, out);
    check_workloads(sys, out);
    check_memory_visibility(sys, stats, out);
    check_pin_counts(sys, out);
    check_frame_check_coverage(sys, stats, out);
    check_library(stats, out);
    check_engine_conservation(stats, out);
    check_links_energy(sys, stats, f.run_s * 1e6, out);
    check_handoff(sys, stats, out);
    check_hop_events(sys, out);
    check_shadow_ni(sys, stats, out);
    check_notify_order(sys, stats, out);
    check_remote_files(sys, out);
    check_planned_transfers(sys, out);
    check_planned_bytes(sys, out);
    check_engine_operations(sys, stats, out);
    check_figures(sys, stats, f, out);
    check_busy_times(stats, out);
    return out;
}

std::vector<Violation> check_region(System& sys, const StatRegistry& whole, const StatRegistry& region,
                                    const RegionFigures& f) {
    std::vector<Violation> out;
    const double run_s = sc_core::sc_time_stamp().to_seconds();
    // The region lies within the run, in order. Its ends are read back from
    // the summary, printed to 9 significant digits: a region that ends
    // with the run may read up to half a unit of the 9th digit past it.
    constexpr double kPrinted = 1e-8;
    if (!(f.begin_s >= 0 && f.begin_s <= f.end_s && f.end_s <= run_s * (1 + kPrinted)))
        out.push_back({"region-span", "the region of interest runs from " + num(f.begin_s * 1e6) + " us to " +
                                          num(f.end_s * 1e6) + " us, outside the run's 0 to " + num(run_s * 1e6) +
                                          " us or backwards"});
    // A part of the run did no more than the whole run: a region's
    // statistics are differences, and a wrong one shows here first.
    for (const char* suffix : {"transfers", "bytes_delivered", "packets", "flits", "transactions"}) {
        const std::uint64_t in_region = region.sum_counters(suffix), in_run = whole.sum_counters(suffix);
        if (in_region > in_run)
            out.push_back({"region-within-run", std::string("*.") + suffix + ": " + std::to_string(in_region) +
                                                    " in the region of interest, above the whole run's " +
                                                    std::to_string(in_run)});
    }
    if (f.link_util_max > 1 + kSlack)
        out.push_back(
            {"region-link-utilisation", "link_util_max = " + num(f.link_util_max) +
                                            " over the region of interest: a link was busier than it was long"});
    const double ceiling_bps = payload_ceiling_bps(sys, whole);
    if (f.throughput_gbps * 1e9 > ceiling_bps * (1 + kSlack))
        out.push_back({"region-throughput-ceiling", "throughput " + num(f.throughput_gbps) +
                                                        " Gb/s over the region of interest is above the receivers' "
                                                        "payload ceiling of " +
                                                        num(ceiling_bps / 1e9) + " Gb/s"});
    // Energy over the region: every component at least its static power
    // for the region's time, no core busier than the region was long.
    for (const auto& d : energy_violations(energy_of(sys.config(), sys, region, f.stats_s)))
        out.push_back({"region-energy", d});
    return out;
}

std::string describe(const std::vector<Violation>& v) {
    std::string s;
    for (const auto& x : v) s += x.invariant + ": " + x.detail + "\n";
    return s;
}

}   // namespace vrdmasim
