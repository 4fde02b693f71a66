// Section [rdma]: the parameters of the RDMA user library (the process API,
// buffer guard, physical-address mode, prefetch advice; the registration
// strategies' keys are theirs: library/rdma/strategy/strategy.cpp); and
// section [node], the processes a node runs.
#include "library/rdma/params.hpp"

#include "models/common/noise.hpp"
#include "library/rdma/strategy/strategy.hpp"

namespace vrdmasim {

RdmaParams::RdmaParams() : set("rdma", "RDMA user library (runs on the node's Cortex-A53)"), policies("rdma", "") {
    declare_process_api();
    // The registration strategies' keys come next in section rdma
    // (StrategyParams); then the library's other policies, in `policies`.
    declare_buffer_guard();
    declare_physical_mode();
    declare_prefetch();
}

// The process API: posting and completion (process.hpp).
void RdmaParams::declare_process_api() {
    post_overhead =
        set.time("post-overhead", "50ns",
                 "library time to build and post one descriptor, besides its register stores (*calibrated*: "
                 "about 75 A53 cycles; with the other defaults the 64 B one-hop pingpong gives the prototype's "
                 "1.3 us, arXiv 2307.09371; configs/exanest-prototype.ini)")
            .range("0ps", "1ms");
    completion_overhead =
        set.time("completion-overhead", "50ns",
                 "library time to handle a completion or notification once seen, besides reading its record "
                 "(*calibrated* with rdma.post-overhead)")
            .range("0ps", "1ms");
    completion =
        set.choice("completion", "poll", {"interrupt", "poll", "counter", "handler"},
                   "how a process learns that a transfer completed or a notification came (poll is how the "
                   "ExaNeSt latency figures are measured): interrupt (block "
                   "on the engine's interrupt: no CPU while waiting, rdma.irq-wakeup when it comes), poll "
                   "(spin reading the completion record in memory: a core busy all along), counter (spin "
                   "reading the channel's completion counter register, TX_COMPLETED, a device read that costs "
                   "dma.mmio-latency besides the bus, and read the record only when the count moves: a core "
                   "busy all along), handler (a user-defined handler: the library's handler thread, woken by the "
                   "interrupt of each completion, notification or event-counter increment after "
                   "rdma.handler-dispatch, runs the handler for rdma.handler-cpu on a core; the program "
                   "learns of it when its handler has run, without a wake-up of its own). Waiting for a number "
                   "of completions or notifications reads the "
                   "channel's counter registers (TX_COMPLETED, EVENT_COUNT, EVENT_COUNTER) in poll and counter "
                   "modes alike");
    store_issue = set.time("store-issue", "3ns",
                           "CPU time to issue a posted store (descriptor registers are Device-nGnRE, early write "
                           "acknowledgement; record clearing goes through the write buffer): a few cycles (*estimate*)")
                      .range("0ps", "1us");
    poll_interval =
        set.time("poll-interval", "50ns",
                 "period of one polling read (record or counter) while spinning (*estimate*: a load that misses "
                 "to the interconnect, issued back to back)")
            .range("1ns", "1ms");
    irq_wakeup =
        set.time("irq-wakeup", "5us",
                 "interrupt entry, handler and waking the blocked thread on a 1.5 GHz A53 (*estimate*: a few us "
                 "on Linux)")
            .range("0ps", "10ms");
    handler_dispatch = set.time("handler-dispatch", "6us",
                                "rdma.completion = handler: interrupt entry, waking the library's handler thread and "
                                "the upcall into the user's handler, CPU time on a core per wake-up (*estimate*: "
                                "rdma.irq-wakeup's 5 us plus about 1 us to deliver into user context, as a signal "
                                "handler costs on Linux); notifications that arrive meanwhile share the wake-up")
                           .range("0ps", "10ms");
    handler_cpu = set.time("handler-cpu", "200ns",
                           "rdma.completion = handler: CPU time of the user's handler per notification (*estimate*: "
                           "read the record or counter and set the program's flag, about 300 A53 cycles)")
                      .range("0ps", "10ms");
    notify = set.choice("notify", "ring", {"ring", "counter"},
                        "how the library's notifying writes are seen by the receiver: ring (EVENT_COUNT and the "
                        "receive ring, the ExaNeSt library) or counter (each also names event counter 0 of the "
                        "receiving process, DESC_FLAGS bit 2; waiting for notifications reads EVENT_COUNTER[0]; a "
                        "failed write increments no counter)");
    channels = set.integer("channels", "1",
                           "PLDMA channels the kernel gives each process (node.processes x rdma.channels <= "
                           "dma.channels); the library posts a process's transfers on them round robin, one "
                           "descriptor each, so a channel parked on a source fault holds only its own transfers. "
                           "One channel is what the ExaNeSt library gives a process (*estimate* beyond that)")
                   .range("1", "1024");
}

// The buffer guard (buffer_guard.hpp).
void RdmaParams::declare_buffer_guard() {
    buffer_guard = policies.choice(
        "buffer-guard", "none", {"none", "mprotect"},
        "what keeps the application from touching the buffers of its transfers in flight: none (a "
        "touch races with the engine); mprotect (the library protects each buffer when the transfer "
        "is posted, source and destination no access for the CPU (AP[2:1] = 00), while the engine's "
        "privileged SMMU transactions keep their access; a CPU touch faults and waits for the "
        "transfer; the access comes back at completion; library/rdma/README.md \"Buffer "
        "guard\"). Needs smmu.enabled and ni.translation = smmu; every workload but lock (docs/composition.md): the library's send and get guard one-sided transfers, the two-sided library a request's buffer from isend or irecv to completion, the file server each source it posts and its clients' receive slots");
    guard_fault =
        policies
            .time("guard-fault", "3us",
                  "rdma.buffer-guard = mprotect: CPU time of one guard fault besides the wait: the permission "
                  "fault's exception entry, do_page_fault finding no access, SIGSEGV delivery into the "
                  "library's handler, its lookup of the guarded transfer and sigreturn (*estimate*: a few us on a "
                  "1.5 GHz A53, the path lmbench's lat_sig prot measures)")
            .range("0ps", "1ms");
    guard_tlbi_page =
        policies
            .time("guard-tlbi-page", "20ns",
                  "rdma.buffer-guard = mprotect: CPU time per page of the CPU TLB invalidation each guard "
                  "mprotect does (flush_tlb_range: one TLBI VALE1IS per page, at most 512, then one ASID "
                  "flush; *estimate*: a broadcast TLBI and its DSB, tens of A53 cycles). The PTE writes and "
                  "the SMMU's invalidation are the Vm's (vm.pte-update, the MMU notifier)")
            .range("0ps", "10us");
}

// Physical-address mode (physical.hpp).
void RdmaParams::declare_physical_mode() {
    translate_page = policies
                         .time("translate-page", "100ns",
                               "library time to look up the physical address of one page when it hands the engine "
                               "physical addresses (smmu.enabled = false with a registration strategy: the \"why "
                               "pinning exists\" experiment): one 8 B entry of /proc/self/pagemap read in a batched "
                               "pread, charged per source page at each post and per destination page when the "
                               "receiver registers its area (*estimate* for a 1.5 GHz A53)")
                         .range("0ps", "1ms");
}

// Prefetch advice (prefetch.hpp).
void RdmaParams::declare_prefetch() {
    prefetch =
        policies.choice("prefetch", "none", {"none", "advise"},
                        "prefetch advice, as an on-demand-paging RDMA library offers it (ibv_advise_mr with "
                        "IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE, asynchronous): none; advise (each post advises the "
                        "buffer from its message to rdma.prefetch-distance beyond it, a receive area is advised "
                        "whole when registered; a worker on the node's cores makes the advised pages present in "
                        "order, racing the engine's faults; library/rdma/README.md \"Prefetch advice\"). Needs "
                        "processes in the VM (smmu.enabled)");
    prefetch_distance = policies
                            .size("prefetch-distance", "256KiB",
                                  "rdma.prefetch = advise: how far beyond the message being posted the library "
                                  "advises (*estimate*: a few messages of the default 64 KiB ahead, as a streaming "
                                  "prefetcher's distance)")
                            .range("0B", "1TiB");
    prefetch_call = policies
                        .time("prefetch-call", "1us",
                              "rdma.prefetch = advise: CPU time of one advice call that queues pages (the verbs "
                              "call's ioctl into the driver and queueing its work item; *estimate*: a system call "
                              "and a work-queue insertion on a 1.5 GHz A53)")
                        .range("0ps", "1ms");
}

NodeParams::NodeParams()
    : set("node", "what the kernel of each node runs"),
      processes(set.integer("processes", "1",
                            "application processes per node, each its own address space, ASID, SMMU context bank "
                            "and stream ID with rdma.channels PLDMA channels; process p of every node forms job p "
                            "(protection domain p + 1) and runs its own copy of the workload (library/rdma/README.md "
                            "\"Many processes and channels\"). At most the SMMU's 16 context banks; needs "
                            "smmu.enabled for more than one")
                    .range("1", "16")) {}

void RdmaParams::declare_params(ParamRegistry& reg) {
    NoiseParams::declare_params(reg);
    reg.add(params_of<NodeParams>().set);
    reg.add(params_of<RdmaParams>().set);
    reg.add(params_of<StrategyParams>().set);
    reg.add(params_of<RdmaParams>().policies);
}

}   // namespace vrdmasim
