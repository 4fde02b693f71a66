#include "src/cli/huge_pages.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>

#if VRDMASIM_HAVE_TCMALLOC
#include <gperftools/malloc_extension.h>
#endif

namespace vrdmasim {

#if VRDMASIM_HAVE_TCMALLOC
namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;   // x86-64 and AArch64 with 4 KiB base pages

// tcmalloc's default system allocator (sbrk, then mmap), asked for whole
// huge pages aligned to one, each advised MADV_HUGEPAGE. tcmalloc calls it
// with its own lock held: it must not allocate.
class HugePageSysAllocator final : public SysAllocator {
public:
    explicit HugePageSysAllocator(SysAllocator* next) : next_(next) {}

    void* Alloc(std::size_t size, std::size_t* actual_size, std::size_t alignment) override {
        const std::size_t whole = (size + kHugePage - 1) / kHugePage * kHugePage;
        std::size_t got = whole;
        void* p = next_->Alloc(whole, &got, std::max(alignment, kHugePage));
        if (!p) return next_->Alloc(size, actual_size, alignment);   // the system's way, as before
        // Advice only: where the kernel cannot or will not, the memory stays
        // in base pages and works the same.
        madvise(p, got, MADV_HUGEPAGE);
        if (actual_size) *actual_size = got;
        return p;
    }

private:
    SysAllocator* next_;
};

}   // namespace

bool install_huge_page_heap() {
    MallocExtension* ext = MallocExtension::instance();
    SysAllocator* next = ext ? ext->GetSystemAllocator() : nullptr;
    if (!next) return false;
    static HugePageSysAllocator alloc(next);   // lives as long as the heap
    ext->SetSystemAllocator(&alloc);
    return true;
}
#else
bool install_huge_page_heap() { return false; }
#endif

}   // namespace vrdmasim
