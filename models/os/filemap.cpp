// The Vm's calls on files (vm.hpp "files"; Linux's mm/filemap.c): open and
// close, read() through the page cache with readahead, a read-only shared
// mmap of a file and its fault (filemap_fault: a major fault reads the page
// from the SSD with mmap read-around), pins of page-cache pages for a
// zero-copy send (sendfile), and inspection.
#include <algorithm>
#include <stdexcept>
#include <string>
#include <vector>

#include "models/os/inflight.hpp"
#include "models/os/memory.hpp"
#include "models/os/mmap.hpp"
#include "models/os/pagecache.hpp"
#include "models/os/pgtable.hpp"
#include "models/os/syscall.hpp"
#include "models/os/vmscan.hpp"

namespace vrdmasim {
namespace mm {

using sc_core::sc_time;

namespace {

PageCache& cache_of(Mm& m) {
    if (!m.cache) throw std::logic_error("Vm: no file system on this node (set_file_system)");
    return *m.cache;
}

// The open file fd of pid, or nullptr.
OpenFile* file_of(PageCache& pc, int pid, int fd, bool must_be_open = true) {
    auto it = pc.fds.find(fd);
    if (it == pc.fds.end() || it->second.pid != pid || (must_be_open && !it->second.open)) return nullptr;
    return &it->second;
}

// The cached page (file, idx), read in through readahead when missing (for
// a request reaching page `last`); a PG_readahead page starts the next
// asynchronous readahead. Counts the hit or miss. Returns the page with one
// transient reference taken (release with refs--), or nullptr when no frame
// could be had.
CachePage* get_page(Mm& m, OpenFile& of, std::uint64_t idx, std::uint64_t last, Work& w) {
    PageCache& pc = *m.cache;
    CachePage* c = find_page(pc, of.file, idx);
    if (!c) {
        pc.misses.inc();
        ondemand_readahead(m, of, idx, last - idx + 1, false, w);
        c = find_page(pc, of.file, idx);
        if (!c && read_pages(m, of.file, idx, 1, ~std::uint64_t{0}, idx, w)) c = find_page(pc, of.file, idx);
        if (!c) return nullptr;
        c->refs++;
    } else {
        pc.hits.inc();
        c->refs++;   // held across the readahead's allocations (reclaim passes it over)
        if (c->readahead) {
            c->readahead = false;
            ondemand_readahead(m, of, idx, last - idx + 1, true, w);
        }
    }
    c->referenced = true;   // mark_page_accessed
    w.cpu += pc.fs.page_lookup();
    return c;
}

}   // namespace

VmError file_fault(Mm& m, Process& p, const Vma& v, std::uint64_t va, Work& w) {
    PageCache& pc = cache_of(m);
    const std::uint64_t page = align_down(va, kPage);
    const std::uint64_t idx = (page - v.file_base) / kPage;
    const unsigned file = static_cast<unsigned>(v.file);
    if ((idx + 1) * kPage > pc.fs.size(file)) return VmError::Fault;   // past the end of the file: SIGBUS
    OpenFile& of = pc.fds.at(v.fd);
    CachePage* c = find_page(pc, file, idx);
    if (!c) {   // a major fault: read-around from the SSD
        pc.misses.inc();
        mmap_readaround(m, of, idx, w);
        c = find_page(pc, file, idx);
        if (!c && read_pages(m, file, idx, 1, ~std::uint64_t{0}, idx, w)) c = find_page(pc, file, idx);
        if (!c) return VmError::NoMemory;
        pc.faults_major.inc();
        w.cpu += m.params.major_fault;
        if (m.ctx.tracer.noting())
            m.ctx.tracer.note(Tracer::Track{}, "major fault", w.at + w.cpu + w.io, sc_core::SC_ZERO_TIME, m.prefix,
                              "major fault on file " + std::to_string(file) + " page " + std::to_string(idx) +
                                  " (pid " + std::to_string(p.pid) + ", va " + hex(page) +
                                  "): read from the SSD, ready at " + std::to_string(to_us(c->ready)) + " us");
    } else {
        pc.hits.inc();
        pc.faults_minor.inc();
        w.cpu += m.params.minor_fault;
        if (c->readahead) {   // do_async_mmap_readahead
            c->refs++;
            c->readahead = false;
            ondemand_readahead(m, of, idx, pc.fs.readahead_pages(), true, w);
            c->refs--;
        }
    }
    w.cpu += pc.fs.page_lookup();
    const sc_time now = w.at + w.cpu + w.io;
    if (c->ready > now) {
        // Not uptodate yet: the page table is allocated now (pte_alloc), the
        // PTE written when the read completes (inflight.hpp), so no walker
        // reaches the frame before its bytes are there.
        try {
            p.pt->map_page(page, c->pa, attrs(v.prot));
        } catch (const OutOfFrames&) {
            return VmError::NoMemory;
        }
        p.pt->unmap(page);
        Inflight i;
        i.kind = Inflight::Kind::File;
        i.pa = c->pa;
        i.file = file;
        i.index = idx;
        c->refs++;   // held until then: reclaim passes the page over
        wait_ready(*m.cache, *c, w);
        i.done = c->ready;
        defer_map(m, p.pid, page, i);
    } else {
        check_uptodate(m, c->pa, now);
        verify_page(m, file, idx, *c);   // what the mapping shows is the file's content
        try {
            p.pt->map_page(page, c->pa, attrs(v.prot));
        } catch (const OutOfFrames&) {
            return VmError::NoMemory;
        }
        res_set(m, p.pid, page, true);
        c->mapcount++;
        m.stats.pages_mapped.inc();
    }
    w.cpu += m.params.pte_update;
    w.faulted += 1;
    return VmError::Ok;
}

void peek_file(Mm& m, const Vma& v, std::uint64_t va, unsigned char* out, std::uint64_t len) {
    PageCache& pc = cache_of(m);
    const std::uint64_t off = va - v.file_base;
    const unsigned file = static_cast<unsigned>(v.file);
    const std::uint64_t size = pc.fs.size(file);
    const CachePage* c = find_page(pc, file, off / kPage);
    if (c) {
        access(m, false, c->pa + (off & (kPage - 1)), out, len);
        return;
    }
    for (std::uint64_t i = 0; i < len; ++i) out[i] = off + i < size ? FileSystem::byte(file, off + i) : 0;
}

}   // namespace mm

using namespace mm;

void Vm::set_file_system(FileSystem& fs) { set_file_system(fs, fs); }

void Vm::set_file_system(FileSystem& fs, FileReader& reader) {
    Mm& m = *mm_;
    std::string prefix = m.prefix;
    if (prefix.size() > 3 && prefix.compare(prefix.size() - 3, 3, ".vm") == 0) prefix.resize(prefix.size() - 3);
    m.cache = std::make_shared<PageCache>(fs, reader, m.ctx.stats, prefix + ".pagecache");
    m.cache->copy_bytes_per_s = m.ctx.config[params_of<VmParams>().copy_rate] / 8;
}

bool Vm::has_files() const { return mm_->cache != nullptr; }

VmResult Vm::open(int pid, unsigned file, sc_core::sc_time at) {
    Mm& m = *mm_;
    PageCache& pc = cache_of(m);
    Call c;
    if (const VmError e = call_enter(m, c, "syscall", m.params.syscall, pid, at); e != VmError::Ok)
        return call_return(m, c, e);
    if (file >= pc.fs.files()) return call_return(m, c, VmError::Invalid);
    const int fd = pc.next_fd++;
    OpenFile& of = pc.fds[fd];
    of.pid = pid;
    of.file = file;
    return call_return(m, c, VmError::Ok, static_cast<std::uint64_t>(fd));
}

VmResult Vm::close(int pid, int fd, sc_core::sc_time at) {
    Mm& m = *mm_;
    PageCache& pc = cache_of(m);
    Call c;
    if (const VmError e = call_enter(m, c, "syscall", m.params.syscall, pid, at); e != VmError::Ok)
        return call_return(m, c, e);
    OpenFile* of = file_of(pc, pid, fd);
    if (!of) return call_return(m, c, VmError::Invalid);
    of->open = false;   // mappings made from it keep using its readahead state
    return call_return(m, c, VmError::Ok);
}

VmResult Vm::read(int pid, int fd, std::uint64_t offset, std::uint64_t len, std::uint64_t buf, sc_core::sc_time at) {
    Mm& m = *mm_;
    PageCache& pc = cache_of(m);
    Call c;
    if (const VmError e = call_enter(m, c, "syscall", m.params.syscall, pid, at); e != VmError::Ok)
        return call_return(m, c, e);
    OpenFile* of = file_of(pc, pid, fd);
    if (!of) return call_return(m, c, VmError::Invalid);
    const std::uint64_t size = pc.fs.size(of->file);
    if (offset >= size || len == 0) return call_return(m, c, VmError::Ok, 0);   // at or past EOF
    len = std::min(len, size - offset);
    if (buf + len < buf || ((buf + len) >> 48) != 0 || !covered(*c.p, buf, buf + len))
        return call_return(m, c, VmError::Fault);
    pc.reads.inc();
    const std::uint64_t last = (offset + len - 1) / kPage;
    std::uint64_t copied = 0;
    VmError e = VmError::Ok;
    std::vector<unsigned char> bytes(kPage);
    while (copied < len && e == VmError::Ok) {
        const std::uint64_t pos = offset + copied, idx = pos / kPage, in = pos % kPage;
        CachePage* cp = get_page(m, *of, idx, last, c.w);
        if (!cp) {
            e = copied ? VmError::Ok : VmError::NoMemory;   // a short read, or ENOMEM
            break;
        }
        wait_ready(*m.cache, *cp, c.w);
        const std::uint64_t n = std::min(len - copied, kPage - in);
        access(m, false, cp->pa + in, bytes.data(), n);
        for (std::uint64_t i = 0; i < n; ++i)   // every byte copied out is the file's
            if (bytes[i] != FileSystem::byte(of->file, pos + i))
                throw std::logic_error("read(): byte " + std::to_string(pos + i) + " of file " +
                                       std::to_string(of->file) + " is wrong in the page cache");
        // copy_to_user: the destination pages fault in as the copy reaches them
        for (std::uint64_t done = 0; done < n;) {
            const std::uint64_t dst = buf + copied;   // `copied` already counts this page's `done` bytes
            const std::uint64_t k = std::min(n - done, kPage - (dst & (kPage - 1)));
            std::uint64_t next = 0, pa = 0;
            e = fault_page(m, *c.p, dst, true, c.w, next);
            if (e == VmError::Ok && !resident_frame(m, *c.p, dst, pa)) e = VmError::NoMemory;
            if (e != VmError::Ok) break;
            access(m, true, pa, bytes.data() + done, k);
            done += k;
            copied += k;
        }
        c.w.cpu += sc_time(static_cast<double>(n) / pc.copy_bytes_per_s, sc_core::SC_SEC);
        cp->refs--;
        of->ra.prev_index = idx;
        if (e != VmError::Ok) {   // the buffer could not take more: a short read, or the error
            if (copied) e = VmError::Ok;
            else if (e == VmError::Access) e = VmError::Fault;
            break;
        }
    }
    pc.bytes_read.inc(copied);
    return call_return(m, c, e, copied);
}

VmResult Vm::mmap_file(int pid, int fd, std::uint64_t offset, std::uint64_t len, Prot prot, bool populate,
                       sc_core::sc_time at) {
    Mm& m = *mm_;
    PageCache& pc = cache_of(m);
    OpenFile* of = file_of(pc, pid, fd);
    if (!of || offset % kPage != 0 || len == 0 || prot == Prot::None) {
        Call c;
        call_enter(m, c, "syscall", m.params.syscall, pid, at);
        return call_return(m, c, VmError::Invalid);
    }
    if (can_write(prot)) {   // the files are read-only: a writable shared mapping is EACCES
        Call c;
        call_enter(m, c, "syscall", m.params.syscall, pid, at);
        return call_return(m, c, VmError::Access);
    }
    VmResult r = mmap(pid, len, Prot::Read, false, at);   // placement and the syscall's cost
    if (!r.ok()) return r;
    Vma& v = m.procs.at(pid).vmas.at(r.value);
    v.file = static_cast<int>(of->file);
    v.fd = fd;
    v.file_base = r.value - offset;
    if (populate) {   // MAP_POPULATE: best effort
        const std::uint64_t in_file = pc.fs.size(of->file) > offset ? pc.fs.size(of->file) - offset : 0;
        const std::uint64_t n = std::min(round_up(len, kPage), round_up(in_file, kPage));
        if (n) r.done = fault_in(pid, r.value, n, false, r.done).done;
    }
    return r;
}

VmResult Vm::pin_file(int pid, int fd, std::uint64_t offset, std::uint64_t len, sc_core::sc_time at,
                      std::vector<std::uint64_t>* frames) {
    Mm& m = *mm_;
    PageCache& pc = cache_of(m);
    Call c;
    if (const VmError e = call_enter(m, c, "pin", m.params.pin_call, pid, at); e != VmError::Ok)
        return call_return(m, c, e);
    OpenFile* of = file_of(pc, pid, fd);
    if (!of || len == 0 || offset % kPage != 0 || offset + len > pc.fs.size(of->file) || offset + len < offset)
        return call_return(m, c, VmError::Invalid);
    const std::uint64_t first = offset / kPage, last = (offset + len - 1) / kPage;
    std::vector<CachePage*> got;
    for (std::uint64_t idx = first; idx <= last; ++idx) {
        CachePage* cp = get_page(m, *of, idx, last, c.w);
        if (!cp) {   // no frame: the pins of this call are dropped
            for (CachePage* g : got) g->pins--;
            return call_return(m, c, VmError::NoMemory);
        }
        cp->pins++;
        cp->refs--;
        got.push_back(cp);
    }
    for (std::uint64_t i = 0; i < got.size(); ++i) {   // uptodate before the device may read them
        wait_ready(*m.cache, *got[i], c.w);
        verify_page(m, of->file, first + i, *got[i]);
        if (frames) frames->push_back(got[i]->pa);
    }
    pc.pins_taken.inc(got.size());
    c.w.cpu += m.params.pin_page * static_cast<double>(got.size());
    return call_return(m, c, VmError::Ok, got.size());
}

VmResult Vm::unpin_file(int pid, int fd, std::uint64_t offset, std::uint64_t len, sc_core::sc_time at) {
    Mm& m = *mm_;
    PageCache& pc = cache_of(m);
    Call c;
    if (const VmError e = call_enter(m, c, "pin", m.params.pin_call, pid, at); e != VmError::Ok)
        return call_return(m, c, e);
    OpenFile* of = file_of(pc, pid, fd, false);
    if (!of || len == 0 || offset % kPage != 0 || offset + len > pc.fs.size(of->file) || offset + len < offset)
        return call_return(m, c, VmError::Invalid);
    const std::uint64_t first = offset / kPage, last = (offset + len - 1) / kPage;
    for (std::uint64_t idx = first; idx <= last; ++idx) {   // every page must be pinned: else nothing changes
        const CachePage* cp = find_page(pc, of->file, idx);
        if (!cp || !cp->pins) return call_return(m, c, VmError::Invalid);
    }
    for (std::uint64_t idx = first; idx <= last; ++idx) find_page(pc, of->file, idx)->pins--;
    c.w.cpu += m.params.pin_page * static_cast<double>(last - first + 1);
    return call_return(m, c, VmError::Ok, last - first + 1);
}

std::uint64_t Vm::cached_pages() const { return mm_->cache ? mm_->cache->pages.size() : 0; }

bool Vm::file_cached(unsigned file, std::uint64_t offset) const {
    return mm_->cache && find_page(*mm_->cache, file, offset / kPage) != nullptr;
}

unsigned Vm::file_pins(unsigned file, std::uint64_t offset) const {
    const CachePage* c = mm_->cache ? find_page(*mm_->cache, file, offset / kPage) : nullptr;
    return c ? c->pins : 0;
}

}   // namespace vrdmasim
