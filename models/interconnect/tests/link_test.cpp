// Link, tested through its sockets: a PacketSource sends ExaNet packets into
// `in`, a PacketSink at `out` records when heads and tails arrive and says
// when their buffer space is free again. Each TEST_CASE is its own
// elaboration (ctest runs each in its own process).
//
// Most benches use a 16 Gb/s link: one 128-bit flit every 8 ns; a 256 B
// packet is 18 flits = 144 ns on the wire; latency 150 ns.
#include <catch2/catch.hpp>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

#include "json_check.hpp"
#include "packet_bench.hpp"

using namespace vrdmasim;
using namespace vrdmasim_test;
using sc_core::sc_start;
using sc_core::SC_ZERO_TIME;

TEST_CASE("link: head and tail reach the far end after (2 + ceil(N/16)) flits and the latency", "[link][timing]") {
    NetEnv env;
    // 16 Gb/s: 8 ns per flit; 10 Gb/s: 12.8 ns per flit.
    Link fast("fast", env.ctx, link_params(16e9, ns(150), 64), "node0", "link->node1");
    Link slow("slow", env.ctx, link_params(10e9, ns(200), 1100), "node0", "link->node2");
    PacketSink fast_sink("fast_sink"), slow_sink("slow_sink");
    const std::vector<unsigned> fast_sizes = {0, 1, 16, 17, 100, 256, 992};
    const std::vector<unsigned> slow_sizes = {1, 256, 4096, kMaxPacketPayload};
    auto script = [](const std::vector<unsigned>& sizes) {
        return [&sizes](PacketSource& s) {
            for (unsigned k = 0; k < sizes.size(); ++k) {
                PacketSpec p;
                p.size = sizes[k];
                p.seq = k;
                s.send(p);
                sc_core::wait(us(20));   // the link is idle again long before
            }
        };
    };
    PacketSource fast_src("fast_src", script(fast_sizes)), slow_src("slow_src", script(slow_sizes));
    fast_src.out.bind(fast.in);
    fast.out.bind(fast_sink.in);
    slow_src.out.bind(slow.in);
    slow.out.bind(slow_sink.in);
    sc_start();

    CHECK(fast.flit_time() == sc_time(8, sc_core::SC_NS));
    CHECK(slow.flit_time() == sc_time(12.8, sc_core::SC_NS));

    auto check = [](const std::vector<unsigned>& sizes, const PacketSource& src, const PacketSink& sink, double flit_ns,
                    double lat_ns) {
        REQUIRE(sink.arrivals.size() == sizes.size());
        REQUIRE(src.sent.size() == sizes.size());
        for (unsigned k = 0; k < sizes.size(); ++k) {
            const auto& a = sink.arrivals[k];
            const double t0 = 20000.0 * k;
            const unsigned flits = 2 + (sizes[k] + 15) / 16;
            INFO("payload " << sizes[k] << " B, " << flits << " flits");
            CHECK(a.flits == flits);
            CHECK(a.size == sizes[k]);
            CHECK(a.data_ok);
            CHECK(a.hops == 1);
            CHECK(a.head == ns(t0 + flit_ns + lat_ns));
            CHECK(a.tail == ns(t0 + flits * flit_ns + lat_ns));
            CHECK(src.sent[k].status == tlm::TLM_OK_RESPONSE);
            // Returned to the sender: the tail has left the link's input.
            CHECK(src.sent[k].credit == ns(t0 + flits * flit_ns));
        }
    };
    check(fast_sizes, fast_src, fast_sink, 8, 150);
    check(slow_sizes, slow_src, slow_sink, 12.8, 200);

    unsigned fast_flits = 0, fast_bytes = 0;
    for (unsigned n : fast_sizes) fast_flits += flits_of(n), fast_bytes += n;
    CHECK(env.counter("fast.packets") == fast_sizes.size());
    CHECK(env.counter("fast.flits") == fast_flits);
    CHECK(env.counter("fast.payload_bytes") == fast_bytes);
    CHECK(env.scalar("fast.busy_time") == Approx(fast_flits * 8e-3));
    CHECK(env.scalar("fast.credit_stall_time") == 0);
    CHECK(env.histogram("fast.queue_delay").max() == 0);
}

TEST_CASE("link: back-to-back packets are serialised, each starting when the last ends", "[link][timing]") {
    NetEnv env;
    Link link("link", env.ctx, link_params(16e9, ns(150), 128), "node0", "link->node1");
    PacketSink sink("sink");
    PacketSource src("src", [](PacketSource& s) {
        // Five packets, all ready at time 0, sent without waiting.
        for (unsigned k = 0; k < 5; ++k) {
            PacketSpec p;
            p.seq = k;
            s.send(p);
        }
        // One whose head is ready at 710 ns, while the link is still busy
        // with the fifth (until 5 x 144 = 720 ns): it waits 10 ns.
        sc_core::wait(ns(700));
        PacketSpec late;
        late.seq = 5;
        late.head_delay = ns(10);   // head at 710 ns, the link frees at 720 ns
        s.send(late);
        sc_core::wait(us(5));
        PacketSpec idle;
        idle.seq = 6;
        s.send(idle);   // at 5.7 us, on an idle link
    });
    src.out.bind(link.in);
    link.out.bind(sink.in);
    sc_start();

    REQUIRE(sink.arrivals.size() == 7);
    const std::vector<double> start_ns = {0, 144, 288, 432, 576, 720, 5700};
    for (unsigned k = 0; k < 7; ++k) {
        INFO("packet " << k);
        CHECK(sink.arrivals[k].head == ns(start_ns[k] + 8 + 150));
        CHECK(sink.arrivals[k].tail == ns(start_ns[k] + 144 + 150));
        CHECK(src.sent[k].credit == ns(start_ns[k] + 144));
    }
    const Histogram& q = env.histogram("link.queue_delay");
    CHECK(q.count() == 7);
    CHECK(q.sum() == Approx(144.0 * (0 + 1 + 2 + 3 + 4) + 10));   // the late one waited 10 ns
    CHECK(q.max() == Approx(576));
    CHECK(env.scalar("link.busy_time") == Approx(7 * 0.144));
    CHECK(env.scalar("link.credit_stall_time") == 0);
    CHECK(env.stats.find_counter("link.order_inversions") == nullptr);   // in time order: none, not even made
}

TEST_CASE("link: in call order, a packet served behind one that reached the link later is counted", "[link][timing]") {
    // Loosely timed senders call out of time order: the first call's packet
    // reaches the link at 1 us, the second call's at 0.5 us. By call, the
    // second waits for the first (the wire is booked [1, 1.144) us): an
    // inversion, with its queueing, which time order would not have. In
    // order, nothing is counted (the statistics are made at the first).
    NetEnv env;
    Link link("link", env.ctx, link_params(16e9, ns(150), 128), "node0", "link->node1");
    PacketSink sink("sink");
    PacketSource src("src", [](PacketSource& s) {
        PacketSpec first;
        first.seq = 0;
        first.head_delay = us(1);
        s.send(first);
        PacketSpec early;
        early.seq = 1;
        early.head_delay = ns(500);
        s.send(early);
    });
    src.out.bind(link.in);
    link.out.bind(sink.in);
    sc_start();
    REQUIRE(sink.arrivals.size() == 2);
    CHECK(sink.arrivals[1].head == ns(1144 + 8 + 150));   // behind the first, by call
    CHECK(env.counter("link.order_inversions") == 1);
    CHECK(env.scalar("link.order_wait") == Approx(0.644));   // 1.144 - 0.5 us
}

TEST_CASE("link: a tail that arrives late from upstream holds back the packet's end (cut-through)", "[link][timing]") {
    NetEnv env;
    Link link("link", env.ctx, link_params(16e9, ns(150), 128), "node0", "link->node1");
    PacketSink sink("sink");
    PacketSource src("src", [](PacketSource& s) {
        PacketSpec p;
        p.tail_lag = us(1);   // a slow upstream: the tail is here at 1 us
        s.send(p);
        PacketSpec q;   // the next one, ready at once, waits for the link
        q.seq = 1;
        s.send(q);
    });
    src.out.bind(link.in);
    link.out.bind(sink.in);
    sc_start();

    REQUIRE(sink.arrivals.size() == 2);
    // Head goes at once; the last flit leaves one flit time after it arrived.
    CHECK(sink.arrivals[0].head == ns(8 + 150));
    CHECK(sink.arrivals[0].tail == ns(1000 + 8 + 150));
    CHECK(src.sent[0].credit == ns(1008));
    CHECK(sink.arrivals[1].head == ns(1008 + 8 + 150));
    CHECK(sink.arrivals[1].tail == ns(1008 + 144 + 150));
}

TEST_CASE("link: credits hold the link back while the far-end buffer is full", "[link][credits]") {
    NetEnv env;
    // 40 flits at the far end: two 18-flit packets fit, a third does not.
    Link link("link", env.ctx, link_params(16e9, ns(150), 40), "node0", "link->node1");
    PacketSink sink("sink");
    sink.capacity_flits = 40;
    // The far end frees each packet's space 2 us after its tail arrived.
    sink.free_at = [](const PacketSink::Arrival& a) { return a.tail + us(2); };
    PacketSource src("src", [](PacketSource& s) {
        for (unsigned k = 0; k < 6; ++k) {
            PacketSpec p;
            p.seq = k;
            s.send(p);
        }
    });
    src.out.bind(link.in);
    link.out.bind(sink.in);
    sc_start();

    REQUIRE(sink.arrivals.size() == 6);
    // Packet k's space is free at start_k + 144 + 150 + 2000 = start_k + 2294.
    // p0, p1 go at once; p2 waits for p0's space (2294), p3 for p1's (2438, when
    // the link is free anyway), p4 for p2's (2294 + 2294), p5 for p3's.
    const std::vector<double> start_ns = {0, 144, 2294, 2438, 4588, 4732};
    for (unsigned k = 0; k < 6; ++k) {
        INFO("packet " << k);
        CHECK(sink.arrivals[k].head == ns(start_ns[k] + 8 + 150));
        CHECK(sink.arrivals[k].tail == ns(start_ns[k] + 144 + 150));
        CHECK(src.sent[k].credit == ns(start_ns[k] + 144));
        CHECK(sink.arrivals[k].data_ok);
    }
    // Stalled for credits: p2 from 288 to 2294, p4 from 2582 to 4588.
    CHECK(env.scalar("link.credit_stall_time") == Approx(2 * 2.006));
    CHECK(sink.violations == 0);
    CHECK(sink.max_occupancy == 36);
}

TEST_CASE("link: with irregular credit returns the far-end buffer never overflows", "[link][credits]") {
    NetEnv env;
    Link link("link", env.ctx, link_params(16e9, ns(150), 48), "node0", "link->node1");
    PacketSink sink("sink");
    sink.capacity_flits = 48;
    // Free times out of arrival order: some packets are drained late.
    sink.free_at = [](const PacketSink::Arrival& a) { return a.tail + ns(300.0 * ((a.seq * 7) % 5)); };
    const std::vector<unsigned> sizes = {16, 100, 256, 496, 40, 700, 1};
    PacketSource src("src", [&](PacketSource& s) {
        for (unsigned k = 0; k < 80; ++k) {
            PacketSpec p;
            p.seq = k;
            p.size = sizes[k % sizes.size()];
            s.send(p);
            if (k % 10 == 9) sc_core::wait(ns(500));
        }
    });
    src.out.bind(link.in);
    link.out.bind(sink.in);
    sc_start();

    REQUIRE(sink.arrivals.size() == 80);
    CHECK(sink.violations == 0);
    CHECK(sink.max_occupancy <= 48);
    CHECK(sink.max_occupancy >= 48 - flits_of(700) + 1);   // the buffer is really used
    CHECK(env.scalar("link.credit_stall_time") > 0);
    // In order, one after the other on the wire.
    for (unsigned k = 1; k < 80; ++k) {
        INFO("packet " << k);
        CHECK(sink.arrivals[k].seq == k);
        CHECK(sink.arrivals[k].tail - sink.arrivals[k - 1].tail >= ns(8.0 * sink.arrivals[k].flits));
        CHECK(sink.arrivals[k].data_ok);
    }
}

TEST_CASE("link: a packet larger than the far-end buffer is refused with an error", "[link]") {
    NetEnv env;
    Link link("link", env.ctx, link_params(16e9, ns(150), 16), "node0", "link->node1");
    PacketSink sink("sink");
    Sent fits, too_big, no_ext;
    PacketSource src("src", [&](PacketSource& s) {
        PacketSpec a;
        a.size = 224;   // 2 + 14 = 16 flits: exactly the buffer
        fits = s.send(a);
        PacketSpec b;
        b.size = 225;   // 17 flits
        b.seq = 1;
        too_big = s.send(b);
        PacketSpec c;
        c.with_extension = false;
        c.seq = 2;
        no_ext = s.send(c);
    });
    src.out.bind(link.in);
    link.out.bind(sink.in);
    sc_start();

    CHECK(fits.status == tlm::TLM_OK_RESPONSE);
    CHECK(too_big.status == tlm::TLM_BURST_ERROR_RESPONSE);
    CHECK(no_ext.status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    REQUIRE(sink.arrivals.size() == 1);
    CHECK(sink.arrivals[0].size == 224);
    CHECK(env.counter("link.packets") == 1);
    CHECK(env.counter("link.flits") == 16);
}

TEST_CASE("link: with tracing on, every packet is one span on the link's track", "[link][trace]") {
    char path[] = "/tmp/vrdmasim_link_trace_XXXXXX";
    const int fd = mkstemp(path);
    REQUIRE(fd >= 0);
    close(fd);
    std::string json;
    {
        NetEnv env;
        env.tracer.open(path);
        Link link("link", env.ctx, link_params(16e9, ns(150), 128), "node0", "link->node1");
        PacketSink sink("sink");
        PacketSource src("src", [](PacketSource& s) {
            for (unsigned k = 0; k < 3; ++k) {
                PacketSpec p;
                p.seq = k;
                s.send(p);
            }
            PacketSpec c;
            c.seq = 3;
            c.size = 16;   // 3 flits, 24 ns
            c.type = PacketType::Control;
            s.send(c);
        });
        src.out.bind(link.in);
        link.out.bind(sink.in);
        sc_start();
        CHECK(env.tracer.events_written() == 4);
        env.tracer.close();
        std::ifstream f(path);
        std::stringstream ss;
        ss << f.rdbuf();
        json = ss.str();
    }
    std::remove(path);

    const JVal doc = parse_json(json);
    const JVal* events = doc.get("traceEvents");
    REQUIRE(events);
    // The link's track: thread "link->node1" of process "node0".
    double pid = -1, tid = -1;
    for (const auto& e : events->arr) {
        const JVal* name = e.get("name");
        const JVal* args = e.get("args");
        if (name && name->text == "thread_name" && args && args->get("name")->text == "link->node1") {
            pid = e.get("pid")->num;
            tid = e.get("tid")->num;
        }
    }
    REQUIRE(pid > 0);
    std::vector<const JVal*> spans;
    for (const auto& e : events->arr)
        if (e.get("ph")->text == "X") spans.push_back(&e);
    REQUIRE(spans.size() == 4);
    const std::vector<double> ts_us = {0, 0.144, 0.288, 0.432};
    const std::vector<double> dur_us = {0.144, 0.144, 0.144, 0.024};
    for (unsigned k = 0; k < 4; ++k) {
        INFO("span " << k);
        CHECK(spans[k]->get("pid")->num == pid);
        CHECK(spans[k]->get("tid")->num == tid);
        CHECK(spans[k]->get("name")->text == (k < 3 ? "data" : "ctrl"));
        CHECK(spans[k]->get("ts")->num == Approx(ts_us[k]));
        CHECK(spans[k]->get("dur")->num == Approx(dur_us[k]));
        CHECK(spans[k]->get("args")->get("seq")->num == k);
    }
}

TEST_CASE("link classes: rate per lane times lanes, each class in its own section", "[link][params]") {
    NetEnv env;
    const LinkParams mezz = Link::params_from(env.cfg, params_of<LinkSections>().mezz_link);
    CHECK(mezz.lanes == 2);
    CHECK(mezz.rate_bps == Approx(32e9));   // 2 lanes x 16 Gb/s (INFN ExaNeSt page)
    const LinkParams board = Link::params_from(env.cfg, params_of<LinkSections>().board_link);
    CHECK(board.lanes == 1);
    CHECK(board.rate_bps == Approx(10e9));   // arXiv 2307.09371
    // The existing classes keep their rates: one lane.
    CHECK(Link::params_from(env.cfg, params_of<LinkSections>().link).rate_bps == Approx(16e9));
    CHECK(Link::params_from(env.cfg, params_of<LinkSections>().ni).rate_bps == Approx(20e9));
    env.cfg.set("board-link.lanes", "4", "test");
    env.cfg.set("board-link.rate", "25Gbps", "test");
    CHECK(Link::params_from(env.cfg, params_of<LinkSections>().board_link).rate_bps == Approx(100e9));
    CHECK(Link::params_from(env.cfg, params_of<LinkSections>().board_link).vcs == 1);   // the builder sets router.vcs
    CHECK_THROWS_AS(env.cfg.set("mezz-link.lanes", "0", "test"), ConfigError);
}

TEST_CASE("link rates whose flit time 1 ps cannot represent are refused up front, naming the rate", "[link][params]") {
    NetEnv env;
    const LinkSection& ni = params_of<LinkSections>().ni;
    // 10 Tb/s x 32 lanes: a flit takes 0.4 ps, which rounded to 0 (the link
    // self-check then failed after the run).
    env.cfg.set("ni.rate", "10Tbps", "test");
    env.cfg.set("ni.lanes", "32", "test");
    try {
        Link::params_from(env.cfg, ni);
        FAIL("320 Tb/s accepted");
    } catch (const ConfigError& e) {
        const std::string what = e.what();
        CHECK(what.find("ni.rate") != std::string::npos);
        CHECK(what.find("320000 Gb/s") != std::string::npos);
    }
    env.cfg.set("ni.lanes", "10", "test");   // 100 Tb/s: 1.28 ps, 22 % off
    CHECK_THROWS_AS(Link::params_from(env.cfg, ni), ConfigError);
    // Exactly representable (64 Tb/s: 2 ps), or within 1 % (3 Tb/s: 42.7 ps as 43).
    env.cfg.set("ni.rate", "1Tbps", "test");
    env.cfg.set("ni.lanes", "64", "test");
    CHECK(Link::params_from(env.cfg, ni).rate_bps == Approx(64e12));
    env.cfg.set("ni.rate", "3Tbps", "test");
    env.cfg.set("ni.lanes", "1", "test");
    CHECK(Link::params_from(env.cfg, ni).rate_bps == Approx(3e12));
}

TEST_CASE("link: each VC has its own far-end buffer and credits, a full VC does not hold another's packet",
          "[link][vc][credits]") {
    NetEnv env;
    // One 256 B packet (18 flits) per VC buffer; the far end keeps each 10 us.
    LinkParams p = link_params(16e9, ns(150), 20);
    p.vcs = 2;
    Link link("link", env.ctx, p, "node0", "link->node1");
    PacketSink sink("sink");
    sink.free_at = [](const PacketSink::Arrival& a) { return a.tail + us(10); };
    std::vector<Sent> r;
    PacketSource src("src", [&](PacketSource& s) {
        PacketSpec a;
        a.vc = 0;
        r.push_back(s.send(a));   // fills VC 0
        PacketSpec c;
        c.seq = 1;
        c.vc = 1;
        r.push_back(s.send(c));   // VC 1 is empty: goes right behind
        PacketSpec b;
        b.seq = 2;
        b.vc = 0;
        r.push_back(s.send(b));   // waits for VC 0's credit
        PacketSpec bad;
        bad.seq = 3;
        bad.vc = 2;   // no such VC at the far end
        r.push_back(s.send(bad));
    });
    src.out.bind(link.in);
    link.out.bind(sink.in);
    sc_start();

    REQUIRE(r.size() == 4);
    REQUIRE(sink.arrivals.size() == 3);
    // a: 0..144 ns on the wire; c: 144..288 ns; b after a's space is freed
    // (tail 294 ns + 10 us).
    CHECK(r[0].credit == ns(144));
    CHECK(r[1].credit == ns(288));
    CHECK(sink.arrivals[1].seq == 1);
    CHECK(sink.arrivals[1].head == ns(144 + 8 + 150));
    CHECK(sink.arrivals[2].seq == 2);
    CHECK(sink.arrivals[2].head == ns(144 + 150 + 10000 + 8 + 150));
    CHECK(r[3].status == tlm::TLM_GENERIC_ERROR_RESPONSE);
    CHECK(env.counter("link.vc_errors") == 1);
    CHECK(link.buffer_hwm(0) == 18);
    CHECK(link.buffer_hwm(1) == 18);
    CHECK(env.scalar("link.vc0.buffer_hwm") == 18);
    CHECK(env.scalar("link.credit_stall_time") > 9.9);
}

TEST_CASE("link: a one-VC link shares its buffer among all VCs", "[link][vc]") {
    NetEnv env;
    Link link("link", env.ctx, link_params(16e9, ns(150), 20), "node0", "ni->router");
    PacketSink sink("sink");
    sink.free_at = [](const PacketSink::Arrival& a) { return a.tail + us(10); };
    std::vector<Sent> r;
    PacketSource src("src", [&](PacketSource& s) {
        PacketSpec a;
        a.vc = 7;   // e.g. a PLDMA channel number: any VC is fine
        r.push_back(s.send(a));
        a.seq = 1;
        a.vc = 1;
        r.push_back(s.send(a));
    });
    src.out.bind(link.in);
    link.out.bind(sink.in);
    sc_start();
    REQUIRE(sink.arrivals.size() == 2);
    CHECK(r[1].status == tlm::TLM_OK_RESPONSE);
    CHECK(sink.arrivals[1].head == ns(144 + 150 + 10000 + 8 + 150));
    CHECK(link.buffer_hwm(0) == 18);
}
