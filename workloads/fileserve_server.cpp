// The file server's event loop (fileserve.hpp, docs/workloads.md "File
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

// The server's setup: the files opened (and warmed), its message slots,
// replies and records, the registration its method needs (the bounce
// buffers, or the file mappings the engine reads), the endpoint connected.
// Returns what the teardown needs.
FileserveWorkload::ServerSetup FileserveWorkload::server_setup(RdmaProcess& app, msg::Endpoint& ep) {
    Vm& vm = *app.vm();
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
    ServerSetup su;
    su.pins0 = app.pages_pinned();   // the data's pins from the server's setup on
    su.slots = clients_.size() * outstanding_;
    su.inbox = app.alloc(su.slots * sizeof(Wire), true);
    outbox_ = app.alloc(su.slots * (read_ ? sizeof(ReadReply) : sizeof(Reply)), true);
    if (read_) donebox_ = app.alloc(depth_ * (chunk_reads() ? nbuf_ : 1) * sizeof(Done), true);
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
    su.ep_pins = app.pages_pinned() - pins_ep;   // the library's own slots: not the data's
    return su;
}

// The requests of every client served, up to fileserve.server-depth at once.
// The receives are posted, each with its own inbox slot (`at`); a receive
// whose request is being served is `taken` until the reply.
class FileserveWorkload::ServeLoop {
public:
    ServeLoop(FileserveWorkload& w, RdmaProcess& app, msg::Endpoint& ep, const ServerSetup& su)
        : w_(w), app_(app), ep_(ep), inbox_(su.inbox), total_(w.clients_.size() * w.requests_), jobs_(w.depth_) {
        for (std::uint64_t s = 0; s < su.slots && posted_ < total_; ++s, ++posted_) {
            recvs_.push_back(ep.irecv(msg::kAnySource, kRequestTag, inbox_ + s * sizeof(Wire), sizeof(Wire)));
            at_.push_back(s);
            taken_.push_back(false);
        }
        for (std::size_t j = 0; j < jobs_.size(); ++j) jobs_[j].slot = static_cast<unsigned>(j);
    }

    void run() {
        while (handled_ < total_) {
            bool moved = admit_arrived();
            moved = step_jobs() || moved;
            if (moved || handled_ == total_) continue;
            wait();
        }
    }

private:
    // The receives not being served (open), by index.
    void gather() {
        open_.clear();
        open_at_.clear();
        for (std::size_t k = 0; k < recvs_.size(); ++k)
            if (!taken_[k]) open_.push_back(recvs_[k]), open_at_.push_back(k);
    }

    void admit(std::size_t k) {
        const msg::Status st = ep_.wait(recvs_[k]);
        Wire wire;
        if (!st.ok || st.len != sizeof(Wire) ||
            !app_.debug_read(inbox_ + at_[k] * sizeof(Wire), reinterpret_cast<unsigned char*>(&wire), sizeof(Wire)))
            throw std::runtime_error(app_.group() + ": fileserve: a request message could not be received");
        taken_[k] = true;
        Job& j = *std::find_if(jobs_.begin(), jobs_.end(), [](const Job& x) { return !x.active; });
        ++active_;
        w_.concurrent_peak_.set(std::max(w_.concurrent_peak_.value(), static_cast<double>(active_)));
        w_.start_job(app_, j, st, wire, k);
    }

    // Take the requests that have come while a job slot is free (with none
    // being served, wait for one).
    bool admit_arrived() {
        bool moved = false;
        while (active_ < w_.depth_ && handled_ + active_ < total_) {
            gather();
            if (open_.empty()) break;
            const std::size_t i = active_ == 0 ? ep_.wait_any(open_) : ep_.test_any(open_);
            if (i == open_.size()) break;
            admit(open_at_[i]);
            moved = true;
        }
        return moved;
    }

    // Reap what has completed, post what can be, finish what is done.
    bool step_jobs() {
        bool moved = false;
        for (Job& j : jobs_) {
            if (!j.active) continue;
            if (w_.depth_ > 1 && w_.reap_written(app_, j)) moved = true;
            if (j.awaiting && ep_.test(j.done_req)) {
                j.awaiting = false;
                moved = true;
            }
            const std::uint64_t before = j.next;
            w_.pump(app_, j);
            moved = moved || j.next != before;
            if (w_.job_done(j)) {
                finish(j);
                moved = true;
            }
        }
        return moved;
    }

    // A job done: its receive again, for a request still to come.
    void finish(Job& j) {
        w_.finish_job(app_, j);
        --active_;
        ++handled_;
        const std::size_t k = j.recv;
        if (posted_ < total_) {
            recvs_[k] = ep_.irecv(msg::kAnySource, kRequestTag, inbox_ + at_[k] * sizeof(Wire), sizeof(Wire));
            taken_[k] = false;
            ++posted_;
        }
    }

    // Nothing moved: one request at a time waits for what it waits for;
    // several, for whichever comes first, a record, a client's Done, a new
    // request while a slot is free.
    void wait() {
        if (w_.depth_ == 1) {
            Job& j = jobs_[0];
            if (j.awaiting) ep_.wait_any({j.done_req});
            else if (!j.flight.empty()) w_.reap(app_, j);
            else throw std::logic_error(app_.group() + ": fileserve: the request being served waits for nothing");
            return;
        }
        app_.wait_event(
            [&] {
                for (const Job& j : jobs_) {
                    if (!j.active) continue;
                    for (const Part& p : j.flight)
                        if (w_.written(app_, p)) return true;
                    if (j.awaiting && ep_.test(j.done_req)) return true;
                }
                if (active_ < w_.depth_) {
                    gather();
                    return !open_.empty() && ep_.test_any(open_) < open_.size();
                }
                return false;
            },
            "serve wait");
    }

    FileserveWorkload& w_;
    RdmaProcess& app_;
    msg::Endpoint& ep_;
    const std::uint64_t inbox_, total_;
    std::vector<msg::Endpoint::Request> recvs_;
    std::vector<std::uint64_t> at_;
    std::vector<bool> taken_;
    std::uint64_t posted_ = 0, handled_ = 0, active_ = 0;
    std::vector<Job> jobs_;
    std::vector<msg::Endpoint::Request> open_;
    std::vector<std::size_t> open_at_;
};

void FileserveWorkload::server(RdmaProcess& app) {
    const auto parties = static_cast<unsigned>(clients_.size()) + 1;
    if (direct_) {   // no server: the clients read() the files themselves
        ready_and_wait(app, parties);
        ++done_;
        program_ended(app);
        return;
    }
    msg::Endpoint& ep = *eps_[app.node()];
    const ServerSetup su = server_setup(app, ep);
    ready_and_wait(app, parties);
    ep.connect(eps_);
    meter_begin();   // the measured phase starts
    ServeLoop(*this, app, ep, su).run();
    // The measured phase ends with the last reply sent.
    meter_end(served_bytes_.value());
    unpin_all(app);
    if (method_ == Method::ReadCopy) app.deregister(bounce_, depth_ * span_);
    pins_.inc(app.pages_pinned() - su.pins0 - su.ep_pins + file_pins_);
    meter_released();
    ep.finalize();
    app.finish_registrations();
    ++done_;
    program_ended(app);
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
    if (read_ && !chunk_reads()) {
        // The read form: the range is ready where the client reads it; the
        // source is the client's until its Done; the server posts nothing.
        // (pipeline's: chunk by chunk, as pump hands them over.)
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
    if (read_) return eps_[app.node()]->test(p.done);   // pipeline's read form: the client's Done has come
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
        part_done(app, j, p, outcome(app, j, p));
        any = true;
    }
    return any;
}

void FileserveWorkload::reap(RdmaProcess& app, Job& j) {
    const Part p = j.flight.front();
    j.flight.pop_front();
    part_done(app, j, p, outcome(app, j, p));
}

CompletionRecord FileserveWorkload::outcome(RdmaProcess& app, const Job& j, const Part& p) {
    if (!read_) return app.wait_record(p.record);
    // pipeline's read form: the client's Done for the chunk; its buffer is
    // the server's again.
    eps_[app.node()]->wait(p.done);
    Done d;
    app.debug_read(donebox_ + (j.slot * nbuf_ + p.index) * sizeof(Done), reinterpret_cast<unsigned char*>(&d),
                   sizeof(Done));
    if (d.id != j.w.id) throw std::logic_error(app.group() + ": fileserve: a chunk's Done for another request");
    app.unguard(p.guard);
    CompletionRecord rec;
    rec.status = d.bytes == p.len ? kStatusOk : kStatusError;
    rec.bytes = d.bytes;
    return rec;
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
    if (read_ && j.ok && !chunk_reads()) {
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
    // (pipeline's read form: only when it stopped before its last chunk,
    // an error in place of the next chunk's message.)
    if (!j.replied) send_reply(app, j, ok, ok ? j.bytes : 0, 0);
    j.active = false;
}

}   // namespace vrdmasim
