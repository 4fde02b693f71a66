// The NetVM network interface's shadow page table (ni.translation = shadow;
// J. S. Ong, "Network virtual memory", PhD thesis, UBC): the NI's own copy
// of the translations of the processes whose memory it reads and writes,
// kept in NI memory and written by the host OS on every map, unmap,
// swap-out and migration (models/os/shadow_pager.*), read by the NI's
// translation unit on every access (models/dma/shadow_translator.*). Also
// the NI's page locks: while the NI accesses a page it holds a brief lock on
// it, and the OS does not replace a locked page.
//
// One entry per leaf of the process's page table (a 4 KiB page or a 2 MiB
// block), keyed by (pid, leaf VA). An entry carries the time from which it
// is valid (the OS's update is done then): a lookup earlier than that misses.
// Locks are intervals [from, to) of simulated time per (pid, 4 KiB page),
// recorded by the NI as it accesses the page; the OS asks whether a page is
// locked at ITS simulated time (loosely timed: each side looks only at the
// other's past or present, never at a lock that starts after its own time).
//
// Header-only: shared by the NI (dma) and the OS (os) side, which may not
// depend on each other.
#pragma once

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include <systemc>

namespace vrdmasim {

class ShadowTable {
public:
    static constexpr std::uint64_t kPage = 4096;
    static constexpr std::uint64_t kBlock = 2ull << 20;

    struct Entry {
        std::uint64_t pa = 0;   // physical address of the leaf
        std::uint64_t size = kPage;   // kPage or kBlock
        bool writable = false;
        sc_core::sc_time from;   // valid from (the OS's update done)
    };

    // ---- the OS side (entries written by PIO; the caller charges the time)
    // Install (or replace) the leaf of `size` bytes at `va` (aligned to
    // size) of process `pid`, valid from `from`.
    void set(int pid, std::uint64_t va, std::uint64_t size, std::uint64_t pa, bool writable, sc_core::sc_time from) {
        map_[{pid, va}] = Entry{pa, size, writable, from};
        ++sets_;
    }
    // Remove every entry of `pid` overlapping [va, va + len); returns how many.
    std::uint64_t clear(int pid, std::uint64_t va, std::uint64_t len) {
        const std::uint64_t start = va / kBlock * kBlock;   // a block entry may cover va
        std::uint64_t n = 0;
        for (auto it = map_.lower_bound({pid, start});
             it != map_.end() && it->first.first == pid && it->first.second < va + len;) {
            if (it->first.second + it->second.size > va) {
                it = map_.erase(it);
                ++n;
            } else {
                ++it;
            }
        }
        clears_ += n;
        return n;
    }

    // ---- the NI side
    // The entry translating `va` of `pid` at time `at` (nullptr: a miss).
    const Entry* lookup(int pid, std::uint64_t va, sc_core::sc_time at) const {
        for (std::uint64_t size : {kPage, kBlock}) {
            auto it = map_.find({pid, va / size * size});
            if (it != map_.end() && it->second.size == size && it->second.from <= at) return &it->second;
        }
        return nullptr;
    }
    // The NI holds the 4 KiB page of `va` locked over [from, to).
    void lock(int pid, std::uint64_t va, sc_core::sc_time from, sc_core::sc_time to) {
        std::vector<Interval>& v = locks_[{pid, va / kPage * kPage}];
        // Forget intervals long past (the OS runs within a quantum of the NI;
        // 1 ms behind is far beyond any quantum).
        const sc_core::sc_time keep(1, sc_core::SC_MS);
        const sc_core::sc_time horizon = from > keep ? from - keep : sc_core::SC_ZERO_TIME;
        std::size_t k = 0;
        for (const Interval& i : v)
            if (i.second >= horizon) v[k++] = i;
        v.resize(k);
        v.emplace_back(from, to);
        ++locks_taken_;
    }
    // Whether the NI holds the page of `va` locked at time `at` (the OS's time).
    bool locked(int pid, std::uint64_t va, sc_core::sc_time at) const {
        auto it = locks_.find({pid, va / kPage * kPage});
        if (it == locks_.end()) return false;
        for (const Interval& i : it->second)
            if (i.first <= at && at < i.second) return true;
        return false;
    }

    std::size_t entries() const { return map_.size(); }
    std::uint64_t sets() const { return sets_; }
    std::uint64_t clears() const { return clears_; }
    std::uint64_t locks_taken() const { return locks_taken_; }

private:
    using Key = std::pair<int, std::uint64_t>;
    using Interval = std::pair<sc_core::sc_time, sc_core::sc_time>;
    std::map<Key, Entry> map_;
    std::map<Key, std::vector<Interval>> locks_;
    std::uint64_t sets_ = 0, clears_ = 0, locks_taken_ = 0;
};

}   // namespace vrdmasim
