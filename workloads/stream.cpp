#include "workloads/stream.hpp"

#include <deque>
#include <iostream>

namespace vrdmasim {

using sc_core::sc_time;

StreamWorkload::StreamWorkload(const SimContext& ctx, App& src, App& dst)
    : Workload(ctx),
      src_(src),
      dst_(dst),
      msg_(ctx.config.size("workload.message-size")),
      total_(ctx.config.size("workload.total-bytes")),
      window_(static_cast<std::uint64_t>(ctx.config.integer("workload.window"))),
      buffers_(static_cast<std::uint64_t>(ctx.config.integer("workload.buffers"))) {
    if (msg_ == 0)
        throw ConfigError("workload.message-size = 0 (from " + ctx.config.origin("workload.message-size") +
                          "): stream needs messages of at least 1 B");
    const std::uint64_t count = (total_ + msg_ - 1) / msg_;
    // Buffer slots: at least the window (each outstanding transfer has its
    // own), never more than there are messages.
    slots_ = std::min<std::uint64_t>(std::max(window_, buffers_), std::max<std::uint64_t>(count, 1));
    check_fits(src_, slots_ * msg_ + slots_ * sizeof(CompletionRecord));
    check_fits(dst_, slots_ * msg_);
    src_.program = [this](App& a) { sender(a); };
    dst_.program = [this](App& a) { receiver(a); };
}

// The receiving process only maps the destination buffers.
void StreamWorkload::receiver(App& app) {
    dst_buf_ = app.alloc(slots_ * msg_, populate_);
    ready_and_wait(app, 2);
}

void StreamWorkload::sender(App& app) {
    src_buf_ = app.alloc(slots_ * msg_, populate_);
    records_ = app.alloc(slots_ * sizeof(CompletionRecord), true);
    ready_and_wait(app, 2);
    const std::uint64_t count = (total_ + msg_ - 1) / msg_;
    const std::uint64_t slots = slots_, src_buf = src_buf_, dst_buf = dst_buf_, records = records_;

    struct InFlight { std::uint64_t index, len; sc_time posted; };
    std::deque<InFlight> inflight;

    // Retire the oldest transfer: its own record, whenever it comes
    // (completions may come out of order).
    auto retire = [&]() {
        const InFlight f = inflight.front();
        inflight.pop_front();
        const std::uint64_t slot = f.index % slots;
        const CompletionRecord rec = app.wait_record(records + slot * sizeof(CompletionRecord));
        if (rec.tag != f.index) {
            std::cerr << "vrdmasim: completion record of transfer " << f.index << " carries tag " << rec.tag << "\n";
            log_.verified(f.len, false);
        }
        const sc_time latency = app.now() - f.posted;
        report(app, dst_, dst_buf + slot * msg_, f.len, f.index, rec, &latency);
    };

    for (std::uint64_t i = 0; i < count; ++i) {
        if (inflight.size() >= std::min(window_, slots)) retire();
        const std::uint64_t slot = i % slots;
        const std::uint64_t len = std::min(msg_, total_ - i * msg_);
        prepare(app, src_buf + slot * msg_, dst_, dst_buf + slot * msg_, len, i);
        const sc_time posted = app.now();
        log_.posted(posted);
        while (!app.post_write(src_buf + slot * msg_, dst_.node(), dst_buf + slot * msg_, len, i,
                               records + slot * sizeof(CompletionRecord), false)) {
            // Engine queue full: wait for one of ours to finish, then retry.
            retire();
        }
        inflight.push_back({i, len, posted});
    }
    while (!inflight.empty()) retire();
    finished_ = true;
    program_ended();
}

}  // namespace vrdmasim
