// The five ways the fileserve server moves a request's data
// (fileserve.hpp, README.md "File serving").
#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "models/os/filesystem.hpp"
#include "workloads/fileserve.hpp"

namespace vrdmasim {

using sc_core::sc_time;

namespace {
constexpr std::uint64_t kPage = 4096;
constexpr std::uint64_t kRec = sizeof(CompletionRecord);

std::string range(const FileserveWorkload::Wire& w, std::uint64_t off, std::uint64_t len) {
    std::ostringstream os;
    os << "request " << w.id << " file " << w.file << " [" << w.offset + off << ", +" << len << ")";
    return os.str();
}
}  // namespace

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

FileserveWorkload::Served FileserveWorkload::read_copy(RdmaProcess& app, const Wire& w, unsigned node, std::uint64_t dst) {
    Vm& vm = *app.vm();
    const sc_time t0 = app.now();
    const VmResult r = vm.read(app.pid(), fds_[w.file], w.offset, w.len, bounce_, app.now());
    vm_done(app, r, "read()");
    copy_bytes_.inc(r.value);
    slice(app, "read() copy", t0, range(w, 0, w.len));
    if (r.value != w.len) return {};
    if (!post(app, bounce_, node, dst, w.len, records_)) return {};
    const CompletionRecord rec = app.wait_record(records_);
    return {rec.status == kStatusOk, rec.status == kStatusOk ? rec.bytes : 0};
}

FileserveWorkload::Served FileserveWorkload::pipeline(RdmaProcess& app, const Wire& w, unsigned node, std::uint64_t dst) {
    Vm& vm = *app.vm();
    std::vector<std::uint64_t> busy(nbuf_, 0);   // bytes of the chunk in flight from each buffer (0: free)
    Served out{true, 0};
    auto reap = [&](std::uint64_t b) {
        const CompletionRecord rec = app.wait_record(records_ + b * kRec);
        out.ok = out.ok && rec.status == kStatusOk;
        out.bytes += rec.status == kStatusOk ? rec.bytes : 0;
        app.deregister(bounce_ + b * chunk_, busy[b]);
        busy[b] = 0;
    };
    const std::uint64_t n = (w.len + chunk_ - 1) / chunk_;
    for (std::uint64_t k = 0; k < n && out.ok; ++k) {
        const std::uint64_t b = k % nbuf_, buf = bounce_ + b * chunk_;
        if (busy[b]) reap(b);   // the buffer is reused only after its chunk's completion
        const std::uint64_t off = k * chunk_, len = std::min(chunk_, w.len - off);
        const sc_time t0 = app.now();
        const VmResult r = vm.read(app.pid(), fds_[w.file], w.offset + off, len, buf, app.now());
        vm_done(app, r, "read()");
        copy_bytes_.inc(r.value);
        slice(app, "read() copy", t0, range(w, off, len));
        if (r.value != len) {
            out.ok = false;
            break;
        }
        const sc_time t1 = app.now();
        if (!app.register_buffer(buf, len, false)) {
            out.ok = false;
            break;
        }
        reg_time_.add(to_us(app.now() - t1));
        slice(app, "register", t1, range(w, off, len));
        busy[b] = len;
        if (!post(app, buf, node, dst + off, len, records_ + b * kRec)) {
            app.deregister(buf, len);
            busy[b] = 0;
            out.ok = false;
        }
    }
    // The chunks still in flight, oldest first.
    for (std::uint64_t k = 0; k < nbuf_; ++k)
        if (busy[(n + k) % nbuf_]) reap((n + k) % nbuf_);
    if (out.bytes != w.len) out.ok = false;
    return out;
}

FileserveWorkload::Served FileserveWorkload::sendfile(RdmaProcess& app, const Wire& w, unsigned node, std::uint64_t dst) {
    Vm& vm = *app.vm();
    const int fd = fds_[w.file];
    const std::uint64_t va = maps_[w.file] + w.offset;
    const std::uint64_t span = (w.len + kPage - 1) / kPage * kPage;
    const sc_time t0 = app.now();
    // GUP of the page-cache pages: read in if needed, pinned (reclaim never
    // drops a pinned page).
    auto pin = [&](std::uint64_t off, std::uint64_t len) {
        VmResult r = vm.pin_file(app.pid(), fd, off, len, app.now());
        if (r.error == VmError::NoMemory && !cached_pins_.empty()) {
            // The pin-down cache holds the frames reclaim would need: flush it, retry once.
            unpin_all(app);
            r = vm.pin_file(app.pid(), fd, off, len, app.now());
        }
        if (!r.ok()) return false;
        app.advance_to(r.done);
        return true;
    };
    bool ok = true;
    if (sendfile_cache_) {
        // Pin only the pages the cache does not hold yet, run by run.
        for (std::uint64_t o = w.offset; o < w.offset + span && ok;) {
            if (cached_pins_.count({w.file, o})) {
                o += kPage;
                continue;
            }
            std::uint64_t e = o;
            while (e < w.offset + span && !cached_pins_.count({w.file, e})) e += kPage;
            ok = pin(o, e - o);
            if (ok)
                for (std::uint64_t p = o; p < e; p += kPage) cached_pins_.insert({w.file, p});
            o = e;
        }
    } else {
        ok = pin(w.offset, span);
    }
    // The engine reaches the pinned pages through the server's file mapping:
    // its PTEs made present (the GUP of the mapping; reclaim may clear them
    // again, the pinned frames stay, and the engine's fault is then minor).
    if (ok) {
        const VmResult m = vm.fault_in(app.pid(), va, span, false, app.now());
        ok = m.ok();
        if (ok) app.advance_to(m.done);
    }
    reg_time_.add(to_us(app.now() - t0));
    slice(app, sendfile_cache_ ? "pin (cached)" : "pin", t0, range(w, 0, w.len));
    Served out;
    if (ok && post(app, va, node, dst, w.len, records_)) {
        const CompletionRecord rec = app.wait_record(records_);
        out = {rec.status == kStatusOk, rec.status == kStatusOk ? rec.bytes : 0};
    }
    if (!sendfile_cache_ && ok) {
        const sc_time t1 = app.now();
        vm_done(app, vm.unpin_file(app.pid(), fd, w.offset, span, app.now()), "unpin of file pages");
        reg_time_.add(to_us(app.now() - t1));
        slice(app, "unpin", t1, range(w, 0, w.len));
    }
    return out;
}

FileserveWorkload::Served FileserveWorkload::mmap_fault(RdmaProcess& app, const Wire& w, unsigned node, std::uint64_t dst) {
    // The file mapping as it is: pages not present fault in the SMMU and
    // the fault library brings them in (from the SSD when not cached).
    if (!post(app, maps_[w.file] + w.offset, node, dst, w.len, records_)) return {};
    const CompletionRecord rec = app.wait_record(records_);
    return {rec.status == kStatusOk, rec.status == kStatusOk ? rec.bytes : 0};
}

FileserveWorkload::Served FileserveWorkload::kernel_copy(RdmaProcess& app, const Wire& w, unsigned node, std::uint64_t dst) {
    Vm& vm = *app.vm();
    std::vector<bool> busy(window_, false);
    Served out{true, 0};
    auto reap = [&](std::uint64_t s) {
        const CompletionRecord rec = app.wait_record(records_ + s * kRec);
        out.ok = out.ok && rec.status == kStatusOk;
        out.bytes += rec.status == kStatusOk ? rec.bytes : 0;
        busy[s] = false;
    };
    const std::uint64_t n = (w.len + packet_ - 1) / packet_;
    for (std::uint64_t p = 0; p < n && out.ok; ++p) {
        const std::uint64_t s = p % window_, buf = sockbuf_ + s * packet_;
        if (busy[s]) reap(s);   // the socket buffer's space comes back with the packet's completion
        const std::uint64_t off = p * packet_, len = std::min(packet_, w.len - off);
        const sc_time t0 = app.now();
        // The kernel copies the packet's bytes from the page cache into the
        // socket buffer (the read path: lookups, misses, the copy), then
        // the protocol stack's per-packet work.
        const VmResult r = vm.read(app.pid(), fds_[w.file], w.offset + off, len, buf, app.now());
        vm_done(app, r, "kernel copy from the page cache");
        copy_bytes_.inc(r.value);
        app.compute("kernel-tx", tx_cost_);
        slice(app, "kernel-copy packet", t0, range(w, off, len));
        if (r.value != len) {
            out.ok = false;
            break;
        }
        // Each packet counts on the client's event counter of its slot.
        if (!post(app, buf, node, dst + off, len, records_ + s * kRec, kFlagCounter, 1 + w.slot)) {
            out.ok = false;
            break;
        }
        busy[s] = true;
        packets_.inc();
    }
    for (std::uint64_t k = 0; k < window_; ++k)
        if (busy[(n + k) % window_]) reap((n + k) % window_);
    if (out.bytes != w.len) out.ok = false;
    return out;
}

}  // namespace vrdmasim
