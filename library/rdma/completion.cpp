// RdmaProcess: learning of completions and notifications the way
// rdma.completion says: records, counters, the receive ring.
#include "library/rdma/process.hpp"
#include "library/rdma/wake.hpp"

#include "src/core/sim_params.hpp"
#include "models/common/noise.hpp"

#include "src/core/format.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace vrdmasim {

using sc_core::sc_time;

void RdmaProcess::setup_rx_ring(std::uint32_t entries) {
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
                                         std::to_string(entries) +
                                         " entries spans frames that are not "
                                         "contiguous; not built (rings of up to 128 entries fit one page)");
    }
    mmio_write(pldma_reg::kRxRingBase, base, 8);
    mmio_write(pldma_reg::kRxRingEntries, entries, 4);
}

namespace {
// The signals one wait looks at: one (the channel a record or a count is
// announced on) or several (an event loop's: any record of the process's
// channels, any notification).
struct OneSignal {
    CompletionSignal& sig;
    std::uint64_t raised() const { return sig.raised(); }
    bool next_after(sc_time at, sc_time& next) const { return sig.next_after(at, next); }
    void sleep(const Wake* wake) {
        if (!wake) return sc_core::wait(sig.event());
        sc_core::sc_event_or_list l;
        l |= sig.event();
        wake->sleep(l);
    }
    template <class F>
    void each(F&& f) {
        f(sig);
    }
};
struct AnySignal {
    const std::vector<CompletionSignal*>& sigs;
    std::uint64_t raised() const {
        std::uint64_t n = 0;
        for (const CompletionSignal* s : sigs) n += s->raised();
        return n;
    }
    bool next_after(sc_time at, sc_time& next) const {
        bool any = false;
        for (const CompletionSignal* s : sigs) {
            sc_time t;
            if (s->next_after(at, t) && (!any || t < next)) next = t, any = true;
        }
        return any;
    }
    void sleep(const Wake* wake) {
        sc_core::sc_event_or_list any;
        for (CompletionSignal* s : sigs) any |= s->event();
        if (wake) wake->sleep(any);
        else sc_core::wait(any);
    }
    template <class F>
    void each(F&& f) {
        for (CompletionSignal* s : sigs) f(*s);
    }
};
}   // namespace

void RdmaProcess::wait_for(CompletionSignal& sig, const std::function<bool()>& ready, const char* what) {
    OneSignal one{sig};
    wait_on(one, ready, what);
}

void RdmaProcess::wait_event(const std::function<bool()>& ready, const char* what) {
    if (event_signals_.empty()) {
        for (unsigned k = 0; k < channel_count_; ++k) event_signals_.push_back(&dma_.tx_signal(channel_ + k));
        event_signals_.push_back(&dma_.rx_signal(channel_));
        event_signals_.push_back(&dma_.counter_signal(channel_));
    }
    AnySignal any{event_signals_};
    wait_on(any, ready, what);
}

template <class Signals>
void RdmaProcess::wait_on(Signals& sig, const std::function<bool()>& ready, const char* what) {
    const sc_time start = now();
    std::uint64_t polls = 1;
    // Each look remembers when it was made and how many records had been
    // raised by then, so that nothing raised while this thread synchronises
    // its quantum (or raised by a master behind it in time) is slept through.
    sc_time looked = now();
    std::uint64_t seen = sig.raised();
    bool ok = ready();
    const Wake* wake = Wake::current();
    while (!ok) {
        qk().sync();
        if (wake && wake->done()) break;   // ended by what the thread's Wake waits for
        const sc_time t = sc_core::sc_time_stamp();
        sc_time next;
        // A record visible after the look (raised before it or since) may
        // not have been seen by it: look again at its time (now, if past;
        // the look itself, a timed load, may have carried this process's
        // clock beyond it).
        const bool pending = sig.next_after(looked, next);
        if (sig.raised() != seen || pending) {
            if (pending && next > t) sc_core::wait(next - t);
        } else {
            // Nothing raised, nothing due: sleep until the next record (the
            // interrupt, or for a poller the record its next read will see).
            sig.sleep(wake);
            continue;   // its time may lie ahead: the branches above wait for it
        }
        if (completion_ != Completion::Interrupt) {
            // A spinning reader sees it at its first read after the record.
            const sc_time since = sc_core::sc_time_stamp() - start;
            const auto k = static_cast<std::uint64_t>(
                std::ceil(static_cast<double>(since.value()) / static_cast<double>(poll_interval_.value())));
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
        sig.each([&](CompletionSignal& s) { wait_handled(s, looked); });
    } else {
        polls_.inc(polls);
        // A core was busy spinning the whole time (one was free: the spin
        // held none while every core was busy, CpuCores::ran).
        if (cores_ && now() > start) cores_->ran("poll", start, now(), group_ + " poll");
        wait_cpu_us_.add(to_us(now() - start));
    }
    wait_us_.add(to_us(now() - start));
    compute(completion_overhead_);
    if (tracer_.enabled()) tracer_.span(track_, what, start, now());
}

void RdmaProcess::wait_tx(std::uint64_t n) {
    wait_for(
        dma_.tx_signal(channel_), [&] { return mmio_read(pldma_reg::kTxCompleted, 8) >= n; }, "wait tx");
}

void RdmaProcess::wait_rx(std::uint64_t n) {
    if (notify_counter_) {
        wait_counter(0, n);
        return;
    }
    wait_for(
        dma_.rx_signal(channel_), [&] { return mmio_read(pldma_reg::kEventCount, 8) >= n; }, "wait rx");
}

std::uint64_t RdmaProcess::rx_events() {
    return notify_counter_ ? read_counter(0) : mmio_read(pldma_reg::kEventCount, 8);
}
std::uint64_t RdmaProcess::tx_completions() { return mmio_read(pldma_reg::kTxCompleted, 8); }

CompletionRecord RdmaProcess::wait_record(std::uint64_t addr) {
    CompletionRecord r;
    const unsigned c = record_channel(addr);   // the channel whose interrupt and counter announce it
    // Causality: the record cannot be seen before the engine wrote it.
    auto check_seen = [&] {
        sc_time written;
        if (dma_.record_done_at(dma_.channel_stream_id(c), physical_ ? locked_frame(addr) : addr, written) &&
            now() < written)
            early_.inc();
    };
    // What a look reads and writes, reached through one pointer: a lambda
    // of more than two words' captures is an allocation of std::function's
    // at every wait (one a message of an alltoall).
    struct Look {
        RdmaProcess& self;
        std::uint64_t addr;
        CompletionRecord& r;
        bool first = true;
        std::uint64_t seen = 0;
    } look{*this, addr, r};
    if (completion_ != Completion::Counter) {
        // poll: spin on the record in memory; interrupt: look at it after each wake-up.
        wait_for(
            dma_.tx_signal(c),
            [&look] {
                look.r = look.self.read_record(look.addr);
                return look.r.status != 0;
            },
            "wait completion");
        check_seen();
        guard_record_seen(addr);
        return r;
    }
    // counter: spin on the channel's TX_COMPLETED register (a device read
    // through the bus into the engine, dma.mmio-latency) and read the record
    // only when the count has moved since the last look: completions may
    // come out of order, so a new count says that some record was written,
    // not which one.
    wait_for(
        dma_.tx_signal(c),
        [&look, c] {
            const std::uint64_t n = look.self.mmio_read_on(c, pldma_reg::kTxCompleted, 8);
            look.self.counter_reads_.inc();
            if (!look.first && n == look.seen) return false;
            look.first = false;
            look.seen = n;
            look.r = look.self.read_record(look.addr);
            return look.r.status != 0;
        },
        "wait completion");
    check_seen();
    guard_record_seen(addr);
    return r;
}

CompletionRecord RdmaProcess::read_record(std::uint64_t addr) {
    CompletionRecord r;
    if (!access(tlm::TLM_READ_COMMAND, physical(addr, false), reinterpret_cast<unsigned char*>(&r), sizeof r))
        throw std::runtime_error(group_ + ": completion record unreadable");
    return r;
}

CompletionRecord RdmaProcess::read_rx_record(std::uint64_t index) {
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
        qk().sync();
        if (written > sc_core::sc_time_stamp()) sc_core::wait(written - sc_core::sc_time_stamp());
    }
    return read_record(addr);
}

void RdmaProcess::clear_rx_record(std::uint64_t index) {
    if (rx_entries_ == 0) throw std::logic_error(group_ + ": no receive ring set up");
    CompletionRecord blank;
    if (!access(tlm::TLM_WRITE_COMMAND, physical(rx_ring_ + (index % rx_entries_) * sizeof(CompletionRecord), true),
                reinterpret_cast<unsigned char*>(&blank), sizeof blank, true))
        throw std::runtime_error(group_ + ": receive ring not writable");
}

}   // namespace vrdmasim
