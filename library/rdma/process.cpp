// RdmaProcess: construction, the program's thread, CPU time, channels,
// untimed (debug) access to its memory.
#include "library/rdma/process.hpp"

#include "models/common/debug_access.hpp"
#include "src/core/sim_params.hpp"
#include "models/common/noise.hpp"

#include "src/core/format.hpp"
#include "src/core/software_turns.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace vrdmasim {

using sc_core::sc_time;

RdmaProcess::RdmaProcess(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group, unsigned node,
                         Pldma& dma, std::uint64_t mmio_base, std::uint64_t heap_base, std::uint64_t heap_size)
    : sc_module(name),
      cpu("cpu"),
      handler_dispatch_(ctx.config[params_of<RdmaParams>().handler_dispatch]),
      handler_cpu_(ctx.config[params_of<RdmaParams>().handler_cpu]),
      wait_cpu_us_(ctx.stats.scalar(group + ".rdma.wait_cpu", "us",
                                    "CPU time the completion and notification waits cost: spinning (poll, counter), "
                                    "interrupt wake-ups (interrupt), handler wake-ups and runs (handler)",
                                    Scalar::Kind::Sum)),
      wait_us_(ctx.stats.histogram(group + ".rdma.wait_time", "us",
                                   "time the program waited per completion or notification wait, from the call to "
                                   "seeing it (rdma.completion-overhead excluded)")),
      notify_counter_(ctx.config[params_of<RdmaParams>().notify] == "counter"),
      node_(node),
      group_(group),
      dma_(dma),
      mmio_base_(mmio_base),
      heap_next_(heap_base),
      heap_end_(heap_base + heap_size),
      ctx_(ctx),
      channels_per_process_(static_cast<unsigned>(ctx.config[params_of<RdmaParams>().channels])),
      posted_on_(1, 0),
      strategy_(registration_strategies::of(ctx.config)),
      pipeline_chunk_(ctx.config[params_of<StrategyParams>().pipeline_chunk]),
      physical_(physical_mode(ctx.config)),
      prefetch_call_(ctx.config[params_of<RdmaParams>().prefetch_call]),
      completion_(ctx.config[params_of<RdmaParams>().completion] == "poll"      ? Completion::Poll
                  : ctx.config[params_of<RdmaParams>().completion] == "counter" ? Completion::Counter
                  : ctx.config[params_of<RdmaParams>().completion] == "handler" ? Completion::Handler
                                                                                : Completion::Interrupt),
      poll_interval_(ctx.config[params_of<RdmaParams>().poll_interval]),
      store_issue_(ctx.config[params_of<RdmaParams>().store_issue]),
      irq_wakeup_(ctx.config[params_of<RdmaParams>().irq_wakeup]),
      polls_(ctx.stats.counter(group + ".rdma.polls", "",
                               "polling reads while waiting (rdma.completion = poll or counter)")),
      wakeups_(ctx.stats.counter(group + ".rdma.wakeups", "",
                                 "interrupt wake-ups while waiting (rdma.completion = interrupt)")),
      rx_slot_waits_(ctx.stats.counter(group + ".rdma.rx_slot_waits", "",
                                       "receive-ring slots read while their record was still to be written (the "
                                       "engine filled a later slot first, out of order in time): the read waited")),
      early_(ctx.stats.counter(group + ".rdma.early_completions", "",
                               "completion records the library saw before the engine had written them "
                               "(must be 0: checked at the end of every run)")),
      counter_reads_(ctx.stats.counter(group + ".rdma.counter_reads", "",
                                       "reads of the channel's TX_COMPLETED register while waiting for a completion "
                                       "record (rdma.completion = counter)")),
      post_overhead_(ctx.config[params_of<RdmaParams>().post_overhead]),
      completion_overhead_(ctx.config[params_of<RdmaParams>().completion_overhead]),
      tracer_(ctx.tracer),
      track_(ctx.tracer.track(group, "app")) {
    capacity_ = heap_size;
    SC_HAS_PROCESS(RdmaProcess);
    SC_THREAD(run);
    if (strategy_.registration_thread) SC_THREAD(registration_thread);
    if (prefetch_on(ctx.config)) SC_THREAD(prefetch_thread);
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

void RdmaProcess::set_channels(unsigned first, unsigned count) {
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

void RdmaProcess::start() {
    started_ = true;
    start_ev_.notify(sc_core::SC_ZERO_TIME);
}

void RdmaProcess::wait_until(const std::function<bool()>& done, sc_core::sc_event& ev) {
    qk().sync();
    while (!done()) sc_core::wait(ev);
}

// While a library thread exists, every thread of the process synchronises
// its clock after each step (the `|| !thread_qks_.empty()` of the library's
// need_sync checks): no temporal decoupling, so that the process's shared
// state (page faults, registrations, channels, records) sees their calls
// in the order of their times (library/collectives/README.md).
void RdmaProcess::enter_thread(sc_time start) {
    auto qk = std::make_unique<tlm_utils::tlm_quantumkeeper>();
    qk->reset();
    if (start > sc_core::sc_time_stamp()) qk->set(start - sc_core::sc_time_stamp());
    thread_qks_[sc_core::sc_get_current_process_handle().get_process_object()] = std::move(qk);
}

void RdmaProcess::leave_thread() {
    qk().sync();
    thread_qks_.erase(sc_core::sc_get_current_process_handle().get_process_object());
}

RdmaProcess::InLibrary::InLibrary(RdmaProcess& p) : p_(&p) {
    if (p.thread_qks_.count(sc_core::sc_get_current_process_handle().get_process_object())) {
        p_ = nullptr;   // a library thread's own call: not the program's
        return;
    }
    // A library thread awaits: the program's clock brought to the
    // simulation's first, so that the call is seen at its time.
    if (p.library_awaiting_) p.qk().sync();
    ++p.library_depth_;
    ++p.library_calls_;
    if (p.library_awaiting_) p.library_called_.notify(sc_core::SC_ZERO_TIME);
}

RdmaProcess::InLibrary::~InLibrary() {
    if (p_) --p_->library_depth_;
}

void RdmaProcess::await_library_call() {
    qk().sync();
    if (library_depth_) return;   // the program is inside a call (a wait): it progresses this thread's work
    const std::uint64_t seen = library_calls_;
    ++library_awaiting_;
    while (library_calls_ == seen) sc_core::wait(library_called_.get());
    --library_awaiting_;
}

tlm_utils::tlm_quantumkeeper& RdmaProcess::thread_qk() const {
    const auto it = thread_qks_.find(sc_core::sc_get_current_process_handle().get_process_object());
    return it == thread_qks_.end() ? qk_ : *it->second;
}

void RdmaProcess::run() {
    software_turns::enter(software_turns::node_of(group_));   // the program
    if (!started_) sc_core::wait(start_ev_.get());
    // noise.start-skew: this process's launch comes a little after the others'.
    const sc_time skew = ctx_.config[params_of<NoiseParams>().start_skew];
    if (skew > sc_core::SC_ZERO_TIME) {
        NoiseStream draw(static_cast<std::uint64_t>(ctx_.config[params_of<SimParams>().seed]), "start-skew:" + group_,
                         0);
        const sc_time delay = skew * draw.uniform();
        if (delay > sc_core::SC_ZERO_TIME) sc_core::wait(delay);
    }
    if (program) program(*this);
    qk().sync();
    // Done: the thread waits for nothing (it has no static sensitivity) rather
    // than ending. SystemC deletes a thread that ended, and that deletion
    // looked for it among the simulation's top-level objects, every node and
    // link, one by one (sc_simcontext::remove_child_object): once per node,
    // so a cost quadratic in the nodes: 1.4 % of the 4,096-MPSoC halo's
    // instructions (callgrind), four times that share at 16,384 (#42). A
    // thread waiting on nothing keeps no event pending; nothing else changes.
    sc_core::wait();
}

void RdmaProcess::compute(sc_time t) {
    if (cores_) {
        run_on_core("app", t);
        return;
    }
    qk().inc(t);
    if (qk().need_sync() || !thread_qks_.empty()) qk().sync();
}

void RdmaProcess::run_on_core(const char* activity, sc_time t) {
    if (!cores_) {
        qk().inc(t);
    } else {
        // The label names the span on the core's track: built only for a trace.
        const CpuCores::Slot s =
            cores_->run(activity, now(), t, tracer_.enabled() ? group_ + " " + activity : std::string());
        qk().set(s.end - sc_core::sc_time_stamp());
    }
    if (qk().need_sync() || !thread_qks_.empty()) qk().sync();
}

void RdmaProcess::attach_process(Vm& vm, int pid) {
    vm_ = &vm;
    pid_ = pid;
    if (!cores_) throw std::logic_error(group_ + ": attach_process before set_cpu");
    registrar_ = std::make_unique<Registrar>(ctx_, group_ + ".rdma", vm, pid, *cores_);
    Registrar* r = registrar_.get();
    vm.add_invalidate([r](int p, std::uint16_t asid, std::uint64_t va, std::uint64_t len, sc_time at) {
        return r->invalidate(p, asid, va, len, at);
    });
    if (buffer_guard_on(ctx_.config)) guard_ = std::make_unique<BufferGuard>(ctx_, group_ + ".rdma.guard", vm, pid);
    if (prefetch_on(ctx_.config)) prefetch_ = std::make_unique<Prefetcher>(ctx_, group_ + ".rdma.prefetch", vm, pid);
}

void RdmaProcess::busy_since(const char* activity, sc_time start) {
    if (cores_ && now() > start) cores_->ran(activity, start, now(), group_ + " " + activity);
}

bool RdmaProcess::resident(std::uint64_t addr) const { return !vm_ || vm_->present(pid_, addr); }
bool RdmaProcess::populated(std::uint64_t addr) const {
    // A page being migrated was present and is again once the copy is done.
    return !vm_ || vm_->present(pid_, addr) || vm_->swapped(pid_, addr) || vm_->migrating(pid_, addr);
}

bool RdmaProcess::debug_write(std::uint64_t addr, const unsigned char* data, std::uint64_t len) {
    if (vm_) return vm_->write_user(pid_, addr, data, len);
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_WRITE_COMMAND);
    gp.set_address(addr);
    gp.set_data_ptr(const_cast<unsigned char*>(data));
    gp.set_data_length(static_cast<unsigned>(len));
    return cpu->transport_dbg(gp) == len;
}

bool RdmaProcess::debug_write_resident(std::uint64_t addr, const unsigned char* data, std::uint64_t len) {
    if (vm_) return vm_->poke_user(pid_, addr, data, len);
    return debug_write(addr, data, len);
}

bool RdmaProcess::debug_write_pattern(std::uint64_t addr, std::uint64_t len, PatternPlace at) {
    if (vm_) return vm_->write_user_pattern(pid_, addr, len, at);
    std::uint64_t first = 0;
    return debug_pattern_by_bytes(
        [this](bool, std::uint64_t a, unsigned char* d, std::uint64_t n) { return debug_write(a, d, n); },
        PatternOp::Write, addr, len, at, first);
}

bool RdmaProcess::debug_check_pattern(std::uint64_t addr, std::uint64_t len, PatternPlace at, std::uint64_t& first) {
    if (vm_) return vm_->peek_user_pattern(pid_, addr, len, at, first);
    return debug_pattern_by_bytes(
        [this](bool, std::uint64_t a, unsigned char* d, std::uint64_t n) { return debug_read(a, d, n); },
        PatternOp::Check, addr, len, at, first);
}

bool RdmaProcess::debug_read(std::uint64_t addr, unsigned char* data, std::uint64_t len) {
    // Reading to check changes nothing: no fault, no swap-in, no access flag.
    if (vm_) return vm_->peek_user(pid_, addr, data, len);
    tlm::tlm_generic_payload gp;
    gp.set_command(tlm::TLM_READ_COMMAND);
    gp.set_address(addr);
    gp.set_data_ptr(data);
    gp.set_data_length(static_cast<unsigned>(len));
    return cpu->transport_dbg(gp) == len;
}

}   // namespace vrdmasim
