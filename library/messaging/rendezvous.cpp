// The rendezvous protocol of the two-sided library (see endpoint.hpp).
// msg.rendezvous = write: ready-to-send from the sender, clear-to-send with
// the receiver's (registered) buffer, then the sender's zero-copy RDMA
// writes into it, each part with a notification; the receive completes
// when the notified bytes cover the message. msg.rendezvous = read: the
// ready-to-send names the sender's registered buffer; the receiver pulls it
// with RDMA reads into its registered buffer and sends a FIN.
#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "library/messaging/endpoint.hpp"

namespace vrdmasim {
namespace msg {

void Endpoint::rndv_send(Req& r, Request id) {
    r.proto = Proto::Rendezvous;
    stats_.rendezvous_sends.inc();
    stats_.rendezvous_bytes.inc(r.len);
    Outgoing o;
    o.h.kind = Kind::Rts;
    o.h.tag = r.tag;
    o.h.len = r.len;
    o.h.addr = r.buf;
    o.h.sreq = id;
    if (!write_mode_) {
        // The peer's engine will read the buffer until the FIN.
        VmError err = VmError::Ok;
        if (!app_.register_buffer(r.buf, r.len, false, &err))
            throw std::runtime_error(
                app_.group() + ": could not register a rendezvous send buffer (rdma.strategy): " + to_string(err));
        r.registered = true;
    }
    Peer& p = peer(r.peer);
    p.queue.push_back(o);
    send_queued(p);
}

void Endpoint::rts_matched(Peer& p, const Header& h, Request id, Req& r) {
    if (h.len > r.len) truncated(h.len, r.len, p.node, h.tag);
    r.proto = Proto::Rendezvous;
    r.status = Status{true, p.node, h.tag, h.len, {}};
    // The engine will write the buffer: registered as rdma.strategy says
    // until the data is in.
    VmError err = VmError::Ok;
    if (!app_.register_buffer(r.buf, h.len, true, &err))
        throw std::runtime_error(app_.group() +
                                 ": could not register a rendezvous receive buffer (rdma.strategy): " + to_string(err));
    r.registered = true;
    r.bytes_in = 0;
    if (!write_mode_) {
        // Pull it: reads of the sender's buffer, in parts as the strategy
        // registers transfers (pipeline: rdma.pipeline-chunk each).
        r.peer_req = h.sreq;
        const std::uint64_t n = app_.records_for(h.len);
        const std::uint64_t part = (h.len + n - 1) / n;
        for (std::uint64_t off = 0; off < h.len; off += part) {
            Part pt;
            pt.m.src = h.addr + off;
            pt.m.dst = r.buf + off;
            pt.m.len = std::min(part, h.len - off);
            pt.m.tag = h.sreq;
            pt.m.dst_node = p.node;   // the node read from
            pt.m.records = take_record();
            while (!app_.post_read(p.node, pt.m.src, pt.m.dst, pt.m.len, pt.m.tag, pt.m.records))
                app_.wait_tx(app_.tx_completions() + 1);   // the channel's queue is full
            r.parts.push_back(pt);
        }
        return;
    }
    p.rndv_in.push_back(id);
    Outgoing o;
    o.h.kind = Kind::Cts;
    o.h.tag = h.tag;
    o.h.len = h.len;
    o.h.addr = r.buf;
    o.h.sreq = h.sreq;
    o.h.rreq = id;
    p.queue.push_back(o);
    send_queued(p);
}

void Endpoint::cts_arrived(Peer& p, const Header& h) {
    if (!write_mode_) throw std::logic_error(app_.group() + ": clear-to-send in the read rendezvous");
    const auto it = reqs_.find(h.sreq);
    if (it == reqs_.end() || !it->second.send || it->second.proto != Proto::Rendezvous || !it->second.parts.empty() ||
        it->second.peer != p.node || it->second.len != h.len)
        throw std::logic_error(app_.group() + ": clear-to-send from node" + std::to_string(p.node) +
                               " for no rendezvous send waiting for one");
    Req& r = it->second;
    // Parts as the strategy registers them (pipeline: rdma.pipeline-chunk
    // each), each its own write with a notification.
    const std::uint64_t n = app_.records_for(r.len);
    const std::uint64_t part = (r.len + n - 1) / n;
    for (std::uint64_t off = 0; off < r.len; off += part) {
        Part pt;
        pt.m.src = r.buf + off;
        pt.m.dst = h.addr + off;
        pt.m.len = std::min(part, r.len - off);
        pt.m.tag = h.sreq;
        pt.m.dst_node = p.node;
        pt.m.records = take_record();
        pt.m.flags = kFlagNotify;
        if (!app_.send(pt.m))
            throw std::runtime_error(app_.group() + ": could not register a rendezvous send buffer (rdma.strategy): " +
                                     to_string(pt.m.error));
        r.parts.push_back(pt);
    }
}

bool Endpoint::finish_parts(Request id, Req& r, bool wait) {
    bool all = true;
    for (Part& pt : r.parts) {
        if (pt.done) continue;
        if (!wait && app_.read_record(pt.m.records).status == 0) {
            all = false;
            continue;
        }
        // A write: RdmaProcess::complete waits for its record and releases the
        // source's registration; a read: its record says the data is here.
        const CompletionRecord c = r.send ? app_.complete(pt.m) : app_.wait_record(pt.m.records);
        if (c.status != kStatusOk)
            throw std::runtime_error(app_.group() +
                                     (r.send ? ": a rendezvous write to node" : ": a rendezvous read from node") +
                                     std::to_string(r.send ? r.peer : r.status.source) +
                                     " failed in the engine (the library does not retransmit)");
        give_record(pt.m.records);
        pt.done = true;
    }
    if (!all) return false;
    r.parts.clear();
    if (!r.send) {
        // Read rendezvous: the data is in; release the buffer and tell the sender.
        app_.deregister(r.buf, r.status.len);
        r.registered = false;
        Outgoing o;
        o.h.kind = Kind::Fin;
        o.h.tag = r.status.tag;
        o.h.len = r.status.len;
        o.h.sreq = r.peer_req;
        o.h.rreq = id;
        Peer& p = peer(r.status.source);
        p.queue.push_back(o);
        send_queued(p);
    }
    complete(id, r);
    return true;
}

void Endpoint::fin_arrived(Peer& p, const Header& h) {
    const auto it = reqs_.find(h.sreq);
    if (write_mode_ || it == reqs_.end() || !it->second.send || it->second.proto != Proto::Rendezvous ||
        it->second.done || it->second.peer != p.node || it->second.len != h.len)
        throw std::logic_error(app_.group() + ": FIN from node" + std::to_string(p.node) +
                               " for no read rendezvous send waiting for one");
    Req& r = it->second;
    app_.deregister(r.buf, r.len);
    r.registered = false;
    complete(h.sreq, r);
}

void Endpoint::data_notified(Peer& p, const CompletionRecord& rec) {
    for (auto it = p.rndv_in.begin(); it != p.rndv_in.end(); ++it) {
        Req& r = reqs_.at(*it);
        if (rec.addr < r.buf || rec.addr >= r.buf + r.status.len) continue;
        r.bytes_in += rec.bytes;
        if (r.bytes_in > r.status.len)
            throw std::logic_error(app_.group() + ": more rendezvous data notified than the message holds");
        if (r.bytes_in == r.status.len) {
            app_.deregister(r.buf, r.status.len);
            r.registered = false;
            const Request id = *it;
            p.rndv_in.erase(it);
            complete(id, r);
        }
        return;
    }
    std::ostringstream os;
    os << app_.group() << ": notified of a write from node" << p.node << " to 0x" << std::hex << rec.addr
       << ", which no slot, credit word or rendezvous receive expects";
    throw std::logic_error(os.str());
}

}   // namespace msg
}   // namespace vrdmasim
