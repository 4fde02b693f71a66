#include "workloads/program_buffers.hpp"

#include <algorithm>
#include <stdexcept>

#include "src/core/format.hpp"
#include "workloads/collective_data.hpp"

namespace vrdmasim {

namespace {
constexpr std::uint64_t kPage = 4096;
}

void ProgramBuffers::add(Ranges& r, std::uint64_t s, std::uint64_t e) {
    if (s >= e) return;
    auto it = r.upper_bound(s);
    if (it != r.begin() && std::prev(it)->second >= s) {   // joins the range before
        --it;
        s = it->first;
        e = std::max(e, it->second);
        it = r.erase(it);
    }
    while (it != r.end() && it->first <= e) {   // and those it reaches
        e = std::max(e, it->second);
        it = r.erase(it);
    }
    r[s] = e;
}

void ProgramBuffers::remove(Ranges& r, std::uint64_t s, std::uint64_t e) {
    for (const auto& [a, b] : overlap(r, s, e)) {
        auto it = std::prev(r.upper_bound(a));   // the range holding [a, b)
        const std::uint64_t lo = it->first, hi = it->second;
        r.erase(it);
        if (lo < a) r[lo] = a;
        if (b < hi) r[b] = hi;
    }
}

std::vector<std::pair<std::uint64_t, std::uint64_t>> ProgramBuffers::overlap(const Ranges& r, std::uint64_t s,
                                                                             std::uint64_t e) {
    std::vector<std::pair<std::uint64_t, std::uint64_t>> out;
    auto it = r.upper_bound(s);
    if (it != r.begin()) --it;
    for (; it != r.end() && it->first < e; ++it)
        if (it->second > s) out.emplace_back(std::max(s, it->first), std::min(e, it->second));
    return out;
}

void ProgramBuffers::populate(RdmaProcess& app, std::uint64_t s, std::uint64_t e) {
    std::vector<unsigned char> page(kPage);
    for (std::uint64_t p = s; p < e; p += kPage) {
        if (app.resident(p)) continue;
        // Faulted in with what it holds (zeros if never touched, a swapped
        // page's data), untimed: the CPU's time is the program's compute.
        if (!app.debug_read(p, page.data(), kPage) || !app.debug_write(p, page.data(), kPage))
            throw std::logic_error(app.group() + ": a mapped page of the program's cannot be touched");
    }
}

void ProgramBuffers::touch(RdmaProcess& app, std::uint64_t va, std::uint64_t len) {
    const std::uint64_t s = va & ~(kPage - 1), e = (va + len + kPage - 1) & ~(kPage - 1);
    for (const auto& [a, b] : overlap(mapped_, s, e)) populate(app, a, b);
    add(touched_, s, e);
    for (const auto& [a, b] : overlap(mapped_, s, e)) remove(touched_, a, b);
}

void ProgramBuffers::unmap(RdmaProcess& app, std::uint64_t va, std::uint64_t len) {
    const std::uint64_t s = va & ~(kPage - 1), e = (va + len + kPage - 1) & ~(kPage - 1);
    for (const auto& [a, b] : overlap(mapped_, s, e)) app.unmap(a, b - a);
    remove(mapped_, s, e);
    remove(touched_, s, e);
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
        add(mapped_, s, gap_end);
        // Pages the program touched before any call named them.
        for (const auto& [a, b] : overlap(touched_, s, gap_end)) populate(app, a, b);
        remove(touched_, s, gap_end);
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

ProgramBuffers::Pooled ProgramBuffers::pooled(RdmaProcess& app, std::uint64_t len, bool populate, BufferAdvice advice) {
    std::uint64_t size = kPage;
    while (size < len) size *= 2;
    std::vector<std::uint64_t>& free = pool_[size];
    if (free.empty()) return {app.alloc(size, populate, advice), size};
    const Pooled b{free.back(), size};
    free.pop_back();
    return b;
}

std::pair<std::uint64_t, std::uint64_t> ProgramBuffers::collective(RdmaProcess& app, const CollectiveData& d,
                                                                   std::uint64_t va, std::uint64_t va2, bool populate,
                                                                   BufferAdvice advice, const std::string& who,
                                                                   Pooled* own) {
    std::uint64_t sbuf = va, rbuf = d.op == coll::Op::Bcast ? va : va2;
    if (d.op != coll::Op::Barrier) {
        if (sbuf) map(app, sbuf, d.send_bytes(), who);   // none: a scatter's rank but its root
        if (rbuf) map(app, rbuf, d.receive_bytes(), who);
    }
    own_buffer(app, d, d.send_bytes(), sbuf, rbuf, populate, advice, own);
    return {sbuf, rbuf};
}

void ProgramBuffers::own_buffer(RdmaProcess& app, const CollectiveData& d, std::uint64_t sbytes, std::uint64_t& sbuf,
                                std::uint64_t& rbuf, bool populate, BufferAdvice advice, Pooled* own) {
    auto library = [&](std::uint64_t len) {
        if (own) *own = pooled(app, len, populate, advice);
        return own ? own->first : scratch(app, len, populate, advice);
    };
    if ((d.op == coll::Op::Alltoallv || d.op == coll::Op::Alltoall) && sbuf == rbuf && sbytes) {
        sbuf = library(sbytes);
    } else if (coll::is_reduction(d.op) && (rbuf == 0 || (sbuf < rbuf + d.bytes && rbuf < sbuf + d.bytes))) {
        (rbuf == 0 ? rbuf : sbuf) = library(std::max<std::uint64_t>(d.bytes, 8));
    }
}

bool ProgramBuffers::holds(RdmaProcess& app, std::uint64_t va, const std::vector<unsigned char>& want) {
    const std::uint64_t len = want.size();
    std::vector<unsigned char> have(len);
    bool ok = (len == 0 || app.debug_read(va, have.data(), len)) && have == want;
    // Zeros: every page must hold data (a page never written reads as
    // zeros too).
    if (ok && std::all_of(want.begin(), want.end(), [](unsigned char b) { return b == 0; }))
        for (std::uint64_t a = va & ~(kPage - 1); len && a < va + len; a += kPage) ok = ok && app.populated(a);
    return ok;
}

}   // namespace vrdmasim
