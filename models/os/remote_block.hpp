// RemoteBlock: the QFDB's SSD reached from the other FPGAs of the board
// over the intra-board network (README.md "The SSD from another FPGA").
//
// One per node of a run with files. On the node of FPGA fs.ssd-fpga it is
// the board's block server: it takes the read commands other nodes send it,
// has its Ssd serve them (the same queue and channel as that node's own
// file reads and swap I/O), and sends the data back. On every other node it
// is the page cache's FileReader: each file read command (the page-cache
// fill of a miss or readahead window) goes as a request packet to the SSD's
// node and its data come back as packets into this node's memory.
//
// Every packet is an ExaNet packet injected through the node's network
// interface (the Pldma's net_out, the link "inject") and routed by the real
// routers and board links, so they carry the link statistics and contend
// with RDMA traffic; the Pldma hands arriving block packets back here
// (Pldma::on_block_packet). Loosely timed, in one call: the request crosses
// the network (the server records its arrival), the server serves it, its
// data packets cross back (this node records each landing), and read()
// returns when the last data packet has landed: the page cache makes the
// pages uptodate then, and not before. Where the network delivers a packet
// later than its sender's call (router.link-order = exact), the server
// serves a request when it arrives, and read() waits for the last data
// packet (its caller must then be a thread).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>

#include "src/core/context.hpp"
#include "models/interconnect/exanet_packet.hpp"
#include "models/os/cpu.hpp"
#include "models/os/filesystem.hpp"

namespace vrdmasim {

class MetricRegistry;

class RemoteBlock : public FileReader {
public:
    // The node's network interface: sends a block packet whose head is
    // ready at `head` (absolute); returns when its tail has left the
    // interface (absolute), or throws if the network refused it.
    using Inject = std::function<sc_core::sc_time(tlm::tlm_generic_payload& gp, sc_core::sc_time head)>;
    // Payload of a request: id, file, offset, bytes (8 bytes each).
    static constexpr unsigned kRequestBytes = 32;

    // Summary columns: remote reads, bytes and latency (requesters),
    // commands served (SSD nodes).
    static void declare_metrics(MetricRegistry& reg);

    // `group` names the node ("node1"): statistics under `<group>.remote_fs.`,
    // trace spans on its "ssd" track. `node`/`coord`: its index and ExaNet
    // coordinate; `packet_bytes`: the largest payload of a data packet
    // (dma.packet-size, the NI's packetiser); `cpu`: the node's cores.
    RemoteBlock(const SimContext& ctx, const std::string& group, unsigned node, std::uint32_t coord,
                std::uint32_t packet_bytes, CpuCores& cpu, Inject inject);
    RemoteBlock(const RemoteBlock&) = delete;
    RemoteBlock& operator=(const RemoteBlock&) = delete;

    // This node holds the SSD: it serves the board's other nodes from `fs`.
    void serve(FileSystem& fs);
    // This node reads the files of `fs` through `server` (the SSD's node).
    void connect(RemoteBlock& server, FileSystem& fs);
    bool serving() const { return serving_; }
    bool connected() const { return server_ != nullptr; }

    // A block packet the node's NI received (PacketType::BlockRequest or
    // BlockData), its tail there at `tail`; returns when it has left the
    // NI's buffer. A packet for no outstanding command, a second copy of a
    // data packet, or a request to a node that does not serve is
    // std::logic_error (the mechanism lying).
    sc_core::sc_time receive(tlm::tlm_generic_payload& gp, const ExanetPacket& p, sc_core::sc_time tail);

    // FileReader, on a connected node: one remote read command issued at
    // `at`; returns when its last data packet has landed in this node's
    // memory, the bytes (those the packets carried) in `out`.
    sc_core::sc_time read(unsigned file, std::uint64_t offset, std::uint64_t len, unsigned char* out,
                          sc_core::sc_time at) override;
    std::string source() const override;
    sc_core::sc_time command_cpu() const override { return request_cpu_; }

    // Requester side: commands sent and answered, bytes asked and
    // delivered; server side: commands served, bytes sent. Each command is
    // answered once (checked on every read).
    std::uint64_t reads() const { return reads_ ? reads_->value() : 0; }
    std::uint64_t bytes_requested() const { return bytes_ ? bytes_->value() : 0; }
    std::uint64_t bytes_delivered() const { return delivered_ ? delivered_->value() : 0; }
    std::uint64_t served() const { return served_ ? served_->value() : 0; }
    std::uint64_t served_bytes() const { return served_bytes_ ? served_bytes_->value() : 0; }
    // Requests that arrived and were not served, reads not answered: 0
    // between calls.
    std::size_t outstanding() const { return arrived_.size() + pending_.size(); }

private:
    struct Arrived {   // server: a request that reached this node's NI
        unsigned file = 0;
        std::uint64_t offset = 0, bytes = 0;
        unsigned from = 0;
        std::uint32_t from_coord = 0;
        sc_core::sc_time at;   // its tail left the NI
    };
    struct Pending {   // requester: a command whose data are on their way
        unsigned char* out = nullptr;
        std::uint64_t bytes = 0, landed = 0;
        std::vector<bool> got;   // per data packet
        sc_core::sc_time last;   // latest landing
    };
    // Serve request `id` of node `from` (arrived already): the SSD reads the
    // blocks, the data packets go back. Returns when the last has left.
    sc_core::sc_time serve_request(unsigned from, std::uint64_t id);
    sc_core::sc_time send(tlm::tlm_generic_payload& gp, ExanetPacket& k, unsigned char* payload, unsigned len,
                          PacketType type, unsigned to, std::uint32_t to_coord, std::uint64_t id, std::uint64_t index,
                          std::uint64_t va, sc_core::sc_time head);
    // A numbered step of the narrated story, following what the calling
    // process is telling (the readahead that asked for the blocks).
    void step(sc_core::sc_time at, const char* name, const std::string& text) const;

    const SimContext& ctx_;
    std::string group_;
    unsigned node_;
    std::uint32_t coord_;
    std::uint32_t packet_bytes_;
    CpuCores& cpu_;
    Inject inject_;
    sc_core::sc_time request_cpu_, serve_cpu_;
    Tracer::Track track_;
    FileSystem* fs_ = nullptr;
    RemoteBlock* server_ = nullptr;
    bool serving_ = false;
    std::uint64_t next_id_ = 0;
    std::map<std::pair<unsigned, std::uint64_t>, Arrived> arrived_;   // (from, id)
    std::map<std::uint64_t, Pending> pending_;
    // Server: a requester's send is under way, whose call the request
    // reaches in (it then serves it itself); otherwise a request that
    // arrives is served at once. Requester: a data packet landed.
    bool in_requesters_call_ = false;
    std::map<std::pair<unsigned, std::uint64_t>, sc_core::sc_time> landed_requests_;   // served on arrival: when
    sc_core::sc_event landed_;
    Counter *reads_ = nullptr, *bytes_ = nullptr, *delivered_ = nullptr, *packets_in_ = nullptr;
    Histogram* latency_us_ = nullptr;
    Counter *served_ = nullptr, *served_bytes_ = nullptr, *packets_out_ = nullptr;
    Histogram* serve_us_ = nullptr;
};

}   // namespace vrdmasim
