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
      buffers_(static_cast<std::uint64_t>(ctx.config[params_of<WorkloadParams>().buffers])) {
    if (msg_ == 0)
        throw ConfigError("workload.message-size = 0 (from " + ctx.config.origin(params_of<WorkloadParams>().message_size) +
                          "): stream needs messages of at least 1 B");
    const std::uint64_t count = (total_ + msg_ - 1) / msg_;
    // Buffer slots: at least the window (each outstanding transfer has its
    // own), never more than there are messages.
    slots_ = std::min<std::uint64_t>(std::max(window_, buffers_), std::max<std::uint64_t>(count, 1));
    check_fits(src_, slots_ * msg_ + slots_ * src_.records_for(msg_) * sizeof(CompletionRecord));
    check_fits(dst_, slots_ * msg_);
    check_locked(src_, {slots_ * src_.records_for(msg_) * sizeof(CompletionRecord)});
    src_.program = [this](App& a) { sender(a); };
    dst_.program = [this](App& a) { receiver(a); };
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
