// Vm::frame_owner (vm.hpp): who holds a physical frame now. The kernel
// keeps no reverse map of its own here (Linux's rmap walks from the page);
// this one is built from every process's page tables and kept until a leaf
// changes (Mm::leaf_generation), so a run that asks often while nothing
// moves pays one walk.
#include <iterator>

#include "models/os/mm.hpp"
#include "models/os/pagecache.hpp"
#include "models/os/pgtable.hpp"

namespace vrdmasim {

const char* to_string(FrameOwner::Kind k) {
    switch (k) {
    case FrameOwner::Kind::Process: return "process";
    case FrameOwner::Kind::StalePin: return "stale-pin";
    case FrameOwner::Kind::Kernel: return "kernel";
    case FrameOwner::Kind::Free: return "free";
    case FrameOwner::Kind::PageCache: return "page-cache";
    }
    return "?";
}

namespace {

void rebuild(mm::Mm& m) {
    m.rmap.clear();
    for (auto& kv : m.procs) {
        const mm::Process& p = kv.second;
        mm::walk_all(
            m, p, [](std::uint64_t) {},
            [&](std::uint64_t va, std::uint64_t, std::uint64_t d, int level) {
                if (!mm::has_frame(d)) return;   // swap and migration entries hold no frame of the process
                const std::uint64_t size = level == 2 ? mm::kHuge : mm::kPage;
                m.rmap[d & aarch64::kAddrMask & ~(size - 1)] = {p.pid, va, size};
            });
    }
    m.rmap_generation = m.leaf_generation;
}

}   // namespace

FrameOwner Vm::frame_owner(std::uint64_t pa) const {
    mm::Mm& m = *mm_;
    FrameOwner o;
    if (!frames_.contains(pa)) {   // below the page allocator: the kernel's own memory
        o.kind = FrameOwner::Kind::Kernel;
        return o;
    }
    if (!frames_.allocated(pa)) {
        o.kind = FrameOwner::Kind::Free;
        return o;
    }
    if (m.cache) {   // a page-cache page (processes may map it as well: it is the cache's)
        auto c = m.cache->by_pa.find(mm::align_down(pa, mm::kPage));
        if (c != m.cache->by_pa.end()) {
            o.kind = FrameOwner::Kind::PageCache;
            o.file = c->second.first;
            o.offset = c->second.second * mm::kPage + (pa & (mm::kPage - 1));
            return o;
        }
    }
    if (m.rmap_generation != m.leaf_generation) rebuild(m);
    auto it = m.rmap.upper_bound(pa);
    if (it != m.rmap.begin()) {
        --it;
        if (pa < it->first + it->second.size) {
            o.kind = FrameOwner::Kind::Process;
            o.pid = it->second.pid;
            o.va = it->second.va + (pa - it->first);
            return o;
        }
    }
    const std::uint64_t page = mm::align_down(pa, mm::kPage);
    for (const auto& kv : m.procs)
        for (const auto& orphan : kv.second.orphans)
            if (orphan.second.pa == page) {
                o.kind = FrameOwner::Kind::StalePin;
                o.pid = kv.first;
                o.va = orphan.first + (pa - page);
                return o;
            }
    o.kind = FrameOwner::Kind::Kernel;
    return o;
}

std::string Vm::process_name(int pid) const {
    auto it = mm_->procs.find(pid);
    return it == mm_->procs.end() ? std::string() : it->second.name;
}

}   // namespace vrdmasim
