#include "workloads/messaging/endpoint.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "models/os/vm_params.hpp"
#include "workloads/messaging/params.hpp"

namespace vrdmasim {
namespace msg {

using sc_core::sc_time;

const char* to_string(Kind k) {
    switch (k) {
        case Kind::Eager: return "eager";
        case Kind::Rts: return "ready-to-send";
        case Kind::Cts: return "clear-to-send";
        case Kind::Fin: return "FIN";
    }
    return "?";
}

namespace {
constexpr std::uint64_t kPoolRecords = 128;   // rendezvous records mapped at a time (4 KiB)
std::uint64_t slot_bytes(const Config& c) { return c[params_of<MsgParams>().eager_threshold] + sizeof(Header); }
std::uint64_t slots_of(const Config& c) { return static_cast<std::uint64_t>(c[params_of<MsgParams>().eager_slots]); }
std::uint32_t ring_for(const Config& c, std::size_t peers) {
    // Every slot of every peer written, a credit word each, and room for
    // rendezvous data notifications: the ring is drained at every call.
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(65536, 2 * peers * (slots_of(c) + 2) + 256));
}
}  // namespace

std::vector<std::uint64_t> Endpoint::locked_regions(const Config& c, std::size_t peers) {
    return {peers * (slots_of(c) + 1) * sizeof(CompletionRecord), kPoolRecords * sizeof(CompletionRecord),
            ring_for(c, peers) * sizeof(CompletionRecord)};
}

std::uint64_t Endpoint::mapped_bytes(const Config& c, std::size_t peers) {
    std::uint64_t b = 2 * peers * slots_of(c) * slot_bytes(c) + 2 * 4096;
    for (std::uint64_t r : locked_regions(c, peers)) b += (r + 4095) / 4096 * 4096;
    return b;
}

Endpoint::Endpoint(const SimContext& ctx, App& app, std::vector<unsigned> peers)
    : ctx_(ctx),
      app_(app),
      peer_nodes_(std::move(peers)),
      threshold_(ctx.config[params_of<MsgParams>().eager_threshold]),
      slots_(slots_of(ctx.config)),
      write_mode_(ctx.config[params_of<MsgParams>().rendezvous] == "write"),
      match_cost_(ctx.config[params_of<MsgParams>().match_cost]),
      copy_rate_(ctx.config[params_of<VmParams>().copy_rate] / 8),
      stats_(ctx.stats, app.group() + ".msg."),
      track_(ctx.tracer.track(app.group(), "msg")) {
    for (unsigned n : peer_nodes_) {
        if (n == app.node()) throw std::logic_error("an endpoint cannot be its own peer");
        index_[n] = peers_.size();
        peers_.emplace_back(slots_);
        peers_.back().node = n;
    }
}

Endpoint::~Endpoint() = default;

Endpoint::Peer& Endpoint::peer(unsigned node) {
    const auto it = index_.find(node);
    if (it == index_.end())
        throw std::runtime_error(app_.group() + ": two-sided message to or from node" + std::to_string(node) +
                                 ", which is not a peer of this endpoint");
    return peers_[it->second];
}

void Endpoint::setup() {
    const std::size_t n = peers_.size();
    const std::uint64_t area = slots_ * slot_size();
    // Library memory, mapped and written once by the library (populated);
    // registered as rdma.strategy says, once for the whole run.
    const std::uint64_t rx = n ? app_.alloc(n * area) : 0;
    const std::uint64_t bounce = n ? app_.alloc(n * area) : 0;
    const std::uint64_t words = app_.alloc(2 * 8 * std::max<std::size_t>(n, 1));
    bool ok = app_.register_receive(rx, n * area) && app_.register_buffer(bounce, n * area, false) &&
              app_.register_receive(words, 2 * 8 * n);
    if (!ok) throw std::runtime_error(app_.group() + ": could not register the two-sided library's slots (rdma.strategy)");
    fixed_records_ = app_.alloc_locked(std::max<std::size_t>(n, 1) * (slots_ + 1) * sizeof(CompletionRecord));
    for (std::size_t i = 0; i < n; ++i) {
        Peer& p = peers_[i];
        p.rx = rx + i * area;
        p.bounce = bounce + i * area;
        p.credit_word = words + 8 * i;
        p.credit_src = words + 8 * (n + i);
        p.arrived.assign(slots_, false);
        p.bounce_busy.assign(slots_, false);
    }
    ring_ = ring_for(ctx_.config, n);
    app_.setup_rx_ring(ring_);
}

void Endpoint::connect(const std::vector<Endpoint*>& by_node) {
    for (Peer& p : peers_) {
        if (p.node >= by_node.size() || !by_node[p.node])
            throw std::logic_error(app_.group() + ": no endpoint on node" + std::to_string(p.node));
        Endpoint& other = *by_node[p.node];
        Peer& mine = other.peer(app_.node());
        p.remote_rx = mine.rx;
        p.remote_credit = mine.credit_word;
    }
}

std::uint64_t Endpoint::record(unsigned peer_index, std::uint64_t k) const {
    return fixed_records_ + (peer_index * (slots_ + 1) + k) * sizeof(CompletionRecord);
}

std::uint64_t Endpoint::take_record() {
    if (free_records_.empty()) {
        const std::uint64_t a = app_.alloc_locked(kPoolRecords * sizeof(CompletionRecord));
        for (std::uint64_t k = kPoolRecords; k-- > 0;) free_records_.push_back(a + k * sizeof(CompletionRecord));
    }
    const std::uint64_t r = free_records_.back();
    free_records_.pop_back();
    return r;
}

void Endpoint::give_record(std::uint64_t r) { free_records_.push_back(r); }

void Endpoint::narrate(const std::string& text) {
    if (ctx_.tracer.narrating()) ctx_.tracer.narrate(app_.now(), app_.group() + ".msg", text);
}

void Endpoint::charge_copy(std::uint64_t bytes) {
    if (bytes == 0) return;
    app_.compute("msg-copy", sc_time(static_cast<double>(bytes) / copy_rate_, sc_core::SC_SEC));
}

void Endpoint::copy(std::uint64_t from, std::uint64_t to, std::uint64_t len) {
    buf_.resize(len);
    if (len && (!app_.debug_read(from, buf_.data(), len) || !app_.debug_write(to, buf_.data(), len)))
        throw std::runtime_error(app_.group() + ": two-sided library copy of " + std::to_string(len) +
                                 " B touched unmapped memory");
    charge_copy(len);
}

Endpoint::Request Endpoint::isend(unsigned dst, std::uint64_t tag, std::uint64_t buf, std::uint64_t len) {
    if (tag == kAnyTag) throw std::invalid_argument("isend with the wildcard tag");
    peer(dst);   // a peer, or an error
    const Request id = next_req_++;
    Req& r = reqs_[id];
    r.send = true;
    r.peer = dst;
    r.tag = tag;
    r.buf = buf;
    r.len = len;
    r.start = app_.now();
    r.status = Status{true, app_.node(), tag, len};
    if (len <= threshold_)
        eager_send(r, id);
    else
        rndv_send(r, id);
    return id;
}

Endpoint::Request Endpoint::irecv(unsigned src, std::uint64_t tag, std::uint64_t buf, std::uint64_t len) {
    if (src != kAnySource) peer(src);
    const Request id = next_req_++;
    Req& r = reqs_[id];
    r.send = false;
    r.peer = src;
    r.tag = tag;
    r.buf = buf;
    r.len = len;
    r.start = app_.now();
    std::uint64_t uid = 0;
    const bool hit = match_.post_receive(src, tag, id, uid);
    stats_.match_searched.inc(match_.searched());
    app_.compute("msg-match", match_cost_ * static_cast<double>(std::max<std::size_t>(match_.searched(), 1)));
    if (hit) {
        stats_.unexpected_hits.inc();
        Unexpected u = std::move(unexpected_.at(uid));
        unexpected_.erase(uid);
        if (u.h.kind == Kind::Eager)
            deliver_unexpected_eager(r, id, u);
        else
            rts_matched(peer(u.h.src), u.h, id, r);
    }
    return id;
}

bool Endpoint::test(Request id) {
    progress();
    return reqs_.at(id).done;
}

Status Endpoint::wait(Request id) {
    for (;;) {
        progress();
        if (reqs_.at(id).done) break;
        block();
    }
    const Status s = reqs_.at(id).status;
    reqs_.erase(id);
    return s;
}

std::size_t Endpoint::wait_any(const std::vector<Request>& rs) {
    if (rs.empty()) throw std::logic_error("wait_any on no requests");
    for (;;) {
        progress();
        for (std::size_t i = 0; i < rs.size(); ++i)
            if (reqs_.at(rs[i]).done) return i;
        block();
    }
}

void Endpoint::complete(Request id, Req& r) {
    r.done = true;
    if (!r.send) stats_.receives.inc();
    const char* what = r.send ? (r.proto == Proto::Eager ? "send eager" : "send rendezvous")
                              : (r.proto == Proto::Eager ? "recv eager" : "recv rendezvous");
    if (ctx_.tracer.enabled())
        ctx_.tracer.async_span(track_, what, id, r.start, app_.now(),
                               {{"bytes", std::to_string(r.status.len)}, {"tag", std::to_string(r.status.tag)}});
    if (ctx_.tracer.narrating()) {
        std::ostringstream os;
        os << what << " done: " << r.status.len << " B, tag " << r.status.tag << (r.send ? " to node" : " from node")
           << (r.send ? r.peer : r.status.source);
        narrate(os.str());
    }
}

void Endpoint::post(std::uint64_t src, unsigned node, std::uint64_t dst, std::uint64_t len, std::uint64_t rec) {
    // A full channel queue: wait for one more completion, as App::send does.
    while (!app_.post_write(src, node, dst, len, 0, rec, kFlagNotify)) app_.wait_tx(app_.tx_completions() + 1);
}

void Endpoint::progress() {
    const std::uint64_t events = app_.rx_events();
    if (events - consumed_ > ring_)
        throw std::runtime_error(app_.group() + ": two-sided library's notification ring overflowed (" +
                                 std::to_string(events - consumed_) + " unread, " + std::to_string(ring_) + " entries)");
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
    for (auto& kv : reqs_)
        if (!kv.second.done && !kv.second.parts.empty()) {
            any = true;
            finish_parts(kv.first, kv.second, true);
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
            case Kind::Eager:
                eager_arrived(p, h, addr);
                break;
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
            case Kind::Cts:
                cts_arrived(p, h);
                break;
            case Kind::Fin:
                fin_arrived(p, h);
                break;
            default:
                throw std::logic_error(app_.group() + ": eager slot holds an unknown message kind");
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
        narrate(std::string(to_string(h.kind)) + " to node" + std::to_string(p.node) + ": tag " +
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
    narrate("credit return to node" + std::to_string(p.node) + ": " + std::to_string(v) + " slots freed");
}

void Endpoint::finalize() {
    progress();
    if (!reqs_.empty())
        throw std::runtime_error(app_.group() + ": two-sided library finalized with " + std::to_string(reqs_.size()) +
                                 " requests never waited for");
    if (!unexpected_.empty() || match_.unexpected() || match_.posted())
        throw std::runtime_error(app_.group() + ": two-sided library finalized with " +
                                 std::to_string(match_.unexpected()) + " messages never received");
    for (std::size_t i = 0; i < peers_.size(); ++i) {
        Peer& p = peers_[i];
        for (std::uint64_t s = 0; s < slots_; ++s) {
            reap_bounce(p, s);
            if (p.arrived[s]) throw std::runtime_error(app_.group() + ": an eager slot was never handled");
        }
        if (p.credit_busy) {
            const CompletionRecord c = app_.wait_record(record(static_cast<unsigned>(i), slots_));
            if (c.status != kStatusOk) throw std::runtime_error(app_.group() + ": a credit return failed");
            p.credit_busy = false;
        }
        if (!p.queue.empty()) throw std::logic_error(app_.group() + ": messages left unsent");
    }
}

}  // namespace msg
}  // namespace vrdmasim
