// Links in exact time order (hop_link.cpp, router.link-order = exact): two
// packets that reach one output link at the same time are served in the
// model's order (the link numbers and serials), whichever sender SystemC
// runs first; a credit comes back a link latency after the far end frees
// the space; a sender whose queue is full waits for a start. Each TEST_CASE
// is its own elaboration (ctest runs each in its own process).
#include <catch2/catch.hpp>

#include <algorithm>
#include <functional>
#include <memory>

#include "packet_bench.hpp"

using namespace vrdmasim;
using namespace vrdmasim_test;
using sc_core::sc_start;

namespace {

// Two sources, each with its own injection link, into one router whose one
// output link leads to a sink; every link served by one HopQueue. The
// sources are made in the order `a_first` says (SystemC runs same-time
// processes in that order here), the links always enrol a's first.
struct Merge {
    NetEnv env;
    HopQueue q{"hops"};
    std::unique_ptr<PacketSource> a, b;
    Link in_a{"in_a", env.ctx, link_params(20e9, ns(20), 64), "node0", "a->router"};
    Link in_b{"in_b", env.ctx, link_params(20e9, ns(20), 64), "node0", "b->router"};
    Router router{"router", env.ctx};
    Link out{"out", env.ctx, link_params(16e9, ns(150), 64), "node0", "link->node7"};
    PacketSink sink{"sink"};

    explicit Merge(bool a_first) {
        auto one = [](unsigned src) {
            return [src](PacketSource& s) {
                sc_core::wait(ns(100));
                PacketSpec p;
                p.src = src;
                p.dst = 7;
                s.send(p);
            };
        };
        if (a_first) {
            a = std::make_unique<PacketSource>("a", one(1));
            b = std::make_unique<PacketSource>("b", one(2));
        } else {
            b = std::make_unique<PacketSource>("b", one(2));
            a = std::make_unique<PacketSource>("a", one(1));
        }
        a->out.bind(in_a.in);
        b->out.bind(in_b.in);
        a->path.direct(&in_a);
        b->path.direct(&in_b);
        in_a.connect(router);
        in_b.connect(router);
        router.out.bind(out.in);
        router.set_output_link(0, &out);
        router.set_route(7, 0);
        router.set_input_buffer(0, 64, 1);
        router.set_input_buffer(1, 64, 1);
        out.connect(sink.in, sink);
        in_a.use_hops(q);
        in_b.use_hops(q);
        out.use_hops(q);
    }
};

}   // namespace

// Both heads reach the output link at the same time (equal links, one
// router): a's, whose injection link enrolled first, goes first, whichever
// sender was made (and runs) first.
void check_merge(bool a_first) {
    Merge m(a_first);
    sc_start();
    REQUIRE(m.sink.arrivals.size() == 2);
    CHECK(m.sink.arrivals[0].src == 1);
    CHECK(m.sink.arrivals[1].src == 2);
    // The second started when the first's tail had left: 18 flits at 16 Gb/s.
    CHECK(m.sink.arrivals[1].head - m.sink.arrivals[0].head == ns(144));
    for (const auto& x : m.sink.arrivals) CHECK(x.data_ok);
    CHECK(m.q.packets_in_flight() == 0);
    CHECK(m.out.exact_waiting() == 0);
    CHECK(m.out.exact_credits_out() == 0);
}

TEST_CASE("exact links: same-time packets from two inputs leave in the model's order (a's sender first)",
          "[link][exact]") {
    check_merge(true);
}

TEST_CASE("exact links: same-time packets from two inputs leave in the model's order (b's sender first)",
          "[link][exact]") {
    check_merge(false);
}

namespace {

// One link from a sender to a far end whose buffer holds one 256 B packet
// (18 flits, and so does the sender's queue), freed 1 us after its tail
// arrives; `script` sends. The far end says whether it may wait.
struct OneLink {
    NetEnv env;
    HopQueue q{"hops"};
    Link link{"link", env.ctx, link_params(16e9, ns(150), 18), "node0", "link->node1"};
    PacketSink sink{"sink"};
    PacketSource src;

    OneLink(std::function<void(PacketSource&)> script, bool may_wait) : src("src", std::move(script)) {
        sink.may_wait = may_wait;
        sink.free_at = [](const PacketSink::Arrival& a) { return a.tail + us(1); };
        src.out.bind(link.in);
        src.path.direct(&link);
        link.connect(sink.in, sink);
        link.use_hops(q);
    }
    // Where packet k started on the wire.
    sc_time start(unsigned k) const { return sink.arrivals[k].head - link.flit_time() - ns(150); }
};

}   // namespace

TEST_CASE(
    "exact links: a credit comes back a link latency after the far end frees the space, and a full queue "
    "makes its sender wait",
    "[link][exact][credits]") {
    std::vector<sc_time> returned;
    OneLink one(
        [&](PacketSource& s) {
            for (unsigned k = 0; k < 3; ++k) {
                PacketSpec p;
                p.seq = k;
                returned.push_back(s.send(p).credit);
            }
        },
        true);
    auto& sink = one.sink;
    auto& link = one.link;
    auto& q = one.q;
    sc_start();
    REQUIRE(sink.arrivals.size() == 3);
    // Each next packet starts when the last one's credit is back: its space
    // freed (tail + 1 us) plus the link's 150 ns on the way back.
    for (unsigned k = 1; k < 3; ++k) {
        const sc_time freed = sink.arrivals[k - 1].free;
        const sc_time start = sink.arrivals[k].head - link.flit_time() - ns(150);
        CHECK(start == freed + ns(150));
    }
    // The sender's queue holds one packet's flits (the far buffer's): the
    // third call returned only once the second had started, so its
    // answer is after the second's start.
    const sc_time second_start = sink.arrivals[1].head - link.flit_time() - ns(150);
    CHECK(returned[2] > second_start);
    CHECK(one.env.counter("link.packets") == 3);
    CHECK(q.packets_in_flight() == 0);
    CHECK(link.exact_credits_out() == 0);
}

TEST_CASE(
    "exact links: an interface that cannot wait is called as the queue serves, ahead of the kernel, "
    "and the run reaches its last head",
    "[link][exact][credits]") {
    // The credit test's link and far end, whose accept says it cannot wait:
    // the same starts, each packet handed over before the kernel is at its
    // head (a loosely timed call, its head the kernel's time plus the delay).
    OneLink one(
        [](PacketSource& s) {
            for (unsigned k = 0; k < 3; ++k) {
                PacketSpec p;
                p.seq = k;
                s.send(p);
            }
        },
        false);
    auto& sink = one.sink;
    sc_start();
    REQUIRE(sink.arrivals.size() == 3);
    for (unsigned k = 1; k < 3; ++k) CHECK(one.start(k) == sink.arrivals[k - 1].free + ns(150));
    unsigned ahead = 0;
    for (const auto& a : sink.arrivals) ahead += a.called < a.head ? 1 : 0;
    CHECK(ahead > 0);
    // Nothing happens after the last packet's head but its delivery: the
    // kernel still gets there.
    CHECK(sc_core::sc_time_stamp() >= sink.arrivals.back().head);
    CHECK(one.q.packets_in_flight() == 0);
    CHECK(one.link.exact_credits_out() == 0);
}

TEST_CASE(
    "exact links: each packet starts at the later of its head, the wire's end and the credits it needs, "
    "credits back in any order",
    "[link][exact][credits]") {
    // A far buffer of three packets, whose space the far end frees 0.2 or
    // 3 us after a tail, alternately: credits come back out of the order
    // of their packets, some after the last on the way, some before. Each
    // start must be exactly where the model puts it, computed here from
    // the arrivals alone: its head as offered, the wire's end (the last
    // packet's), and the time by which at most two earlier packets' credits
    // are still out (each back a latency after its space is freed). The
    // latency, 1 us, is longer than three packets' time on the wire: a
    // packet's credits are given (at the far end's taking of an earlier
    // one) after it has come first, so its serving comes from the credit
    // that completes them. A serving missed or late there would start a
    // packet late.
    NetEnv env;
    HopQueue q{"hops"};
    Link link{"link", env.ctx, link_params(16e9, us(1), 54), "node0", "link->node1"};
    PacketSink sink{"sink"};
    const unsigned kPackets = 12;
    PacketSource src("src", [](PacketSource& s) {
        for (unsigned k = 0; k < kPackets; ++k) {
            PacketSpec p;
            p.seq = k;
            s.send(p);
        }
    });
    sink.may_wait = false;
    sink.free_at = [](const PacketSink::Arrival& a) { return a.tail + (a.seq % 2 ? us(3) : ns(200)); };
    src.out.bind(link.in);
    src.path.direct(&link);
    link.connect(sink.in, sink);
    link.use_hops(q);
    sc_start();
    REQUIRE(sink.arrivals.size() == kPackets);
    REQUIRE(src.sent.size() == kPackets);
    std::vector<sc_time> credit_back;
    unsigned credit_bound = 0;
    for (unsigned k = 0; k < kPackets; ++k) {
        const auto& a = sink.arrivals[k];
        REQUIRE(a.seq == k);
        REQUIRE(a.flits == 18);
        const sc_time start = a.head - link.flit_time() - us(1);
        sc_time expect = src.sent[k].head;
        if (k > 0) expect = std::max(expect, sink.arrivals[k - 1].tail - us(1));   // the wire's end
        if (k >= 3) {
            std::vector<sc_time> sorted = credit_back;
            std::sort(sorted.begin(), sorted.end());
            if (sorted[k - 3] > expect) ++credit_bound;
            expect = std::max(expect, sorted[k - 3]);
        }
        INFO("packet " << k);
        CHECK(start == expect);
        credit_back.push_back(a.free + us(1));
    }
    // Some packets waited for a credit, and credits came back out of the
    // order they were given in.
    CHECK(credit_bound > 0);
    unsigned out_of_order = 0;
    for (unsigned k = 1; k < kPackets; ++k) out_of_order += credit_back[k] < credit_back[k - 1] ? 1 : 0;
    CHECK(out_of_order > 0);
    CHECK(link.exact_credits_out() == 0);
    CHECK(q.packets_in_flight() == 0);
}

TEST_CASE("exact links: a full queue's sender goes on at the later of the start that makes room and its head",
          "[link][exact][credits]") {
    std::vector<sc_time> back;   // the sender's time when each call returned
    OneLink one(
        [&](PacketSource& s) {
            // 0 at once; 1 with its head 500 ns on (0 starts before then:
            // room at its head); 2 with its head now (1 starts after it:
            // room then).
            for (unsigned k = 0; k < 3; ++k) {
                PacketSpec p;
                p.seq = k;
                if (k == 1) p.head_delay = ns(500);
                s.send(p);
                back.push_back(sc_core::sc_time_stamp());
            }
        },
        true);
    sc_start();
    REQUIRE(one.sink.arrivals.size() == 3);
    auto start = [&](unsigned k) { return one.start(k); };
    CHECK(back[0] == sc_core::SC_ZERO_TIME);   // room at once: no wait
    CHECK(start(0) == sc_core::SC_ZERO_TIME);
    CHECK(back[1] == ns(500));   // 0 started at 0, before 1's head: on at the head
    CHECK(start(1) > back[1]);   // 1 waits for 0's credit
    CHECK(back[2] == start(1));   // 2's head was passed: on at the start that made room
    CHECK(one.q.packets_in_flight() == 0);
    CHECK(one.link.exact_credits_out() == 0);
}

namespace {

// PLDMA's way of sending (models/dma/transmit.cpp): each packet's head the
// later of its data and when the link said the last one could be out. With
// `train`, a full queue's packet is kept and the next ones go on from the
// link (vrdmasim::PacketTrain), else the thread waits for room each time.
struct TrainSender : sc_core::sc_module, PacketTrain {
    tlm_utils::simple_initiator_socket<TrainSender> out;
    PacketOut path{out};
    bool train;
    unsigned src;
    std::vector<sc_time> ready;   // each packet's data, absolute
    sc_time free;
    unsigned k = 0, nexts = 0, returns = 0;
    sc_time done;   // when the thread went on after its last packet
    std::vector<unsigned char> data;
    ExanetPacket pkt;
    tlm::tlm_generic_payload gp;

    TrainSender(sc_core::sc_module_name n, bool train, unsigned src, std::vector<sc_time> ready)
        : sc_module(n), out("out"), train(train), src(src), ready(std::move(ready)) {
        SC_HAS_PROCESS(TrainSender);
        SC_THREAD(run);
    }
    bool send_one() {
        data = payload_bytes(256, src, k);
        pkt = ExanetPacket{};
        pkt.header.size = 256;
        pkt.header.dst_coord = 1;
        pkt.header.dst_va = 0x1000 + 256ull * k;
        pkt.footer.seq = static_cast<std::uint16_t>(k);
        pkt.src_node = src;
        pkt.dst_node = 1;
        const sc_time now = sc_core::sc_time_stamp(), head = std::max(free, ready[k]);
        pkt.tail = head;
        gp.set_command(tlm::TLM_WRITE_COMMAND);
        gp.set_address(pkt.header.dst_va);
        gp.set_data_ptr(data.data());
        gp.set_data_length(256);
        gp.set_streaming_width(256);
        gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
        sc_time d = head > now ? head - now : sc_core::SC_ZERO_TIME;
        bool kept = false;
        if (train) kept = path.send_from(gp, pkt, d, *this);
        else path.send(gp, pkt, d);
        free = now + d;
        return kept;
    }
    bool next(sc_time f) override {
        free = f;
        ++nexts;
        if (++k == ready.size()) return false;
        send_one();
        return true;
    }
    void run() {
        while (k < ready.size()) {
            const bool kept = send_one();
            ++returns;
            if (kept) break;
            ++k;
        }
        done = sc_core::sc_time_stamp();
    }
};

// Two such senders, one waiting and one a train, each on a link of its own
// to a sink of its own (independent), served by one HopQueue.
struct Trains {
    NetEnv env;
    HopQueue q{"hops"};
    TrainSender wait, train;
    Link lw{"lw", env.ctx, link_params(16e9, ns(150), 18), "node0", "wait->node1"};
    Link lt{"lt", env.ctx, link_params(16e9, ns(150), 18), "node0", "train->node1"};
    PacketSink sw{"sw"}, st{"st"};
    explicit Trains(const std::vector<sc_time>& ready) : wait("w", false, 0, ready), train("t", true, 0, ready) {
        for (PacketSink* s : {&sw, &st}) s->free_at = [](const PacketSink::Arrival& a) { return a.tail + us(1); };
        wait.out.bind(lw.in);
        train.out.bind(lt.in);
        wait.path.direct(&lw);
        train.path.direct(&lt);
        lw.connect(sw.in, sw);
        lt.connect(st.in, st);
        lw.use_hops(q);
        lt.use_hops(q);
    }
};

}   // namespace

TEST_CASE("exact links: a full queue's packets sent as a train start as its waiting sender's, with one wake-up",
          "[link][exact][credits]") {
    // Eight packets of 256 B, the queue holding one: each waits for a start.
    // Packet 4's data is ready 5 us on, after the start that makes room for
    // it: taken in then (an Admit event ahead of its time's others); the
    // last's at 20 us, and the thread goes on then.
    std::vector<sc_time> ready(8, sc_core::SC_ZERO_TIME);
    ready[4] = us(5);
    ready[7] = us(20);
    Trains t(ready);
    sc_start();
    REQUIRE(t.sw.arrivals.size() == 8);
    REQUIRE(t.st.arrivals.size() == 8);
    for (unsigned k = 0; k < 8; ++k) {
        CHECK(t.st.arrivals[k].seq == k);
        CHECK(t.st.arrivals[k].head == t.sw.arrivals[k].head);
        CHECK(t.st.arrivals[k].data_ok);
    }
    CHECK(t.sw.arrivals[4].head > us(5));
    // The train's thread goes on when its waiting twin does: once the last
    // packet is taken in, at the later of the start making room and its head.
    CHECK(t.sw.arrivals[6].head < us(20));
    CHECK(t.wait.done == us(20));
    CHECK(t.train.done == t.wait.done);
    // The waiting sender's thread returned from each packet; the train's
    // from the one the queue kept first, the link sending the rest.
    CHECK(t.wait.returns == 8);
    CHECK(t.train.returns == 2);
    CHECK(t.train.nexts == 7);
    CHECK(t.q.packets_in_flight() == 0);
    CHECK(t.lt.exact_credits_out() == 0);
}

namespace {

// Two senders into a router whose output link is slower than their
// injection links: a's injection link's far buffer holds one packet, so
// its credits, each back only when the slow link has taken a packet on,
// pace it. `cut`: a's injection link reaches the router by messages
// (hop_cut.hpp, in one process), as a board link cut between two ranks.
// Served by `q` (one a kernel: two would each wait for the other's deltas).
struct CutChain {
    NetEnv env;
    HopQueue& q;
    PacketSource a, b;
    Link in_a, in_b;
    Router router;
    Link out;
    PacketSink sink;

    CutChain(HopQueue& hops, const std::string& p, bool cut)
        : q(hops),
          a((p + "a").c_str(), send(1)),
          b((p + "b").c_str(), send(2)),
          in_a((p + "in_a").c_str(), env.ctx, link_params(20e9, ns(20), 18), "node0", "a->router"),
          in_b((p + "in_b").c_str(), env.ctx, link_params(20e9, ns(20), 64), "node0", "b->router"),
          router((p + "router").c_str(), env.ctx),
          out((p + "out").c_str(), env.ctx, link_params(4e9, ns(150), 64), "node0", "link->node7"),
          sink((p + "sink").c_str()) {
        a.out.bind(in_a.in);
        b.out.bind(in_b.in);
        a.path.direct(&in_a);
        b.path.direct(&in_b);
        in_a.connect(router);
        in_b.connect(router);
        router.out.bind(out.in);
        router.set_output_link(0, &out);
        router.set_route(7, 0);
        router.set_input_buffer(0, 18, 1);
        router.set_input_buffer(1, 64, 1);
        out.connect(sink.in, sink);
        in_a.use_hops(q);
        in_b.use_hops(q);
        out.use_hops(q);
        if (cut) in_a.cut_hops_here();
    }
    static std::function<void(PacketSource&)> send(unsigned src) {
        return [src](PacketSource& s) {
            sc_core::wait(ns(100));
            for (unsigned k = 0; k < 4; ++k) {
                PacketSpec p;
                p.src = src;
                p.dst = 7;
                p.seq = k;
                s.send(p);
            }
        };
    }
};

}   // namespace

TEST_CASE("exact links: a link whose far end is reached by messages (cut between ranks) changes no arrival",
          "[link][exact][cut]") {
    HopQueue q("hops");
    CutChain whole(q, "whole_", false), cut(q, "cut_", true);
    sc_start();
    REQUIRE(whole.sink.arrivals.size() == 8);
    REQUIRE(cut.sink.arrivals.size() == 8);
    for (std::size_t i = 0; i < 8; ++i) {
        const auto &w = whole.sink.arrivals[i], &c = cut.sink.arrivals[i];
        INFO("arrival " << i);
        CHECK(c.src == w.src);
        CHECK(c.seq == w.seq);
        CHECK(c.head == w.head);
        CHECK(c.tail == w.tail);
        CHECK(c.hops == w.hops);
        CHECK(c.data_ok);
    }
    // a's packets waited for credits: the credits crossed back as messages.
    CHECK(whole.env.scalar("whole_in_a.credit_stall_time") > 0);
    CHECK(cut.env.scalar("cut_in_a.credit_stall_time") == whole.env.scalar("whole_in_a.credit_stall_time"));
    CHECK(q.packets_in_flight() == 0);
    for (CutChain* s : {&whole, &cut}) {
        CHECK(s->in_a.exact_waiting() == 0);
        CHECK(s->in_a.exact_credits_out() == 0);
    }
}

namespace {

// One source into a router with two outputs: port 0 to sink 7, whose far
// buffer holds one packet and is freed 5 us after its tail (a packet
// behind waits there for the credit), and port 1 to sink 8. The injection
// link's latency (500 ns) is long and the outputs fast (64 Gb/s), so that
// a packet's space at the router is freed before the head of one sent
// after it had started on the injection link.
struct Fork {
    NetEnv env;
    HopQueue q{"hops"};
    PacketSource src;
    Link in{"in", env.ctx, link_params(20e9, ns(500), 64), "node0", "src->router"};
    Router router{"router", env.ctx};
    Link out7{"out7", env.ctx, link_params(64e9, ns(20), 18), "node0", "router->node7"};
    Link out8{"out8", env.ctx, link_params(64e9, ns(20), 64), "node0", "router->node8"};
    PacketSink sink7{"sink7"}, sink8{"sink8"};

    explicit Fork(std::function<void(PacketSource&)> script) : src("src", std::move(script)) {
        sink7.free_at = [](const PacketSink::Arrival& a) { return a.tail + us(5); };
        src.out.bind(in.in);
        src.path.direct(&in);
        in.connect(router);
        router.out.bind(out7.in);
        router.out.bind(out8.in);
        router.set_output_link(0, &out7);
        router.set_output_link(1, &out8);
        router.set_route(7, 0);
        router.set_route(8, 1);
        router.set_input_buffer(0, 64, 1);
        out7.connect(sink7.in, sink7);
        out8.connect(sink8.in, sink8);
        in.use_hops(q);
        out7.use_hops(q);
        out8.use_hops(q);
    }
};

}   // namespace

// A router's arrival is made when the packet starts on the link before it
// (Link::arrive_ahead: no Arrival event), and what it counts at the router
// (the input buffer's occupancy at its head) only once every freeing
// before its head is known, in the order of the heads. P0 and A go to
// sink 7, B to sink 8, back to back from t0 = 100 ns: heads at the router
// at t0 + 506.4, 621.6 and 736.8 ns (6.4 ns a flit, 115.2 ns a packet,
// 500 ns); P0 leaves it by t0 + 717.2 (its tail in at t0 + 615.2, the
// pipeline, a 2 ns flit out), a freeing made known only at P0's start on
// out7 at t0 + 606.4, after B had started on `in`; A waits at out7 for
// P0's credit (5 us), so B starts first and settles A's arrival before its
// own. At A's head P0 and A are held (36 flits), at B's A and B (36): a
// count taken at B's start on `in` would have found P0 still there (54),
// one that skipped A's arrival would have lost it.
TEST_CASE("exact links: a router's arrival made at the start before it counts its input at the head's own time",
          "[link][exact][router]") {
    Fork f([](PacketSource& s) {
        sc_core::wait(ns(100));
        for (unsigned dst : {7u, 7u, 8u}) {
            PacketSpec p;
            p.dst = dst;
            s.send(p);
        }
    });
    REQUIRE(f.router.pipeline() == ns(100));
    sc_start();
    REQUIRE(f.sink7.arrivals.size() == 2);
    REQUIRE(f.sink8.arrivals.size() == 1);
    // B passed A, which waited for the credit of P0's space at sink 7.
    CHECK(f.sink8.arrivals[0].head < f.sink7.arrivals[1].head);
    CHECK(f.sink7.arrivals[1].head > f.sink7.arrivals[0].free);
    CHECK(f.router.occupancy_max(0) == 36);
    CHECK(f.router.overflows() == 0);
    CHECK(f.env.counter("router.packets") == 3);
    CHECK(f.env.counter("out7.transactions") == 2);
    CHECK(f.env.counter("out8.transactions") == 1);
    CHECK(f.q.packets_in_flight() == 0);
    for (const Link* l : {&f.in, &f.out7, &f.out8}) {
        CHECK(l->exact_waiting() == 0);
        CHECK(l->exact_credits_out() == 0);
    }
}
