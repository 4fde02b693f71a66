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

void ClusterWorkload::program_two_sided(RdmaProcess& app) {
    const unsigned me = app.node();
    Peer& self = peers_[me];
    msg::Endpoint& ep = *ep_by_node_[me];
    const std::vector<unsigned>& out = out_[me];
    const std::uint64_t n = apps_.size();
    const std::uint64_t sends = writes_ * out.size();
    const std::uint64_t sbufs = std::max<std::uint64_t>(1, std::min(window_, sends));
    const std::uint64_t rx_bytes = receive_bytes(me);
    if (rx_bytes) self.rx_base = app.alloc(rx_bytes, populate_, advice_);
    const std::uint64_t src_base = app.alloc(sbufs * msg_, populate_, advice_);
    ep.setup();
    ready_and_wait(app, static_cast<unsigned>(apps_.size()));
    ep.connect(ep_by_node_);

    auto key_of = [&](std::uint64_t r, unsigned from, unsigned to, std::uint64_t k) {
        return ((r * n + from) * n + to) * writes_ + k;
    };
    auto len_of = [&](std::uint64_t k) { return std::min(msg_, bytes_ - k * msg_); };
    struct Active {
        bool send;
        unsigned peer;
        std::uint64_t k, key, buf;   // send: buf is the source slot index
    };
    std::vector<msg::Endpoint::Request> reqs;
    std::vector<Active> what;
    std::vector<std::uint64_t> free_src;
    for (std::uint64_t b = 0; b < sbufs; ++b) free_src.push_back(b);

    for (std::uint64_t r = 0; r < rounds_; ++r) {
        std::vector<std::uint64_t> next_recv(self.in.size(), 0);
        auto post_recv = [&](std::size_t si) {
            const std::uint64_t k = next_recv[si]++;
            const unsigned from = self.in[si];
            const std::uint64_t key = key_of(r, from, me, k);
            const std::uint64_t buf = self.rx_base + (si * slots_ + k % slots_) * msg_;
            guard_destination(app, buf, len_of(k), key);
            reqs.push_back(ep.irecv(from, key, buf, msg_));
            what.push_back({false, from, k, key, buf});
        };
        for (std::size_t si = 0; si < self.in.size(); ++si)
            for (std::uint64_t j = 0; j < std::min(slots_, writes_); ++j) post_recv(si);
        // One completion: a send frees its source slot; a receive is checked
        // and its slot posted again for the source's next message.
        auto drive = [&] {
            const std::size_t i = ep.wait_any(reqs);
            const Active a = what[i];
            const msg::Endpoint::Request q = reqs[i];
            reqs.erase(reqs.begin() + static_cast<std::ptrdiff_t>(i));
            what.erase(what.begin() + static_cast<std::ptrdiff_t>(i));
            const msg::Status s = ep.wait(q);
            if (a.send) {
                free_src.push_back(a.buf);
                return;
            }
            const std::uint64_t len = len_of(a.k);
            if (s.ok && (s.source != a.peer || s.tag != a.key || s.len != len)) {
                std::cerr << "vrdmasim: DATA MISMATCH: " << app.group() << " received message " << s.tag << " ("
                          << s.len << " B from node" << s.source << ") for message " << a.key << "\n";
                log_.verified(len, false);
            }
            CompletionRecord rec;
            rec.status = s.ok ? kStatusOk : kStatusError;
            rec.bytes = s.len;
            const auto at = posted_at_.find(a.key);
            const sc_time latency = at == posted_at_.end() ? sc_time() : app.now() - at->second;
            if (at == posted_at_.end()) throw std::logic_error(kind_ + ": a message received before it was sent");
            posted_at_.erase(at);
            report(app, app, a.buf, len, a.key, rec, &latency, static_cast<int>(a.peer));
            const std::size_t si = self.slot.at(a.peer);
            if (next_recv[si] < writes_) post_recv(si);
        };
        for (std::uint64_t k = 0; k < writes_; ++k) {
            for (unsigned d : out) {
                while (free_src.empty()) drive();
                const std::uint64_t b = free_src.back();
                free_src.pop_back();
                const std::uint64_t src = src_base + b * msg_;
                const std::uint64_t key = key_of(r, me, d, k);
                fill_source(app, src, len_of(k), key);
                const sc_time posted = app.now();
                log_.posted(posted);
                posted_at_[key] = posted;
                reqs.push_back(ep.isend(d, key, src, len_of(k)));
                what.push_back({true, d, k, key, b});
            }
        }
        // The round ends when this node's sends are done and everything
        // addressed to it has come.
        while (!reqs.empty()) drive();
    }
    ep.finalize();
    app.finish_registrations();
    ++ended_;
    program_ended();
}

}   // namespace vrdmasim
