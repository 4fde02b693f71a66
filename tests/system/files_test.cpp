// Files on the QFDB's SSD in the whole System: the node on FPGA fs.ssd-fpga
// holds the board's file system; every node of the board has a page cache
// over those files, the others reading them over the intra-board network
// (tests/system/remote_files_test.cpp has the remote path's timing and its
// fault situations); an FPGA the board lacks is refused; a read() during a
// run returns the file's bytes and fills the page cache. One simulation per
// TEST_CASE.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "src/sim/system.hpp"
#include "system_sim.hpp"

using namespace vrdmasim;

TEST_CASE("files: every node of the board reads the SSD's files, those off its FPGA over the board network",
          "[files]") {
    SystemSim sim({{"topology.nodes", "4"}, {"fs.files", "2"}, {"fs.file-size", "256KiB"}, {"fs.ssd-fpga", "2"}});
    Node& ssd_node = sim.sys->node(2);
    CHECK(ssd_node.fs != nullptr);
    CHECK(&ssd_node.file_system() == ssd_node.fs.get());
    CHECK(ssd_node.file_system().files() == 2);
    CHECK(ssd_node.remote_fs->serving());
    for (unsigned n : {0u, 1u, 3u}) {
        Node& node = sim.sys->node(n);
        CHECK(node.vm.has_files());
        CHECK(node.fs == nullptr);   // one file system per board, on the SSD's node
        CHECK(&node.file_system() == ssd_node.fs.get());   // ... shared by the board's nodes
        CHECK(node.remote_fs->connected());
    }
    // Node 0 (no SSD) and node 2 (the SSD's) read the same range.
    bool ok[2] = {false, false};
    std::uint64_t copied[2] = {0, 0};
    auto reader = [&](unsigned n, int k) {
        Vm& vm = sim.sys->node(n).vm;
        const int pid = vm.create_process("reader");
        const auto fd = vm.open(pid, 1, sc_core::sc_time_stamp());
        const auto buf = vm.mmap(pid, 64 * 1024, Prot::ReadWrite, false, fd.done);
        const auto r = vm.read(pid, static_cast<int>(fd.value), 4096, 64 * 1024, buf.value, buf.done);
        copied[k] = r.value;
        std::vector<unsigned char> got(64 * 1024), want(64 * 1024);
        vm.peek_user(pid, buf.value, got.data(), got.size());
        FileSystem::content(1, 4096, want.data(), want.size());
        ok[k] = r.ok() && got == want;
    };
    At remote_reader("remote", sc_core::sc_time(10, sc_core::SC_US), [&] { reader(0, 0); });
    At local_reader("local", sc_core::sc_time(10, sc_core::SC_US), [&] { reader(2, 1); });
    sim.run();
    CHECK(ok[0]);
    CHECK(ok[1]);
    CHECK(copied[0] == 64 * 1024);
    CHECK(copied[1] == 64 * 1024);
    CHECK(sim.counter("node0.pagecache.misses") >= 1);
    CHECK(sim.counter("node2.pagecache.misses") >= 1);
    // Node 0's fills went to node 2 and were served by node 2's SSD, which
    // also served node 2's own.
    const std::uint64_t remote = sim.counter("node0.remote_fs.reads");
    CHECK(remote >= 1);
    CHECK(sim.counter("node2.remote_fs.served") == remote);
    CHECK(sim.counter("node0.remote_fs.bytes_delivered") == sim.counter("node0.remote_fs.bytes"));
    CHECK(sim.counter("node0.remote_fs.bytes_delivered") >= 64 * 1024);
    CHECK(sim.counter("node2.ssd.file_reads") > remote);
    CHECK(sim.counter("node2.ssd.file_bytes") ==
          sim.counter("node0.remote_fs.bytes_delivered") + 4096 * sim.counter("node2.pagecache.pages_added"));
    CHECK(sim.counter("node2_to_node0.payload_bytes") >= sim.counter("node0.remote_fs.bytes_delivered"));
    CHECK(sim.stats.find_counter("node0.ssd.file_reads") == nullptr);   // node 0's own Ssd: swap only
}

TEST_CASE("files: an fs.ssd-fpga the board does not have is refused at start", "[files]") {
    try {
        SystemSim sim({{"topology.nodes", "2"}, {"fs.files", "1"}, {"fs.ssd-fpga", "3"}});
        FAIL("accepted");
    } catch (const ConfigError& e) {
        CHECK(std::string(e.what()).find("fs.ssd-fpga") != std::string::npos);
    }
}

TEST_CASE("files: without files nothing is created and no statistic appears", "[files]") {
    SystemSim sim(Settings{{"topology.nodes", "2"}});
    CHECK_FALSE(sim.sys->node(0).vm.has_files());
    CHECK(sim.stats.find_counter("node0.pagecache.hits") == nullptr);
    CHECK(sim.stats.find_counter("node0.ssd.file_reads") == nullptr);
    CHECK(sim.stats.find_counter("node0.remote_fs.reads") == nullptr);
    CHECK(sim.sys->node(1).remote_fs == nullptr);
    try {
        sim.sys->node(0).file_system();
        FAIL("no refusal");
    } catch (const ConfigError& e) {
        CHECK(std::string(e.what()).find("fs.files") != std::string::npos);
    }
}

TEST_CASE("files: SSD data packets that would not fit the board's buffers are refused naming dma.packet-size",
          "[files]") {
    // The workload's 256 B messages fit the NI's 640 B buffer, but the
    // SSD's data packets of dma.packet-size = 1 KiB would not.
    const std::string msg =
        config_refusal({{"fs.files", "1"}, {"dma.packet-size", "1KiB"}, {"workload.message-size", "256B"}});
    CHECK(msg.find("dma.packet-size") != std::string::npos);
    CHECK(msg.find("ni.buffer") != std::string::npos);
    CHECK(config_refusal({{"dma.packet-size", "1KiB"}, {"workload.message-size", "256B"}}).empty());
}
