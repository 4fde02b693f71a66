// The user library's detection mechanisms beyond the completion waits of
// app.cpp: event counters (wait_counter) and the user-defined handler
// (rdma.completion = handler). README.md "Notifications:
// event counters and detection".
#include "library/rdma/process.hpp"
#include "src/core/software_turns.hpp"

#include <algorithm>

namespace vrdmasim {

using sc_core::sc_time;

void RdmaProcess::declare_metrics(MetricRegistry& reg) {
    reg.sum_counters("counter_increments",
                     "Event counters incremented by writes naming one that landed (sum of `*.dma.counter_increments`).",
                     {"dma.counter_increments"});
    reg.sum_scalars("wait_cpu_us", "us",
                    "CPU time the library's completion and notification waits cost on every node: spinning (poll, "
                    "counter), interrupt wake-ups (interrupt), handler wake-ups and runs (handler) (sum of "
                    "`*.rdma.wait_cpu`).",
                    "rdma.wait_cpu");
    reg.quantile("wait_us_p50", "us",
                 "Median time a program waited for a completion or notification (`*.rdma.wait_time`).",
                 "rdma.wait_time", 0.5);
    reg.sum_counters("handler_runs",
                     "User handler runs of the library's handler thread (rdma.completion = handler; sum of "
                     "`*.rdma.handler_runs`; 0 otherwise).",
                     {"rdma.handler_runs"},
                     [](const Config& c) { return c[params_of<RdmaParams>().completion] == "handler"; });
}

void RdmaProcess::wait_counter(unsigned i, std::uint64_t target) {
    if (i >= dma_.event_counters())
        throw std::invalid_argument(group_ + ": event counter " + std::to_string(i) + " beyond dma.event-counters (" +
                                    std::to_string(dma_.event_counters()) + ")");
    // poll and counter: spin reading the register (a device read, dma.mmio-latency
    // besides the bus); interrupt: sleep until the counter line; handler: the
    // handler runs for the increment.
    wait_for(
        dma_.counter_signal(channel_), [&] { return read_counter(i) >= target; }, "wait counter");
}

std::uint64_t RdmaProcess::read_counter(unsigned i) { return mmio_read(pldma_reg::kEventCounterBase + 8ull * i, 8); }

void RdmaProcess::reset_counter(unsigned i, std::uint64_t value) {
    mmio_write(pldma_reg::kEventCounterBase + 8ull * i, value, 8);
}

void RdmaProcess::observe_signals() {
    // Completions of every channel of the process, notifications and counter
    // increments of the first (where its notifications come).
    std::vector<CompletionSignal*> sigs;
    for (unsigned k = 0; k < channel_count_; ++k) sigs.push_back(&dma_.tx_signal(channel_ + k));
    // With rdma.notify = counter a notification raises both the ring's line
    // and the counter's: one interrupt, one handler run (the counter's).
    if (!notify_counter_) sigs.push_back(&dma_.rx_signal(channel_));
    sigs.push_back(&dma_.counter_signal(channel_));
    for (CompletionSignal* sig : sigs) {
        sig->observe([this, sig](sc_time at) {
            handler_queue_.emplace(at, sig);
            unhandled_[sig].insert(at);
            const sc_time now = sc_core::sc_time_stamp();
            handler_ev_.notify(at > now ? at - now : sc_core::SC_ZERO_TIME);
        });
    }
}

void RdmaProcess::handler_thread() {
    software_turns::enter(software_turns::node_of(group_));
    // The library's handler thread: asleep until the interrupt of the next
    // notification; each wake-up costs rdma.handler-dispatch on a core, then
    // the user's handler runs (rdma.handler-cpu on a core) for every
    // notification visible by then, in order of their times.
    for (;;) {
        while (handler_queue_.empty()) sc_core::wait(handler_ev_.get());
        const sc_time due = handler_queue_.begin()->first;
        sc_time t = sc_core::sc_time_stamp();
        if (due > t) {
            sc_core::wait(due - t, handler_ev_.get());   // an earlier one may be raised meanwhile
            continue;
        }
        handler_wakeups_->inc();
        auto run = [&](const char* activity, sc_time start, sc_time d) {
            if (!cores_) return start + d;
            return cores_->run(activity, start, d, group_ + " " + activity).end;
        };
        t = run("handler-dispatch", t, handler_dispatch_);
        wait_cpu_us_.add(to_us(handler_dispatch_));
        if (t > sc_core::sc_time_stamp()) sc_core::wait(t - sc_core::sc_time_stamp());
        while (!handler_queue_.empty() && handler_queue_.begin()->first <= sc_core::sc_time_stamp()) {
            const auto it = handler_queue_.begin();
            CompletionSignal* sig = it->second;
            const sc_time at = it->first;
            handler_queue_.erase(it);
            const sc_time start = sc_core::sc_time_stamp();
            const sc_time end = run("handler", start, handler_cpu_);
            wait_cpu_us_.add(to_us(handler_cpu_));
            if (end > start) sc_core::wait(end - start);
            auto& left = unhandled_[sig];
            left.erase(left.find(at));
            handler_runs_->inc();
            if (tracer_.enabled()) tracer_.span(track_, "handler", start, sc_core::sc_time_stamp());
            handled_ev_.notify(sc_core::SC_ZERO_TIME);
        }
    }
}

bool RdmaProcess::unhandled_by(CompletionSignal& sig, sc_time t) const {
    auto it = unhandled_.find(&sig);
    return it != unhandled_.end() && !it->second.empty() && *it->second.begin() <= t;
}

void RdmaProcess::wait_handled(CompletionSignal& sig, sc_time looked) {
    qk().sync();
    while (unhandled_by(sig, looked)) sc_core::wait(handled_ev_.get());
}

unsigned RdmaProcess::event_counters() const { return dma_.event_counters(); }

}   // namespace vrdmasim
