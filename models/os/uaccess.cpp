// User memory by virtual address for the harness and the workloads
// (access_process_vm, mm/memory.c): Vm::write_user / read_user fault pages
// in, untimed; Vm::peek_user / poke_user change nothing but bytes, reading
// swapped pages from their slot and pages being collapsed or migrated from
// their new frame.
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "models/os/inflight.hpp"
#include "models/os/khugepaged.hpp"
#include "models/os/mmu_notifier.hpp"
#include "models/os/memory.hpp"
#include "models/os/migrate.hpp"
#include "models/os/mmap.hpp"
#include "models/os/pagecache.hpp"
#include "models/os/pgtable.hpp"
#include "models/os/syscall.hpp"

namespace vrdmasim {
namespace mm {
namespace {

using namespace aarch64;

// Whether [va, va+len) of process pid is a valid user range; p is set.
bool user_range(Mm& m, int pid, std::uint64_t va, std::uint64_t len, Process*& p) {
    p = proc(m, pid);
    return p && va + len >= va && ((va + len) >> 48) == 0;
}

// Bytes from a to copy at once: to the page's end, or within a present
// 2 MiB block (and its VMA v) to the block's end. `level` and `d`: a's leaf.
std::uint64_t chunk(std::uint64_t a, std::uint64_t left, const Vma& v, int level, std::uint64_t d) {
    if (level == 2 && has_frame(d) && (d & kValid)) return std::min({left, kHuge - (a & (kHuge - 1)), v.end - a});
    return std::min(left, kPage - (a & (kPage - 1)));
}

// Harness access to user memory, untimed; faults pages in (no CPU time).
// `move(pa, done, n)` moves bytes [done, done + n) of the range, at
// physical address pa.
template <class Move>
bool user_walk(Mm& m, int pid, std::uint64_t va, std::uint64_t len, bool write, Move&& move) {
    complete_io(m, io_clock(sc_core::sc_time_stamp()));
    Process* p = nullptr;
    if (!user_range(m, pid, va, len, p)) return false;
    std::uint64_t done = 0;
    while (done < len) {
        const std::uint64_t a = va + done;
        Vma* v = find_vma(*p, a);
        if (!v || v->prot == Prot::None || (write && !can_write(v->prot))) return false;
        int level = 0;
        const bool open_range = in_open(m, pid, a, a + 1);
        const std::uint64_t d = open_range ? 0 : leaf(m, *p, a, nullptr, &level);
        const std::uint64_t n = chunk(a, len - done, *v, level, d);
        std::uint64_t pa = 0;   // a page whose read is in flight (another's): its frame already holds the bytes
        if (!(open_range ? resident_frame(m, *p, a, pa) : resident_frame(m, *p, a, d, level, pa))) {
            Work w;
            w.at = sc_core::sc_time_stamp();
            std::uint64_t next = 0;
            if (fault_page(m, *p, a, write, w, next) != VmError::Ok || !resident_frame(m, *p, a, pa)) return false;
            if (!w.story.empty() && m.ctx.tracer.noting()) {
                // Not a step of the simulated program: a workload's untimed
                // fill or check of its buffers, said so.
                const Tracer::Cause why = m.ctx.tracer.note(
                    Tracer::Track{}, "untimed access", w.at, sc_core::SC_ZERO_TIME, m.prefix,
                    "an untimed access to pid " + std::to_string(pid) + "'s page " + Tracer::hex(align_down(a, kPage)) +
                        " (a workload filling or checking its buffers outside simulated time; no CPU, no wait): " +
                        std::to_string(w.story.size()) + " page event" + (w.story.size() == 1 ? "" : "s") + " follow" +
                        (w.story.size() == 1 ? "s" : ""),
                    m.ctx.tracer.current());
                tell_steps(m, w, w.at, why);
            }
            complete_now(m, pid, a, w.at);   // untimed: a read this copy started is done for it
        }
        move(pa, done, n);
        done += n;
    }
    return true;
}

bool user_copy(Mm& m, int pid, std::uint64_t va, unsigned char* data, std::uint64_t len, bool write) {
    return user_walk(m, pid, va, len, write, [&](std::uint64_t pa, std::uint64_t done, std::uint64_t n) {
        access(m, write, pa, data + done, n);
    });
}

// Write user memory where it is present, leaving pages that are not (never
// touched, swapped out) as they are: no fault, no time. False outside
// every VMA.
bool poke(Mm& m, int pid, std::uint64_t va, const unsigned char* data, std::uint64_t len) {
    Process* p = nullptr;
    if (!user_range(m, pid, va, len, p)) return false;
    std::uint64_t done = 0;
    while (done < len) {
        const std::uint64_t a = va + done;
        const Vma* v = find_vma(*p, a);
        if (!v) return false;
        int level = 0;
        const bool open_range = in_open(m, pid, a, a + 1);
        const std::uint64_t d = open_range ? 0 : leaf(m, *p, a, nullptr, &level);
        const std::uint64_t n = chunk(a, len - done, *v, level, d);
        std::uint64_t pa = 0;
        if (!open_range && resident_frame(m, *p, a, d, level, pa)) {
            access(m, true, pa, const_cast<unsigned char*>(data) + done, n);
        } else if (const std::uint64_t dst = migration_dst(m, pid, a)) {   // the bytes are in the new frame
            access(m, true, dst + (a & (kPage - 1)), const_cast<unsigned char*>(data) + done, n);
        }
        done += n;
    }
    return true;
}

// Read user memory without any change: frames, swap slots, zeros for
// pages never touched; false outside every VMA. The bytes go to `sink`:
// sink.frame(pa, done, n) for bytes [done, done + n) of the range in
// physical memory at pa; sink.buffer(done, n) for where others are put,
// then sink.put(done, n).
template <class Sink>
bool peek_with(Mm& m, int pid, std::uint64_t va, std::uint64_t len, Sink& sink) {
    Process* p = nullptr;
    if (!user_range(m, pid, va, len, p)) return false;
    std::vector<unsigned char> page;
    for (std::uint64_t done = 0; done < len;) {
        const std::uint64_t a = va + done;
        const std::uint64_t off = a & (kPage - 1);
        std::uint64_t n = std::min(len - done, kPage - off);
        const Vma* vma = find_vma(*p, a);
        if (!vma) return false;
        int level = 0;
        const std::uint64_t d = in_open(m, pid, a, a + 1) ? 0 : leaf(m, *p, a, nullptr, &level);
        std::uint64_t reading = 0;
        if (!(d & kValid) && resident_frame(m, *p, a, reading)) {   // a read in flight: its frame holds the bytes
            sink.frame(reading, done, n);
        } else if (in_open(m, pid, a, a + 1)) {   // collapsing: the new block already holds the bytes
            const OpenCollapse& open = m.khugepaged.open;
            sink.frame(open.block + (a - open.base), done, n);
        } else if (has_frame(d)) {
            const std::uint64_t size = level == 2 ? kHuge : kPage;
            if (level == 2)   // the rest of the block (and of its VMA) in one copy
                n = std::min({len - done, kHuge - (a & (kHuge - 1)), vma->end - a});
            sink.frame((d & kAddrMask & ~(size - 1)) + (a & (size - 1)), done, n);
        } else if (level == 3 && is_migration(d)) {   // being migrated: the new frame holds the bytes
            sink.frame(migration_dst(m, pid, a) + off, done, n);
        } else if (level == 3 && is_swap(d)) {
            if (!m.ssd) throw std::logic_error("Vm: swap entry without a swap device");
            page.resize(kPage);
            m.ssd->peek_page(swap_slot(d), page.data());
            std::memcpy(sink.buffer(done, n), page.data() + off, n);
            sink.put(done, n);
        } else if (vma->file >= 0) {   // a file page not mapped: the cache's or the file's bytes
            peek_file(m, *vma, a, sink.buffer(done, n), n);
            sink.put(done, n);
        } else {
            std::memset(sink.buffer(done, n), 0, n);
            sink.put(done, n);
        }
        done += n;
    }
    return true;
}

// peek's bytes: the caller's buffer.
struct BytesSink {
    Mm& m;
    unsigned char* data;
    void frame(std::uint64_t pa, std::uint64_t done, std::uint64_t n) { access(m, false, pa, data + done, n); }
    unsigned char* buffer(std::uint64_t done, std::uint64_t) { return data + done; }
    void put(std::uint64_t, std::uint64_t) {}
};

bool peek(Mm& m, int pid, std::uint64_t va, unsigned char* data, std::uint64_t len) {
    BytesSink sink{m, data};
    return peek_with(m, pid, va, len, sink);
}

// The same bytes compared with the data pattern's from `at`: `first`, the
// first that differs (the range's length: none). In physical memory the
// DRAM compares them (DebugAccess::debug_pattern); the others here.
struct PatternSink {
    Mm& m;
    PatternPlace at;
    std::uint64_t first;
    std::vector<unsigned char> bytes;
    void differs(std::uint64_t done, std::uint64_t f) { first = std::min(first, done + f); }
    void frame(std::uint64_t pa, std::uint64_t done, std::uint64_t n) {
        std::uint64_t f = n;
        access_pattern(m, PatternOp::Check, pa, n, pattern_advance(at, done), f);
        if (f < n) differs(done, f);
    }
    unsigned char* buffer(std::uint64_t, std::uint64_t n) {
        bytes.resize(n);
        return bytes.data();
    }
    void put(std::uint64_t done, std::uint64_t n) {
        const std::uint64_t f = pattern_bytes_mismatch(bytes.data(), n, pattern_advance(at, done));
        if (f < n) differs(done, f);
    }
};

}   // namespace
}   // namespace mm

bool Vm::write_user(int pid, std::uint64_t va, const unsigned char* data, std::uint64_t len) {
    const bool ok = mm::user_copy(*mm_, pid, va, const_cast<unsigned char*>(data), len, true);
    mm::flush_mapped(*mm_, sc_core::sc_time_stamp());   // untimed: the device is told now
    return ok;
}

bool Vm::read_user(int pid, std::uint64_t va, unsigned char* data, std::uint64_t len) {
    const bool ok = mm::user_copy(*mm_, pid, va, data, len, false);
    mm::flush_mapped(*mm_, sc_core::sc_time_stamp());
    return ok;
}

bool Vm::poke_user(int pid, std::uint64_t va, const unsigned char* data, std::uint64_t len) {
    return mm::poke(*mm_, pid, va, data, len);
}

bool Vm::peek_user(int pid, std::uint64_t va, unsigned char* data, std::uint64_t len) const {
    return mm::peek(*mm_, pid, va, data, len);
}

bool Vm::write_user_pattern(int pid, std::uint64_t va, std::uint64_t len, PatternPlace at) {
    const bool ok = mm::user_walk(*mm_, pid, va, len, true, [&](std::uint64_t pa, std::uint64_t done, std::uint64_t n) {
        std::uint64_t first = 0;
        mm::access_pattern(*mm_, PatternOp::Write, pa, n, pattern_advance(at, done), first);
    });
    mm::flush_mapped(*mm_, sc_core::sc_time_stamp());   // untimed: the device is told now
    return ok;
}

bool Vm::peek_user_pattern(int pid, std::uint64_t va, std::uint64_t len, PatternPlace at, std::uint64_t& first) const {
    mm::PatternSink sink{*mm_, at, len, {}};
    const bool ok = mm::peek_with(*mm_, pid, va, len, sink);
    first = sink.first;
    return ok;
}

}   // namespace vrdmasim
