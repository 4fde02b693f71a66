#include "workloads/fileserve.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "models/os/filesystem.hpp"
#include "models/os/vm_params.hpp"
#include "library/messaging/endpoint.hpp"
#include "library/messaging/matching.hpp"
#include "library/messaging/params.hpp"

namespace vrdmasim {

using sc_core::sc_time;

namespace {
constexpr std::uint64_t kPage = 4096;
constexpr std::uint64_t kRequestTag = 1;   // client -> server; replies are tagged kReplyTag + slot
constexpr std::uint64_t kReplyTag = 16;

FileserveWorkload::Method method_of(const std::string& s) {
    if (s == "read-copy") return FileserveWorkload::Method::ReadCopy;
    if (s == "pipeline") return FileserveWorkload::Method::Pipeline;
    if (s == "sendfile") return FileserveWorkload::Method::Sendfile;
    if (s == "mmap-fault") return FileserveWorkload::Method::MmapFault;
    if (s == "kernel-copy") return FileserveWorkload::Method::KernelCopy;
    throw std::logic_error("fileserve.method: unknown method '" + s + "'");
}
}  // namespace

FileserveParams::FileserveParams()
    : set("fileserve", "the file server workload (workload.kind = fileserve; workloads/README.md \"File serving\")"),
      clients(set.integer("clients", "1",
                          "client processes, one per node on the nodes after the server's (an experiment's choice); "
                          "more than the other nodes of the system is refused")
                  .range("1", "65535")),
      request_size(set.size("request-size", "0B",
                            "bytes per request: a range of that size at an offset drawn among the file's "
                            "request-size-aligned ranges; 0 (or the file size or more): the whole file (an "
                            "experiment's choice)")
                       .range("0B", "64GiB")),
      popularity(set.choice("popularity", "uniform", {"uniform", "zipf"},
                            "which file a request names: uniform over fs.files, or zipf (file i drawn with "
                            "probability proportional to 1 / (i + 1)^zipf-exponent)")),
      zipf_exponent(set.real("zipf-exponent", "0.8",
                             "exponent of the Zipf popularity: web and proxy requests follow Zipf-like laws with "
                             "exponents 0.64-0.83 (Breslau et al., \"Web caching and Zipf-like distributions\", "
                             "INFOCOM 1999)")
                        .range("0", "10")),
      seed(set.integer("seed", "1", "seed of the clients' request draws (files, offsets); each client its own stream")
               .range("0", "4294967295")),
      requests(set.integer("requests", "8", "requests each client sends (an experiment's choice)")
                   .range("1", "1000000")),
      outstanding(set.integer("outstanding", "1",
                              "requests each client has outstanding at once (each with its own receive slot)")
                      .range("1", "64")),
      cache(set.choice("cache", "warm", {"warm", "cold"},
                       "page-cache state when the measured phase starts: warm (the server read every file once "
                       "before, cost not measured) or cold (nothing cached: the SSD serves the first touches)")),
      method(set.choice("method", "read-copy", {"read-copy", "pipeline", "sendfile", "mmap-fault", "kernel-copy"},
                        "how the server moves the data (workloads/README.md \"File serving\"): read-copy (read() "
                        "into a buffer registered once, RDMA write it), pipeline (read() and register chunk k+1 "
                        "while chunk k is on the wire, fileserve.buffers bounce buffers), sendfile (the page-cache "
                        "pages pinned and written with no copy; fileserve.sendfile-cache keeps them pinned), "
                        "mmap-fault (the file mapping posted unpopulated to the fault-tolerant engine: uncached "
                        "pages fault in the SMMU and come from the SSD), kernel-copy (a socket-like kernel path: "
                        "copy into a pinned socket buffer and a protocol cost per packet at both ends, a second "
                        "copy at the client)")),
      chunk(set.size("chunk", "64KiB",
                     "pipeline: bytes per chunk read, registered and written (*estimate*: as rdma.pipeline-chunk)")
                .range("4KiB", "64MiB")),
      buffers(set.integer("buffers", "2", "pipeline: bounce buffers in rotation (2: double buffering)")
                  .range("2", "64")),
      sendfile_cache(set.boolean("sendfile-cache", "false",
                                 "sendfile: keep the page-cache pages pinned and mapped across requests (a pin-down "
                                 "cache: a page is pinned once for the run); false: pinned per request and "
                                 "unpinned at its completion")),
      kernel_packet(set.size("kernel-packet", "1500B",
                             "kernel-copy: payload bytes per packet: one Ethernet MTU (IEEE 802.3, 1500 B), as a "
                             "socket path would cut the stream")
                        .range("64B", "1MiB")),
      kernel_tx_cost(set.time("kernel-tx-cost", "2us",
                              "kernel-copy: protocol-stack CPU per packet sent, besides the copy (skb allocation, "
                              "TCP/IP headers, queueing, the doorbell): *estimate* for a 1.5 GHz A53, a few "
                              "thousand cycles per packet")
                         .range("0ps", "1ms")),
      kernel_rx_cost(set.time("kernel-rx-cost", "2us",
                              "kernel-copy: protocol-stack CPU per packet received, besides the copy to the user "
                              "buffer (interrupt/NAPI, header checks, socket queueing): *estimate* for a 1.5 GHz A53")
                         .range("0ps", "1ms")),
      socket_buffer(set.size("socket-buffer", "16KiB",
                             "kernel-copy: the server's socket send buffer (pinned kernel memory the engine sends "
                             "from; its packets are the ones in flight): Linux's default net.ipv4.tcp_wmem of "
                             "16 KiB (Documentation/networking/ip-sysctl.rst)")
                        .range("1KiB", "64MiB")) {}

void FileserveWorkload::declare_params(ParamRegistry& reg) { reg.add(params_of<FileserveParams>().set); }

void FileserveWorkload::declare_metrics(MetricRegistry& reg) {
    const auto run = [](const Config& c) { return c[params_of<WorkloadParams>().kind] == "fileserve"; };
    reg.sum_counters("fileserve_requests", "fileserve: requests answered (`workload.fileserve.answered`); 0 in other runs.",
                     {"fileserve.answered"}, run);
    reg.sum_counters("fileserve_bytes", "fileserve: bytes the server sent and the clients verified "
                     "(`workload.fileserve.served_bytes`); 0 in other runs.",
                     {"fileserve.served_bytes"}, run);
    reg.sum_scalars("fileserve_cpu_ns_per_byte", "ns/B",
                    "fileserve: CPU time of the server node's cores in the measured phase, spinning for "
                    "completions (`poll`) excluded, per byte served (`workload.fileserve.cpu_ns_per_byte`); 0 in "
                    "other runs.",
                    "fileserve.cpu_ns_per_byte", 6, run);
    reg.sum_counters("fileserve_copy_bytes", "fileserve: bytes copied by CPUs (server read() and kernel copies, the "
                     "client kernel's copies; `workload.fileserve.copy_bytes`); 0 in other runs.",
                     {"fileserve.copy_bytes"}, run);
    reg.sum_scalars("fileserve_registration_us", "us",
                    "fileserve: server time spent registering (pins, file-page pins and mappings, per-chunk "
                    "registrations; `workload.fileserve.registration_time`); 0 in other runs.",
                    "fileserve.registration_time", 6, run);
    reg.sum_counters("fileserve_pins", "fileserve: pages the server pinned (page-cache pins of sendfile, the "
                     "Registrar's pins of its buffers; `workload.fileserve.pins`); 0 in other runs.",
                     {"fileserve.pins"}, run);
    reg.sum_counters("fileserve_ssd_reads", "fileserve: SSD file reads in the measured phase "
                     "(`workload.fileserve.ssd_reads`, from `ssd.file_reads`); 0 in other runs.",
                     {"fileserve.ssd_reads"}, run);
    reg.sum_counters("fileserve_ssd_bytes", "fileserve: bytes read from the SSD for files in the measured phase "
                     "(`workload.fileserve.ssd_bytes`); 0 in other runs.",
                     {"fileserve.ssd_bytes"}, run);
    reg.sum_counters("fileserve_major_faults", "fileserve: major file faults in the measured phase (the SMMU "
                     "fault path of mmap-fault; `workload.fileserve.major_faults`); 0 in other runs.",
                     {"fileserve.major_faults"}, run);
    reg.sum_counters("fileserve_packets", "fileserve, kernel-copy: packets sent (`workload.fileserve.packets`); 0 "
                     "in other runs.",
                     {"fileserve.packets"}, run);
}

FileserveWorkload::FileserveWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps,
                                     const std::vector<FileSystem*>& files)
    : Workload(ctx),
      method_(method_of(ctx.config[params_of<FileserveParams>().method])),
      requests_c_(ctx.stats.counter("workload.fileserve.requests", "", "requests the clients sent")),
      answered_(ctx.stats.counter("workload.fileserve.answered", "", "requests answered (replies the clients took)")),
      served_bytes_(ctx.stats.counter("workload.fileserve.served_bytes", "B", "bytes the server wrote and reported sent")),
      copy_bytes_(ctx.stats.counter("workload.fileserve.copy_bytes", "B", "bytes copied by CPUs for the data")),
      pins_(ctx.stats.counter("workload.fileserve.pins", "", "pages the server pinned")),
      ssd_reads_(ctx.stats.counter("workload.fileserve.ssd_reads", "", "SSD file reads in the measured phase")),
      ssd_bytes_(ctx.stats.counter("workload.fileserve.ssd_bytes", "B", "SSD file bytes in the measured phase")),
      major_(ctx.stats.counter("workload.fileserve.major_faults", "", "major file faults in the measured phase")),
      missed_bytes_(ctx.stats.counter("workload.fileserve.missed_bytes", "B",
                                      "page-cache misses in the measured phase x 4 KiB")),
      packets_(ctx.stats.counter("workload.fileserve.packets", "", "kernel-copy: packets sent")),
      duplicates_(ctx.stats.counter("workload.fileserve.duplicate_replies", "",
                                    "replies naming a request not outstanding (a self-check, always 0)")),
      reg_time_(ctx.stats.scalar("workload.fileserve.registration_time", "us", "server time spent registering", Scalar::Kind::Sum)),
      server_cpu_(ctx.stats.scalar("workload.fileserve.server_cpu", "us",
                                   "server node CPU in the measured phase, poll spinning excluded", Scalar::Kind::Level)),
      cpu_per_byte_(ctx.stats.scalar("workload.fileserve.cpu_ns_per_byte", "ns/B", "server_cpu per byte served", Scalar::Kind::Level)) {
    const Config& c = ctx.config;
    const auto& P = params_of<FileserveParams>();
    if (c[params_of<NodeParams>().processes] > 1)
        throw c.refuse(params_of<NodeParams>().processes,
                       "more than one process per node is not built yet for the fileserve workload");
    if (c[params_of<RdmaParams>().channels] > 1)
        throw c.refuse(params_of<RdmaParams>().channels,
                       "the fileserve workload's requests go through the two-sided library, which counts one channel");
    if (!c.boolean("smmu.enabled"))
        throw c.refuse("smmu.enabled",
                       "the fileserve workload needs processes in the Vm with the page cache and the engine "
                       "reaching them through the SMMU (smmu.enabled = true)");
    if (c.string("ni.translation") != "smmu")
        throw c.refuse("ni.translation", "the fileserve workload is built for the SMMU's translation only");
    if (c[params_of<RdmaParams>().strategy] == "netvm")
        throw c.refuse(params_of<RdmaParams>().strategy,
                       "the fileserve workload is not built yet for netvm (its server's methods register through "
                       "the SMMU's paths: sendfile and kernel-copy send from the kernel's page cache)");
    if (c[params_of<MsgParams>().eager_threshold] < sizeof(Wire))
        throw c.refuse(params_of<MsgParams>().eager_threshold,
                       "fileserve's requests are " + std::to_string(sizeof(Wire)) + " B eager messages");
    // The server: the first node with a file system (Node::file_system()
    // refused the others when System built `files`).
    for (std::size_t n = 0; n < files.size() && !server_; ++n)
        if (files[n]) server_ = apps.at(n), fs_ = files[n];
    if (!server_)
        throw c.refuse(params_of<FsParams>().files, "the fileserve workload needs files (fs.files > 0) on a node");
    server_group_ = server_->group();
    const std::uint64_t want = static_cast<std::uint64_t>(c[P.clients]);
    for (RdmaProcess* a : apps)
        if (a != server_ && clients_.size() < want) clients_.push_back(a), client_nodes_.push_back(a->node());
    if (clients_.size() < want)
        throw c.refuse(P.clients, "the system has " + std::to_string(apps.size() - 1) + " node(s) besides the server's");
    files_ = fs_->files();
    file_size_ = fs_->size(0);
    const std::uint64_t rq = c[P.request_size];
    req_ = rq == 0 || rq >= file_size_ ? file_size_ : rq;
    if (req_ % kPage != 0 && req_ != file_size_)
        throw c.refuse(P.request_size, "a range must be a whole number of 4 KiB pages");
    span_ = (req_ + kPage - 1) / kPage * kPage;
    requests_ = static_cast<std::uint64_t>(c[P.requests]);
    outstanding_ = static_cast<std::uint64_t>(c[P.outstanding]);
    zipf_ = c[P.popularity] == "zipf";
    zipf_s_ = c[P.zipf_exponent];
    warm_ = c[P.cache] == "warm";
    sendfile_cache_ = c[P.sendfile_cache];
    chunk_ = c[P.chunk];
    nbuf_ = static_cast<std::uint64_t>(c[P.buffers]);
    packet_ = c[P.kernel_packet];
    tx_cost_ = c[P.kernel_tx_cost];
    rx_cost_ = c[P.kernel_rx_cost];
    window_ = std::max<std::uint64_t>(1, c[P.socket_buffer] / packet_);
    seed_fs_ = static_cast<std::uint64_t>(c[P.seed]);
    if (sendfile_cache_ && method_ != Method::Sendfile)
        throw c.refuse(P.sendfile_cache, "is for fileserve.method = sendfile only");
    if (method_ == Method::MmapFault) {
        if (c[params_of<RdmaParams>().strategy] != "fault-tolerant")
            throw c.refuse(params_of<RdmaParams>().strategy,
                           "fileserve.method = mmap-fault posts the unpopulated file mapping to the engine and needs "
                           "its faults resolved: rdma.strategy = fault-tolerant");
        if (c.string("smmu-driver.fault-mode") == "terminate" && !c.boolean("dma.fault-tolerant"))
            throw c.refuse("dma.fault-tolerant",
                           "fileserve.method = mmap-fault in terminate mode needs the fault-tolerant engine "
                           "(dma.fault-tolerant = true): the original engine fails the transfer at the first fault");
    }
    if (method_ == Method::KernelCopy && outstanding_ + 1 > static_cast<std::uint64_t>(c.integer("dma.event-counters")))
        throw c.refuse("dma.event-counters",
                       "fileserve.method = kernel-copy counts each receive slot's packets on its own event counter "
                       "(1 + fileserve.outstanding needed)");
    if (zipf_) {
        double sum = 0;
        for (unsigned f = 0; f < files_; ++f) zipf_cdf_.push_back(sum += 1.0 / std::pow(f + 1.0, zipf_s_));
        for (double& v : zipf_cdf_) v /= sum;
    }
    // Fits: the server's buffers, the clients' receive areas.
    const std::uint64_t ep_server = msg::Endpoint::mapped_bytes(c, clients_.size());
    const std::uint64_t slots = clients_.size() * outstanding_;
    std::uint64_t server_bytes = ep_server + slots * kPage * 2;
    if (method_ == Method::ReadCopy) server_bytes += span_;
    if (method_ == Method::Pipeline) server_bytes += nbuf_ * chunk_;
    if (method_ == Method::KernelCopy) server_bytes += window_ * packet_;
    check_fits(*server_, server_bytes);
    check_locked(*server_, [&] {
        auto r = msg::Endpoint::locked_regions(c, clients_.size());
        r.push_back(std::max(nbuf_, window_) * sizeof(CompletionRecord));
        if (method_ == Method::KernelCopy) r.push_back(window_ * packet_);
        return r;
    }());
    for (RdmaProcess* a : clients_) {
        check_fits(*a, msg::Endpoint::mapped_bytes(c, 1) + outstanding_ * span_ * (method_ == Method::KernelCopy ? 2 : 1) +
                           outstanding_ * kPage * 2);
        auto r = msg::Endpoint::locked_regions(c, 1);
        if (method_ == Method::KernelCopy) r.push_back(outstanding_ * span_);
        check_locked(*a, r);
    }
    answers_.assign(clients_.size() * requests_, 0);
    rx_area_.assign(clients_.size(), 0);
    kbuf_.assign(clients_.size(), 0);
    eps_.assign(apps.size(), nullptr);
    owned_.push_back(std::make_unique<msg::Endpoint>(ctx, *server_, client_nodes_));
    eps_[server_->node()] = owned_.back().get();
    for (RdmaProcess* a : clients_) {
        owned_.push_back(std::make_unique<msg::Endpoint>(ctx, *a, std::vector<unsigned>{server_->node()}));
        eps_[a->node()] = owned_.back().get();
    }
    server_->program = [this](RdmaProcess& a) { server(a); };
    for (std::size_t i = 0; i < clients_.size(); ++i)
        clients_[i]->program = [this, i](RdmaProcess& a) { client(a, static_cast<unsigned>(i)); };
}

FileserveWorkload::~FileserveWorkload() = default;

FileserveWorkload::Wire FileserveWorkload::draw(unsigned client, std::uint64_t k, std::mt19937_64& rng) const {
    Wire w;
    w.id = static_cast<std::uint64_t>(client) * requests_ + k;
    if (zipf_) {
        const double u = static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);
        w.file = static_cast<std::uint32_t>(std::lower_bound(zipf_cdf_.begin(), zipf_cdf_.end(), u) - zipf_cdf_.begin());
        w.file = std::min<std::uint32_t>(w.file, files_ - 1);
    } else {
        w.file = static_cast<std::uint32_t>(rng() % files_);
    }
    const std::uint64_t ranges = file_size_ / req_;
    w.offset = ranges > 1 ? (rng() % ranges) * req_ : 0;
    w.len = std::min(req_, file_size_ - w.offset);
    return w;
}

std::uint64_t FileserveWorkload::stat_now(const std::string& name) const {
    const Counter* k = ctx_.stats.find_counter(name);
    if (!k) throw std::logic_error("fileserve: statistic " + name + " is missing");
    return k->value();
}

void FileserveWorkload::slice(RdmaProcess& app, const char* name, sc_time start, const std::string& args) {
    if (ctx_.tracer.enabled())
        ctx_.tracer.span(ctx_.tracer.track(app.group(), "app"), name, start, app.now(),
                         {{"request", Tracer::json_string(args)}});
}

void FileserveWorkload::vm_done(RdmaProcess& app, const VmResult& r, const char* what) {
    if (!r.ok())
        throw std::runtime_error(app.group() + ": fileserve: " + what + " failed: " + to_string(r.error));
    app.advance_to(r.done);
}

// The warm pass: every file read once through the page cache into a
// scratch buffer, before the measured phase (its cost is not measured).
void FileserveWorkload::warm(RdmaProcess& app) {
    const std::uint64_t piece = 256 * 1024;
    const std::uint64_t buf = app.alloc(piece, true);
    Vm& vm = *app.vm();
    for (unsigned f = 0; f < files_; ++f)
        for (std::uint64_t o = 0; o < file_size_; o += piece)
            vm_done(app, vm.read(app.pid(), fds_[f], o, std::min(piece, file_size_ - o), buf, app.now()), "warm read()");
}

void FileserveWorkload::server(RdmaProcess& app) {
    Vm& vm = *app.vm();
    msg::Endpoint& ep = *eps_[app.node()];
    const std::string g = app.group();
    const auto pins_now = [&] { return stat_now(g + ".vm.pages_pinned") + stat_now(g + ".pagecache.pins"); };
    for (unsigned f = 0; f < files_; ++f) {
        const VmResult r = vm.open(app.pid(), f, app.now());
        vm_done(app, r, "open()");
        fds_.push_back(static_cast<int>(r.value));
    }
    if (warm_) {
        warm(app);
        // The end-to-end span starts after it: a warm cache is the state
        // the measured phase starts from, not its cost.
        log_.measured_from(app.now());
    }
    const std::uint64_t pins0 = pins_now();   // the server's data pins from its setup on (the warm pass pins nothing)
    const std::uint64_t slots = clients_.size() * outstanding_;
    const std::uint64_t inbox = app.alloc(slots * sizeof(Wire), true);
    const std::uint64_t outbox = app.alloc(slots * sizeof(Reply), true);
    records_ = app.alloc_locked(std::max(nbuf_, window_) * sizeof(CompletionRecord));
    sc_time r0 = app.now();   // registration: the bounce buffer's, or the file mappings the engine reads
    if (method_ == Method::ReadCopy) {
        bounce_ = app.alloc(span_, true);
        r0 = app.now();
        if (!app.register_buffer(bounce_, span_, false))
            throw std::runtime_error(app.group() + ": fileserve: the bounce buffer cannot be registered");
    } else if (method_ == Method::Pipeline) {
        bounce_ = app.alloc(nbuf_ * chunk_, true);   // registered chunk by chunk
        r0 = app.now();
    } else if (method_ == Method::KernelCopy) {
        sockbuf_ = app.alloc_locked(window_ * packet_);   // kernel memory, locked: no registration
        r0 = app.now();
    } else {
        for (unsigned f = 0; f < files_; ++f) {
            const VmResult r = vm.mmap_file(app.pid(), fds_[f], 0, file_size_, Prot::Read, false, app.now());
            vm_done(app, r, "mmap() of a file");
            maps_.push_back(r.value);
        }
    }
    reg_time_.add(to_us(app.now() - r0));
    const std::uint64_t pins_ep = pins_now();
    ep.setup();
    const std::uint64_t ep_pins = pins_now() - pins_ep;   // the library's own slots: not the data's
    ready_and_wait(app, static_cast<unsigned>(clients_.size()) + 1);
    ep.connect(eps_);
    // The measured phase starts: snapshot what it is measured against.
    const auto cpu_busy = [&] {
        const Scalar* s = ctx_.stats.find_scalar(g + ".cpu.cores_busy_time");
        const Scalar* p = ctx_.stats.find_scalar(g + ".cpu.poll.busy_time");
        return std::make_pair(s ? s->value() : 0.0, p ? p->value() : 0.0);
    };
    std::tie(cpu0_, poll0_) = cpu_busy();
    misses0_ = stat_now(g + ".pagecache.misses");
    major0_ = stat_now(g + ".pagecache.faults_major");
    ssd_reads0_ = stat_now(g + ".ssd.file_reads");
    ssd_bytes0_ = stat_now(g + ".ssd.file_bytes");

    const std::uint64_t total = clients_.size() * requests_;
    // The receives posted, each with its own inbox slot (`at`).
    std::vector<msg::Endpoint::Request> recvs;
    std::vector<std::uint64_t> at;
    std::uint64_t posted = 0;
    for (std::uint64_t s = 0; s < slots && posted < total; ++s, ++posted) {
        recvs.push_back(ep.irecv(msg::kAnySource, kRequestTag, inbox + s * sizeof(Wire), sizeof(Wire)));
        at.push_back(s);
    }
    for (std::uint64_t handled = 0; handled < total; ++handled) {
        const std::size_t k = ep.wait_any(recvs);
        const msg::Status st = ep.wait(recvs[k]);
        const std::uint64_t s = at[k];
        Wire w;
        if (!st.ok || st.len != sizeof(Wire) || !app.debug_read(inbox + s * sizeof(Wire), reinterpret_cast<unsigned char*>(&w), sizeof(Wire)))
            throw std::runtime_error(app.group() + ": fileserve: a request message could not be received");
        const auto ci = std::find(client_nodes_.begin(), client_nodes_.end(), st.source) - client_nodes_.begin();
        if (static_cast<std::size_t>(ci) >= clients_.size() || w.file >= files_ || w.slot >= outstanding_ ||
            w.offset + w.len > file_size_)
            throw std::logic_error(app.group() + ": fileserve: a malformed request from node" + std::to_string(st.source));
        const std::uint64_t dst = rx_area_[ci] + w.slot * span_;
        const sc_time t0 = app.now();
        Served sv;
        switch (method_) {
        case Method::ReadCopy: sv = read_copy(app, w, st.source, dst); break;
        case Method::Pipeline: sv = pipeline(app, w, st.source, dst); break;
        case Method::Sendfile: sv = sendfile(app, w, st.source, dst); break;
        case Method::MmapFault: sv = mmap_fault(app, w, st.source, dst); break;
        case Method::KernelCopy: sv = kernel_copy(app, w, st.source, kbuf_[ci] + w.slot * span_); break;
        }
        if (sv.ok) served_bytes_.inc(sv.bytes);
        std::ostringstream os;
        os << "request " << w.id << ": file " << w.file << " [" << w.offset << ", +" << w.len << ") to node"
           << st.source << (sv.ok ? "" : " FAILED");
        slice(app, "serve", t0, os.str());
        if (ctx_.tracer.narrating()) ctx_.tracer.narrate(app.now(), g + ".fileserve", "served " + os.str());
        Reply rep{w.id, sv.ok ? kStatusOk : kStatusError, sv.bytes};
        const std::uint64_t out = outbox + s * sizeof(Reply);
        app.debug_write(out, reinterpret_cast<const unsigned char*>(&rep), sizeof(Reply));
        ep.send(st.source, kReplyTag + w.slot, out, sizeof(Reply));
        if (posted < total) {
            recvs[k] = ep.irecv(msg::kAnySource, kRequestTag, inbox + s * sizeof(Wire), sizeof(Wire));
            ++posted;
        } else {
            recvs.erase(recvs.begin() + static_cast<std::ptrdiff_t>(k));
            at.erase(at.begin() + static_cast<std::ptrdiff_t>(k));
        }
    }
    // The measured phase ends with the last reply sent.
    const auto [cpu1, poll1] = cpu_busy();
    server_cpu_.set((cpu1 - cpu0_) - (poll1 - poll0_));
    const std::uint64_t served = served_bytes_.value();
    cpu_per_byte_.set(served ? server_cpu_.value() * 1000.0 / static_cast<double>(served) : 0.0);
    missed_bytes_.inc((stat_now(g + ".pagecache.misses") - misses0_) * kPage);
    major_.inc(stat_now(g + ".pagecache.faults_major") - major0_);
    ssd_reads_.inc(stat_now(g + ".ssd.file_reads") - ssd_reads0_);
    ssd_bytes_.inc(stat_now(g + ".ssd.file_bytes") - ssd_bytes0_);
    unpin_all(app);
    if (method_ == Method::ReadCopy) app.deregister(bounce_, span_);
    pins_.inc(pins_now() - pins0 - ep_pins);
    for (unsigned f = 0; f < files_; ++f)
        for (std::uint64_t o = 0; o < file_size_; o += kPage) pinned_left_ += vm.file_pins(f, o);
    ep.finalize();
    app.finish_registrations();
    ++done_;
    program_ended();
}

bool FileserveWorkload::verify(RdmaProcess& app, std::uint64_t addr, const Wire& w, std::uint64_t bytes) {
    std::vector<unsigned char> got(w.len), want(w.len);
    bool ok = bytes == w.len && app.debug_read(addr, got.data(), w.len);
    FileSystem::content(w.file, w.offset, want.data(), w.len);
    std::uint64_t bad = w.len;
    if (ok)
        for (std::uint64_t i = 0; i < w.len; ++i)
            if (got[i] != want[i]) {
                bad = i;
                ok = false;
                break;
            }
    log_.verified(w.len, ok);
    if (!ok) {
        std::ostringstream os;
        os << "DATA MISMATCH: fileserve request " << w.id << " (file " << w.file << " [" << w.offset << ", +"
           << w.len << ")) at " << app.group();
        if (bytes != w.len) os << ": " << bytes << " B reported sent";
        else if (bad < w.len)
            os << ": byte " << bad << " is " << int(got[bad]) << ", the file holds " << int(want[bad]);
        else os << ": the receive slot is unreadable";
        std::cerr << "vrdmasim: " << os.str() << "\n";
        if (ctx_.tracer.narrating()) ctx_.tracer.narrate(app.now(), app.group(), os.str());
    }
    return ok;
}

void FileserveWorkload::client(RdmaProcess& app, unsigned index) {
    msg::Endpoint& ep = *eps_[app.node()];
    const unsigned srv = server_->node();
    rx_area_[index] = app.alloc(outstanding_ * span_, populate_, advice_);
    const bool kernel = method_ == Method::KernelCopy;
    std::uint64_t user = rx_area_[index];
    if (kernel) {
        kbuf_[index] = app.alloc_locked(outstanding_ * span_);   // the kernel's socket receive buffer
    } else if (!app.register_receive(rx_area_[index], outstanding_ * span_)) {
        throw std::runtime_error(app.group() + ": fileserve: the receive area cannot be registered");
    }
    const std::uint64_t reqbuf = app.alloc(outstanding_ * (sizeof(Wire) + sizeof(Reply)), true);
    ep.setup();
    ready_and_wait(app, static_cast<unsigned>(clients_.size()) + 1);
    ep.connect(eps_);
    std::mt19937_64 rng(seed_fs_ * 0x9e3779b97f4a7c15ull + index + 1);
    struct Slot {
        bool busy = false;
        Wire w;
        msg::Endpoint::Request send = 0, recv = 0;
        sc_time start;
        std::uint64_t copied = 0;   // kernel-copy: packets copied to the user buffer
    };
    std::vector<Slot> slots(outstanding_);
    std::uint64_t next = 0, answered = 0;
    auto issue = [&](std::uint32_t s) {
        Slot& sl = slots[s];
        sl.w = draw(index, next++, rng);
        sl.w.slot = s;
        sl.busy = true;
        sl.copied = 0;
        const std::uint64_t slot_addr = user + s * span_;
        poison(app, slot_addr, sl.w.len, sl.w.id);
        if (kernel) app.reset_counter(1 + s, 0);
        const std::uint64_t wa = reqbuf + s * (sizeof(Wire) + sizeof(Reply));
        app.debug_write(wa, reinterpret_cast<const unsigned char*>(&sl.w), sizeof(Wire));
        sl.start = app.now();
        log_.posted(sl.start);
        requests_c_.inc();
        sl.recv = ep.irecv(srv, kReplyTag + s, wa + sizeof(Wire), sizeof(Reply));
        sl.send = ep.isend(srv, kRequestTag, wa, sizeof(Wire));
    };
    for (std::uint32_t s = 0; s < outstanding_ && next < requests_; ++s) issue(s);
    const double copy_rate = ctx_.config[params_of<VmParams>().copy_rate] / 8;
    std::vector<unsigned char> pkt;
    while (answered < requests_) {
        // The oldest outstanding request (the server answers each client's in order).
        std::uint32_t s = 0;
        for (std::uint32_t k = 0; k < outstanding_; ++k)
            if (slots[k].busy && (!slots[s].busy || slots[k].w.id < slots[s].w.id)) s = k;
        Slot& sl = slots[s];
        if (kernel) {
            // The client kernel's receive path: each packet, once it has
            // landed in the socket receive buffer (its event counter), is
            // copied to the user buffer, with the per-packet protocol cost.
            const std::uint64_t packets = (sl.w.len + packet_ - 1) / packet_;
            while (sl.copied < packets) {
                app.wait_counter(1 + s, sl.copied + 1);
                const std::uint64_t landed = std::min(packets, app.read_counter(1 + s));
                for (; sl.copied < landed; ++sl.copied) {
                    const std::uint64_t off = sl.copied * packet_, n = std::min(packet_, sl.w.len - off);
                    pkt.resize(n);
                    const sc_time c0 = app.now();
                    if (!app.debug_read(kbuf_[index] + s * span_ + off, pkt.data(), n) ||
                        !app.debug_write(user + s * span_ + off, pkt.data(), n))
                        throw std::runtime_error(app.group() + ": fileserve: kernel receive copy touched unmapped memory");
                    app.compute("kernel-rx", rx_cost_);
                    app.compute("kernel-copy", sc_time(static_cast<double>(n) / copy_rate, sc_core::SC_SEC));
                    copy_bytes_.inc(n);
                    slice(app, "kernel rx packet", c0, "request " + std::to_string(sl.w.id));
                }
            }
        }
        const msg::Status st = ep.wait(sl.recv);
        ep.wait(sl.send);
        Reply rep;
        app.debug_read(reqbuf + s * (sizeof(Wire) + sizeof(Reply)) + sizeof(Wire), reinterpret_cast<unsigned char*>(&rep),
                       sizeof(Reply));
        if (!st.ok || rep.id != sl.w.id || rep.id >= answers_.size()) {
            duplicates_.inc();
            throw std::logic_error(app.group() + ": fileserve: reply for request " + std::to_string(rep.id) + " where " +
                                   std::to_string(sl.w.id) + " was outstanding in slot " + std::to_string(s));
        }
        ++answers_[rep.id];
        answered_.inc();
        ++answered;
        sl.busy = false;
        const bool ok = rep.status == kStatusOk;
        if (ok) verify(app, user + s * span_, sl.w, rep.bytes);
        const sc_time latency = app.now() - sl.start;
        log_.finished(app.now(), ok, ok ? rep.bytes : 0, &latency);
        log_.latency_hops(hops(srv, app.node())).add(to_us(latency));
        if (next < requests_) issue(s);
    }
    ep.finalize();
    app.finish_registrations();
    ++done_;
    program_ended();
}

void FileserveWorkload::unpin_all(RdmaProcess& app) {
    Vm& vm = *app.vm();
    for (const auto& [f, o] : cached_pins_) vm_done(app, vm.unpin_file(app.pid(), fds_[f], o, kPage, app.now()), "unpin");
    cached_pins_.clear();
}

std::vector<std::pair<std::string, std::string>> FileserveWorkload::self_check() const {
    std::vector<std::pair<std::string, std::string>> out;
    std::uint64_t missing = 0, twice = 0;
    for (std::uint64_t n : answers_) missing += n == 0, twice += n > 1;
    if (missing || twice || duplicates_.value())
        out.push_back({"fileserve-answered-once", std::to_string(missing) + " request(s) never answered, " +
                                                      std::to_string(twice) + " answered more than once, " +
                                                      std::to_string(duplicates_.value()) + " unexpected replies"});
    if (served_bytes_.value() != log_.bytes_verified.value())
        out.push_back({"fileserve-bytes-verified", std::to_string(served_bytes_.value()) + " B served but " +
                                                       std::to_string(log_.bytes_verified.value()) + " B verified"});
    if (ssd_bytes_.value() < missed_bytes_.value())
        out.push_back({"fileserve-ssd-covers-misses", std::to_string(ssd_bytes_.value()) + " B read from the SSD for " +
                                                          std::to_string(missed_bytes_.value()) + " B missed in the page cache"});
    if (pinned_left_ || !cached_pins_.empty())
        out.push_back({"fileserve-nothing-pinned", std::to_string(pinned_left_) + " page-cache pin(s) left at the end"});
    return out;
}

}  // namespace vrdmasim
