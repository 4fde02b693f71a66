// The page cache of one node's Vm (Linux's mm/filemap.c, mm/readahead.c):
// the pages of files held in DRAM frames, keyed by (file, page index); the
// open files with their readahead state; reclaim of clean pages. Private to
// models/os: the Vm's calls on files are in filemap.cpp (read, mmap of a
// file, the file fault, pins of cache pages), readahead in readahead.cpp,
// reclaim in pagecache.cpp. README.md "Files and the page cache".
#pragma once

#include <cstdint>
#include <map>
#include <unordered_map>
#include <utility>

#include <systemc>

#include "models/os/filesystem.hpp"
#include "models/os/mm.hpp"

namespace vrdmasim {
namespace mm {

struct Batch;

// One cached page (a folio of one 4 KiB page).
struct CachePage {
    std::uint64_t pa = 0;
    sc_core::sc_time ready;   // its read from the SSD completes then (uptodate from then on)
    unsigned mapcount = 0;   // PTEs of processes mapping it
    unsigned pins = 0;   // GUP pins (pin_file): never reclaimed while pinned
    unsigned refs = 0;   // transient references of a call in progress (a copy out of it)
    bool referenced = false;   // PG_referenced: second chance in reclaim
    bool readahead = false;   // PG_readahead: reaching it starts the next async readahead
};

// file_ra_state (include/linux/fs.h): the readahead window of one open file.
struct RaState {
    bool valid = false;
    std::uint64_t start = 0, size = 0, async_size = 0;
    std::uint64_t prev_index = ~std::uint64_t{0};   // last page index read (prev_pos >> PAGE_SHIFT)
};

struct OpenFile {
    int pid = 0;
    unsigned file = 0;
    bool open = true;   // closed: no more read(); mappings made from it keep its readahead state
    RaState ra;
};

using PageKey = std::pair<unsigned, std::uint64_t>;   // (file, page index)

struct PageCache {
    // `r` reads the blocks: `f` itself on the SSD's node, a RemoteBlock on
    // the board's other nodes.
    PageCache(FileSystem& f, FileReader& r, StatRegistry& s, const std::string& prefix);
    FileSystem& fs;
    FileReader& reader;
    std::map<PageKey, CachePage> pages;
    std::unordered_map<std::uint64_t, PageKey> by_pa;   // frame -> its page
    std::map<int, OpenFile> fds;   // by fd, every process's (fds from 3)
    int next_fd = 3;
    PageKey hand{0, 0};   // reclaim's clock over unmapped pages
    std::uint64_t added = 0, evicted = 0;   // cached pages = added - evicted (checked)
    double copy_bytes_per_s = 0;   // vm.copy-rate: read()'s copy to user
    Counter &hits, &misses, &pages_added, &readahead_pages, &async_readaheads, &evictions, &unmaps, &faults_major,
        &faults_minor, &reads, &bytes_read, &pins_taken;
    // A read whose call waits for the network (a RemoteBlock in exact time
    // order) leaves its pages locked meanwhile: processes that find them
    // wait for `filled` (notified when a read's pages are uptodate).
    sc_core::sc_event filled;
    unsigned waiting_for_fill = 0;
};

// The cached page of (file, index), or nullptr.
CachePage* find_page(PageCache& c, unsigned file, std::uint64_t index);
// Whether frame pa holds a page-cache page.
bool cache_frame(const Mm& m, std::uint64_t pa);
// A PTE mapping frame pa was cleared (munmap, MADV_DONTNEED): if pa is a
// page-cache page its mapcount drops and true is returned (the frame is the
// cache's, not to be freed); false otherwise.
bool cache_unmap(Mm& m, std::uint64_t pa);
// Drop a clean page from the cache: its frame goes to b's frees (freed after
// the invalidation), counted as evicted.
void drop_page(Mm& m, PageKey key, Batch& b);
// Reclaim of unmapped page-cache pages (shrink_inactive_list on the file
// LRU): a clock from the cache's hand over the pages no process maps, not
// pinned, not in use and not under I/O; referenced pages get a second
// chance, others are dropped, until free + pending frees >= target_pages.
void shrink_cache(Mm& m, std::uint64_t target_pages, Batch& b, Work& w);
// Reclaim's clock reached a present leaf of a file mapping (visit in
// vmscan.cpp): referenced (AF) -> AF cleared; else the PTE is cleared
// (try_to_unmap) and the page, once no process maps it and nothing pins
// it, dropped (clean: nothing written). Always true (never "swap full").
bool visit_file(Mm& m, Process& p, std::uint64_t va, Batch& b, Work& w);
// The pages [start, start + nr) of `file` not yet cached are read from the
// SSD, locally or over the board network (the cache's reader; one command
// per contiguous run), issued after their CPU at w's
// time; PG_readahead set on page `mark` if this call read it. `demand`: the
// index whose miss caused the read (not counted as readahead). Stops early
// when no frame can be had. Returns the number of pages read.
std::uint64_t read_pages(Mm& m, unsigned file, std::uint64_t start, std::uint64_t nr, std::uint64_t mark,
                         std::uint64_t demand, Work& w);
// Linux's ondemand readahead for a miss (`marker` false: page_cache_sync_ra)
// or a PG_readahead page reached (`marker` true: page_cache_async_ra) at
// `index`, the request covering `req` pages (readahead.cpp).
void ondemand_readahead(Mm& m, OpenFile& of, std::uint64_t index, std::uint64_t req, bool marker, Work& w);
// mmap read-around for a fault miss at `index` (do_sync_mmap_readahead).
void mmap_readaround(Mm& m, OpenFile& of, std::uint64_t index, Work& w);
// Wait (w.io) until page c is uptodate.
void wait_ready(PageCache& pc, const CachePage& c, Work& w);
// Check the bytes of cache page (file, index) in DRAM against the file's
// known contents (std::logic_error naming the first wrong byte).
void verify_page(Mm& m, unsigned file, std::uint64_t index, const CachePage& c);
// Whether some VMA of p in [va, end) maps a file.
bool maps_file(Process& p, std::uint64_t va, std::uint64_t end);
// added - evicted == pages.size(), else std::logic_error.
void check_accounting(const PageCache& c);

// The file fault (filemap_fault): the page of file VMA v at va made present
// from the page cache, read from the SSD first if needed (a major fault).
VmError file_fault(Mm& m, Process& p, const Vma& v, std::uint64_t va, Work& w);
// peek_user of a file mapping's page that is not present: the cached page's
// bytes, else the file's (what a fault would bring); zeros past the end.
void peek_file(Mm& m, const Vma& v, std::uint64_t va, unsigned char* out, std::uint64_t len);

}   // namespace mm
}   // namespace vrdmasim
