// RdmaProcess: a user process on one node together with the RDMA user library it
// calls (post a write, wait for completions). Its CPU reaches the node's bus
// through `cpu`: descriptors are posted with MMIO register writes and
// completion records are read from memory, each a timed transaction.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include "src/core/context.hpp"
#include "src/core/lazy_event.hpp"
#include "src/core/metrics.hpp"
#include "models/dma/pldma.hpp"
#include "models/os/cpu.hpp"
#include "models/os/vm.hpp"
#include "library/rdma/buffer_guard.hpp"
#include "library/rdma/params.hpp"
#include "library/rdma/physical.hpp"
#include "library/rdma/prefetch.hpp"
#include "library/rdma/registrar.hpp"

namespace vrdmasim {

// Thrown by RdmaProcess::alloc when the buffers asked for do not fit.
class OutOfMemory : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// What a program tells the kernel about its buffers' huge pages
// (workload.madvise): nothing, MADV_HUGEPAGE or MADV_NOHUGEPAGE.
enum class BufferAdvice { None, HugePage, NoHugePage };
// "none" | "hugepage" | "nohugepage" (the parameter's choices).
BufferAdvice buffer_advice(const std::string& name);

// A network atomic's operation (DESC_OP 2, 3, 4).
enum class AtomicOp { FetchAdd, CompareSwap, Swap };

class RdmaProcess : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<RdmaProcess> cpu;

    // Summary columns of the library's waits and handlers.
    static void declare_metrics(MetricRegistry& reg);
    RdmaProcess(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group, unsigned node,
                Pldma& dma, std::uint64_t mmio_base, std::uint64_t heap_base, std::uint64_t heap_size);

    // The program this process runs; set before simulation starts.
    std::function<void(RdmaProcess&)> program;

    unsigned node() const { return node_; }
    const std::string& group() const { return group_; }
    // This process's current time (simulation time plus its local offset).
    // (Of the calling thread: the program's, or a library thread's of its
    // own, enter_thread.)
    sc_core::sc_time now() const { return sc_core::sc_time_stamp() + qk().get_local_time(); }
    // The calling thread (sc_spawn'ed by the library for this process, e.g.
    // a non-blocking collective's: library/collectives) keeps a clock of its
    // own, starting at `start` (the spawning thread's now()), so that it and
    // the program's thread each run in their own time, as two threads of one
    // process do on the node's cores. leave_thread() when it ends (its clock
    // synchronised first).
    void enter_thread(sc_core::sc_time start);
    void leave_thread();
    // In-call progress (collective.progress = in-call: library/collectives
    // README "Non-blocking collectives"). While an InLibrary is in scope on
    // the program's thread (not on a library thread: enter_thread), the
    // program is inside a call of a user library (the two-sided library's,
    // the collectives'): an instant for a test, an interval for a wait.
    // await_library_call(), on a library thread, waits until the program is
    // inside such a call at the thread's time or later, as libnbc's schedule
    // advances a round only inside an MPI call of the program's.
    class InLibrary {
    public:
        explicit InLibrary(RdmaProcess& p);
        ~InLibrary();
        InLibrary(const InLibrary&) = delete;
        InLibrary& operator=(const InLibrary&) = delete;

    private:
        RdmaProcess* p_;   // null on a library thread
    };
    void await_library_call();
    // Spend `t` of CPU time.
    void compute(sc_core::sc_time t);
    // Spend `t` of CPU time on work of `activity` (its own row of the CPU
    // track and of the node's CPU statistics), e.g. "msg-copy".
    void compute(const char* activity, sc_core::sc_time t) { run_on_core(activity, t); }
    // The process's core was busy with `activity` from `start` to now (a
    // spin loop whose loads moved the clock): its CPU track and statistics.
    void busy_since(const char* activity, sc_core::sc_time start);

    // Run as process `pid` of `vm`: buffers are mmap()ed virtual memory and
    // the engine reaches them through the SMMU. Without it (smmu.enabled =
    // false) buffers are physically contiguous DMA memory from a reserved
    // region, as dma_alloc_coherent gives a driver.
    void attach_process(Vm& vm, int pid);
    // The program starts once start() has been called (after the node's
    // kernel has set the process up); before that it waits.
    void start();
    // The PLDMA channels the kernel gave this process (their register
    // pages): `count` (rdma.channels) from `first`. Transfers are spread over
    // them round robin, one descriptor each, so a channel parked on a fault
    // holds only its own transfers; notifications come to the first (the
    // lowest-numbered channel of the process's protection domain receives).
    // Then the node's cores that its work runs on (without them, CPU time
    // only advances the process's clock).
    void set_channels(unsigned first, unsigned count);
    void set_channel(unsigned channel) { set_channels(channel, 1); }
    unsigned channel() const { return channel_; }
    unsigned channel_count() const { return channel_count_; }
    // rdma.channels: channels the kernel gives each process.
    unsigned channels_per_process() const { return channels_per_process_; }
    // Descriptors this process posted on its k-th channel (k < channel_count()).
    std::uint64_t posted_on(unsigned k) const { return posted_on_.at(k); }
    void set_cpu(CpuCores& cpu) { cores_ = &cpu; }
    // Bytes the process could map at most (checked before simulation).
    void set_capacity(std::uint64_t bytes) { capacity_ = bytes; }
    std::uint64_t capacity() const { return capacity_; }
    // Synchronise this process's local time, then wait on `ev` until
    // `done()` holds (checked first: a notification while this process was
    // still catching up with its local time is not lost).
    void wait_until(const std::function<bool()>& done, sc_core::sc_event& ev);
    bool is_virtual() const { return vm_ != nullptr; }
    // Physical-address mode (library/rdma/physical.hpp: smmu.enabled =
    // false with a registration strategy): the process lives in the VM, and
    // the library hands the engine physical addresses, looked up at post
    // (sources, one descriptor per physically contiguous run), when the
    // receiver registers its area (destinations, published in `keys`), and
    // when its records and ring are locked. Set before the workload is built.
    void set_physical(PhysicalKeys& keys);
    bool hands_physical() const { return physical_; }
    int pid() const { return pid_; }
    Vm* vm() const { return vm_; }

    // Memory for buffers and records (page aligned). `populate`: fault every
    // page in now (MAP_POPULATE); otherwise the first touch, by the CPU or the
    // engine, faults. `advice` (virtual memory only): madvise() the mapping
    // MADV_HUGEPAGE or MADV_NOHUGEPAGE before any page is faulted in (mmap,
    // madvise, then MADV_POPULATE_WRITE when populating, as a program must to
    // get huge pages under vm.thp = madvise). Throws OutOfMemory when it does
    // not fit.
    std::uint64_t alloc(std::uint64_t bytes, bool populate = true, BufferAdvice advice = BufferAdvice::None);
    // Memory the engine writes records into (completion records, the
    // notification ring): mapped, populated and mlock()ed, as RDMA libraries
    // keep their completion queues, so reclaim never takes it from under the
    // engine. Throws OutOfMemory when it cannot be locked either.
    std::uint64_t alloc_locked(std::uint64_t bytes);
    // A buffer at the program's own address `va` (page aligned), as a real
    // program's buffers are where its allocator put them: mapped there
    // (MAP_FIXED_NOREPLACE, not populated: the first touch faults) and
    // registered as alloc() registers. Throws OutOfMemory when the range
    // cannot be mapped (already mapped: EEXIST). Virtual memory only.
    std::uint64_t alloc_at(std::uint64_t va, std::uint64_t bytes);
    // munmap() of [va, va + bytes) (page aligned), timed as the kernel's:
    // the MMU notifiers invalidate the SMMU's translations and the
    // strategy's registrations there. Virtual memory only.
    void unmap(std::uint64_t va, std::uint64_t bytes);
    // Every region alloc() returned, in order: (address, bytes).
    const std::vector<std::pair<std::uint64_t, std::uint64_t>>& allocations() const { return allocations_; }

    // --- RDMA user library
    // Set up the receive notification ring (once, before transfers arrive).
    void setup_rx_ring(std::uint32_t entries);
    // Post an RDMA write on this process's channel; false if the engine
    // refused the descriptor. `flags`: kFlagNotify, kFlagNotifyPacket. The
    // completion record at `compl_addr` (if any) is cleared first.
    // `counter`: with kFlagCounter in `flags`, the receiver's event counter
    // the write increments once it has landed (DESC_COUNTER).
    bool post_write(std::uint64_t src, unsigned dst_node, std::uint64_t dst, std::uint64_t len, std::uint64_t tag,
                    std::uint64_t compl_addr, std::uint32_t flags, std::uint32_t counter = 0);
    // RDMA read: `len` bytes at `remote_src` in the process of this job on
    // node `src_node` into `local_dst` here; the completion record (at
    // compl_addr, cleared first) is written once the data is in local memory.
    // False if the engine refused the descriptor (queue full). No flag is
    // defined for reads: `flags` other than 0, or `src_node` this node,
    // throw std::invalid_argument (the engine would refuse them).
    bool post_read(unsigned src_node, std::uint64_t remote_src, std::uint64_t local_dst, std::uint64_t len,
                   std::uint64_t tag, std::uint64_t compl_addr, std::uint32_t flags = 0);
    // A network atomic on the 8 bytes at `addr` (8-aligned) in the process
    // of this job on node `node` (may be this node): executed by that node's
    // engine; the completion record's `addr` field holds the old value.
    // FetchAdd adds `operand`; Swap writes it; CompareSwap writes it if the
    // old value equals `compare`. False if the engine refused the doorbell
    // (queue full, misaligned). The record at `compl_addr` is cleared first.
    bool post_atomic(AtomicOp op, unsigned node, std::uint64_t addr, std::uint64_t operand, std::uint64_t compare,
                     std::uint64_t tag, std::uint64_t compl_addr);
    // Wait, in the way rdma.completion says (interrupt, poll, counter), until
    // `n` completions / `n` notifications have arrived on this channel in
    // total (notifications: EVENT_COUNT, so no ring is needed).
    void wait_tx(std::uint64_t n);
    void wait_rx(std::uint64_t n);
    // Event counters (dma.event-counters per channel; a write names one with
    // post_write's `counter`): wait, in the way rdma.completion says, until
    // EVENT_COUNTER[i] of this process's first channel (where its
    // notifications come) reads at least `target`; read it; write it.
    void wait_counter(unsigned i, std::uint64_t target);
    std::uint64_t read_counter(unsigned i);
    // How many event counters a channel has (dma.event-counters).
    unsigned event_counters() const;
    void reset_counter(unsigned i, std::uint64_t value = 0);
    // rdma.notify = counter: the library's notifying writes also name event
    // counter 0 of the receiver, and wait_rx / rx_events use it.
    bool notify_by_counter() const { return notify_counter_; }
    // Notifications delivered to this channel so far (one read of its
    // EVENT_COUNT register, without waiting): to look at the ring while
    // doing something else.
    std::uint64_t rx_events();
    // Completions of this channel's descriptors so far (one read of its
    // TX_COMPLETED register, without waiting).
    std::uint64_t tx_completions();
    // Wait until the completion record at `addr` has been written (its
    // status is no longer 0: completions may come out of order), and
    // return it.
    CompletionRecord wait_record(std::uint64_t addr);
    CompletionRecord read_record(std::uint64_t addr);
    // An event loop's wait (select): until `ready()` holds, looked at first
    // and again at each completion record of the process's channels and at
    // each notification or counted write it receives, the way
    // rdma.completion says (a spinning core, an interrupt's wake-up, the
    // handler). For a program that waits for whichever of several things
    // comes first: its transfers' records (record_written) and the
    // messages it expects (msg::Endpoint::test).
    void wait_event(const std::function<bool()>& ready, const char* what);
    // A timed user load / (posted) store of the 8 bytes at `addr` of this
    // process's memory (faulting the page in if needed).
    std::uint64_t load(std::uint64_t addr);
    void store(std::uint64_t addr, std::uint64_t value);
    // Words the engine writes into this process's memory without a
    // notification, which the program polls (per-peer completion flags):
    // watch them once, zeroed, before any is written; then load_polled
    // is a timed user load that sees a word's value as of the load's time
    // (never a value the engine writes later in simulated time).
    void watch_polled(std::uint64_t va, std::uint64_t len);
    // `written`, when given: when the engine wrote the value seen (zero:
    // it never wrote the word).
    std::uint64_t load_polled(std::uint64_t addr, sc_core::sc_time* written = nullptr);
    // Bring this process's clock back to the simulation's (a wait): after
    // it, every write an engine does will be dated no earlier.
    void sync_time() { qk().sync(); }
    // Move this process's clock to `t` (a call it made, e.g. to its Vm,
    // returned then); nothing if `t` is not later than now().
    void advance_to(sc_core::sc_time t) {
        if (t > now()) qk().set(t - sc_core::sc_time_stamp());
        if (qk().need_sync()) qk().sync();
    }
    CompletionRecord read_rx_record(std::uint64_t index);
    // Give ring entry `index` back (a posted store of a blank record), so
    // that a record not written yet reads as status 0 on the next lap: the
    // notification count says how many records were raised, not that all
    // before it are written (a record whose page faulted is written later).
    void clear_rx_record(std::uint64_t index);
    // Whether the page holding `addr` is in memory (always, without a VM).
    bool resident(std::uint64_t addr) const;
    // Whether it holds data: resident, or swapped out.
    bool populated(std::uint64_t addr) const;

    // --- The library's registration strategies (rdma.strategy; see
    // library/rdma/strategy). Without a VM (smmu.enabled = false) buffers
    // are physical DMA memory and need no registration.
    // One message: registered as rdma.strategy says and posted (pipeline:
    // chunk by chunk, registering chunk k+1 while chunk k is on the wire),
    // each part with its completion record at records + 32 * part.
    struct Message {
        std::uint64_t src = 0, dst = 0, len = 0, tag = 0, records = 0;
        unsigned dst_node = 0;
        std::uint32_t flags = 0;
        std::uint32_t counter =
            0;   // with kFlagCounter in flags: the receiver's event counter the last part increments
        // Filled by send():
        unsigned parts = 0;   // descriptors posted
        bool failed = false;   // a registration failed (parts not posted)
        unsigned chunks = 0;   // physical-address mode: registration chunks acquired
        std::uint64_t guard = 0;   // rdma.buffer-guard = mprotect: the source's guard (0: none)
        VmError error = VmError::Ok;
    };
    // Completion records a message of `len` bytes needs.
    std::uint64_t records_for(std::uint64_t len) const;
    // Register and post `m`. Descriptors the engine refuses (queue full) are
    // posted again after the next completion. False if a registration
    // failed (m.failed; what was posted before still completes).
    bool send(Message& m);
    // Wait for every part's record, deregister the source, and return the
    // message's outcome: ok only if every part was registered and is ok.
    CompletionRecord complete(Message& m);
    // One RDMA read of a message (`len` bytes at `remote_src` of node
    // `src_node` into `local_dst`, record at `record`), posted again after
    // the next completion while the channel's queue is full. No registration
    // per message: a read's areas are registered once for the run
    // (register_receive here, register_read_source at the source node).
    void get(unsigned src_node, std::uint64_t remote_src, std::uint64_t local_dst, std::uint64_t len, std::uint64_t tag,
             std::uint64_t record);
    // A receive area the engine will write for the whole run: registered
    // once (pin, pin-cache, pipeline: pinned; prefault: populated). False
    // on failure (e.g. beyond RLIMIT_MEMLOCK).
    bool register_receive(std::uint64_t va, std::uint64_t len);
    // A user buffer the engine reads (`write` false) or writes for one
    // transfer, registered as rdma.strategy says until deregister() (the
    // two-sided library's rendezvous buffers). False on failure.
    bool register_buffer(std::uint64_t va, std::uint64_t len, bool write, VmError* error = nullptr);
    void deregister(std::uint64_t va, std::uint64_t len);
    // 4 KiB pages this process's registrations pinned so far (0 without a VM).
    std::uint64_t pages_pinned() const { return registrar_ ? registrar_->pages_pinned() : 0; }
    // The same for an area the engine will read for the whole run: the
    // source other nodes' RDMA reads fetch (registered for reading).
    bool register_read_source(std::uint64_t va, std::uint64_t len);
    // End of the program: unpin what is still registered (pin-cache).
    void finish_registrations();

    // --- rdma.buffer-guard = mprotect (guard.cpp; library/rdma/README.md
    // "Buffer guard"): send() guards the source, get() the destination, and
    // the access comes back once the transfer's records are seen (complete(),
    // wait_record()). A user access to a guarded page faults and waits.
    // The library's guard (nullptr without the guard or without a VM).
    const BufferGuard* buffer_guard() const { return guard_.get(); }
    // The library's prefetch advice (nullptr without it or without a VM).
    const Prefetcher* prefetcher() const { return prefetch_.get(); }
    // Whether the library guards the buffers of transfers in flight (known
    // once the process is attached).
    bool guards_buffers() const { return guard_ != nullptr; }
    // A user store (as store()) that returns when it was performed: after
    // the guard fault's wait, if it took one.
    sc_core::sc_time store_at(std::uint64_t addr, std::uint64_t value);
    // When the engine wrote the completion record at `addr` (false if not yet).
    bool record_written(std::uint64_t addr, sc_core::sc_time& at) const;
    // A guard a library above this one installs itself (the two-sided
    // library: a send buffer from isend, a receive buffer from irecv, until
    // the request completes), 0 without the guard: `wait` is how a touch of
    // it waits (the library's progress until the request completes, which
    // calls unguard). Pages shared with other guards stay guarded until
    // the last is lifted.
    std::uint64_t guard(std::uint64_t va, std::uint64_t len, bool engine_writes, std::function<void()> wait);
    void unguard(std::uint64_t id) { guard_lift(id); }
    // A guard over a transfer the program posted itself (post_write,
    // post_read): lifted when wait_record sees `record` (0 without the
    // guard); a touch waits for that record.
    std::uint64_t guard_until(std::uint64_t va, std::uint64_t len, bool engine_writes, std::uint64_t record) {
        if (!guard_ || len == 0) return 0;
        return guard_install(va, len, engine_writes, {record});
    }

    // Untimed access to this process's memory (test harness: fill sources,
    // check destinations), by virtual address when attached to a process,
    // else physical. Writing faults pages in (untimed: the program filling
    // its buffer); reading changes nothing (swapped pages are read from swap).
    // Returns false on an unmapped address.
    bool debug_write(std::uint64_t addr, const unsigned char* data, std::uint64_t len);
    bool debug_read(std::uint64_t addr, unsigned char* data, std::uint64_t len);
    // The same with the data pattern's bytes from `at` (Vm::write_user_pattern,
    // Vm::peek_user_pattern): debug_check_pattern's `first` is the first byte
    // that differs from them (`len`: none).
    bool debug_write_pattern(std::uint64_t addr, std::uint64_t len, PatternPlace at);
    bool debug_check_pattern(std::uint64_t addr, std::uint64_t len, PatternPlace at, std::uint64_t& first);
    // Untimed write to the pages that are in memory only (all of them
    // without a VM): a cold or swapped-out page is left as it is.
    bool debug_write_resident(std::uint64_t addr, const unsigned char* data, std::uint64_t len);

private:
    void run();
    // Wait for `ready()` (checked first, then at each of the signal's
    // records), the way rdma.completion says; charges the CPU it costs.
    void wait_for(CompletionSignal& sig, const std::function<bool()>& ready, const char* what);
    // wait_for over one signal or several (completion.cpp).
    template <class Signals>
    void wait_on(Signals& sigs, const std::function<bool()>& ready, const char* what);
    std::vector<CompletionSignal*> event_signals_;   // wait_event's: made at its first call
    // Register access on channel `c` (default: the first).
    std::uint64_t mmio_read(std::uint64_t off, unsigned len) { return mmio_read_on(channel_, off, len); }
    void mmio_write(std::uint64_t off, std::uint64_t v, unsigned len) { mmio_write_on(channel_, off, v, len); }
    std::uint64_t mmio_read_on(unsigned c, std::uint64_t off, unsigned len);
    void mmio_write_on(unsigned c, std::uint64_t off, std::uint64_t v, unsigned len);
    // The channel the completion record at `addr` was last posted with.
    unsigned record_channel(std::uint64_t addr) const;
    // Post one descriptor of operation `op` on the process's next channel
    // (round robin; `compare`: DESC_CMP, for a compare-and-swap). False if
    // the channel refused it (the channel to wait on: last_post_).
    bool post_descriptor(DescOp op, std::uint64_t src, unsigned node, std::uint64_t dst, std::uint64_t len,
                         std::uint32_t flags, const std::uint64_t* compare, std::uint64_t compl_addr, std::uint64_t tag,
                         std::uint32_t counter = 0);
    // Stage DESC_OP = `op` on channel `c` unless it holds it already (the
    // library keeps a shadow of each channel's register: a write-only
    // program never writes it).
    void stage_op(unsigned c, DescOp op);
    // A timed access through `cpu`; `posted`: a store the CPU does not wait for.
    bool access(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data, unsigned len, bool posted = false);
    // A user load or store of one word of this process's memory (faults it in if needed).
    std::uint64_t physical(std::uint64_t addr, bool write);
    // After a fault on addr: if its page waits for an SSD read, sleep until
    // the read completes and the page is mapped (models/os/inflight.hpp).
    void await_read(std::uint64_t addr);
    // `t` of work of `activity` on a core from now(); the process's clock moves to its end.
    void run_on_core(const char* activity, sc_core::sc_time t);
    // Physical-address mode: the frame of va's page for the engine now
    // (faulted in first if not present, as the library touching it would),
    // noted in keys_ as handed to this node's engine; costs rdma.translate-page.
    std::uint64_t lookup_frame(std::uint64_t va, bool write);
    // The frame of a page of this process's locked memory (records, ring),
    // looked up when it was locked.
    std::uint64_t locked_frame(std::uint64_t va) const;
    // send() in physical-address mode.
    bool send_physical(Message& m);
    // Registration chunks of a message of `len` bytes (pipeline: rdma.pipeline-chunk pieces).
    std::uint64_t chunks_for(std::uint64_t len) const;
    // Registrar calls from now(); the process's clock moves to their end.
    RegResult reg_acquire(std::uint64_t va, std::uint64_t len, bool write);
    void reg_release(std::uint64_t va, std::uint64_t len);
    enum class Completion { Interrupt, Poll, Counter, Handler };
    // rdma.completion = handler (handler.cpp): the handler thread, woken
    // by the interrupt of every record or counter increment on the
    // process's signals, runs the user's handler for each on a core.
    void handler_thread();
    // Watch the signals of the process's channels (set_channels).
    void observe_signals();
    // Whether a record of `sig` visible by `t` has not been handled yet.
    bool unhandled_by(CompletionSignal& sig, sc_core::sc_time t) const;
    // The wait's end in handler mode: until the handler ran for every record
    // of `sig` visible when the wait saw what it waited for (`looked`).
    void wait_handled(CompletionSignal& sig, sc_core::sc_time looked);
    std::multimap<sc_core::sc_time, CompletionSignal*> handler_queue_;   // notifications not handled yet
    std::map<CompletionSignal*, std::multiset<sc_core::sc_time>> unhandled_;
    LazyEvent handler_ev_, handled_ev_;   // made when first waited for or notified
    sc_core::sc_time handler_dispatch_, handler_cpu_;
    Counter* handler_runs_ = nullptr;
    Counter* handler_wakeups_ = nullptr;
    Scalar& wait_cpu_us_;   // CPU time the detection mechanism cost (spinning, wake-ups, handlers)
    Histogram& wait_us_;   // time the program waited, per wait
    bool notify_counter_ = false;   // rdma.notify = counter

    const unsigned node_;
    const std::string group_;
    Vm* vm_ = nullptr;
    int pid_ = 0;
    bool started_ = false;
    LazyEvent start_ev_;   // made when first waited for or notified
    std::uint64_t capacity_ = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> allocations_;
    Pldma& dma_;
    const std::uint64_t mmio_base_;
    std::uint64_t heap_next_, heap_end_;
    std::uint64_t rx_ring_ = 0;
    std::uint32_t rx_entries_ = 0;
    const SimContext& ctx_;
    unsigned channel_ = 0;   // the first of its channels
    unsigned channel_count_ = 1;
    unsigned next_post_ = 0;   // round robin over its channels: index of the next one posted on
    unsigned last_post_ = 0;   // channel of the last post (refused: the one to wait on)
    const unsigned channels_per_process_;
    std::vector<std::uint64_t> posted_on_;
    std::unordered_map<std::uint64_t, unsigned> record_channel_;   // completion record -> channel
    std::vector<DescOp> staged_ops_ = std::vector<DescOp>(1, DescOp::Write);   // each channel's DESC_OP (reset: Write)
    CpuCores* cores_ = nullptr;
    const StrategyKind& strategy_;
    const std::uint64_t pipeline_chunk_;
    std::unique_ptr<Registrar> registrar_;   // with a VM
    std::unique_ptr<BufferGuard> guard_;   // with a VM and rdma.buffer-guard = mprotect
    std::uint64_t guard_install(std::uint64_t va, std::uint64_t len, bool engine_writes,
                                std::vector<std::uint64_t> records, std::function<void()> wait = {});
    void guard_lift(std::uint64_t id);
    void guard_record_seen(std::uint64_t record);
    void guard_fault(std::uint64_t addr, bool write);
    const bool physical_;   // physical-address mode
    PhysicalKeys* keys_ = nullptr;
    sc_core::sc_time translate_page_;
    std::unordered_map<std::uint64_t, std::uint64_t> locked_frames_;   // locked page -> its frame
    LazyEvent background_ev_;   // made when first used; pin-deferred: a buffer was allocated
    void registration_thread();
    // rdma.prefetch = advise (prefetch.cpp): the advice for [va, va + len)
    // and, `ahead`, rdma.prefetch-distance beyond it within its buffer;
    // the worker thread populates what was advised.
    std::unique_ptr<Prefetcher> prefetch_;   // with a VM and rdma.prefetch = advise
    LazyEvent prefetch_ev_;   // made when first used: pages were advised
    void prefetch_advise(std::uint64_t va, std::uint64_t len, bool ahead);
    void prefetch_thread();
    const sc_core::sc_time prefetch_call_;
    // After a buffer is mapped: listed in allocations(), and registered as
    // pin-static / pin-deferred register at allocation.
    void allocated(std::uint64_t va, std::uint64_t len, std::uint64_t bytes);
    bool allocating_locked_ = false;   // inside alloc_locked: no buffer registration
    Completion completion_;
    sc_core::sc_time poll_interval_, store_issue_, irq_wakeup_;
    Counter& polls_;
    Counter& wakeups_;
    Counter& rx_slot_waits_;
    Counter& early_;   // completion records seen before the engine had written them (a causality bug)
    Counter& counter_reads_;
    const sc_core::sc_time post_overhead_, completion_overhead_;
    mutable tlm_utils::tlm_quantumkeeper qk_;   // the program's thread's clock
    // In-call progress: the program's library calls in progress (nested
    // ones counted), its calls so far, library threads awaiting one.
    unsigned library_depth_ = 0, library_awaiting_ = 0;
    std::uint64_t library_calls_ = 0;
    LazyEvent library_called_;
    // The clocks of the library's threads (enter_thread), by thread.
    std::map<const sc_core::sc_object*, std::unique_ptr<tlm_utils::tlm_quantumkeeper>> thread_qks_;
    // The calling thread's clock.
    tlm_utils::tlm_quantumkeeper& qk() const { return thread_qks_.empty() ? qk_ : thread_qk(); }
    tlm_utils::tlm_quantumkeeper& thread_qk() const;
    tlm::tlm_generic_payload gp_;
    Tracer& tracer_;
    Tracer::Track track_;
};

}   // namespace vrdmasim
