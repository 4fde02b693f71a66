// The cluster kinds' read form (workload.operation = read): the same plan
// (who sends what to whom, in rounds) with the data pulled by its
// destination. Node d reads each message addressed to it from the source
// area its in-neighbour i keeps for d (out_[i]'s slots, registered once for
// reading), into the slot of its own receive area for i, with an RDMA read
// and a completion record of its own; a round ends when d's reads of it
// have completed. Nothing needs detecting: the reader's record says the
// data is in (workload.arrivals has nothing to do, and is refused but for
// its default). The sources are filled by the harness right before each
// read, as the stream's read form does (Workload::prepare): the model has
// no computation that would produce them.
#include <deque>
#include <iostream>
#include <stdexcept>

#include "workloads/cluster.hpp"

namespace vrdmasim {

using sc_core::sc_time;

void ClusterWorkload::program_read(RdmaProcess& app) {
    const unsigned me = app.node();
    Peer& self = peers_[me];
    const std::uint64_t reads = writes_ * self.in.size();   // per round
    const std::uint64_t rbufs = std::max<std::uint64_t>(1, std::min(window_, reads));
    // Receive area (the reads' destinations) registered once as a receive
    // area; the source area this node's out-neighbours read, registered once
    // for reading; a record per read in flight.
    const std::uint64_t rx_bytes = receive_bytes(me);
    if (rx_bytes) self.rx_base = app.alloc(rx_bytes, populate_, advice_);
    self.registered = app.register_receive(self.rx_base, rx_bytes);
    const std::uint64_t src_bytes = source_bytes_read(me);
    const std::uint64_t src_base = src_bytes ? app.alloc(src_bytes, populate_, advice_) : 0;
    const bool src_registered = app.register_read_source(src_base, src_bytes);
    publish(app, kReadSrc, src_base);
    const std::uint64_t records = app.alloc_locked(rbufs * sizeof(CompletionRecord));
    ready_and_wait(app, static_cast<unsigned>(apps_.size()));
    // The in-neighbours' source areas, as their programs published them before the barrier.
    std::map<unsigned, std::uint64_t> src_of;
    for (unsigned i : self.in) src_of[i] = published(i, kReadSrc);
    if (!self.registered)
        throw std::runtime_error(app.group() + ": could not register the receive area (rdma.strategy)");
    if (!src_registered)
        throw std::runtime_error(app.group() + ": could not register the read source area (rdma.strategy)");

    struct InFlight {
        unsigned src;
        std::uint64_t dst_addr, len, key, record;
        sc_time posted;
    };
    std::deque<InFlight> inflight;
    const std::uint64_t n = apps_.size();
    std::uint64_t posts = 0;
    auto retire = [&]() {
        const InFlight f = inflight.front();
        inflight.pop_front();
        const CompletionRecord rec = app.wait_record(f.record);
        if (rec.status == kStatusOk && rec.tag != f.key) {
            std::cerr << "vrdmasim: completion record of read " << f.key << " carries tag " << rec.tag << "\n";
            log_.verified(f.len, false);
        }
        const sc_time latency = app.now() - f.posted;
        report(app, me, f.dst_addr, f.len, f.key, rec, &latency, static_cast<int>(f.src));
    };
    for (std::uint64_t round = 0; round < rounds_; ++round) {
        for (std::uint64_t k = 0; k < writes_; ++k) {
            for (const unsigned i : self.in) {
                // Slot k % slots_ of i's source area for me and of my
                // receive area for i was last read by read k - slots_ from
                // i, at least slots_ x in-neighbours >= window reads ago:
                // retired (and every round is drained before the next).
                if (inflight.size() >= rbufs) retire();
                const std::vector<unsigned>& i_out = out_[i];
                std::size_t pos = 0;
                while (pos < i_out.size() && i_out[pos] != me) ++pos;
                if (pos == i_out.size()) throw std::logic_error(kind_ + ": a reader not in its source's plan");
                const std::uint64_t src = src_of.at(i) + (pos * slots_ + k % slots_) * msg_;
                const std::uint64_t dst = self.rx_base + (self.slot(i) * slots_ + k % slots_) * msg_;
                const std::uint64_t len = std::min(msg_, bytes_ - k * msg_);
                const std::uint64_t key = ((round * n + i) * n + me) * writes_ + k;   // as the write form's
                prepare(app, i, src, me, dst, len, key);
                const sc_time posted = app.now();
                log_.posted(posted);
                const std::uint64_t record = records + (posts % rbufs) * sizeof(CompletionRecord);
                app.get(i, src, dst, len, key, record);
                inflight.push_back({i, dst, len, key, record, posted});
                ++posts;
            }
        }
        while (!inflight.empty()) retire();
    }
    app.finish_registrations();
    ++ended_;
    program_ended(app);
}

}   // namespace vrdmasim
