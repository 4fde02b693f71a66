#include "workloads/app.hpp"

#include "core/sim_params.hpp"
#include "models/common/noise.hpp"

#include "core/format.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace vrdmasim {

using sc_core::sc_time;

AppParams::AppParams()
    : set("rdma", "RDMA user library (runs on the node's Cortex-A53)"),
      post_overhead(set.time("post-overhead", "50ns",
                             "library time to build and post one descriptor, besides its register stores (*calibrated*: "
                             "about 75 A53 cycles; with the other defaults the 64 B one-hop pingpong gives the prototype's "
                             "1.3 us, arXiv 2307.09371; configs/exanest-prototype.ini)")
                        .range("0ps", "1ms")),
      completion_overhead(set.time("completion-overhead", "50ns",
                                   "library time to handle a completion or notification once seen, besides reading its record "
                                   "(*calibrated* with rdma.post-overhead)")
                              .range("0ps", "1ms")),
      completion(set.choice("completion", "poll", {"interrupt", "poll", "counter", "handler"},
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
                            "modes alike")),
      store_issue(set.time("store-issue", "3ns",
                           "CPU time to issue a posted store (descriptor registers are Device-nGnRE, early write "
                           "acknowledgement; record clearing goes through the write buffer): a few cycles (*estimate*)")
                      .range("0ps", "1us")),
      poll_interval(set.time("poll-interval", "50ns",
                             "period of one polling read (record or counter) while spinning (*estimate*: a load that misses "
                             "to the interconnect, issued back to back)")
                        .range("1ns", "1ms")),
      irq_wakeup(set.time("irq-wakeup", "5us",
                          "interrupt entry, handler and waking the blocked thread on a 1.5 GHz A53 (*estimate*: a few us "
                          "on Linux)")
                     .range("0ps", "10ms")),
      handler_dispatch(set.time("handler-dispatch", "6us",
                                "rdma.completion = handler: interrupt entry, waking the library's handler thread and "
                                "the upcall into the user's handler, CPU time on a core per wake-up (*estimate*: "
                                "rdma.irq-wakeup's 5 us plus about 1 us to deliver into user context, as a signal "
                                "handler costs on Linux); notifications that arrive meanwhile share the wake-up")
                           .range("0ps", "10ms")),
      handler_cpu(set.time("handler-cpu", "200ns",
                           "rdma.completion = handler: CPU time of the user's handler per notification (*estimate*: "
                           "read the record or counter and set the program's flag, about 300 A53 cycles)")
                      .range("0ps", "10ms")),
      notify(set.choice("notify", "ring", {"ring", "counter"},
                        "how the library's notifying writes are seen by the receiver: ring (EVENT_COUNT and the "
                        "receive ring, the ExaNeSt library) or counter (each also names event counter 0 of the "
                        "receiving process, DESC_FLAGS bit 2; waiting for notifications reads EVENT_COUNTER[0]; a "
                        "failed write increments no counter)")),
      channels(set.integer("channels", "1",
                           "PLDMA channels the kernel gives each process (node.processes x rdma.channels <= "
                           "dma.channels); the library posts a process's transfers on them round robin, one "
                           "descriptor each, so a channel parked on a source fault holds only its own transfers. "
                           "One channel is what the ExaNeSt library gives a process (*estimate* beyond that)")
                       .range("1", "1024")) {}

NodeParams::NodeParams()
    : set("node", "what the kernel of each node runs"),
      processes(set.integer("processes", "1",
                            "application processes per node, each its own address space, ASID, SMMU context bank "
                            "and stream ID with rdma.channels PLDMA channels; process p of every node forms job p "
                            "(protection domain p + 1) and runs its own copy of the workload (workloads/README.md "
                            "\"Many processes and channels\"). At most the SMMU's 16 context banks; needs "
                            "smmu.enabled for more than one")
                    .range("1", "16")) {}

void App::declare_params(ParamRegistry& reg) {
    NoiseParams::declare_params(reg);       // before rdma: nothing may come between its two halves
    reg.add(params_of<NodeParams>().set);
    reg.add(params_of<AppParams>().set);    // last: section rdma continues with the Registrar's
}

App::App(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group, unsigned node,
         Pldma& dma, std::uint64_t mmio_base, std::uint64_t heap_base, std::uint64_t heap_size)
    : sc_module(name),
      cpu("cpu"),
      handler_dispatch_(ctx.config[params_of<AppParams>().handler_dispatch]),
      handler_cpu_(ctx.config[params_of<AppParams>().handler_cpu]),
      wait_cpu_us_(ctx.stats.scalar(group + ".rdma.wait_cpu", "us",
                                    "CPU time the completion and notification waits cost: spinning (poll, counter), "
                                    "interrupt wake-ups (interrupt), handler wake-ups and runs (handler)", Scalar::Kind::Sum)),
      wait_us_(ctx.stats.histogram(group + ".rdma.wait_time", "us",
                                   "time the program waited per completion or notification wait, from the call to "
                                   "seeing it (rdma.completion-overhead excluded)")),
      notify_counter_(ctx.config[params_of<AppParams>().notify] == "counter"),
      node_(node),
      group_(group),
      dma_(dma),
      mmio_base_(mmio_base),
      heap_next_(heap_base),
      heap_end_(heap_base + heap_size),
      ctx_(ctx),
      channels_per_process_(static_cast<unsigned>(ctx.config[params_of<AppParams>().channels])),
      posted_on_(1, 0),
      strategy_(strategy_from(ctx.config)),
      pipeline_chunk_(ctx.config[params_of<RegistrarParams>().pipeline_chunk]),
      physical_(physical_mode(ctx.config)),
      completion_(ctx.config[params_of<AppParams>().completion] == "poll"      ? Completion::Poll
                  : ctx.config[params_of<AppParams>().completion] == "counter" ? Completion::Counter
                  : ctx.config[params_of<AppParams>().completion] == "handler" ? Completion::Handler
                                                                      : Completion::Interrupt),
      poll_interval_(ctx.config[params_of<AppParams>().poll_interval]),
      store_issue_(ctx.config[params_of<AppParams>().store_issue]),
      irq_wakeup_(ctx.config[params_of<AppParams>().irq_wakeup]),
      polls_(ctx.stats.counter(group + ".rdma.polls", "", "polling reads while waiting (rdma.completion = poll or counter)")),
      wakeups_(ctx.stats.counter(group + ".rdma.wakeups", "", "interrupt wake-ups while waiting (rdma.completion = interrupt)")),
      rx_slot_waits_(ctx.stats.counter(group + ".rdma.rx_slot_waits", "",
                                       "receive-ring slots read while their record was still to be written (the "
                                       "engine filled a later slot first, out of order in time): the read waited")),
      early_(ctx.stats.counter(group + ".rdma.early_completions", "",
                               "completion records the library saw before the engine had written them "
                               "(must be 0: checked at the end of every run)")),
      counter_reads_(ctx.stats.counter(group + ".rdma.counter_reads", "",
                                       "reads of the channel's TX_COMPLETED register while waiting for a completion "
                                       "record (rdma.completion = counter)")),
      post_overhead_(ctx.config[params_of<AppParams>().post_overhead]),
      completion_overhead_(ctx.config[params_of<AppParams>().completion_overhead]),
      tracer_(ctx.tracer),
      track_(ctx.tracer.track(group, "app")) {
    capacity_ = heap_size;
    SC_HAS_PROCESS(App);
    SC_THREAD(run);
    if (strategy_ == Strategy::PinDeferred) SC_THREAD(registration_thread);
    if (completion_ == Completion::Handler) {
        handler_runs_ = &ctx.stats.counter(group + ".rdma.handler_runs", "",
                                           "user handler runs, one per completion, notification or counter increment "
                                           "(rdma.completion = handler)");
        handler_wakeups_ = &ctx.stats.counter(group + ".rdma.handler_wakeups", "",
                                              "handler-thread wake-ups by the interrupt (rdma.completion = handler)");
        SC_THREAD(handler_thread);
        observe_signals();
    }
}

void App::registration_thread() {
    // pin-deferred: the library's registration thread. Woken when a buffer
    // is allocated (at the allocation's time), it pins the queued buffers
    // chunk by chunk on the node's cores (Vm::pin charges them) until none
    // is left, then sleeps until the next allocation.
    for (;;) {
        while (!registrar_ || !registrar_->background_pending()) sc_core::wait(background_ev_.get());
        const sc_time t = sc_core::sc_time_stamp();
        const sc_time done = registrar_->background_step(t);
        if (done > t) sc_core::wait(done - t);
    }
}

void App::set_channels(unsigned first, unsigned count) {
    if (count == 0 || first + count > dma_.channels())
        throw std::logic_error(group_ + ": channels " + std::to_string(first) + "+" + std::to_string(count) +
                               " beyond the engine's " + std::to_string(dma_.channels()));
    channel_ = first;
    channel_count_ = count;
    next_post_ = 0;
    last_post_ = first;
    posted_on_.assign(count, 0);
    staged_ops_.assign(count, DescOp::Write);   // what a channel's DESC_OP holds after reset
    if (completion_ == Completion::Handler) observe_signals();
}

unsigned App::record_channel(std::uint64_t addr) const {
    auto it = record_channel_.find(addr);
    return it == record_channel_.end() ? channel_ : it->second;
}

void App::start() {
    started_ = true;
    start_ev_.notify(sc_core::SC_ZERO_TIME);
}

void App::wait_until(const std::function<bool()>& done, sc_core::sc_event& ev) {
    qk_.sync();
    while (!done()) sc_core::wait(ev);
}

void App::run() {
    if (!started_) sc_core::wait(start_ev_.get());
    // noise.start-skew: this process's launch comes a little after the others'.
    const sc_time skew = ctx_.config[params_of<NoiseParams>().start_skew];
    if (skew > sc_core::SC_ZERO_TIME) {
        NoiseStream draw(static_cast<std::uint64_t>(ctx_.config[params_of<SimParams>().seed]), "start-skew:" + group_, 0);
        const sc_time delay = skew * draw.uniform();
        if (delay > sc_core::SC_ZERO_TIME) sc_core::wait(delay);
    }
    if (program) program(*this);
    qk_.sync();
}

void App::compute(sc_time t) {
    if (cores_) {
        run_on_core("app", t);
        return;
    }
    qk_.inc(t);
    if (qk_.need_sync()) qk_.sync();
}

void App::run_on_core(const char* activity, sc_time t) {
    if (!cores_) {
        qk_.inc(t);
    } else {
        // The label names the span on the core's track: built only for a trace.
        const CpuCores::Slot s =
            cores_->run(activity, now(), t, tracer_.enabled() ? group_ + " " + activity : std::string());
        qk_.set(s.end - sc_core::sc_time_stamp());
    }
    if (qk_.need_sync()) qk_.sync();
}

void App::attach_process(Vm& vm, int pid) {
    vm_ = &vm;
    pid_ = pid;
    if (!cores_) throw std::logic_error(group_ + ": attach_process before set_cpu");
    registrar_ = std::make_unique<Registrar>(ctx_, group_ + ".rdma", vm, pid, *cores_);
    Registrar* r = registrar_.get();
    vm.add_invalidate([r](int p, std::uint16_t asid, std::uint64_t va, std::uint64_t len, sc_time at) {
        return r->invalidate(p, asid, va, len, at);
    });
    if (buffer_guard_on(ctx_.config)) guard_ = std::make_unique<BufferGuard>(ctx_, group_ + ".rdma.guard", vm, pid);
}

RegResult App::reg_acquire(std::uint64_t va, std::uint64_t len, bool write) {
    if (!registrar_) return RegResult{true, VmError::Ok, now()};
    const RegResult r = registrar_->acquire(va, len, write, now());
    if (r.done > now()) qk_.set(r.done - sc_core::sc_time_stamp());
    if (qk_.need_sync()) qk_.sync();
    return r;
}

void App::reg_release(std::uint64_t va, std::uint64_t len) {
    if (!registrar_) return;
    const RegResult r = registrar_->release(va, len, now());
    if (r.done > now()) qk_.set(r.done - sc_core::sc_time_stamp());
    if (qk_.need_sync()) qk_.sync();
}

std::uint64_t App::chunks_for(std::uint64_t len) const {
    if (strategy_ != Strategy::Pipeline || len == 0) return 1;
    return (len + pipeline_chunk_ - 1) / pipeline_chunk_;
}

std::uint64_t App::records_for(std::uint64_t len) const {
    if (!physical_) return chunks_for(len);
    // Physical-address mode: one descriptor per physically contiguous run
    // of each chunk. A chunk of L bytes breaks at most at each source and
    // each destination page boundary inside it: 2 * ceil(L / 4 KiB) + 1
    // runs; summed over the chunks, at most this.
    return 2 * ((len + 4095) / 4096) + 3 * chunks_for(len);
}

bool App::send(Message& m) {
    if (physical_) return send_physical(m);
    m.parts = 0;
    m.failed = false;
    if (guard_ && m.len > 0) m.guard = guard_install(m.src, m.len, false, {});
    const std::uint64_t n = records_for(m.len);
    const std::uint64_t chunk = n == 1 ? std::max<std::uint64_t>(m.len, 1) : pipeline_chunk_;
    for (std::uint64_t k = 0; k < n; ++k) {
        const std::uint64_t off = k * chunk;
        const std::uint64_t len = n == 1 ? m.len : std::min(chunk, m.len - off);
        if (len > 0) {
            const RegResult r = reg_acquire(m.src + off, len, false);
            if (!r.ok) {
                m.failed = true;
                m.error = r.error;
                return false;
            }
        }
        const std::uint64_t record = m.records + k * sizeof(CompletionRecord);
        const std::uint32_t flags = k + 1 == n ? m.flags : 0u;   // the receiver hears of the last part
        // A message naming its own counter (kFlagCounter, m.counter) counts
        // there; post_write adds counter 0 to other notifying writes under
        // rdma.notify = counter.
        const std::uint32_t counter = (flags & kFlagCounter) ? m.counter : 0u;
        while (!post_write(m.src + off, m.dst_node, m.dst + off, len, m.tag, record, flags, counter)) {
            // The channel's queue is full: wait for one more completion on it.
            const unsigned c = last_post_;
            const std::uint64_t done = mmio_read_on(c, pldma_reg::kTxCompleted, 8);
            wait_for(dma_.tx_signal(c), [&] { return mmio_read_on(c, pldma_reg::kTxCompleted, 8) >= done + 1; },
                     "wait tx");
        }
        if (m.guard) guard_->add_record(m.guard, record);
        ++m.parts;
    }
    return true;
}

CompletionRecord App::complete(Message& m) {
    CompletionRecord out;
    out.tag = m.tag;
    out.node = m.dst_node;
    out.addr = m.src;
    bool ok = !m.failed;
    if (physical_) {
        // Every run's record, then each chunk acquired is released.
        for (unsigned k = 0; k < m.parts; ++k) {
            const CompletionRecord r = wait_record(m.records + k * sizeof(CompletionRecord));
            ok = ok && r.status == kStatusOk;
            out.bytes += r.status == kStatusOk ? r.bytes : 0;
        }
        const std::uint64_t n = chunks_for(m.len);
        const std::uint64_t chunk = n == 1 ? std::max<std::uint64_t>(m.len, 1) : pipeline_chunk_;
        for (unsigned k = 0; k < m.chunks; ++k) {
            const std::uint64_t off = k * chunk;
            const std::uint64_t len = std::min(chunk, m.len - off);
            if (len > 0) reg_release(m.src + off, len);
        }
        out.status = ok ? kStatusOk : kStatusError;
        return out;
    }
    const std::uint64_t chunk = m.parts <= 1 && records_for(m.len) == 1 ? std::max<std::uint64_t>(m.len, 1)
                                                                       : pipeline_chunk_;
    for (unsigned k = 0; k < m.parts; ++k) {
        const CompletionRecord r = wait_record(m.records + k * sizeof(CompletionRecord));
        ok = ok && r.status == kStatusOk;
        out.bytes += r.status == kStatusOk ? r.bytes : 0;
        const std::uint64_t off = k * chunk;
        const std::uint64_t len = std::min(chunk, m.len - off);
        if (len > 0) reg_release(m.src + off, len);   // pipeline: each chunk as it completes
    }
    if (m.guard) guard_lift(m.guard);   // lifted already once every record was seen; or none was posted
    out.status = ok ? kStatusOk : kStatusError;
    return out;
}

void App::get(unsigned src_node, std::uint64_t remote_src, std::uint64_t local_dst, std::uint64_t len,
              std::uint64_t tag, std::uint64_t record) {
    if (guard_ && len > 0) guard_install(local_dst, len, true, {record});   // lifted when the record is seen
    while (!post_read(src_node, remote_src, local_dst, len, tag, record)) {
        // The channel's queue is full: wait for one more completion on it.
        const unsigned c = last_post_;
        const std::uint64_t done = mmio_read_on(c, pldma_reg::kTxCompleted, 8);
        wait_for(dma_.tx_signal(c), [&] { return mmio_read_on(c, pldma_reg::kTxCompleted, 8) >= done + 1; },
                 "wait tx");
    }
}

bool App::register_receive(std::uint64_t va, std::uint64_t len) {
    if (len == 0) return true;
    if (!reg_acquire(va, len, true).ok) return false;
    if (physical_) {
        // The area's keys: the frame of each page now, published for the
        // senders (a snapshot, never looked up again).
        for (std::uint64_t page = va & ~std::uint64_t(4095); page < va + len; page += 4096)
            keys_->publish(node_, pid_, page, lookup_frame(page, true));
    }
    return true;
}

bool App::register_buffer(std::uint64_t va, std::uint64_t len, bool write, VmError* error) {
    if (len == 0) return true;
    const RegResult r = reg_acquire(va, len, write);
    if (error) *error = r.error;
    return r.ok;
}

void App::deregister(std::uint64_t va, std::uint64_t len) {
    if (len > 0) reg_release(va, len);
}

bool App::register_read_source(std::uint64_t va, std::uint64_t len) {
    if (len == 0) return true;
    return reg_acquire(va, len, false).ok;
}

void App::finish_registrations() {
    if (!registrar_) return;
    const RegResult r = registrar_->release_all(now());
    if (r.done > now()) qk_.set(r.done - sc_core::sc_time_stamp());
}

BufferAdvice buffer_advice(const std::string& name) {
    if (name == "none") return BufferAdvice::None;
    if (name == "hugepage") return BufferAdvice::HugePage;
    if (name == "nohugepage") return BufferAdvice::NoHugePage;
    throw std::invalid_argument("buffer advice '" + name + "': none, hugepage or nohugepage");
}

std::uint64_t App::alloc(std::uint64_t bytes, bool populate, BufferAdvice advice) {
    if (vm_) {
        const std::uint64_t len = std::max<std::uint64_t>(bytes, 1);
        const bool advise = advice != BufferAdvice::None;
        // With advice, the mapping is populated only after madvise(): pages
        // faulted in by MAP_POPULATE would already be 4 KiB ones.
        const VmResult r = vm_->mmap(pid_, len, Prot::ReadWrite, populate && !advise, now());
        if (!r.ok())
            throw OutOfMemory(group_ + ": mmap of " + std::to_string(bytes) + " B failed: " + to_string(r.error));
        if (r.done > now()) qk_.set(r.done - sc_core::sc_time_stamp());
        if (advise) {
            const std::uint64_t span = (len + 4095) & ~std::uint64_t(4095);
            const VmResult a = vm_->madvise(
                pid_, r.value, span, advice == BufferAdvice::HugePage ? Advice::HugePage : Advice::NoHugePage, now());
            if (!a.ok())
                throw OutOfMemory(group_ + ": madvise of " + std::to_string(bytes) + " B failed: " + to_string(a.error));
            if (a.done > now()) qk_.set(a.done - sc_core::sc_time_stamp());
            if (populate) {   // best effort, as MAP_POPULATE: a page left out faults later
                const VmResult f = vm_->madvise(pid_, r.value, span, Advice::PopulateWrite, now());
                if (f.done > now()) qk_.set(f.done - sc_core::sc_time_stamp());
            }
        }
        allocations_.emplace_back(r.value, bytes);
        if (registrar_ && !allocating_locked_) {   // pin-static: pinned now; pin-deferred: queued
            const RegResult g = registrar_->on_alloc(r.value, len, now());
            if (g.done > now()) qk_.set(g.done - sc_core::sc_time_stamp());
            if (strategy_ == Strategy::PinDeferred) background_ev_.notify(now() - sc_core::sc_time_stamp());
        }
        return r.value;
    }
    const std::uint64_t page = 4096;
    const std::uint64_t size = (bytes + page - 1) / page * page;
    if (size > heap_end_ - heap_next_)
        throw OutOfMemory(group_ + ": out of memory for buffers (" + std::to_string(bytes) + " B asked, " +
                                 std::to_string(heap_end_ - heap_next_) + " B left)");
    const std::uint64_t a = heap_next_;
    heap_next_ += size;
    allocations_.emplace_back(a, bytes);
    return a;
}

std::uint64_t App::alloc_locked(std::uint64_t bytes) {
    // Records are mlocked, not registered as buffers (pin-static, pin-deferred).
    allocating_locked_ = true;
    std::uint64_t a = 0;
    try {
        a = alloc(bytes, true);
    } catch (...) {
        allocating_locked_ = false;
        throw;
    }
    allocating_locked_ = false;
    if (vm_) {
        const VmResult r = vm_->mlock(pid_, a, (std::max<std::uint64_t>(bytes, 1) + 4095) & ~std::uint64_t(4095), now());
        if (!r.ok())
            throw OutOfMemory(group_ + ": mlock of " + std::to_string(bytes) + " B of completion records failed: " +
                              to_string(r.error));
        if (r.done > now()) qk_.set(r.done - sc_core::sc_time_stamp());
        if (physical_) {
            // The engine gets these frames once, when they are locked: they
            // are pinned too (mlock keeps them in memory, but compaction may
            // still move a locked page), as RDMA libraries register their
            // completion queues.
            const std::uint64_t span = (std::max<std::uint64_t>(bytes, 1) + 4095) & ~std::uint64_t(4095);
            const VmResult p = vm_->pin(pid_, a, span, now());
            if (!p.ok())
                throw OutOfMemory(group_ + ": pinning " + std::to_string(bytes) + " B of completion records failed: " +
                                  to_string(p.error));
            if (p.done > now()) qk_.set(p.done - sc_core::sc_time_stamp());
            for (std::uint64_t page = a; page < a + span; page += 4096) locked_frames_[page] = lookup_frame(page, true);
        }
    }
    return a;
}

bool App::access(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data, unsigned len, bool posted) {
    gp_.set_command(cmd);
    gp_.set_address(addr);
    gp_.set_data_ptr(data);
    gp_.set_data_length(len);
    gp_.set_streaming_width(len);
    gp_.set_byte_enable_ptr(nullptr);
    gp_.set_dmi_allowed(false);
    gp_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    const sc_time issued = qk_.get_local_time();
    sc_time d = issued;
    cpu->b_transport(gp_, d);
    // A posted store (Device-nGnRE registers, or normal memory through the
    // write buffer) lets the CPU go on once issued; loads wait for the data.
    qk_.set(posted && cmd == tlm::TLM_WRITE_COMMAND ? issued + store_issue_ : d);
    if (qk_.need_sync()) qk_.sync();
    return gp_.is_response_ok();
}

std::uint64_t App::mmio_read_on(unsigned c, std::uint64_t off, unsigned len) {
    std::uint64_t v = 0;
    const std::uint64_t base = mmio_base_ + c * pldma_reg::kChannelStride;
    if (!access(tlm::TLM_READ_COMMAND, base + off, reinterpret_cast<unsigned char*>(&v), len))
        throw std::runtime_error(group_ + ": PLDMA register read failed at offset " + std::to_string(off));
    return v;
}

void App::mmio_write_on(unsigned c, std::uint64_t off, std::uint64_t v, unsigned len) {
    const std::uint64_t base = mmio_base_ + c * pldma_reg::kChannelStride;
    if (!access(tlm::TLM_WRITE_COMMAND, base + off, reinterpret_cast<unsigned char*>(&v), len, true))
        throw std::runtime_error(group_ + ": PLDMA register write failed at offset " + std::to_string(off));
    // Whoever stages DESC_OP, the shadow follows it (stage_op skips the
    // store only when the register really holds the operation).
    if (off == pldma_reg::kDescOp && c >= channel_ && c - channel_ < staged_ops_.size())
        staged_ops_[c - channel_] = static_cast<DescOp>(static_cast<std::uint32_t>(v));
}

void App::setup_rx_ring(std::uint32_t entries) {
    rx_entries_ = entries;
    rx_ring_ = alloc_locked(std::uint64_t(entries) * sizeof(CompletionRecord));
    std::uint64_t base = rx_ring_;
    if (physical_) {
        // The engine writes entry i at base + 32 i: the ring's frames must
        // be contiguous (one page holds 128 entries).
        base = locked_frame(rx_ring_);
        for (std::uint64_t off = 4096; off < std::uint64_t(entries) * sizeof(CompletionRecord); off += 4096)
            if (locked_frame(rx_ring_ + off) != base + off)
                throw std::runtime_error(group_ + ": physical-address mode: a notification ring of " +
                                         std::to_string(entries) + " entries spans frames that are not "
                                         "contiguous; not built (rings of up to 128 entries fit one page)");
    }
    mmio_write(pldma_reg::kRxRingBase, base, 8);
    mmio_write(pldma_reg::kRxRingEntries, entries, 4);
}

bool App::post_write(std::uint64_t src, unsigned dst_node, std::uint64_t dst, std::uint64_t len,
                     std::uint64_t tag, std::uint64_t compl_addr, std::uint32_t flags, std::uint32_t counter) {
    using namespace pldma_reg;
    // rdma.notify = counter: every notifying write (whichever part of the
    // library posts it) also counts on the receiver's counter 0.
    if (notify_counter_ && (flags & (kFlagNotify | kFlagNotifyPacket)) && !(flags & kFlagCounter)) {
        flags |= kFlagCounter;
        counter = 0;
    }
    compute(post_overhead_);
    if (compl_addr) {
        // Status 0 = not written yet: wait_record tells the new record from an old one.
        CompletionRecord blank;
        if (!access(tlm::TLM_WRITE_COMMAND, physical(compl_addr, true), reinterpret_cast<unsigned char*>(&blank),
                    sizeof blank, true))
            throw std::runtime_error(group_ + ": completion record not writable");
    }
    return post_descriptor(DescOp::Write, src, dst_node, dst, len, flags, nullptr, compl_addr, tag, counter);
}

bool App::post_descriptor(DescOp op, std::uint64_t src, unsigned node, std::uint64_t dst, std::uint64_t len,
                          std::uint32_t flags, const std::uint64_t* compare, std::uint64_t compl_addr,
                          std::uint64_t tag, std::uint32_t counter) {
    using namespace pldma_reg;
    // Round robin over the process's channels: the next one, kept until it
    // takes the descriptor. DESC_OP is a register of each channel, so each
    // has its own shadow.
    const unsigned c = channel_ + next_post_;
    last_post_ = c;
    stage_op(c, op);
    mmio_write_on(c, kDescSrc, src, 8);
    mmio_write_on(c, kDescDst, dst, 8);
    mmio_write_on(c, kDescLen, len, 8);
    mmio_write_on(c, kDescDstNode, node, 4);
    mmio_write_on(c, kDescFlags, flags, 4);
    if (flags & kFlagCounter) mmio_write_on(c, kDescCounter, counter, 4);
    if (compare) mmio_write_on(c, kDescCmp, *compare, 8);
    mmio_write_on(c, kDescCompl, physical_ && compl_addr ? locked_frame(compl_addr) : compl_addr, 8);
    mmio_write_on(c, kDescTag, tag, 8);
    mmio_write_on(c, kDoorbell, 1, 4);
    const bool refused = (mmio_read_on(c, kStatus, 4) & 0x80000000u) != 0;
    if (refused) return false;
    ++posted_on_[next_post_];
    if (compl_addr) record_channel_[compl_addr] = c;
    next_post_ = (next_post_ + 1) % channel_count_;
    return true;
}

void App::stage_op(unsigned c, DescOp op) {
    if (staged_ops_.at(c - channel_) == op) return;
    mmio_write_on(c, pldma_reg::kDescOp, static_cast<std::uint32_t>(op), 4);   // updates the shadow
}

bool App::post_read(unsigned src_node, std::uint64_t remote_src, std::uint64_t local_dst, std::uint64_t len,
                    std::uint64_t tag, std::uint64_t compl_addr, std::uint32_t flags) {
    using namespace pldma_reg;
    if (physical_)
        throw std::logic_error(group_ + ": RDMA reads and atomics are not built in physical-address mode "
                                        "(System::check_physical refuses such configurations)");
    if (flags != 0)
        throw std::invalid_argument(group_ + ": post_read: no flag is defined for RDMA reads (flags " +
                                    std::to_string(flags) + ")");
    if (src_node == node_)
        throw std::invalid_argument(group_ + ": post_read: a read of this node's own memory (node " +
                                    std::to_string(src_node) + ") is not supported");
    compute(post_overhead_);
    if (compl_addr) {
        // Status 0 = not written yet: wait_record tells the new record from an old one.
        CompletionRecord blank;
        if (!access(tlm::TLM_WRITE_COMMAND, physical(compl_addr, true), reinterpret_cast<unsigned char*>(&blank),
                    sizeof blank, true))
            throw std::runtime_error(group_ + ": completion record not writable");
    }
    return post_descriptor(DescOp::Read, remote_src, src_node, local_dst, len, 0, nullptr, compl_addr, tag);
}

bool App::post_atomic(AtomicOp op, unsigned node, std::uint64_t addr, std::uint64_t operand, std::uint64_t compare,
                      std::uint64_t tag, std::uint64_t compl_addr) {
    using namespace pldma_reg;
    if (physical_)
        throw std::logic_error(group_ + ": RDMA reads and atomics are not built in physical-address mode "
                                        "(System::check_physical refuses such configurations)");
    compute(post_overhead_);
    if (compl_addr) {
        CompletionRecord blank;   // status 0 = not written yet
        if (!access(tlm::TLM_WRITE_COMMAND, physical(compl_addr, true), reinterpret_cast<unsigned char*>(&blank),
                    sizeof blank, true))
            throw std::runtime_error(group_ + ": completion record not writable");
    }
    const DescOp d = op == AtomicOp::FetchAdd ? DescOp::FetchAdd
                     : op == AtomicOp::Swap   ? DescOp::Swap
                                              : DescOp::CompareSwap;
    return post_descriptor(d, operand, node, addr, 8, 0, op == AtomicOp::CompareSwap ? &compare : nullptr,
                           compl_addr, tag);
}

void App::wait_for(CompletionSignal& sig, const std::function<bool()>& ready, const char* what) {
    const sc_time start = now();
    std::uint64_t polls = 1;
    // Each look remembers when it was made and how many records had been
    // raised by then, so that nothing raised while this thread synchronises
    // its quantum (or raised by a master behind it in time) is slept through.
    sc_time looked = now();
    std::uint64_t seen = sig.raised();
    bool ok = ready();
    while (!ok) {
        qk_.sync();
        const sc_time t = sc_core::sc_time_stamp();
        sc_time next;
        if (sig.raised() != seen) {
            // Raised since the look: look again at its time (now, if past).
            if (sig.next_after(looked, next) && next > t) sc_core::wait(next - t);
        } else if (sig.next_after(t, next)) {
            // Raised before the look, visible later: sleep until then.
            sc_core::wait(next - t);
        } else {
            // Nothing raised, nothing due: sleep until the next record (the
            // interrupt, or for a poller the record its next read will see).
            sc_core::wait(sig.event());
            continue;   // its time may lie ahead: the branches above wait for it
        }
        if (completion_ != Completion::Interrupt) {
            // A spinning reader sees it at its first read after the record.
            const sc_time since = sc_core::sc_time_stamp() - start;
            const auto k = static_cast<std::uint64_t>(std::ceil(static_cast<double>(since.value()) / static_cast<double>(poll_interval_.value())));
            const sc_time seen_at = start + poll_interval_ * static_cast<double>(k);
            if (seen_at > sc_core::sc_time_stamp()) sc_core::wait(seen_at - sc_core::sc_time_stamp());
            polls = std::max<std::uint64_t>(polls, k + 1);
        }
        looked = now();
        seen = sig.raised();
        ok = ready();
    }
    if (completion_ == Completion::Interrupt) {
        if (now() > start + sc_time(1, sc_core::SC_NS) || polls > 1) {
            wakeups_.inc();
            run_on_core("irq-wakeup", irq_wakeup_);
            wait_cpu_us_.add(to_us(irq_wakeup_));
        }
    } else if (completion_ == Completion::Handler) {
        // Seen once the handler has run for it (and for every record of the
        // signal visible by then: the handler thread takes them in order).
        wait_handled(sig, looked);
    } else {
        polls_.inc(polls);
        // The core was busy spinning the whole time.
        if (cores_ && now() > start) cores_->run("poll", start, now() - start, group_ + " poll");
        wait_cpu_us_.add(to_us(now() - start));
    }
    wait_us_.add(to_us(now() - start));
    compute(completion_overhead_);
    if (tracer_.enabled()) tracer_.span(track_, what, start, now());
}

void App::wait_tx(std::uint64_t n) {
    wait_for(dma_.tx_signal(channel_), [&] { return mmio_read(pldma_reg::kTxCompleted, 8) >= n; }, "wait tx");
}

void App::wait_rx(std::uint64_t n) {
    if (notify_counter_) {
        wait_counter(0, n);
        return;
    }
    wait_for(dma_.rx_signal(channel_), [&] { return mmio_read(pldma_reg::kEventCount, 8) >= n; }, "wait rx");
}

std::uint64_t App::rx_events() { return notify_counter_ ? read_counter(0) : mmio_read(pldma_reg::kEventCount, 8); }
std::uint64_t App::tx_completions() { return mmio_read(pldma_reg::kTxCompleted, 8); }

CompletionRecord App::wait_record(std::uint64_t addr) {
    CompletionRecord r;
    const unsigned c = record_channel(addr);   // the channel whose interrupt and counter announce it
    // Causality: the record cannot be seen before the engine wrote it.
    auto check_seen = [&] {
        sc_time written;
        if (dma_.record_done_at(dma_.channel_stream_id(c), physical_ ? locked_frame(addr) : addr, written) &&
            now() < written)
            early_.inc();
    };
    if (completion_ != Completion::Counter) {
        // poll: spin on the record in memory; interrupt: look at it after each wake-up.
        wait_for(dma_.tx_signal(c), [&] {
            r = read_record(addr);
            return r.status != 0;
        }, "wait completion");
        check_seen();
        guard_record_seen(addr);
        return r;
    }
    // counter: spin on the channel's TX_COMPLETED register (a device read
    // through the bus into the engine, dma.mmio-latency) and read the record
    // only when the count has moved since the last look: completions may
    // come out of order, so a new count says that some record was written,
    // not which one.
    bool first = true;
    std::uint64_t seen = 0;
    wait_for(dma_.tx_signal(c), [&] {
        const std::uint64_t n = mmio_read_on(c, pldma_reg::kTxCompleted, 8);
        counter_reads_.inc();
        if (!first && n == seen) return false;
        first = false;
        seen = n;
        r = read_record(addr);
        return r.status != 0;
    }, "wait completion");
    check_seen();
    guard_record_seen(addr);
    return r;
}

std::uint64_t App::physical(std::uint64_t addr, bool write) {
    if (!vm_) return addr;
    // A user load or store: the CPU's own MMU translates a present page at
    // no software cost (the access itself is the bus transaction); a page
    // that is not present takes a fault first.
    // One walk when the page is present and allowed (the usual case): its
    // translation is the answer; after a fault, the page is walked again.
    std::uint64_t pa = 0;
    bool translated = false;
    for (int attempt = 0;; ++attempt) {
        translated = vm_->translate(pid_, addr, pa);   // Vm::present is this walk
        if (!translated) {
            const VmResult t = vm_->touch(pid_, addr, write, now());
            if (!t.ok()) throw std::runtime_error(group_ + ": user access to " + hex(addr) + " failed: " +
                                                  to_string(t.error));
            if (t.done > now()) qk_.set(t.done - sc_core::sc_time_stamp());
            await_read(addr);
        }
        // The CPU's MMU checks the descriptor's AP bits for EL0: a guarded
        // page takes a permission fault (the library's handler waits for its
        // transfer and lifts the guard), and the access is retried (the page
        // may have been reclaimed meanwhile: it faults in again).
        if (!guard_ || vm_->user_permits(pid_, addr, write)) break;
        if (attempt >= 3) throw std::runtime_error(group_ + ": user access still denied after its guard fault");
        guard_fault(addr, write);
    }
    if (!translated && !vm_->translate(pid_, addr, pa))
        throw std::runtime_error(group_ + ": user page not present after a fault");
    return pa;
}

void App::await_read(std::uint64_t addr) {
    // A major fault's page is mapped when its SSD read completes (the read
    // in flight, models/os/inflight.hpp), at the fault's `done`: the thread
    // sleeps until then (global time reaches its own), and the completion
    // due by now is written, so the access retries on the mapped page.
    if (vm_->present(pid_, addr)) return;
    qk_.sync();
    vm_->complete_io(sc_core::sc_time_stamp());
}

CompletionRecord App::read_record(std::uint64_t addr) {
    CompletionRecord r;
    if (!access(tlm::TLM_READ_COMMAND, physical(addr, false), reinterpret_cast<unsigned char*>(&r), sizeof r))
        throw std::runtime_error(group_ + ": completion record unreadable");
    return r;
}

std::uint64_t App::load(std::uint64_t addr) {
    std::uint64_t v = 0;
    if (!access(tlm::TLM_READ_COMMAND, physical(addr, false), reinterpret_cast<unsigned char*>(&v), 8))
        throw std::runtime_error(group_ + ": user load failed");
    return v;
}

void App::store(std::uint64_t addr, std::uint64_t value) {
    if (!access(tlm::TLM_WRITE_COMMAND, physical(addr, true), reinterpret_cast<unsigned char*>(&value), 8, true))
        throw std::runtime_error(group_ + ": user store failed");
}

void App::busy_since(const char* activity, sc_time start) {
    if (cores_ && now() > start) cores_->run(activity, start, now() - start, group_ + " " + activity);
}

void App::watch_polled(std::uint64_t va, std::uint64_t len) {
    dma_.watch_writes(dma_.channel_stream_id(channel_), va, len);
}

std::uint64_t App::load_polled(std::uint64_t addr, sc_time* written) {
    const sc_time issued = now();
    const std::uint64_t in_memory = load(addr);
    std::uint64_t v = 0;
    // Payload writes come with the receiving channel's stream ID: the
    // process's first channel.
    if (!dma_.polled_value(dma_.channel_stream_id(channel_), addr, issued, in_memory, v, written))
        throw std::logic_error(group_ + ": load_polled of a word never watched (App::watch_polled)");
    return v;
}

bool App::resident(std::uint64_t addr) const { return !vm_ || vm_->present(pid_, addr); }
bool App::populated(std::uint64_t addr) const {
    // A page being migrated was present and is again once the copy is done.
    return !vm_ || vm_->present(pid_, addr) || vm_->swapped(pid_, addr) || vm_->migrating(pid_, addr);
}

CompletionRecord App::read_rx_record(std::uint64_t index) {
    if (rx_entries_ == 0) throw std::logic_error(group_ + ": no receive ring set up");
    const std::uint64_t addr = rx_ring_ + (index % rx_entries_) * sizeof(CompletionRecord);
    // The engine fills the ring's slots in the order it delivers
    // notifications, which on an out-of-order network need not be the
    // order of their times: EVENT_COUNT may say n while slot n - 1 is still
    // to be written. Software polling that slot sees it only once written.
    sc_time written;
    if (dma_.record_done_at(dma_.channel_stream_id(channel_), physical_ ? locked_frame(addr) : addr, written) &&
        now() < written) {
        rx_slot_waits_.inc();
        qk_.sync();
        if (written > sc_core::sc_time_stamp()) sc_core::wait(written - sc_core::sc_time_stamp());
    }
    return read_record(addr);
}

void App::clear_rx_record(std::uint64_t index) {
    if (rx_entries_ == 0) throw std::logic_error(group_ + ": no receive ring set up");
    CompletionRecord blank;
    if (!access(tlm::TLM_WRITE_COMMAND, physical(rx_ring_ + (index % rx_entries_) * sizeof(CompletionRecord), true),
                reinterpret_cast<unsigned char*>(&blank), sizeof blank, true))
        throw std::runtime_error(group_ + ": receive ring not writable");
}

bool App::debug_write(std::uint64_t addr, const unsigned char* data, std::uint64_t len) {
    if (vm_) return vm_->write_user(pid_, addr, data, len);
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_WRITE_COMMAND);
    gp.set_address(addr);
    gp.set_data_ptr(const_cast<unsigned char*>(data));
    gp.set_data_length(static_cast<unsigned>(len));
    return cpu->transport_dbg(gp) == len;
}

bool App::debug_write_resident(std::uint64_t addr, const unsigned char* data, std::uint64_t len) {
    if (vm_) return vm_->poke_user(pid_, addr, data, len);
    return debug_write(addr, data, len);
}

bool App::debug_read(std::uint64_t addr, unsigned char* data, std::uint64_t len) {
    // Reading to check changes nothing: no fault, no swap-in, no access flag.
    if (vm_) return vm_->peek_user(pid_, addr, data, len);
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_address(addr);
    gp.set_data_ptr(data);
    gp.set_data_length(static_cast<unsigned>(len));
    return cpu->transport_dbg(gp) == len;
}

}  // namespace vrdmasim
