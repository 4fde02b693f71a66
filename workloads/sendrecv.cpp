#include "workloads/sendrecv.hpp"
#include "workloads/registry.hpp"

#include <algorithm>
#include <iostream>
#include <stdexcept>

#include "library/messaging/params.hpp"

namespace vrdmasim {

using sc_core::sc_time;

namespace {
constexpr std::uint64_t kAckTag = ~std::uint64_t(0) - 1;   // bandwidth: the window's acknowledgement
bool latency_test(const Config& c) { return c[params_of<WorkloadParams>().sendrecv_test] == "latency"; }
}

SendrecvWorkload::SendrecvWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, std::uint64_t src,
                                   std::uint64_t dst, unsigned job)
    : Workload(ctx, job),
      a_(apps.at(src)),
      b_(apps.at(dst)),
      a_node_(static_cast<unsigned>(src)),
      b_node_(static_cast<unsigned>(dst)),
      eps_(apps.size(), nullptr),
      msg_(ctx.config[params_of<WorkloadParams>().message_size]),
      // Each test reads its own (the kind's reads_only): the latency test
      // neither total-bytes nor window, the bandwidth test not iterations.
      total_(latency_test(ctx.config) ? 0 : std::uint64_t(ctx.config[params_of<WorkloadParams>().total_bytes])),
      window_(latency_test(ctx.config) ? 0
                                       : static_cast<std::uint64_t>(ctx.config[params_of<WorkloadParams>().window])),
      iterations_(latency_test(ctx.config)
                      ? static_cast<std::uint64_t>(ctx.config[params_of<WorkloadParams>().iterations])
                      : 0),
      latency_(latency_test(ctx.config)) {
    const std::uint64_t n = std::max<std::uint64_t>(msg_, 1);
    // latency: a send and a receive buffer each; bandwidth: `window` of them.
    const std::uint64_t bufs = latency_ ? 2 * n : window_ * n;
    // (Either may be nullptr: a node of another rank in a partitioned run.)
    for (RdmaProcess* app : {a_, b_}) {
        if (!app) continue;
        check_fits(*app, bufs + msg::Endpoint::mapped_bytes(ctx.config, 1));
        check_locked(*app, msg::Endpoint::locked_regions(ctx.config, 1));
    }
    if (a_) {
        owned_.push_back(std::make_unique<msg::Endpoint>(ctx, *a_, std::vector<unsigned>{b_node_}));
        eps_[a_node_] = owned_.back().get();
    }
    if (b_) {
        owned_.push_back(std::make_unique<msg::Endpoint>(ctx, *b_, std::vector<unsigned>{a_node_}));
        eps_[b_node_] = owned_.back().get();
    }
    if (a_)
        a_->program = [this](RdmaProcess& app) {
            msg::Endpoint& ep = *eps_[app.node()];
            start(app, ep);
            if (body_a_) body_a_(app, ep, b_node_);
            else if (latency_) latency_a(app, ep);
            else bandwidth_a(app, ep);
            end(app, ep);
        };
    if (b_)
        b_->program = [this](RdmaProcess& app) {
            msg::Endpoint& ep = *eps_[app.node()];
            start(app, ep);
            if (body_b_) body_b_(app, ep, a_node_);
            else if (latency_) latency_b(app, ep);
            else bandwidth_b(app, ep);
            end(app, ep);
        };
}

SendrecvWorkload::~SendrecvWorkload() = default;

void SendrecvWorkload::replace_bodies(Body a, Body b) {
    body_a_ = std::move(a);
    body_b_ = std::move(b);
}

void SendrecvWorkload::start(RdmaProcess& app, msg::Endpoint& ep) {
    const std::uint64_t n = std::max<std::uint64_t>(msg_, 1);
    const std::uint64_t buf = app.alloc(latency_ ? 2 * n : window_ * n, populate_, advice_);
    (app.node() == a_node_ ? a_buf_ : b_buf_) = buf;
    ep.setup();
    publish_endpoint(app, ep);   // its slots and credit word for the peer
    ready_and_wait(app, 2);
    connect_endpoint(ep);   // the peer's, published before the barrier
}

void SendrecvWorkload::end(RdmaProcess& app, msg::Endpoint& ep) {
    ep.finalize();
    app.finish_registrations();
    ++done_;
    program_ended(app);
}

msg::Status SendrecvWorkload::checked(const msg::Status& s, RdmaProcess& app, std::uint64_t key, std::uint64_t len,
                                      unsigned from) {
    if (s.ok && (s.source != from || s.len != len)) {
        std::cerr << "vrdmasim: DATA MISMATCH: " << app.group() << " received " << s.len << " B from node" << s.source
                  << " for message " << key << " (" << len << " B from node" << from << " expected)\n";
        log_.verified(len, false);
    }
    return s;
}

namespace {
CompletionRecord as_record(const msg::Status& s) {
    CompletionRecord r;
    r.status = s.ok ? kStatusOk : kStatusError;
    r.bytes = s.len;
    r.node = s.source;
    r.tag = s.tag;
    return r;
}
}   // namespace

void SendrecvWorkload::latency_a(RdmaProcess& app, msg::Endpoint& ep) {
    const std::uint64_t n = std::max<std::uint64_t>(msg_, 1);
    const std::uint64_t sbuf = a_buf_, rbuf = a_buf_ + n;
    for (std::uint64_t i = 0; i < iterations_; ++i) {
        fill_source(app, sbuf, msg_, 2 * i);
        guard_destination(app, rbuf, msg_, 2 * i + 1);
        const sc_time t0 = app.now();
        log_.posted(t0);
        ep.send(b_node_, i, sbuf, msg_);
        const msg::Status s = checked(ep.recv(b_node_, i, rbuf, msg_), app, 2 * i + 1, msg_, b_node_);
        const sc_time half = (app.now() - t0) / 2;
        report(app, app.node(), rbuf, msg_, 2 * i + 1, as_record(s), &half, static_cast<int>(b_node_));
    }
}

void SendrecvWorkload::latency_b(RdmaProcess& app, msg::Endpoint& ep) {
    const std::uint64_t n = std::max<std::uint64_t>(msg_, 1);
    const std::uint64_t sbuf = b_buf_, rbuf = b_buf_ + n;
    for (std::uint64_t i = 0; i < iterations_; ++i) {
        guard_destination(app, rbuf, msg_, 2 * i);
        // Any source, any tag: the ping is the only message that can come.
        const msg::Status s = checked(ep.recv(msg::kAnySource, msg::kAnyTag, rbuf, msg_), app, 2 * i, msg_, a_node_);
        if (s.tag != i) {
            std::cerr << "vrdmasim: DATA MISMATCH: ping " << i << " arrived with tag " << s.tag << "\n";
            log_.verified(msg_, false);
        }
        report(app, app.node(), rbuf, msg_, 2 * i, as_record(s), nullptr);
        fill_source(app, sbuf, msg_, 2 * i + 1);
        log_.posted(app.now());
        ep.send(a_node_, i, sbuf, msg_);
    }
}

void SendrecvWorkload::bandwidth_a(RdmaProcess& app, msg::Endpoint& ep) {
    const std::uint64_t n = std::max<std::uint64_t>(msg_, 1);
    const std::uint64_t count = std::max<std::uint64_t>(1, (total_ + n - 1) / n);
    std::vector<msg::Endpoint::Request> reqs;
    for (std::uint64_t k = 0; k < count;) {
        reqs.clear();
        for (std::uint64_t w = 0; w < window_ && k < count; ++w, ++k) {
            const std::uint64_t buf = a_buf_ + w * n;
            const std::uint64_t len = std::min(msg_, total_ - std::min(total_, k * msg_));
            fill_source(app, buf, len, k);
            log_.posted(app.now());
            reqs.push_back(ep.isend(b_node_, k, buf, len));
        }
        for (auto r : reqs) ep.wait(r);
        ep.recv(b_node_, kAckTag, 0, 0);   // the window has been received
    }
}

void SendrecvWorkload::bandwidth_b(RdmaProcess& app, msg::Endpoint& ep) {
    const std::uint64_t n = std::max<std::uint64_t>(msg_, 1);
    const std::uint64_t count = std::max<std::uint64_t>(1, (total_ + n - 1) / n);
    std::vector<msg::Endpoint::Request> reqs;
    for (std::uint64_t k = 0; k < count;) {
        const std::uint64_t first = k;
        reqs.clear();
        for (std::uint64_t w = 0; w < window_ && k < count; ++w, ++k) {
            const std::uint64_t len = std::min(msg_, total_ - std::min(total_, k * msg_));
            guard_destination(app, b_buf_ + w * n, len, k);
            reqs.push_back(ep.irecv(a_node_, k, b_buf_ + w * n, n));
        }
        for (std::size_t w = 0; w < reqs.size(); ++w) {
            const std::uint64_t key = first + w;
            const std::uint64_t len = std::min(msg_, total_ - std::min(total_, key * msg_));
            const msg::Status s = checked(ep.wait(reqs[w]), app, key, len, a_node_);
            report(app, app.node(), b_buf_ + w * n, len, key, as_record(s), nullptr);
        }
        ep.send(a_node_, kAckTag, 0, 0);
    }
}

namespace {

const WorkloadKind::Declare declared([] {
    WorkloadKind k;
    k.name = "sendrecv";
    k.order = 30;
    k.help = "sendrecv: two-sided send/receive between src-node and dst-node (workload.sendrecv-test)";
    k.create = [](const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job,
                  const std::vector<FileSystem*>&) -> std::unique_ptr<Workload> {
        const auto [src, dst] = Workload::two_nodes(ctx.config, apps);
        return std::make_unique<SendrecvWorkload>(ctx, apps, src, dst, job);
    };
    k.read_refusal = [](const Config&) {
        return "has nothing to choose in workload.kind = sendrecv: " + std::string(Workload::kProtocolDecides);
    };
    k.two_sided_refusal = [](const Config&) { return std::string("sendrecv is two-sided already"); };
    k.reads = {"workload.src-node", "workload.dst-node",   "workload.message-size", "workload.total-bytes",
               "workload.window",   "workload.iterations", "workload.sendrecv-test"};
    // Each test's own (SendrecvWorkload's constructor).
    k.reads_only = {{"workload.total-bytes", "workload.sendrecv-test", {"bandwidth"}},
                    {"workload.window", "workload.sendrecv-test", {"bandwidth"}},
                    {"workload.iterations", "workload.sendrecv-test", {"latency"}}};
    k.two_sided_library = [](const Config&) { return true; };
    k.one_channel = true;
    // workload.sendrecv-test's effect (tests/system/param_effect_test.cpp):
    // a latency test or a bandwidth test.
    // The bandwidth test with a total of its own (reads_only; the latency
    // test, the default, with its default iterations).
    k.trial.effects.emplace_back(
        "workload.sendrecv-test", WorkloadKind::Settings{{"workload.message-size", "4KiB"}}, "",
        WorkloadKind::Settings{},
        WorkloadKind::Trial::Effect::ValueNeeds{{"bandwidth", {{"workload.total-bytes", "64KiB"}}}});
    return k;
}());

}   // namespace

}   // namespace vrdmasim
