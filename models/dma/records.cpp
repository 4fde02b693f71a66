// Completion and notification records, their signals and their writer
// (see records.hpp; README.md "Protocol" and "Fault tolerance").
#include "models/dma/records.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace vrdmasim {

using sc_core::sc_time;

// ---------------------------------------------------------------- CompletionSignal

void CompletionSignal::raise_at(sc_time at) {
    ++raised_;
    auto it = std::upper_bound(pending_.begin(), pending_.end(), at);
    pending_.insert(it, at);
    const sc_time now = sc_core::sc_time_stamp();
    event_.notify(at > now ? at - now : sc_core::SC_ZERO_TIME);
    if (observer_) observer_(at);
}

std::uint64_t CompletionSignal::count_at(sc_time at) {
    // Records visible by `at` are folded into done_: a record once seen stays
    // counted (callers ask about times that never go back by more than a
    // quantum).
    while (!pending_.empty() && pending_.front() <= at) {
        pending_.pop_front();
        ++done_;
    }
    return done_;
}

bool CompletionSignal::next_after(sc_time at, sc_time& next) const {
    auto it = std::upper_bound(pending_.begin(), pending_.end(), at);
    if (it == pending_.end()) return false;
    next = *it;
    return true;
}

// ---------------------------------------------------------------- RecordWriter

RecordWriter::RecordWriter(MemoryPort& memory, const PldmaConfig& params, PldmaStats& stats)
    : memory_(memory), params_(params), stats_(stats) {}

sc_time RecordWriter::write(std::uint32_t sid, std::uint64_t addr, const CompletionRecord& r, sc_time at, bool& ok,
                            SmmuFaultExtension& fx) {
    unsigned char buf[sizeof(CompletionRecord)];
    std::memcpy(buf, &r, sizeof r);   // the host is little-endian like the A53 in its usual mode
    return memory_.access(sid, tlm::TLM_WRITE_COMMAND, addr, buf, sizeof buf, at, ok, &fx);
}

sc_time RecordWriter::post(std::uint32_t sid, std::uint64_t addr, const CompletionRecord& r, sc_time at,
                           RecordSignals raise) {
    if (params_.fault_tolerant && behind(raise)) {
        // An earlier record of this channel waits for its page: this one
        // follows it (else the channel's count would announce a later slot
        // while an earlier one is still empty).
        Retry rr;
        rr.sid = sid;
        rr.addr = addr;
        rr.record = r;
        rr.raise = std::move(raise);
        rr.at = at;
        rr.faulted = false;
        retry_.push_back(std::move(rr));
        ev_.notify(sc_core::SC_ZERO_TIME);
        return at;
    }
    bool ok = true;
    SmmuFaultExtension fx;
    const sc_time done = write(sid, addr, r, at, ok, fx);
    if (!ok && params_.fault_tolerant && fx.type != FaultType::None) {
        // The record's page faulted: the record thread writes it again once
        // the fault is resolved; its signals are raised then.
        Retry rr;
        rr.sid = sid;
        rr.addr = addr;
        rr.record = r;
        rr.raise = std::move(raise);
        rr.at = done;
        retry_.push_back(std::move(rr));
        ev_.notify(sc_core::SC_ZERO_TIME);
        return done;
    }
    if (ok) done_[record_key(sid, addr)] = done;
    if (!ok) {
        // The record could not be written: software will never see it.
        // Count it loudly; the interrupt still fires so software can notice.
        stats_.rx_errors.inc();
    }
    for (CompletionSignal* sig : raise) sig->raise_at(done);
    return done;
}

RecordSignals::RecordSignals(std::initializer_list<CompletionSignal*> signals) {
    if (signals.size() > kMost) throw std::logic_error("a record raises at most " + std::to_string(kMost) + " signals");
    for (CompletionSignal* s : signals) sig_[n_++] = s;
}

bool RecordSignals::shares(const RecordSignals& other) const {
    for (CompletionSignal* s : *this)
        if (std::find(other.begin(), other.end(), s) != other.end()) return true;
    return false;
}

bool RecordWriter::behind(const RecordSignals& raise) const {
    if (raise.shares(busy_)) return true;
    for (const Retry& rr : retry_)
        if (raise.shares(rr.raise)) return true;
    return false;
}

void RecordWriter::wait_outcome(const Retry& rr) {
    wait_page_ = rr.addr >> 12;
    wait_sid_ = rr.sid;
    waiting_ = true;
    wait_done_ = false;
    const sc_time deadline = rr.at + params_.fault_timeout;
    while (!wait_done_ && sc_core::sc_time_stamp() < deadline)
        sc_core::wait(deadline - sc_core::sc_time_stamp(), ev_.get());
    waiting_ = false;
    if (!wait_done_) stats_.fault_timeouts.inc();
}

void RecordWriter::run() {
    for (;;) {
        while (retry_.empty()) sc_core::wait(ev_.get());
        Retry rr = retry_.front();
        retry_.pop_front();
        busy_ = rr.raise;
        // A record queued behind a faulted one is tried first as it is.
        bool tried = rr.faulted;
        for (;;) {
            sc_time t = max_time(sc_core::sc_time_stamp(), rr.at);
            if (tried) {
                // Wait for the outcome of the page's fault (or the timeout), then write again.
                wait_outcome(rr);
                t = max_time(sc_core::sc_time_stamp(), wait_at_);
                stats_.record_retries.inc();
            }
            bool ok = true;
            SmmuFaultExtension fx;
            const sc_time done = write(rr.sid, rr.addr, rr.record, t, ok, fx);
            if (ok || fx.type == FaultType::None || (tried && wait_done_ && !wait_resolved_)) {
                if (!ok) stats_.rx_errors.inc();   // lost: not a fault, or the page cannot be made present
                if (ok) done_[record_key(rr.sid, rr.addr)] = done;
                for (CompletionSignal* sig : rr.raise) sig->raise_at(done);
                break;
            }
            rr.at = done;
            tried = true;
        }
        busy_.clear();
    }
}

bool RecordWriter::fault_resolved(std::uint32_t sid, std::uint64_t page, bool resolved, sc_time at) {
    if (!waiting_ || wait_done_ || wait_page_ != page || wait_sid_ != sid) return false;
    wait_done_ = true;
    wait_resolved_ = resolved;
    wait_at_ = at;
    ev_.notify(sc_core::SC_ZERO_TIME);
    return true;
}

void RecordWriter::bad_record_key() {
    throw std::logic_error("RecordWriter: a record address above 2^48 or a stream ID above 16 bits");
}

bool RecordWriter::done_at(std::uint32_t sid, std::uint64_t addr, sc_time& at) const {
    auto it = done_.find(record_key(sid, addr));
    if (it == done_.end()) return false;
    at = it->second;
    return true;
}

}   // namespace vrdmasim
