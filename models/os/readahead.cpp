// Readahead (pagecache.hpp; Linux's mm/readahead.c): reading missing pages
// of a file into the page cache, one SSD command per contiguous run
// (read_pages, as page_cache_ra_unbounded), the on-demand window for read()
// (ondemand_readahead: initial window, ramp-up, the PG_readahead marker of
// the asynchronous readahead) and mmap's read-around.
#include <algorithm>
#include <string>
#include <vector>

#include "models/os/page_alloc.hpp"
#include "models/os/pagecache.hpp"
#include "models/os/pgtable.hpp"

namespace vrdmasim {
namespace mm {

using sc_core::sc_time;

namespace {

// get_init_ra_size: the first window for a request of `size` pages.
std::uint64_t init_ra_size(std::uint64_t size, std::uint64_t max) {
    std::uint64_t n = 1;
    while (n < size) n <<= 1;   // roundup_pow_of_two
    if (n <= max / 32) return n * 4;
    if (n <= max / 4) return n * 2;
    return max;
}

// get_next_ra_size: the next window after one of `cur` pages.
std::uint64_t next_ra_size(std::uint64_t cur, std::uint64_t max) {
    if (cur < max / 16) return 4 * cur;
    if (cur <= max / 2) return 2 * cur;
    return max;
}

// A numbered step of the narrated story, following what the calling
// process is telling (a fault, a read()).
Tracer::Cause step(Mm& m, sc_time at, const char* name, const std::string& text) {
    return m.ctx.tracer.noting() ? m.ctx.tracer.note(Tracer::Track{}, name, at, sc_core::SC_ZERO_TIME, m.prefix, text)
                                 : Tracer::Cause{};
}

}   // namespace

std::uint64_t read_pages(Mm& m, unsigned file, std::uint64_t start, std::uint64_t nr, std::uint64_t mark,
                         std::uint64_t demand, Work& w) {
    PageCache& pc = *m.cache;
    const std::uint64_t end = std::min(start + nr, pc.fs.size(file) / kPage);
    std::uint64_t read = 0, idx = start;
    bool out_of_frames = false;
    while (idx < end && !out_of_frames) {
        if (find_page(pc, file, idx)) {
            ++idx;
            continue;
        }
        // A run of missing pages: frames allocated and added to the cache
        // (locked, not uptodate: reclaim passes them over), then one read.
        const std::uint64_t run = idx;
        std::vector<CachePage*> added;
        while (idx < end && !find_page(pc, file, idx)) {
            auto pa = alloc_page(m, w);
            if (!pa) {
                out_of_frames = true;   // readahead allocations give up quietly (__GFP_NORETRY)
                break;
            }
            CachePage& c = pc.pages[{file, idx}];
            c.pa = *pa;
            c.ready = sc_core::sc_max_time();
            pc.by_pa[*pa] = {file, idx};
            pc.added++;
            pc.pages_added.inc();
            w.cpu += pc.fs.readahead_page();
            added.push_back(&c);
            ++idx;
        }
        check_accounting(pc);
        if (added.empty()) break;
        const std::uint64_t n = added.size();
        std::vector<unsigned char> bytes(n * kPage);
        const bool remote = &pc.reader != &pc.fs;   // over the board network (remote_block.hpp)
        if (remote) w.cpu += pc.reader.command_cpu();
        const sc_time issue = w.at + w.cpu + w.io;
        // Remote: done is when the last data packet has landed; the bytes
        // are those the packets carried.
        const sc_time done = pc.reader.read(file, run * kPage, n * kPage, bytes.data(), issue);
        for (std::uint64_t i = 0; i < n; ++i) {
            CachePage& c = *added[i];
            access(m, true, c.pa, bytes.data() + i * kPage, kPage);
            c.ready = done;
            if (m.io_guard) m.io_guard(c.pa, done);   // not readable by a device before (Dram::hold)
            if (remote) verify_page(m, file, run + i, c);   // what the network delivered is the file's
            if (run + i == mark) c.readahead = true;
            if (run + i != demand) pc.readahead_pages.inc();
        }
        if (pc.waiting_for_fill) pc.filled.notify(sc_core::SC_ZERO_TIME);
        read += n;
        step(m, issue, "file read",
             "file " + std::to_string(file) + ": pages [" + std::to_string(run) + ", " + std::to_string(run + n) +
                 ") read from " + pc.reader.source() + ", done at " + std::to_string(to_us(done)) + " us");
    }
    return read;
}

void ondemand_readahead(Mm& m, OpenFile& of, std::uint64_t index, std::uint64_t req, bool marker, Work& w) {
    PageCache& pc = *m.cache;
    RaState& ra = of.ra;
    const std::uint64_t max = std::max<std::uint64_t>(1, pc.fs.readahead_pages());
    req = std::max<std::uint64_t>(1, req);
    bool ramp = false, initial = false;
    if (marker) pc.async_readaheads.inc();
    if (index == 0) {
        initial = true;   // start of file
    } else if (ra.valid && (index == ra.start + ra.size - ra.async_size || index == ra.start + ra.size)) {
        ramp = true;   // the expected index: sequential, push the window forward
    } else if (marker || req > max) {
        initial = true;   // a marker without matching state (Linux: its pagecache probe), an oversize read
    } else if (ra.prev_index != ~std::uint64_t{0} && index - ra.prev_index <= 1) {
        initial = true;   // sequential cache miss
    }
    if (!ramp && !initial) {   // standalone, small random read: read as is, state untouched
        read_pages(m, of.file, index, std::min(req, max), ~std::uint64_t{0}, index, w);
        return;
    }
    if (ramp) {
        ra.start += ra.size;
        ra.size = next_ra_size(ra.size, max);
        ra.async_size = ra.size;
    } else {
        ra.start = index;
        ra.size = init_ra_size(req, max);
        ra.async_size = ra.size > req ? ra.size - req : ra.size;
    }
    // readit: would this read hit its own marker at once? Then merge the
    // next window into this one (within max).
    if (index == ra.start && ra.size == ra.async_size) {
        const std::uint64_t add = next_ra_size(ra.size, max);
        if (ra.size + add <= max) {
            ra.async_size = add;
            ra.size += add;
        } else {
            ra.size = max;
            ra.async_size = max / 2;
        }
    }
    ra.valid = true;
    const Tracer::Cause window = step(m, w.at + w.cpu + w.io, "readahead",
                                      std::string(marker ? "async" : "sync") + " readahead file " +
                                          std::to_string(of.file) + " at page " + std::to_string(index) + ": window [" +
                                          std::to_string(ra.start) + ", " + std::to_string(ra.start + ra.size) +
                                          "), marker at " + std::to_string(ra.start + ra.size - ra.async_size));
    const Tracer::Scope reading(m.ctx.tracer, window);   // the window's reads follow it
    read_pages(m, of.file, ra.start, ra.size, ra.start + ra.size - ra.async_size, marker ? ~std::uint64_t{0} : index,
               w);
}

void mmap_readaround(Mm& m, OpenFile& of, std::uint64_t index, Work& w) {
    PageCache& pc = *m.cache;
    RaState& ra = of.ra;
    const std::uint64_t max = std::max<std::uint64_t>(1, pc.fs.readahead_pages());
    ra.start = index > max / 2 ? index - max / 2 : 0;
    ra.size = max;
    ra.async_size = max / 4;
    ra.valid = true;
    const Tracer::Cause around =
        step(m, w.at + w.cpu + w.io, "read-around",
             "mmap read-around file " + std::to_string(of.file) + " at page " + std::to_string(index) + ": [" +
                 std::to_string(ra.start) + ", " + std::to_string(ra.start + ra.size) + ")");
    const Tracer::Scope reading(m.ctx.tracer, around);   // the reads follow it
    read_pages(m, of.file, ra.start, ra.size, ra.start + ra.size - ra.async_size, index, w);
}

}   // namespace mm
}   // namespace vrdmasim
