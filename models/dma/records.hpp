// Completion and notification records: the 32-byte records the engine
// writes into memory (CompletionRecord), the interrupt line and count
// register software reads for them (CompletionSignal), and the writer that
// puts a record in memory and, fault-tolerant, writes it again once a
// faulting page is resolved (RecordWriter). README.md "Protocol".
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <functional>
#include <initializer_list>
#include <unordered_map>
#include <vector>

#include <systemc>

#include "models/dma/memory_port.hpp"
#include "models/dma/params.hpp"
#include "models/dma/stats.hpp"
#include "src/core/lazy_deque.hpp"
#include "src/core/lazy_event.hpp"
#include "src/core/lazy_thread.hpp"

namespace vrdmasim {

// 32-byte records written by the engine into memory (little-endian).
struct CompletionRecord {
    std::uint64_t tag = 0;   // tx: descriptor tag; rx: transfer id
    std::uint32_t status = 0;   // kStatusOk / kStatusError (0: not written yet)
    std::uint32_t node = 0;   // tx: destination node; rx: source node
    std::uint64_t bytes = 0;   // bytes delivered
    std::uint64_t addr = 0;   // tx: source address; rx: destination address
};
static_assert(sizeof(CompletionRecord) == 32, "record layout");
constexpr std::uint32_t kStatusOk = 1;
constexpr std::uint32_t kStatusError = 2;
// Only in a response packet (NACK), fault-tolerant mode: the receiver's
// payload write faulted at the sequence number carried with it.
constexpr std::uint32_t kStatusFault = 3;

// An interrupt line together with the count register software reads: each
// record becomes visible at its own time; `event` fires at (or before) the
// next one.
class CompletionSignal {
public:
    void raise_at(sc_core::sc_time at);
    std::uint64_t count_at(sc_core::sc_time at);
    // Earliest pending record time after `at`, or SC_ZERO_TIME if none.
    bool next_after(sc_core::sc_time at, sc_core::sc_time& next) const;
    sc_core::sc_event& event() { return event_.get(); }
    // Records raised so far, whatever their time: a waiter that remembers
    // it when it looks can tell whether anything was raised since.
    std::uint64_t raised() const { return raised_; }
    // Call `f(at)` for every record raised from now on (the user library's
    // handler thread: rdma.completion = handler); one observer, replaced.
    void observe(std::function<void(sc_core::sc_time)> f) { observer_ = std::move(f); }

private:
    std::uint64_t raised_ = 0;
    LazyDeque<sc_core::sc_time> pending_;   // sorted
    std::uint64_t done_ = 0;   // records already visible and dropped from pending_
    LazyEvent event_;   // made when first waited for or notified: most lines of a large torus never are
    std::function<void(sc_core::sc_time)> observer_;
};

// The signals a record raises once it is in memory: its channel's
// receive count and records line, or its send count (one or two), kept in
// place (a vector was an allocation at each record: two a message of an
// alltoall).
class RecordSignals {
public:
    static constexpr std::size_t kMost = 2;
    RecordSignals() = default;
    RecordSignals(std::initializer_list<CompletionSignal*> signals);
    CompletionSignal* const* begin() const { return sig_.data(); }
    CompletionSignal* const* end() const { return sig_.data() + n_; }
    bool shares(const RecordSignals& other) const;
    void clear() { n_ = 0; }

private:
    std::array<CompletionSignal*, kMost> sig_{};
    std::size_t n_ = 0;
};

class RecordWriter {
public:
    RecordWriter(MemoryPort& memory, const PldmaConfig& params, PldmaStats& stats);

    // Write a record at `at` and raise `raise` when it is in memory; a
    // fault-tolerant engine whose write faults writes it again once the
    // fault is resolved (run). Returns the first attempt's end.
    // `sid`: the stream ID of the channel the record is for.
    sc_core::sc_time post(std::uint32_t sid, std::uint64_t addr, const CompletionRecord& r, sc_core::sc_time at,
                          RecordSignals raise);
    // The record thread (fault-tolerant): records whose write faulted,
    // written again in order.
    void run();
    // The writer thread's wake-up (a record queued, or a fault's outcome).
    WakeEvent& event() { return ev_; }
    // The fault library's outcome for a write fault on `page` of stream
    // `sid`: true if the record thread was waiting on it.
    bool fault_resolved(std::uint32_t sid, std::uint64_t page, bool resolved, sc_core::sc_time at);
    // When the latest record at `addr` of stream `sid` was complete in
    // memory (false: none). The processes of a node share virtual
    // addresses: a record is known by its stream and its address.
    bool done_at(std::uint32_t sid, std::uint64_t addr, sc_core::sc_time& at) const;

private:
    struct Retry {
        std::uint32_t sid = 0;
        std::uint64_t addr = 0;
        CompletionRecord record;
        RecordSignals raise;
        sc_core::sc_time at;
        bool faulted = true;   // false: queued behind a faulted record of the same signals, not tried yet
    };
    // Whether a record raising `raise` must queue behind a record of the
    // same channel that the record thread has not written yet: a channel's
    // records are written, and counted, in the order they were posted.
    bool behind(const RecordSignals& raise) const;
    // Write `r` at `at`; `fx` receives the fault extension.
    sc_core::sc_time write(std::uint32_t sid, std::uint64_t addr, const CompletionRecord& r, sc_core::sc_time at,
                           bool& ok, SmmuFaultExtension& fx);
    // Wait for the outcome of the page's fault (or the timeout).
    void wait_outcome(const Retry& rr);

    MemoryPort& memory_;
    const PldmaConfig& params_;
    PldmaStats& stats_;
    // A record's key: its stream ID (16 bits, the MMU-500's) above its
    // address (virtual and physical addresses are below 2^48; both
    // checked): one word, as cheap to hash as the address alone was.
    static std::uint64_t record_key(std::uint32_t sid, std::uint64_t addr) {
        if (addr >> 48 || sid >> 16) bad_record_key();
        return static_cast<std::uint64_t>(sid) << 48 | addr;
    }
    [[noreturn]] static void bad_record_key();
    std::unordered_map<std::uint64_t, sc_core::sc_time> done_;   // record_key(stream, address) -> written by
    LazyDeque<Retry> retry_;
    RecordSignals busy_;   // the signals of the record the thread is writing
    WakeEvent ev_;   // made when a record is first queued or waited for
    bool waiting_ = false, wait_done_ = false, wait_resolved_ = false;
    std::uint64_t wait_page_ = 0;
    std::uint32_t wait_sid_ = 0;
    sc_core::sc_time wait_at_;
};

}   // namespace vrdmasim
