// Files on the QFDB's SSD in the whole System: only the node on FPGA
// fs.ssd-fpga has the file system and its page cache; asking for it on
// another FPGA's node is a configuration error naming fs.ssd-fpga (the
// intra-board path to the SSD is not modelled), as is an FPGA the board
// lacks; a read() on the SSD's node during a run returns the file's bytes
// and fills the page cache. One simulation per TEST_CASE.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include "system.hpp"
#include "system_sim.hpp"

using namespace vrdmasim;

TEST_CASE("files: the SSD's node serves a read during a run; another FPGA's node refuses naming fs.ssd-fpga",
          "[files]") {
    SystemSim sim({{"topology.nodes", "4"}, {"fs.files", "2"}, {"fs.file-size", "256KiB"}, {"fs.ssd-fpga", "2"}});
    Node& ssd_node = sim.sys->node(2);
    CHECK(ssd_node.vm.has_files());
    CHECK(&ssd_node.file_system() == ssd_node.fs.get());
    CHECK(ssd_node.file_system().files() == 2);
    for (unsigned n : {0u, 1u, 3u}) {
        CHECK_FALSE(sim.sys->node(n).vm.has_files());
        try {
            sim.sys->node(n).file_system();
            FAIL("no refusal");
        } catch (const ConfigError& e) {
            CHECK(std::string(e.what()).find("fs.ssd-fpga") != std::string::npos);
        }
    }
    bool ok = false;
    std::uint64_t copied = 0;
    At reader("reader", sc_core::sc_time(10, sc_core::SC_US), [&] {
        Vm& vm = ssd_node.vm;
        const int pid = vm.create_process("reader");
        const auto fd = vm.open(pid, 1, sc_core::sc_time_stamp());
        const auto buf = vm.mmap(pid, 64 * 1024, Prot::ReadWrite, false, fd.done);
        const auto r = vm.read(pid, static_cast<int>(fd.value), 4096, 64 * 1024, buf.value, buf.done);
        copied = r.value;
        std::vector<unsigned char> got(64 * 1024), want(64 * 1024);
        vm.peek_user(pid, buf.value, got.data(), got.size());
        FileSystem::content(1, 4096, want.data(), want.size());
        ok = r.ok() && got == want;
    });
    sim.run();
    CHECK(ok);
    CHECK(copied == 64 * 1024);
    CHECK(sim.counter("node2.pagecache.misses") >= 1);
    CHECK(sim.counter("node2.ssd.file_reads") >= 1);
    CHECK(sim.stats.find_counter("node0.pagecache.misses") == nullptr);   // no page cache where no SSD
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
    try {
        sim.sys->node(0).file_system();
        FAIL("no refusal");
    } catch (const ConfigError& e) {
        CHECK(std::string(e.what()).find("fs.files") != std::string::npos);
    }
}
