#include "models/dma/pldma.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace vrdmasim {

using sc_core::sc_time;

// ---------------------------------------------------------------- CompletionSignal

void CompletionSignal::raise_at(sc_time at) {
    ++raised_;
    auto it = std::upper_bound(pending_.begin(), pending_.end(), at);
    pending_.insert(it, at);
    const sc_time now = sc_core::sc_time_stamp();
    event_.notify(at > now ? at - now : sc_core::SC_ZERO_TIME);
}

std::uint64_t CompletionSignal::count_at(sc_time at) {
    // Records visible by `at` are folded into done_: a record once seen stays
    // counted (callers ask about times that never go back by more than a
    // quantum).
    while (!pending_.empty() && pending_.front() <= at) {
        pending_.pop_front();
        ++done_;
    }
    return done_;
}

bool CompletionSignal::next_after(sc_time at, sc_time& next) const {
    auto it = std::upper_bound(pending_.begin(), pending_.end(), at);
    if (it == pending_.end()) return false;
    next = *it;
    return true;
}

// ---------------------------------------------------------------- Pldma

namespace {
// `at` as a delay from now. A memory access may have wait()ed (a translation
// stalled in the SMMU), so "now" is always read afresh.
sc_time from_now(sc_time at) {
    const sc_time now = sc_core::sc_time_stamp();
    return at > now ? at - now : sc_core::SC_ZERO_TIME;
}
}  // namespace

PldmaParams::PldmaParams()
    : set("dma", "PLDMA RDMA engine (ExaNeSt), one per node"),
      block_size(set.size("block-size", "4KiB",
                          "bytes read from the source per memory request; each block is cut into packets "
                          "(*estimate*, a design parameter of the engine)")
                     .range("16B", "1MiB")),
      packet_size(set.size("packet-size", "256B",
                           "largest payload of one ExaNet packet: 256 B, 18 flits with header and footer, the "
                           "largest packet the ExaNet switch buffers for (ExaNet switch RTL: input FIFO "
                           "back-pressure at one maximum packet of 18 flits); the header's size field would allow "
                           "up to 16 KiB - 1, but a packet must fit twice in ni.buffer to stream")
                      .range("16B", "16368B")),
      block_buffers(set.integer("block-buffers", "2",
                                "blocks the engine can hold: the read of block k+n waits until block k is sent")
                        .range("1", "64")),
      queue_depth(set.integer("queue-depth", "64",
                              "descriptors one channel queues; a doorbell beyond it is refused")
                      .range("1", "65536")),
      channels(set.integer("channels", "16",
                           "virtual channels, each a 4 KiB register page a process posts on without a system call "
                           "(the ExaNeSt controller offers 1024)")
                   .range("1", "1024")),
      channel_blocks(set.integer("channel-blocks", "2",
                                 "blocks a channel may have in flight per turn of the round-robin scheduler, which then "
                                 "moves on to the next channel with work")
                         .range("1", "1024")),
      fault_timeout(set.time("fault-timeout", "200us",
                             "fault-tolerant: a parked channel or a faulted receive whose fault got no outcome by then "
                             "retries (a second fault while FSR still holds the first is only FSR.MULTI in terminate mode)")
                        .range("1us", "1s")),
      netvm_buffer(set.size("netvm-buffer", "256KiB",
                            "NetVM receive (rdma.strategy = netvm): kernel buffer for packets whose destination page is "
                            "not resident; a full buffer holds further packets back through the link credits")
                       .range("16KiB", "1GiB")),
      setup_time(set.time("setup-time", "20ns",
                          "engine time to start a transfer after taking its descriptor (*calibrated*: three cycles of "
                          "the engine's 156.25 MHz clock; with the other defaults the 64 B one-hop pingpong gives the "
                          "prototype's 1.3 us, configs/exanest-prototype.ini)")
                     .range("0ps", "100us")),
      mmio_latency(set.time("mmio-latency", "20ns",
                            "register access latency inside the engine (*estimate*)")
                       .range("0ps", "10us")),
      smmu_tbu(set.integer("smmu-tbu", "3",
                           "TBU the engine's AXI port feeds: HP0 -> TBU3, HP1/HP2 -> TBU4, HP3 -> TBU5, HPC0/1 -> TBU0 "
                           "(Xilinx UG1085); also bits [14:10] of its stream ID")
                   .range("0", "31")),
      axi_id(set.integer("axi-id", "0", "AXI ID of the engine's memory transactions: bits [5:0] of its stream ID "
                         "(Xilinx AR#69447; the master field [9:6] is 0 for a PL port)")
                 .range("0", "63")),
      fault_tolerant(set.boolean("fault-tolerant", "true",
                                 "terminate-mode SMMU faults are recovered instead of failing the transfer: a faulting "
                                 "source read parks the transfer until the fault library's outcome (fault_resolved) and "
                                 "re-reads; a faulting payload write is NACKed and the sender retransmits from that "
                                 "sequence number once the receiver's fault is resolved. Default: the thesis's engine "
                                 "(configs/thesis/base.ini); false: the original ExaNeSt engine, whose faulting transfers fail")) {}

void Pldma::declare_params(ParamRegistry& reg) {
    reg.add(params_of<PldmaParams>().set);
}

void Pldma::declare_metrics(MetricRegistry& reg) {
    reg.sum_counters("packets",
                     "Data packets sent by all PLDMAs (sum of `*.packets_sent`).",
                     {"packets_sent"});
    reg.sum_counters("parks",
                     "PLDMA channels parked on a source-read fault (fault-tolerant engine).",
                     {"dma.parks"});
    reg.sum_counters("nacks",
                     "NACKs sent by receiving PLDMAs for payload writes that faulted.",
                     {"dma.nacks_sent"});
    reg.sum_counters("retransmitted_bytes",
                     "Payload bytes sent again on retransmit requests.",
                     {"dma.retransmitted_bytes"});
    reg.sum_counters("fault_timeouts",
                     "Faults whose outcome did not come within `dma.fault-timeout`.",
                     {"dma.fault_timeouts"});
    reg.sum_counters("kernel_copy_bytes",
                     "Bytes redirected into the NetVM kernel buffer and copied in by the kernel.",
                     {"dma.kernel_copy_bytes"});
    reg.sum_scalars("rx_stalled_us", "us",
                    "Time receiving PLDMAs' payload writes were held beyond 1 us (stalled translations; the "
                    "packets behind wait in the link buffers; sum of `*.dma.rx_stalled`).",
                    "dma.rx_stalled");
}

Pldma::Pldma(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group,
             unsigned node, std::vector<std::uint32_t> coord_of)
    : sc_module(name),
      mmio("mmio"),
      mem("mem"),
      net_out("net_out"),
      net_in("net_in"),
      node_(node),
      coord_of_(std::move(coord_of)),
      block_size_(ctx.config[params_of<PldmaParams>().block_size]),
      packet_size_(static_cast<std::uint32_t>(ctx.config[params_of<PldmaParams>().packet_size])),
      packets_per_block_((block_size_ + packet_size_ - 1) / packet_size_),
      block_buffers_(static_cast<unsigned>(ctx.config[params_of<PldmaParams>().block_buffers])),
      queue_depth_(static_cast<unsigned>(ctx.config[params_of<PldmaParams>().queue_depth])),
      channel_blocks_(static_cast<unsigned>(ctx.config[params_of<PldmaParams>().channel_blocks])),
      setup_time_(ctx.config[params_of<PldmaParams>().setup_time]),
      mmio_latency_(ctx.config[params_of<PldmaParams>().mmio_latency]),
      fault_timeout_(ctx.config[params_of<PldmaParams>().fault_timeout]),
      fault_tolerant_(ctx.config[params_of<PldmaParams>().fault_tolerant]),
      netvm_capacity_(ctx.config[params_of<PldmaParams>().netvm_buffer]),
      channels_(static_cast<std::size_t>(ctx.config[params_of<PldmaParams>().channels])),
      buffer_free_(block_buffers_),
      block_(block_size_),
      stream_id_(static_cast<std::uint32_t>((ctx.config[params_of<PldmaParams>().smmu_tbu] << 10) | ctx.config[params_of<PldmaParams>().axi_id])),
      tx_pkt_(*new ExanetPacket),
      ack_pkt_(*new ExanetPacket),
      ctl_pkt_(*new ExanetPacket),
      tracer_(ctx.tracer),
      track_(ctx.tracer.track(group, "dma")),
      who_(group + ".dma"),
#define VRDMASIM_COUNTER(field, key, unit, help) field(ctx.stats.counter(std::string(this->name()) + "." key, unit, help))
      VRDMASIM_COUNTER(posted_, "transfers_posted", "", "descriptors queued"),
      VRDMASIM_COUNTER(refused_, "doorbells_refused", "",
                       "doorbells refused: channel queue full, channel disabled or no such node"),
      VRDMASIM_COUNTER(completed_, "transfers_completed", "", "transfers completed successfully (acknowledged)"),
      VRDMASIM_COUNTER(failed_, "transfers_failed", "", "transfers completed with an error status"),
      VRDMASIM_COUNTER(packets_sent_, "packets_sent", "", "data packets sent"),
      VRDMASIM_COUNTER(packets_received_, "packets_received", "", "data packets received"),
      VRDMASIM_COUNTER(bytes_sent_, "bytes_sent", "B", "payload bytes sent"),
      VRDMASIM_COUNTER(bytes_received_, "bytes_received", "B", "payload bytes written into this node's memory"),
      VRDMASIM_COUNTER(rx_errors_, "rx_errors", "",
                       "received packets that could not be written or were out of sequence, and records lost"),
      VRDMASIM_COUNTER(transactions_, "transactions", "", "register accesses and packets served"),
      VRDMASIM_COUNTER(smmu_faults_, "smmu_faults", "", "memory accesses the SMMU answered with a translation fault"),
      latency_us_(ctx.stats.histogram(std::string(this->name()) + ".transfer_latency", "us",
                                      "doorbell to completion record written")),
      VRDMASIM_COUNTER(parks_, "parks", "", "channels parked on a source read fault (fault-tolerant)"),
      VRDMASIM_COUNTER(rereads_, "rereads", "", "source blocks read again after their fault was resolved"),
      park_us_(ctx.stats.histogram(std::string(this->name()) + ".park_time", "us",
                                   "source read fault to resumption (fault-tolerant)")),
      VRDMASIM_COUNTER(nacks_sent_, "nacks_sent", "", "NACKs sent for payload writes that faulted (receiver)"),
      VRDMASIM_COUNTER(nacks_received_, "nacks_received", "", "NACKs received (sender)"),
      VRDMASIM_COUNTER(retx_requests_, "retransmit_requests", "",
                       "retransmit requests sent after a resolved (or timed-out) fault (receiver)"),
      VRDMASIM_COUNTER(retransmissions_, "retransmissions", "", "retransmit requests served (sender)"),
      VRDMASIM_COUNTER(retx_bytes_, "retransmitted_bytes", "B", "payload bytes sent again on a retransmit request"),
      VRDMASIM_COUNTER(duplicates_, "duplicates_dropped", "",
                       "received packets already written (sequence behind), dropped (receiver)"),
      VRDMASIM_COUNTER(fault_dropped_, "fault_dropped", "",
                       "received packets dropped while their transfer waits on a fault or after it failed on one"),
      VRDMASIM_COUNTER(unmatched_, "fault_outcomes_unmatched", "", "fault outcomes for which nothing was waiting"),
      VRDMASIM_COUNTER(fault_timeouts_, "fault_timeouts", "",
                       "parked channels and faulted receives retried after dma.fault-timeout without an outcome"),
      VRDMASIM_COUNTER(record_retries_, "record_retries", "",
                       "completion or notification records written again after their page faulted"),
      VRDMASIM_COUNTER(pd_violations_, "pd_violations", "",
                       "transfers received for a protection domain no channel of this node has (dropped)"),
      VRDMASIM_COUNTER(notifications_, "notifications", "", "notifications delivered to a receiving channel"),
      VRDMASIM_COUNTER(netvm_packets_, "netvm_buffered", "",
                       "packets put in the NetVM kernel buffer (destination page not resident)"),
      VRDMASIM_COUNTER(netvm_bytes_, "kernel_copy_bytes", "B",
                       "bytes the kernel copied from the NetVM buffer into place"),
      VRDMASIM_COUNTER(netvm_full_, "netvm_full", "", "packets held back because the NetVM buffer was full"),
#undef VRDMASIM_COUNTER
      netvm_peak_(ctx.stats.scalar(std::string(this->name()) + ".netvm_peak", "B", "NetVM buffer bytes in use at peak")),
      rx_stalled_us_(ctx.stats.scalar(std::string(this->name()) + ".rx_stalled", "us",
                                      "time payload writes were held beyond 1 us (stalled translations: the "
                                      "packets behind wait in the link buffers)")) {
    if (coord_of_.size() <= node_) throw std::logic_error("pldma: node has no coordinate");
    mmio.register_b_transport(this, &Pldma::mmio_transport);
    net_in.register_b_transport(this, &Pldma::net_transport);
    tx_gp_.set_extension(&tx_pkt_);
    ack_gp_.set_extension(&ack_pkt_);
    ctl_gp_.set_extension(&ctl_pkt_);
    SC_HAS_PROCESS(Pldma);
    SC_THREAD(engine);
    SC_THREAD(control_thread);
    if (fault_tolerant_) {
        SC_THREAD(watchdog_thread);
        SC_THREAD(record_thread);
    }
}

void Pldma::enable_netvm(NetvmCopyFn copy) { netvm_copy_ = std::move(copy); }

std::uint64_t Pldma::packets_of(std::uint64_t len) const {
    if (len == 0) return 0;
    const std::uint64_t full = len / block_size_, rest = len % block_size_;
    return full * packets_per_block_ + (rest + packet_size_ - 1) / packet_size_;
}

sc_time Pldma::memory(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data, std::uint64_t len,
                      sc_time at, bool& ok, SmmuFaultExtension* fault) {
    if (mem_free_.empty()) {
        auto p = std::make_unique<MemPayload>();
        p->sid = new StreamIdExtension;
        p->sid->sid = stream_id_;
        p->fault = new SmmuFaultExtension;
        p->gp.set_extension(p->sid);     // owned by the payload
        p->gp.set_extension(p->fault);
        mem_free_.push_back(p.get());
        mem_pool_.push_back(std::move(p));
    }
    MemPayload* p = mem_free_.back();
    mem_free_.pop_back();
    tlm::tlm_generic_payload& gp = p->gp;
    p->fault->type = FaultType::None;
    gp.set_command(cmd);
    gp.set_address(addr);
    gp.set_data_ptr(data);
    gp.set_data_length(static_cast<unsigned>(len));
    gp.set_streaming_width(static_cast<unsigned>(len));
    gp.set_byte_enable_ptr(nullptr);
    gp.set_dmi_allowed(false);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_time d = from_now(at);
    mem->b_transport(gp, d);   // may wait() (a stalled SMMU translation)
    ok = gp.is_response_ok() && p->fault->type == FaultType::None;
    if (p->fault->type != FaultType::None) smmu_faults_.inc();
    if (fault) *fault = *p->fault;
    mem_free_.push_back(p);
    return sc_core::sc_time_stamp() + d;
}

void Pldma::write_record(std::uint64_t addr, const CompletionRecord& r, sc_time at, bool& ok, sc_time& done) {
    unsigned char buf[sizeof(CompletionRecord)];
    std::memcpy(buf, &r, sizeof r);   // the host is little-endian like the A53 in its usual mode
    done = memory(tlm::TLM_WRITE_COMMAND, addr, buf, sizeof buf, at, ok);
}

// ---------------------------------------------------------------- sending

void Pldma::engine() {
    for (;;) {
        const sc_time now = sc_core::sc_time_stamp() + qk_.get_local_time();
        const int c = pick(now);
        if (c >= 0) {
            serve(static_cast<unsigned>(c));
            if (qk_.need_sync()) qk_.sync();
            continue;
        }
        // Nothing to do. Time still held by the quantum keeper passes first,
        // and work may arrive meanwhile (a doorbell notified during that
        // wait would be lost to a wait that follows it): look again.
        if (qk_.get_local_time() > sc_core::SC_ZERO_TIME) {
            qk_.sync();
            continue;
        }
        // Sleep until a doorbell, an outcome, a retransmit request, or the
        // earliest deadline of a parked channel; nothing can happen between
        // the look above and this wait.
        sc_time deadline = sc_core::sc_max_time();
        for (const Channel& ch : channels_)
            if (ch.parked && !ch.park_done) deadline = std::min(deadline, ch.park_deadline);
        const sc_time t = sc_core::sc_time_stamp();
        if (deadline == sc_core::sc_max_time())
            sc_core::wait(doorbell_);
        else if (deadline > t)
            sc_core::wait(deadline - t, doorbell_);
    }
}

int Pldma::pick(sc_time now) {
    const unsigned n = static_cast<unsigned>(channels_.size());
    for (unsigned i = 0; i < n; ++i) {
        const unsigned c = (rr_next_ + i) % n;
        Channel& ch = channels_[c];
        if (ch.work.empty()) continue;
        if (ch.parked) {
            if (ch.park_done) {
                ch.parked = false;
                const sc_time resume = max_time(now, ch.park_at);
                park_us_.add(to_us(resume - ch.park_since));
                if (tracer_.enabled())
                    tracer_.async_span(track_, "parked", ch.work.front().id, ch.park_since, resume,
                                       {{"channel", Tracer::json_number(static_cast<std::uint64_t>(c))}});
                if (tracer_.narrating()) {
                    std::ostringstream os;
                    os << "transfer " << ch.work.front().id << " on channel " << c
                       << (ch.park_resolved ? " resumes: source page resolved, " : " fails: source page NOT resolved, ")
                       << "parked " << to_us(resume - ch.park_since) << " us";
                    tracer_.narrate(resume, who_, os.str());
                }
                if (!ch.park_resolved) {
                    fail(ch, ch.work.front(), resume);
                    if (ch.work.empty()) continue;
                } else {
                    rereads_.inc();
                    ch.work.front().earliest = max_time(ch.work.front().earliest, resume);
                }
            } else if (ch.park_deadline <= now) {
                ch.parked = false;   // no outcome came: read again (a fresh fault if still absent)
                fault_timeouts_.inc();
                ch.work.front().earliest = max_time(ch.work.front().earliest, now);
            } else {
                continue;
            }
        }
        rr_next_ = (c + 1) % n;
        return static_cast<int>(c);
    }
    return -1;
}

void Pldma::drop(Channel& ch, const Work* w) {
    for (auto it = ch.work.begin(); it != ch.work.end(); ++it)
        if (&*it == w) {
            ch.work.erase(it);
            return;
        }
}

void Pldma::fail(Channel& ch, Work& w, sc_time at) {
    auto it = outstanding_.find(w.id);
    if (it != outstanding_.end()) {
        const Descriptor d = it->second.desc;
        outstanding_.erase(it);
        complete(d, kStatusError, 0, at);
    } else if (!w.started) {
        --ch.queued;
        complete(w.desc, kStatusError, 0, at);
    }
    drop(ch, &w);
}

void Pldma::serve(unsigned c) {
    Channel& ch = channels_[c];
    for (unsigned k = 0; k < channel_blocks_ && !ch.work.empty() && !ch.parked; ++k) {
        Work& w = ch.work.front();
        const sc_time now = sc_core::sc_time_stamp() + qk_.get_local_time();
        if (!w.started) {
            w.started = true;
            if (!w.resend) {
                --ch.queued;
                outstanding_[w.id].desc = w.desc;
            } else {
                retransmissions_.inc();
            }
            w.earliest = max_time(now, w.earliest) + setup_time_;
            if (tracer_.narrating()) {
                std::ostringstream os;
                if (w.resend)
                    os << "transfer " << w.id << " resends from packet " << w.next;
                else
                    os << "transfer " << w.id << " starts on channel " << c << ": " << w.desc.len << " B from 0x"
                       << std::hex << w.desc.src << " to node" << std::dec << w.desc.dst_node << " 0x" << std::hex
                       << w.desc.dst;
                tracer_.narrate(w.earliest, who_, os.str());
            }
        }
        auto it = outstanding_.find(w.id);
        if (it == outstanding_.end() || it->second.epoch != w.epoch) {
            drop(ch, &w);   // acknowledged or NACKed meanwhile: nothing more to send
            continue;
        }
        const Descriptor d = it->second.desc;
        const std::uint64_t total = packets_of(d.len);
        if (w.next >= total) {   // zero length (or nothing left)
            if (d.len == 0) {
                outstanding_.erase(it);
                complete(d, kStatusOk, 0, max_time(now, w.earliest));
            }
            drop(ch, &w);
            continue;
        }
        const std::uint64_t b = w.next / packets_per_block_;
        const std::uint64_t off = b * block_size_;
        const std::uint64_t blen = std::min<std::uint64_t>(block_size_, d.len - off);
        const unsigned slot = static_cast<unsigned>(blocks_read_ % block_buffers_);
        const sc_time issue = max_time(max_time(read_free_, buffer_free_[slot]), max_time(now, w.earliest));
        SmmuFaultExtension fx;
        bool ok = true;
        const sc_time data_ready = memory(tlm::TLM_READ_COMMAND, d.src + off, block_.data(), blen, issue, ok, &fx);
        ++blocks_read_;
        read_free_ = issue;
        if (!ok) {
            if (fault_tolerant_ && fx.type != FaultType::None && !fx.write) {
                // Park this channel until the fault library's outcome for the
                // page (or the timeout); the others go on.
                parks_.inc();
                ch.parked = true;
                ch.park_page = fx.address >> 12;
                ch.park_since = data_ready;
                ch.park_deadline = data_ready + fault_timeout_;
                ch.park_done = ch.park_resolved = false;
                w.earliest = data_ready;
                if (tracer_.narrating()) {
                    std::ostringstream os;
                    os << "transfer " << d.id << " parked on channel " << c << ": source fault at 0x" << std::hex
                       << fx.address;
                    tracer_.narrate(data_ready, who_, os.str());
                }
                return;
            }
            fail(ch, w, data_ready);
            continue;
        }

        ExanetPacket& p = tx_pkt_;
        p.header = ExanetHeader{};
        p.header.type = PacketType::RdmaWrite;
        p.header.dst_coord = coord_of_.at(d.dst_node);
        p.header.pdid = d.pd;
        p.header.vc = static_cast<std::uint8_t>(c & 0x1f);
        p.footer = ExanetFooter{};
        p.footer.src_coord = coord_of_[node_];
        p.transfer = d.id;
        p.src_node = node_;
        p.dst_node = d.dst_node;
        const std::uint64_t first = b * packets_per_block_;
        const std::uint64_t npk = (blen + packet_size_ - 1) / packet_size_;
        const std::uint64_t epoch = w.epoch;
        const bool resend = w.resend;
        bool stop = false, net_error = false;
        for (std::uint64_t i = w.next - first; i < npk; ++i) {
            if (fault_tolerant_) {
                // A NACK (or an error ACK) may have come during the last
                // packet's delivery; without fault tolerance the only answer
                // is the ACK after the last packet.
                auto o = outstanding_.find(d.id);
                if (o == outstanding_.end() || o->second.epoch != epoch) {
                    stop = true;   // NACKed (a retransmit request will restart it) or completed
                    break;
                }
            }
            const std::uint64_t poff = i * packet_size_;
            const std::uint32_t plen = static_cast<std::uint32_t>(std::min<std::uint64_t>(packet_size_, blen - poff));
            const std::uint64_t at = off + poff;
            p.header.size = static_cast<std::uint16_t>(plen);
            p.header.dst_va = d.dst + at;
            p.footer.seq = static_cast<std::uint16_t>((first + i) & 0x3fff);
            p.footer.first = at == 0;
            p.footer.last = at + plen == d.len;
            p.footer.notify = p.footer.last && (d.flags & kFlagNotify);
            p.hops = 0;
            const sc_time head = max_time(send_free_, data_ready);
            p.tail = head;
            tx_gp_.set_command(tlm::TLM_WRITE_COMMAND);
            tx_gp_.set_address(p.header.dst_va);
            tx_gp_.set_data_ptr(block_.data() + poff);
            tx_gp_.set_data_length(plen);
            tx_gp_.set_streaming_width(plen);
            tx_gp_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
            const sc_time t0 = sc_core::sc_time_stamp();
            sc_time dl = from_now(head);
            net_out->b_transport(tx_gp_, dl);
            send_free_ = t0 + dl;
            if (!tx_gp_.is_response_ok()) {
                net_error = true;   // the network refused it (no route, too large)
                break;
            }
            packets_sent_.inc();
            bytes_sent_.inc(plen);
            if (resend) retx_bytes_.inc(plen);
            w.next = first + i + 1;   // w stays valid: the deque only grows at its ends meanwhile
        }
        buffer_free_[slot] = send_free_;
        if (net_error)
            fail(ch, w, send_free_);
        else if (stop || w.next >= total)
            drop(ch, &w);   // all sent: the ACK completes it
        qk_.set(from_now(max_time(send_free_, read_free_)));
        if (qk_.need_sync()) qk_.sync();
    }
}

void Pldma::complete(const Descriptor& d, std::uint32_t status, std::uint64_t bytes, sc_time at) {
    CompletionRecord r;
    r.tag = d.tag;
    r.status = status;
    r.node = d.dst_node;
    r.bytes = bytes;
    r.addr = d.src;
    sc_time done = at;
    if (status == kStatusOk) completed_.inc(); else failed_.inc();
    if (d.compl_addr)
        done = post_record(d.compl_addr, r, at, {&channels_[d.channel].tx});
    else
        channels_[d.channel].tx.raise_at(done);
    latency_us_.add(to_us(done - d.posted));
    if (status == kStatusOk && (d.flags & kFlagNotifyPacket)) {
        ControlOut n;
        n.kind = ControlKind::Notification;
        n.id = d.id;
        n.bytes = bytes;
        n.dst = d.dst;
        n.pd = d.pd;
        n.node = d.dst_node;
        n.coord = coord_of_.at(d.dst_node);
        n.at = done;
        queue_control(n);
    }
    if (tracer_.enabled()) {
        tracer_.async_span(track_, status == kStatusOk ? "transfer" : "transfer (error)", d.id, d.posted, done,
                     {{"id", Tracer::json_number(d.id)},
                      {"bytes", Tracer::json_number(d.len)},
                      {"channel", Tracer::json_number(static_cast<std::uint64_t>(d.channel))},
                      {"dst_node", Tracer::json_number(static_cast<std::uint64_t>(d.dst_node))}});
    }
    if (tracer_.narrating()) {
        std::ostringstream os;
        os << "transfer " << d.id << (status == kStatusOk ? " complete: " : " FAILED: ") << bytes
           << " B delivered, latency " << to_us(done - d.posted) << " us";
        tracer_.narrate(done, who_, os.str());
    }
}

// ---------------------------------------------------------------- packets out

void Pldma::emit(tlm::tlm_generic_payload& gp, ExanetPacket& k, unsigned char* payload, unsigned len,
                 PacketType type, std::uint32_t coord, unsigned node, std::uint64_t id, std::uint16_t seq,
                 std::uint16_t pd, std::uint64_t va, sc_time at) {
    k.header = ExanetHeader{};
    k.header.type = type;
    k.header.dst_coord = coord;
    k.header.size = static_cast<std::uint16_t>(len);
    k.header.pdid = pd;
    k.header.dst_va = va;
    k.footer = ExanetFooter{};
    k.footer.first = k.footer.last = true;
    k.footer.seq = static_cast<std::uint16_t>(seq & 0x3fff);
    k.footer.src_coord = coord_of_[node_];
    k.transfer = id;
    k.src_node = node_;
    k.dst_node = node;
    k.hops = 0;
    k.tail = at;
    gp.set_command(tlm::TLM_WRITE_COMMAND);
    gp.set_address(va);
    gp.set_data_ptr(payload);
    gp.set_data_length(len);
    gp.set_streaming_width(len);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_time d = from_now(at);
    net_out->b_transport(gp, d);
    if (!gp.is_response_ok()) rx_errors_.inc();
}

void Pldma::send_response(const ExanetPacket& data, std::uint32_t status, std::uint64_t index, sc_time at) {
    const std::uint64_t id = data.transfer;
    const auto index32 = static_cast<std::uint32_t>(index);
    std::memcpy(ack_payload_, &id, 8);
    std::memcpy(ack_payload_ + 8, &status, 4);
    std::memcpy(ack_payload_ + 12, &index32, 4);
    emit(ack_gp_, ack_pkt_, ack_payload_, sizeof ack_payload_, PacketType::Response, data.footer.src_coord,
         data.src_node, id, data.footer.seq, data.header.pdid, 0, at);
}

void Pldma::queue_control(const ControlOut& c) {
    control_.push_back(c);
    control_ev_.notify(sc_core::SC_ZERO_TIME);
}

void Pldma::control_thread() {
    for (;;) {
        while (control_.empty()) sc_core::wait(control_ev_);
        ControlOut c = control_.front();
        control_.pop_front();
        std::uint32_t word = 0;
        PacketType type = PacketType::Response;
        switch (c.kind) {
        case ControlKind::Retransmit: type = PacketType::Control; word = kControlRetransmit; break;
        case ControlKind::ErrorAck: word = kStatusError; break;
        case ControlKind::Ack:
            word = c.ok ? kStatusOk : kStatusError;
            if (c.notify) notify_receiver(c.channel, c.id, c.node, c.bytes, c.dst, c.ok, c.at);
            break;
        case ControlKind::Notification: type = PacketType::Completion; word = kStatusOk; break;
        }
        const auto index32 = static_cast<std::uint32_t>(c.index);
        std::memset(ctl_payload_, 0, sizeof ctl_payload_);
        std::memcpy(ctl_payload_, &c.id, 8);
        std::memcpy(ctl_payload_ + 8, &word, 4);
        std::memcpy(ctl_payload_ + 12, &index32, 4);
        std::memcpy(ctl_payload_ + 16, &c.bytes, 8);
        if (tracer_.narrating()) {
            std::ostringstream os;
            os << "transfer " << c.id;
            switch (c.kind) {
            case ControlKind::Retransmit: os << " from node" << c.node << ": retransmit request from packet " << c.index; break;
            case ControlKind::ErrorAck: os << " from node" << c.node << ": fault NOT resolved, error ACK"; break;
            case ControlKind::Ack: os << " from node" << c.node << ": every buffered packet copied in, ACK"; break;
            case ControlKind::Notification: os << ": notification packet to node" << c.node; break;
            }
            tracer_.narrate(c.at, who_, os.str());
        }
        if (tracer_.enabled()) {
            static const char* const names[] = {"retransmit request", "error ACK", "ACK (NetVM)", "notification packet"};
            tracer_.instant(track_, names[static_cast<int>(c.kind)], c.at,
                            {{"transfer", Tracer::json_number(c.id)}, {"packet", Tracer::json_number(c.index)}});
        }
        const unsigned len = c.kind == ControlKind::Notification ? 24u : 16u;
        emit(ctl_gp_, ctl_pkt_, ctl_payload_, len, type, c.coord, c.node, c.id, static_cast<std::uint16_t>(c.index),
             c.pd, c.dst, c.at);
    }
}

// ---------------------------------------------------------------- receiving

int Pldma::rx_channel(std::uint16_t pd) const {
    for (unsigned c = 0; c < channels_.size(); ++c)
        if (channels_[c].enabled && channels_[c].pd == pd) return static_cast<int>(c);
    return -1;
}

void Pldma::notify_receiver(int channel, std::uint64_t id, unsigned src_node, std::uint64_t bytes, std::uint64_t dst,
                            bool ok, sc_time& at) {
    if (channel < 0) return;
    Channel& ch = channels_[static_cast<unsigned>(channel)];
    notifications_.inc();
    if (ch.rx_ring_entries > 0) {
        CompletionRecord r;
        r.tag = id;
        r.status = ok ? kStatusOk : kStatusError;
        r.node = src_node;
        r.bytes = bytes;
        r.addr = dst;
        const std::uint64_t addr = ch.rx_ring_base + (ch.rx_written % ch.rx_ring_entries) * sizeof(CompletionRecord);
        ++ch.rx_written;
        at = post_record(addr, r, at, {&ch.records, &ch.rx});
        return;
    }
    ch.rx.raise_at(at);
}

sc_time Pldma::post_record(std::uint64_t addr, const CompletionRecord& r, sc_time at,
                           std::vector<CompletionSignal*> raise) {
    unsigned char buf[sizeof(CompletionRecord)];
    std::memcpy(buf, &r, sizeof r);   // the host is little-endian like the A53 in its usual mode
    bool ok = true;
    SmmuFaultExtension fx;
    const sc_time done = memory(tlm::TLM_WRITE_COMMAND, addr, buf, sizeof buf, at, ok, &fx);
    if (!ok && fault_tolerant_ && fx.type != FaultType::None) {
        // The record's page faulted: the record thread writes it again once
        // the fault is resolved; its signals are raised then.
        RecordRetry rr;
        rr.addr = addr;
        rr.record = r;
        rr.raise = std::move(raise);
        rr.at = done;
        record_retry_.push_back(std::move(rr));
        record_ev_.notify(sc_core::SC_ZERO_TIME);
        return done;
    }
    if (ok) record_done_[addr] = done;
    if (!ok) {
        // The record could not be written: software will never see it.
        // Count it loudly; the interrupt still fires so software can notice.
        rx_errors_.inc();
    }
    for (CompletionSignal* sig : raise) sig->raise_at(done);
    return done;
}

void Pldma::record_thread() {
    for (;;) {
        while (record_retry_.empty()) sc_core::wait(record_ev_);
        RecordRetry rr = record_retry_.front();
        record_retry_.pop_front();
        unsigned char buf[sizeof(CompletionRecord)];
        std::memcpy(buf, &rr.record, sizeof rr.record);
        for (;;) {
            // Wait for the outcome of the page's fault (or the timeout), then write again.
            record_wait_page_ = rr.addr >> 12;
            record_waiting_ = true;
            record_wait_done_ = false;
            const sc_time deadline = rr.at + fault_timeout_;
            while (!record_wait_done_ && sc_core::sc_time_stamp() < deadline)
                sc_core::wait(deadline - sc_core::sc_time_stamp(), record_ev_);
            record_waiting_ = false;
            if (!record_wait_done_) fault_timeouts_.inc();
            const sc_time t = max_time(sc_core::sc_time_stamp(), record_wait_at_);
            record_retries_.inc();
            bool ok = true;
            SmmuFaultExtension fx;
            const sc_time done = memory(tlm::TLM_WRITE_COMMAND, rr.addr, buf, sizeof buf, t, ok, &fx);
            if (ok || fx.type == FaultType::None || (record_wait_done_ && !record_wait_resolved_)) {
                if (!ok) rx_errors_.inc();   // lost: not a fault, or the page cannot be made present
                if (ok) record_done_[rr.addr] = done;
                for (CompletionSignal* sig : rr.raise) sig->raise_at(done);
                break;
            }
            rr.at = done;
        }
    }
}

void Pldma::net_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    transactions_.inc();
    auto* p = gp.get_extension<ExanetPacket>();
    if (!p) {
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    const sc_time tail = max_time(p->tail, sc_core::sc_time_stamp() + delay);
    sc_time done = tail;
    std::uint64_t id = 0;
    std::uint32_t word = 0, index = 0;
    if (p->header.type != PacketType::RdmaWrite && gp.get_data_length() >= 16) {
        std::memcpy(&id, gp.get_data_ptr(), 8);
        std::memcpy(&word, gp.get_data_ptr() + 8, 4);
        std::memcpy(&index, gp.get_data_ptr() + 12, 4);
    }
    switch (p->header.type) {
    case PacketType::RdmaWrite:
        done = receive(gp, *p, tail);
        break;
    case PacketType::Response: {
        // ACK (or, fault-tolerant, NACK) of one of our transfers.
        auto it = outstanding_.find(id);
        if (it == outstanding_.end() || gp.get_data_length() < 16) {
            rx_errors_.inc();   // for nothing we sent
        } else if (word == kStatusFault && fault_tolerant_) {
            // Stop sending it (at its next packet) and wait for the
            // retransmit request or an error ACK.
            ++it->second.epoch;
            nacks_received_.inc();
        } else {
            const Descriptor d = it->second.desc;
            outstanding_.erase(it);
            complete(d, word == kStatusOk ? kStatusOk : kStatusError, word == kStatusOk ? d.len : 0, tail);
        }
        break;
    }
    case PacketType::Control: {
        auto it = outstanding_.find(id);
        if (!fault_tolerant_ || word != kControlRetransmit || it == outstanding_.end()) {
            rx_errors_.inc();
            break;
        }
        // Retransmit request: resend from the packet index it carries, ahead
        // of the channel's other work; work of the older epoch stops.
        Outstanding& o = it->second;
        ++o.epoch;
        Work w;
        w.id = id;
        w.next = index;
        w.epoch = o.epoch;
        w.resend = true;
        w.earliest = tail;
        channels_[o.desc.channel].work.push_front(w);
        doorbell_.notify(from_now(tail));
        break;
    }
    case PacketType::Completion: {
        // Notification packet: the transfer it names is complete.
        std::uint64_t bytes = 0;
        if (gp.get_data_length() >= 24) std::memcpy(&bytes, gp.get_data_ptr() + 16, 8);
        const int c = rx_channel(p->header.pdid);
        if (c < 0) {
            pd_violations_.inc();
            break;
        }
        notify_receiver(c, id, p->src_node, bytes, p->header.dst_va, word == kStatusOk, done);
        break;
    }
    default:
        rx_errors_.inc();
        break;
    }
    delay = from_now(done);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

sc_time Pldma::receive(tlm::tlm_generic_payload& gp, ExanetPacket& p, sc_time tail) {
    packets_received_.inc();
    const Key key{p.src_node, p.transfer};
    auto f = inbound_.find(key);
    const bool fresh = f == inbound_.end() || (!fault_tolerant_ && p.footer.first);
    if (fresh) {
        Inbound in;
        in.dst = p.header.dst_va;
        in.channel = rx_channel(p.header.pdid);
        if (in.channel < 0) {
            in.error = true;   // no channel of this protection domain here: never written
            pd_violations_.inc();
        }
        f = inbound_.insert_or_assign(key, in).first;
    }
    Inbound& in = f->second;
    in.src_coord = p.footer.src_coord;
    if (in.faulted || in.dead) {
        fault_dropped_.inc();   // waiting on a fault (the sender will resend from it) or failed on one
        return tail;
    }
    if (fault_tolerant_) {
        const unsigned behind = static_cast<unsigned>((in.next_seq - p.footer.seq) & 0x3fff);
        if (behind != 0 && behind < 0x2000 && behind <= in.next_index) {
            duplicates_.inc();   // written already
            return tail;
        }
    }
    const std::uint64_t len = gp.get_data_length();
    const std::uint64_t va = p.header.dst_va;
    bool ok = !in.error && p.footer.seq == in.next_seq;
    bool buffered = false;
    sc_time done = tail;
    if (ok) {
        // Write it, or (NetVM) put it in the kernel buffer while its page is
        // not resident. A full buffer holds the packet (and, through the
        // credits, the ones behind it) back; its page may have come in
        // meanwhile, so look again after every wait.
        for (;;) {
            const bool pending =
                netvm_copy_ && (netvm_pages_.count(va >> 12) || netvm_pages_.count((va + len - 1) >> 12));
            if (!pending) {
                SmmuFaultExtension fx;
                done = memory(tlm::TLM_WRITE_COMMAND, va, gp.get_data_ptr(), len, max_time(done, tail), ok, &fx);
                if (done - tail > sc_time(1, sc_core::SC_US)) rx_stalled_us_.add(to_us(done - tail));
                if (ok || !fault_tolerant_ || fx.type == FaultType::None || !fx.write) break;
                if (!netvm_copy_) {
                    // Drop this packet and the rest of the transfer until the
                    // fault is resolved; tell the sender where to resume.
                    in.faulted = true;
                    in.fault_page = fx.address >> 12;
                    in.fault_deadline = done + fault_timeout_;
                    nacks_sent_.inc();
                    if (tracer_.narrating()) {
                        std::ostringstream os;
                        os << "transfer " << p.transfer << " from node" << p.src_node << ": write fault at 0x"
                           << std::hex << fx.address << std::dec << ", NACK at packet " << in.next_index;
                        tracer_.narrate(done, who_, os.str());
                    }
                    if (tracer_.enabled())
                        tracer_.instant(track_, "NACK", done, {{"transfer", Tracer::json_number(p.transfer)},
                                                               {"packet", Tracer::json_number(in.next_index)}});
                    send_response(p, kStatusFault, in.next_index, done);
                    watchdog_ev_.notify(sc_core::SC_ZERO_TIME);
                    return done;
                }
                netvm_pages_[fx.address >> 12] = done + fault_timeout_;
                watchdog_ev_.notify(sc_core::SC_ZERO_TIME);
                ok = true;
            }
            if (netvm_used_ + len > netvm_capacity_) {
                netvm_full_.inc();
                sc_core::wait(netvm_space_ev_);
                done = max_time(done, sc_core::sc_time_stamp());
                continue;
            }
            Buffered bf;
            bf.key = key;
            bf.va = va;
            bf.data.assign(gp.get_data_ptr(), gp.get_data_ptr() + len);
            netvm_buf_.push_back(std::move(bf));
            netvm_used_ += len;
            netvm_peak_.set(std::max(netvm_peak_.value(), static_cast<double>(netvm_used_)));
            netvm_packets_.inc();
            ++in.buffered;
            buffered = true;
            break;
        }
        if (ok) {
            in.bytes += len;
            if (!buffered) bytes_received_.inc(len);
        }
    }
    if (!ok) {
        in.error = true;
        rx_errors_.inc();
    }
    in.next_seq = static_cast<std::uint16_t>((in.next_seq + 1) & 0x3fff);
    ++in.next_index;
    if (p.footer.last) {
        in.last_seen = true;
        in.notify = p.footer.notify;
        in.last_seq = p.footer.seq;
        if (in.buffered == 0) {
            // The data is in memory: notify, then acknowledge so the sender can complete.
            const Inbound fin = in;
            inbound_.erase(key);
            notify_receiver(fin.notify ? fin.channel : -1, p.transfer, p.src_node, fin.bytes, fin.dst, !fin.error,
                            done);
            send_response(p, fin.error ? kStatusError : kStatusOk, 0, done);
        }
    }
    // The packet's space in the receive buffer is free once its write is done.
    return done;
}

void Pldma::finish_later(const Key& key, Inbound& in, sc_time at) {
    // NetVM: the last buffered packet of a transfer whose last packet came
    // is in place; the control thread writes the notification and the ACK.
    ControlOut c;
    c.kind = ControlKind::Ack;
    c.id = key.second;
    c.node = key.first;
    c.coord = in.src_coord;
    c.ok = !in.error;
    c.notify = in.notify;
    c.channel = in.channel;
    c.bytes = in.bytes;
    c.dst = in.dst;
    c.index = in.last_seq;
    c.at = at;
    inbound_.erase(key);
    queue_control(c);
}

sc_time Pldma::netvm_flush(std::uint64_t page, bool resolved, bool by_engine, sc_time at) {
    // Buffered packets of `page`, oldest first: copied in by the kernel
    // (resolved), written by the engine itself (by_engine: the page turned
    // out present), or dropped (not resolved: their transfers fail).
    sc_time t = at;
    for (auto it = netvm_buf_.begin(); it != netvm_buf_.end();) {
        const std::uint64_t first = it->va >> 12, last = (it->va + it->data.size() - 1) >> 12;
        if (first != page && last != page) {
            ++it;
            continue;
        }
        auto in = inbound_.find(it->key);
        if (resolved && !by_engine) {
            t = netvm_copy_(it->va, it->data.data(), it->data.size(), t);
            netvm_bytes_.inc(it->data.size());
            bytes_received_.inc(it->data.size());
        } else if (by_engine) {
            bool ok = true;
            t = memory(tlm::TLM_WRITE_COMMAND, it->va, it->data.data(), it->data.size(), t, ok);
            if (ok) bytes_received_.inc(it->data.size());
            else if (in != inbound_.end()) in->second.error = true;
        } else if (in != inbound_.end()) {
            in->second.error = true;
            rx_errors_.inc();
        }
        netvm_used_ -= it->data.size();
        if (in != inbound_.end() && --in->second.buffered == 0 && in->second.last_seen)
            finish_later(in->first, in->second, t);
        it = netvm_buf_.erase(it);
    }
    netvm_space_ev_.notify(from_now(t));
    return t;
}

void Pldma::fault_resolved(std::uint64_t address, bool write, bool resolved, sc_time at) {
    if (!fault_tolerant_) return;
    const sc_time now = sc_core::sc_time_stamp();
    at = max_time(at, now);
    const std::uint64_t page = address >> 12;
    bool matched = false;
    if (!write) {
        for (Channel& ch : channels_) {
            if (!ch.parked || ch.park_done || ch.park_page != page) continue;
            ch.park_done = true;
            ch.park_resolved = resolved;
            ch.park_at = at;
            matched = true;
        }
        if (matched) doorbell_.notify(sc_core::SC_ZERO_TIME);
    } else {
        for (auto& kv : inbound_) {
            Inbound& in = kv.second;
            if (!in.faulted || in.fault_page != page) continue;
            matched = true;
            in.faulted = false;
            ControlOut c;
            c.kind = resolved ? ControlKind::Retransmit : ControlKind::ErrorAck;
            c.id = kv.first.second;
            c.index = in.next_index;
            c.node = kv.first.first;
            c.coord = in.src_coord;
            c.at = at;
            if (resolved) {
                retx_requests_.inc();
            } else {
                in.dead = true;   // kept so that packets still in flight are dropped
                rx_errors_.inc();
            }
            queue_control(c);
        }
        if (record_waiting_ && !record_wait_done_ && record_wait_page_ == page) {
            record_wait_done_ = true;
            record_wait_resolved_ = resolved;
            record_wait_at_ = at;
            record_ev_.notify(sc_core::SC_ZERO_TIME);
            matched = true;
        }
        auto np = netvm_pages_.find(page);
        if (np != netvm_pages_.end()) {
            matched = true;
            netvm_pages_.erase(np);
            netvm_flush(page, resolved, false, at);
        }
    }
    if (!matched) unmatched_.inc();
}

void Pldma::watchdog_thread() {
    // Receiver-side faults whose outcome never came (a second fault while FSR
    // still held the first is only FSR.MULTI): after dma.fault-timeout, a
    // NACKed transfer asks for retransmission anyway (the resend faults again
    // if the page is still absent), and a NetVM page is written again.
    for (;;) {
        sc_time deadline = sc_core::sc_max_time();
        for (const auto& kv : inbound_)
            if (kv.second.faulted && !kv.second.dead) deadline = std::min(deadline, kv.second.fault_deadline);
        for (const auto& kv : netvm_pages_) deadline = std::min(deadline, kv.second);
        const sc_time now = sc_core::sc_time_stamp();
        if (deadline == sc_core::sc_max_time()) {
            sc_core::wait(watchdog_ev_);
            continue;
        }
        if (deadline > now) {
            sc_core::wait(deadline - now, watchdog_ev_);
            continue;
        }
        for (auto& kv : inbound_) {
            Inbound& in = kv.second;
            if (!in.faulted || in.dead || in.fault_deadline > now) continue;
            in.faulted = false;
            fault_timeouts_.inc();
            retx_requests_.inc();
            ControlOut c;
            c.kind = ControlKind::Retransmit;
            c.id = kv.first.second;
            c.index = in.next_index;
            c.node = kv.first.first;
            c.coord = in.src_coord;
            c.at = now;
            queue_control(c);
        }
        std::vector<std::uint64_t> expired;
        for (const auto& kv : netvm_pages_)
            if (kv.second <= now) expired.push_back(kv.first);
        for (std::uint64_t page : expired) {
            fault_timeouts_.inc();
            // Probe the page with a one-byte read through the SMMU: present
            // now (another fault's touch-ahead) -> the engine writes the
            // buffered packets itself; still absent -> the probe raised a
            // fresh fault, whose outcome will flush them.
            unsigned char probe = 0;
            bool ok = true;
            SmmuFaultExtension fx;
            const sc_time t = memory(tlm::TLM_WRITE_COMMAND, page << 12, &probe, 0, now, ok, &fx);
            (void)t;
            netvm_pages_[page] = sc_core::sc_time_stamp() + fault_timeout_;
            if (ok) {
                netvm_pages_.erase(page);
                netvm_flush(page, true, true, sc_core::sc_time_stamp());
            }
        }
    }
}

// ---------------------------------------------------------------- registers

void Pldma::mmio_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    using namespace pldma_reg;
    transactions_.inc();
    const std::uint64_t addr = gp.get_address();
    const unsigned len = gp.get_data_length();
    unsigned char* data = gp.get_data_ptr();
    delay += mmio_latency_;
    if ((len != 4 && len != 8) || gp.get_byte_enable_ptr() || addr % len != 0) {
        gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return;
    }
    std::uint64_t v = 0;
    if (gp.is_write()) std::memcpy(&v, data, len);
    const bool w = gp.is_write();
    const sc_time at = sc_core::sc_time_stamp() + delay;

    if (addr >= kKernelBase) {
        // The kernel's page: one control word per channel.
        const std::uint64_t c = (addr - kKernelBase) / 8;
        if (c >= channels_.size() || (addr - kKernelBase) % 8 != kChannelCtrl) {
            gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
            return;
        }
        Channel& ch = channels_[c];
        if (w) {
            ch.pd = static_cast<std::uint16_t>(v & 0xffff);
            ch.enabled = (v & kCtrlEnable) != 0;
        } else {
            v = ch.pd | (ch.enabled ? kCtrlEnable : 0u);
        }
        if (!w) std::memcpy(data, &v, len);
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
    }
    const std::uint64_t c = addr / kChannelStride, off = addr % kChannelStride;
    if (c >= channels_.size()) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    Channel& ch = channels_[c];
    auto reg64 = [&](std::uint64_t& r) {
        if (w) r = v; else v = r;
    };
    auto reg32 = [&](std::uint32_t& r) {
        if (w) r = static_cast<std::uint32_t>(v); else v = r;
    };
    auto read_only = [&](std::uint64_t value) {
        if (w) return false;
        v = value;
        return true;
    };
    bool ok = true;
    switch (off) {
    case kDescSrc: reg64(ch.staged.src); break;
    case kDescDst: reg64(ch.staged.dst); break;
    case kDescLen: reg64(ch.staged.len); break;
    case kDescDstNode: reg32(ch.staged.dst_node); break;
    case kDescFlags: reg32(ch.staged.flags); break;
    case kDescCompl: reg64(ch.staged.compl_addr); break;
    case kDescTag: reg64(ch.staged.tag); break;
    case kDoorbell:
        if (!w) { v = 0; break; }
        if (!ch.enabled || ch.queued >= queue_depth_ || ch.staged.dst_node >= coord_of_.size()) {
            ch.last_refused = true;
            refused_.inc();
        } else {
            ch.last_refused = false;
            Work wk;
            wk.desc = ch.staged;
            wk.desc.id = (static_cast<std::uint64_t>(node_) << 40) | next_id_++;
            wk.desc.channel = static_cast<unsigned>(c);
            wk.desc.pd = ch.pd;
            wk.desc.posted = at;
            wk.id = wk.desc.id;
            wk.earliest = at;
            ch.work.push_back(wk);
            ++ch.queued;
            posted_.inc();
            doorbell_.notify(delay);
        }
        break;
    case kStatus: ok = read_only((ch.queued & 0xffff) | (ch.last_refused ? 0x80000000u : 0u)); break;
    case kRxRingBase: reg64(ch.rx_ring_base); break;
    case kRxRingEntries: reg32(ch.rx_ring_entries); break;
    case kRxProduced: ok = read_only(ch.records.count_at(at)); break;
    case kTxCompleted: ok = read_only(ch.tx.count_at(at)); break;
    case kEventCount: ok = read_only(ch.rx.count_at(at)); break;
    default:
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    if (!ok) {
        gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE);
        return;
    }
    if (!w) std::memcpy(data, &v, len);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace vrdmasim
