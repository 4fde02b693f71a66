#include "models/dma/pldma.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

namespace vrdmasim {

using sc_core::sc_time;

// ---------------------------------------------------------------- CompletionSignal

void CompletionSignal::raise_at(sc_time at) {
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

void Pldma::declare_params(ParamRegistry& reg) {
    reg.section("dma", "PLDMA RDMA engine (ExaNeSt), one per node")
        .size("block-size", "4KiB",
              "bytes read from the source per memory request; each block is cut into packets "
              "(*estimate*, a design parameter of the engine)")
        .range("16B", "1MiB")
        .size("packet-size", "256B",
              "largest payload of one ExaNet packet (*estimate*; the header's size field allows "
              "up to 16 KiB - 1)")
        .range("16B", "16368B")
        .integer("block-buffers", "2",
                 "blocks the engine can hold: the read of block k+n waits until block k is sent")
        .range("1", "64")
        .integer("queue-depth", "64", "descriptors the engine queues; a doorbell beyond it is refused")
        .range("1", "65536")
        .time("setup-time", "50ns",
              "engine time to start a transfer after taking its descriptor (*estimate*)")
        .range("0ps", "100us")
        .time("mmio-latency", "20ns",
              "register access latency inside the engine (*estimate*)")
        .range("0ps", "10us")
        .integer("smmu-tbu", "3",
                 "TBU the engine's AXI port feeds: HP0 -> TBU3, HP1/HP2 -> TBU4, HP3 -> TBU5, HPC0/1 -> TBU0 "
                 "(Xilinx UG1085); also bits [14:10] of its stream ID")
        .range("0", "31")
        .integer("axi-id", "0", "AXI ID of the engine's memory transactions: bits [5:0] of its stream ID "
                                "(Xilinx AR#69447; the master field [9:6] is 0 for a PL port)")
        .range("0", "63")
        .boolean("fault-tolerant", "false",
                 "terminate-mode SMMU faults are recovered instead of failing the transfer: a faulting "
                 "source read parks the transfer until the fault library's outcome (fault_resolved) and "
                 "re-reads; a faulting payload write is NACKed and the sender retransmits from that "
                 "sequence number once the receiver's fault is resolved");
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
      block_size_(ctx.config.size("dma.block-size")),
      packet_size_(static_cast<std::uint32_t>(ctx.config.size("dma.packet-size"))),
      block_buffers_(static_cast<unsigned>(ctx.config.integer("dma.block-buffers"))),
      queue_depth_(static_cast<unsigned>(ctx.config.integer("dma.queue-depth"))),
      setup_time_(ctx.config.time("dma.setup-time")),
      mmio_latency_(ctx.config.time("dma.mmio-latency")),
      fault_tolerant_(ctx.config.boolean("dma.fault-tolerant")),
      block_(block_size_),
      stream_id_(static_cast<std::uint32_t>((ctx.config.integer("dma.smmu-tbu") << 10) | ctx.config.integer("dma.axi-id"))),
      tx_pkt_(*new ExanetPacket),
      ack_pkt_(*new ExanetPacket),
      ctl_pkt_(*new ExanetPacket),
      tracer_(ctx.tracer),
      track_(ctx.tracer.track(group, "dma")),
      who_(group + ".dma"),
      posted_(ctx.stats.counter(std::string(this->name()) + ".transfers_posted", "", "descriptors queued")),
      refused_(ctx.stats.counter(std::string(this->name()) + ".doorbells_refused", "",
                                 "doorbells refused because the queue was full")),
      completed_(ctx.stats.counter(std::string(this->name()) + ".transfers_completed", "",
                                   "transfers completed successfully (acknowledged)")),
      failed_(ctx.stats.counter(std::string(this->name()) + ".transfers_failed", "",
                                "transfers completed with an error status")),
      packets_sent_(ctx.stats.counter(std::string(this->name()) + ".packets_sent", "", "data packets sent")),
      packets_received_(ctx.stats.counter(std::string(this->name()) + ".packets_received", "",
                                          "data packets received")),
      bytes_sent_(ctx.stats.counter(std::string(this->name()) + ".bytes_sent", "B", "payload bytes sent")),
      bytes_received_(ctx.stats.counter(std::string(this->name()) + ".bytes_received", "B",
                                        "payload bytes written into this node's memory")),
      rx_errors_(ctx.stats.counter(std::string(this->name()) + ".rx_errors", "",
                                   "received packets that could not be written or were out of sequence")),
      transactions_(ctx.stats.counter(std::string(this->name()) + ".transactions", "",
                                      "register accesses and packets served")),
      smmu_faults_(ctx.stats.counter(std::string(this->name()) + ".smmu_faults", "",
                                     "memory accesses the SMMU answered with a translation fault")),
      latency_us_(ctx.stats.histogram(std::string(this->name()) + ".transfer_latency", "us",
                                      "doorbell to completion record written")),
      parks_(ctx.stats.counter(std::string(this->name()) + ".parks", "",
                               "source reads parked on an SMMU fault (fault-tolerant)")),
      rereads_(ctx.stats.counter(std::string(this->name()) + ".rereads", "",
                                 "source blocks read again after their fault was resolved (fault-tolerant)")),
      park_us_(ctx.stats.histogram(std::string(this->name()) + ".park_time", "us",
                                   "source read fault to resumption (fault-tolerant)")),
      nacks_sent_(ctx.stats.counter(std::string(this->name()) + ".nacks_sent", "",
                                    "NACKs sent for payload writes that faulted (receiver, fault-tolerant)")),
      nacks_received_(ctx.stats.counter(std::string(this->name()) + ".nacks_received", "",
                                        "NACKs received (sender, fault-tolerant)")),
      retx_requests_(ctx.stats.counter(std::string(this->name()) + ".retransmit_requests", "",
                                       "retransmit requests sent after a resolved fault (receiver)")),
      retransmissions_(ctx.stats.counter(std::string(this->name()) + ".retransmissions", "",
                                         "retransmit requests served (sender)")),
      retx_bytes_(ctx.stats.counter(std::string(this->name()) + ".retransmitted_bytes", "B",
                                    "payload bytes sent again on a retransmit request (sender)")),
      duplicates_(ctx.stats.counter(std::string(this->name()) + ".duplicates_dropped", "",
                                    "received packets already written (sequence behind), dropped (receiver)")),
      fault_dropped_(ctx.stats.counter(std::string(this->name()) + ".fault_dropped", "",
                                       "received packets dropped while their transfer waits on a fault "
                                       "or after it failed on one (receiver)")),
      unmatched_(ctx.stats.counter(std::string(this->name()) + ".fault_outcomes_unmatched", "",
                                   "fault outcomes for which nothing was waiting")) {
    if (coord_of_.size() <= node_) throw std::logic_error("pldma: node has no coordinate");
    mmio.register_b_transport(this, &Pldma::mmio_transport);
    net_in.register_b_transport(this, &Pldma::net_transport);
    tx_gp_.set_extension(&tx_pkt_);
    ack_gp_.set_extension(&ack_pkt_);
    ctl_gp_.set_extension(&ctl_pkt_);
    SC_HAS_PROCESS(Pldma);
    SC_THREAD(engine);
    if (fault_tolerant_) SC_THREAD(control_thread);
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
    const sc_time now = sc_core::sc_time_stamp();
    sc_time d = at > now ? at - now : sc_core::SC_ZERO_TIME;
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

void Pldma::engine() {
    for (;;) {
        while (queue_.empty() && resend_.empty()) {
            qk_.sync();
            sc_core::wait(doorbell_);
        }
        if (!resend_.empty()) {
            // A retransmit request (fault-tolerant): served before new descriptors.
            const Resend r = resend_.front();
            resend_.pop_front();
            auto it = outstanding_.find(r.id);
            if (it != outstanding_.end()) {
                Descriptor d = it->second.desc;
                retransmissions_.inc();
                send_transfer(d, r.from, true, r.at);
            }
        } else {
            Descriptor d = queue_.front();
            queue_.pop_front();
            send_transfer(d, 0, false, d.posted);
        }
        if (qk_.need_sync()) qk_.sync();
    }
}

void Pldma::send_transfer(Descriptor& d, std::uint64_t from, bool resend, sc_time earliest) {
    const sc_time now0 = sc_core::sc_time_stamp();
    sc_time t = max_time(now0 + qk_.get_local_time(), earliest) + setup_time_;
    if (resend && tracer_.narrating()) {
        std::ostringstream os;
        os << "transfer " << d.id << " resends from packet " << from;
        tracer_.narrate(t, who_, os.str());
    } else if (tracer_.narrating()) {
        std::ostringstream os;
        os << "transfer " << d.id << " starts: " << d.len << " B from 0x" << std::hex << d.src
           << " to node" << std::dec << d.dst_node << " 0x" << std::hex << d.dst;
        tracer_.narrate(t, who_, os.str());
    }

    std::uint64_t epoch = 0;
    if (!resend) {
        Outstanding& o = outstanding_[d.id];
        o.desc = d;
    } else {
        auto it = outstanding_.find(d.id);
        if (it == outstanding_.end()) return;
        epoch = it->second.epoch;
    }

    const std::uint64_t nblocks = d.len == 0 ? 0 : (d.len + block_size_ - 1) / block_size_;
    std::vector<sc_time> buffer_free(block_buffers_, t);
    sc_time read_cursor = t, send_cursor = t;
    std::uint64_t seq = 0;
    bool read_ok = true;

    ExanetPacket& p = tx_pkt_;
    p.header = ExanetHeader{};
    p.header.type = PacketType::RdmaWrite;
    p.header.dst_coord = coord_of_.at(d.dst_node);
    p.footer = ExanetFooter{};
    p.footer.src_coord = coord_of_[node_];
    p.transfer = d.id;
    p.src_node = node_;
    p.dst_node = d.dst_node;

    bool stopped = false;   // fault-tolerant: NACKed or completed under us
    for (std::uint64_t b = 0; b < nblocks && read_ok && !stopped; ++b) {
        const std::uint64_t off = b * block_size_;
        const std::uint64_t blen = std::min<std::uint64_t>(block_size_, d.len - off);
        const std::uint64_t npk = (blen + packet_size_ - 1) / packet_size_;
        if (seq + npk <= from) {   // a resend: this block was delivered already
            seq += npk;
            continue;
        }
        sc_time issue = max_time(read_cursor, buffer_free[b % block_buffers_]);
        sc_time data_ready;
        for (;;) {
            SmmuFaultExtension fx;
            data_ready = memory(tlm::TLM_READ_COMMAND, d.src + off, block_.data(), blen, issue, read_ok, &fx);
            if (read_ok || !fault_tolerant_ || fx.type == FaultType::None || fx.write) break;
            // Fault-tolerant source fault: park until the fault library's
            // outcome (the whole engine waits: one engine thread).
            parks_.inc();
            const sc_time fault_at = data_ready;
            park_ = Park{};
            park_.active = true;
            park_.page = fx.address >> 12;
            if (tracer_.narrating()) {
                std::ostringstream os;
                os << "transfer " << d.id << " parked: source fault at 0x" << std::hex << fx.address;
                tracer_.narrate(fault_at, who_, os.str());
            }
            qk_.set(from_now(fault_at));
            qk_.sync();
            while (!park_.done) sc_core::wait(park_ev_);
            park_.active = false;
            const sc_time resume = max_time(sc_core::sc_time_stamp(), park_.at);
            park_us_.add(to_us(resume - fault_at));
            read_cursor = resume;
            send_cursor = max_time(send_cursor, resume);
            if (!park_.resolved) break;   // read_ok stays false: error completion
            rereads_.inc();
            issue = resume;
        }
        if (!read_ok) break;
        read_cursor = issue;

        for (std::uint64_t poff = 0; poff < blen; poff += packet_size_) {
            const std::uint32_t plen = static_cast<std::uint32_t>(std::min<std::uint64_t>(packet_size_, blen - poff));
            const std::uint64_t at = off + poff;
            if (seq < from) {   // a resend: delivered already
                ++seq;
                continue;
            }
            if (fault_tolerant_) {
                auto it = outstanding_.find(d.id);
                if (it == outstanding_.end() || it->second.epoch != epoch) {
                    stopped = true;   // NACKed (a retransmit request will restart it) or failed
                    break;
                }
            }
            p.header.size = static_cast<std::uint16_t>(plen);
            p.header.dst_va = d.dst + at;
            p.footer.seq = static_cast<std::uint16_t>(seq & 0x3fff);
            p.footer.first = at == 0;
            p.footer.last = at + plen == d.len;
            p.footer.notify = p.footer.last && (d.flags & kFlagNotify);
            p.hops = 0;
            const sc_time head = max_time(send_cursor, data_ready);
            p.tail = head;
            tx_gp_.set_command(tlm::TLM_WRITE_COMMAND);
            tx_gp_.set_address(p.header.dst_va);
            tx_gp_.set_data_ptr(block_.data() + poff);
            tx_gp_.set_data_length(plen);
            tx_gp_.set_streaming_width(plen);
            tx_gp_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
            const sc_time now = sc_core::sc_time_stamp();
            sc_time dl = from_now(head);
            net_out->b_transport(tx_gp_, dl);
            send_cursor = now + dl;
            if (!tx_gp_.is_response_ok()) {
                // The network refused the packet (no route, too large): the
                // transfer cannot complete.
                read_ok = false;
                break;
            }
            packets_sent_.inc();
            bytes_sent_.inc(plen);
            if (resend) retx_bytes_.inc(plen);
            ++seq;
        }
        buffer_free[b % block_buffers_] = send_cursor;
        qk_.set(from_now(send_cursor));
        if (qk_.need_sync()) qk_.sync();
    }

    if (!read_ok || d.len == 0) {
        // Nothing more will be sent: complete now, with an error if a read or
        // a packet failed (zero-length transfers complete at once).
        auto it = outstanding_.find(d.id);
        if (it != outstanding_.end()) {
            const Descriptor desc = it->second.desc;
            outstanding_.erase(it);
            complete(desc, read_ok ? kStatusOk : kStatusError, 0, max_time(send_cursor, read_cursor));
        }
    }
    qk_.set(from_now(send_cursor));
}

void Pldma::complete(const Descriptor& d, std::uint32_t status, std::uint64_t bytes, sc_time at) {
    CompletionRecord r;
    r.tag = d.tag;
    r.status = status;
    r.node = d.dst_node;
    r.bytes = bytes;
    r.addr = d.src;
    bool ok = true;
    sc_time done = at;
    if (d.compl_addr) write_record(d.compl_addr, r, at, ok, done);
    if (!ok) {
        // The record could not be written: software will never see this
        // completion. Count it loudly; the interrupt still fires so software
        // can notice the missing record.
        rx_errors_.inc();
    }
    if (status == kStatusOk) completed_.inc(); else failed_.inc();
    latency_us_.add(to_us(done - d.posted));
    tx_irq.raise_at(done);
    if (tracer_.enabled()) {
        tracer_.async_span(track_, status == kStatusOk ? "transfer" : "transfer (error)", d.id, d.posted, done,
                     {{"id", Tracer::json_number(d.id)},
                      {"bytes", Tracer::json_number(d.len)},
                      {"dst_node", Tracer::json_number(static_cast<std::uint64_t>(d.dst_node))}});
    }
    if (tracer_.narrating()) {
        std::ostringstream os;
        os << "transfer " << d.id << (status == kStatusOk ? " complete: " : " FAILED: ") << bytes
           << " B delivered, latency " << to_us(done - d.posted) << " us";
        tracer_.narrate(done, who_, os.str());
    }
}

void Pldma::send_ack(const ExanetPacket& data, bool ok, sc_time at) {
    send_response(data, ok ? kStatusOk : kStatusError, 0, at);
}

void Pldma::send_response(const ExanetPacket& data, std::uint32_t status, std::uint64_t index, sc_time at) {
    ExanetPacket& a = ack_pkt_;
    a.header = ExanetHeader{};
    a.header.type = PacketType::Response;
    a.header.dst_coord = data.footer.src_coord;
    a.header.size = sizeof ack_payload_;
    a.footer = ExanetFooter{};
    a.footer.first = a.footer.last = true;
    a.footer.seq = data.footer.seq;
    a.footer.src_coord = coord_of_[node_];
    a.transfer = data.transfer;
    a.src_node = node_;
    a.dst_node = data.src_node;
    a.hops = 0;
    a.tail = at;
    const std::uint64_t id = data.transfer;
    const auto index32 = static_cast<std::uint32_t>(index);
    std::memcpy(ack_payload_, &id, 8);
    std::memcpy(ack_payload_ + 8, &status, 4);
    std::memcpy(ack_payload_ + 12, &index32, 4);
    ack_gp_.set_command(tlm::TLM_WRITE_COMMAND);
    ack_gp_.set_address(0);
    ack_gp_.set_data_ptr(ack_payload_);
    ack_gp_.set_data_length(sizeof ack_payload_);
    ack_gp_.set_streaming_width(sizeof ack_payload_);
    ack_gp_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    sc_time d = from_now(at);
    net_out->b_transport(ack_gp_, d);
    if (!ack_gp_.is_response_ok()) rx_errors_.inc();
}

void Pldma::net_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    transactions_.inc();
    auto* p = gp.get_extension<ExanetPacket>();
    const sc_time now = sc_core::sc_time_stamp();
    if (!p) {
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    const sc_time tail = max_time(p->tail, now + delay);

    if (p->header.type == PacketType::Response) {
        // Acknowledgement of one of our transfers.
        std::uint64_t id = 0;
        std::uint32_t status = kStatusError;
        if (gp.get_data_length() >= 12) {
            std::memcpy(&id, gp.get_data_ptr(), 8);
            std::memcpy(&status, gp.get_data_ptr() + 8, 4);
        }
        auto it = outstanding_.find(id);
        if (fault_tolerant_ && status == kStatusFault) {
            // NACK: the receiver's write faulted. Stop sending this transfer
            // (at its next packet) and wait for the retransmit request or an
            // error ACK.
            if (it == outstanding_.end()) {
                rx_errors_.inc();
            } else {
                ++it->second.epoch;
                it->second.stopped = true;
                nacks_received_.inc();
            }
        } else if (it == outstanding_.end()) {
            rx_errors_.inc();   // an ACK for nothing we sent
        } else {
            const Descriptor d = it->second.desc;
            outstanding_.erase(it);
            complete(d, status, status == kStatusOk ? d.len : 0, tail);
        }
        delay = from_now(tail);
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
    }

    if (fault_tolerant_ && p->header.type == PacketType::Control) {
        // Retransmit request: resend from the packet index it carries.
        std::uint64_t id = 0;
        std::uint32_t op = 0, index = 0;
        if (gp.get_data_length() >= 16) {
            std::memcpy(&id, gp.get_data_ptr(), 8);
            std::memcpy(&op, gp.get_data_ptr() + 8, 4);
            std::memcpy(&index, gp.get_data_ptr() + 12, 4);
        }
        auto it = outstanding_.find(id);
        if (op != kControlRetransmit || it == outstanding_.end()) {
            rx_errors_.inc();
        } else {
            it->second.stopped = false;
            resend_.push_back(Resend{id, index, tail});
            doorbell_.notify(from_now(tail));
        }
        delay = from_now(tail);
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
    }

    if (p->header.type != PacketType::RdmaWrite) {
        rx_errors_.inc();
        delay = from_now(tail);
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        return;
    }

    packets_received_.inc();
    const std::pair<unsigned, std::uint64_t> key{p->src_node, p->transfer};
    if (fault_tolerant_) {
        // A restarted transfer keeps its state (its first packet may come again).
        auto f = inbound_.find(key);
        if (f == inbound_.end()) {
            Inbound fresh;
            fresh.dst = p->header.dst_va;
            f = inbound_.emplace(key, fresh).first;
        }
        Inbound& in = f->second;
        in.src_coord = p->footer.src_coord;
        if (in.faulted || in.dead) {
            // Waiting on a fault (the sender will resend from it) or failed on one.
            fault_dropped_.inc();
            delay = from_now(tail);
            gp.set_response_status(tlm::TLM_OK_RESPONSE);
            return;
        }
        const unsigned behind = static_cast<unsigned>((in.next_seq - p->footer.seq) & 0x3fff);
        if (behind != 0 && behind < 0x2000 && behind <= in.next_index) {
            duplicates_.inc();   // written already
            delay = from_now(tail);
            gp.set_response_status(tlm::TLM_OK_RESPONSE);
            return;
        }
    }
    Inbound& in = inbound_[key];
    if (p->footer.first && !fault_tolerant_) in = Inbound{0, p->header.dst_va, 0, false};
    bool ok = !in.error && p->footer.seq == in.next_seq;
    sc_time done = tail;
    if (ok) {
        SmmuFaultExtension fx;
        done = memory(tlm::TLM_WRITE_COMMAND, p->header.dst_va, gp.get_data_ptr(), gp.get_data_length(), tail, ok,
                      &fx);
        if (!ok && fault_tolerant_ && fx.type != FaultType::None && fx.write) {
            // Drop this packet and the rest of the transfer until the fault
            // is resolved; tell the sender where to resume.
            in.faulted = true;
            in.fault_page = fx.address >> 12;
            nacks_sent_.inc();
            if (tracer_.narrating()) {
                std::ostringstream os;
                os << "transfer " << p->transfer << " from node" << p->src_node << ": write fault at 0x"
                   << std::hex << fx.address << std::dec << ", NACK at packet " << in.next_index;
                tracer_.narrate(done, who_, os.str());
            }
            send_response(*p, kStatusFault, in.next_index, done);
            delay = from_now(done);
            gp.set_response_status(tlm::TLM_OK_RESPONSE);
            return;
        }
        if (ok) {
            in.bytes += gp.get_data_length();
            bytes_received_.inc(gp.get_data_length());
        }
    }
    if (!ok) {
        in.error = true;
        rx_errors_.inc();
    }
    in.next_seq = static_cast<std::uint16_t>((in.next_seq + 1) & 0x3fff);
    ++in.next_index;

    if (p->footer.last) {
        const Inbound fin = in;
        inbound_.erase(key);
        if (p->footer.notify && rx_ring_entries_ > 0) {
            CompletionRecord r;
            r.tag = p->transfer;
            r.status = fin.error ? kStatusError : kStatusOk;
            r.node = p->src_node;
            r.bytes = fin.bytes;
            r.addr = fin.dst;
            bool rok = true;
            write_record(rx_ring_base_ + (rx_written_ % rx_ring_entries_) * sizeof(CompletionRecord), r, done,
                         rok, done);
            ++rx_written_;
            rx_irq.raise_at(done);
        }
        // The data is in memory: acknowledge, so the sender can complete.
        send_ack(*p, !fin.error, done);
    }
    // The packet's space in the receive buffer is free once its write is done.
    delay = from_now(done);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void Pldma::fault_resolved(std::uint64_t address, bool write, bool resolved, sc_time at) {
    if (!fault_tolerant_) return;
    const sc_time now = sc_core::sc_time_stamp();
    const std::uint64_t page = address >> 12;
    bool matched = false;
    if (!write) {
        if (park_.active && !park_.done && park_.page == page) {
            park_.done = true;
            park_.resolved = resolved;
            park_.at = max_time(at, now);
            park_ev_.notify(sc_core::SC_ZERO_TIME);
            matched = true;
        }
    } else {
        for (auto& kv : inbound_) {
            Inbound& in = kv.second;
            if (!in.faulted || in.fault_page != page) continue;
            matched = true;
            in.faulted = false;
            ControlOut c;
            c.retransmit = resolved;
            c.id = kv.first.second;
            c.index = in.next_index;
            c.node = kv.first.first;
            c.coord = in.src_coord;
            c.at = max_time(at, now);
            if (resolved) {
                retx_requests_.inc();
            } else {
                in.dead = true;   // kept so that packets still in flight are dropped
                rx_errors_.inc();
            }
            control_.push_back(c);
            control_ev_.notify(sc_core::SC_ZERO_TIME);
        }
    }
    if (!matched) unmatched_.inc();
}

void Pldma::control_thread() {
    for (;;) {
        while (control_.empty()) sc_core::wait(control_ev_);
        const ControlOut c = control_.front();
        control_.pop_front();
        ExanetPacket& k = ctl_pkt_;
        k.header = ExanetHeader{};
        k.header.type = c.retransmit ? PacketType::Control : PacketType::Response;
        k.header.dst_coord = c.coord;
        k.header.size = sizeof ctl_payload_;
        k.footer = ExanetFooter{};
        k.footer.first = k.footer.last = true;
        k.footer.seq = static_cast<std::uint16_t>(c.index & 0x3fff);
        k.footer.src_coord = coord_of_[node_];
        k.transfer = c.id;
        k.src_node = node_;
        k.dst_node = c.node;
        k.hops = 0;
        k.tail = c.at;
        const std::uint32_t word = c.retransmit ? kControlRetransmit : kStatusError;
        const auto index32 = static_cast<std::uint32_t>(c.index);
        std::memcpy(ctl_payload_, &c.id, 8);
        std::memcpy(ctl_payload_ + 8, &word, 4);
        std::memcpy(ctl_payload_ + 12, &index32, 4);
        ctl_gp_.set_command(tlm::TLM_WRITE_COMMAND);
        ctl_gp_.set_address(0);
        ctl_gp_.set_data_ptr(ctl_payload_);
        ctl_gp_.set_data_length(sizeof ctl_payload_);
        ctl_gp_.set_streaming_width(sizeof ctl_payload_);
        ctl_gp_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        if (tracer_.narrating()) {
            std::ostringstream os;
            os << "transfer " << c.id << " from node" << c.node
               << (c.retransmit ? ": fault resolved, retransmit request from packet "
                                : ": fault NOT resolved, error ACK at packet ")
               << c.index;
            tracer_.narrate(c.at, who_, os.str());
        }
        sc_time d = from_now(c.at);
        net_out->b_transport(ctl_gp_, d);
        if (!ctl_gp_.is_response_ok()) rx_errors_.inc();
    }
}

void Pldma::mmio_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    using namespace pldma_reg;
    transactions_.inc();
    const std::uint64_t off = gp.get_address();
    const unsigned len = gp.get_data_length();
    unsigned char* data = gp.get_data_ptr();
    delay += mmio_latency_;
    if ((len != 4 && len != 8) || gp.get_byte_enable_ptr() || off % len != 0) {
        gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return;
    }
    std::uint64_t v = 0;
    if (gp.is_write()) std::memcpy(&v, data, len);
    const bool w = gp.is_write();
    const sc_time at = sc_core::sc_time_stamp() + delay;

    auto reg64 = [&](std::uint64_t& r) {
        if (w) r = v; else v = r;
    };
    auto reg32 = [&](std::uint32_t& r) {
        if (w) r = static_cast<std::uint32_t>(v); else v = r;
    };
    switch (off) {
    case kDescSrc: reg64(staged_.src); break;
    case kDescDst: reg64(staged_.dst); break;
    case kDescLen: reg64(staged_.len); break;
    case kDescDstNode: reg32(staged_.dst_node); break;
    case kDescFlags: reg32(staged_.flags); break;
    case kDescCompl: reg64(staged_.compl_addr); break;
    case kDescTag: reg64(staged_.tag); break;
    case kDoorbell:
        if (!w) { v = 0; break; }
        if (queue_.size() >= queue_depth_ || staged_.dst_node >= coord_of_.size()) {
            last_doorbell_refused_ = true;
            refused_.inc();
        } else {
            last_doorbell_refused_ = false;
            Descriptor d = staged_;
            d.id = (static_cast<std::uint64_t>(node_) << 40) | next_id_++;
            d.posted = at;
            queue_.push_back(d);
            posted_.inc();
            doorbell_.notify(delay);
        }
        break;
    case kStatus:
        if (w) { gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE); return; }
        v = (queue_.size() & 0xffff) | (last_doorbell_refused_ ? 0x80000000u : 0u);
        break;
    case kRxRingBase: reg64(rx_ring_base_); break;
    case kRxRingEntries: reg32(rx_ring_entries_); break;
    case kRxProduced:
        if (w) { gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE); return; }
        v = rx_irq.count_at(at);
        break;
    case kTxCompleted:
        if (w) { gp.set_response_status(tlm::TLM_COMMAND_ERROR_RESPONSE); return; }
        v = tx_irq.count_at(at);
        break;
    default:
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return;
    }
    if (!w) std::memcpy(data, &v, len);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

}  // namespace vrdmasim
