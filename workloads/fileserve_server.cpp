// The file server's event loop (fileserve.hpp, workloads/README.md "File
// serving"): up to fileserve.server-depth requests served at once, each in
// a job slot with its own bounce buffers, socket buffer and completion
// records. With one slot it is the sequential server: take a request, move
// its data, reply, take the next.
#include <algorithm>
#include <sstream>
#include <stdexcept>

#include "library/messaging/endpoint.hpp"
#include "library/messaging/matching.hpp"
#include "models/os/filesystem.hpp"
#include "workloads/fileserve.hpp"

namespace vrdmasim {

using sc_core::sc_time;

void FileserveWorkload::server(RdmaProcess& app) {
    const auto parties = static_cast<unsigned>(clients_.size()) + 1;
    if (direct_) {   // no server: the clients read() the files themselves
        ready_and_wait(app, parties);
        ++done_;
        program_ended();
        return;
    }
    Vm& vm = *app.vm();
    msg::Endpoint& ep = *eps_[app.node()];
    for (unsigned f = 0; f < files_; ++f) {
        const VmResult r = vm.open(app.pid(), f, app.now());
        vm_done(app, r, "open()");
        fds_.push_back(static_cast<int>(r.value));
    }
    if (warm_) {
        warm(app, fds_);
        // The end-to-end span starts after it: a warm cache is the state
        // the measured phase starts from, not its cost.
        log_.measured_from(app.now());
    }
    const std::uint64_t pins0 = app.pages_pinned();   // the data's pins from the server's setup on
    const std::uint64_t slots = clients_.size() * outstanding_;
    const std::uint64_t inbox = app.alloc(slots * sizeof(Wire), true);
    outbox_ = app.alloc(slots * (read_ ? sizeof(ReadReply) : sizeof(Reply)), true);
    if (read_) donebox_ = app.alloc(depth_ * sizeof(Done), true);
    records_ = app.alloc_locked(depth_ * per_job_ * sizeof(CompletionRecord));
    sc_time r0 = app.now();   // registration: the bounce buffers', or the file mappings the engine reads
    if (method_ == Method::ReadCopy) {
        bounce_ = app.alloc(depth_ * span_, true);
        r0 = app.now();
        if (!app.register_buffer(bounce_, depth_ * span_, false))
            throw std::runtime_error(app.group() + ": fileserve: the bounce buffers cannot be registered");
    } else if (method_ == Method::Pipeline) {
        bounce_ = app.alloc(depth_ * nbuf_ * chunk_, true);   // registered chunk by chunk
        r0 = app.now();
    } else if (method_ == Method::KernelCopy) {
        sockbuf_ = app.alloc_locked(depth_ * window_ * packet_);   // kernel memory, locked: no registration
        r0 = app.now();
    } else {
        for (unsigned f = 0; f < files_; ++f) {
            const VmResult r = vm.mmap_file(app.pid(), fds_[f], 0, file_size_, Prot::Read, false, app.now());
            vm_done(app, r, "mmap() of a file");
            maps_.push_back(r.value);
        }
    }
    reg_time_.add(to_us(app.now() - r0));
    const std::uint64_t pins_ep = app.pages_pinned();
    ep.setup();
    const std::uint64_t ep_pins = app.pages_pinned() - pins_ep;   // the library's own slots: not the data's
    ready_and_wait(app, parties);
    ep.connect(eps_);
    meter_begin();   // the measured phase starts

    const std::uint64_t total = clients_.size() * requests_;
    // The receives posted, each with its own inbox slot (`at`); a receive
    // whose request is being served is `taken` until the reply.
    std::vector<msg::Endpoint::Request> recvs;
    std::vector<std::uint64_t> at;
    std::vector<bool> taken;
    std::uint64_t posted = 0;
    for (std::uint64_t s = 0; s < slots && posted < total; ++s, ++posted) {
        recvs.push_back(ep.irecv(msg::kAnySource, kRequestTag, inbox + s * sizeof(Wire), sizeof(Wire)));
        at.push_back(s);
        taken.push_back(false);
    }
    std::vector<Job> jobs(depth_);
    for (std::size_t j = 0; j < jobs.size(); ++j) jobs[j].slot = static_cast<unsigned>(j);
    std::uint64_t handled = 0, active = 0;
    std::vector<msg::Endpoint::Request> open;
    std::vector<std::size_t> open_at;
    // The receives not being served (open), by index.
    auto gather = [&] {
        open.clear();
        open_at.clear();
        for (std::size_t k = 0; k < recvs.size(); ++k)
            if (!taken[k]) open.push_back(recvs[k]), open_at.push_back(k);
    };
    auto admit = [&](std::size_t k) {
        const msg::Status st = ep.wait(recvs[k]);
        Wire w;
        if (!st.ok || st.len != sizeof(Wire) ||
            !app.debug_read(inbox + at[k] * sizeof(Wire), reinterpret_cast<unsigned char*>(&w), sizeof(Wire)))
            throw std::runtime_error(app.group() + ": fileserve: a request message could not be received");
        taken[k] = true;
        Job& j = *std::find_if(jobs.begin(), jobs.end(), [](const Job& x) { return !x.active; });
        ++active;
        concurrent_peak_.set(std::max(concurrent_peak_.value(), static_cast<double>(active)));
        start_job(app, j, st, w, k);
    };
    while (handled < total) {
        bool moved = false;
        // Take the requests that have come while a job slot is free (with
        // none being served, wait for one).
        while (active < depth_ && handled + active < total) {
            gather();
            if (open.empty()) break;
            const std::size_t i = active == 0 ? ep.wait_any(open) : ep.test_any(open);
            if (i == open.size()) break;
            admit(open_at[i]);
            moved = true;
        }
        // Reap what has completed, post what can be, finish what is done.
        for (Job& j : jobs) {
            if (!j.active) continue;
            if (depth_ > 1 && reap_written(app, j)) moved = true;
            if (j.awaiting && ep.test(j.done_req)) {
                j.awaiting = false;
                moved = true;
            }
            const std::uint64_t before = j.next;
            pump(app, j);
            moved = moved || j.next != before;
            if (job_done(j)) {
                finish_job(app, j);
                --active;
                ++handled;
                // Its receive again, for a request still to come.
                const std::size_t k = j.recv;
                if (posted < total) {
                    recvs[k] = ep.irecv(msg::kAnySource, kRequestTag, inbox + at[k] * sizeof(Wire), sizeof(Wire));
                    taken[k] = false;
                    ++posted;
                }
                moved = true;
            }
        }
        if (moved || handled == total) continue;
        if (depth_ == 1) {
            // One request at a time: wait for what it waits for.
            Job& j = jobs[0];
            if (j.awaiting) ep.wait_any({j.done_req});
            else if (!j.flight.empty()) reap(app, j);
            else throw std::logic_error(app.group() + ": fileserve: the request being served waits for nothing");
            continue;
        }
        // Several: whichever comes first, a record, a client's Done, a new
        // request while a slot is free.
        app.wait_event(
            [&] {
                for (const Job& j : jobs) {
                    if (!j.active) continue;
                    for (const Part& p : j.flight)
                        if (written(app, p)) return true;
                    if (j.awaiting && ep.test(j.done_req)) return true;
                }
                if (active < depth_) {
                    gather();
                    return !open.empty() && ep.test_any(open) < open.size();
                }
                return false;
            },
            "serve wait");
    }
    // The measured phase ends with the last reply sent.
    meter_end(served_bytes_.value());
    unpin_all(app);
    if (method_ == Method::ReadCopy) app.deregister(bounce_, depth_ * span_);
    pins_.inc(app.pages_pinned() - pins0 - ep_pins + file_pins_);
    meter_released();
    ep.finalize();
    app.finish_registrations();
    ++done_;
    program_ended();
}

void FileserveWorkload::start_job(RdmaProcess& app, Job& j, const msg::Status& st, const Wire& w, std::size_t recv) {
    const auto ci = std::find(client_nodes_.begin(), client_nodes_.end(), st.source) - client_nodes_.begin();
    if (static_cast<std::size_t>(ci) >= clients_.size() || w.file >= files_ || w.slot >= outstanding_ ||
        w.offset + w.len > file_size_)
        throw std::logic_error(app.group() + ": fileserve: a malformed request from node" + std::to_string(st.source));
    const unsigned slot = j.slot;
    j = Job{};
    j.slot = slot;
    j.active = true;
    j.w = w;
    j.node = st.source;
    j.client = static_cast<std::size_t>(ci);
    j.recv = recv;
    j.dst = method_ == Method::KernelCopy ? kbuf_[j.client] + w.slot * span_ : rx_area_[j.client] + w.slot * span_;
    j.t0 = app.now();
    j.story = st.story;
    const Tracer::Scope serving(ctx_.tracer, j.story);   // its read(), pins or faults follow the request
    prepare(app, j);
    if (read_) {
        // The read form: the range is ready where the client reads it; the
        // source is the client's until its Done; the server posts nothing.
        j.replied = true;
        j.parts = 0;
        if (j.ok) {
            j.guard = app.guard(j.src, w.len, false, [this, &app, &j] {
                for (;;) {
                    msg::Endpoint& ep = *eps_[app.node()];
                    if (!j.awaiting || ep.test(j.done_req)) break;
                    ep.wait_any({j.done_req});
                }
                j.awaiting = false;
                app.unguard(j.guard);
            });
            j.done_req =
                eps_[app.node()]->irecv(j.node, kDoneTag + w.slot, donebox_ + j.slot * sizeof(Done), sizeof(Done));
            j.awaiting = true;
        }
        send_reply(app, j, j.ok, j.ok ? w.len : 0, j.src);
        return;
    }
    pump(app, j);
}

bool FileserveWorkload::written(RdmaProcess& app, const Part& p) const {
    // The record of this post: written after it, and by now.
    sc_time at;
    return app.record_written(p.record, at) && at > p.posted && at <= app.now();
}

void FileserveWorkload::pump(RdmaProcess& app, Job& j) {
    while (j.ok && j.next < j.parts && post_part(app, j)) {
    }
}

bool FileserveWorkload::reap_written(RdmaProcess& app, Job& j) {
    bool any = false;
    for (auto it = j.flight.begin(); it != j.flight.end();) {
        if (!written(app, *it)) {
            ++it;
            continue;
        }
        const Part p = *it;
        it = j.flight.erase(it);
        part_done(app, j, p, app.wait_record(p.record));
        any = true;
    }
    return any;
}

void FileserveWorkload::reap(RdmaProcess& app, Job& j) {
    const Part p = j.flight.front();
    j.flight.pop_front();
    part_done(app, j, p, app.wait_record(p.record));
}

bool FileserveWorkload::job_done(const Job& j) const {
    return j.active && !j.awaiting && j.flight.empty() && (j.next == j.parts || !j.ok);
}

std::uint64_t FileserveWorkload::record_of(const Job& j, std::uint64_t index) const {
    return records_ + (j.slot * per_job_ + index) * sizeof(CompletionRecord);
}

void FileserveWorkload::send_reply(RdmaProcess& app, const Job& j, bool ok, std::uint64_t bytes, std::uint64_t src) {
    msg::Endpoint& ep = *eps_[app.node()];
    const std::uint64_t len = read_ ? sizeof(ReadReply) : sizeof(Reply);
    const std::uint64_t out = outbox_ + (j.client * outstanding_ + j.w.slot) * len;
    const ReadReply rep{j.w.id, ok ? kStatusOk : kStatusError, bytes, src};
    app.debug_write(out, reinterpret_cast<const unsigned char*>(&rep), len);
    ep.send(j.node, kReplyTag + j.w.slot, out, len);
}

void FileserveWorkload::finish_job(RdmaProcess& app, Job& j) {
    if (read_ && j.ok) {
        // The client's Done: what its read moved.
        Done d;
        eps_[app.node()]->wait(j.done_req);
        app.debug_read(donebox_ + j.slot * sizeof(Done), reinterpret_cast<unsigned char*>(&d), sizeof(Done));
        if (d.id != j.w.id) throw std::logic_error(app.group() + ": fileserve: a Done for another request");
        app.unguard(j.guard);
        j.bytes = d.bytes;
    }
    release(app, j);
    const bool ok = j.ok && j.bytes == j.w.len;
    if (ok) served_bytes_.inc(j.bytes);
    const std::string what = describe(j.w, j.node) + (ok ? "" : " FAILED");
    slice(app, "serve", j.t0, what, j.slot);
    if (ctx_.tracer.noting())
        ctx_.tracer.note(Tracer::Track{}, "served", app.now(), sc_core::SC_ZERO_TIME, app.group() + ".fileserve",
                         "served " + what, j.story);
    if (!j.replied) send_reply(app, j, ok, ok ? j.bytes : 0, 0);
    j.active = false;
}

}   // namespace vrdmasim
