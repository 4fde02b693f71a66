// Files on the SSD and the page cache (filesystem.hpp, pagecache.hpp,
// Vm::read / mmap_file / pin_file): extents and known contents, read()
// with Linux's readahead window, mmap major faults with read-around,
// reclaim of clean pages, GUP pins of cache pages, THP and khugepaged
// leaving file mappings alone. Plain objects: no elaboration, no sc_start.
#include <catch2/catch.hpp>

#include <memory>
#include <string>
#include <vector>

#include <systemc>

#include <fstream>
#include <sstream>

#include "debug_memory.hpp"
#include "temp_dir.hpp"
#include "model_env.hpp"
#include "models/os/filesystem.hpp"
#include "models/os/vm.hpp"
#include "models/smmu/translation.hpp"

using namespace vrdmasim;
using sc_core::sc_time;

namespace {

using vrdmasim_test::Settings;

sc_time us(double v) { return sc_time::from_value(static_cast<sc_dt::uint64>(v * 1e6 + 0.5)); }
const sc_time T0 = sc_core::SC_ZERO_TIME;
constexpr std::uint64_t KiB = 1024, MiB = 1024 * KiB, P = 4096;

const vrdmasim_test::ParamDecls kParams = {CpuCores::declare_params, Vm::declare_params, Ssd::declare_params,
                                           FileSystem::declare_params};

// Exact costs: an idle SSD reads a 4 KiB page in 50 + 1 us; a copy to user
// space moves 4 KiB per microsecond.
const Settings kCosts = {{"vm.minor-fault", "2us"},    {"vm.zero-fill-page", "1us"},  {"vm.syscall", "500ns"},
                         {"vm.pte-update", "20ns"},    {"vm.user-access", "100ns"},   {"vm.major-fault", "10us"},
                         {"vm.scan-pte", "10ns"},      {"vm.swap-out-page", "2us"},   {"vm.copy-rate", "4.096GB/s"},
                         {"ssd.read-latency", "50us"}, {"ssd.write-latency", "20us"}, {"ssd.bandwidth", "4.096GB/s"},
                         {"ssd.queue-depth", "32"},    {"ssd.swap-size", "1MiB"},     {"fs.files", "2"},
                         {"fs.file-size", "1MiB"},     {"fs.page-lookup", "100ns"},   {"fs.readahead-page", "500ns"},
                         {"vm.thp", "never"}};

struct Env : vrdmasim_test::ModelEnv {
    vrdmasim_test::DebugMemory mem;
    FrameAllocator frames;
    std::unique_ptr<CpuCores> cpu;
    std::unique_ptr<Vm> vm;
    std::unique_ptr<Ssd> ssd;
    std::unique_ptr<FileSystem> fs;
    int pid = 0;
    explicit Env(const Settings& settings = {}, std::uint64_t dram = 64 * MiB)
        : ModelEnv(kParams, kCosts, settings), frames(0, dram) {
        cpu = std::make_unique<CpuCores>(ctx, "node0.cpu", "node0");
        vm = std::make_unique<Vm>(ctx, "node0.vm", "node0", mem, frames, *cpu);
        ssd = std::make_unique<Ssd>(ctx, "node0.ssd", "node0");
        fs = std::make_unique<FileSystem>(ctx, *ssd);
        vm->set_swap(*ssd);
        vm->set_file_system(*fs);
        pid = vm->create_process("server");
    }
    std::uint64_t pc(const std::string& n) const { return counter("node0.pagecache." + n); }
    std::uint64_t vmc(const std::string& n) const { return counter("node0.vm." + n); }
    std::uint64_t ssdc(const std::string& n) const { return counter("node0.ssd." + n); }
    int open(unsigned file) {
        const auto r = vm->open(pid, file, T0);
        REQUIRE(r.ok());
        return static_cast<int>(r.value);
    }
    // The user bytes at [va, va+len) are file `file`'s from `offset`.
    bool holds(std::uint64_t va, unsigned file, std::uint64_t offset, std::uint64_t len) const {
        std::vector<unsigned char> got(len), want(len);
        if (!vm->peek_user(pid, va, got.data(), len)) return false;
        FileSystem::content(file, offset, want.data(), len);
        return got == want;
    }
    void accounted() const {   // cached = added - evicted
        CHECK(vm->cached_pages() == pc("pages_added") - pc("evictions"));
    }
};

// The SMMU's walker over the tables the Vm wrote (a read of page va).
WalkResult smmu_walk(Env& e, std::uint64_t va) {
    WalkCache cache(4);
    PageTableWalker w(
        [&e](std::uint64_t pa, std::uint64_t& v, sc_time at, bool& ok) {
            v = e.mem.word(pa);
            ok = true;
            return at;
        },
        cache);
    WalkRequest r;
    r.ttbr = e.vm->root(e.pid);
    r.asid = e.vm->asid(e.pid);
    r.t0sz = e.vm->t0sz();
    r.write = false;
    r.va = va;
    return w.walk(r, T0);
}

}   // namespace

TEST_CASE("fs: files are extents after the swap area, with known contents read through the SSD", "[os][fs]") {
    Env e;
    CHECK(e.fs->files() == 2);
    CHECK(e.fs->extent(0) == 1 * MiB);   // after 1 MiB of swap
    CHECK(e.fs->extent(1) == 2 * MiB);
    CHECK(e.fs->size(1) == 1 * MiB);
    // Known contents: deterministic, different per file and per offset.
    std::vector<unsigned char> a(P), b(P), c(P);
    FileSystem::content(0, 0, a.data(), P);
    FileSystem::content(1, 0, b.data(), P);
    FileSystem::content(0, P, c.data(), P);
    CHECK(a != b);
    CHECK(a != c);
    CHECK(FileSystem::byte(0, 4100) == c[4]);
    // One command of 8 KiB: latency + 2 transfers; counted as a file read, not a swap-in.
    std::vector<unsigned char> buf(2 * P);
    CHECK(e.fs->read(1, 2 * P, 2 * P, buf.data(), us(10)) == us(10 + 50 + 2));
    CHECK(e.ssdc("file_reads") == 1);
    CHECK(e.ssdc("file_bytes") == 2 * P);
    CHECK(e.ssdc("reads") == 0);
    CHECK(e.ssdc("transactions") == 1);
    CHECK_THROWS_AS(e.fs->read(1, 1 * MiB - P, 2 * P, buf.data(), T0), std::logic_error);   // past the end
    CHECK_THROWS_AS(e.ssd->read_blocks(0, P, T0, 0, 0), std::logic_error);   // the swap area
}

TEST_CASE("fs: bad file-system settings are refused naming the key", "[os][fs]") {
    try {
        Env e(Settings{{"fs.file-size", "6KiB"}});
        FAIL("accepted");
    } catch (const ConfigError& err) {
        CHECK(std::string(err.what()).find("fs.file-size") != std::string::npos);
    }
    try {
        Env e(Settings{{"fs.files", "100"}, {"fs.ssd-size", "64MiB"}});
        FAIL("accepted");
    } catch (const ConfigError& err) {
        CHECK(std::string(err.what()).find("fs.file-size") != std::string::npos);
    }
}

TEST_CASE("pagecache: a cold read() reads ahead, waits for the SSD and copies the file's bytes", "[os][pagecache]") {
    Env e;
    const int fd = e.open(0);
    const auto buf = e.vm->mmap(e.pid, 64 * KiB, Prot::ReadWrite, true, T0);
    REQUIRE(buf.ok());
    const auto r = e.vm->read(e.pid, fd, 0, P, buf.value, us(1000));
    REQUIRE(r.ok());
    CHECK(r.value == P);
    CHECK(e.holds(buf.value, 0, 0, P));
    // Initial window for a 1-page request: 4 pages (get_init_ra_size), one command.
    CHECK(e.pc("misses") == 1);
    CHECK(e.pc("pages_added") == 4);
    CHECK(e.pc("readahead_pages") == 3);
    CHECK(e.ssdc("file_reads") == 1);
    CHECK(e.ssdc("file_bytes") == 4 * P);
    // syscall 0.5 + 4 x 0.5 readahead CPU, read issued at 2.5 us, done 2.5 + 50 + 4;
    // then the wait, a present destination (0.1) and the copy (1 us).
    CHECK(r.done == us(1000 + 56.5 + 0.1 + 1));   // the lookup overlaps the read
    // The next pages are hits: no SSD, the copy and lookup only.
    const auto r2 = e.vm->read(e.pid, fd, 2 * P, P, buf.value + P, us(2000));
    CHECK(r2.done == us(2000 + 0.5 + 0.1 + 0.1 + 1));
    CHECK(e.pc("hits") == 1);
    CHECK(e.holds(buf.value + P, 0, 2 * P, P));
    // A read across pages and at an odd offset, short at the end of the file.
    const auto r3 = e.vm->read(e.pid, fd, 1 * MiB - 100, 5000, buf.value + 8 * P + 7, us(3000));
    CHECK(r3.value == 100);
    CHECK(e.holds(buf.value + 8 * P + 7, 0, 1 * MiB - 100, 100));
    CHECK(e.vm->read(e.pid, fd, 1 * MiB, P, buf.value, us(4000)).value == 0);   // at EOF
    // A bad buffer, a bad fd.
    CHECK(e.vm->read(e.pid, fd, 0, P, 0x1000, us(5000)).error == VmError::Fault);
    CHECK(e.vm->read(e.pid, 99, 0, P, buf.value, us(5000)).error == VmError::Invalid);
    e.accounted();
}

TEST_CASE("pagecache: read() into a buffer whose pages split the file's pages lands every byte in place",
          "[os][pagecache]") {
    // 1500 B from file offset 18000 (inside one file page) into the buffer
    // at 3000: the destination crosses a page at 4096, inside the source's
    // page, so the copy goes in two pieces (the kernel-copy of fileserve).
    Env e;
    const int fd = e.open(0);
    const auto buf = e.vm->mmap(e.pid, 16 * KiB, Prot::ReadWrite, true, T0);
    REQUIRE(buf.ok());
    const auto r = e.vm->read(e.pid, fd, 18000, 1500, buf.value + 3000, us(10));
    REQUIRE(r.ok());
    CHECK(r.value == 1500);
    std::vector<unsigned char> got(1500), want(1500);
    REQUIRE(e.vm->peek_user(e.pid, buf.value + 3000, got.data(), 1500));
    FileSystem::content(0, 18000, want.data(), 1500);
    CHECK(got == want);
    std::vector<unsigned char> after(100);
    REQUIRE(e.vm->peek_user(e.pid, buf.value + 4500, after.data(), 100));
    CHECK(after == std::vector<unsigned char>(100, 0));   // nothing written past the read
}

TEST_CASE("pagecache: sequential reads ramp the readahead window 4, 8, 16, 32 through async markers",
          "[os][pagecache][readahead]") {
    Env e;
    const int fd = e.open(1);
    const auto buf = e.vm->mmap(e.pid, P, Prot::ReadWrite, true, T0);
    sc_time t = us(100);
    std::vector<std::uint64_t> added;   // pages in the cache after each read
    for (std::uint64_t i = 0; i < 64; ++i) {
        const auto r = e.vm->read(e.pid, fd, i * P, P, buf.value, t);
        REQUIRE(r.value == P);
        REQUIRE(e.holds(buf.value, 1, i * P, P));
        t = r.done;
        added.push_back(e.pc("pages_added"));
    }
    // Windows [0,4) marker 1; [4,12) marker 4; [12,28) marker 12; [28,60)
    // marker 28; [60,92) marker 60; [92,124) (max 32 pages = 128 KiB).
    CHECK(added[0] == 4);
    CHECK(added[1] == 12);
    CHECK(added[3] == 12);
    CHECK(added[4] == 28);
    CHECK(added[12] == 60);
    CHECK(added[28] == 92);
    CHECK(added[59] == 92);
    CHECK(added[60] == 124);
    CHECK(added[63] == 124);
    CHECK(e.ssdc("file_reads") == 6);
    CHECK(e.ssdc("file_bytes") == 124 * P);
    CHECK(e.pc("misses") == 1);
    CHECK(e.pc("hits") == 63);
    CHECK(e.pc("async_readaheads") == 5);
    CHECK(e.vm->file_cached(1, 123 * P));
    CHECK_FALSE(e.vm->file_cached(1, 124 * P));
    // fs.readahead = 16 KiB caps the window at 4 pages.
    Env small(Settings{{"fs.readahead", "16KiB"}});
    const int fd2 = small.open(0);
    const auto b2 = small.vm->mmap(small.pid, P, Prot::ReadWrite, true, T0);
    for (std::uint64_t i = 0; i < 16; ++i)
        REQUIRE(small.vm->read(small.pid, fd2, i * P, P, b2.value, us(100 * (i + 1))).ok());
    // [0,2) (init: 1 <= 4/4 doubles), then [2,6), [6,10), [10,14), [14,18), [18,22)
    CHECK(small.pc("pages_added") == 22);
    CHECK(small.ssdc("file_reads") == 6);
}

TEST_CASE("pagecache: random reads read only what they ask, a sequential miss starts a window",
          "[os][pagecache][readahead]") {
    Env e;
    const int fd = e.open(0);
    const auto buf = e.vm->mmap(e.pid, 64 * KiB, Prot::ReadWrite, true, T0);
    CHECK(e.vm->read(e.pid, fd, 100 * P, P, buf.value, us(100)).ok());
    CHECK(e.pc("pages_added") == 1);   // a standalone random read: as is
    CHECK(e.vm->read(e.pid, fd, 200 * P, 2 * P, buf.value, us(300)).ok());
    CHECK(e.pc("pages_added") == 3);
    CHECK(e.pc("readahead_pages") == 1);   // the second page of the request came with the first
    CHECK(e.vm->read(e.pid, fd, 202 * P, P, buf.value, us(500)).ok());   // sequential miss: initial window
    CHECK(e.pc("pages_added") == 7);
    CHECK(e.holds(buf.value, 0, 202 * P, P));
    // A large read: the window is capped at fs.readahead, then ramps at the max.
    CHECK(e.vm->read(e.pid, fd, 0, 64 * KiB, buf.value, us(1000)).value == 64 * KiB);
    CHECK(e.holds(buf.value, 0, 0, 64 * KiB));
    e.accounted();
}

TEST_CASE("pagecache: mmap of a file: a major fault reads around, later touches are minor, bytes are the file's",
          "[os][pagecache][mmap]") {
    Env e;
    const int fd = e.open(0);
    const auto m = e.vm->mmap_file(e.pid, fd, 0, 2 * MiB, Prot::Read, false, T0);   // 1 MiB of file, 2 MiB mapped
    REQUIRE(m.ok());
    CHECK(e.vm->cached_pages() == 0);
    const auto t = e.vm->touch(e.pid, m.value + 40 * P + 8, false, us(100));
    REQUIRE(t.ok());
    CHECK(t.value == 1);
    CHECK(e.pc("faults_major") == 1);
    CHECK(e.pc("pages_added") == 32);   // read-around [24, 56)
    CHECK(e.vm->file_cached(0, 24 * P));
    CHECK(e.vm->file_cached(0, 55 * P));
    CHECK_FALSE(e.vm->file_cached(0, 56 * P));
    // 32 x 0.5 us readahead CPU, read issued at +16 us, done +16 + 50 + 32;
    // major-fault 10 + lookup 0.1 + pte 0.02 of CPU besides.
    CHECK(t.done == us(100 + 16 + 50 + 32 + 0.02));
    // Mapped when the read completes (198 us), not at the fault.
    CHECK_FALSE(e.vm->present(e.pid, m.value + 40 * P));
    CHECK(e.vm->next_io() == us(198));
    e.vm->complete_io(us(198));
    CHECK(e.vm->present(e.pid, m.value + 40 * P));
    VmLeaf leaf;
    REQUIRE(e.vm->present_leaf(e.pid, m.value + 40 * P, leaf));
    CHECK(leaf.size == P);
    CHECK_FALSE(leaf.writable);
    const auto t2 = e.vm->touch(e.pid, m.value + 41 * P, false, us(1000));
    CHECK(t2.done == us(1000 + 2 + 0.1 + 0.02));   // minor: no SSD
    CHECK(e.pc("faults_minor") == 1);
    CHECK(e.ssdc("file_reads") == 1);
    // Everything the mapping shows is the file's, mapped or not.
    CHECK(e.holds(m.value, 0, 0, 1 * MiB));
    std::vector<unsigned char> got(P);
    REQUIRE(e.vm->read_user(e.pid, m.value + 200 * P, got.data(), P));   // a fault by the harness
    CHECK(e.holds(m.value + 200 * P, 0, 200 * P, P));
    // Read-only, and past the end of the file: SIGBUS.
    CHECK(e.vm->touch(e.pid, m.value, true, us(2000)).error == VmError::Access);
    CHECK(e.vm->touch(e.pid, m.value + 1 * MiB, false, us(2000)).error == VmError::Fault);
    CHECK(e.vm->mprotect(e.pid, m.value, P, Prot::ReadWrite, us(2000)).error == VmError::Access);
    CHECK(e.vm->mmap_file(e.pid, fd, 0, P, Prot::ReadWrite, false, T0).error == VmError::Access);
    CHECK(e.vm->pin(e.pid, m.value, P, us(2000)).error == VmError::Access);   // no writable GUP of a read-only file
    // The frame is the page cache's.
    std::uint64_t pa = 0;
    REQUIRE(e.vm->translate(e.pid, m.value + 40 * P, pa));
    const FrameOwner o = e.vm->frame_owner(pa + 5);
    CHECK(o.kind == FrameOwner::Kind::PageCache);
    CHECK(o.file == 0);
    CHECK(o.offset == 40 * P + 5);
    // munmap: the PTEs go, the cache keeps its pages and frames.
    const std::uint64_t cached = e.vm->cached_pages(), freed = e.vmc("frames_freed");
    REQUIRE(e.vm->munmap(e.pid, m.value, 2 * MiB, us(3000)).ok());
    CHECK(e.vm->cached_pages() == cached);
    CHECK(e.vmc("frames_freed") == freed);
    CHECK(e.vm->frame_owner(pa).kind == FrameOwner::Kind::PageCache);
    e.accounted();
}

TEST_CASE("pagecache: a file page is mapped when its SSD read completes, a fault meanwhile waits for it",
          "[os][pagecache][mmap][io]") {
    // filemap_fault maps a page once it is uptodate: until the read-around
    // is done, the SMMU's walker finds no PTE (a translation fault), and a
    // fault on a page of the same read sleeps until it ends.
    Env e;
    const int fd = e.open(0);
    const auto m = e.vm->mmap_file(e.pid, fd, 0, 1 * MiB, Prot::Read, false, T0);
    REQUIRE(m.ok());
    const auto t = e.vm->touch(e.pid, m.value + 40 * P, false, us(100));
    REQUIRE(t.ok());
    const sc_time ready = us(198);   // 16 us of readahead CPU, then 50 + 32 us on the SSD
    CHECK(smmu_walk(e, m.value + 40 * P).fault == FaultType::Translation);
    CHECK_FALSE(e.vm->present(e.pid, m.value + 40 * P));
    CHECK(e.holds(m.value + 40 * P, 0, 40 * P, P));   // peek shows the bytes it will map
    // Page 41 is cached but not uptodate: its fault at 150 us waits until 198 us.
    const auto t2 = e.vm->touch(e.pid, m.value + 41 * P, false, us(150));
    REQUIRE(t2.ok());
    CHECK(t2.done == ready + us(0.02));   // minor + lookup before the wait, the PTE update after it
    CHECK(e.pc("faults_minor") == 1);
    CHECK(e.ssdc("file_reads") == 1);
    CHECK(smmu_walk(e, m.value + 41 * P).fault == FaultType::Translation);
    // A second fault on page 40 waits for the same read.
    CHECK(e.vm->touch(e.pid, m.value + 40 * P, false, us(160)).done == ready + us(2));
    CHECK(e.vmc("io_waits") == 1);
    // Reclaim meanwhile passes the pages over (held for their mapping).
    e.vm->reclaim(e.vm->free_bytes() + 64 * MiB, us(170));
    CHECK(e.vm->file_cached(0, 40 * P));
    CHECK(e.vm->file_cached(0, 41 * P));
    e.vm->complete_io(ready - sc_time::from_value(1));
    CHECK(smmu_walk(e, m.value + 40 * P).fault == FaultType::Translation);
    e.vm->complete_io(ready);
    for (std::uint64_t i : {40u, 41u}) {
        const WalkResult w = smmu_walk(e, m.value + i * P);
        CHECK(w.fault == FaultType::None);
        CHECK(e.vm->present(e.pid, m.value + i * P));
    }
    CHECK(e.holds(m.value + 40 * P, 0, 40 * P, 2 * P));
    e.accounted();
}

TEST_CASE("pagecache: a file mapping is never huge, and khugepaged leaves it alone", "[os][pagecache][thp]") {
    Env e(Settings{{"vm.thp", "always"}});
    const int fd = e.open(0);
    const auto m = e.vm->mmap_file(e.pid, fd, 0, 1 * MiB, Prot::Read, true, T0);
    REQUIRE(m.ok());
    CHECK(e.vm->cached_pages() == 256);
    e.vm->complete_io(m.done);   // pages read ahead are mapped when their reads end, by the populate's end
    for (std::uint64_t i = 0; i < 256; i += 37) {
        VmLeaf leaf;
        REQUIRE(e.vm->present_leaf(e.pid, m.value + i * P, leaf));
        CHECK(leaf.size == P);
    }
    const auto anon = e.vm->mmap(e.pid, 2 * MiB, Prot::ReadWrite, true, T0);   // anonymous memory is still huge
    VmLeaf leaf;
    REQUIRE(e.vm->present_leaf(e.pid, anon.value, leaf));
    CHECK(leaf.size == 2 * MiB);
    CHECK(e.vm->khugepaged_scan(us(100)).value == 0);
    CHECK(e.vmc("collapses") == 0);
    CHECK(e.holds(m.value, 0, 0, 1 * MiB));
}

TEST_CASE("pagecache: reclaim drops clean pages without writing them, they come back from the SSD",
          "[os][pagecache][reclaim]") {
    Env e;
    const int fd = e.open(0);
    const auto buf = e.vm->mmap(e.pid, 64 * KiB, Prot::ReadWrite, true, T0);
    REQUIRE(e.vm->read(e.pid, fd, 0, 64 * KiB, buf.value, us(100)).ok());
    const std::uint64_t cached = e.vm->cached_pages();
    REQUIRE(cached >= 16);
    const std::uint64_t free0 = e.frames.free_pages();
    // Unmapped cache pages are reclaimed first: referenced ones get a second
    // chance, then go. Nothing is written: no swap, no SSD write.
    const auto r = e.vm->reclaim((free0 + 10) * P, us(10000));
    CHECK(r.ok());
    CHECK(e.pc("evictions") == 10);
    CHECK(e.vm->cached_pages() == cached - 10);
    CHECK(e.ssdc("writes") == 0);
    CHECK(e.vmc("swap_outs") == 0);
    CHECK(e.frames.free_pages() == free0 + 10);
    e.accounted();
    // Pages 0-15 were read (referenced: second chance), 16-25 of the
    // window not: those went. Reading them misses and reads the SSD again.
    CHECK(e.vm->file_cached(0, 15 * P));
    CHECK_FALSE(e.vm->file_cached(0, 16 * P));
    const std::uint64_t reads0 = e.ssdc("file_reads"), misses0 = e.pc("misses");
    REQUIRE(e.vm->read(e.pid, fd, 64 * KiB, 64 * KiB, buf.value, us(20000)).ok());
    CHECK(e.ssdc("file_reads") > reads0);
    CHECK(e.pc("misses") > misses0);
    CHECK(e.holds(buf.value, 0, 64 * KiB, 64 * KiB));
    // Mapped pages: the clock clears AF, then unmaps and drops them; a touch refaults from the SSD.
    const auto m = e.vm->mmap_file(e.pid, fd, 0, 1 * MiB, Prot::Read, true, us(30000));
    REQUIRE(m.ok());
    CHECK(e.vm->cached_pages() == 256);
    const std::uint64_t ev = e.pc("evictions");
    e.vm->reclaim(e.vm->free_bytes() + 300 * P, us(40000));   // more than there is: everything goes
    CHECK(e.pc("unmaps") == 256);
    CHECK(e.pc("evictions") - ev == 256);
    CHECK(e.vm->cached_pages() == 0);
    CHECK(e.ssdc("writes") == e.vmc("swap_outs"));   // only the anonymous buffer was written (to swap)
    CHECK_FALSE(e.vm->present(e.pid, m.value));
    const std::uint64_t major = e.pc("faults_major");
    REQUIRE(e.vm->touch(e.pid, m.value + 7 * P, false, us(50000)).ok());
    CHECK(e.pc("faults_major") == major + 1);
    CHECK(e.holds(m.value, 0, 0, 1 * MiB));
    e.accounted();
}

TEST_CASE("pagecache: GUP pins keep page-cache pages through reclaim until unpinned", "[os][pagecache][gup]") {
    Env e;
    const int fd = e.open(1);
    std::vector<std::uint64_t> frames;
    const auto p = e.vm->pin_file(e.pid, fd, 0, 12 * P, us(100), &frames);
    REQUIRE(p.ok());
    CHECK(p.value == 12);
    REQUIRE(frames.size() == 12);
    CHECK(e.pc("pins") == 12);
    // Uptodate when the pin returns: the device may read the frames then.
    CHECK(p.done >= us(100 + 50));
    for (std::uint64_t i = 0; i < 12; ++i) {
        const FrameOwner o = e.vm->frame_owner(frames[i]);
        CHECK(o.kind == FrameOwner::Kind::PageCache);
        CHECK(o.file == 1);
        CHECK(o.offset == i * P);
        CHECK(e.vm->file_pins(1, i * P) == 1);
    }
    CHECK(e.vm->cached_pages() == 32);   // readahead brought [0, 32)
    e.vm->reclaim(e.vm->free_bytes() + 1000 * P, us(1000));
    CHECK(e.vm->cached_pages() == 12);   // only the pinned ones stay
    for (std::uint64_t i = 0; i < 12; ++i) CHECK(e.vm->file_cached(1, i * P));
    CHECK(e.vm->unpin_file(e.pid, fd, 0, 13 * P, us(2000)).error == VmError::Invalid);   // page 12 is not pinned
    REQUIRE(e.vm->unpin_file(e.pid, fd, 0, 12 * P, us(2000)).ok());
    e.vm->reclaim(e.vm->free_bytes() + 1000 * P, us(3000));
    CHECK(e.vm->cached_pages() == 0);
    CHECK(e.vm->frame_owner(frames[0]).kind == FrameOwner::Kind::Free);
    e.accounted();
}

TEST_CASE("pagecache: under memory pressure a file read still returns the file's bytes", "[os][pagecache][reclaim]") {
    Env e(Settings{{"ssd.swap-size", "8MiB"}}, 4 * MiB);   // 1024 frames
    const int fd = e.open(0);
    const auto anon = e.vm->mmap(e.pid, 3 * MiB, Prot::ReadWrite, true, T0);   // most of memory
    REQUIRE(anon.ok());
    const auto buf = e.vm->mmap(e.pid, 1 * MiB, Prot::ReadWrite, false, T0);
    const auto r = e.vm->read(e.pid, fd, 0, 1 * MiB, buf.value, us(100));
    REQUIRE(r.ok());
    CHECK(r.value == 1 * MiB);
    CHECK(e.vmc("direct_reclaims") > 0);
    CHECK(e.holds(buf.value, 0, 0, 1 * MiB));
    e.accounted();
}

TEST_CASE("pagecache: file reads are spans on the SSD's track, --log narrates readahead and major faults",
          "[os][pagecache][trace]") {
    vrdmasim_test::TempDir dir;
    {
        Env e;
        e.tracer.open(dir / "trace.json", dir / "run.log");
        const int fd = e.open(0);
        const auto buf = e.vm->mmap(e.pid, P, Prot::ReadWrite, true, T0);
        REQUIRE(e.vm->read(e.pid, fd, 0, P, buf.value, us(10)).ok());
        const auto m = e.vm->mmap_file(e.pid, fd, 0, 1 * MiB, Prot::Read, false, us(100));
        REQUIRE(e.vm->touch(e.pid, m.value + 100 * P, false, us(200)).ok());
        e.tracer.close();
    }
    auto slurp = [](const std::string& path) {
        std::ifstream in(path);
        std::stringstream ss;
        ss << in.rdbuf();
        return ss.str();
    };
    const std::string trace = slurp(dir / "trace.json"), log = slurp(dir / "run.log");
    CHECK(trace.find("\"file read\"") != std::string::npos);
    CHECK(trace.find("\"ssd\"") != std::string::npos);
    CHECK(log.find("sync readahead file 0 at page 0: window [0, 4)") != std::string::npos);
    CHECK(log.find("mmap read-around file 0 at page 100: [84, 116)") != std::string::npos);
    CHECK(log.find("major fault on file 0 page 100") != std::string::npos);
}
