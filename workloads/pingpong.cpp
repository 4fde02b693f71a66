#include "workloads/pingpong.hpp"
#include "workloads/registry.hpp"

#include <stdexcept>

namespace vrdmasim {

using sc_core::sc_time;

PingpongWorkload::PingpongWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned a, unsigned b,
                                   unsigned job)
    : Workload(ctx, job),
      a_(apps.at(a)),
      b_(apps.at(b)),
      a_node_(a),
      b_node_(b),
      msg_(ctx.config[params_of<WorkloadParams>().message_size]),
      iterations_(static_cast<std::uint64_t>(ctx.config[params_of<WorkloadParams>().iterations])) {
    if (msg_ == 0)
        throw ConfigError("workload.message-size = 0 (from " +
                          ctx.config.origin(params_of<WorkloadParams>().message_size) +
                          "): pingpong needs messages of at least 1 B");
    // Each side sends from its buffer into the other's: the ping lands in
    // b_buf_, the pong in a_buf_. Each program maps its own at its start.
    if (a_) check_fits(*a_, 2 * msg_ + 4096);
    if (b_) check_fits(*b_, 2 * msg_ + 4096);
    if (a_) check_locked(*a_, {a_->records_for(msg_) * sizeof(CompletionRecord), kRing * sizeof(CompletionRecord)});
    if (b_) check_locked(*b_, {b_->records_for(msg_) * sizeof(CompletionRecord), kRing * sizeof(CompletionRecord)});
    read_ = ctx.config[params_of<WorkloadParams>().operation] == "read";
    if (read_) {
        if (a_) a_->program = [this](RdmaProcess& app) { reader(app); };
        if (b_) b_->program = [this](RdmaProcess& app) { target(app); };
        return;
    }
    if (a_) a_->program = [this](RdmaProcess& app) { ping(app); };
    if (b_) b_->program = [this](RdmaProcess& app) { pong(app); };
}

std::string PingpongWorkload::partition_refusal() const {
    std::string why = Workload::partition_refusal();
    if (why.empty() && read_ && fill_source_)
        why = across_boards(a_node_, b_node_, "workload.operation = read",
                            "the harness fills dst-node's buffer when src-node posts each read (Workload::prepare), "
                            "a write into dst-node's memory that faults its cold pages in at a time only src-node's "
                            "rank knows");
    return why;
}

void PingpongWorkload::reader(RdmaProcess& app) {
    a_buf_ = app.alloc(msg_, populate_, advice_);
    a_rec_ = app.alloc_locked(sizeof(CompletionRecord));
    const bool registered = app.register_receive(a_buf_, msg_);
    publish(app, kBuf, a_buf_);
    ready_and_wait(app, 2);
    if (!registered)
        throw std::runtime_error(app.group() + ": could not register the read destination (rdma.strategy)");
    const std::uint64_t b_buf = published(b_node_, kBuf);   // the target's, published before the barrier
    for (std::uint64_t i = 0; i < iterations_; ++i) {
        prepare(app, b_node_, b_buf, app.node(), a_buf_, msg_, i);
        const sc_time start = app.now();
        log_.posted(start);
        app.get(b_node_, b_buf, a_buf_, msg_, i, a_rec_);
        const CompletionRecord rec = app.wait_record(a_rec_);
        const sc_time latency = app.now() - start;
        report(app, app.node(), a_buf_, msg_, i, rec, &latency, static_cast<int>(b_node_));
    }
    app.finish_registrations();
    done_a_ = true;
    program_ended(app);
}

void PingpongWorkload::target(RdmaProcess& app) {
    b_buf_ = app.alloc(msg_, populate_, advice_);
    const bool registered = app.register_read_source(b_buf_, msg_);
    publish(app, kBuf, b_buf_);
    ready_and_wait(app, 2);
    if (!registered) throw std::runtime_error(app.group() + ": could not register the read source (rdma.strategy)");
    app.finish_registrations();
    done_b_ = true;
    program_ended(app);
}

RdmaProcess::Message PingpongWorkload::message(std::uint64_t src, unsigned to, std::uint64_t dst, std::uint64_t key,
                                               std::uint64_t records) const {
    RdmaProcess::Message m;
    m.src = src;
    m.dst = dst;
    m.len = msg_;
    m.tag = key;
    m.dst_node = to;
    m.records = records;
    m.flags = kFlagNotify;   // the other side learns of it from its event counter and ring
    return m;
}

// Keys: ping i uses 2i, pong i uses 2i+1, so each message has its own bytes.
void PingpongWorkload::ping(RdmaProcess& app) {
    const std::uint64_t n = std::max<std::uint64_t>(msg_, 1);
    a_buf_ = app.alloc(2 * n, populate_, advice_);   // [0, n): source of pings; [n, 2n): destination of pongs
    a_rec_ = app.alloc_locked(app.records_for(msg_) * sizeof(CompletionRecord));
    app.setup_rx_ring(kRing);
    const bool registered = app.register_receive(a_buf_ + n, msg_);
    publish(app, kBuf, a_buf_);
    ready_and_wait(app, 2);
    if (!registered) throw std::runtime_error(app.group() + ": could not register the pong buffer (rdma.strategy)");
    const std::uint64_t b_buf = published(b_node_, kBuf);   // pong's, published before the barrier
    for (std::uint64_t i = 0; i < iterations_; ++i) {
        prepare(app, app.node(), a_buf_, b_node_, b_buf + n, msg_, 2 * i);
        const sc_time start = app.now();
        log_.posted(start);
        RdmaProcess::Message m = message(a_buf_, b_node_, b_buf + n, 2 * i, a_rec_);
        if (!app.send(m))
            throw std::runtime_error(app.group() +
                                     ": could not register a ping (rdma.strategy): " + to_string(m.error));
        app.wait_rx(i + 1);   // the pong has landed
        const CompletionRecord rx = app.read_rx_record(i);
        const sc_time one_way = (app.now() - start) / 2;
        report(app, app.node(), a_buf_ + n, msg_, 2 * i + 1, rx, &one_way, static_cast<int>(b_node_));
        app.complete(m);   // our own ping's completion (long done: the pong came after it)
    }
    done_a_ = true;
    program_ended(app);
}

void PingpongWorkload::pong(RdmaProcess& app) {
    const std::uint64_t n = std::max<std::uint64_t>(msg_, 1);
    b_buf_ = app.alloc(2 * n, populate_, advice_);
    b_rec_ = app.alloc_locked(app.records_for(msg_) * sizeof(CompletionRecord));
    app.setup_rx_ring(kRing);
    const bool registered = app.register_receive(b_buf_ + n, msg_);
    publish(app, kBuf, b_buf_);
    ready_and_wait(app, 2);
    if (!registered) throw std::runtime_error(app.group() + ": could not register the ping buffer (rdma.strategy)");
    const std::uint64_t a_buf = published(a_node_, kBuf);   // ping's, published before the barrier
    for (std::uint64_t i = 0; i < iterations_; ++i) {
        app.wait_rx(i + 1);   // the ping has landed
        const CompletionRecord rx = app.read_rx_record(i);
        report(app, app.node(), b_buf_ + n, msg_, 2 * i, rx, nullptr);
        prepare(app, app.node(), b_buf_, a_node_, a_buf + n, msg_, 2 * i + 1);
        log_.posted(app.now());
        RdmaProcess::Message m = message(b_buf_, a_node_, a_buf + n, 2 * i + 1, b_rec_);
        if (!app.send(m))
            throw std::runtime_error(app.group() +
                                     ": could not register a pong (rdma.strategy): " + to_string(m.error));
        app.complete(m);
    }
    done_b_ = true;
    program_ended(app);
}

namespace {

const WorkloadKind::Declare declared([] {
    WorkloadKind k;
    k.name = "pingpong";
    k.order = 20;
    k.help = "pingpong: two nodes bounce a message";
    k.create = [](const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job,
                  const std::vector<FileSystem*>&) -> std::unique_ptr<Workload> {
        const auto [src, dst] = Workload::two_nodes(ctx.config, apps);
        return std::make_unique<PingpongWorkload>(ctx, apps, src, dst, job);
    };
    k.read_refusal = WorkloadKind::built;
    k.two_sided_refusal = [](const Config&) { return Workload::kTwoSidedIsSendrecv; };
    k.reads = {"workload.src-node", "workload.dst-node", "workload.message-size", "workload.iterations"};
    return k;
}());

}   // namespace

}   // namespace vrdmasim
