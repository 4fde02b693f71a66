// FileSystem: a simple read-only file system on the QFDB's SSD (the same Ssd
// that holds the node's swap area, so file reads and swap share its queue
// and bandwidth). `fs.files` files of `fs.file-size` bytes each are created
// at start as extents: contiguous runs of 4 KiB blocks placed after the swap
// area, disjoint from it and from each other. Their contents are known:
// byte `offset` of file `f` is FileSystem::byte(f, offset), so every byte a
// reader sees (read(), a file mapping, a DMA from page-cache pages) can be
// checked. The page cache that serves the files is the Vm's (pagecache.hpp,
// README.md "Files and the page cache"). One FileSystem per QFDB, on the
// node of FPGA fs.ssd-fpga; the board's other nodes cache the same files and
// read them through a RemoteBlock (README.md "The SSD from another FPGA").
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <systemc>

#include "src/core/context.hpp"
#include "models/os/ssd.hpp"

namespace vrdmasim {

// The parameters of section [fs], declared in filesystem.cpp; read through
// params_of<FsParams>().
struct FsParams {
    FsParams();
    ParamSet set;
    IntParam files;
    SizeParam file_size;
    IntParam ssd_fpga;
    SizeParam ssd_size;
    SizeParam readahead;
    TimeParam page_lookup;
    TimeParam readahead_page;
    TimeParam remote_request;
    TimeParam remote_serve;
};

// Where a node's page cache reads file blocks from: the board's FileSystem
// itself on the SSD's node, a RemoteBlock (remote_block.hpp) on the board's
// other nodes.
class FileReader {
public:
    virtual ~FileReader() = default;
    // Read [offset, offset + len) of `file` (block aligned, inside the
    // file) into `out` as one command issued at `at`; returns when the
    // bytes are in this node's memory.
    virtual sc_core::sc_time read(unsigned file, std::uint64_t offset, std::uint64_t len, unsigned char* out,
                                  sc_core::sc_time at) = 0;
    // Where the bytes come from, for --log ("the SSD").
    virtual std::string source() const = 0;
    // CPU of the reading node per command besides fs.readahead-page.
    virtual sc_core::sc_time command_cpu() const { return sc_core::SC_ZERO_TIME; }
};

class FileSystem : public FileReader {
public:
    static constexpr std::uint64_t kPage = 4096;
    static void declare_params(ParamRegistry& reg);
    // Summary columns of the page cache and the SSD's file reads.
    static void declare_metrics(MetricRegistry& reg);
    // Whether fs.files > 0 (a file system exists in this run).
    static bool configured(const Config& config);

    // Builds the files on `ssd` (its swap area comes first on the device);
    // ConfigError naming fs.file-size when swap plus files exceed
    // fs.ssd-size. Turns on the Ssd's file statistics.
    FileSystem(const SimContext& ctx, Ssd& ssd);

    unsigned files() const { return static_cast<unsigned>(extents_.size()); }
    std::uint64_t size(unsigned file) const;
    // Device byte address of the file's first block.
    std::uint64_t extent(unsigned file) const;

    // The known contents: byte `offset` of file `file`.
    static unsigned char byte(unsigned file, std::uint64_t offset);
    static void content(unsigned file, std::uint64_t offset, unsigned char* out, std::uint64_t len);

    // Read [offset, offset + len) of `file` (block aligned, inside the
    // file) into `out` as one SSD command issued at `at`; returns its
    // completion time. Out of range: std::logic_error.
    sc_core::sc_time read(unsigned file, std::uint64_t offset, std::uint64_t len, unsigned char* out,
                          sc_core::sc_time at) override;
    std::string source() const override { return "the SSD"; }

    // The page cache's parameters (fs.readahead in pages, per-page costs).
    std::uint64_t readahead_pages() const { return ra_pages_; }
    sc_core::sc_time page_lookup() const { return page_lookup_; }
    sc_core::sc_time readahead_page() const { return readahead_page_; }
    const SimContext& ctx() const { return ctx_; }

private:
    const SimContext& ctx_;
    Ssd& ssd_;
    std::vector<std::uint64_t> extents_;   // device byte address per file
    std::uint64_t file_size_;
    std::uint64_t ra_pages_;
    sc_core::sc_time page_lookup_, readahead_page_;
};

}   // namespace vrdmasim
