#include "library/messaging/endpoint.hpp"

#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "models/os/vm_params.hpp"
#include "library/messaging/params.hpp"
#include "library/rdma/wake.hpp"

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
}   // namespace

std::vector<std::uint64_t> Endpoint::locked_regions(const Config& c, std::size_t peers) {
    return {peers * (slots_of(c) + 1) * sizeof(CompletionRecord), kPoolRecords * sizeof(CompletionRecord),
            ring_for(c, peers) * sizeof(CompletionRecord)};
}

std::uint64_t Endpoint::mapped_bytes(const Config& c, std::size_t peers) {
    std::uint64_t b = 2 * peers * slots_of(c) * slot_bytes(c) + 2 * 4096;
    for (std::uint64_t r : locked_regions(c, peers)) b += (r + 4095) / 4096 * 4096;
    return b;
}

Endpoint::Endpoint(const SimContext& ctx, RdmaProcess& app, std::vector<unsigned> peers)
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
    if (!ok)
        throw std::runtime_error(app_.group() + ": could not register the two-sided library's slots (rdma.strategy)");
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

std::vector<Endpoint::Offer> Endpoint::offers() const {
    std::vector<Offer> out;
    for (const Peer& p : peers_) out.push_back({p.node, p.rx, p.credit_word});
    return out;
}

void Endpoint::connect(const std::function<std::pair<std::uint64_t, std::uint64_t>(unsigned peer)>& theirs) {
    for (Peer& p : peers_) {
        const auto [rx, credit] = theirs(p.node);
        p.remote_rx = rx;
        p.remote_credit = credit;
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

Tracer::Cause Endpoint::step(const char* name, const std::string& text) {
    if (!ctx_.tracer.noting()) return {};
    return ctx_.tracer.note(Tracer::Track{}, name, app_.now(), sc_core::SC_ZERO_TIME, app_.group() + ".msg", text);
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

void Endpoint::truncated(std::uint64_t len, std::uint64_t room, unsigned src, std::uint64_t tag) const {
    std::ostringstream os;
    os << app_.group() << ": a message of " << len << " B from node" << src << " (tag " << tag
       << ") matched a receive of " << room << " B (truncation: MPI_ERR_TRUNCATE)";
    throw std::runtime_error(os.str());
}

Endpoint::Request Endpoint::isend(unsigned dst, std::uint64_t tag, std::uint64_t buf, std::uint64_t len) {
    const RdmaProcess::InLibrary in(app_);   // the program's call (in-call progress)
    if (is_wildcard_tag(tag)) throw std::invalid_argument("isend with a wildcard tag");
    const HoldEngine hold(*this);
    if (dst != app_.node()) peer(dst);   // itself, a peer, or an error
    const Request id = next_req_++;
    Req& r = reqs_[id];
    r.send = true;
    r.peer = dst;
    r.tag = tag;
    r.buf = buf;
    r.len = len;
    r.start = app_.now();
    r.status = Status{true, app_.node(), tag, len, {}};
    guard(id, r);   // read by the library's copy or the engine until the send completes
    if (dst == app_.node()) self_send(r, id);
    else if (len <= threshold_) eager_send(r, id);
    else rndv_send(r, id);
    return id;
}

Endpoint::Request Endpoint::irecv(unsigned src, std::uint64_t tag, std::uint64_t buf, std::uint64_t len) {
    const RdmaProcess::InLibrary in(app_);   // the program's call (in-call progress)
    if (src != kAnySource && src != app_.node()) peer(src);
    const HoldEngine hold(*this);
    const Request id = next_req_++;
    Req& r = reqs_[id];
    r.send = false;
    r.peer = src;
    r.tag = tag;
    r.buf = buf;
    r.len = len;
    r.start = app_.now();
    guard(id, r);   // written by the library's copy or the engine until the receive completes
    std::uint64_t uid = 0;
    const bool hit = match_.post_receive(src, tag, id, uid);
    stats_.match_searched.inc(match_.searched());
    app_.compute("msg-match", match_cost_ * static_cast<double>(std::max<std::size_t>(match_.searched(), 1)));
    if (hit) {
        stats_.unexpected_hits.inc();
        Unexpected u = std::move(unexpected_.at(uid));
        unexpected_.erase(uid);
        if (u.h.kind == Kind::Eager) deliver_unexpected_eager(r, id, u);
        else if (u.h.src == app_.node()) self_deliver(u.h.sreq, reqs_.at(u.h.sreq), id, r);
        else rts_matched(peer(u.h.src), u.h, id, r);
    }
    return id;
}

bool Endpoint::test(Request id) {
    const RdmaProcess::InLibrary in(app_);   // the program's call (in-call progress)
    progress();
    return reqs_.at(id).done;
}

Status Endpoint::wait(Request id) {
    const RdmaProcess::InLibrary in(app_);   // the program's call (in-call progress)
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
    const RdmaProcess::InLibrary in(app_);   // the program's call (in-call progress)
    if (rs.empty()) throw std::logic_error("wait_any on no requests");
    const Wake* wake = Wake::current();
    for (;;) {
        progress();
        const std::size_t i = first_done(rs);
        if (i < rs.size()) return i;
        if (wake && wake->done()) return rs.size();
        block();
    }
}

bool Endpoint::iprobe(unsigned src, std::uint64_t tag, Status& out) {
    const RdmaProcess::InLibrary in(app_);   // the program's call (in-call progress)
    progress();
    std::uint64_t uid = 0;
    const bool hit = match_.peek(src, tag, uid);
    stats_.match_searched.inc(match_.searched());
    app_.compute("msg-match", match_cost_ * static_cast<double>(std::max<std::size_t>(match_.searched(), 1)));
    if (!hit) return false;
    const Header& h = unexpected_.at(uid).h;
    out = Status{true, h.src, h.tag, h.len, app_.now(), {}};
    return true;
}

bool Endpoint::matched(Request id, Status& out) const {
    const Req& r = reqs_.at(id);
    if (r.send) throw std::logic_error("matched() asks about a send");
    if (!r.status.ok) return false;
    out = r.status;
    return true;
}

bool Endpoint::cancel(Request id) {
    const HoldEngine hold(*this);
    Req& r = reqs_.at(id);
    if (r.send) throw std::logic_error("cancel() of a send");
    const bool withdrawn = !r.status.ok && match_.cancel(id);
    stats_.match_searched.inc(match_.searched());
    app_.compute("msg-match", match_cost_ * static_cast<double>(std::max<std::size_t>(match_.searched(), 1)));
    if (!withdrawn) return false;
    r.status.cancelled = true;
    r.done = true;
    r.status.completed = app_.now();
    if (r.guard) {
        app_.unguard(r.guard);
        r.guard = 0;
    }
    return true;
}

Status Endpoint::probe(unsigned src, std::uint64_t tag) {
    const RdmaProcess::InLibrary in(app_);   // the program's call (in-call progress)
    Status s;
    while (!iprobe(src, tag, s)) block();
    return s;
}

std::size_t Endpoint::test_any(const std::vector<Request>& rs) {
    const RdmaProcess::InLibrary in(app_);   // the program's call (in-call progress)
    progress();
    return first_done(rs);
}

std::size_t Endpoint::first_done(const std::vector<Request>& rs) const {
    for (std::size_t i = 0; i < rs.size(); ++i)
        if (reqs_.at(rs[i]).done) return i;
    return rs.size();
}

void Endpoint::guard(Request id, Req& r) {
    r.guard = app_.guard(r.buf, r.len, !r.send, [this, id] {
        for (;;) {
            progress();
            const auto it = reqs_.find(id);
            if (it == reqs_.end() || it->second.done) return;
            block();
        }
    });
}

void Endpoint::complete(Request id, Req& r) {
    r.done = true;
    r.status.completed = app_.now();
    if (r.guard) {
        app_.unguard(r.guard);
        r.guard = 0;
    }
    if (!r.send) stats_.receives.inc();
    const char* what = r.send ? (r.proto == Proto::Eager ? "send eager" : "send rendezvous")
                              : (r.proto == Proto::Eager ? "recv eager" : "recv rendezvous");
    if (ctx_.tracer.enabled())
        ctx_.tracer.async_span(track_, what, id, r.start, app_.now(),
                               {{"bytes", std::to_string(r.status.len)}, {"tag", std::to_string(r.status.tag)}});
    if (ctx_.tracer.noting()) {
        std::ostringstream os;
        os << what << " done: " << r.status.len << " B, tag " << r.status.tag << (r.send ? " to node" : " from node")
           << (r.send ? r.peer : r.status.source);
        r.status.story = step(what, os.str());
    }
}

void Endpoint::post(std::uint64_t src, unsigned node, std::uint64_t dst, std::uint64_t len, std::uint64_t rec) {
    // A full channel queue: wait for one more completion, as RdmaProcess::send does.
    while (!app_.post_write(src, node, dst, len, 0, rec, kFlagNotify)) app_.wait_tx(app_.tx_completions() + 1);
}

void Endpoint::finalize() {
    const RdmaProcess::InLibrary in(app_);   // the program's call (in-call progress)
    progress();
    if (!reqs_.empty()) {
        const Req& r = reqs_.begin()->second;
        throw std::runtime_error(app_.group() + ": two-sided library finalized with " + std::to_string(reqs_.size()) +
                                 " requests never waited for (the first: a " + (r.send ? "send to" : "receive from") +
                                 " node " + std::to_string(r.peer) + ", tag " + std::to_string(r.tag) + ", " +
                                 std::to_string(r.len) + " B, " + (r.done ? "complete" : "not complete") + ")");
    }
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

}   // namespace msg
}   // namespace vrdmasim
