// Ordered notifications over an out-of-order network: the sequence window
// (dma.notify-window = W > 0; README.md "Ordered notifications").
//
// Each notifying write (DESC_FLAGS bit 0 or bit 2, DESC_LEN > 0) takes, at
// its doorbell, the next notification sequence number of its (destination
// node, protection domain) at the sender (SendWindows::assign): doorbell
// order, across all the channels of that domain. The sender starts it only
// while its number is less than W beyond the oldest number of that pair the
// receiver has not answered yet (SendWindows::admit); the receiver answers
// every number exactly once: the ACK or error ACK of the write (sent after
// its notification was delivered or held), or the answer to a skip (a write
// that failed at the sender, whose number the receiver would otherwise wait
// for forever). The receiver (NotificationOrder) delivers the notifications
// of each (source node, protection domain) in number order: one that lands
// early is held (at most W - 1 per pair, by the sender's admission) and
// delivered right after its predecessor, at the later of their times.
//
// With W = 0 nothing is numbered: each notification is delivered when its
// write has landed (the ExaNeSt engine), and NotificationOrder only counts
// how many came after a later-posted one (`notify_reordered`).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include <systemc>

#include "models/dma/stats.hpp"

namespace vrdmasim {

// A pair of the window: (node, protection domain). At the sender the node
// is the destination, at the receiver the source.
using WindowKey = std::pair<unsigned, std::uint16_t>;
// The pairs are found by hash (an all-to-all has one per pair of nodes:
// at 1,296 MPSoCs each node's tree of 1,295 pairs was eleven nodes deep,
// a miss of the caches at most of them, at every notification); nothing
// reads them in an order.
struct WindowKeyHash {
    std::size_t operator()(const WindowKey& k) const noexcept {
        return std::hash<std::uint64_t>()((std::uint64_t(k.first) << 16) | k.second);
    }
};

class SendWindows {
public:
    SendWindows(unsigned window, PldmaStats& stats) : window_(window), stats_(stats) {}
    SendWindows(const SendWindows&) = delete;
    SendWindows& operator=(const SendWindows&) = delete;

    bool enabled() const { return window_ > 0; }
    unsigned window() const { return window_; }

    // The doorbell of a notifying write to (dst, pd): its sequence number
    // plus one (0 is "none" in descriptors and packets).
    std::uint64_t assign(unsigned dst, std::uint16_t pd);
    // May the write numbered `nseq` (plus one) start at `now`? True: yes,
    // from `from` (>= now: the time the answer that made room for it came).
    bool admit(unsigned dst, std::uint16_t pd, std::uint64_t nseq, sc_core::sc_time now, sc_core::sc_time& from);
    // The receiver answered number `nseq` (plus one) at `at`.
    void answered(unsigned dst, std::uint16_t pd, std::uint64_t nseq, sc_core::sc_time at);
    // Transfer `id`, numbered `nseq`, failed here: a skip goes to the
    // receiver, whose answer (a response for `id`) retires the number.
    void skipping(std::uint64_t id, unsigned dst, std::uint16_t pd, std::uint64_t nseq);
    // A response for `id`, which is not outstanding: true if it answers a
    // skip (the number is retired at `at`).
    bool skip_answered(std::uint64_t id, sc_core::sc_time at);
    // Numbers assigned and not answered yet (0 at the end of a run whose
    // transfers all completed).
    std::uint64_t unanswered() const;

private:
    struct Pair {
        std::uint64_t next = 0;   // the next number to assign
        std::uint64_t base = 0;   // every number below is answered
        sc_core::sc_time base_at;   // when the last of them was
        std::map<std::uint64_t, sc_core::sc_time> ahead;   // answered beyond base, and when
        // The time every number up to n was answered, for n < base (kept
        // from the oldest number that may still ask: see `trim`).
        std::map<std::uint64_t, sc_core::sc_time> covered;
    };
    struct Skip {
        WindowKey key;
        std::uint64_t nseq;
    };
    const unsigned window_;
    PldmaStats& stats_;
    std::unordered_map<WindowKey, Pair, WindowKeyHash> pairs_;
    std::map<std::uint64_t, Skip> skips_;   // by transfer id
};

// A notification of a write that has landed (or failed), waiting for its
// turn at the receiver.
struct PendingNotification {
    int channel = -1;   // receiving channel (-1: none, nothing is written)
    bool record = false;   // a ring record (DESC_FLAGS bit 0)
    int counter = -1;   // the event counter it increments (-1: none)
    std::uint64_t id = 0;   // the sender's transfer id
    unsigned src = 0;   // source node
    std::uint16_t pd = 0;   // protection domain
    std::uint64_t bytes = 0, dst = 0;
    bool ok = true;
    std::uint64_t nseq = 0;   // notification sequence number plus one (0: unordered)
    bool skip = false;   // the sender's skip: no notification, the number is released
    Tracer::Cause story;   // the step its delivery follows (the transfer's start at its sender)
};

class NotificationOrder {
public:
    // `deliver(n, at)` writes notification `n` (record, counter) at `at`,
    // which becomes the time it is delivered.
    using DeliverFn = std::function<void(const PendingNotification&, sc_core::sc_time&)>;
    NotificationOrder(unsigned window, PldmaStats& stats, PldmaTrace& trace, DeliverFn deliver)
        : window_(window), stats_(stats), trace_(trace), deliver_(std::move(deliver)) {}
    NotificationOrder(const NotificationOrder&) = delete;
    NotificationOrder& operator=(const NotificationOrder&) = delete;

    // Notification `n` is ready at `at` (its write landed then): delivered
    // now (`at` becomes its delivery time) with the held ones it releases,
    // or held until its predecessors are. A skip delivers nothing.
    void arrive(const PendingNotification& n, sc_core::sc_time& at);
    // Notifications held now (0 at the end of a run whose transfers all completed).
    std::uint64_t held() const;

private:
    struct Held {
        PendingNotification n;
        sc_core::sc_time landed;
    };
    struct Recent {
        std::uint64_t id = 0;
        sc_core::sc_time at;   // when delivered
        bool counted = false;   // already counted as reordered
    };
    // One per sender and protection domain, kept to the end: small (an
    // all-to-all has one per pair of nodes, 268 million at 16,384 MPSoCs).
    struct Pair {
        std::uint64_t next = 0;   // the number delivered next
        sc_core::sc_time last_at;   // when the pair's latest notification was delivered
        // The pair's latest deliveries (kRecent), by transfer id, from
        // recent[first] on (the ones before are dropped, the vector
        // compacted every kRecent).
        std::vector<Recent> recent;
        std::uint32_t first = 0;
        // Landed early (in call order), by number: made at the pair's first
        // (never without dma.notify-window).
        std::unique_ptr<std::map<std::uint64_t, Held>> held;
    };
    static constexpr std::size_t kRecent = 256;
    // Deliver `n`, whose write landed at `landed`, in number order at `at`
    // (>= landed; updated to the delivery time): a notification delivered
    // later than its write landed was held.
    void deliver(Pair& pair, const PendingNotification& n, sc_core::sc_time landed, sc_core::sc_time& at);
    // Count the notifications of `pair` delivered (in time) after a
    // later-posted one, now that transfer `id` is delivered at `at`.
    void count_reordered(Pair& pair, std::uint64_t id, sc_core::sc_time at);
    void trace_held(const PendingNotification& n, sc_core::sc_time landed, sc_core::sc_time delivered);

    const unsigned window_;
    PldmaStats& stats_;
    PldmaTrace& trace_;
    DeliverFn deliver_;
    std::unordered_map<WindowKey, Pair, WindowKeyHash> pairs_;
};

}   // namespace vrdmasim
