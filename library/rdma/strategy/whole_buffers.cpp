// Whole buffers (whole_buffers.hpp): pin-static and pin-deferred.
#include "library/rdma/strategy/whole_buffers.hpp"

#include <algorithm>
#include <stdexcept>

#include "src/core/format.hpp"

namespace vrdmasim {

using sc_core::sc_time;

WholeBuffers::WholeBuffers(const StrategyEnv& env, std::string name, std::uint64_t chunk)
    : env_(env), name_(std::move(name)), chunk_(chunk ? page_up(chunk) : 0) {}

bool WholeBuffers::pin_chunk(Chunk& c, sc_time t) {
    const RegResult r = env_.stats.count(env_.vm.pin(env_.pid, c.start, c.end - c.start, t), true);
    c.done = r.done;
    if (!r.ok) {
        c.state = ChunkState::Failed;
        c.error = r.error;
        return false;
    }
    c.state = ChunkState::Pinning;
    env_.stats.see_peak(env_.vm.pinned_bytes(env_.pid));
    return true;
}

RegResult WholeBuffers::on_alloc(std::uint64_t va, std::uint64_t len, sc_time at) {
    RegResult r{true, VmError::Ok, at};
    Buffer b;
    b.start = page_down(va);
    b.end = page_up(va + std::max<std::uint64_t>(len, 1));
    b.queued = at;
    const std::uint64_t step = chunk_ ? chunk_ : b.end - b.start;
    for (std::uint64_t s = b.start; s < b.end; s += step) {
        Chunk c;
        c.start = s;
        c.end = std::min(b.end, s + step);
        b.chunks.push_back(c);
    }
    buffers_.push_back(std::move(b));
    if (chunk_) return r;   // the registration thread's work
    Chunk& c = buffers_.back().chunks.front();
    if (!pin_chunk(c, at)) {
        r.ok = false;
        r.error = c.error;
    }
    r.done = c.done;
    return r;
}

bool WholeBuffers::background_pending() const {
    for (std::size_t i = next_pending_; i < buffers_.size(); ++i)
        for (const Chunk& c : buffers_[i].chunks)
            if (c.state == ChunkState::Pending) return true;
    return false;
}

sc_time WholeBuffers::background_step(sc_time at) {
    for (; next_pending_ < buffers_.size(); ++next_pending_) {
        Buffer& b = buffers_[next_pending_];
        for (Chunk& c : b.chunks) {
            if (c.state != ChunkState::Pending) continue;
            const sc_time t = std::max(at, b.queued);
            if (pin_chunk(c, t)) env_.stats.background_pins.inc();
            env_.stats.background_time.add(to_us(c.done - t));
            return c.done;
        }
    }
    return at;
}

std::uint64_t WholeBuffers::covered(std::uint64_t s, std::uint64_t e) const {
    std::uint64_t n = 0;
    for (const Buffer& b : buffers_)
        if (b.start < e && s < b.end) n += std::min(e, b.end) - std::max(s, b.start);
    return n;
}

RegResult WholeBuffers::acquire(std::uint64_t va, std::uint64_t len, bool, sc_time at) {
    RegResult r;
    sc_time t = at;
    const std::uint64_t s = page_down(va), e = page_up(va + len);
    if (covered(s, e) != e - s)   // the library registers only what the application allocated
        throw std::logic_error("rdma.strategy = " + name_ + ": [" + hex(va) + ", +" + std::to_string(len) +
                               ") is not inside buffers the application allocated");
    for (Buffer& b : buffers_) {
        if (b.end <= s || e <= b.start) continue;
        for (Chunk& c : b.chunks) {
            if (c.end <= s || e <= c.start) continue;
            switch (c.state) {
            case ChunkState::Pinning:   // pinned by then, or the thread is at it: wait for it
                t = std::max(t, c.done);
                break;
            case ChunkState::Pending:   // not reached by the thread: the post pins it itself
                if (pin_chunk(c, t)) env_.stats.foreground_pins.inc();
                t = c.done;
                if (c.state == ChunkState::Failed) {
                    r.ok = false;
                    r.error = c.error;
                }
                break;
            case ChunkState::Failed:   // refused (memlock, memory): every post in it fails
                if (r.ok) env_.stats.failures.inc();
                r.ok = false;
                r.error = c.error;
                break;
            }
        }
    }
    if (chunk_) env_.stats.deferred_wait.add(to_us(t - at));
    r.done = t;
    return r;
}

RegResult WholeBuffers::release(std::uint64_t va, std::uint64_t len, sc_time at) {
    const std::uint64_t s = page_down(va), e = page_up(va + len);
    if (covered(s, e) != e - s) return RegResult{false, VmError::Invalid, at};
    return RegResult{true, VmError::Ok, at};
}

RegResult WholeBuffers::release_all(sc_time at) {
    sc_time t = at;
    for (Buffer& b : buffers_)
        for (Chunk& c : b.chunks) {
            if (c.state != ChunkState::Pinning) continue;   // never pinned, or refused
            t = std::max(t, c.done);   // the thread may still be at it
            const VmResult u = env_.vm.unpin(env_.pid, c.start, c.end - c.start, t);
            if (!u.ok())
                throw std::logic_error("rdma.strategy = " + name_ +
                                       ": unpin of a buffer chunk failed: " + to_string(u.error));
            env_.stats.deregistrations.inc();
            t = u.done;
        }
    buffers_.clear();
    next_pending_ = 0;
    return RegResult{true, VmError::Ok, t};
}

}   // namespace vrdmasim
