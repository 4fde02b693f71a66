// The Vm's page tables in DRAM: descriptor reads and writes, table frames,
// leaf lookup and translation (pgtable.hpp).
#include "models/os/pgtable.hpp"

#include "src/core/format.hpp"

#include <stdexcept>
#include <string>

namespace vrdmasim {
namespace mm {

using namespace aarch64;

void access(Mm& m, bool write, std::uint64_t pa, unsigned char* data, std::uint64_t len) {
    if (!debug_access_to(m.mem, m.direct, write, pa, data, len))
        throw std::runtime_error("Vm: cannot access DRAM at " + hex(pa));
}

void access_pattern(Mm& m, PatternOp op, std::uint64_t pa, std::uint64_t len, PatternPlace at, std::uint64_t& first) {
    if (!debug_pattern_to(m.mem, m.direct, op, pa, len, at, first))
        throw std::runtime_error("Vm: cannot access DRAM at " + hex(pa));
}

std::uint64_t rd(Mm& m, std::uint64_t pa) {
    std::uint64_t v = 0;
    access(m, false, pa, reinterpret_cast<unsigned char*>(&v), 8);
    return v;
}

void wr(Mm& m, std::uint64_t pa, std::uint64_t v) {
    ++m.descriptor_writes;   // every process's last walk may have changed
    access(m, true, pa, reinterpret_cast<unsigned char*>(&v), 8);
}

void zero(Mm& m, std::uint64_t pa, std::uint64_t len) {
    ++m.descriptor_writes;   // a table frame's descriptors
    static const std::vector<unsigned char> zeros(kPage, 0);
    for (std::uint64_t off = 0; off < len; off += kPage)
        access(m, true, pa + off, const_cast<unsigned char*>(zeros.data()), kPage);
}

std::uint64_t alloc_table(Mm& m) {
    auto pa = m.frames.alloc(0);
    if (!pa) throw OutOfFrames{};
    zero(m, *pa, kPage);
    return *pa;
}

std::uint64_t leaf_slot(Mm& m, const Process& p, std::uint64_t va, int& level) {
    if (p.walk_gen == m.descriptor_writes && p.walk_region == (va >> 21)) {
        level = 3;
        return p.walk_table + 8ull * index_of(va, 3);
    }
    std::uint64_t table = p.pt->root();
    for (int l = start_level(16); l <= 3; ++l) {
        const std::uint64_t at = table + 8ull * index_of(va, l);
        if (l == 3) {
            level = 3;
            p.walk_region = va >> 21;
            p.walk_table = table;
            p.walk_gen = m.descriptor_writes;
            return at;
        }
        const std::uint64_t d = rd(m, at);
        const bool is_table = (d & kValid) && (d & kTableOrPage);
        if (!is_table) {
            if (l == 2) {
                level = 2;
                return at;
            }
            return 0;
        }
        table = d & kAddrMask;
    }
    return 0;
}

std::uint64_t leaf(Mm& m, const Process& p, std::uint64_t va, std::uint64_t* slot, int* level) {
    int l = 0;
    const std::uint64_t at = leaf_slot(m, p, va, l);
    if (slot) *slot = at;
    if (level) *level = l;
    return at ? rd(m, at) : 0;
}

std::uint64_t l2_slot(Mm& m, const Process& p, std::uint64_t va) {
    std::uint64_t table = p.pt->root();
    for (int l = start_level(16); l < 2; ++l) {
        const std::uint64_t d = rd(m, table + 8ull * index_of(va, l));
        if (!((d & kValid) && (d & kTableOrPage))) return 0;
        table = d & kAddrMask;
    }
    return table + 8ull * index_of(va, 2);
}

bool translate(Mm& m, const Process& p, std::uint64_t va, std::uint64_t& pa) {
    if ((va >> 48) != 0) return false;
    int level = 0;
    const std::uint64_t d = leaf(m, p, va, nullptr, &level);
    if (!(d & kValid)) return false;
    pa = leaf_pa(d, level, va);
    return true;
}

PageTableWriter::Attrs attrs(Prot prot) {
    PageTableWriter::Attrs a;
    a.write = can_write(prot);
    a.user = true;
    a.af = true;
    a.global = false;
    return a;
}

PageTableWriter::Attrs attrs(const Vma& v) {
    PageTableWriter::Attrs a = attrs(v.prot);
    if (v.user == UserAccess::ReadOnly) a.write = false;
    if (v.user == UserAccess::NoAccess) a.user = false;
    return a;
}

std::uint64_t with_user_access(std::uint64_t d, const Vma& v) {
    d |= kApUser;
    d = can_write(v.prot) ? (d & ~kApReadOnly) : (d | kApReadOnly);
    if (v.user == UserAccess::ReadOnly) d |= kApReadOnly;
    if (v.user == UserAccess::NoAccess) d &= ~kApUser;
    return d;
}

}   // namespace mm
}   // namespace vrdmasim
