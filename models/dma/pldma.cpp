// The Pldma module: its parameters, the wiring of its parts (registers,
// transmit scheduler, receiver, fault recovery, NetVM buffer; see
// pldma.hpp) and the decode of packets arriving from the network.
#include "models/dma/pldma.hpp"
#include "src/core/sim_now.hpp"

#include <cstring>
#include <stdexcept>

namespace vrdmasim {

using sc_core::sc_time;

namespace {
// This node's ExaNet coordinate, the source of every packet it sends.
std::uint32_t own_coord(const std::vector<std::uint32_t>& coord_of, unsigned node) {
    if (coord_of.size() <= node) throw std::logic_error("pldma: node has no coordinate");
    return coord_of[node];
}
}   // namespace

PldmaParams::PldmaParams() : set("dma", "PLDMA RDMA engine (ExaNeSt), one per node") {
    declare_datapath();
    declare_waits_and_latencies();
    declare_smmu_port();
    declare_design_choices();
}

// The data path: blocks, packets, channels and their queues.
void PldmaParams::declare_datapath() {
    block_size = set.size("block-size", "4KiB",
                          "bytes read from the source per memory request; each block is cut into packets "
                          "(*estimate*, a design parameter of the engine)")
                     .range("16B", "1MiB");
    packet_size = set.size("packet-size", "256B",
                           "largest payload of one ExaNet packet: 256 B, 18 flits with header and footer, the "
                           "largest packet the ExaNet switch buffers for (ExaNet switch RTL: input FIFO "
                           "back-pressure at one maximum packet of 18 flits); the header's size field would allow "
                           "up to 16 KiB - 1, but a packet must fit twice in ni.buffer to stream")
                      .range("16B", "16368B");
    block_buffers = set.integer("block-buffers", "2",
                                "blocks the engine can hold: the read of block k+n waits until block k is sent")
                        .range("1", "64");
    queue_depth = set.integer("queue-depth", "64", "descriptors one channel queues; a doorbell beyond it is refused")
                      .range("1", "65536");
    channels = set.integer("channels", "16",
                           "virtual channels, each a 4 KiB register page a process posts on without a system call "
                           "(the ExaNeSt controller offers 1024)")
                   .range("1", "1024");
    channel_blocks =
        set.integer("channel-blocks", "2",
                    "blocks a channel may have in flight per turn of the round-robin scheduler, which then "
                    "moves on to the next channel with work")
            .range("1", "1024");
}

// What the engine waits and buffers: the fault timeout, NetVM's kernel
// buffer, its setup time and register latency.
void PldmaParams::declare_waits_and_latencies() {
    fault_timeout =
        set.time("fault-timeout", "200us",
                 "fault-tolerant: a parked channel or a faulted receive whose fault got no outcome by then "
                 "retries (a second fault while FSR still holds the first is only FSR.MULTI in terminate mode)")
            .range("1us", "1s");
    netvm_buffer =
        set.size("netvm-buffer", "256KiB",
                 "NetVM receive (rdma.strategy = netvm): kernel buffer for packets whose destination page is "
                 "not resident; a full buffer holds further packets back through the link credits")
            .range("16KiB", "1GiB");
    setup_time = set.time("setup-time", "20ns",
                          "engine time to start a transfer after taking its descriptor (*calibrated*: three cycles of "
                          "the engine's 156.25 MHz clock; with the other defaults the 64 B one-hop pingpong gives the "
                          "prototype's 1.3 us, configs/exanest-prototype.ini)")
                     .range("0ps", "100us");
    mmio_latency =
        set.time("mmio-latency", "20ns", "register access latency inside the engine (*estimate*)").range("0ps", "10us");
}

// Its port to the SMMU: the TBU and AXI ID (its stream ID).
void PldmaParams::declare_smmu_port() {
    smmu_tbu = set.integer("smmu-tbu", "3",
                           "TBU the engine's AXI port feeds: HP0 -> TBU3, HP1/HP2 -> TBU4, HP3 -> TBU5, HPC0/1 -> TBU0 "
                           "(Xilinx UG1085); also bits [14:10] of its stream ID")
                   .range("0", "31");
    axi_id = set.integer("axi-id", "0",
                         "AXI ID of a channel's memory transactions at reset (and of the first "
                         "process's channels): bits [5:0] of the stream ID (Xilinx AR#69447; the master field [9:6] "
                         "is 0 for a PL port). Each channel's control word holds its own AXI ID; the kernel gives "
                         "process p's channels dma.axi-id + p")
                 .range("0", "63");
}

// The engine's design choices: fault tolerance, what a fault parks, event
// counters, ordered notifications.
void PldmaParams::declare_design_choices() {
    fault_tolerant =
        set.boolean("fault-tolerant", "true",
                    "terminate-mode SMMU faults are recovered instead of failing the transfer: a faulting "
                    "source read parks the transfer until the fault library's outcome (fault_resolved) and "
                    "re-reads; a faulting payload write is NACKed and the sender retransmits from that "
                    "sequence number once the receiver's fault is resolved. Default: the thesis's engine "
                    "(configs/thesis/base.ini); false: the original ExaNeSt engine, whose faulting transfers fail");
    park = set.choice("park", "channel", {"channel", "engine"},
                      "fault-tolerant: what a source-read fault stops until its outcome. channel: only the faulting "
                      "channel parks, the scheduler serves the others (the thesis's scheduling change); engine: the "
                      "whole transmit engine waits, as an engine with one in-order descriptor pipeline does (the "
                      "behaviour the thesis changed, kept to show the difference; *estimate* of that design, which "
                      "no published figure times)");
    event_counters =
        set.integer("event-counters", "64",
                    "event counters per channel page (EVENT_COUNTER[i] at 0x800 + 8 i, 64 bit): a write "
                    "with DESC_FLAGS bit 2 increments counter DESC_COUNTER of the receiving channel when it "
                    "has fully landed; a doorbell naming a counter beyond them is refused (*estimate*: the "
                    "page has room for 256; NetVM's interface gives a process several)")
            .range("1", "256");
    notify_window = set.integer("notify-window", "0",
                                "ordered notifications: the notifying writes (DESC_FLAGS bit 0 or 2) of one sender "
                                "node to one protection domain are delivered in doorbell order through a sequence "
                                "window of this many; a write starts only while it is fewer than this many beyond "
                                "the oldest one its receiver has not answered, and the receiver holds those that "
                                "land early (at most this many - 1 per sender and domain). 0: unordered, each "
                                "notification delivered when its write has landed (the ExaNeSt engine). "
                                "(*estimate*: NetVM's sequence window, whose size is a design parameter)")
                        .range("0", "4096");
}

void Pldma::declare_params(ParamRegistry& reg) { reg.add(params_of<PldmaParams>().set); }

Pldma::Pldma(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group, unsigned node,
             std::shared_ptr<const std::vector<std::uint32_t>> coord_of)
    : sc_module(name),
      mmio("mmio"),
      mem("mem"),
      net_out("net_out"),
      net_in("net_in"),
      node_(node),
      coord_table_(coord_of ? std::move(coord_of) : throw std::invalid_argument("Pldma: no table of node coordinates")),
      coord_of_(*coord_table_),
      params_(read_pldma_config(ctx.config)),
      trace_{ctx.tracer, ctx.tracer.track(group, "dma"), group + ".dma"},
      stats_(ctx.stats, std::string(this->name()) + "."),
      net_path_(net_out),
      send_windows_(params_.notify_window, stats_),
      order_(params_.notify_window, stats_, trace_,
             [this](const PendingNotification& n, sc_time& at) { receiver_.deliver(n, at); }),
      memory_(mem, stats_.smmu_faults),
      records_(memory_, params_, stats_),
      channels_(params_, stats_, node_, coord_of_.size(), send_windows_),
      control_(net_path_, node_, own_coord(coord_of_, node_), stats_, trace_, receiver_),
      atomics_(channels_, memory_, control_, params_, stats_, trace_),
      netvm_(memory_, receiver_, params_, stats_),
      receiver_(channels_, memory_, control_, records_, recovery_, netvm_, reads_, order_, params_, stats_, trace_),
      reads_(channels_, transmit_, receiver_, control_, stats_, trace_, node_, coord_of_),
      recovery_(channels_, transmit_, receiver_, records_, netvm_, control_, atomics_, params_, stats_, trace_),
      transmit_(channels_, memory_, net_path_, control_, records_, recovery_, reads_, send_windows_, params_, stats_,
                trace_, node_, coord_of_) {
    mmio.register_b_transport(this, &Pldma::mmio_transport);
    net_in.register_b_transport(this, &Pldma::net_transport);
    // The engine's threads, each spawned when it first has work
    // (core/lazy_thread.hpp): most nodes of a large torus never need some
    // of them, and each costs a stack.
    SC_HAS_PROCESS(Pldma);
    threads_.emplace_back(std::make_unique<LazyThread>("engine", channels_.doorbell(), [this] { transmit_.run(); }));
    threads_.emplace_back(
        std::make_unique<LazyThread>("control_thread", control_.queued(), [this] { control_.run(); }));
    threads_.emplace_back(std::make_unique<LazyThread>("atomic_thread", atomics_.queued(), [this] { atomics_.run(); }));
    if (params_.fault_tolerant) {
        // The watchdog stays a thread from the start: spawned later, its
        // timeouts would join the kernel's queue in another order among
        // others due at the same instant, and some halos' results would move.
        SC_THREAD(watchdog_thread);
        threads_.emplace_back(
            std::make_unique<LazyThread>("record_thread", records_.event(), [this] { records_.run(); }));
    }
}

void Pldma::enable_credits(StatRegistry& stats, std::uint64_t per_destination) {
    credits_.enable(stats, std::string(name()) + ".", static_cast<unsigned>(coord_of_.size()), per_destination,
                    [this](unsigned to, std::uint64_t bytes, sc_time at) {
                        ControlOut c;
                        c.kind = ControlKind::Credit;
                        c.node = to;
                        c.coord = coord_of_.at(to);
                        c.index = bytes;
                        c.at = at;
                        control_.queue(c);
                    });
    netvm_.set_credits(&credits_);
    transmit_.set_credits(&credits_);
}

void Pldma::connect(tlm::tlm_target_socket<>& socket, PacketTarget& target) {
    net_out.bind(socket);
    net_path_.direct(&target);
}

sc_time Pldma::send_block_packet(tlm::tlm_generic_payload& gp, sc_time head) {
    auto* p = gp.get_extension<ExanetPacket>();
    if (!p || (p->header.type != PacketType::BlockRequest && p->header.type != PacketType::BlockData))
        throw std::logic_error(std::string(name()) + ": send_block_packet of a packet that is not block I/O");
    const sc_time t0 = sim_now();
    head = max_time(head, t0);
    p->tail = max_time(p->tail, head);
    sc_time d = head - t0;
    net_path_.send(gp, *p, d);
    if (!gp.is_response_ok())
        throw std::logic_error(std::string(name()) + ": the network refused a block I/O packet for node " +
                               std::to_string(p->dst_node));
    return t0 + d;
}

void Pldma::net_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    auto* p = gp.get_extension<ExanetPacket>();
    if (!p) {
        stats_.transactions.inc();
        gp.set_response_status(tlm::TLM_GENERIC_ERROR_RESPONSE);
        return;
    }
    accept(gp, *p, delay);
}

bool Pldma::accept_may_wait() const {
    return !memory_may_wait_ || memory_may_wait_() || netvm_.enabled() || static_cast<bool>(block_fn_);
}

void Pldma::accept(tlm::tlm_generic_payload& gp, ExanetPacket& pkt, sc_time& delay) {
    stats_.transactions.inc();
    ExanetPacket* const p = &pkt;
    // The returned delay is relative to this time, the call's start, even
    // if the receive waited meanwhile (a stalled translation, NetVM's full
    // buffer): the convention of models/interconnect/link.hpp.
    const sc_time t0 = sim_now();
    const sc_time tail = max_time(p->tail, t0 + delay);
    sc_time done = tail;
    // Responses, control and notification packets: transfer id, status or
    // opcode word, packet index (and, notification, bytes).
    std::uint64_t id = 0;
    std::uint32_t word = 0, index = 0;
    const bool whole = gp.get_data_length() >= 16;
    if (p->header.type != PacketType::RdmaWrite && whole) {
        std::memcpy(&id, gp.get_data_ptr(), 8);
        std::memcpy(&word, gp.get_data_ptr() + 8, 4);
        std::memcpy(&index, gp.get_data_ptr() + 12, 4);
    }
    switch (p->header.type) {
    case PacketType::RdmaWrite: {
        if (data_fn_) data_fn_(*p, tail);
        const std::uint64_t buffered = netvm_.puts();
        done = receiver_.receive(gp, *p, tail);
        // NetVM credits: a packet written (or dropped) is placed now; a
        // buffered one when the kernel has copied it in (NetvmBuffer).
        if (credits_.active() && netvm_.puts() == buffered) credits_.placed(p->src_node, gp.get_data_length(), done);
        break;
    }
    case PacketType::ReadRequest:
        if (data_fn_) data_fn_(*p, tail);
        reads_.serve_request(*p, gp.get_data_ptr(), gp.get_data_length(), tail);
        break;
    // A NACK's and a retransmit request's fault number rides in the VA field.
    case PacketType::Response: transmit_.response(id, word, whole, tail, p->header.dst_va); break;
    case PacketType::Control:
        if (word == kControlCredit && credits_.active()) {
            credits_.returned(p->src_node, index, tail);
        } else if (word == kControlSkip && send_windows_.enabled() && gp.get_data_length() >= 24) {
            std::uint64_t nseq = 0;
            std::memcpy(&nseq, gp.get_data_ptr() + 16, 8);
            receiver_.skip_received(*p, nseq, tail);
        } else {
            recovery_.control_received(id, word, index, tail, p->story, p->header.dst_va);
        }
        break;
    case PacketType::AtomicRequest: atomics_.request(gp, *p, tail); break;
    case PacketType::BlockRequest:
    case PacketType::BlockData:
        if (block_fn_) done = block_fn_(gp, *p, tail);
        else stats_.rx_errors.inc();
        break;
    case PacketType::AtomicReply: {
        AtomicReplyWire r;
        if (gp.get_data_length() < sizeof r) {
            stats_.rx_errors.inc();
            break;
        }
        std::memcpy(&r, gp.get_data_ptr(), sizeof r);
        transmit_.atomic_reply(r.id, r.status, r.old, tail);
        break;
    }
    case PacketType::Completion: {
        // Notification packet: the transfer it names is complete.
        std::uint64_t bytes = 0;
        if (gp.get_data_length() >= 24) std::memcpy(&bytes, gp.get_data_ptr() + 16, 8);
        receiver_.notification_packet(*p, id, bytes, word == kStatusOk, static_cast<int>(index) - 1, done);
        break;
    }
    default: stats_.rx_errors.inc(); break;
    }
    delay = done > t0 ? done - t0 : sc_core::SC_ZERO_TIME;
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

}   // namespace vrdmasim
