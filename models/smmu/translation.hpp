// Translation machinery of the MMU-500 model, independent of registers and
// sockets: the TLBs (micro-TLB per TBU,
// macro-TLB in the TCU), the walk cache, and the page-table walker. The
// descriptor format is shared with the OS: models/common/aarch64_descriptors.hpp.
// See models/smmu/README.md.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <systemc>

#include "src/core/trace.hpp"

#include "models/common/aarch64_descriptors.hpp"
#include "models/common/smmu_fault.hpp"

namespace vrdmasim {

// What a translation produced: one TLB entry.
struct Translation {
    std::uint64_t va_base = 0;   // aligned to size
    std::uint64_t pa_base = 0;
    std::uint64_t size = 0;   // 4 KiB page or 2 MiB block
    unsigned cb = 0;   // context bank
    std::uint16_t asid = 0;
    bool global = false;   // nG clear: matches any ASID of its context bank
    bool writable = false;   // AP[2] clear
    bool user = false;   // AP[1]
    sc_core::sc_time valid_from;   // the walk that filled it completes then
    bool contains(std::uint64_t va) const { return va - va_base < size; }
};

enum class TlbReplacement { Lru, RoundRobin };
TlbReplacement parse_replacement(const std::string& s);   // "lru" | "round-robin"

// A set-associative TLB of Translations (fully associative when ways ==
// entries). Block entries are looked up like pages: an entry matches a VA
// that lies inside it. Lookups and fills are O(ways), but a lookup that
// cannot hit (no valid entry's page or block number falls in the buckets of
// the VA's, counted per bucket) is answered without looking at a slot: the
// TBUs' hot entry catches the repeated hits, so most lookups that reach a
// TLB are misses. A set's slots are allocated as its ways are first filled:
// an SMMU that never translates (an idle node's) costs no storage for them,
// and one whose software maps a few dozen pages (a halo's buffers) a few
// dozen slots of the macro-TLB's 512.
class Tlb {
public:
    Tlb(unsigned entries, unsigned ways, TlbReplacement policy);
    // The entry for (cb, asid, va), or nullptr (valid until the next insert).
    // Does not look at valid_from: the caller decides what an entry still
    // being filled means.
    const Translation* lookup(unsigned cb, std::uint16_t asid, std::uint64_t va);
    // Insert (replacing a matching entry or the policy's victim).
    void insert(const Translation& t);
    // Invalidation, as TLBIVA (one VA of one ASID in one CB; global entries too),
    // TLBIASID (non-global entries of one ASID in one CB), TLBIALL (one CB).
    // Return how many entries were removed.
    unsigned invalidate_va(unsigned cb, std::uint16_t asid, std::uint64_t va);
    unsigned invalidate_asid(unsigned cb, std::uint16_t asid);
    unsigned invalidate_all(unsigned cb);
    unsigned entries() const { return sets_ * ways_; }
    unsigned occupied() const;

private:
    struct Slot {
        Translation t;
        bool valid = false;
        std::uint64_t stamp = 0;   // last use (LRU)
    };
    // Page entries live in the set of their 4 KiB page number, block entries
    // in the set of their 2 MiB block number; a lookup probes both sets, so
    // one block entry covers all its 512 pages.
    unsigned page_set(std::uint64_t va) const { return static_cast<unsigned>((va >> 12) % sets_); }
    unsigned block_set(std::uint64_t va) const { return static_cast<unsigned>((va >> 21) % sets_); }
    // Valid entries per bucket: pages by their page number, blocks by their
    // block number (low bits), in tags_[page bucket] and
    // tags_[kBuckets + block bucket]. An entry that matches a VA has the
    // VA's page number (a page) or block number (a block).
    static constexpr unsigned kBuckets = 64;
    static unsigned page_bucket(std::uint64_t va) { return static_cast<unsigned>(va >> 12) & (kBuckets - 1); }
    static unsigned block_bucket(std::uint64_t va) {
        return kBuckets + (static_cast<unsigned>(va >> 21) & (kBuckets - 1));
    }
    static unsigned bucket(const Translation& t) {
        return t.size == aarch64::kPageSize ? page_bucket(t.va_base) : block_bucket(t.va_base);
    }
    // Every change of a slot's validity or entry goes through these two.
    void fill(Slot& slot, const Translation& t);
    void drop(Slot& slot);
    // Fills the way after set `set`'s last one filled with `entry` (the set
    // moved where it has room if it had none).
    void add_way(unsigned set, const Translation& entry);
    unsigned room(unsigned used) const;   // 0, then powers of two up to ways_
    unsigned sets_, ways_;
    TlbReplacement policy_;
    // Set s: its first sets_at_[s].used ways (the only ones ever filled) are
    // slots_[sets_at_[s].base ..]. Empty until the first insert, then one a set.
    struct SetAt {
        std::uint32_t base = 0;
        std::uint16_t used = 0;
    };
    std::vector<SetAt> sets_at_;
    std::vector<Slot> slots_;
    // slots_[i]'s range [base, base + size) while it is valid, size 0 while
    // it is not (a valid entry is a page or a block): what a lookup scans,
    // two words a way, before it looks at the slot that holds the VA. Kept
    // by fill, drop and add_way.
    struct Span {
        std::uint64_t base = 0, size = 0;
    };
    std::vector<Span> spans_;
    std::vector<std::uint32_t> tags_;   // 2 * kBuckets counts (allocated with sets_at_)
    std::vector<unsigned> rr_;   // round-robin pointer per set (with sets_at_, round-robin only)
    std::uint64_t clock_ = 0;
};

// Caches the table descriptors read on the way down (level 0..2 table
// entries), keyed by context bank, ASID/TTBR and the VA bits above that
// level, so a walk can start below the root. LRU, fully associative. Its
// entries are allocated as they are first filled (an entry never filled is
// invalid, and comes after every one that was).
class WalkCache {
public:
    explicit WalkCache(unsigned entries);
    // Deepest cached level for `va`: returns the level whose *next* table
    // address is known (0..2) and sets `table` to that next-level table's
    // physical address; -1 if nothing is cached.
    int lookup(unsigned cb, std::uint64_t ttbr, std::uint64_t va, std::uint64_t& table);
    void insert(unsigned cb, std::uint64_t ttbr, std::uint64_t va, int level, std::uint64_t table);
    unsigned invalidate_va(unsigned cb, std::uint64_t va);   // entries on the path of va
    unsigned invalidate_cb(unsigned cb);
    unsigned invalidate_all();

private:
    struct Entry {
        unsigned cb;
        std::uint64_t ttbr;
        std::uint64_t prefix;   // va >> index_shift(level)
        int level;
        std::uint64_t table;
        std::uint64_t stamp;
        bool valid;
    };
    unsigned capacity_;
    std::vector<Entry> e_;   // the entries filled so far (at most capacity_)
    std::uint64_t clock_ = 0;
};

struct WalkRequest {
    unsigned cb = 0;
    std::uint64_t ttbr = 0;   // table base (TTBR0 bits [47:12])
    std::uint16_t asid = 0;
    unsigned t0sz = 16;   // input size 64 - t0sz bits
    bool check_af = true;   // SCTLR.AFE: an AF of 0 faults
    bool write = false;
    std::uint64_t va = 0;
};

struct WalkResult {
    FaultType fault = FaultType::None;
    int level = 0;   // level at which the walk ended (fault level too)
    Translation t;   // when fault == None (valid_from unset)
    unsigned reads = 0;   // descriptor reads made
    unsigned cache_hits = 0;   // 1 if the walk cache let it skip levels
    sc_core::sc_time done;   // absolute time the walk finished
    Tracer::Cause story;   // the walk's line in the narrated log (Tracer::note), if noted
};

// Reads descriptors with `read(pa, at, ok) -> time the data is back`, a
// timed 8-byte memory read issued at absolute time `at` (ok false on an
// error response: an external fault). Uses and fills the walk cache.
class PageTableWalker {
public:
    using ReadFn =
        std::function<sc_core::sc_time(std::uint64_t pa, std::uint64_t& value, sc_core::sc_time at, bool& ok)>;
    PageTableWalker(ReadFn read, WalkCache& cache) : read_(std::move(read)), cache_(cache) {}
    // A VA outside the 64 - t0sz bit input range is a translation fault at
    // the start level with no reads. Permission faults: a write to a page or
    // block with AP[2] set. AF faults: AF clear and check_af.
    WalkResult walk(const WalkRequest& r, sc_core::sc_time start);

private:
    ReadFn read_;
    WalkCache& cache_;
};

}   // namespace vrdmasim
