#include "models/interconnect/link.hpp"

#include <cmath>
#include <stdexcept>

#include "models/interconnect/exanet_packet.hpp"

namespace vrdmasim {

using sc_core::sc_time;

void Link::declare_params(ParamRegistry& reg, const std::string& section,
                          const std::string& description, const std::string& rate,
                          const std::string& rate_help, const std::string& latency,
                          const std::string& latency_help, const std::string& buffer,
                          const std::string& buffer_help, const std::string& lanes,
                          const std::string& lanes_help) {
    reg.section(section, description)
        .rate("rate", rate, rate_help)
        .range("1Mbps", "10Tbps")
        .integer("lanes", lanes, lanes_help)
        .range("1", "64")
        .time("latency", latency, latency_help)
        .range("0ps", "1ms")
        .size("buffer", buffer, buffer_help)
        .range("64B", "16MiB");
}

void Link::declare_classes(ParamRegistry& reg) {
    // Per-hop latencies from components (docs/references.md, "Links"): the
    // serial link as a 64B/66B link layer on the ZynqMP's GTH transceivers,
    // 55 user_clk cycles from the sender's stream input to the receiver's
    // stream output (AMD PG074, Aurora 64B/66B latency on UltraScale+ GTH),
    // user_clk = line rate / 66.
    Link::declare_params(reg, "link", "a link between two FPGAs of one QFDB, one direction",
                         "16Gbps", "link rate per direction (*estimate*: one 16 Gb/s lane, as on the "
                                   "mezzanine's edges; INFN ExaNeSt page)",
                         "227ns", "head in to head out: 55 cycles of a 64B/66B link layer on GTH transceivers "
                                  "at 16 Gb/s (user_clk 242.4 MHz; AMD PG074), board traces (< 2 ns) neglected",
                         "2KiB", "input buffer at the receiving side, per VC, in bytes of 128-bit flits "
                                 "(*estimate*: the ExaNet switch's own input FIFO holds 40 flits, ExaNet switch "
                                 "RTL; the link controller's receive buffering is unpublished; 2 KiB covers the "
                                 "credit round trip at the link rate, docs/references.md)");
    Link::declare_params(reg, "mezz-link", "a ring edge between the F1s of two QFDBs of a mezzanine, one direction",
                         "16Gbps", "rate per lane (INFN ExaNeSt page: 16 Gb/s links)",
                         "227ns", "head in to head out: as link.latency, 55 cycles of a 64B/66B link layer at "
                                  "16 Gb/s (AMD PG074)",
                         "2KiB", "input buffer at the receiving side, per VC, in bytes of 128-bit flits "
                                 "(*estimate*, as link.buffer)",
                         "2", "lanes per edge and direction (INFN ExaNeSt page: 2 links of 16 Gb/s per edge)");
    Link::declare_params(reg, "board-link", "an inter-board torus link between the F1s of two QFDBs, one direction",
                         "10Gbps", "rate per lane (arXiv 2307.09371: 10 Gb/s links in the built prototype)",
                         "357ns", "head in to head out: 55 cycles of a 64B/66B link layer at 10.3125 Gb/s "
                                  "(user_clk 156.25 MHz: 352 ns; AMD PG074) plus 5 ns of cable (*estimate*: 1 m "
                                  "at about 5 ns/m)",
                         "2KiB", "input buffer at the receiving side, per VC, in bytes of 128-bit flits "
                                 "(*estimate*, as link.buffer)",
                         "1", "lanes per direction (arXiv 2307.09371: one 10 Gb/s link)");
    Link::declare_params(reg, "ni", "the network interface path between the PLDMA and its router, one direction",
                         "20Gbps", "on-chip datapath: 128 bits at 156.25 MHz (*estimate*: the 64B/66B user clock "
                                   "at 10 Gb/s, AMD PG074)",
                         "20ns", "head in to head out (*estimate*)",
                         "640B", "buffer at the receiving side, in bytes of 128-bit flits: 40 flits, the ExaNet "
                                 "switch's input FIFO per VC, sized for two packets of the largest size, 18 flits "
                                 "(ExaNet switch RTL)");
}

LinkParams Link::params_from(const Config& cfg, const std::string& section) {
    LinkParams p;
    p.lanes = static_cast<unsigned>(cfg.integer(section + ".lanes"));
    p.rate_bps = cfg.rate_bps(section + ".rate") * p.lanes;
    p.latency = cfg.time(section + ".latency");
    p.buffer_flits = static_cast<unsigned>(cfg.size(section + ".buffer") / kFlitBytes);
    return p;
}

Link::Link(sc_core::sc_module_name name, const SimContext& ctx, const LinkParams& p,
           const std::string& group, const std::string& track)
    : sc_module(name),
      in("in"),
      out("out"),
      p_(p),
      flit_ps_(static_cast<sc_dt::uint64>(std::llround(kFlitBytes * 8 * 1e12 / p.rate_bps))),
      tracer_(ctx.tracer),
      track_(ctx.tracer.track(group, track)),
      packets_(ctx.stats.counter(std::string(this->name()) + ".packets", "", "packets carried")),
      flits_(ctx.stats.counter(std::string(this->name()) + ".flits", "",
                               "flits carried (header, payload and footer)")),
      payload_bytes_(ctx.stats.counter(std::string(this->name()) + ".payload_bytes", "B",
                                       "payload bytes carried")),
      transactions_(ctx.stats.counter(std::string(this->name()) + ".transactions", "",
                                      "packet hops served")),
      busy_us_(ctx.stats.scalar(std::string(this->name()) + ".busy_time", "us",
                                "time spent serialising flits")),
      credit_stall_us_(ctx.stats.scalar(std::string(this->name()) + ".credit_stall_time", "us",
                                        "time packets waited for space in the far-end buffer")),
      queue_ns_(ctx.stats.histogram(std::string(this->name()) + ".queue_delay", "ns",
                                    "head ready to first flit sent")),
      vc_errors_(ctx.stats.counter(std::string(this->name()) + ".vc_errors", "",
                                   "packets refused for a VC the far end has no buffer for")) {
    flit_time_ = sc_time::from_value(flit_ps_);
    if (p_.vcs < 1) throw std::invalid_argument(std::string(this->name()) + ": a link needs at least one VC");
    vcs_.resize(p_.vcs);
    for (unsigned v = 0; v < p_.vcs; ++v)
        vcs_[v].hwm_stat = &ctx.stats.scalar(std::string(this->name()) + ".vc" + std::to_string(v) + ".buffer_hwm",
                                             "flits", "most flits held in this VC's far-end buffer (credit count)");
    in.register_b_transport(this, &Link::b_transport);
}

void Link::b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    auto* pkt = gp.get_extension<ExanetPacket>();
    if (!pkt) {
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    transactions_.inc();
    const sc_time now = sc_core::sc_time_stamp();
    const sc_time head_in = now + delay;
    const unsigned flits = pkt->flits();
    if (flits > p_.buffer_flits) {
        // A packet larger than the far-end buffer could never be accepted.
        gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return;
    }

    // One buffer per VC at the far end; a one-VC link shares it among all.
    const unsigned vc = p_.vcs == 1 ? 0u : pkt->header.vc;
    if (vc >= p_.vcs) {
        vc_errors_.inc();
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    VcBuffer& buf = vcs_[vc];

    // Credits: wait until the VC's far-end buffer has room for the whole
    // packet (virtual cut-through). Entries leave in FIFO order.
    sc_time credit_ok = head_in;
    while (buf.held_flits + flits > p_.buffer_flits) {
        credit_ok = max_time(credit_ok, buf.held.front().first);
        buf.held_flits -= buf.held.front().second;
        buf.held.pop_front();
    }
    // Entries already free by the time this packet starts no longer count.
    const sc_time ready = max_time(head_in, busy_until_);
    const sc_time start = max_time(ready, credit_ok);
    while (!buf.held.empty() && buf.held.front().first <= start) {
        buf.held_flits -= buf.held.front().second;
        buf.held.pop_front();
    }
    if (buf.held_flits + flits > buf.hwm) {
        buf.hwm = buf.held_flits + flits;
        buf.hwm_stat->set(buf.hwm);
    }

    const sc_time ser = serialise(flits);
    // The link cannot send the tail before it has arrived from upstream.
    const sc_time end = max_time(start + ser, pkt->tail + flit_time_);
    busy_until_ = end;

    queue_ns_.add(to_ns(start - head_in));
    if (credit_ok > ready) credit_stall_us_.add(to_us(credit_ok - ready));
    busy_us_.add(to_us(end - start));
    packets_.inc();
    flits_.inc(flits);
    payload_bytes_.inc(pkt->header.size);

    if (tracer_.enabled()) {
        tracer_.span(track_, pkt->header.type == PacketType::RdmaWrite ? "data" : "ctrl", start, end,
                     {{"transfer", Tracer::json_number(pkt->transfer)},
                      {"seq", Tracer::json_number(static_cast<std::uint64_t>(pkt->footer.seq))},
                      {"bytes", Tracer::json_number(static_cast<std::uint64_t>(pkt->header.size))}});
    }

    // Hand the packet to the far end: head after one flit and the wire.
    pkt->tail = end + p_.latency;
    pkt->hops++;
    sc_time d = (start + flit_time_ + p_.latency) - now;
    out->b_transport(gp, d);
    // The far end says when the packet's space in its buffer is free again.
    buf.held.emplace_back(now + d, flits);
    buf.held_flits += flits;

    delay = end - now;
}

}  // namespace vrdmasim
