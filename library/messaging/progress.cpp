// The two-sided library's progress engine (see endpoint.hpp): reading the
// notification ring in order, handling each peer's slots in its sequence
// order, sending what waits for a credit, returning credits.
#include <sstream>
#include <stdexcept>

#include "library/messaging/endpoint.hpp"

namespace vrdmasim {
namespace msg {

bool Endpoint::enter_engine() {
    const sc_core::sc_process_b* me = sc_core::sc_get_current_process_b();
    if (engine_depth_ == 0 || engine_owner_ == me) {
        engine_owner_ = me;
        ++engine_depth_;
        return true;
    }
    if (!engine_idle_) {
        const UnderModule under(&app_);
        engine_idle_ = std::make_unique<LazyEvent>();
    }
    ++engine_waiters_;
    app_.wait_until([this] { return engine_depth_ == 0; }, engine_idle_->get());
    --engine_waiters_;
    return false;
}

void Endpoint::leave_engine() {
    if (--engine_depth_) return;
    engine_owner_ = nullptr;
    if (engine_waiters_) engine_idle_->notify(sc_core::SC_ZERO_TIME);
}

void Endpoint::progress() {
    const InEngine engine(*this);
    if (!engine.in) return;
    const std::uint64_t events = app_.rx_events();
    if (events - consumed_ > ring_)
        throw std::runtime_error(app_.group() + ": two-sided library's notification ring overflowed (" +
                                 std::to_string(events - consumed_) + " unread, " + std::to_string(ring_) +
                                 " entries)");
    events_seen_ = events;
    // In ring order; an entry not written yet (its record's page faulted and
    // the engine writes it later, raising the count again) stops the walk.
    for (; consumed_ < events; ++consumed_) {
        const CompletionRecord rec = app_.read_rx_record(consumed_);
        if (rec.status == 0) {
            stats_.ring_gaps.inc();
            break;
        }
        app_.clear_rx_record(consumed_);
        handle_notification(rec);
    }
    for (Peer& p : peers_) handle_slots(p);
    // Rendezvous writes whose completion came (only looked at when the
    // channel's completion count moved).
    bool writing = false;
    for (auto& kv : reqs_) writing = writing || (!kv.second.done && !kv.second.parts.empty());
    if (writing) {
        const std::uint64_t tx = app_.tx_completions();
        if (tx != tx_seen_) {
            tx_seen_ = tx;
            for (auto& kv : reqs_)
                if (!kv.second.done && !kv.second.parts.empty()) finish_parts(kv.first, kv.second, false);
        }
    }
    for (Peer& p : peers_) {
        return_credits(p);
        send_queued(p);
    }
}

void Endpoint::block() {
    // Writes in flight complete without the peer's software: finish them
    // (bounded), so that nothing waits on a completion this process has not
    // looked at; otherwise sleep until the next notification.
    bool any = false;
    {
        const InEngine engine(*this);
        if (!engine.in) return;
        for (auto& kv : reqs_)
            if (!kv.second.done && !kv.second.parts.empty()) {
                any = true;
                finish_parts(kv.first, kv.second, true);
            }
    }
    if (!any) app_.wait_rx(events_seen_ + 1);   // a notification raised since the last look
}

void Endpoint::handle_notification(const CompletionRecord& rec) {
    if (rec.status != kStatusOk) {
        std::ostringstream os;
        os << app_.group() << ": a two-sided message's write from node" << rec.node << " to 0x" << std::hex << rec.addr
           << std::dec << " (" << rec.bytes << " B) failed in the engine (the library does not retransmit)";
        throw std::runtime_error(os.str());
    }
    Peer& p = peer(rec.node);
    if (rec.addr >= p.rx && rec.addr < p.rx + slots_ * slot_size()) {
        const std::uint64_t off = rec.addr - p.rx;
        const std::uint64_t slot = off / slot_size();
        if (off % slot_size() != 0 || p.arrived[slot])
            throw std::logic_error(app_.group() + ": eager slot " + std::to_string(slot) + " of node" +
                                   std::to_string(p.node) + " written again before it was copied out (credits broken)");
        p.arrived[slot] = true;
        return;
    }
    if (rec.addr == p.credit_word) {
        std::uint64_t v = 0;
        if (!app_.debug_read(p.credit_word, reinterpret_cast<unsigned char*>(&v), 8))
            throw std::runtime_error(app_.group() + ": credit word unreadable");
        p.out.update(v);
        return;
    }
    data_notified(p, rec);
}

void Endpoint::handle_slots(Peer& p) {
    while (p.arrived[p.next_seq % slots_]) {
        const std::uint64_t slot = p.next_seq % slots_;
        const std::uint64_t addr = p.rx + slot * slot_size();
        Header h;
        if (!app_.debug_read(addr, reinterpret_cast<unsigned char*>(&h), sizeof h))
            throw std::runtime_error(app_.group() + ": eager slot unreadable");
        charge_copy(sizeof h);
        if (h.seq != p.next_seq || h.src != p.node)
            throw std::logic_error(app_.group() + ": eager slot " + std::to_string(slot) + " of node" +
                                   std::to_string(p.node) + " holds message " + std::to_string(h.seq) + " from node" +
                                   std::to_string(h.src) + ", expected " + std::to_string(p.next_seq) +
                                   " (overwritten or out of order)");
        p.arrived[slot] = false;
        p.out.update(h.credits);
        switch (h.kind) {
        case Kind::Eager: eager_arrived(p, h, addr); break;
        case Kind::Rts: {
            std::uint64_t rid = 0;
            const std::uint64_t uid = next_unexpected_++;
            const bool hit = match_.arrive(p.node, h.tag, uid, rid);
            stats_.match_searched.inc(match_.searched());
            app_.compute("msg-match", match_cost_ * static_cast<double>(std::max<std::size_t>(match_.searched(), 1)));
            if (hit) {
                rts_matched(p, h, rid, reqs_.at(rid));
            } else {
                stats_.unexpected.inc();
                unexpected_[uid].h = h;
            }
            break;
        }
        case Kind::Cts: cts_arrived(p, h); break;
        case Kind::Fin: fin_arrived(p, h); break;
        default: throw std::logic_error(app_.group() + ": eager slot holds an unknown message kind");
        }
        p.in.free_one();
        ++p.next_seq;
    }
}

void Endpoint::send_queued(Peer& p) {
    while (!p.queue.empty()) {
        Outgoing& o = p.queue.front();
        if (!p.out.available()) {
            if (!o.stalled) stats_.credit_stalls.inc();
            o.stalled = true;
            return;
        }
        Outgoing front = o;
        p.queue.pop_front();
        launch(p, front);
    }
}

void Endpoint::reap_bounce(Peer& p, std::uint64_t slot) {
    if (!p.bounce_busy[slot]) return;
    const CompletionRecord c = app_.wait_record(record(static_cast<unsigned>(index_.at(p.node)), slot));
    if (c.status != kStatusOk)
        throw std::runtime_error(app_.group() + ": a two-sided message's write to node" + std::to_string(p.node) +
                                 " failed in the engine (the library does not retransmit)");
    p.bounce_busy[slot] = false;
}

void Endpoint::launch(Peer& p, Outgoing& o) {
    const std::uint64_t seq = p.out.take();
    const std::uint64_t slot = seq % slots_;
    reap_bounce(p, slot);   // this bounce slot's previous write (long done: its slot was freed since)
    Header h = o.h;
    h.src = app_.node();
    h.seq = seq;
    h.credits = p.in.freed();   // piggybacked credit return
    p.in.returned(h.credits);
    const std::uint64_t at = p.bounce + slot * slot_size();
    if (!app_.debug_write(at, reinterpret_cast<const unsigned char*>(&h), sizeof h))
        throw std::runtime_error(app_.group() + ": bounce slot not writable");
    charge_copy(sizeof h);
    const std::uint64_t payload = h.kind == Kind::Eager ? h.len : 0;
    if (payload) {
        copy(o.payload, at + sizeof h, payload);
        stats_.copy_bytes.inc(payload);
    }
    if (h.kind != Kind::Eager) {
        stats_.control.inc();
        step(to_string(h.kind), std::string(to_string(h.kind)) + " to node" + std::to_string(p.node) + ": tag " +
                                    std::to_string(h.tag) + ", " + std::to_string(h.len) + " B");
    }
    post(at, p.node, p.remote_rx + slot * slot_size(), sizeof h + payload,
         record(static_cast<unsigned>(index_.at(p.node)), slot));
    p.bounce_busy[slot] = true;
    if (h.kind == Kind::Eager) {
        // Buffered: the user buffer may be reused once copied.
        Req& r = reqs_.at(o.req);
        complete(o.req, r);
    }
}

void Endpoint::return_credits(Peer& p) {
    if (!p.in.due()) return;
    const unsigned i = static_cast<unsigned>(index_.at(p.node));
    if (p.credit_busy) {
        // One update in flight at a time: the word at the peer only grows.
        const CompletionRecord c = app_.wait_record(record(i, slots_));
        if (c.status != kStatusOk)
            throw std::runtime_error(app_.group() + ": a credit return to node" + std::to_string(p.node) + " failed");
    }
    const std::uint64_t v = p.in.freed();
    if (!app_.debug_write(p.credit_src, reinterpret_cast<const unsigned char*>(&v), 8))
        throw std::runtime_error(app_.group() + ": credit word not writable");
    charge_copy(8);
    post(p.credit_src, p.node, p.remote_credit, 8, record(i, slots_));
    p.credit_busy = true;
    p.in.returned(v);
    stats_.credit_updates.inc();
    step("credit return", "credit return to node" + std::to_string(p.node) + ": " + std::to_string(v) + " slots freed");
}

}   // namespace msg
}   // namespace vrdmasim
