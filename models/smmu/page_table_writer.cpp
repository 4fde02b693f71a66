#include "models/smmu/page_table_writer.hpp"

#include "models/common/debug_access.hpp"

#include <stdexcept>

namespace vrdmasim {

using namespace aarch64;

PageTableWriter::PageTableWriter(ReadFn read, WriteFn write, AllocFn alloc, unsigned t0sz)
    : read_(std::move(read)), write_(std::move(write)), alloc_(std::move(alloc)), t0sz_(t0sz) {
    if (t0sz_ < 16 || t0sz_ > 39) throw std::logic_error("PageTableWriter: T0SZ must be 16..39 with 4 KiB pages");
    root_ = alloc_();
}

PageTableWriter PageTableWriter::over(tlm::tlm_fw_transport_if<>& mem, AllocFn alloc, unsigned t0sz) {
    // A memory with a debug transport without a payload (a BusPort) is
    // reached through it: the same bytes, without a payload per descriptor.
    DebugAccess* direct = dynamic_cast<DebugAccess*>(&mem);
    auto access = [&mem, direct](bool write, std::uint64_t pa, std::uint64_t& v) {
        if (!debug_access_to(mem, direct, write, pa, reinterpret_cast<unsigned char*>(&v), 8))
            throw std::runtime_error("PageTableWriter: cannot access table memory");
    };
    return PageTableWriter(
        [access](std::uint64_t pa) {
            std::uint64_t v = 0;
            access(false, pa, v);
            return v;
        },
        [access](std::uint64_t pa, std::uint64_t v) { access(true, pa, v); }, std::move(alloc), t0sz);
}

std::uint64_t PageTableWriter::leaf_bits(const Attrs& a) {
    std::uint64_t d = (static_cast<std::uint64_t>(a.attr_index & 7) << kAttrIndxShift) | (3ull << kShShift);
    if (!a.write) d |= kApReadOnly;
    if (a.user) d |= kApUser;
    if (a.af) d |= kAf;
    if (!a.global) d |= kNg;
    return d;
}

std::uint64_t PageTableWriter::slot(std::uint64_t va, int level, bool create) {
    if ((va >> (64 - t0sz_)) != 0) throw std::logic_error("PageTableWriter: VA beyond T0SZ");
    std::uint64_t table = root_;
    for (int l = start_level(t0sz_); l < level; ++l) {
        const std::uint64_t at = table + 8ull * index_of(va, l);
        const std::uint64_t d = read_(at);
        if ((d & kValid) && (d & kTableOrPage)) {
            table = d & kAddrMask;
            continue;
        }
        if (!create) return 0;
        if (d & kValid) throw std::logic_error("PageTableWriter: a block maps this address; unmap it first");
        const std::uint64_t next = alloc_();
        write_(at, next | kValid | kTableOrPage);
        table = next;
    }
    return table + 8ull * index_of(va, level);
}

void PageTableWriter::map_page(std::uint64_t va, std::uint64_t pa, const Attrs& a) {
    if ((va | pa) & (kPageSize - 1)) throw std::logic_error("PageTableWriter: unaligned page");
    write_(slot(va, 3, true), (pa & kAddrMask) | leaf_bits(a) | kValid | kTableOrPage);
}

void PageTableWriter::map_block(std::uint64_t va, std::uint64_t pa, const Attrs& a) {
    if ((va | pa) & (kBlockSize - 1)) throw std::logic_error("PageTableWriter: unaligned block");
    if (start_level(t0sz_) > 2) throw std::logic_error("PageTableWriter: no level 2 with this T0SZ");
    write_(slot(va, 2, true), (pa & kAddrMask & ~(kBlockSize - 1)) | leaf_bits(a) | kValid);
}

void PageTableWriter::map_range(std::uint64_t va, std::uint64_t pa, std::uint64_t len, const Attrs& a, bool blocks) {
    const std::uint64_t end = va + len;
    while (va < end) {
        if (blocks && ((va | pa) & (kBlockSize - 1)) == 0 && end - va >= kBlockSize) {
            map_block(va, pa, a);
            va += kBlockSize;
            pa += kBlockSize;
        } else {
            map_page(va, pa, a);
            va += kPageSize;
            pa += kPageSize;
        }
    }
}

namespace {
// The leaf (page, or block at any level) mapping va under `root`: its
// descriptor's address and level, or 0 if va is unmapped or beyond T0SZ.
std::uint64_t find_leaf(const PageTableWriter::ReadFn& read, std::uint64_t root, unsigned t0sz, std::uint64_t va,
                        int* level) {
    if ((va >> (64 - t0sz)) != 0) return 0;
    std::uint64_t table = root;
    for (int l = start_level(t0sz); l <= 3; ++l) {
        const std::uint64_t at = table + 8ull * index_of(va, l);
        const std::uint64_t d = read(at);
        if (!(d & kValid)) return 0;
        if (l == 3 || !(d & kTableOrPage)) {
            if (level) *level = l;
            return at;
        }
        table = d & kAddrMask;
    }
    return 0;
}
}   // namespace

std::uint64_t PageTableWriter::leaf_address(std::uint64_t va) const {
    return find_leaf(read_, root_, t0sz_, va, nullptr);
}

std::uint64_t PageTableWriter::leaf(std::uint64_t va, int* level) const {
    int l = 0;
    const std::uint64_t at = find_leaf(read_, root_, t0sz_, va, &l);
    if (!at) return 0;
    if (level) *level = l;
    return read_(at);
}

bool PageTableWriter::unmap(std::uint64_t va) {
    const std::uint64_t at = leaf_address(va);
    if (!at) return false;
    write_(at, 0);
    return true;
}

}   // namespace vrdmasim
