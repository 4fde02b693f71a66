// The eager protocol of the two-sided library (see endpoint.hpp): header and
// payload copied by the sender's CPU into a bounce slot, carried by one RDMA
// write with a notification into the slot the receiver keeps for the
// sender, copied out by the receiver's CPU.
#include <stdexcept>

#include "library/messaging/endpoint.hpp"

namespace vrdmasim {
namespace msg {

void Endpoint::eager_send(Req& r, Request id) {
    r.proto = Proto::Eager;
    stats_.eager_sends.inc();
    stats_.eager_bytes.inc(r.len);
    Outgoing o;
    o.h.kind = Kind::Eager;
    o.h.tag = r.tag;
    o.h.len = r.len;
    o.payload = r.buf;
    o.req = id;
    Peer& p = peer(r.peer);
    p.queue.push_back(o);
    send_queued(p);
}

void Endpoint::eager_arrived(Peer& p, const Header& h, std::uint64_t slot_addr) {
    std::uint64_t rid = 0;
    const std::uint64_t uid = next_unexpected_++;
    const bool hit = match_.arrive(p.node, h.tag, uid, rid);
    stats_.match_searched.inc(match_.searched());
    app_.compute("msg-match", match_cost_ * static_cast<double>(std::max<std::size_t>(match_.searched(), 1)));
    if (hit) {
        Req& r = reqs_.at(rid);
        if (h.len > r.len) truncated(h.len, r.len, p.node, h.tag);
        copy(slot_addr + sizeof(Header), r.buf, h.len);   // straight into the user buffer
        stats_.copy_bytes.inc(h.len);
        r.proto = Proto::Eager;
        r.status = Status{true, p.node, h.tag, h.len, {}};
        complete(rid, r);
        return;
    }
    // Unexpected: copied out into library memory now, so the slot is freed
    // whether or not a receive ever comes.
    Unexpected& u = unexpected_[uid];
    u.h = h;
    u.data.resize(h.len);
    if (h.len && !app_.debug_read(slot_addr + sizeof(Header), u.data.data(), h.len))
        throw std::runtime_error(app_.group() + ": eager slot unreadable");
    charge_copy(h.len);
    stats_.copy_bytes.inc(h.len);
    stats_.unexpected.inc();
}

void Endpoint::deliver_unexpected_eager(Req& r, Request id, Unexpected& u) {
    if (u.h.len > r.len) truncated(u.h.len, r.len, u.h.src, u.h.tag);
    if (u.h.len && !app_.debug_write(r.buf, u.data.data(), u.h.len))
        throw std::runtime_error(app_.group() + ": receive buffer not writable");
    charge_copy(u.h.len);
    stats_.copy_bytes.inc(u.h.len);
    r.proto = Proto::Eager;
    r.status = Status{true, u.h.src, u.h.tag, u.h.len, {}};
    complete(id, r);
}

}   // namespace msg
}   // namespace vrdmasim
