// The transmit scheduler: round robin over the channels with work, up to
// dma.channel-blocks blocks per turn; each block is read from the source
// through the memory port into one of dma.block-buffers buffers and cut into
// ExaNet data packets of dma.packet-size bytes; a transfer completes when its
// ACK comes (completion record, interrupt, optional notification packet).
// README.md "Scheduling", "Protocol" and "Timing".
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/tlm_quantumkeeper.h>

#include "models/dma/channel_registers.hpp"
#include "models/dma/control_packets.hpp"
#include "models/dma/credits.hpp"
#include "models/dma/memory_port.hpp"
#include "models/dma/params.hpp"
#include "models/dma/records.hpp"
#include "models/dma/sequence_window.hpp"
#include "models/dma/stats.hpp"
#include "models/interconnect/exanet_packet.hpp"

namespace vrdmasim {

class FaultRecovery;
class ReadProtocol;

struct Outstanding {   // started, waiting for the acknowledgement
    Descriptor desc;
    std::uint64_t epoch = 0;   // bumped by each NACK: work of an older epoch stops
    std::uint64_t answered = 0;   // the receiver's highest fault number a retransmit request answered
    Tracer::Cause story;   // its start's step: its reads' walks and faults follow it
};

class Transmit {
public:
    // `coord_of` maps node index to ExaNet coordinate; `node` is this one.
    Transmit(ChannelRegisters& channels, MemoryPort& memory, PacketOut& net_out, ControlPackets& control,
             RecordWriter& records, FaultRecovery& recovery, ReadProtocol& reads, SendWindows& windows,
             const PldmaConfig& params, PldmaStats& stats, PldmaTrace& trace, unsigned node,
             const std::vector<std::uint32_t>& coord_of);
    Transmit(const Transmit&) = delete;

    // NetVM's sender credits (credits.hpp): each data packet spends its
    // payload's bytes for its destination before it leaves.
    void set_credits(SenderCredits* credits) { credits_ = credits; }
    Transmit& operator=(const Transmit&) = delete;

    // The engine thread.
    void run();
    // The started transfer `id` still waiting for its ACK (nullptr: none).
    Outstanding* outstanding(std::uint64_t id);
    // An atomic reply for atomic `id`: its status and the old value.
    void atomic_reply(std::uint64_t id, std::uint32_t status, std::uint64_t old, sc_core::sc_time tail);
    // A response packet for transfer `id` (`whole`: its payload carried
    // the status word): ACK, error ACK or (fault-tolerant) NACK.
    void response(std::uint64_t id, std::uint32_t word, bool whole, sc_core::sc_time tail, std::uint64_t fault = 0);
    // The outstanding transfer `id` completes at `at` with `status` and
    // `bytes` (an RDMA read whose reply is in: read.*); false: none.
    bool finish(std::uint64_t id, std::uint32_t status, std::uint64_t bytes, sc_core::sc_time at);

private:
    Tracer::Cause finishing_;   // the story step of the transfer being completed (its last start)
    // Round robin over the channels with work that are not parked (parked
    // ones whose outcome came are released first). -1: none.
    int pick(sc_core::sc_time now);
    // Whether channel `ch`'s front work may start at `now`: a numbered write
    // waits while its sequence window is full (dma.notify-window).
    bool window_open(Channel& ch, sc_core::sc_time now);
    // An answer came at `at`: wake the engine if a write waits for room.
    void room_in_window(sc_core::sc_time at);
    // A numbered write failed here: its receiver releases the number (skip).
    void skip(const Descriptor& d, sc_core::sc_time at);
    // Serve up to dma.channel-blocks blocks of channel c's front work.
    void serve(unsigned c);
    // Take a new transfer (or a resend) at `now`: setup time.
    void start(Channel& ch, Work& w, unsigned c, sc_core::sc_time now);
    // Read the block holding `w`'s next packet and send its packets; false:
    // the channel parked on a source fault.
    bool serve_block(Channel& ch, unsigned c, Work& w, const Descriptor& d, sc_core::sc_time now);
    // Send the packets of block `b` (`blen` bytes at offset `off`) from
    // `w.next`, the data ready at `data_ready`. `stop`: NACKed or completed
    // meanwhile; returns false if the network refused a packet.
    bool send_block(unsigned c, Work& w, const Descriptor& d, std::uint64_t b, std::uint64_t blen,
                    sc_core::sc_time data_ready, bool& stop);
    struct Train;
    bool send_next(Train& tr, bool* kept);
    void book(Train& tr);
    void prepare_header(ExanetPacket& p, unsigned c, const Descriptor& d) const;
    // Send started atomic `w` as one AtomicRequest packet; its reply completes it.
    void send_atomic(Channel& ch, unsigned c, Work& w, const Descriptor& d);
    // Put the prepared data packet (`plen` bytes at `data`) on the network
    // port once it is free and the block is in; false: refused.
    bool send_packet(unsigned char* data, std::uint32_t plen, sc_core::sc_time data_ready);
    // The same with a source for the packets after it (PacketOut::send_from):
    // true if the link kept it and the source went on to its end.
    bool send_packet(unsigned char* data, std::uint32_t plen, sc_core::sc_time data_ready, PacketTrain* src);
    // NetVM credits for a data packet of `plen` bytes of `d`; when it may leave.
    sc_core::sc_time spend_credits(const Descriptor& d, std::uint32_t plen, sc_core::sc_time data_ready);
    // RDMA read, initiator: send `w`'s read request (one small packet)
    // instead of data; the read completes when its reply is in (read.*).
    void send_read_request(Channel& ch, unsigned c, Work& w, const Descriptor& d, sc_core::sc_time now);
    // Remove `w` from the channel's work (by address: the deque may have
    // grown at its front meanwhile).
    void drop(Channel& ch, const Work* w);
    // The transfer of `w` ends with an error completion at `at`.
    // Completes `w` with an error record; the FAILED line of the story
    // follows `why` (the fault that ended it), else the transfer's start.
    void fail(Channel& ch, Work& w, sc_core::sc_time at, const Tracer::Cause& why = {});
    // The completion record of `d`; an atomic's carries `old` in its addr field.
    void complete(const Descriptor& d, std::uint32_t status, std::uint64_t bytes, sc_core::sc_time at,
                  std::uint64_t old = 0);
    void trace_complete(const Descriptor& d, std::uint32_t status, std::uint64_t bytes, sc_core::sc_time done);
    void trace_atomic(const Descriptor& d, std::uint32_t status, std::uint64_t old, sc_core::sc_time done);

    ChannelRegisters& channels_;
    MemoryPort& memory_;
    PacketOut& net_out_;
    ControlPackets& control_;
    RecordWriter& records_;
    FaultRecovery& recovery_;
    ReadProtocol& reads_;
    SendWindows& windows_;
    const PldmaConfig& params_;
    PldmaStats& stats_;
    PldmaTrace& trace_;
    const unsigned node_;
    const std::vector<std::uint32_t>& coord_of_;
    SenderCredits* credits_ = nullptr;

    unsigned rr_next_ = 0;
    bool window_waiting_ = false;   // a write found its sequence window full
    std::map<std::uint64_t, Outstanding> outstanding_;   // by transfer id
    // The engine's datapath: its read port, its network port and its block buffers.
    sc_core::sc_time read_free_, send_free_;
    std::vector<sc_core::sc_time> buffer_free_;
    std::uint64_t blocks_read_ = 0;
    std::vector<unsigned char> block_;   // dma.block-size bytes, allocated at the first block read
    unsigned char atomic_buf_[32] = {};   // an AtomicRequest's payload
    unsigned char request_[24] = {};   // a read request's payload (ReadProtocol::kRequestBytes)
    tlm_utils::tlm_quantumkeeper qk_;
    tlm::tlm_generic_payload tx_gp_;
    ExanetPacket& tx_pkt_;   // owned by tx_gp_ (a payload frees its extensions)
};

}   // namespace vrdmasim
