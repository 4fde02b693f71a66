// The sequence window of ordered notifications (see sequence_window.hpp;
// README.md "Ordered notifications").
#include "models/dma/sequence_window.hpp"

#include <algorithm>
#include <sstream>

namespace vrdmasim {

using sc_core::sc_time;

// ---------------------------------------------------------------- sender

std::uint64_t SendWindows::assign(unsigned dst, std::uint16_t pd) {
    if (window_ == 0) return 0;
    return pairs_[{dst, pd}].next++ + 1;
}

bool SendWindows::admit(unsigned dst, std::uint16_t pd, std::uint64_t nseq, sc_time now, sc_time& from) {
    from = now;
    if (window_ == 0 || nseq == 0) return true;
    const std::uint64_t k = nseq - 1;
    if (k < window_) return true;   // within the first window: nothing to wait for
    const Pair& p = pairs_[{dst, pd}];
    const std::uint64_t need = k - window_;   // this number must be answered, and all before it
    if (need >= p.base) return false;
    // Every number below base is answered; `covered` keeps the time each
    // prefix was complete back to base - window (no unanswered number can
    // ask for an older one).
    auto it = p.covered.find(need);
    if (it != p.covered.end() && it->second > from) from = it->second;
    return true;
}

void SendWindows::answered(unsigned dst, std::uint16_t pd, std::uint64_t nseq, sc_time at) {
    if (window_ == 0 || nseq == 0) return;
    Pair& p = pairs_[{dst, pd}];
    const std::uint64_t k = nseq - 1;
    // A number answered twice (a skip crossing the ACK of a transfer the
    // receiver completed out of order) retires once.
    if (k < p.base || p.ahead.count(k)) return;
    p.ahead[k] = at;
    for (auto it = p.ahead.find(p.base); it != p.ahead.end() && it->first == p.base; it = p.ahead.find(p.base)) {
        if (it->second > p.base_at) p.base_at = it->second;
        p.covered[p.base] = p.base_at;
        p.ahead.erase(it);
        ++p.base;
    }
    // Keep the prefix times an unanswered number (>= base) may ask for.
    const std::uint64_t oldest = p.base > window_ ? p.base - window_ : 0;
    p.covered.erase(p.covered.begin(), p.covered.lower_bound(oldest));
}

void SendWindows::skipping(std::uint64_t id, unsigned dst, std::uint16_t pd, std::uint64_t nseq) {
    skips_[id] = Skip{{dst, pd}, nseq};
    stats_.notify_skips.inc();
}

bool SendWindows::skip_answered(std::uint64_t id, sc_time at) {
    auto it = skips_.find(id);
    if (it == skips_.end()) return false;
    const Skip s = it->second;
    skips_.erase(it);
    answered(s.key.first, s.key.second, s.nseq, at);
    return true;
}

std::uint64_t SendWindows::unanswered() const {
    std::uint64_t n = 0;
    for (const auto& kv : pairs_) n += kv.second.next - kv.second.base - kv.second.ahead.size();
    return n;
}

// ---------------------------------------------------------------- receiver

void NotificationOrder::arrive(const PendingNotification& n, sc_time& at) {
    Pair& p = pairs_[{n.src, n.pd}];
    if (window_ == 0 || n.nseq == 0) {
        if (n.skip) return;
        count_reordered(p, n.id, at);
        deliver_(n, at);
        return;
    }
    const std::uint64_t k = n.nseq - 1;
    if (k < p.next || (p.held && p.held->count(k))) {
        // Consumed already: a skip crossing a completed transfer's ACK is
        // harmless (it is answered all the same); a notification is not.
        if (!n.skip) stats_.notify_seq_errors.inc();
        return;
    }
    if (k != p.next) {
        // Landed before an earlier-posted one of its pair was delivered:
        // held. The sender's admission keeps it within the window (self-check).
        if (k >= p.next + window_) stats_.notify_seq_errors.inc();
        if (!p.held) p.held = std::make_unique<std::map<std::uint64_t, Held>>();
        p.held->emplace(k, Held{n, at});
        const double size = static_cast<double>(p.held->size());
        if (size > stats_.notify_window_peak.value()) stats_.notify_window_peak.set(size);
        if (trace_.tracer.noting()) {
            std::ostringstream os;
            os << (n.skip ? "skip of transfer " : "notification of transfer ") << transfer_name(n.id) << " from node"
               << n.src << " (domain " << n.pd << ", number " << k << ") held: number " << p.next
               << " not delivered yet";
            trace_.tracer.note(Tracer::Track{}, "notification held", at, sc_core::SC_ZERO_TIME, trace_.who, os.str(),
                               n.story);
        }
        return;
    }
    // Its turn: delivered, then the held ones that follow, each no earlier
    // than the one before (in number order, in time).
    ++p.next;
    if (n.skip) stats_.notify_skipped.inc();
    else deliver(p, n, at, at);
    if (!p.held) return;
    for (auto it = p.held->find(p.next); it != p.held->end(); it = p.held->find(p.next)) {
        const Held h = it->second;
        p.held->erase(it);
        ++p.next;
        if (h.n.skip) {
            stats_.notify_skipped.inc();
            continue;
        }
        sc_time d = h.landed;
        deliver(p, h.n, h.landed, d);
    }
}

void NotificationOrder::deliver(Pair& p, const PendingNotification& n, sc_time landed, sc_time& at) {
    at = max_time(at, p.last_at);
    if (at > landed) {
        stats_.notify_held.inc();
        stats_.notify_hold_us.add(to_us(at - landed));
        trace_held(n, landed, at);
    }
    count_reordered(p, n.id, at);
    deliver_(n, at);
    p.last_at = at;
}

void NotificationOrder::count_reordered(Pair& p, std::uint64_t id, sc_time at) {
    // Transfer ids grow in doorbell order at their sender. This one came
    // after a later-posted one delivered earlier in time; an earlier-posted
    // one delivered later in time than this came after it.
    const auto begin = p.recent.begin() + p.first, end = p.recent.end();
    bool late = false;
    const auto after = std::upper_bound(begin, end, id, [](std::uint64_t v, const Recent& r) { return v < r.id; });
    for (auto it = after; it != end; ++it)
        if (it->at < at) late = true;
    for (auto it = begin; it != end && it->id < id; ++it)
        if (!it->counted && it->at > at) {
            it->counted = true;
            stats_.notify_reordered.inc();
        }
    if (late) stats_.notify_reordered.inc();
    const auto at_id = std::lower_bound(begin, end, id, [](const Recent& r, std::uint64_t v) { return r.id < v; });
    if (at_id != end && at_id->id == id) *at_id = Recent{id, at, late};
    else p.recent.insert(at_id, Recent{id, at, late});
    if (p.recent.size() - p.first > kRecent && ++p.first == kRecent) {
        p.recent.erase(p.recent.begin(), p.recent.begin() + p.first);
        p.first = 0;
    }
}

void NotificationOrder::trace_held(const PendingNotification& n, sc_time landed, sc_time delivered) {
    Tracer& tracer = trace_.tracer;
    if (tracer.enabled())
        tracer.async_span(trace_.track, "notification held", n.id, landed, delivered,
                          {{"transfer", Tracer::json_string(transfer_name(n.id))},
                           {"src_node", Tracer::json_number(static_cast<std::uint64_t>(n.src))},
                           {"number", Tracer::json_number(n.nseq - 1)}});
    if (tracer.noting()) {
        std::ostringstream os;
        os << "notification of transfer " << transfer_name(n.id) << " from node" << n.src
           << " delivered in order after " << to_us(delivered - landed) << " us held";
        tracer.note(Tracer::Track{}, "notification delivered", delivered, sc_core::SC_ZERO_TIME, trace_.who, os.str(),
                    n.story);
    }
}

std::uint64_t NotificationOrder::held() const {
    std::uint64_t n = 0;
    for (const auto& kv : pairs_)
        if (kv.second.held) n += kv.second.held->size();
    return n;
}

}   // namespace vrdmasim
