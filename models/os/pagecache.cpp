// The page cache's pages (pagecache.hpp): lookup, the reverse map from
// frames, dropping clean pages, and reclaim of page-cache pages — unmapped
// ones by the cache's own clock (shrink_cache), mapped ones when reclaim's
// clock over resident leaves reaches them (visit_file); mm/filemap.c,
// mm/vmscan.c, mm/rmap.c.
#include "models/os/pagecache.hpp"

#include <stdexcept>
#include <string>
#include <vector>

#include "models/os/mmu_notifier.hpp"
#include "models/os/pgtable.hpp"
#include "models/os/vmscan.hpp"

namespace vrdmasim {
namespace mm {

using namespace aarch64;
using sc_core::sc_time;

PageCache::PageCache(FileSystem& f, FileReader& r, StatRegistry& s, const std::string& prefix)
    : fs(f),
      reader(r),
      hits(s.counter(prefix + ".hits", "", "pages found in the page cache (read, file fault, pin)")),
      misses(s.counter(prefix + ".misses", "", "pages not cached when wanted (read, file fault, pin)")),
      pages_added(s.counter(prefix + ".pages_added", "", "pages read from the SSD into the page cache")),
      readahead_pages(s.counter(prefix + ".readahead_pages", "",
                                "pages read into the cache beyond the page whose miss caused the read")),
      async_readaheads(
          s.counter(prefix + ".async_readaheads", "", "readaheads started by reaching a PG_readahead page")),
      evictions(s.counter(prefix + ".evictions", "", "clean pages dropped from the cache by reclaim")),
      unmaps(s.counter(prefix + ".unmaps", "", "file PTEs cleared by reclaim (try_to_unmap)")),
      faults_major(s.counter(prefix + ".faults_major", "", "file faults that read the page from the SSD")),
      faults_minor(s.counter(prefix + ".faults_minor", "", "file faults served from the page cache")),
      reads(s.counter(prefix + ".reads", "", "read() calls")),
      bytes_read(s.counter(prefix + ".bytes_read", "B", "bytes read() copied to user buffers")),
      pins_taken(s.counter(prefix + ".pins", "", "page-cache pages pinned (pin_file)")) {}

CachePage* find_page(PageCache& c, unsigned file, std::uint64_t index) {
    auto it = c.pages.find({file, index});
    return it == c.pages.end() ? nullptr : &it->second;
}

bool cache_frame(const Mm& m, std::uint64_t pa) { return m.cache && m.cache->by_pa.count(pa) > 0; }

bool cache_unmap(Mm& m, std::uint64_t pa) {
    if (!m.cache) return false;
    auto it = m.cache->by_pa.find(pa);
    if (it == m.cache->by_pa.end()) return false;
    CachePage& c = m.cache->pages.at(it->second);
    if (c.mapcount == 0) throw std::logic_error("page cache: unmapping a page no PTE maps");
    c.mapcount--;
    return true;
}

bool maps_file(Process& p, std::uint64_t va, std::uint64_t end) {
    auto it = p.vmas.upper_bound(va);
    if (it != p.vmas.begin()) --it;
    for (; it != p.vmas.end() && it->first < end; ++it)
        if (it->second.end > va && it->second.file >= 0) return true;
    return false;
}

void check_accounting(const PageCache& c) {
    if (c.added - c.evicted != c.pages.size() || c.by_pa.size() != c.pages.size())
        throw std::logic_error("page cache: " + std::to_string(c.pages.size()) + " pages cached, but " +
                               std::to_string(c.added) + " added - " + std::to_string(c.evicted) + " evicted");
}

void drop_page(Mm& m, PageKey key, Batch& b) {
    PageCache& pc = *m.cache;
    auto it = pc.pages.find(key);
    const CachePage& c = it->second;
    if (c.mapcount || c.pins || c.refs) throw std::logic_error("page cache: dropping a page in use");
    b.frees.push_back(c.pa);   // freed after the invalidation (complete)
    pc.by_pa.erase(c.pa);
    pc.pages.erase(it);
    pc.evicted++;
    pc.evictions.inc();
    check_accounting(pc);
}

void shrink_cache(Mm& m, std::uint64_t target_pages, Batch& b, Work& w) {
    if (!m.cache) return;
    PageCache& pc = *m.cache;
    auto enough = [&] { return m.frames.free_pages() + b.frees.size() >= target_pages; };
    if (enough() || pc.pages.empty()) return;
    auto it = pc.pages.lower_bound(pc.hand);
    if (it == pc.pages.end()) it = pc.pages.begin();
    // At most two sweeps (every page seen twice: a referenced one is
    // dropped on the second visit).
    std::uint64_t budget = 2 * pc.pages.size();
    while (!enough() && budget-- > 0 && !pc.pages.empty()) {
        if (it == pc.pages.end()) it = pc.pages.begin();
        const PageKey key = it->first;
        CachePage& c = it->second;
        ++it;
        pc.hand = it == pc.pages.end() ? PageKey{0, 0} : it->first;
        if (c.mapcount || c.pins || c.refs || c.ready > w.at + w.cpu) continue;   // mapped, pinned, busy, under I/O
        w.cpu += m.params.scan_pte;
        m.stats.pages_scanned.inc();
        if (c.referenced) {   // second chance
            c.referenced = false;
            continue;
        }
        drop_page(m, key, b);
    }
}

bool visit_file(Mm& m, Process& p, std::uint64_t va, Batch& b, Work& w) {
    std::uint64_t slot = 0;
    int level = 0;
    const std::uint64_t d = leaf(m, p, va, &slot, &level);
    if (level != 3 || !(d & kValid)) throw std::logic_error("page cache: a file leaf that is not a present PTE");
    m.stats.pages_scanned.inc();
    w.cpu += m.params.scan_pte;
    if (device_locked(m, p.pid, va, kPage, w.at + w.cpu)) {   // the NI is accessing it (NetVM)
        m.locked_skips[0]->inc();
        return true;
    }
    if (d & kAf) {   // referenced: second chance
        wr(m, slot, d & ~kAf);
        w.cpu += m.params.pte_update;
        b.inv(p.pid, va, kPage);
        return true;
    }
    const std::uint64_t pa = d & kAddrMask;
    auto key = m.cache->by_pa.find(pa);
    if (key == m.cache->by_pa.end()) throw std::logic_error("page cache: a file PTE whose frame is not cached");
    wr(m, slot, 0);   // try_to_unmap: the page comes back through a fault
    res_set(m, p.pid, va, false);
    w.cpu += m.params.pte_update;
    b.inv(p.pid, va, kPage);
    m.cache->unmaps.inc();
    CachePage& c = m.cache->pages.at(key->second);
    c.mapcount--;
    if (!c.mapcount && !c.pins && !c.refs) drop_page(m, key->second, b);   // clean: dropped, not written
    return true;
}

void wait_ready(PageCache& pc, const CachePage& c, Work& w) {
    // Locked under a read that another process's call waits for (its data
    // come over the network later than its call, router.link-order =
    // exact): this process waits for it too, as Linux's wait_on_page_locked.
    while (c.ready == sc_core::sc_max_time()) {
        ++pc.waiting_for_fill;
        sc_core::wait(pc.filled);
        --pc.waiting_for_fill;
        const sc_time k = sc_core::sc_time_stamp(), at = w.at + w.cpu + w.io;
        if (at < k) w.io += k - at;
    }
    const sc_time now = w.at + w.cpu + w.io;
    if (c.ready > now) w.io += c.ready - now;
}

void verify_page(Mm& m, unsigned file, std::uint64_t index, const CachePage& c) {
    std::vector<unsigned char> bytes(kPage);
    access(m, false, c.pa, bytes.data(), kPage);
    for (std::uint64_t i = 0; i < kPage; ++i)
        if (bytes[i] != FileSystem::byte(file, index * kPage + i))
            throw std::logic_error("page cache: byte " + std::to_string(index * kPage + i) + " of file " +
                                   std::to_string(file) + " reads " + std::to_string(bytes[i]) + " in frame, not " +
                                   std::to_string(FileSystem::byte(file, index * kPage + i)));
}

}   // namespace mm
}   // namespace vrdmasim
