// FileSystem (filesystem.hpp): the files, their extents on the SSD and their
// known contents; the parameters of section [fs] and the page cache's
// summary columns.
#include "models/os/filesystem.hpp"

#include <stdexcept>
#include <string>

#include "src/core/metrics.hpp"

namespace vrdmasim {

using sc_core::sc_time;

FsParams::FsParams()
    : set("fs", "files on the QFDB's SSD and the page cache that serves them"),
      files(set.integer("files", "0",
                        "files created at start on the SSD (0: no file system, the page cache stays empty); an "
                        "experiment's choice")
                .range("0", "65536")),
      file_size(set.size("file-size", "1MiB",
                         "size of each file, a whole number of 4 KiB blocks (an experiment's "
                         "choice)")
                    .range("4KiB", "64GiB")),
      ssd_fpga(set.integer("ssd-fpga", "0",
                           "FPGA of the QFDB (0-3) the M.2 SSD is attached to; nodes on the board's other FPGAs "
                           "read its files over the intra-board network (one M.2 SSD per QFDB, Chaix et al., H2RC "
                           "2019; *estimate*: which FPGA, and how the others reach it, is not in our sources)")
                   .range("0", "3")),
      ssd_size(set.size("ssd-size", "512GB",
                        "capacity of the QFDB's M.2 SSD: swap area plus files must fit (Chaix et al., H2RC 2019)")
                   .range("4KiB", "16TB")),
      readahead(set.size("readahead", "128KiB",
                         "maximum readahead window (file_ra_state.ra_pages): Linux's default VM_READAHEAD_PAGES = "
                         "128 KiB (include/linux/mm.h; /sys/block/DEV/queue/read_ahead_kb)")
                    .range("4KiB", "64MiB")),
      page_lookup(set.time("page-lookup", "100ns",
                           "CPU per page looked up in the page cache by read() or a file fault (xarray walk, folio "
                           "reference; *estimate* for a 1.5 GHz A53)")
                      .range("0ps", "1ms")),
      readahead_page(set.time("readahead-page", "500ns",
                              "CPU per page read ahead: folio allocated, added to the page cache and to the bio "
                              "(*estimate* for a 1.5 GHz A53)")
                         .range("0ps", "1ms")),
      remote_request(set.time("remote-request", "1us",
                              "CPU of a node without the SSD per remote file read command: build the request, post "
                              "it to the NI, take the completion (*estimate*: a block-layer submission and an "
                              "interrupt on a 1.5 GHz A53; our sources do not say how the QFDB's other FPGAs reach "
                              "the SSD)")
                         .range("0ps", "1ms")),
      remote_serve(set.time("remote-serve", "2us",
                            "CPU of the SSD's node per remote command, before the SSD read: the request's "
                            "interrupt, finding the extent, submitting the bio and setting up the reply's DMA "
                            "(*estimate*, like an NBD/NVMe-oF target's per-command cost on a 1.5 GHz A53)")
                       .range("0ps", "1ms")) {}

void FileSystem::declare_params(ParamRegistry& reg) { reg.add(params_of<FsParams>().set); }

bool FileSystem::configured(const Config& config) { return config[params_of<FsParams>().files] > 0; }

void FileSystem::declare_metrics(MetricRegistry& reg) {
    const auto present = [](const Config& c) { return configured(c); };
    reg.sum_counters("pagecache_hits", "Pages found in the page cache by read(), file faults and page-cache pins.",
                     {"pagecache.hits"}, present);
    reg.sum_counters("pagecache_misses", "Pages not in the page cache when read(), a file fault or a pin wanted them.",
                     {"pagecache.misses"}, present);
    reg.sum_counters("readahead_pages", "Pages read into the page cache by readahead beyond the page that missed.",
                     {"pagecache.readahead_pages"}, present);
    reg.sum_counters("pagecache_evictions", "Clean page-cache pages dropped by reclaim (never written anywhere).",
                     {"pagecache.evictions"}, present);
    reg.sum_counters("file_faults_major", "Faults on file mappings whose page had to be read from the SSD.",
                     {"pagecache.faults_major"}, present);
    reg.sum_counters("ssd_file_reads", "Read commands the SSD served for files (page-cache fills).", {"ssd.file_reads"},
                     present);
    reg.sum_counters("ssd_file_bytes", "Bytes the SSD read for files.", {"ssd.file_bytes"}, present);
}

FileSystem::FileSystem(const SimContext& ctx, Ssd& ssd)
    : ctx_(ctx),
      ssd_(ssd),
      file_size_(ctx.config[params_of<FsParams>().file_size]),
      ra_pages_(ctx.config[params_of<FsParams>().readahead] / kPage),
      page_lookup_(ctx.config[params_of<FsParams>().page_lookup]),
      readahead_page_(ctx.config[params_of<FsParams>().readahead_page]) {
    const auto& P = params_of<FsParams>();
    if (file_size_ % kPage != 0) throw ctx.config.refuse(P.file_size, "must be a whole number of 4 KiB blocks");
    if (ctx.config[P.readahead] % kPage != 0)
        throw ctx.config.refuse(P.readahead, "must be a whole number of 4 KiB pages");
    const auto n = static_cast<std::uint64_t>(ctx.config[P.files]);
    const std::uint64_t capacity = ctx.config[P.ssd_size];
    std::uint64_t addr = ssd.swap_bytes();   // the file area starts after the swap area
    for (std::uint64_t f = 0; f < n; ++f) {
        if (addr + file_size_ > capacity || addr + file_size_ < addr)
            throw ctx.config.refuse(P.file_size, std::to_string(n) + " files of " + std::to_string(file_size_) +
                                                     " bytes after a swap area of " + std::to_string(ssd.swap_bytes()) +
                                                     " bytes do not fit in fs.ssd-size");
        extents_.push_back(addr);
        addr += file_size_;
    }
    ssd.enable_files();
}

std::uint64_t FileSystem::size(unsigned file) const {
    if (file >= extents_.size()) throw std::logic_error("FileSystem: no file " + std::to_string(file));
    return file_size_;
}

std::uint64_t FileSystem::extent(unsigned file) const {
    if (file >= extents_.size()) throw std::logic_error("FileSystem: no file " + std::to_string(file));
    return extents_[file];
}

namespace {
// splitmix64: a well-mixed 64-bit word per (file, 8-byte word of the file).
std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}
}   // namespace

unsigned char FileSystem::byte(unsigned file, std::uint64_t offset) {
    const std::uint64_t w = mix((static_cast<std::uint64_t>(file) << 40) ^ (offset >> 3));
    return static_cast<unsigned char>(w >> (8 * (offset & 7)));
}

void FileSystem::content(unsigned file, std::uint64_t offset, unsigned char* out, std::uint64_t len) {
    for (std::uint64_t i = 0; i < len; ++i) out[i] = byte(file, offset + i);
}

sc_time FileSystem::read(unsigned file, std::uint64_t offset, std::uint64_t len, unsigned char* out, sc_time at) {
    if (len == 0 || offset % kPage != 0 || len % kPage != 0 || offset + len > size(file) || offset + len < offset)
        throw std::logic_error("FileSystem::read: [" + std::to_string(offset) + ", +" + std::to_string(len) +
                               ") is not whole blocks of file " + std::to_string(file));
    content(file, offset, out, len);
    return ssd_.read_blocks(extent(file) + offset, len, at, file, offset);
}

}   // namespace vrdmasim
