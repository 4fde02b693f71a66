#include "workloads/program_buffers.hpp"

#include <algorithm>
#include <stdexcept>

#include "src/core/format.hpp"
#include "workloads/collective_data.hpp"

namespace vrdmasim {

namespace {
constexpr std::uint64_t kPage = 4096;
}

void ProgramBuffers::map(RdmaProcess& app, std::uint64_t va, std::uint64_t len, const std::string& who) {
    if (len == 0) return;
    std::uint64_t s = va & ~(kPage - 1);
    const std::uint64_t e = (va + len + kPage - 1) & ~(kPage - 1);
    while (s < e) {
        auto it = mapped_.upper_bound(s);
        if (it != mapped_.begin() && std::prev(it)->second > s) {   // s is mapped: past that range
            s = std::prev(it)->second;
            continue;
        }
        const std::uint64_t gap_end = it == mapped_.end() ? e : std::min(e, it->first);
        try {
            app.alloc_at(s, gap_end - s);
        } catch (const OutOfMemory& oom) {
            throw std::runtime_error(who + ": the program's buffer at " + hex(va) + " (" + std::to_string(len) +
                                     " B) cannot be simulated at its address: " + oom.what());
        }
        // Merge with a neighbour ending here.
        auto prev = mapped_.lower_bound(s);
        if (prev != mapped_.begin() && std::prev(prev)->second == s) {
            std::prev(prev)->second = gap_end;
        } else {
            mapped_[s] = gap_end;
        }
        s = gap_end;
    }
}

std::uint64_t ProgramBuffers::scratch(RdmaProcess& app, std::uint64_t len, bool populate, BufferAdvice advice) {
    if (len > scratch_len_) {
        scratch_ = app.alloc(len, populate, advice);
        scratch_len_ = len;
    }
    return scratch_;
}

std::pair<std::uint64_t, std::uint64_t> ProgramBuffers::collective(RdmaProcess& app, const CollectiveData& d,
                                                                   std::uint64_t va, std::uint64_t va2, bool populate,
                                                                   BufferAdvice advice, const std::string& who) {
    std::uint64_t sbuf = va, rbuf = d.op == coll::Op::Bcast ? va : va2;
    if (d.op != coll::Op::Barrier) {
        if (sbuf) map(app, sbuf, d.send_bytes(), who);   // none: a scatter's rank but its root
        if (rbuf) map(app, rbuf, d.receive_bytes(), who);
    }
    if (coll::is_reduction(d.op) && (rbuf == 0 || (sbuf < rbuf + d.bytes && rbuf < sbuf + d.bytes))) {
        const std::uint64_t own = scratch(app, std::max<std::uint64_t>(d.bytes, 8), populate, advice);
        (rbuf == 0 ? rbuf : sbuf) = own;
    }
    return {sbuf, rbuf};
}

}   // namespace vrdmasim
