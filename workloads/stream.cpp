#include "workloads/stream.hpp"

#include <deque>
#include <iostream>

namespace vrdmasim {

using sc_core::sc_time;

StreamWorkload::StreamWorkload(const SimContext& ctx, App& src, App& dst, unsigned job)
    : Workload(ctx, job),
      src_(src),
      dst_(dst),
      msg_(ctx.config[params_of<WorkloadParams>().message_size]),
      total_(ctx.config[params_of<WorkloadParams>().total_bytes]),
      window_(static_cast<std::uint64_t>(ctx.config[params_of<WorkloadParams>().window])),
      buffers_(static_cast<std::uint64_t>(ctx.config[params_of<WorkloadParams>().buffers])),
      read_(ctx.config[params_of<WorkloadParams>().operation] == "read") {
    if (msg_ == 0)
        throw ConfigError("workload.message-size = 0 (from " + ctx.config.origin(params_of<WorkloadParams>().message_size) +
                          "): stream needs messages of at least 1 B");
    const std::uint64_t count = (total_ + msg_ - 1) / msg_;
    // Buffer slots: at least the window (each outstanding transfer has its
    // own), never more than there are messages.
    slots_ = std::min<std::uint64_t>(std::max(window_, buffers_), std::max<std::uint64_t>(count, 1));
    if (read_) {
        // One read (one record) per message: the reader's areas are registered once.
        check_fits(src_, slots_ * msg_);
        check_fits(dst_, slots_ * msg_ + slots_ * sizeof(CompletionRecord));
        check_locked(dst_, {slots_ * sizeof(CompletionRecord)});
        src_.program = [this](App& a) { source(a); };
        dst_.program = [this](App& a) { reader(a); };
        return;
    }
    check_fits(src_, slots_ * msg_ + slots_ * src_.records_for(msg_) * sizeof(CompletionRecord));
    check_fits(dst_, slots_ * msg_);
    check_locked(src_, {slots_ * src_.records_for(msg_) * sizeof(CompletionRecord)});
    src_.program = [this](App& a) { sender(a); };
    dst_.program = [this](App& a) { receiver(a); };
}

// Read: the source process maps its buffers and registers them once for the
// whole run (rdma.strategy), as a receive area: the engine reads them when
// dst-node's reads come.
void StreamWorkload::source(App& app) {
    src_buf_ = app.alloc(slots_ * msg_, populate_, advice_);
    src_registered_ = app.register_read_source(src_buf_, slots_ * msg_);
    ready_and_wait(app, 2);
}

// Read: dst-node maps and registers its destination buffers once, then
// reads every message of src-node's into them, `window` at a time.
void StreamWorkload::reader(App& app) {
    dst_buf_ = app.alloc(slots_ * msg_, populate_, advice_);
    dst_registered_ = app.register_receive(dst_buf_, slots_ * msg_);
    records_ = app.alloc_locked(slots_ * sizeof(CompletionRecord));
    ready_and_wait(app, 2);
    const std::uint64_t count = (total_ + msg_ - 1) / msg_;
    const std::uint64_t slots = slots_, src_buf = src_buf_, dst_buf = dst_buf_, records = records_;
    struct InFlight {
        std::uint64_t index, len;
        bool posted_ok;
        sc_time posted;
    };
    std::deque<InFlight> inflight;
    auto retire = [&]() {
        const InFlight f = inflight.front();
        inflight.pop_front();
        const std::uint64_t slot = f.index % slots;
        CompletionRecord rec;
        rec.status = kStatusError;   // not posted: a registration failed
        if (f.posted_ok) rec = app.wait_record(records + slot * sizeof(CompletionRecord));
        if (rec.status == kStatusOk && rec.tag != f.index) {
            std::cerr << "vrdmasim: completion record of read " << f.index << " carries tag " << rec.tag << "\n";
            log_.verified(f.len, false);
        }
        const sc_time latency = app.now() - f.posted;
        report(app, app, dst_buf + slot * msg_, f.len, f.index, rec, &latency, static_cast<int>(src_.node()));
    };
    for (std::uint64_t i = 0; i < count; ++i) {
        if (inflight.size() >= std::min(window_, slots)) retire();
        const std::uint64_t slot = i % slots;
        const std::uint64_t len = std::min(msg_, total_ - i * msg_);
        prepare(src_, src_buf + slot * msg_, app, dst_buf + slot * msg_, len, i);
        const sc_time posted = app.now();
        log_.posted(posted);
        const bool ok = src_registered_ && dst_registered_;
        if (ok) app.get(src_.node(), src_buf + slot * msg_, dst_buf + slot * msg_, len, i,
                        records + slot * sizeof(CompletionRecord));
        inflight.push_back({i, len, ok, posted});
    }
    while (!inflight.empty()) retire();
    app.finish_registrations();
    finished_ = true;
    program_ended();
}

// The receiving process maps the destination buffers and registers them
// once for the whole run (rdma.strategy).
void StreamWorkload::receiver(App& app) {
    dst_buf_ = app.alloc(slots_ * msg_, populate_, advice_);
    dst_registered_ = app.register_receive(dst_buf_, slots_ * msg_);
    ready_and_wait(app, 2);
}

void StreamWorkload::sender(App& app) {
    const std::uint64_t per = app.records_for(msg_);   // records per message
    src_buf_ = app.alloc(slots_ * msg_, populate_, advice_);
    records_ = app.alloc_locked(slots_ * per * sizeof(CompletionRecord));
    ready_and_wait(app, 2);
    const std::uint64_t count = (total_ + msg_ - 1) / msg_;
    const std::uint64_t slots = slots_, src_buf = src_buf_, dst_buf = dst_buf_, records = records_;

    struct InFlight {
        App::Message m;
        std::uint64_t index;
        sc_time posted;
    };
    std::deque<InFlight> inflight;

    // Retire the oldest transfer: its own records, whenever they come
    // (completions may come out of order).
    auto retire = [&]() {
        InFlight f = inflight.front();
        inflight.pop_front();
        const std::uint64_t slot = f.index % slots;
        const CompletionRecord rec = app.complete(f.m);
        if (rec.status == kStatusOk && rec.tag != f.index) {
            std::cerr << "vrdmasim: completion record of transfer " << f.index << " carries tag " << rec.tag << "\n";
            log_.verified(f.m.len, false);
        }
        const sc_time latency = app.now() - f.posted;
        report(app, dst_, dst_buf + slot * msg_, f.m.len, f.index, rec, &latency, static_cast<int>(src_.node()));
    };

    for (std::uint64_t i = 0; i < count; ++i) {
        if (inflight.size() >= std::min(window_, slots)) retire();
        const std::uint64_t slot = i % slots;
        const std::uint64_t len = std::min(msg_, total_ - i * msg_);
        prepare(app, src_buf + slot * msg_, dst_, dst_buf + slot * msg_, len, i);
        const sc_time posted = app.now();
        log_.posted(posted);
        App::Message m;
        m.src = src_buf + slot * msg_;
        m.dst = dst_buf + slot * msg_;
        m.len = len;
        m.tag = i;
        m.dst_node = dst_.node();
        m.records = records + slot * per * sizeof(CompletionRecord);
        if (!dst_registered_) {
            // The receiver could not register its buffers: nothing is sent.
            m.failed = true;
        } else {
            app.send(m);   // a failed registration leaves m.failed: complete() reports the error
        }
        inflight.push_back({m, i, posted});
    }
    while (!inflight.empty()) retire();
    app.finish_registrations();
    finished_ = true;
    program_ended();
}

}  // namespace vrdmasim
