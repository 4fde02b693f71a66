// Messages from a process to itself (MPI's self messages: Open MPI's "self"
// BTL, MPICH's self path): no slot, no credit, no RDMA; the CPU copies
// them, each copy at vm.copy-rate (activity msg-copy), as the library's
// other copies. Matched in MPI's order through the same queues as every
// message, so a receive from any source takes a self message in its turn.
//
//   up to msg.eager-threshold  sent at once: copied straight into a posted
//                              receive that matches it, else into library
//                              memory (unexpected) and out again when a
//                              receive takes it (two copies);
//   above it                   the send waits for a receive that matches
//                              it, then one copy from buffer to buffer
//                              completes both (the rendezvous's single
//                              copy; a blocking send to itself with no
//                              receive posted never ends, as in MPI).
#include <stdexcept>

#include "library/messaging/endpoint.hpp"

namespace vrdmasim {
namespace msg {

void Endpoint::self_send(Req& r, Request id) {
    r.proto = r.len <= threshold_ ? Proto::Eager : Proto::Rendezvous;
    stats_.self_sends.inc();
    std::uint64_t rid = 0;
    const std::uint64_t uid = next_unexpected_++;
    const bool hit = match_.arrive(app_.node(), r.tag, uid, rid);
    stats_.match_searched.inc(match_.searched());
    app_.compute("msg-match", match_cost_ * static_cast<double>(std::max<std::size_t>(match_.searched(), 1)));
    if (hit) {
        self_deliver(id, r, rid, reqs_.at(rid));
        return;
    }
    Unexpected& u = unexpected_[uid];
    u.h.kind = r.proto == Proto::Eager ? Kind::Eager : Kind::Rts;
    u.h.src = app_.node();
    u.h.tag = r.tag;
    u.h.len = r.len;
    u.h.addr = r.buf;
    u.h.sreq = id;
    stats_.unexpected.inc();
    if (r.proto == Proto::Rendezvous) return;   // waits for its receive
    u.data.resize(r.len);
    if (r.len && !app_.debug_read(r.buf, u.data.data(), r.len))
        throw std::runtime_error(app_.group() + ": send buffer unreadable");
    charge_copy(r.len);
    stats_.copy_bytes.inc(r.len);
    complete(id, r);
}

void Endpoint::self_deliver(Request sid, Req& s, Request rid, Req& q) {
    if (s.len > q.len) truncated(s.len, q.len, app_.node(), s.tag);
    copy(s.buf, q.buf, s.len);
    stats_.copy_bytes.inc(s.len);
    q.proto = s.proto;
    q.status = Status{true, app_.node(), s.tag, s.len, {}};
    complete(rid, q);
    complete(sid, s);
}

}   // namespace msg
}   // namespace vrdmasim
