#include "src/sim/channel_load.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "models/interconnect/link.hpp"
#include "models/interconnect/router.hpp"
#include "src/sim/system.hpp"
#include "models/dma/control_packets.hpp"
#include "models/dma/read.hpp"
#include "workloads/registry.hpp"

namespace vrdmasim {

using sc_core::sc_time;

namespace {

ChannelModel::Channel channel(const std::string& name, const LinkParams& p) {
    ChannelModel::Channel c;
    c.name = name;
    c.rate_bps = p.rate_bps;
    c.flit = sc_time::from_value(Link::flit_ps_of(p));
    c.latency = p.latency;
    return c;
}

}   // namespace

ChannelModel::ChannelModel(const Config& c)
    : topo_(System::topology_from(c)), router_latency_(c[params_of<RouterParams>().latency]) {
    const LinkSections& s = params_of<LinkSections>();
    const LinkParams ni = Link::params_from(c, s.ni);
    const LinkParams board = Link::params_from(c, s.link);
    const LinkParams ring = Link::params_from(c, topo_.kind() == TopologyKind::Mezzanine ? s.mezz_link : s.board_link);
    const unsigned n = topo_.size();
    inject_.resize(n);
    eject_.resize(n);
    out_.resize(n);
    // As System::build_links names and classes them.
    for (unsigned i = 0; i < n; ++i) {
        inject_[i] = channels_.size();
        channels_.push_back(channel(topo_.name(i) + ".inject", ni));
        eject_[i] = channels_.size();
        channels_.push_back(channel(topo_.name(i) + ".eject", ni));
        out_[i].assign(topo_.port_count(i), 0);
        out_[i][0] = eject_[i];
        for (unsigned k = 1; k < topo_.port_count(i); ++k) {
            const Topology::Port p = topo_.port(i, k);
            out_[i][k] = channels_.size();
            channels_.push_back(
                channel(topo_.name(i) + "_to_" + topo_.name(p.to), p.dim == Topology::kLocal ? board : ring));
        }
    }
}

synthetic::Shape ChannelModel::shape() const {
    return synthetic::Shape{topo_.fpgas_per_board(), topo_.extent(Topology::X), topo_.extent(Topology::Y),
                            topo_.extent(Topology::Z)};
}

std::vector<std::size_t> ChannelModel::path(unsigned src, unsigned dst) const {
    std::vector<std::size_t> v{inject_.at(src)};
    for (const Topology::Step& st : topo_.route(src, dst))
        v.push_back(out_[st.node].at(static_cast<unsigned>(st.port)));
    return v;
}

sc_time ChannelModel::zero_load(unsigned src, unsigned dst, std::uint64_t flits) const {
    // Per link, the head goes on one flit time after it started and reaches
    // the far end `latency` later; each router adds its latency to head and
    // tail; the tail trails the head by the rest of the message on the
    // slowest link crossed (models/interconnect/README.md "Timing").
    sc_time sum = sc_core::SC_ZERO_TIME, slowest = sc_core::SC_ZERO_TIME;
    const std::vector<std::size_t> p = path(src, dst);
    for (std::size_t c : p) {
        sum += channels_[c].flit + channels_[c].latency;
        slowest = std::max(slowest, channels_[c].flit);
    }
    sum += router_latency_ * static_cast<double>(p.size() - 1);
    return sum + slowest * static_cast<double>(flits > 0 ? flits - 1 : 0);
}

ChannelModel::Bound ChannelModel::bound(synthetic::Pattern pat, const synthetic::Shape& shape,
                                        const synthetic::Hotspot& h, std::uint64_t data_flits,
                                        std::uint64_t response_flits, std::uint64_t request_flits) const {
    if (shape.nodes() != topo_.size())
        throw std::logic_error("channel load: a pattern's shape of " + std::to_string(shape.nodes()) +
                               " nodes on a topology of " + std::to_string(topo_.size()));
    Bound b;
    b.pattern = pat;
    b.data_flits = data_flits;
    b.reads = request_flits > 0;
    b.response_flits = response_flits + request_flits;
    std::vector<double> load(channels_.size(), 0.0);
    double zl_sum = 0, zl_min = std::numeric_limits<double>::max(), zl_max = 0;
    const unsigned n = topo_.size();
    for (unsigned src = 0; src < n; ++src)
        for (const auto& [dst, w] : synthetic::row(pat, shape, src, h)) {
            if (w <= 0) continue;
            // The data from the node that sends it, the rest back to it.
            const unsigned from = b.reads ? dst : src, to = b.reads ? src : dst;
            for (std::size_t c : path(from, to)) load[c] += w * static_cast<double>(data_flits);
            for (std::size_t c : path(to, from)) load[c] += w * static_cast<double>(b.response_flits);
            const sc_time zl = zero_load(from, to, data_flits) +
                               (b.reads ? zero_load(src, dst, request_flits) : sc_core::SC_ZERO_TIME);
            const double us = zl.to_seconds() * 1e6;
            zl_sum += w * us;
            zl_min = std::min(zl_min, us);
            zl_max = std::max(zl_max, us);
        }
    const double ni = ni_rate_bps();
    for (std::size_t c = 0; c < load.size(); ++c)
        if (load[c] > 0) b.loads.push_back(Load{c, load[c], load[c] * ni / channels_[c].rate_bps});
    std::stable_sort(b.loads.begin(), b.loads.end(),
                     [](const Load& a, const Load& z) { return a.per_capacity > z.per_capacity; });
    b.theta = b.loads.empty() ? 0.0 : static_cast<double>(data_flits) / b.loads.front().per_capacity;
    b.zero_load_mean_us = zl_sum / n;
    b.zero_load_min_us = zl_min;
    b.zero_load_max_us = zl_max;
    return b;
}

OfferedTraffic offered_traffic(const Config& c) {
    const WorkloadKind::PatternTraffic t = workload_kinds::pattern_traffic(c);
    return OfferedTraffic{synthetic::parse_pattern(t.pattern), t.bytes, t.reads, t.pattern_param, t.message_size_param};
}

std::vector<PatternBound> synthetic_bounds(const ChannelModel& m, const Config& c,
                                           const std::vector<synthetic::Pattern>& patterns) {
    const synthetic::Shape shape = m.shape();
    // The message and the hot spot, as the kind that sends the patterns
    // declares them (workloads/registry.hpp).
    const WorkloadKind::PatternTraffic msg = workload_kinds::pattern_traffic(c);
    // One response (ACK) per message, back from where its data went; the
    // read form's request, one packet, out to the node it reads.
    const std::uint64_t response = 2 + (ControlPackets::kResponseBytes + kFlitBytes - 1) / kFlitBytes;
    const std::uint64_t request = msg.reads ? 2 + (ReadProtocol::kRequestBytes + kFlitBytes - 1) / kFlitBytes : 0;
    synthetic::Hotspot hot{msg.hot_node, msg.hot_fraction};
    std::vector<PatternBound> out;
    for (synthetic::Pattern p : patterns) {
        PatternBound b;
        b.pattern = p;
        b.refusal = synthetic::refusal(p, shape);
        if (b.refusal.empty() && p == synthetic::Pattern::Hotspot && hot.node >= shape.nodes())
            b.refusal = msg.hot_node_setting + ": the system has " + std::to_string(shape.nodes()) + " nodes";
        // The user library builds no read of the node's own memory (RdmaProcess::post_read).
        for (unsigned i = 0; b.refusal.empty() && msg.reads && !synthetic::is_random(p) && i < shape.nodes(); ++i)
            if (synthetic::destination(p, shape, i) == i)
                b.refusal = "maps node " + std::to_string(i) + " to itself, which would read its own memory";
        if (b.refusal.empty()) b.bound = m.bound(p, shape, hot, msg.flits, response, request);
        out.push_back(std::move(b));
    }
    return out;
}

}   // namespace vrdmasim
