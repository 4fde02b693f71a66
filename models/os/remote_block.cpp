// RemoteBlock (remote_block.hpp): file read commands from a node without the
// SSD to the board's SSD node and back, as ExaNet packets through the real
// network interfaces, routers and board links.
#include "models/os/remote_block.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

#include "src/core/metrics.hpp"

namespace vrdmasim {

using sc_core::sc_time;

namespace {
std::string us(sc_time t) { return std::to_string(to_us(t)); }
}   // namespace

void RemoteBlock::declare_metrics(MetricRegistry& reg) {
    const auto present = [](const Config& c) { return FileSystem::configured(c); };
    reg.sum_counters("remote_file_reads",
                     "File read commands (page-cache fills) that nodes without the SSD sent to their board's SSD "
                     "node over the intra-board network.",
                     {"remote_fs.reads"}, present);
    reg.sum_counters("remote_file_bytes", "Bytes of file data delivered by the board network to nodes without the SSD.",
                     {"remote_fs.bytes_delivered"}, present);
    reg.sum_counters("remote_file_served", "Remote file read commands the SSD nodes served.", {"remote_fs.served"},
                     present);
    reg.quantile("remote_file_read_p50", "us",
                 "Median remote file read: request sent to last data packet landed (request, SSD and data over the "
                 "links, queueing included).",
                 "remote_fs.latency", 0.5, present);
}

RemoteBlock::RemoteBlock(const SimContext& ctx, const std::string& group, unsigned node, std::uint32_t coord,
                         std::uint32_t packet_bytes, CpuCores& cpu, Inject inject)
    : ctx_(ctx),
      group_(group),
      node_(node),
      coord_(coord),
      packet_bytes_(packet_bytes),
      cpu_(cpu),
      inject_(std::move(inject)),
      request_cpu_(ctx.config[params_of<FsParams>().remote_request]),
      serve_cpu_(ctx.config[params_of<FsParams>().remote_serve]),
      track_(ctx.tracer.track(group, "ssd")) {
    if (packet_bytes_ == 0 || packet_bytes_ > kMaxPacketPayload)
        throw std::logic_error("RemoteBlock: a data packet of " + std::to_string(packet_bytes_) + " bytes");
}

void RemoteBlock::serve(FileSystem& fs) {
    if (server_) throw std::logic_error("RemoteBlock: " + group_ + " both reads remotely and serves");
    if (serving_) return;
    serving_ = true;
    fs_ = &fs;
    const std::string p = group_ + ".remote_fs.";
    served_ = &ctx_.stats.counter(p + "served", "", "remote file read commands served for other nodes of the board");
    served_bytes_ = &ctx_.stats.counter(p + "served_bytes", "B", "bytes read from the SSD and sent to other nodes");
    packets_out_ = &ctx_.stats.counter(p + "packets_out", "", "data packets sent to other nodes");
    serve_us_ = &ctx_.stats.histogram(p + "serve_latency", "us",
                                      "request landed to last data packet sent (server CPU, SSD queue and read, "
                                      "NI back-pressure)");
}

void RemoteBlock::connect(RemoteBlock& server, FileSystem& fs) {
    if (serving_) throw std::logic_error("RemoteBlock: " + group_ + " both serves and reads remotely");
    if (!server.serving_ || &server == this)
        throw std::logic_error("RemoteBlock: " + group_ + " connected to a node that does not serve");
    server_ = &server;
    fs_ = &fs;
    const std::string p = group_ + ".remote_fs.";
    reads_ = &ctx_.stats.counter(p + "reads", "", "file read commands sent to the SSD's node");
    bytes_ = &ctx_.stats.counter(p + "bytes", "B", "bytes those commands asked for");
    delivered_ = &ctx_.stats.counter(p + "bytes_delivered", "B", "bytes their data packets delivered");
    packets_in_ = &ctx_.stats.counter(p + "packets_in", "", "data packets received");
    latency_us_ = &ctx_.stats.histogram(p + "latency", "us", "request sent to last data packet landed");
}

std::string RemoteBlock::source() const {
    return server_ ? "the SSD of " + server_->group_ + " over the board network" : "nowhere";
}

void RemoteBlock::step(sc_time at, const char* name, const std::string& text) const {
    if (ctx_.tracer.noting()) ctx_.tracer.note(Tracer::Track{}, name, at, sc_core::SC_ZERO_TIME, group_, text);
}

sc_time RemoteBlock::send(tlm::tlm_generic_payload& gp, ExanetPacket& k, unsigned char* payload, unsigned len,
                          PacketType type, unsigned to, std::uint32_t to_coord, std::uint64_t id, std::uint64_t index,
                          std::uint64_t va, sc_time head) {
    k.header = ExanetHeader{};
    k.header.type = type;
    k.header.dst_coord = to_coord;
    k.header.size = static_cast<std::uint16_t>(len);
    k.header.dst_va = va;
    k.footer = ExanetFooter{};
    k.footer.seq = static_cast<std::uint16_t>(index & 0x3fff);
    k.footer.src_coord = coord_;
    k.transfer = id;
    k.src_node = node_;
    k.dst_node = to;
    k.hops = 0;
    k.tail = head;
    gp.set_command(tlm::TLM_WRITE_COMMAND);
    gp.set_address(va);
    gp.set_data_ptr(payload);
    gp.set_data_length(len);
    gp.set_streaming_width(len);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    return inject_(gp, head);
}

sc_time RemoteBlock::read(unsigned file, std::uint64_t offset, std::uint64_t len, unsigned char* out, sc_time at) {
    if (!server_) throw std::logic_error("RemoteBlock::read: " + group_ + " is not connected to an SSD node");
    if (len == 0 || offset % FileSystem::kPage != 0 || len % FileSystem::kPage != 0 || offset + len > fs_->size(file) ||
        offset + len < offset)
        throw std::logic_error("RemoteBlock::read: [" + std::to_string(offset) + ", +" + std::to_string(len) +
                               ") is not whole blocks of file " + std::to_string(file));
    // The request cannot leave before the present.
    const sc_time issue = max_time(at, sc_core::sc_time_stamp());
    const std::uint64_t id = ++next_id_;
    Pending& pend = pending_[id];
    pend.out = out;
    pend.bytes = len;
    pend.got.assign(static_cast<std::size_t>((len + packet_bytes_ - 1) / packet_bytes_), false);
    reads_->inc();
    bytes_->inc(len);

    // The request packet: to the SSD's node, whose NI hands it to its server.
    unsigned char req[kRequestBytes] = {};
    const std::uint64_t words[4] = {id, file, offset, len};
    std::memcpy(req, words, sizeof words);
    {
        tlm::tlm_generic_payload gp;
        auto* k = new ExanetPacket;
        gp.set_extension(k);   // freed with gp
        server_->in_requesters_call_ = true;
        send(gp, *k, req, kRequestBytes, PacketType::BlockRequest, server_->node_, server_->coord_, id, 0, 0, issue);
        server_->in_requesters_call_ = false;
    }
    const auto key = std::make_pair(node_, id);
    sc_time landed_at_server = sc_core::sc_max_time();
    if (server_->arrived_.count(key)) {
        // Delivered in the call: the server serves it in this one too.
        landed_at_server = server_->arrived_.at(key).at;
        server_->serve_request(node_, id);
    } else {
        // Delivered later (exact time order): the server serves it when it
        // arrives; its data land meanwhile.
        while (pending_.at(id).landed < len) sc_core::wait(landed_);
        auto l = server_->landed_requests_.find(key);
        if (l == server_->landed_requests_.end())
            throw std::logic_error("RemoteBlock: read " + std::to_string(id) + " answered, its request never served");
        landed_at_server = l->second;
        server_->landed_requests_.erase(l);
    }

    // Every byte asked for came back, once; the pages are ready when the
    // last data packet has landed.
    auto it = pending_.find(id);
    if (it == pending_.end()) throw std::logic_error("RemoteBlock: read " + std::to_string(id) + " lost");
    const Pending p = it->second;
    pending_.erase(it);
    if (p.landed != p.bytes || !std::all_of(p.got.begin(), p.got.end(), [](bool g) { return g; }))
        throw std::logic_error("RemoteBlock: " + group_ + " read " + std::to_string(id) + " of " +
                               std::to_string(p.bytes) + " bytes answered with " + std::to_string(p.landed));
    const sc_time done = p.last;
    if (done <= issue) throw std::logic_error("RemoteBlock: data landed before the request was sent");
    latency_us_->add(to_us(done - issue));
    if (ctx_.tracer.enabled())
        ctx_.tracer.async_span(track_, "remote file read", reads_->value(), issue, done,
                               {{"server", Tracer::json_string(server_->group_)},
                                {"file", Tracer::json_number(file)},
                                {"offset", Tracer::json_number(offset)},
                                {"bytes", Tracer::json_number(len)},
                                {"request_landed_us", Tracer::json_number(to_us(landed_at_server))}});
    step(issue, "remote file read",
         "remote file read: " + group_ + " -> SSD on " + server_->group_ + ", file " + std::to_string(file) + " [" +
             std::to_string(offset) + ", +" + std::to_string(len) + ") " + std::to_string(len) +
             " bytes; request landed at " + us(landed_at_server) + " us, last data packet at " + us(done) + " us");
    return done;
}

sc_time RemoteBlock::serve_request(unsigned from, std::uint64_t id) {
    if (!serving_) throw std::logic_error("RemoteBlock: " + group_ + " asked to serve but holds no SSD");
    auto it = arrived_.find({from, id});
    if (it == arrived_.end())
        throw std::logic_error("RemoteBlock: " + group_ + " to serve request " + std::to_string(id) + " of node " +
                               std::to_string(from) + ", which never arrived");
    const Arrived r = it->second;
    arrived_.erase(it);
    // The server's kernel takes the command and submits it to the SSD (its
    // cores, shared with the node's processes); the SSD reads the blocks in
    // the same queue and channel as local file reads and swap.
    const sc_time start =
        cpu_.run("remote-fs", r.at, serve_cpu_, group_ + " remote file read for node" + std::to_string(from)).end;
    std::vector<unsigned char> bytes(r.bytes);
    const sc_time ssd_done = fs_->read(r.file, r.offset, r.bytes, bytes.data(), start);
    // The data go back as packets of at most packet_bytes, back to back
    // through this node's NI.
    tlm::tlm_generic_payload gp;
    auto* k = new ExanetPacket;
    gp.set_extension(k);
    sc_time head = ssd_done;
    std::uint64_t index = 0;
    for (std::uint64_t off = 0; off < r.bytes; off += packet_bytes_, ++index) {
        const auto n = static_cast<unsigned>(std::min<std::uint64_t>(packet_bytes_, r.bytes - off));
        k->footer.first = off == 0;
        head = send(gp, *k, bytes.data() + off, n, PacketType::BlockData, r.from, r.from_coord, id, index, off, head);
        packets_out_->inc();
    }
    served_->inc();
    served_bytes_->inc(r.bytes);
    serve_us_->add(to_us(head - r.at));
    if (ctx_.tracer.enabled())
        ctx_.tracer.async_span(track_, "serve remote read", served_->value(), r.at, head,
                               {{"requester", Tracer::json_number(from)},
                                {"file", Tracer::json_number(r.file)},
                                {"bytes", Tracer::json_number(r.bytes)},
                                {"ssd_done_us", Tracer::json_number(to_us(ssd_done))}});
    step(r.at, "serve remote read",
         "served remote file read of node" + std::to_string(from) + ": file " + std::to_string(r.file) + " [" +
             std::to_string(r.offset) + ", +" + std::to_string(r.bytes) + ") " + std::to_string(r.bytes) +
             " bytes, SSD done at " + us(ssd_done) + " us, " + std::to_string(index) + " data packets sent by " +
             us(head) + " us");
    return head;
}

sc_time RemoteBlock::receive(tlm::tlm_generic_payload& gp, const ExanetPacket& p, sc_time tail) {
    if (p.header.type == PacketType::BlockRequest) {
        if (!serving_)
            throw std::logic_error("RemoteBlock: " + group_ + " received a file read request but holds no SSD");
        if (gp.get_data_length() < kRequestBytes) throw std::logic_error("RemoteBlock: a short file read request");
        std::uint64_t words[4];
        std::memcpy(words, gp.get_data_ptr(), sizeof words);
        if (words[0] != p.transfer) throw std::logic_error("RemoteBlock: request id and transfer differ");
        Arrived a;
        a.file = static_cast<unsigned>(words[1]);
        a.offset = words[2];
        a.bytes = words[3];
        a.from = p.src_node;
        a.from_coord = p.footer.src_coord;
        a.at = tail;
        if (!arrived_.emplace(std::make_pair(p.src_node, p.transfer), a).second)
            throw std::logic_error("RemoteBlock: request " + std::to_string(p.transfer) + " of node " +
                                   std::to_string(p.src_node) + " arrived twice");
        // Not in its requester's call (the network delivered it later):
        // served now, by the thread that delivered it.
        if (!in_requesters_call_) {
            landed_requests_[std::make_pair(p.src_node, p.transfer)] = tail;
            serve_request(p.src_node, p.transfer);
        }
        return tail;
    }
    if (p.header.type != PacketType::BlockData) throw std::logic_error("RemoteBlock: not a block packet");
    auto it = pending_.find(p.transfer);
    if (it == pending_.end())
        throw std::logic_error("RemoteBlock: " + group_ + " got data for read " + std::to_string(p.transfer) +
                               ", which is not outstanding (answered twice, or never asked)");
    Pending& pend = it->second;
    const std::uint64_t off = p.header.dst_va, len = gp.get_data_length();
    const std::uint64_t index = off / packet_bytes_;
    if (off % packet_bytes_ != 0 || off + len > pend.bytes || index >= pend.got.size() || pend.got[index])
        throw std::logic_error("RemoteBlock: data packet at " + std::to_string(off) + " of read " +
                               std::to_string(p.transfer) + " is out of place or a second copy");
    pend.got[index] = true;
    std::memcpy(pend.out + off, gp.get_data_ptr(), len);   // into this node's buffer (the page frames)
    pend.landed += len;
    pend.last = max_time(pend.last, tail);
    if (pend.landed == pend.bytes) landed_.notify(sc_core::SC_ZERO_TIME);
    packets_in_->inc();
    delivered_->inc(len);
    return tail;
}

}   // namespace vrdmasim
