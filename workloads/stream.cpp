#include "workloads/stream.hpp"
#include "workloads/registry.hpp"

#include <algorithm>
#include <deque>
#include <iostream>
#include <sstream>
#include <stdexcept>

namespace vrdmasim {

using sc_core::sc_time;

StreamWorkload::StreamWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned src, unsigned dst,
                               unsigned job)
    : Workload(ctx, job),
      src_(apps.at(src)),
      dst_(apps.at(dst)),
      src_node_(src),
      dst_node_(dst),
      msg_(ctx.config[params_of<WorkloadParams>().message_size]),
      total_(ctx.config[params_of<WorkloadParams>().total_bytes]),
      window_(static_cast<std::uint64_t>(ctx.config[params_of<WorkloadParams>().window])),
      buffers_(static_cast<std::uint64_t>(ctx.config[params_of<WorkloadParams>().buffers])),
      read_(ctx.config[params_of<WorkloadParams>().operation] == "read"),
      notify_(ctx.config[params_of<WorkloadParams>().stream_notify] == "ring") {
    if (notify_ && read_)
        throw ConfigError("workload.stream-notify = ring (from " +
                          ctx.config.origin(params_of<WorkloadParams>().stream_notify) +
                          ") needs workload.operation = write: a read notifies nobody");
    if (msg_ == 0)
        throw ConfigError("workload.message-size = 0 (from " +
                          ctx.config.origin(params_of<WorkloadParams>().message_size) +
                          "): stream needs messages of at least 1 B");
    const std::uint64_t count = (total_ + msg_ - 1) / msg_;
    // Buffer slots: at least the window (each outstanding transfer has its
    // own), never more than there are messages.
    slots_ = std::min<std::uint64_t>(std::max(window_, buffers_), std::max<std::uint64_t>(count, 1));
    if (read_) {
        // One read (one record) per message: the reader's areas are registered once.
        if (src_) check_fits(*src_, slots_ * msg_);
        if (dst_) {
            check_fits(*dst_, slots_ * msg_ + slots_ * sizeof(CompletionRecord));
            check_locked(*dst_, {slots_ * sizeof(CompletionRecord)});
        }
        if (src_) src_->program = [this](RdmaProcess& a) { source(a); };
        if (dst_) dst_->program = [this](RdmaProcess& a) { reader(a); };
        return;
    }
    if (src_) check_fits(*src_, slots_ * msg_ + slots_ * src_->records_for(msg_) * sizeof(CompletionRecord));
    if (notify_) {
        // The receive ring: enough for the records the receiver has not
        // read yet (it reads as they come; an overflow stops the run).
        ring_ = static_cast<std::uint32_t>(
            std::min<std::uint64_t>(std::max<std::uint64_t>(count, 1), std::max<std::uint64_t>(256, 4 * slots_)));
        if (dst_) {
            check_fits(*dst_, slots_ * msg_ + std::uint64_t(ring_) * sizeof(CompletionRecord));
            check_locked(*dst_, {std::uint64_t(ring_) * sizeof(CompletionRecord)});
        }
        posted_at_.resize(count);
        const std::string p = stats_prefix(job);
        notify_seen_ = &ctx.stats.counter(p + "notifications_seen", "",
                                          "stream-notify = ring: notification records dst-node's program read");
        notify_out_of_order_ = &ctx.stats.counter(
            p + "notify_out_of_order", "",
            "stream-notify = ring: records that named a message posted before one an earlier record named (the "
            "program saw them out of post order)");
        notify_latency_ = &shared_histogram(ctx.stats, p + "notify_latency", "us",
                                            "stream-notify = ring: the sender's post of a message to dst-node's "
                                            "program reading its notification record");
    } else {
        if (dst_) check_fits(*dst_, slots_ * msg_);
    }
    if (src_) check_locked(*src_, {slots_ * src_->records_for(msg_) * sizeof(CompletionRecord)});
    if (src_) src_->program = [this](RdmaProcess& a) { sender(a); };
    if (dst_) dst_->program = [this](RdmaProcess& a) { receiver(a); };
}

// Read: the source process maps its buffers and registers them once for the
// whole run (rdma.strategy), as a receive area: the engine reads them when
// dst-node's reads come.
void StreamWorkload::source(RdmaProcess& app) {
    src_buf_ = app.alloc(slots_ * msg_, populate_, advice_);
    src_registered_ = app.register_read_source(src_buf_, slots_ * msg_);
    publish(app, kSrcBuf, src_buf_);
    publish(app, kSrcRegistered, src_registered_);
    ready_and_wait(app, 2);
    program_ended(app);   // (it ends before the reader's first completion: finished() waits for the reader)
}

// Read: dst-node maps and registers its destination buffers once, then
// reads every message of src-node's into them, `window` at a time.
void StreamWorkload::reader(RdmaProcess& app) {
    dst_buf_ = app.alloc(slots_ * msg_, populate_, advice_);
    dst_registered_ = app.register_receive(dst_buf_, slots_ * msg_);
    records_ = app.alloc_locked(slots_ * sizeof(CompletionRecord));
    ready_and_wait(app, 2);
    // The source's buffers, as its program published them before the barrier.
    const std::uint64_t count = (total_ + msg_ - 1) / msg_;
    const std::uint64_t slots = slots_, src_buf = published(src_node_, kSrcBuf), dst_buf = dst_buf_, records = records_;
    const bool src_registered = published(src_node_, kSrcRegistered) != 0;
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
        report(app, app.node(), dst_buf + slot * msg_, f.len, f.index, rec, &latency, static_cast<int>(src_node_));
    };
    for (std::uint64_t i = 0; i < count; ++i) {
        if (inflight.size() >= std::min(window_, slots)) retire();
        const std::uint64_t slot = i % slots;
        const std::uint64_t len = std::min(msg_, total_ - i * msg_);
        prepare(app, src_node_, src_buf + slot * msg_, app.node(), dst_buf + slot * msg_, len, i);
        const sc_time posted = app.now();
        log_.posted(posted);
        const bool ok = src_registered && dst_registered_;
        if (ok)
            app.get(src_node_, src_buf + slot * msg_, dst_buf + slot * msg_, len, i,
                    records + slot * sizeof(CompletionRecord));
        inflight.push_back({i, len, ok, posted});
    }
    while (!inflight.empty()) retire();
    app.finish_registrations();
    finished_ = true;
    program_ended(app);
}

// The receiving process maps the destination buffers and registers them
// once for the whole run (rdma.strategy).
void StreamWorkload::receiver(RdmaProcess& app) {
    dst_buf_ = app.alloc(slots_ * msg_, populate_, advice_);
    dst_registered_ = app.register_receive(dst_buf_, slots_ * msg_);
    if (notify_) app.setup_rx_ring(ring_);
    publish(app, kDstBuf, dst_buf_);
    publish(app, kDstRegistered, dst_registered_);
    ready_and_wait(app, 2);
    if (notify_ && dst_registered_) take_notifications(app);
    notified_ = true;
    program_ended(app);
}

void StreamWorkload::take_notifications(RdmaProcess& app) {
    // One record per message (the last part notifies). A record names its
    // message by destination slot: the oldest message of that slot not seen
    // yet (an older one of the same slot completed before this one was
    // posted, and the engine delivered or held its notification before
    // acknowledging it).
    const std::uint64_t count = posted_at_.size();
    std::vector<std::uint64_t> seen_in_slot(slots_, 0);
    std::uint64_t newest = 0;
    for (std::uint64_t k = 0; k < count; ++k) {
        app.wait_rx(k + 1);
        if (app.rx_events() - k > ring_)
            throw std::runtime_error(app.group() + ": receive ring overflow (" + std::to_string(app.rx_events() - k) +
                                     " notifications unread, " + std::to_string(ring_) + " entries)");
        const CompletionRecord r = app.read_rx_record(k);
        const std::uint64_t off = r.addr - dst_buf_;
        const std::uint64_t slot = off / msg_;
        const std::uint64_t index = slot < slots_ ? slot + seen_in_slot[slot] * slots_ : count;
        if (r.addr < dst_buf_ || off % msg_ != 0 || index >= count || r.node != src_node_) {
            std::ostringstream os;
            os << "DATA MISMATCH: " << app.group() << " notified of a write from node" << r.node << " to 0x" << std::hex
               << r.addr << std::dec << " that the stream never sent";
            std::cerr << "vrdmasim: " << os.str() << "\n";
            log_.verified(0, false);
            continue;
        }
        ++seen_in_slot[slot];
        notify_seen_->inc();
        if (k > 0 && index < newest) notify_out_of_order_->inc();
        newest = std::max(newest, index);
        notify_latency_->add(to_us(app.now() - posted_at_[index]));
    }
}

std::string StreamWorkload::partition_refusal() const {
    std::string why = Workload::partition_refusal();
    if (why.empty() && read_ && fill_source_)
        why = across_boards(src_node_, dst_node_, "workload.operation = read",
                            "the harness fills each message's source on src-node when the reader posts its read "
                            "(Workload::prepare), a write into the source node's memory that faults its cold pages "
                            "in at a time only the reader's rank knows");
    if (why.empty() && notify_)
        why = across_boards(src_node_, dst_node_, "workload.stream-notify = ring",
                            "the receiver's notify_latency is its reading a record minus the sender's post, a "
                            "time the sender's program writes into one table (posted_at_) and the receiver's reads");
    return why;
}

void StreamWorkload::declare_metrics(MetricRegistry& reg) {
    auto notifying = [](const Config& c) { return c[params_of<WorkloadParams>().stream_notify] == "ring"; };
    reg.sum_counters("notify_out_of_order",
                     "stream with workload.stream-notify = ring: notification records the receiving program read "
                     "after one naming a later-posted message (`workload.notify_out_of_order`; 0 with "
                     "dma.notify-window > 0).",
                     {"notify_out_of_order"}, notifying);
    reg.quantile("notify_latency_us_p50", "us",
                 "stream with workload.stream-notify = ring: median time from the sender posting a message to the "
                 "receiving program reading its notification (`workload.notify_latency`).",
                 "notify_latency", 0.5, notifying);
    reg.quantile("notify_latency_us_p99", "us",
                 "stream with workload.stream-notify = ring: 99th percentile of the same.", "notify_latency", 0.99,
                 notifying);
}

void StreamWorkload::sender(RdmaProcess& app) {
    const std::uint64_t per = app.records_for(msg_);   // records per message
    src_buf_ = app.alloc(slots_ * msg_, populate_, advice_);
    records_ = app.alloc_locked(slots_ * per * sizeof(CompletionRecord));
    ready_and_wait(app, 2);
    // The receiver's buffers, as its program published them before the barrier.
    const std::uint64_t count = (total_ + msg_ - 1) / msg_;
    const std::uint64_t slots = slots_, src_buf = src_buf_, dst_buf = published(dst_node_, kDstBuf), records = records_;
    const bool dst_registered = published(dst_node_, kDstRegistered) != 0;

    struct InFlight {
        RdmaProcess::Message m;
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
        // A transfer refused at registration rang no doorbell: no latency.
        report(app, dst_node_, dst_buf + slot * msg_, f.m.len, f.index, rec, f.m.parts > 0 ? &latency : nullptr,
               static_cast<int>(src_node_));
    };

    for (std::uint64_t i = 0; i < count; ++i) {
        if (inflight.size() >= std::min(window_, slots)) retire();
        const std::uint64_t slot = i % slots;
        const std::uint64_t len = std::min(msg_, total_ - i * msg_);
        prepare(app, app.node(), src_buf + slot * msg_, dst_node_, dst_buf + slot * msg_, len, i);
        const sc_time posted = app.now();
        log_.posted(posted);
        RdmaProcess::Message m;
        m.src = src_buf + slot * msg_;
        m.dst = dst_buf + slot * msg_;
        m.len = len;
        m.tag = i;
        if (notify_) {
            m.flags = kFlagNotify;   // the last part notifies dst-node's program
            posted_at_[i] = posted;
        }
        m.dst_node = dst_node_;
        m.records = records + slot * per * sizeof(CompletionRecord);
        if (!dst_registered) {
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
    program_ended(app);
}

namespace {

const WorkloadKind::Declare declared([] {
    WorkloadKind k;
    k.name = "stream";
    k.order = 10;
    k.help = "stream: one node streams RDMA writes to another";
    k.create = [](const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job,
                  const std::vector<FileSystem*>&) -> std::unique_ptr<Workload> {
        const auto [src, dst] = Workload::two_nodes(ctx.config, apps);
        return std::make_unique<StreamWorkload>(ctx, apps, src, dst, job);
    };
    k.declare_metrics = StreamWorkload::declare_metrics;
    k.read_refusal = WorkloadKind::built;
    k.two_sided_refusal = [](const Config&) { return Workload::kTwoSidedIsSendrecv; };
    k.physical_mode = true;
    k.stream_notify = true;
    k.reads = {"workload.src-node",    "workload.dst-node", "workload.message-size",
               "workload.total-bytes", "workload.window",   "workload.buffers"};
    // workload.stream-notify's effect (tests/system/param_effect_test.cpp):
    // each write notifies and the receiving program reads the records.
    k.trial.effects.emplace_back("workload.stream-notify", WorkloadKind::Settings{{"workload.total-bytes", "512KiB"},
                                                                                  {"workload.message-size", "64KiB"},
                                                                                  {"workload.window", "2"},
                                                                                  {"sim.time-limit", "1s"}});
    return k;
}());

}   // namespace

}   // namespace vrdmasim
