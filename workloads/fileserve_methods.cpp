// The five ways the fileserve server moves a request's data
// (fileserve.hpp, README.md "File serving"): the CPU work before the data
// moves (prepare), each part's (post_part), a part's completion
// (part_done) and the request's end (release). The event loop that calls
// them is fileserve_server.cpp.
#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "library/messaging/endpoint.hpp"
#include "models/os/filesystem.hpp"
#include "workloads/fileserve.hpp"

namespace vrdmasim {

using sc_core::sc_time;

namespace {
constexpr std::uint64_t kPage = 4096;

std::string range(const FileserveWorkload::Wire& w, std::uint64_t off, std::uint64_t len) {
    std::ostringstream os;
    os << "request " << w.id << " file " << w.file << " [" << w.offset + off << ", +" << len << ")";
    return os.str();
}
}   // namespace

bool FileserveWorkload::post(RdmaProcess& app, std::uint64_t src, unsigned node, std::uint64_t dst, std::uint64_t len,
                             std::uint64_t record, std::uint32_t flags, std::uint32_t counter) {
    const sc_time t0 = app.now();
    for (unsigned tries = 0; !app.post_write(src, node, dst, len, 0, record, flags, counter); ++tries) {
        // The channel's queue is full: one more completion on it makes room.
        // (The engine refuses for other reasons too: give up after a few.)
        if (tries > 64) return false;
        app.wait_tx(app.tx_completions() + 1);
    }
    slice(app, "post", t0, std::to_string(len) + " B to node" + std::to_string(node));
    return true;
}

std::uint64_t FileserveWorkload::part_buffer(const Job& j, std::uint64_t index) const {
    switch (method_) {
    case Method::ReadCopy: return bounce_ + j.slot * span_;
    case Method::Pipeline: return bounce_ + (j.slot * nbuf_ + index) * chunk_;
    case Method::KernelCopy: return sockbuf_ + (j.slot * window_ + index) * packet_;
    default: return maps_[j.w.file] + j.w.offset;   // sendfile, mmap-fault: the file mapping
    }
}

void FileserveWorkload::prepare(RdmaProcess& app, Job& j) {
    const Wire& w = j.w;
    j.src = part_buffer(j, 0);
    j.parts = 1;
    switch (method_) {
    case Method::ReadCopy: {
        // read() the whole range into the job's bounce buffer.
        const sc_time t0 = app.now();
        j.ok = read_file(app, fds_[w.file], w.offset, w.len, j.src, "read()") == w.len;
        slice(app, "read() copy", t0, range(w, 0, w.len), j.slot);
        break;
    }
    case Method::Pipeline:
        j.parts = (w.len + chunk_ - 1) / chunk_;
        j.busy.assign(nbuf_, false);
        break;
    case Method::KernelCopy:
        j.parts = (w.len + packet_ - 1) / packet_;
        j.busy.assign(window_, false);
        break;
    case Method::MmapFault:
        // The file mapping as it is: pages not present fault in the SMMU
        // and the fault library brings them in (from the SSD when not cached).
        break;
    case Method::Sendfile: prepare_sendfile(app, j); break;
    }
}

// GUP of the page-cache pages of [off, off + len) of file descriptor fd:
// read in if needed, pinned (reclaim never drops a pinned page).
bool FileserveWorkload::pin_file_range(RdmaProcess& app, int fd, std::uint64_t off, std::uint64_t len) {
    Vm& vm = *app.vm();
    VmResult r = vm.pin_file(app.pid(), fd, off, len, app.now());
    if (r.error == VmError::NoMemory && !cached_pins_.empty()) {
        // The pin-down cache holds the frames reclaim would need: flush it
        // (but the pages requests being served send), retry once.
        unpin_all(app, true);
        r = vm.pin_file(app.pid(), fd, off, len, app.now());
    }
    if (!r.ok()) {
        pins_refused_.inc();
        ++meter_->starved;
        return false;
    }
    file_pins_ += r.value;
    app.advance_to(r.done);
    return true;
}

// With the pin-down cache: the request's pages are in use until its release
// (a flush of the cache, another request's pin short of memory, spares
// them); only the pages the cache does not hold yet are pinned, run by run.
bool FileserveWorkload::pin_through_cache(RdmaProcess& app, Job& j, std::uint64_t span) {
    const Wire& w = j.w;
    const int fd = fds_[w.file];
    for (std::uint64_t o = w.offset; o < w.offset + span; o += kPage) ++in_use_[{w.file, o}];
    j.held = true;
    bool ok = true;
    for (std::uint64_t o = w.offset; o < w.offset + span && ok;) {
        if (cached_pins_.count({w.file, o})) {
            o += kPage;
            continue;
        }
        std::uint64_t e = o;
        while (e < w.offset + span && !cached_pins_.count({w.file, e})) e += kPage;
        ok = pin_file_range(app, fd, o, e - o);
        if (ok)
            for (std::uint64_t p = o; p < e; p += kPage) cached_pins_.insert({w.file, p});
        o = e;
    }
    return ok;
}

// sendfile: the request's page-cache pages pinned, then reached by the
// engine through the server's file mapping.
void FileserveWorkload::prepare_sendfile(RdmaProcess& app, Job& j) {
    const Wire& w = j.w;
    const std::uint64_t span = (w.len + kPage - 1) / kPage * kPage;
    const sc_time t0 = app.now();
    bool ok;
    if (sendfile_cache_) {
        ok = pin_through_cache(app, j, span);
    } else {
        ok = pin_file_range(app, fds_[w.file], w.offset, span);
        j.pinned = ok;
    }
    // The engine reaches the pinned pages through the server's file
    // mapping: its PTEs made present (the GUP of the mapping; reclaim may
    // clear them again, the pinned frames stay, and the engine's fault is
    // then minor).
    if (ok) {
        const VmResult m = app.vm()->fault_in(app.pid(), j.src, span, false, app.now());
        ok = m.ok();
        if (ok) app.advance_to(m.done);
    }
    reg_time_.add(to_us(app.now() - t0));
    slice(app, sendfile_cache_ ? "pin (cached)" : "pin", t0, range(w, 0, w.len), j.slot);
    j.ok = ok;
}

// pipeline: read() chunk k into its buffer and register it; kernel-copy:
// the kernel copies the packet's bytes from the page cache into the socket
// buffer (the read path: lookups, misses, the copy), then the protocol
// stack's per-packet work. False (and j.ok false) if either fails.
bool FileserveWorkload::fill_part(RdmaProcess& app, Job& j, const Part& p, std::uint64_t off, std::uint64_t len) {
    const bool kernel = method_ == Method::KernelCopy;
    const sc_time t0 = app.now();
    const std::uint64_t got = read_file(app, fds_[j.w.file], j.w.offset + off, len, p.buf,
                                        kernel ? "kernel copy from the page cache" : "read()");
    if (kernel) app.compute("kernel-tx", tx_cost_);
    slice(app, kernel ? "kernel-copy packet" : "read() copy", t0, range(j.w, off, len), j.slot);
    if (got != len) return j.ok = false;
    if (kernel) return true;
    const sc_time t1 = app.now();
    if (!app.register_buffer(p.buf, len, false)) return j.ok = false;
    reg_time_.add(to_us(app.now() - t1));
    slice(app, "register", t1, range(j.w, off, len), j.slot);
    return true;
}

bool FileserveWorkload::post_part(RdmaProcess& app, Job& j) {
    const Wire& w = j.w;
    Part p;
    p.index = j.next;
    p.record = record_of(j, 0);
    std::uint64_t off = 0, len = w.len;
    std::uint32_t flags = 0, counter = 0;
    if (method_ == Method::Pipeline || method_ == Method::KernelCopy) {
        const bool kernel = method_ == Method::KernelCopy;
        const std::uint64_t piece = kernel ? packet_ : chunk_;
        p.index = j.next % j.busy.size();
        if (j.busy[p.index]) return false;   // the buffer is reused only after its part's completion
        p.record = record_of(j, p.index);
        off = j.next * piece;
        len = std::min(piece, w.len - off);
        p.buf = part_buffer(j, p.index);
        if (!fill_part(app, j, p, off, len)) return false;
        if (kernel) {
            // Each packet counts on the client's event counter of its slot.
            flags = kFlagCounter;
            counter = 1 + w.slot;
        }
    } else {
        p.buf = j.src;   // read-copy: the bounce buffer; sendfile, mmap-fault: the file mapping
    }
    p.len = len;
    p.posted = app.now();
    if (read_) {
        hand_over(app, j, p);   // pipeline's read form (the only one with parts): the client reads it
    } else {
        if (!post(app, p.buf, j.node, j.dst + off, len, p.record, flags, counter)) {
            if (method_ == Method::Pipeline) app.deregister(p.buf, len);
            j.ok = false;
            return false;
        }
        // The source is the engine's until the record is seen (the guard).
        if (method_ != Method::KernelCopy) app.guard_until(p.buf, len, false, p.record);
    }
    if (method_ == Method::KernelCopy) packets_.inc();
    if (!j.busy.empty()) j.busy[p.index] = true;
    j.flight.push_back(p);
    ++j.next;
    return true;
}

// pipeline's read form: the chunk is read() and registered in its buffer.
// The receive of the client's Done is posted first (the client says Done
// for the request's chunks in order, and the library keeps a peer's
// messages of one tag in order: the k-th Done lands in chunk k's box),
// the buffer guarded until then, and the client told where the chunk is
// (the first chunk's message is the reply to the request). The last
// chunk's message ends the hand-over: nothing more is sent for the request.
void FileserveWorkload::hand_over(RdmaProcess& app, Job& j, Part& p) {
    msg::Endpoint& ep = *eps_[app.node()];
    const msg::Endpoint::Request done =
        ep.irecv(j.node, kDoneTag + j.w.slot, donebox_ + (j.slot * nbuf_ + p.index) * sizeof(Done), sizeof(Done));
    p.done = done;
    p.guard = app.guard(p.buf, p.len, false, [this, &app, &j, done] {
        eps_[app.node()]->wait_any({done});
        for (const Part& q : j.flight)
            if (q.done == done) app.unguard(q.guard);
    });
    send_reply(app, j, true, p.len, p.buf);
    if (j.next + 1 == j.parts) j.replied = true;
}

void FileserveWorkload::part_done(RdmaProcess& app, Job& j, const Part& p, const CompletionRecord& rec) {
    const bool ok = rec.status == kStatusOk;
    j.ok = j.ok && ok;
    j.bytes += ok ? rec.bytes : 0;
    if (method_ == Method::Pipeline) app.deregister(p.buf, p.len);
    if (!j.busy.empty()) j.busy[p.index] = false;
}

void FileserveWorkload::release(RdmaProcess& app, Job& j) {
    if (j.held) {
        const std::uint64_t span = (j.w.len + kPage - 1) / kPage * kPage;
        for (std::uint64_t o = j.w.offset; o < j.w.offset + span; o += kPage) {
            const auto it = in_use_.find({j.w.file, o});
            if (--it->second == 0) in_use_.erase(it);
        }
        j.held = false;
    }
    if (method_ != Method::Sendfile || !j.pinned) return;
    Vm& vm = *app.vm();
    const std::uint64_t span = (j.w.len + kPage - 1) / kPage * kPage;
    const sc_time t1 = app.now();
    vm_done(app, vm.unpin_file(app.pid(), fds_[j.w.file], j.w.offset, span, app.now()), "unpin of file pages");
    reg_time_.add(to_us(app.now() - t1));
    slice(app, "unpin", t1, range(j.w, 0, j.w.len), j.slot);
    j.pinned = false;
}

}   // namespace vrdmasim
