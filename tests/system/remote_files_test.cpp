// The QFDB's SSD reached from another FPGA of the board (docs/os.md
// "The SSD from another FPGA"): a node without the SSD reads the board's
// files through request and data packets over the real NI links, routers
// and board links. The latency of one remote command checked against the
// parameters (request + server CPU + SSD + data over the links); contention
// with an RDMA stream on the same board link; and the engine's SMMU fault
// path on a file mapping of such a node (cold, stall and terminate mode;
// memory pressure dropping the clean pages, then refaulting them remotely).
// One simulation per TEST_CASE.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "src/sim/system.hpp"
#include "system_sim.hpp"
#include "temp_dir.hpp"

using namespace vrdmasim;
using namespace sc_core;

namespace {

constexpr std::uint64_t KiB = 1024;

// Waits (in an SC_THREAD) until absolute time t.
void wait_for(sc_time t) {
    if (t > sc_time_stamp()) wait(t - sc_time_stamp());
}

// When the last of `n` back-to-back packets of `flits` each, injected at
// `head` by an idle node, has its tail in the NI of another FPGA of the
// board: NI link, router, board link (the slowest: 16 Gb/s against the NI's
// 20 Gb/s), router, NI link. Link timing as models/interconnect/README.md
// "Timing" and *Exact time order* give it, packet by packet: a packet
// starts on a link when its head is there, the wire is free and the far
// buffer has room; it ends no earlier than a flit after its tail came in;
// its head reaches the far end a flit and the latency after its start, the
// next router's output a pipeline later. The router's input from the NI
// holds `ni.buffer` (40 flits: two data packets), and a packet's space
// there comes back to the NI link a link latency after the packet's end on
// the board link: with the router's pipeline, that loop is 146.4 ns of a
// board link's 144 ns a packet, so a stream of data packets leaves a bubble
// of 2.4 ns on the board link every other packet.
sc_time path(const Config& c, sc_time head, unsigned flits, unsigned n = 1) {
    const auto flit = [](double bps) { return sc_time::from_value(static_cast<sc_dt::uint64>(128e12 / bps + 0.5)); };
    const sc_time f_ni = flit(c.rate_bps("ni.rate")), f_link = flit(c.rate_bps("link.rate"));
    REQUIRE(f_link > f_ni);   // the derivation's assumption: the board link is the bottleneck
    const sc_time l_ni = c.time("ni.latency"), l_link = c.time("link.latency"), r = c.time("router.latency");
    const unsigned room = static_cast<unsigned>(c.size("ni.buffer") / 16) / flits;   // packets in the router's input
    REQUIRE(room >= 1);
    std::vector<sc_time> board_end(n);
    sc_time ni_end, board_free, eject_free, tail;
    for (unsigned k = 0; k < n; ++k) {
        sc_time start = std::max(head, ni_end);
        if (k >= room) start = std::max(start, board_end[k - room] + l_ni);   // its credit back
        ni_end = start + flits * f_ni;
        const sc_time at_router = start + f_ni + l_ni + r, tail_at_router = ni_end + l_ni + r;
        const sc_time b = std::max(at_router, board_free);
        board_end[k] = std::max(b + flits * f_link, tail_at_router + f_link);
        board_free = board_end[k];
        const sc_time at_far = b + f_link + l_link + r, tail_at_far = board_end[k] + l_link + r;
        const sc_time e = std::max(at_far, eject_free);
        eject_free = std::max(e + flits * f_ni, tail_at_far + f_ni);
        tail = eject_free + l_ni;
    }
    return tail;
}

// The SSD's time for one command of `bytes` on an idle device.
sc_time ssd_time(const Config& c, std::uint64_t bytes) {
    const double ps = static_cast<double>(bytes) * 8e12 / c.rate_bps("ssd.bandwidth");
    return c.time("ssd.read-latency") + sc_time::from_value(static_cast<sc_dt::uint64>(ps + 0.5));
}

}   // namespace

TEST_CASE("remote files: one command's latency is request + server CPU + SSD + data over the links",
          "[files][remote]") {
    // Four FPGAs; the stream runs 0 -> 1, the SSD is on FPGA 3 and node 2
    // reads from it: nothing else crosses node 2's and node 3's links.
    SystemSim sim({{"topology.nodes", "4"},
                   {"fs.files", "2"},
                   {"fs.file-size", "256KiB"},
                   {"fs.ssd-fpga", "3"},
                   {"workload.total-bytes", "256KiB"}});
    const Config& c = *sim.cfg;
    Node& reader = sim.sys->node(2);
    sc_time issued, returned;
    bool ok = false;
    At at("reader", sc_time(10, SC_US), [&] {
        Vm& vm = reader.vm;
        const int pid = vm.create_process("reader");
        const auto fd = vm.open(pid, 1, sc_time_stamp());
        const auto buf = vm.mmap(pid, 4 * KiB, Prot::ReadWrite, true, fd.done);
        wait_for(buf.done);
        // A small read away from the file's start with no readahead state:
        // read as is, one page, one command (ondemand_readahead).
        issued = sc_time_stamp();
        const auto r = vm.read(pid, static_cast<int>(fd.value), 8 * 4 * KiB, 4 * KiB, buf.value, issued);
        returned = r.done;
        std::vector<unsigned char> got(4 * KiB), want(4 * KiB);
        vm.peek_user(pid, buf.value, got.data(), got.size());
        FileSystem::content(1, 8 * 4 * KiB, want.data(), want.size());
        ok = r.ok() && r.value == 4 * KiB && got == want;
    });
    vrdmasim_test::TempDir dir;
    sim.tracer.open(dir / "trace.json", dir / "run.log");
    sim.run();
    sim.tracer.close();
    REQUIRE(ok);
    // The trace's spans on the nodes' ssd tracks, --log naming requester,
    // SSD node and bytes.
    auto slurp = [](const std::string& path) {
        std::ifstream in(path);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    };
    const std::string trace = slurp(dir / "trace.json"), log = slurp(dir / "run.log");
    CHECK(trace.find("\"remote file read\"") != std::string::npos);
    CHECK(trace.find("\"serve remote read\"") != std::string::npos);
    CHECK(log.find("remote file read: node2 -> SSD on node3, file 1 [32768, +4096) 4096 bytes") != std::string::npos);
    CHECK(log.find("served remote file read of node2: file 1 [32768, +4096) 4096 bytes") != std::string::npos);
    CHECK(log.find("read from the SSD of node3 over the board network") != std::string::npos);
    CHECK(sim.counter("node2.remote_fs.reads") == 1);
    CHECK(sim.counter("node2.remote_fs.bytes_delivered") == 4 * KiB);
    CHECK(sim.counter("node2.remote_fs.packets_in") == 16);   // 4 KiB in packets of dma.packet-size = 256 B
    CHECK(sim.counter("node3.remote_fs.served") == 1);
    CHECK(sim.counter("node3.ssd.file_reads") == 1);   // the SSD node's device served it
    CHECK(sim.stats.find_counter("node2.ssd.file_reads") == nullptr);   // node 2's own Ssd holds swap only
    // The packets crossed the board links, and only they did.
    CHECK(sim.counter("node2_to_node3.payload_bytes") == RemoteBlock::kRequestBytes);
    CHECK(sim.counter("node3_to_node2.payload_bytes") == 4 * KiB);
    CHECK(sim.counter("node3_to_node2.packets") == 16);

    // The latency against the parameters: the request (4 flits) from the
    // moment the page cache issued it (after fs.remote-request of CPU),
    // the SSD node's CPU, the SSD, then 16 data packets of 18 flits.
    const Histogram* h = sim.stats.find_histogram("node2.remote_fs.latency");
    REQUIRE(h != nullptr);
    REQUIRE(h->count() == 1);
    const sc_time arrived = path(c, sc_time::from_value(0), 2 + RemoteBlock::kRequestBytes / 16);
    const sc_time ssd_done = arrived + c.time("fs.remote-serve") + ssd_time(c, 4 * KiB);
    const sc_time last = path(c, ssd_done, 2 + 256 / 16, 16);
    CHECK(h->mean() == Approx(to_us(last)).margin(1e-6));
    // read() returned after the data landed, and its CPU on top.
    CHECK(returned >= issued + last);
}

TEST_CASE("remote files: a command shares the board link with an RDMA stream and waits for it", "[files][remote]") {
    // Two FPGAs: node 1 streams RDMA writes to node 0, which has the SSD,
    // and reads a page from it meanwhile: its request takes node 1's NI
    // link and the link node1_to_node0, both saturated by the stream (the
    // NI injects faster than the board link drains); the data come back on
    // node0_to_node1 beside the stream's responses.
    SystemSim sim({{"topology.nodes", "2"},
                   {"fs.files", "1"},
                   {"fs.file-size", "256KiB"},
                   {"fs.ssd-fpga", "0"},
                   {"workload.src-node", "1"},
                   {"workload.dst-node", "0"},
                   {"workload.total-bytes", "2MiB"}});
    const Config& c = *sim.cfg;
    bool ok = false;
    std::uint64_t stream_before = 0;
    At at("reader", sc_time(40, SC_US), [&] {
        Vm& vm = sim.sys->node(1).vm;
        const int pid = vm.create_process("reader");
        const auto fd = vm.open(pid, 0, sc_time_stamp());
        const auto buf = vm.mmap(pid, 4 * KiB, Prot::ReadWrite, true, fd.done);
        wait_for(buf.done);
        while (sim.log().bytes_delivered.value() < 256 * KiB) wait(5, SC_US);   // the stream in full flow
        stream_before = sim.log().bytes_delivered.value();
        const auto r = vm.read(pid, static_cast<int>(fd.value), 8 * 4 * KiB, 4 * KiB, buf.value, sc_time_stamp());
        ok = r.ok() && r.value == 4 * KiB && !sim.finished();
    });
    sim.run();
    REQUIRE(ok);
    sim.check_all_verified(32, 2 << 20);
    REQUIRE(stream_before < (1u << 20));   // the stream was running
    // Both flows on the links, counted in their statistics; never busier
    // than the time there was.
    const std::uint64_t up = sim.counter("node1_to_node0.payload_bytes");
    CHECK(up >= (2u << 20) + RemoteBlock::kRequestBytes);
    CHECK(up == sim.counter("node1.inject.payload_bytes"));   // all node 1 sends goes to node 0
    CHECK(sim.counter("node0_to_node1.payload_bytes") >= 4 * KiB);
    CHECK(sim.scalar("node1_to_node0.busy_time") <= to_us(sc_time_stamp()));
    // The command waited behind the stream's packets: slower than alone.
    const Histogram* h = sim.stats.find_histogram("node1.remote_fs.latency");
    REQUIRE(h != nullptr);
    REQUIRE(h->count() == 1);
    const sc_time alone =
        path(c, c.time("fs.remote-serve") + ssd_time(c, 4 * KiB) + (path(c, sc_time::from_value(0), 4)), 18, 16);
    INFO("latency " << h->mean() << " us, alone " << to_us(alone) << " us");
    // In exact time order a link serves the first-ready of the packets
    // waiting for it: the request waits for what is left of the stream's
    // packets ahead of it, 58 ns measured (0.53 us in the approximate time
    // order, where the stream had reserved the links ahead of it).
    CHECK(h->mean() > to_us(alone) + 0.01);
    CHECK(sim.counter("node0.remote_fs.served") == 1);
}

namespace {

// Node 1 (no SSD) maps 64 KiB of file 1 and RDMA-writes the mapping to
// node 0: the engine's reads of the cold mapping fault in node 1's SMMU and
// the fault path brings the pages from node 0's SSD over the board network.
// `pressure`: then node 1's reclaim drops the clean pages (their
// translations invalidated) and a second write faults them in again.
void mmap_fault_case(const Settings& extra, bool pressure) {
    Settings set{{"topology.nodes", "2"},           {"fs.files", "2"},
                 {"fs.file-size", "256KiB"},        {"fs.ssd-fpga", "0"},
                 {"workload.total-bytes", "64KiB"}, {"sim.time-limit", "20ms"}};
    set.insert(set.end(), extra.begin(), extra.end());
    SystemSim sim(set);
    RdmaProcess& a0 = sim.sys->node(0).app;
    RdmaProcess& a1 = sim.sys->node(1).app;
    const std::uint64_t len = 64 * KiB, off = 16 * KiB;
    std::uint64_t dst = 0, dst2 = 0, faults_first = 0, reads_first = 0, evicted = 0;
    bool mapped = false, done = false;
    sc_event mapped_ev;
    a0.program = [&](RdmaProcess& app) {
        dst = app.alloc(len);
        dst2 = app.alloc(len);
        mapped = true;
        mapped_ev.notify(app.now() - sc_time_stamp());
    };
    a1.program = [&](RdmaProcess& app) {
        Vm& vm = *app.vm();
        const std::uint64_t rec = app.alloc_locked(64);
        app.sync_time();
        const auto fd = vm.open(app.pid(), 1, sc_time_stamp());
        REQUIRE(fd.ok());
        const auto m = vm.mmap_file(app.pid(), static_cast<int>(fd.value), off, len, Prot::Read, false, fd.done);
        REQUIRE(m.ok());
        wait_for(m.done);
        app.wait_until([&] { return mapped; }, mapped_ev);
        REQUIRE(app.post_write(m.value, 0, dst, len, 1, rec, 0));
        CHECK(app.wait_record(rec).status == kStatusOk);
        faults_first = sim.counter("node1.pagecache.faults_major");
        reads_first = sim.counter("node1.remote_fs.reads");
        if (pressure) {
            app.sync_time();
            const std::uint64_t before = sim.counter("node1.pagecache.evictions");
            wait_for(vm.reclaim(vm.free_bytes() + 64 * 1024 * KiB, sc_time_stamp()).done);
            evicted = sim.counter("node1.pagecache.evictions") - before;
            REQUIRE(app.post_write(m.value, 0, dst2, len, 2, rec + 32, 0));
            CHECK(app.wait_record(rec + 32).status == kStatusOk);
        }
        done = true;
    };
    sim.run();
    REQUIRE(done);
    std::vector<unsigned char> got(len), want(len);
    FileSystem::content(1, off, want.data(), len);
    REQUIRE(a0.debug_read(dst, got.data(), len));
    CHECK(got == want);
    // The engine faulted, the faults were major file faults on node 1, read
    // over the board network from node 0's SSD.
    CHECK(sim.smmu_faults(1) >= 1);
    CHECK(faults_first >= 1);
    CHECK(reads_first >= 1);
    CHECK(sim.counter("node0.remote_fs.served") == sim.counter("node1.remote_fs.reads"));
    CHECK(sim.counter("node1.remote_fs.bytes_delivered") == sim.counter("node1.remote_fs.bytes"));
    CHECK(sim.counter("node1.remote_fs.bytes_delivered") >= len);
    CHECK(sim.counter("node0.ssd.file_reads") == sim.counter("node1.remote_fs.reads"));
    if (pressure) {
        CHECK(evicted >= len / 4096);   // the clean pages were dropped, not written
        CHECK(sim.counter("node1.pagecache.faults_major") > faults_first);   // faulted in again
        CHECK(sim.counter("node1.remote_fs.reads") > reads_first);   // from the remote SSD
        REQUIRE(a0.debug_read(dst2, got.data(), len));
        CHECK(got == want);
    }
}

}   // namespace

TEST_CASE("remote files: a cold file mapping of a node without the SSD faults through the SMMU (terminate)",
          "[files][remote][fault]") {
    mmap_fault_case({}, false);
}

TEST_CASE("remote files: a cold file mapping of a node without the SSD faults through the SMMU (stall)",
          "[files][remote][fault]") {
    mmap_fault_case({{"smmu-driver.fault-mode", "stall"}}, false);
}

TEST_CASE("remote files: under memory pressure the clean pages are dropped and refaulted from the remote SSD",
          "[files][remote][fault]") {
    mmap_fault_case({}, true);
}
