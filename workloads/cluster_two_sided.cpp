// The cluster workloads through the two-sided library (workload.two-sided =
// true): the plan of ClusterWorkload (cluster.hpp), each write replaced by
// an isend matched by source and tag at the receiver, which posts its
// receives (one per receive slot, reposted as each completes), poisons each
// buffer when it posts it and checks every byte when the receive completes.
#include <algorithm>
#include <deque>
#include <iostream>
#include <stdexcept>

#include "workloads/cluster.hpp"

namespace vrdmasim {

using sc_core::sc_time;

std::vector<unsigned> ClusterWorkload::msg_peers(unsigned node) const {
    std::vector<unsigned> v = out_[node];
    v.insert(v.end(), peers_[node].in.begin(), peers_[node].in.end());
    std::sort(v.begin(), v.end());
    v.erase(std::unique(v.begin(), v.end()), v.end());
    return v;
}

// A node's requests in program_two_sided(): its sends and receives in
// flight, in posting order, and the source slots free for the next send.
struct ClusterWorkload::TwoSided {
    struct Active {
        bool send;
        unsigned peer;
        std::uint64_t k, key, buf;   // send: buf is the source slot index
    };
    TwoSided(RdmaProcess& a, msg::Endpoint& e) : app(a), ep(e) {}
    RdmaProcess& app;
    msg::Endpoint& ep;
    std::uint64_t round = 0;
    std::vector<msg::Endpoint::Request> reqs;
    std::vector<Active> what;
    std::vector<std::uint64_t> free_src;
    std::vector<std::uint64_t> next_recv;   // this round: the next message to receive from each source
};

std::uint64_t ClusterWorkload::two_sided_key(std::uint64_t r, unsigned from, unsigned to, std::uint64_t k) const {
    const std::uint64_t n = apps_.size();
    return ((r * n + from) * n + to) * writes_ + k;
}

std::uint64_t ClusterWorkload::message_len(std::uint64_t k) const { return std::min(msg_, bytes_ - k * msg_); }

void ClusterWorkload::program_two_sided(RdmaProcess& app) {
    const unsigned me = app.node();
    Peer& self = peers_[me];
    msg::Endpoint& ep = *ep_by_node_[me];
    const std::vector<unsigned>& out = out_[me];
    const std::uint64_t sends = writes_ * out.size();
    const std::uint64_t sbufs = std::max<std::uint64_t>(1, std::min(window_, sends));
    const std::uint64_t rx_bytes = receive_bytes(me);
    if (rx_bytes) self.rx_base = app.alloc(rx_bytes, populate_, advice_);
    const std::uint64_t src_base = app.alloc(sbufs * msg_, populate_, advice_);
    ep.setup();
    ready_and_wait(app, static_cast<unsigned>(apps_.size()));
    ep.connect(ep_by_node_);

    TwoSided ts(app, ep);
    for (std::uint64_t b = 0; b < sbufs; ++b) ts.free_src.push_back(b);
    for (ts.round = 0; ts.round < rounds_; ++ts.round) {
        const std::uint64_t r = ts.round;
        ts.next_recv.assign(self.in.size(), 0);
        for (std::size_t si = 0; si < self.in.size(); ++si)
            for (std::uint64_t j = 0; j < std::min(slots_, writes_); ++j) post_receive(ts, si);
        for (std::uint64_t k = 0; k < writes_; ++k) {
            for (unsigned d : out) {
                while (ts.free_src.empty()) complete_one(ts);
                const std::uint64_t b = ts.free_src.back();
                ts.free_src.pop_back();
                const std::uint64_t src = src_base + b * msg_;
                const std::uint64_t key = two_sided_key(r, me, d, k);
                fill_source(app, src, message_len(k), key);
                const sc_time posted = app.now();
                log_.posted(posted);
                posted_at_[key] = posted;
                ts.reqs.push_back(ep.isend(d, key, src, message_len(k)));
                ts.what.push_back({true, d, k, key, b});
            }
        }
        // The round ends when this node's sends are done and everything
        // addressed to it has come.
        while (!ts.reqs.empty()) complete_one(ts);
    }
    ep.finalize();
    app.finish_registrations();
    ++ended_;
    program_ended(app);
}

void ClusterWorkload::post_receive(TwoSided& ts, std::size_t si) {
    const Peer& self = peers_[ts.app.node()];
    const std::uint64_t k = ts.next_recv[si]++;
    const unsigned from = self.in[si];
    const std::uint64_t key = two_sided_key(ts.round, from, ts.app.node(), k);
    const std::uint64_t buf = self.rx_base + (si * slots_ + k % slots_) * msg_;
    guard_destination(ts.app, buf, message_len(k), key);
    ts.reqs.push_back(ts.ep.irecv(from, key, buf, msg_));
    ts.what.push_back({false, from, k, key, buf});
}

void ClusterWorkload::complete_one(TwoSided& ts) {
    RdmaProcess& app = ts.app;
    const std::size_t i = ts.ep.wait_any(ts.reqs);
    const TwoSided::Active a = ts.what[i];
    const msg::Endpoint::Request q = ts.reqs[i];
    ts.reqs.erase(ts.reqs.begin() + static_cast<std::ptrdiff_t>(i));
    ts.what.erase(ts.what.begin() + static_cast<std::ptrdiff_t>(i));
    const msg::Status s = ts.ep.wait(q);
    if (a.send) {
        ts.free_src.push_back(a.buf);
        return;
    }
    const std::uint64_t len = message_len(a.k);
    if (s.ok && (s.source != a.peer || s.tag != a.key || s.len != len)) {
        std::cerr << "vrdmasim: DATA MISMATCH: " << app.group() << " received message " << s.tag << " (" << s.len
                  << " B from node" << s.source << ") for message " << a.key << "\n";
        log_.verified(len, false);
    }
    CompletionRecord rec;
    rec.status = s.ok ? kStatusOk : kStatusError;
    rec.bytes = s.len;
    const auto at = posted_at_.find(a.key);
    const sc_time latency = at == posted_at_.end() ? sc_time() : app.now() - at->second;
    if (at == posted_at_.end()) throw std::logic_error(kind_ + ": a message received before it was sent");
    posted_at_.erase(at);
    report(app, app.node(), a.buf, len, a.key, rec, &latency, static_cast<int>(a.peer));
    const std::size_t si = peers_[app.node()].slot(a.peer);
    if (ts.next_recv[si] < writes_) post_receive(ts, si);
}

}   // namespace vrdmasim
