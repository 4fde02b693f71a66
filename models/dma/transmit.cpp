// The transmit scheduler (see transmit.hpp; README.md "Scheduling",
// "Protocol" and "Timing").
#include "models/dma/transmit.hpp"

#include <algorithm>
#include <cstring>
#include <sstream>

#include "models/dma/atomics.hpp"
#include "models/dma/fault_recovery.hpp"
#include "models/dma/read.hpp"
#include "src/core/sim_now.hpp"

namespace vrdmasim {

using sc_core::sc_time;

Transmit::Transmit(ChannelRegisters& channels, MemoryPort& memory, PacketOut& net_out, ControlPackets& control,
                   RecordWriter& records, FaultRecovery& recovery, ReadProtocol& reads, SendWindows& windows,
                   const PldmaConfig& params, PldmaStats& stats, PldmaTrace& trace, unsigned node,
                   const std::vector<std::uint32_t>& coord_of)
    : channels_(channels),
      memory_(memory),
      net_out_(net_out),
      control_(control),
      records_(records),
      recovery_(recovery),
      reads_(reads),
      windows_(windows),
      params_(params),
      stats_(stats),
      trace_(trace),
      node_(node),
      coord_of_(coord_of),
      buffer_free_(params.block_buffers),
      tx_pkt_(*new ExanetPacket) {
    tx_gp_.set_extension(&tx_pkt_);
}

Outstanding* Transmit::outstanding(std::uint64_t id) {
    auto it = outstanding_.find(id);
    return it == outstanding_.end() ? nullptr : &it->second;
}

void Transmit::run() {
    for (;;) {
        const sc_time now = sim_now() + qk_.get_local_time();
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
        const sc_time deadline = recovery_.park_deadline();
        const sc_time t = sim_now();
        if (deadline == sc_core::sc_max_time()) sc_core::wait(channels_.doorbell().get());
        else if (deadline > t) sc_core::wait(deadline - t, channels_.doorbell().get());
    }
}

int Transmit::pick(sc_time now) {
    const unsigned n = static_cast<unsigned>(channels_.size());
    if (params_.park_engine) {
        // dma.park = engine: while any channel waits on a source fault, the
        // whole engine waits; the parked channel resumes (or fails) first.
        for (unsigned c = 0; c < n; ++c) {
            Channel* made = channels_.made(c);   // a channel never accessed has no work
            if (!made) continue;
            Channel& ch = *made;
            if (!ch.parked || ch.work.empty()) continue;
            sc_time resume;
            const FaultRecovery::Unpark u = recovery_.unpark(ch, c, now, resume);
            if (u == FaultRecovery::Unpark::Wait) return -1;
            if (u == FaultRecovery::Unpark::Fail) {
                fail(ch, ch.work.front(), resume, ch.park_outcome ? ch.park_outcome : ch.park_story);
                if (ch.work.empty()) continue;
            }
            if (!window_open(ch, now)) continue;
            rr_next_ = (c + 1) % n;
            return static_cast<int>(c);
        }
    }
    for (unsigned i = 0; i < n; ++i) {
        const unsigned c = (rr_next_ + i) % n;
        Channel* made = channels_.made(c);   // a channel never accessed has no work
        if (!made) continue;
        Channel& ch = *made;
        if (ch.work.empty()) continue;
        if (ch.parked) {
            sc_time resume;
            const FaultRecovery::Unpark u = recovery_.unpark(ch, c, now, resume);
            if (u == FaultRecovery::Unpark::Wait) continue;
            if (u == FaultRecovery::Unpark::Fail) {
                fail(ch, ch.work.front(), resume, ch.park_outcome ? ch.park_outcome : ch.park_story);
                if (ch.work.empty()) continue;
            }
        }
        if (!window_open(ch, now)) continue;
        rr_next_ = (c + 1) % n;
        return static_cast<int>(c);
    }
    return -1;
}

bool Transmit::window_open(Channel& ch, sc_time now) {
    Work& w = ch.work.front();
    if (w.started || w.desc.nseq == 0) return true;
    sc_time from;
    const sc_time at = max_time(now, w.earliest);
    const bool room = windows_.admit(w.desc.dst_node, w.desc.pd, w.desc.nseq, at, from);
    if (!room || from > at) {
        // Full (the answer that makes room will wake the engine: response),
        // or the answer handled already lies ahead in time: serve the other
        // channels meanwhile and look again then.
        if (!w.window_blocked) {
            w.window_blocked = true;
            w.blocked_since = at;
        }
        if (room) channels_.doorbell().notify(from_now(from));
        else window_waiting_ = true;   // the next answer wakes the engine
        return false;
    }
    // It waited from when it could have started (the first look that found
    // the window full, or now) to the answer that made room, which may
    // already have been handled and yet lie ahead in time.
    const sc_time since = w.window_blocked ? w.blocked_since : at;
    w.window_blocked = false;
    if (from > since) {
        stats_.window_stalls.inc();
        stats_.window_wait_us.add(to_us(from - since));
        trace_.tracer.span(
            trace_.track, "window full", since, from,
            {{"dst_node", Tracer::json_number(w.desc.dst_node)}, {"number", Tracer::json_number(w.desc.nseq - 1)}});
        if (trace_.tracer.noting())
            trace_.tracer.note(Tracer::Track{}, "window wait", from, sc_core::SC_ZERO_TIME, trace_.who,
                               "transfer " + transfer_name(w.desc.id) + " waited " +
                                   std::to_string(to_us(from - since)) + " us for its sequence window to node" +
                                   std::to_string(w.desc.dst_node),
                               w.story);
    }
    w.earliest = max_time(w.earliest, from);
    return true;
}

void Transmit::room_in_window(sc_time at) {
    if (!window_waiting_) return;   // nothing waits: the engine is not woken for nothing
    window_waiting_ = false;
    channels_.doorbell().notify(from_now(at));
}

void Transmit::skip(const Descriptor& d, sc_time at) {
    // Without a notification its number would hold every later one of
    // its pair at the receiver forever: tell the receiver to release it.
    windows_.skipping(d.id, d.dst_node, d.pd, d.nseq);
    ControlOut c;
    c.kind = ControlKind::Skip;
    c.id = d.id;
    c.bytes = d.nseq;
    c.pd = d.pd;
    c.node = d.dst_node;
    c.coord = coord_of_.at(d.dst_node);
    c.at = at;
    control_.queue(c);
}

void Transmit::drop(Channel& ch, const Work* w) {
    for (auto it = ch.work.begin(); it != ch.work.end(); ++it)
        if (&*it == w) {
            ch.work.erase(it);
            return;
        }
}

void Transmit::fail(Channel& ch, Work& w, sc_time at, const Tracer::Cause& why) {
    auto it = outstanding_.find(w.id);
    if (it != outstanding_.end()) {
        const Descriptor d = it->second.desc;
        finishing_ = why ? why : it->second.story;
        outstanding_.erase(it);
        if (d.nseq) skip(d, at);
        complete(d, kStatusError, 0, at);
    } else if (!w.started) {
        if (!w.desc.reply) --ch.queued;   // a read's reply was never a queued descriptor
        if (w.desc.nseq) skip(w.desc, at);
        finishing_ = why ? why : w.story;
        complete(w.desc, kStatusError, 0, at);
    }
    drop(ch, &w);
}

void Transmit::serve(unsigned c) {
    Channel& ch = channels_[c];
    for (unsigned k = 0; k < params_.channel_blocks && !ch.work.empty() && !ch.parked; ++k) {
        Work& w = ch.work.front();
        const sc_time now = sim_now() + qk_.get_local_time();
        if (!window_open(ch, now)) return;   // its sequence window is full: the channel's turn ends
        if (!w.started) start(ch, w, c, now);
        auto it = outstanding_.find(w.id);
        if (it == outstanding_.end() || it->second.epoch != w.epoch) {
            drop(ch, &w);   // acknowledged or NACKed meanwhile: nothing more to send
            continue;
        }
        const Descriptor d = it->second.desc;
        if (is_atomic(d.op)) {
            send_atomic(ch, c, w, d);
            continue;
        }
        if (w.next >= params_.packets_of(d.len)) {   // zero length (or nothing left)
            if (d.len == 0) {
                outstanding_.erase(it);
                complete(d, kStatusOk, 0, max_time(now, w.earliest));
            }
            drop(ch, &w);
            continue;
        }
        if (d.op == DescOp::Read) {
            send_read_request(ch, c, w, d, now);
            continue;
        }
        if (!serve_block(ch, c, w, d, now)) return;
    }
}

void Transmit::start(Channel& ch, Work& w, unsigned c, sc_time now) {
    w.started = true;
    if (!w.resend) {
        if (!w.desc.reply) --ch.queued;
        outstanding_[w.id].desc = w.desc;
    } else {
        stats_.retransmissions.inc();
    }
    w.earliest = max_time(now, w.earliest) + params_.setup_time;
    if (trace_.tracer.noting()) {
        std::ostringstream os;
        if (w.resend)
            os << "transfer " << transfer_name(w.id) << " resends from packet " << w.next
               << ", ahead of the channel's other work";
        else if (is_atomic(w.desc.op))
            os << "atomic " << transfer_name(w.id) << " starts on channel " << c << ": " << atomic_name(w.desc.op)
               << " at node" << w.desc.dst_node << " 0x" << std::hex << w.desc.dst << std::dec << ", operand "
               << w.desc.src
               << (w.desc.op == DescOp::CompareSwap ? ", compare " + std::to_string(w.desc.compare) : std::string());
        else if (w.desc.reply)
            os << "read " << transfer_name(w.id) << " reply starts on channel " << c << ": " << w.desc.len
               << " B from 0x" << std::hex << w.desc.src << " to node" << std::dec << w.desc.dst_node << " 0x"
               << std::hex << w.desc.dst;
        else if (w.desc.op == DescOp::Read)
            os << "read " << transfer_name(w.id) << " starts on channel " << c << ": a request for " << w.desc.len
               << " B at node" << w.desc.dst_node << " 0x" << std::hex << w.desc.src << " into 0x" << w.desc.dst;
        else
            os << "transfer " << transfer_name(w.id) << " starts on channel " << c << ": " << w.desc.len << " B from 0x"
               << std::hex << w.desc.src << " to node" << std::dec << w.desc.dst_node << " 0x" << std::hex
               << w.desc.dst;
        const Tracer::Cause step =
            trace_.tracer.note(trace_.track, w.resend ? "resend" : "start", w.earliest, sc_core::SC_ZERO_TIME,
                               trace_.who, os.str(), w.story, {{"transfer", Tracer::json_string(transfer_name(w.id))}});
        if (Outstanding* o = outstanding(w.id)) o->story = step;   // its reads and packets follow it
    }
}

bool Transmit::serve_block(Channel& ch, unsigned c, Work& w, const Descriptor& d, sc_time now) {
    const std::uint64_t b = w.next / params_.packets_per_block;
    const std::uint64_t off = b * params_.block_size;
    const std::uint64_t blen = std::min<std::uint64_t>(params_.block_size, d.len - off);
    const unsigned slot = static_cast<unsigned>(blocks_read_ % params_.block_buffers);
    const sc_time issue = max_time(max_time(read_free_, buffer_free_[slot]), max_time(now, w.earliest));
    SmmuFaultExtension fx;
    bool ok = true;
    sc_time data_ready;
    if (block_.empty()) block_.resize(params_.block_size);   // zeroed, as it was when allocated with the engine
    {
        // The read's walks and faults follow the transfer's start.
        const Outstanding* o = outstanding(d.id);
        const Tracer::Scope reading(trace_.tracer, o ? o->story : Tracer::Cause{});
        data_ready = memory_.access(d.sid, tlm::TLM_READ_COMMAND, d.src + off, block_.data(), blen, issue, ok, &fx);
    }
    ++blocks_read_;
    read_free_ = issue;
    if (!ok) {
        if (params_.fault_tolerant && fx.type != FaultType::None && !fx.write) {
            recovery_.park(ch, c, d.id, d.sid, fx.address, fx.story, data_ready);
            w.earliest = data_ready;
            return false;
        }
        fail(ch, w, data_ready, fx.story);
        return true;
    }
    bool stop = false;
    const bool sent = send_block(c, w, d, b, blen, data_ready, stop);
    buffer_free_[slot] = send_free_;
    if (!sent) fail(ch, w, send_free_);
    else if (stop || w.next >= params_.packets_of(d.len)) drop(ch, &w);   // all sent: the ACK completes it
    qk_.set(from_now(max_time(send_free_, read_free_)));
    if (qk_.need_sync()) qk_.sync();
    return true;
}

void Transmit::prepare_header(ExanetPacket& p, unsigned c, const Descriptor& d) const {
    p.header = ExanetHeader{};
    p.header.type = PacketType::RdmaWrite;
    p.header.dst_coord = coord_of_.at(d.dst_node);
    p.header.pdid = d.pd;
    p.header.vc = static_cast<std::uint8_t>(c & 0x1f);
    p.footer = ExanetFooter{};
    p.footer.src_coord = coord_of_[node_];
    p.footer.reply = d.reply;   // a read's reply: the initiator completes the read
    p.transfer = d.id;
    p.src_node = node_;
    p.dst_node = d.dst_node;
    p.nseq = d.nseq;
    const auto o = outstanding_.find(d.id);
    p.story = o != outstanding_.end() ? o->second.story : Tracer::Cause{};   // the receiver's faults follow it
}

// A block's packets from `w.next`: sent by the engine's thread, or, once
// its network interface's queue is full, by the link as room comes
// (PacketTrain, models/interconnect/packet_target.hpp), each at the time
// the thread, waiting for room, would have been woken to send it.
struct Transmit::Train final : PacketTrain {
    Transmit& t;
    unsigned c;
    Work& w;
    const Descriptor& d;
    std::uint64_t off, first, i, npk, epoch;
    std::uint64_t blen;
    sc_time data_ready;
    bool resend;
    bool stop = false;   // NACKed or completed meanwhile
    bool refused = false;   // the network refused a packet
    Train(Transmit& t, unsigned c, Work& w, const Descriptor& d, std::uint64_t b, std::uint64_t blen,
          sc_time data_ready)
        : t(t),
          c(c),
          w(w),
          d(d),
          off(b * t.params_.block_size),
          first(b * t.params_.packets_per_block),
          i(w.next - first),
          npk((blen + t.params_.packet_size - 1) / t.params_.packet_size),
          epoch(w.epoch),
          blen(blen),
          data_ready(data_ready),
          resend(w.resend) {}
    bool next(sc_time free) override {
        t.send_free_ = free;
        t.book(*this);
        return t.send_next(*this, nullptr);
    }
};

bool Transmit::send_block(unsigned c, Work& w, const Descriptor& d, std::uint64_t b, std::uint64_t blen,
                          sc_time data_ready, bool& stop) {
    prepare_header(tx_pkt_, c, d);
    Train tr(*this, c, w, d, b, blen, data_ready);
    bool kept = false;
    while (!kept && send_next(tr, &kept))
        if (!kept) book(tr);
    stop = tr.stop;
    return !tr.refused;
}

// The packet sent last was taken in.
void Transmit::book(Train& tr) {
    const std::uint32_t plen =
        static_cast<std::uint32_t>(std::min<std::uint64_t>(params_.packet_size, tr.blen - tr.i * params_.packet_size));
    stats_.packets_sent.inc();
    stats_.bytes_sent.inc(plen);
    if (tr.resend) stats_.retx_bytes.inc(plen);
    tr.w.next = tr.first + tr.i + 1;   // w stays valid: the deque only grows at its ends meanwhile
    ++tr.i;
}

// The train's next packet, if any: false when none was sent (all sent, or
// stopped, or refused). From the thread (`kept` given: whether the link
// kept it, the train then having gone on to its end) or from the link
// (PacketTrain::next).
bool Transmit::send_next(Train& tr, bool* kept) {
    if (tr.i >= tr.npk) return false;
    const Descriptor& d = tr.d;
    if (params_.fault_tolerant) {
        // A NACK (or an error ACK) may have come during the last
        // packet's delivery; without fault tolerance the only answer
        // is the ACK after the last packet.
        auto o = outstanding_.find(d.id);
        if (o == outstanding_.end() || o->second.epoch != tr.epoch) {
            tr.stop = true;   // NACKed (a retransmit request will restart it) or completed
            return false;
        }
    }
    ExanetPacket& p = tx_pkt_;
    const std::uint64_t poff = tr.i * params_.packet_size;
    const std::uint32_t plen = static_cast<std::uint32_t>(std::min<std::uint64_t>(params_.packet_size, tr.blen - poff));
    const std::uint64_t at = tr.off + poff;
    p.header.size = static_cast<std::uint16_t>(plen);
    p.header.dst_va = d.dst + at;
    p.footer.seq = static_cast<std::uint16_t>((tr.first + tr.i) & 0x3fff);
    p.footer.first = at == 0;
    p.footer.last = at + plen == d.len;
    p.footer.notify = p.footer.last && (d.flags & kFlagNotify);
    // The counter rides in the last packet, unless a notification packet
    // after the ACK carries it (kFlagNotifyPacket).
    p.counter = p.footer.last && (d.flags & kFlagCounter) && !(d.flags & kFlagNotifyPacket)
                    ? static_cast<std::int32_t>(d.counter)
                    : -1;
    sc_time ready = tr.data_ready;
    // NetVM's credits are spent by the thread, packet by packet.
    const bool credits = credits_ && credits_->active();
    if (credits) ready = spend_credits(d, plen, ready);
    const bool kept_now = send_packet(block_.data() + poff, plen, ready, credits ? nullptr : &tr);
    if (kept) *kept = kept_now;
    if (kept_now) return true;   // (from the thread: the train has gone on to its end)
    if (!tx_gp_.is_response_ok()) {
        tr.refused = true;
        return false;
    }
    return true;
}

sc_time Transmit::spend_credits(const Descriptor& d, std::uint32_t plen, sc_time data_ready) {
    // NetVM: the packet leaves only with credits for its destination; the
    // engine waits for a credit packet when it has none (credits.hpp).
    const sc_time want = max_time(send_free_, data_ready);
    const sc_time got = credits_->spend(d.dst_node, plen, want);
    if (got > want) {
        trace_.tracer.span(trace_.track, "credit wait", want, got,
                           {{"node", Tracer::json_number(d.dst_node)}, {"bytes", Tracer::json_number(plen)}});
        if (trace_.tracer.noting()) {
            const Outstanding* o = outstanding(d.id);   // the wait follows the transfer's start
            trace_.tracer.note(Tracer::Track{}, "credit wait", got, sc_core::SC_ZERO_TIME, trace_.who,
                               "transfer " + transfer_name(d.id) + " waited " +
                                   std::to_string((got - want).to_seconds() * 1e6) + " us for NetVM credits to node" +
                                   std::to_string(d.dst_node),
                               o ? o->story : Tracer::Cause{});
        }
    }
    return max_time(data_ready, got);
}

bool Transmit::send_packet(unsigned char* data, std::uint32_t plen, sc_time data_ready, PacketTrain* src) {
    ExanetPacket& p = tx_pkt_;
    p.hops = 0;
    const sc_time head = max_time(send_free_, data_ready);
    p.tail = head;
    tx_gp_.set_command(tlm::TLM_WRITE_COMMAND);
    tx_gp_.set_address(p.header.dst_va);
    tx_gp_.set_data_ptr(data);
    tx_gp_.set_data_length(plen);
    tx_gp_.set_streaming_width(plen);
    tx_gp_.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    const sc_time t0 = sim_now();
    sc_time dl = from_now(head);
    const bool kept = src ? net_out_.send_from(tx_gp_, p, dl, *src) : (net_out_.send(tx_gp_, p, dl), false);
    send_free_ = t0 + dl;
    return kept;
}

bool Transmit::send_packet(unsigned char* data, std::uint32_t plen, sc_time data_ready) {
    send_packet(data, plen, data_ready, nullptr);
    return tx_gp_.is_response_ok();   // false: the network refused it (no route, too large)
}

void Transmit::send_read_request(Channel& ch, unsigned c, Work& w, const Descriptor& d, sc_time now) {
    ExanetPacket& p = tx_pkt_;
    reads_.request(p, request_, c, d);
    const Outstanding* o = outstanding(d.id);
    p.story = o ? o->story : Tracer::Cause{};   // the responder's serving follows the read's start
    const bool sent = send_packet(request_, ReadProtocol::kRequestBytes, max_time(now, w.earliest));
    if (!sent) {
        fail(ch, w, send_free_);   // the network refused it: the read fails
    } else {
        drop(ch, &w);   // the reply completes it
    }
    qk_.set(from_now(send_free_));
    if (qk_.need_sync()) qk_.sync();
}

bool Transmit::finish(std::uint64_t id, std::uint32_t status, std::uint64_t bytes, sc_time at) {
    auto it = outstanding_.find(id);
    if (it == outstanding_.end()) return false;
    const Descriptor d = it->second.desc;
    finishing_ = it->second.story;
    outstanding_.erase(it);
    complete(d, status, bytes, at);
    return true;
}

void Transmit::response(std::uint64_t id, std::uint32_t word, bool whole, sc_time tail, std::uint64_t fault) {
    // ACK (or, fault-tolerant, NACK) of one of our transfers.
    auto it = outstanding_.find(id);
    if (it == outstanding_.end() && whole && windows_.skip_answered(id, tail)) {
        room_in_window(tail);
    } else if (it == outstanding_.end() || !whole) {
        stats_.rx_errors.inc();   // for nothing we sent
    } else if (it->second.desc.op == DescOp::Read && !it->second.desc.reply) {
        // A read ends with its reply's data, or with the responder's error.
        if (word != kStatusError) {
            stats_.rx_errors.inc();
            return;
        }
        const Descriptor d = it->second.desc;
        finishing_ = it->second.story;
        outstanding_.erase(it);
        reads_.responder_failed(d);
        complete(d, kStatusError, 0, tail);
    } else if (word == kStatusFault && params_.fault_tolerant) {
        recovery_.nack_received(it->second, fault);
    } else {
        const Descriptor d = it->second.desc;
        finishing_ = it->second.story;
        outstanding_.erase(it);
        if (d.nseq) {
            // The receiver has delivered or held its notification: room in
            // the window for the write W numbers later.
            windows_.answered(d.dst_node, d.pd, d.nseq, tail);
            room_in_window(tail);
        }
        if (d.reply) {
            reads_.reply_finished(d, word == kStatusOk, false, tail,
                                  finishing_);   // the initiator's ACK: no record here
            finishing_ = {};
        } else complete(d, word == kStatusOk ? kStatusOk : kStatusError, word == kStatusOk ? d.len : 0, tail);
    }
}

void Transmit::complete(const Descriptor& d, std::uint32_t status, std::uint64_t bytes, sc_time at, std::uint64_t old) {
    if (d.reply) {   // a read's reply failed here: no record, the initiator is told
        reads_.reply_finished(d, status == kStatusOk, true, at, finishing_);
        finishing_ = {};
        return;
    }
    const bool atomic = is_atomic(d.op);
    if (d.flags & kFlagCounter) (status == kStatusOk ? stats_.counter_writes : stats_.counter_writes_failed).inc();
    CompletionRecord r;
    r.tag = d.tag;
    r.status = status;
    r.node = d.dst_node;
    r.bytes = bytes;
    r.addr = atomic ? old : d.src;   // an atomic's record carries the old value
    sc_time done = at;
    if (atomic) (status == kStatusOk ? stats_.atomics_completed : stats_.atomics_failed).inc();
    else if (status == kStatusOk) stats_.completed.inc();
    else stats_.failed.inc();
    if (d.compl_addr) {
        const Tracer::Scope recording(trace_.tracer, finishing_);   // the record's walk follows the transfer
        done = records_.post(d.sid, d.compl_addr, r, at, {&channels_[d.channel].tx});
    } else channels_[d.channel].tx.raise_at(done);
    if (atomic) {
        stats_.atomic_latency_us.add(to_us(done - d.posted));
        trace_atomic(d, status, old, done);
        return;
    }
    stats_.latency_us.add(to_us(done - d.posted));
    if (d.op == DescOp::Read) {
        stats_.read_latency_us.add(to_us(done - d.posted));
        if (status == kStatusOk) stats_.read_bytes.inc(bytes);
        else stats_.reads_failed.inc();
    }
    if (status == kStatusOk && (d.flags & kFlagNotifyPacket)) {
        ControlOut n;
        n.kind = ControlKind::Notification;
        n.id = d.id;
        n.bytes = bytes;
        n.dst = d.dst;
        n.pd = d.pd;
        n.node = d.dst_node;
        n.coord = coord_of_.at(d.dst_node);
        n.counter = (d.flags & kFlagCounter) ? static_cast<int>(d.counter) : -1;
        n.at = done;
        control_.queue(n);
    }
    trace_complete(d, status, bytes, done);
}

void Transmit::trace_complete(const Descriptor& d, std::uint32_t status, std::uint64_t bytes, sc_time done) {
    Tracer& tracer = trace_.tracer;
    if (tracer.enabled()) {
        const bool read = d.op == DescOp::Read;
        const char* name =
            status == kStatusOk ? (read ? "read" : "transfer") : (read ? "read (error)" : "transfer (error)");
        tracer.async_span(trace_.track, name, d.id, d.posted, done,
                          {{"id", Tracer::json_string(transfer_name(d.id))},
                           {"bytes", Tracer::json_number(d.len)},
                           {"channel", Tracer::json_number(static_cast<std::uint64_t>(d.channel))},
                           {"dst_node", Tracer::json_number(static_cast<std::uint64_t>(d.dst_node))}});
    }
    if (tracer.noting()) {
        std::ostringstream os;
        os << (d.op == DescOp::Read ? "read " : "transfer ") << transfer_name(d.id)
           << (status == kStatusOk ? " complete: " : " FAILED: ") << bytes
           << (d.op == DescOp::Read ? " B read" : " B delivered") << ", latency " << to_us(done - d.posted) << " us";
        tracer.note(trace_.track, status == kStatusOk ? "complete" : "failed", done, sc_core::SC_ZERO_TIME, trace_.who,
                    os.str(), finishing_, {{"transfer", Tracer::json_string(transfer_name(d.id))}});
    }
    finishing_ = {};
}

}   // namespace vrdmasim
