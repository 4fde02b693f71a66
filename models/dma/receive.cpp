// The receiver: data packets in, payload writes, notification and ACK at
// the end of a transfer (see receive.hpp; README.md "Protocol").
#include "models/dma/receive.hpp"
#include "src/core/force_inline.hpp"

#include "models/dma/fault_recovery.hpp"
#include "models/dma/netvm_buffer.hpp"
#include "models/dma/read.hpp"

namespace vrdmasim {

using sc_core::sc_time;

Receiver::Receiver(ChannelRegisters& channels, MemoryPort& memory, ControlPackets& control, RecordWriter& records,
                   FaultRecovery& recovery, NetvmBuffer& netvm, ReadProtocol& reads, NotificationOrder& order,
                   const PldmaConfig& params, PldmaStats& stats, PldmaTrace& trace)
    : channels_(channels),
      memory_(memory),
      control_(control),
      records_(records),
      recovery_(recovery),
      netvm_(netvm),
      reads_(reads),
      order_(order),
      params_(params),
      stats_(stats),
      trace_(trace) {}

sc_time Receiver::receive(tlm::tlm_generic_payload& gp, ExanetPacket& p, sc_time tail) {
    stats_.packets_received.inc();
    const InboundKey key{p.src_node, p.transfer};
    // (Only NACKed transfers are ever in resent_done_: the packet before's,
    // being received and never NACKed, is not looked up.)
    if (params_.fault_tolerant && !(last_ && key == last_key_ && !last_->nacked) && resent_done_.count(key)) {
        stats_.duplicates.inc();   // a resend of a transfer complete already
        return tail;
    }
    Inbound& in = arrival(key, p);
    in.src_coord = p.footer.src_coord;
    // The transfer's destination is its first packet's: on an adaptive
    // network another of its packets may have arrived before it.
    if (p.footer.first) in.dst = p.header.dst_va;
    // A sender's packets are called in its send order, but on an adaptive
    // network their arrival times are not monotonic: every decision below
    // is by index and by time, never by call order.
    const std::uint64_t index = index_of(in, p);
    const bool in_sequence = index == in.next_index;
    in.next_index = index + 1;
    in.next_seq = static_cast<std::uint16_t>(in.next_index & 0x3fff);
    order(in, p, tail);
    // A fault stops the transfer at the faulting packet's arrival: a packet
    // that arrived before it was written; after it, dropped until the resend.
    if (in.dead || (in.faulted && tail >= in.fault_at)) {
        stats_.fault_dropped.inc();
        return tail;
    }
    if (params_.fault_tolerant && duplicate(in, index)) {
        stats_.duplicates.inc();   // landed already
        return tail;
    }
    const std::uint64_t len = gp.get_data_length();
    // Without fault tolerance nothing is resent: the index must be the next.
    bool ok = !in.error && (params_.fault_tolerant || in_sequence);
    sc_time done = tail;
    if (ok) {
        const Placement placed = place(key, in, gp, p, tail, done);
        if (placed == Placement::Nacked) {
            in.fault_at = tail;
            in.nacked = true;
            return done;
        }
        if (placed == Placement::Dropped) {
            stats_.fault_dropped.inc();
            return done;
        }
        ok = placed != Placement::Error;
        if (ok) {
            in.bytes += len;
            stats_.payload_in(in.pd, len, tail > p.wire ? tail - p.wire : sc_time(), tail);
            if (placed == Placement::Written) {
                stats_.bytes_received.inc(len);
                if (done < tail) stats_.rx_early_writes.inc();   // self-check: never before its arrival
            }
        }
    }
    if (!ok) {
        in.error = true;
        stats_.rx_errors.inc();
    }
    if (in.has_landed(index)) stats_.rx_double_landings.inc();   // self-check: every packet lands exactly once
    else in.land(index);
    const bool latest = done >= in.landed_at;
    in.landed_at = max_time(in.landed_at, done);
    if (p.footer.last) {
        in.last_index = index;
        in.notify = p.footer.notify;
        in.last_seq = p.footer.seq;
        in.counter = p.counter;   // the event counter the last packet names
    }
    if (!in.complete()) return done;
    // The transfer is complete when the packet that landed last in time has.
    if (in.nacked) resent_done_.insert(key);
    sc_time fin = in.landed_at;
    last_packet(key, in, p, fin);
    // The packet's space in the receive buffer is free once its write is
    // done (the latest one's, once the notification and ACK are out).
    return latest ? fin : done;
}

std::uint64_t Receiver::index_of(const Inbound& in, const ExanetPacket& p) {
    const std::uint64_t expect = in.next_index;
    const unsigned ahead = static_cast<unsigned>((p.footer.seq - (expect & 0x3fff)) & 0x3fff);
    if (ahead < 0x2000) return expect + ahead;
    const std::uint64_t behind = 0x4000 - ahead;
    return behind <= expect ? expect - behind : expect + ahead;
}

void Receiver::order(Inbound& in, const ExanetPacket& p, sc_time tail) {
    if (tail < in.newest) {
        stats_.rx_out_of_order.inc();
        stats_.rx_ooo_early_ns.add(to_ns(in.newest - tail));
    } else {
        in.newest = tail;
        if (p.injected < in.latest_sent) {
            stats_.rx_out_of_order.inc();
            stats_.rx_ooo_early_ns.add(to_ns(tail - in.latest_sent_at));
        }
    }
    if (p.injected >= in.latest_sent) {
        in.latest_sent = p.injected;
        in.latest_sent_at = tail;
    }
}

VRDMASIM_FORCE_INLINE Inbound& Receiver::arrival(const InboundKey& key, const ExanetPacket& p) {
    // A first packet without fault tolerance starts the transfer afresh.
    const bool restart = !params_.fault_tolerant && p.footer.first;
    if (last_ && key == last_key_ && !restart) return *last_;
    auto f = inbound_.find(key);
    const bool fresh = f == inbound_.end() || restart;
    if (fresh) {
        Inbound in;
        in.dst = p.header.dst_va;
        in.nseq = p.nseq;
        in.pd = p.header.pdid;
        in.reply = p.footer.reply;
        if (in.reply) {
            // The reply to one of our reads: written for the read's channel,
            // if there is such a read (else nothing is written, error ACK).
            in.channel = reads_.reply_channel(p);
            in.error = in.channel < 0;
        } else {
            in.channel = channels_.by_domain(p.header.pdid);
        }
        if (in.channel < 0 && !in.reply) {
            in.error = true;   // no channel of this protection domain here: never written
            stats_.pd_violations.inc();
        } else if (in.channel >= 0) {
            // Written with the receiving channel's stream ID (a reply: the
            // reading channel's), in its process's address space.
            in.sid = channels_[static_cast<unsigned>(in.channel)].sid;
        }
        f = inbound_.insert_or_assign(key, in).first;
    }
    last_key_ = key;
    last_ = &f->second;
    return f->second;
}

bool Receiver::duplicate(const Inbound& in, std::uint64_t i) { return in.has_landed(i); }

VRDMASIM_FORCE_INLINE Receiver::Placement Receiver::place(const InboundKey& key, Inbound& in,
                                                          tlm::tlm_generic_payload& gp, const ExanetPacket& p,
                                                          sc_time tail, sc_time& done) {
    const std::uint64_t len = gp.get_data_length();
    const std::uint64_t va = p.header.dst_va;
    // Write it, or (NetVM) put it in the kernel buffer while its page is
    // not resident. A full buffer holds the packet (and, through the
    // credits, the ones behind it) back; its page may have come in
    // meanwhile, so look again after every wait.
    for (;;) {
        if (!netvm_.pending(in.sid, va, len)) {
            SmmuFaultExtension fx;
            bool ok = true;
            {
                // The write's walks and faults follow the sender's transfer (its start or resend).
                const Tracer::Scope writing(trace_.tracer, p.story);
                done = memory_.access(in.sid, tlm::TLM_WRITE_COMMAND, va, gp.get_data_ptr(), len, max_time(done, tail),
                                      ok, &fx);
            }
            static const sc_time kStalled(1, sc_core::SC_US);   // built once: a library call
            if (done - tail > kStalled) stats_.rx_stalled_us.add(to_us(done - tail));
            if (ok) return Placement::Written;
            if (!params_.fault_tolerant || fx.type == FaultType::None || !fx.write) return Placement::Error;
            // Arrived before the transfer's fault (out of order in time) and
            // faulted too: the NACK is out, the resend covers this packet.
            if (in.faulted) return Placement::Dropped;
            if (!netvm_.enabled()) {
                // Drop this packet and the rest of the transfer until the
                // fault is resolved; tell the sender where to resume.
                recovery_.nack(in, p, fx.address, done, fx.story);
                return Placement::Nacked;
            }
            netvm_.hold(in.sid, fx.address >> 12, done + params_.fault_timeout);
            recovery_.watch();
        }
        if (!netvm_.fits(len)) {
            stats_.netvm_full.inc();
            sc_core::wait(netvm_.space());
            done = max_time(done, sc_core::sc_time_stamp());
            continue;
        }
        netvm_.put(key, in.sid, va, gp.get_data_ptr(), len);
        ++in.buffered;
        return Placement::Buffered;
    }
}

void Receiver::last_packet(const InboundKey& key, Inbound& in, const ExanetPacket& p, sc_time& done) {
    in.last_seen = true;   // NetVM: ACK once buffered == 0
    if (in.buffered != 0) return;
    // The data is in memory: notify, then acknowledge so the sender can complete.
    const Inbound fin = in;
    erase_inbound(key);
    if (fin.reply) {
        // A read's reply is in our memory: the read completes (its record
        // and interrupt), then the responder hears it is done.
        if (fin.channel >= 0) reads_.reply_received(p.transfer, !fin.error, fin.bytes, done);
    } else {
        const Tracer::Scope landing(trace_.tracer, p.story);   // its notifications follow the transfer
        landed(fin.channel, fin.notify, fin.counter, p.transfer, p.src_node, fin.pd, fin.bytes, fin.dst, !fin.error,
               fin.nseq, done);
    }
    control_.send_response(p, fin.error ? kStatusError : kStatusOk, 0, done);
}

void Receiver::finish_later(const InboundKey& key, Inbound& in, sc_time at) {
    // NetVM: the last buffered packet of a transfer whose last packet came
    // is in place; the control thread writes the notification and the ACK.
    at = max_time(at, in.landed_at);   // never before the last packet landed in time
    ControlOut c;
    c.kind = ControlKind::Ack;
    c.id = key.second;
    c.node = key.first;
    c.coord = in.src_coord;
    c.ok = !in.error;
    c.notify = in.notify && !in.reply;
    c.counter = in.reply ? -1 : in.counter;
    c.nseq = in.reply ? 0 : in.nseq;
    c.src_pd = in.pd;
    if (in.reply && in.channel >= 0) reads_.reply_received(key.second, !in.error, in.bytes, at);
    c.channel = in.channel;
    c.bytes = in.bytes;
    c.dst = in.dst;
    c.index = in.last_seq;
    c.at = at;
    erase_inbound(key);
    control_.queue(c);
}

void Receiver::failed(const InboundKey& key, const Inbound& in, sc_time at) {
    if (in.reply && in.channel >= 0) reads_.reply_received(key.second, false, 0, at);
    // Its data never lands: no notification, but its number is released
    // (the error ACK answers it at the sender).
    if (!in.reply && in.nseq) {
        PendingNotification n;
        n.id = key.second;
        n.src = key.first;
        n.pd = in.pd;
        n.nseq = in.nseq;
        n.skip = true;
        order_.arrive(n, at);
    }
}

void Receiver::landed(int channel, bool record, int counter, std::uint64_t id, unsigned src_node, std::uint16_t pd,
                      std::uint64_t bytes, std::uint64_t dst, bool ok, std::uint64_t nseq, sc_time& at) {
    if (!record && counter < 0 && nseq == 0) return;   // asked for no notification
    PendingNotification n;
    n.channel = channel;
    n.record = record;
    n.counter = counter;
    n.id = id;
    n.src = src_node;
    n.pd = pd;
    n.bytes = bytes;
    n.dst = dst;
    n.ok = ok;
    n.nseq = nseq;
    n.story = trace_.tracer.current();
    order_.arrive(n, at);
}

void Receiver::skip_received(const ExanetPacket& p, std::uint64_t nseq, sc_time at) {
    PendingNotification n;
    n.id = p.transfer;
    n.src = p.src_node;
    n.pd = p.header.pdid;
    n.nseq = nseq;
    n.skip = true;
    n.story = p.story;
    order_.arrive(n, at);
    control_.send_response(p, kStatusOk, 0, at);   // the sender retires the number
}

void Receiver::notification_packet(const ExanetPacket& p, std::uint64_t id, std::uint64_t bytes, bool ok, int counter,
                                   sc_time& at) {
    const int c = channels_.by_domain(p.header.pdid);
    if (c < 0) {
        stats_.pd_violations.inc();
        return;
    }
    const Tracer::Scope landing(trace_.tracer, p.story);
    landed(c, true, counter, id, p.src_node, p.header.pdid, bytes, p.header.dst_va, ok, 0, at);
}

void Receiver::deliver(int channel, bool record, int counter, std::uint64_t id, unsigned src_node, std::uint64_t bytes,
                       std::uint64_t dst, bool ok, sc_time& at) {
    if (channel < 0) return;
    if (record) notify_channel(channel, id, src_node, bytes, dst, ok, at);
    // After the record (if any): a waiter woken by the counter finds it written.
    if (counter >= 0) count_event(channel, counter, ok, at);
}

void Receiver::count_event(int channel, int counter, bool ok, sc_time at) {
    if (!ok) {
        stats_.counter_failed.inc();   // the write did not land: nothing to count
        return;
    }
    if (static_cast<unsigned>(counter) >= params_.event_counters) {
        stats_.rx_errors.inc();   // no such counter here (the sender's doorbell checks its own engine's count)
        return;
    }
    Channel& ch = channels_[static_cast<unsigned>(channel)];
    ch.counters[static_cast<std::uint32_t>(counter)].increment_at(at);
    ch.counted.raise_at(at);
    stats_.counter_increments.inc();
    Tracer& tracer = trace_.tracer;
    if (tracer.enabled())
        tracer.instant(trace_.track, "counter +1", at,
                       {{"channel", Tracer::json_number(static_cast<std::uint64_t>(channel))},
                        {"counter", Tracer::json_number(static_cast<std::uint64_t>(counter))}});
    if (tracer.noting())
        tracer.note(
            Tracer::Track{}, "counter +1", at, sc_core::SC_ZERO_TIME, trace_.who,
            "event counter " + std::to_string(counter) + " of channel " + std::to_string(channel) + " incremented");
}

void Receiver::notify_channel(int channel, std::uint64_t id, unsigned src_node, std::uint64_t bytes, std::uint64_t dst,
                              bool ok, sc_time& at) {
    if (channel < 0) return;
    Channel& ch = channels_[static_cast<unsigned>(channel)];
    stats_.notifications.inc();
    if (ch.rx_ring_entries > 0) {
        CompletionRecord r;
        r.tag = id;
        r.status = ok ? kStatusOk : kStatusError;
        r.node = src_node;
        r.bytes = bytes;
        r.addr = dst;
        const std::uint64_t addr = ch.rx_ring_base + (ch.rx_written % ch.rx_ring_entries) * sizeof(CompletionRecord);
        ++ch.rx_written;
        at = records_.post(ch.sid, addr, r, at, {&ch.records, &ch.rx});
        return;
    }
    ch.rx.raise_at(at);
}

}   // namespace vrdmasim
