// NetVM's sender credits (see credits.hpp).
#include "models/dma/credits.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace vrdmasim {

using sc_core::sc_time;

void SenderCredits::enable(StatRegistry& s, const std::string& p, unsigned nodes, std::uint64_t per_destination,
                           ReturnFn send_return) {
    spent_ = &s.counter(p + "credits_spent", "B", "NetVM credits spent by data packets sent (sender)");
    returned_ = &s.counter(p + "credits_returned", "B", "NetVM credits returned to this sender by receivers");
    waits_ = &s.counter(p + "credit_waits", "", "data packets that waited for NetVM credits (sender)");
    packets_ = &s.counter(p + "credit_packets", "", "credit packets sent back to senders (receiver)");
    wait_us_ =
        &s.scalar(p + "credit_wait", "us", "time data packets waited for NetVM credits (sender)", Scalar::Kind::Sum);
    owed_now_ = &s.scalar(p + "credits_owed", "B",
                          "NetVM credits this receiver owes its senders, not yet returned (less than half of "
                          "ni.credits per sender)",
                          Scalar::Kind::Level);

    per_dest_ = per_destination;
    nodes_ = nodes;
    send_return_ = std::move(send_return);
    peers_.clear();
}

SenderCredits::Peer& SenderCredits::peer(unsigned node) {
    if (node >= nodes_)
        throw std::out_of_range("NetVM credits: node " + std::to_string(node) + " beyond " + std::to_string(nodes_) +
                                " nodes");
    return peers_.try_emplace(node, Peer{per_dest_, sc_core::SC_ZERO_TIME, {}, 0}).first->second;
}

std::uint64_t SenderCredits::available(unsigned dst) const {
    if (dst >= nodes_)
        throw std::out_of_range("NetVM credits: node " + std::to_string(dst) + " beyond " + std::to_string(nodes_) +
                                " nodes");
    const auto it = peers_.find(dst);
    if (it == peers_.end()) return per_dest_;
    std::uint64_t n = it->second.avail;
    for (const Pending& p : it->second.incoming) n += p.bytes;
    return n;
}

sc_time SenderCredits::spend(unsigned dst, std::uint64_t bytes, sc_time at) {
    if (!active()) return at;
    if (bytes > per_dest_) throw std::logic_error("NetVM credits: a packet larger than ni.credits");
    const sc_time asked = at;
    bool waited = false;
    for (;;) {
        // Returns visible by `at` join the credits; if the ones still on
        // their way suffice, the packet goes when enough have arrived.
        Peer& to = peer(dst);
        std::vector<Pending>& in = to.incoming;
        std::sort(in.begin(), in.end(), [](const Pending& a, const Pending& b) { return a.at < b.at; });
        std::uint64_t have = to.avail;
        sc_time ready = to.ready;
        std::size_t used = 0;
        while (used < in.size() && (in[used].at <= at || have < bytes)) {
            ready = std::max(ready, in[used].at);
            have += in[used].bytes;
            ++used;
        }
        if (have >= bytes) {
            // Credits are usable from when the last of them arrived.
            at = std::max(at, ready);
            to.ready = ready;
            in.erase(in.begin(), in.begin() + static_cast<std::ptrdiff_t>(used));
            to.avail = have - bytes;
            spent_->inc(bytes);
            if (at > asked) waited = true;
            if (waited) {
                waits_->inc();
                wait_us_->add((at - asked).to_seconds() * 1e6);
            }
            return at;
        }
        // Not enough even with every return on its way: wait for more.
        waited = true;
        sc_core::wait(returned_ev_.get());
        at = std::max(at, sc_core::sc_time_stamp());
    }
}

void SenderCredits::returned(unsigned from, std::uint64_t bytes, sc_time at) {
    if (!active()) return;
    peer(from).incoming.push_back({bytes, at});
    returned_->inc(bytes);
    returned_ev_.notify(sc_core::SC_ZERO_TIME);
}

void SenderCredits::placed(unsigned src, std::uint64_t bytes, sc_time at) {
    if (!active()) return;
    std::uint64_t& owed = peer(src).owed;
    owed += bytes;
    owed_now_->add(static_cast<double>(bytes));
    if (owed * 2 >= per_dest_) {
        packets_->inc();
        const std::uint64_t n = owed;
        owed = 0;
        owed_now_->add(-static_cast<double>(n));
        send_return_(src, n, at);
    }
}

}   // namespace vrdmasim
