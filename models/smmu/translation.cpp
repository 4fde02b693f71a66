#include "models/smmu/translation.hpp"

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace vrdmasim {

using namespace aarch64;

TlbReplacement parse_replacement(const std::string& s) {
    if (s == "lru") return TlbReplacement::Lru;
    if (s == "round-robin") return TlbReplacement::RoundRobin;
    throw std::invalid_argument("TLB replacement '" + s + "': expected lru or round-robin");
}

// ------------------------------------------------------------ Tlb
// A fill takes the lowest-numbered invalid way of its set; only a full set
// evicts: LRU takes the way used (looked up or filled) longest ago, round-robin
// the way its set's pointer names, then advances the pointer. So a way is
// first filled only once every way below it is valid, and the ways of a set
// ever filled are a prefix of it: set s keeps them, sets_at_[s].used of
// them, in slots_[sets_at_[s].base ..], with room(used) slots there (a set outgrowing its
// room gets twice as much at the end of slots_: in place if it is the last
// set there, else it moves, leaving its old slots invalid).

Tlb::Tlb(unsigned entries, unsigned ways, TlbReplacement policy) : sets_(0), ways_(ways), policy_(policy) {
    if (entries == 0 || ways == 0 || entries % ways != 0)
        throw std::invalid_argument("Tlb: entries must be a non-zero multiple of ways");
    if (ways > std::numeric_limits<std::uint16_t>::max()) throw std::invalid_argument("Tlb: at most 65,535 ways");
    sets_ = entries / ways;
}

namespace {
bool same_tag(const Translation& a, const Translation& b) {
    // Would the two entries answer the same lookups? (same CB and range, and
    // an ASID they both match)
    return a.cb == b.cb && a.va_base == b.va_base && a.size == b.size && (a.global || b.global || a.asid == b.asid);
}
}   // namespace

const Translation* Tlb::lookup(unsigned cb, std::uint16_t asid, std::uint64_t va) {
    if (slots_.empty()) return nullptr;   // never filled
    if (tags_[page_bucket(va)] == 0 && tags_[block_bucket(va)] == 0) return nullptr;   // nothing can match
    const unsigned sets[2] = {page_set(va), block_set(va)};
    for (int i = 0; i < 2; ++i) {
        if (i == 1 && sets[1] == sets[0]) break;
        const SetAt at = sets_at_[sets[i]];
        Slot* s = &slots_[at.base];
        const Span* sp = &spans_[at.base];
        const unsigned used = at.used;
        for (unsigned w = 0; w < used; ++w) {
            if (va - sp[w].base >= sp[w].size) continue;   // invalid, or not its range
            Slot& slot = s[w];
            if (slot.t.cb == cb && (slot.t.global || slot.t.asid == asid)) {
                slot.stamp = ++clock_;
                return &slot.t;
            }
        }
    }
    return nullptr;
}

void Tlb::insert(const Translation& t) {
    unsigned set;
    if (t.size == kPageSize) set = page_set(t.va_base);
    else if (t.size == kBlockSize) set = block_set(t.va_base);
    else throw std::logic_error("Tlb: entries are 4 KiB pages or 2 MiB blocks");
    if (sets_at_.empty()) {   // the first fill: every set empty, every pointer at way 0
        sets_at_.assign(sets_, SetAt{});
        if (policy_ == TlbReplacement::RoundRobin) rr_.assign(sets_, 0);
        tags_.assign(2 * kBuckets, 0);
    }
    const unsigned used = sets_at_[set].used;
    Slot* s = slots_.data() + sets_at_[set].base;
    // One pass over the set's ways filled so far: the first entry with the
    // same tag, else the first invalid way, else the victim (LRU: the least
    // recently used, the first of equals). A way beyond them is invalid.
    Slot* target = nullptr;
    Slot* free_slot = nullptr;
    Slot* oldest = s;
    const bool tagged = tags_[bucket(t)] != 0;   // else no entry can have its tag
    for (unsigned w = 0; w < used; ++w) {
        Slot& x = s[w];
        if (!x.valid) {
            if (!free_slot) free_slot = &x;
        } else if (tagged && same_tag(x.t, t)) {
            target = &x;
            break;
        } else if (x.stamp < oldest->stamp) {
            oldest = &x;
        }
    }
    if (!target) target = free_slot;
    if (!target && used < ways_) {   // the first invalid way is the next never filled
        add_way(set, t);
        return;
    }
    if (!target) {
        if (policy_ == TlbReplacement::Lru) {
            target = oldest;
        } else {
            target = &s[rr_[set]];
            rr_[set] = (rr_[set] + 1) % ways_;
        }
    }
    fill(*target, t);
    target->stamp = ++clock_;
}

// The room a set keeps for `used` ways.
unsigned Tlb::room(unsigned used) const {
    unsigned r = 1;
    while (r < used) r *= 2;
    return used == 0 ? 0 : std::min(r, ways_);
}

void Tlb::add_way(unsigned set, const Translation& entry) {
    const Translation t = entry;   // entry may be a slot's, and slots_ may grow
    SetAt& at = sets_at_[set];
    const unsigned used = at.used;
    if (used == room(used)) {   // full: twice the room, at the end of slots_
        const unsigned grown = room(used + 1);
        if (slots_.size() > std::numeric_limits<std::uint32_t>::max() - grown)
            throw std::length_error("Tlb: more slots than its directory can address");
        const std::size_t from = at.base, end = slots_.size();
        if (used > 0 && from + used == end) {   // the last set there: it grows in place
            slots_.resize(from + grown);
            spans_.resize(from + grown);
        } else {   // the set moves
            slots_.resize(end + grown);
            spans_.resize(end + grown);
            for (unsigned w = 0; w < used; ++w) {
                slots_[end + w] = slots_[from + w];
                spans_[end + w] = spans_[from + w];
                slots_[from + w].valid = false;   // left behind: no entry (tags_ counts the moved one)
                spans_[from + w].size = 0;
            }
            at.base = static_cast<std::uint32_t>(end);
        }
    }
    Slot& slot = slots_[at.base + used];
    at.used = static_cast<std::uint16_t>(used + 1);
    fill(slot, t);
    slot.stamp = ++clock_;
}

void Tlb::fill(Slot& slot, const Translation& t) {
    if (slot.valid) --tags_[bucket(slot.t)];
    slot.t = t;
    slot.valid = true;
    spans_[static_cast<std::size_t>(&slot - slots_.data())] = Span{t.va_base, t.size};
    ++tags_[bucket(t)];
}

void Tlb::drop(Slot& slot) {
    --tags_[bucket(slot.t)];
    slot.valid = false;
    spans_[static_cast<std::size_t>(&slot - slots_.data())].size = 0;
}

unsigned Tlb::invalidate_va(unsigned cb, std::uint16_t asid, std::uint64_t va) {
    unsigned n = 0;
    if (slots_.empty()) return n;
    const unsigned sets[2] = {page_set(va), block_set(va)};
    for (int i = 0; i < 2; ++i) {
        if (i == 1 && sets[1] == sets[0]) break;
        const SetAt at = sets_at_[sets[i]];
        Slot* s = &slots_[at.base];
        for (unsigned w = 0; w < at.used; ++w) {
            Slot& slot = s[w];
            if (slot.valid && slot.t.cb == cb && (slot.t.global || slot.t.asid == asid) && slot.t.contains(va)) {
                drop(slot);
                ++n;
            }
        }
    }
    return n;
}

unsigned Tlb::invalidate_asid(unsigned cb, std::uint16_t asid) {
    unsigned n = 0;
    for (Slot& slot : slots_)
        if (slot.valid && slot.t.cb == cb && !slot.t.global && slot.t.asid == asid) {
            drop(slot);
            ++n;
        }
    return n;
}

unsigned Tlb::invalidate_all(unsigned cb) {
    unsigned n = 0;
    for (Slot& slot : slots_)
        if (slot.valid && slot.t.cb == cb) {
            drop(slot);
            ++n;
        }
    return n;
}

unsigned Tlb::occupied() const {
    return static_cast<unsigned>(std::count_if(slots_.begin(), slots_.end(), [](const Slot& s) { return s.valid; }));
}

// ------------------------------------------------------------ WalkCache
// An entry at level l holds the table address found in the level-l table
// descriptor for VA bits [47:index_shift(l)] (the prefix), under one root.

WalkCache::WalkCache(unsigned entries) : capacity_(entries) {}

int WalkCache::lookup(unsigned cb, std::uint64_t ttbr, std::uint64_t va, std::uint64_t& table) {
    Entry* best = nullptr;
    for (Entry& e : e_)
        if (e.valid && e.cb == cb && e.ttbr == ttbr && e.prefix == (va >> index_shift(e.level)) &&
            (!best || e.level > best->level))
            best = &e;
    if (!best) return -1;
    best->stamp = ++clock_;
    table = best->table;
    return best->level;
}

void WalkCache::insert(unsigned cb, std::uint64_t ttbr, std::uint64_t va, int level, std::uint64_t table) {
    if (capacity_ == 0) return;
    if (level < 0 || level > 2) throw std::logic_error("WalkCache: only level 0..2 table descriptors are cached");
    const std::uint64_t prefix = va >> index_shift(level);
    Entry* target = nullptr;
    for (Entry& e : e_)
        if (e.valid && e.cb == cb && e.ttbr == ttbr && e.level == level && e.prefix == prefix) {
            target = &e;
            break;
        }
    if (!target)
        for (Entry& e : e_)
            if (!e.valid) {
                target = &e;
                break;
            }
    if (!target && e_.size() < capacity_) {   // an entry never used: every earlier one is valid
        e_.emplace_back();
        target = &e_.back();
    }
    if (!target) {
        target = &e_[0];
        for (Entry& e : e_)
            if (e.stamp < target->stamp) target = &e;
    }
    *target = Entry{cb, ttbr, prefix, level, table, ++clock_, true};
}

unsigned WalkCache::invalidate_va(unsigned cb, std::uint64_t va) {
    unsigned n = 0;
    for (Entry& e : e_)
        if (e.valid && e.cb == cb && e.prefix == (va >> index_shift(e.level))) {
            e.valid = false;
            ++n;
        }
    return n;
}

unsigned WalkCache::invalidate_cb(unsigned cb) {
    unsigned n = 0;
    for (Entry& e : e_)
        if (e.valid && e.cb == cb) {
            e.valid = false;
            ++n;
        }
    return n;
}

unsigned WalkCache::invalidate_all() {
    unsigned n = 0;
    for (Entry& e : e_)
        if (e.valid) {
            e.valid = false;
            ++n;
        }
    return n;
}

// ------------------------------------------------------------ PageTableWalker
// Notes on choices the architecture leaves open:
// - T0SZ outside 16..39 is treated as the nearest limit (ARMv8 allows this).
// - A level-1 (1 GiB) block is valid; the walk returns the 2 MiB slice of it
//   that contains the VA (a TLB may hold a smaller entry than the block), so
//   every Translation is a 4 KiB page or a 2 MiB block.
// - Output-address bits below the block size (RES0) are ignored.
// - Fault priority once the leaf is found: access flag, then permission.

WalkResult PageTableWalker::walk(const WalkRequest& r, sc_core::sc_time start) {
    WalkResult res;
    res.done = start;
    const unsigned t0sz = std::min(39u, std::max(16u, r.t0sz));
    const int first = start_level(t0sz);
    res.level = first;
    if ((r.va >> (64 - t0sz)) != 0) {
        res.fault = FaultType::Translation;
        return res;
    }

    int level = first;
    std::uint64_t table = r.ttbr & kAddrMask;
    std::uint64_t cached_table = 0;
    const int cached = cache_.lookup(r.cb, r.ttbr, r.va, cached_table);
    if (cached >= first && cached <= 2) {
        level = cached + 1;
        table = cached_table;
        res.cache_hits = 1;
    }

    sc_core::sc_time at = start;
    for (;; ++level) {
        res.level = level;
        std::uint64_t d = 0;
        bool ok = true;
        at = read_(table + 8ull * index_of(r.va, level), d, at, ok);
        ++res.reads;
        res.done = at;
        if (!ok) {
            res.fault = FaultType::External;
            return res;
        }
        if (!(d & kValid)) {
            res.fault = FaultType::Translation;
            return res;
        }
        if (level < 3 && (d & kTableOrPage)) {
            table = d & kAddrMask;
            cache_.insert(r.cb, r.ttbr, r.va, level, table);
            continue;
        }
        // A leaf: page at level 3 (bits[1:0] = 11), block at level 1 or 2
        // (bits[1:0] = 01). A block at level 0 or 01 at level 3 is reserved.
        if (level == 0 || (level == 3 && !(d & kTableOrPage))) {
            res.fault = FaultType::Translation;
            return res;
        }
        if (r.check_af && !(d & kAf)) {
            res.fault = FaultType::AccessFlag;
            return res;
        }
        if (r.write && (d & kApReadOnly)) {
            res.fault = FaultType::Permission;
            return res;
        }
        Translation& t = res.t;
        const std::uint64_t leaf_size = 1ull << index_shift(level);   // 1 GiB, 2 MiB or 4 KiB
        t.size = level == 3 ? kPageSize : kBlockSize;
        t.va_base = r.va & ~(t.size - 1);
        t.pa_base = (d & kAddrMask & ~(leaf_size - 1)) | (r.va & (leaf_size - 1) & ~(t.size - 1));
        t.cb = r.cb;
        t.asid = r.asid;
        t.global = !(d & kNg);
        t.writable = !(d & kApReadOnly);
        t.user = (d & kApUser) != 0;
        return res;
    }
}

}   // namespace vrdmasim
