// Polled words and the time the engine wrote them (see write_watch.hpp).
#include "models/dma/write_watch.hpp"

#include <algorithm>
#include <cstring>
#include <stdexcept>

namespace vrdmasim {

void WriteWatch::watch(std::uint32_t sid, std::uint64_t va, std::uint64_t len) {
    if (va % 8 || len % 8) throw std::invalid_argument("WriteWatch: a watched range must be whole 8-byte words");
    if (len) ranges_.push_back({sid, {va, va + len}});
}

bool WriteWatch::watched(std::uint32_t sid, std::uint64_t va) const {
    for (const auto& r : ranges_)
        if (r.first == sid && va >= r.second.first && va < r.second.second) return true;
    return false;
}

void WriteWatch::wrote(std::uint32_t sid, std::uint64_t va, const unsigned char* data, std::uint64_t len,
                       sc_core::sc_time done) {
    if (ranges_.empty() || len == 0) return;
    // Each whole or partial word of the write that lies in a watched range.
    for (std::uint64_t w = va & ~std::uint64_t(7); w < va + len; w += 8) {
        if (!watched(sid, w)) continue;
        auto& h = words_[{sid, w}];
        std::uint64_t before = h.empty() ? 0 : h.back().after;
        std::uint64_t after = before;
        const std::uint64_t lo = std::max(w, va), hi = std::min(w + 8, va + len);
        std::memcpy(reinterpret_cast<unsigned char*>(&after) + (lo - w), data + (lo - va), hi - lo);
        h.push_back({done, before, after});
        // A poller is never more than a few writes behind: keep the last 8.
        if (h.size() > 8) h.pop_front();
    }
}

bool WriteWatch::visible(std::uint32_t sid, std::uint64_t va, sc_core::sc_time t, std::uint64_t now,
                         std::uint64_t& value, sc_core::sc_time* written) const {
    if (!watched(sid, va)) return false;
    value = now;
    if (written) *written = sc_core::SC_ZERO_TIME;
    const auto it = words_.find({sid, va});
    if (it == words_.end()) return true;   // never written by the engine: memory is what it was
    // Walk back over the writes done after t: the word holds what it held
    // before the earliest of them.
    auto w = it->second.rbegin();
    for (; w != it->second.rend() && w->done > t; ++w) value = w->before;
    if (written && w != it->second.rend()) *written = w->done;
    return true;
}

}   // namespace vrdmasim
