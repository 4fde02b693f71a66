#include "src/sim/parallel/cut_mail.hpp"

#include <stdexcept>
#include <string>

namespace vrdmasim {

namespace {
enum class Kind : std::uint8_t { Packet = 1, Credit = 2 };
}

class CutMail::PacketOut : public PacketPort {
public:
    PacketOut(CutMail& mail, unsigned to) : mail_(mail), to_(to) {}
    void post(PacketMessage& m) override {
        Bytes& out = mail_.out_[to_];
        const std::size_t before = out.size();
        ByteWriter w(out);
        w.put(Kind::Packet);
        w.put(m.link);
        w.put(m.seq);
        w.put(m.serial);
        w.put(m.vc);
        w.put(m.flits);
        w.put(m.head.value());
        w.put(m.tail.value());
        w.put(m.header);
        w.put(m.footer);
        w.put(m.transfer);
        w.put(m.counter);
        w.put(m.nseq);
        w.put(m.src_node);
        w.put(m.dst_node);
        w.put(m.hops);
        w.put(m.injected.value());
        // The story goes on across the cut: its track as the writer finds
        // it among this rank's (docs/trace.md "Order and numbering").
        // A byte when there is none (a run that notes nothing).
        w.put(static_cast<std::uint8_t>(m.story ? 1 : 0));
        if (m.story) {
            const Tracer::Track track = Tracer::portable(mail_.rank_, m.story.track);
            w.put(m.story.id);
            w.put(track.pid);
            w.put(track.tid);
            w.put(m.story.at.value());
            w.put(m.story.noted.value());
            w.put(m.story.depth);
        }
        w.put(m.command);
        w.put(m.address);
        w.put_bytes(m.data.data(), m.data.size());
        ++mail_.packets_;
        mail_.bytes_ += out.size() - before;
    }

private:
    CutMail& mail_;
    unsigned to_;
};

class CutMail::CreditOut : public CreditPort {
public:
    CreditOut(CutMail& mail, unsigned to) : mail_(mail), to_(to) {}
    void post(const CreditMessage& c) override {
        Bytes& out = mail_.out_[to_];
        const std::size_t before = out.size();
        ByteWriter w(out);
        w.put(Kind::Credit);
        w.put(c.link);
        w.put(c.seq);
        w.put(c.vc);
        w.put(c.flits);
        w.put(c.at.value());
        ++mail_.credits_;
        mail_.bytes_ += out.size() - before;
    }

private:
    CutMail& mail_;
    unsigned to_;
};

CutMail::CutMail(unsigned ranks, unsigned rank) : out_(ranks), rank_(rank) {}

CutMail::~CutMail() = default;

PacketPort& CutMail::packets_to(unsigned to, std::uint32_t) {
    packet_ports_.push_back(std::make_unique<PacketOut>(*this, to));
    return *packet_ports_.back();
}

CreditPort& CutMail::credits_to(unsigned to, std::uint32_t) {
    credit_ports_.push_back(std::make_unique<CreditOut>(*this, to));
    return *credit_ports_.back();
}

std::vector<Bytes> CutMail::take() {
    std::vector<Bytes> out(out_.size());
    out.swap(out_);
    return out;
}

void CutMail::deliver(const std::vector<Bytes>& in) {
    using sc_core::sc_time;
    for (const Bytes& from : in) {
        ByteReader r(from);
        while (!r.done()) {
            const auto kind = r.get<Kind>();
            if (kind == Kind::Packet) {
                PacketMessage& m = in_;
                m.link = r.get<std::uint32_t>();
                m.seq = r.get<std::uint64_t>();
                m.serial = r.get<std::uint64_t>();
                m.vc = r.get<std::uint32_t>();
                m.flits = r.get<std::uint32_t>();
                m.head = sc_time::from_value(r.get<sc_dt::uint64>());
                m.tail = sc_time::from_value(r.get<sc_dt::uint64>());
                m.header = r.get<ExanetHeader>();
                m.footer = r.get<ExanetFooter>();
                m.transfer = r.get<std::uint64_t>();
                m.counter = r.get<std::int32_t>();
                m.nseq = r.get<std::uint64_t>();
                m.src_node = r.get<std::uint32_t>();
                m.dst_node = r.get<std::uint32_t>();
                m.hops = r.get<std::uint32_t>();
                m.injected = sc_time::from_value(r.get<sc_dt::uint64>());
                m.story = Tracer::Cause{};
                if (r.get<std::uint8_t>()) {
                    m.story.id = r.get<std::uint64_t>();
                    m.story.track.pid = r.get<int>();
                    m.story.track.tid = r.get<int>();
                    m.story.at = sc_time::from_value(r.get<sc_dt::uint64>());
                    m.story.noted = sc_time::from_value(r.get<sc_dt::uint64>());
                    m.story.depth = r.get<std::uint32_t>();
                }
                m.command = r.get<tlm::tlm_command>();
                m.address = r.get<std::uint64_t>();
                r.get_bytes(m.data);
                const auto it = far_.find(m.link);
                if (it == far_.end())
                    throw std::logic_error("a packet for cut link " + std::to_string(m.link) +
                                           ", whose far end is not on this rank");
                it->second->post(m);
            } else if (kind == Kind::Credit) {
                CreditMessage c;
                c.link = r.get<std::uint32_t>();
                c.seq = r.get<std::uint64_t>();
                c.vc = r.get<std::uint32_t>();
                c.flits = r.get<std::uint32_t>();
                c.at = sc_time::from_value(r.get<sc_dt::uint64>());
                const auto it = near_.find(c.link);
                if (it == near_.end())
                    throw std::logic_error("a credit for cut link " + std::to_string(c.link) +
                                           ", whose near end is not on this rank");
                it->second->post(c);
            } else {
                throw std::logic_error("a message between ranks of unknown kind");
            }
        }
    }
}

}   // namespace vrdmasim
