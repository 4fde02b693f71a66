#include "workloads/fileserve.hpp"
#include "workloads/registry.hpp"
#include "library/rdma/strategy/strategy.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <iostream>
#include <sstream>
#include <stdexcept>

#include "models/os/filesystem.hpp"
#include "models/os/vm_params.hpp"
#include "src/core/failure_causes.hpp"
#include "library/messaging/endpoint.hpp"
#include "library/messaging/matching.hpp"
#include "library/messaging/params.hpp"

namespace vrdmasim {

using sc_core::sc_time;

namespace {
constexpr std::uint64_t kPage = 4096;

FileserveWorkload::Method method_of(const std::string& s) {
    if (s == "read-copy") return FileserveWorkload::Method::ReadCopy;
    if (s == "pipeline") return FileserveWorkload::Method::Pipeline;
    if (s == "sendfile") return FileserveWorkload::Method::Sendfile;
    if (s == "mmap-fault") return FileserveWorkload::Method::MmapFault;
    if (s == "kernel-copy") return FileserveWorkload::Method::KernelCopy;
    throw std::logic_error("fileserve.method: unknown method '" + s + "'");
}

// A run's failed requests whose data the server could not get: read()
// short of frames (the page cache's pages, the buffer's), or sendfile's pin
// of the page-cache pages refused.
const failure_causes::Declare kStarved(40, [](const Config&, const StatRegistry& stats) {
    const std::uint64_t reads = stats.sum_counters("fileserve.short_reads");
    const std::uint64_t pins = stats.sum_counters("fileserve.pins_refused");
    std::string s;
    if (reads)
        s = std::to_string(reads) +
            " fileserve read() call(s) short or refused with ENOMEM (the node's page frames could not hold the "
            "range: page cache or buffer)";
    if (pins)
        s += (s.empty() ? "" : ", ") + std::to_string(pins) +
             " fileserve page-cache pin(s) refused (ENOMEM: no frame to read the range in, or vm.memlock-limit)";
    return s.empty() ? s : s + ", each failing its request";
});
}   // namespace

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
      requests(
          set.integer("requests", "8", "requests each client sends (an experiment's choice)").range("1", "1000000")),
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
                     "pipeline: bytes per chunk read(), registered and written (the read form: read by the client) "
                     "(*estimate*: as rdma.pipeline-chunk)")
                .range("4KiB", "64MiB")),
      buffers(
          set.integer("buffers", "2", "pipeline: bounce buffers in rotation (2: double buffering)").range("2", "64")),
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
                        .range("1KiB", "64MiB")),
      server_depth(set.integer("server-depth", "1",
                               "requests the server serves at once (an event loop, as an epoll server's: it takes a "
                               "new request while the data of others is on the wire, each with its own bounce "
                               "buffers, socket buffer and completion records); 1: one request at a time (an "
                               "experiment's choice)")
                       .range("1", "64")),
      access(set.choice("access", "server", {"server", "direct"},
                        "how the clients get the files: server (they ask the file server over the network, "
                        "which sends the data by RDMA as fileserve.method says), or direct (no server: each "
                        "client read()s the files through its own kernel, whose page cache fills over the board "
                        "network from the SSD's FPGA when its own FPGA has no SSD: models/os/README.md \"The SSD "
                        "from another FPGA\"; the clients must be on the SSD's board)")) {}

void FileserveWorkload::declare_params(ParamRegistry& reg) { reg.add(params_of<FileserveParams>().set); }

void FileserveWorkload::declare_metrics(MetricRegistry& reg) {
    const auto run = [](const Config& c) { return c[params_of<WorkloadParams>().kind] == "fileserve"; };
    reg.sum_counters("fileserve_requests",
                     "fileserve: requests answered (`workload.fileserve.answered`); 0 in other runs.",
                     {"fileserve.answered"}, run);
    reg.sum_counters("fileserve_bytes",
                     "fileserve: bytes the server sent and the clients verified "
                     "(`workload.fileserve.served_bytes`); 0 in other runs.",
                     {"fileserve.served_bytes"}, run);
    reg.sum_scalars("fileserve_cpu_ns_per_byte", "ns/B",
                    "fileserve: CPU time of the server node's cores (fileserve.access = direct: the clients' "
                    "nodes') in the measured phase, spinning for completions (`poll`) excluded, per byte served "
                    "(`workload.fileserve.cpu_ns_per_byte`; with node.processes > 1 measured once over every job's "
                    "bytes); 0 in other runs.",
                    "fileserve.cpu_ns_per_byte", 6, run);
    reg.sum_counters("fileserve_copy_bytes",
                     "fileserve: bytes copied by CPUs (server read() and kernel copies, the "
                     "client kernel's copies; `workload.fileserve.copy_bytes`); 0 in other runs.",
                     {"fileserve.copy_bytes"}, run);
    reg.sum_scalars("fileserve_registration_us", "us",
                    "fileserve: server time spent registering (pins, file-page pins and mappings, per-chunk "
                    "registrations; `workload.fileserve.registration_time`); 0 in other runs.",
                    "fileserve.registration_time", 6, run);
    reg.sum_counters("fileserve_pins",
                     "fileserve: pages the server pinned for the data (page-cache pins of "
                     "sendfile, its registrations' pins of its buffers, not the messaging library's; "
                     "`workload.fileserve.pins`); 0 in other runs.",
                     {"fileserve.pins"}, run);
    reg.sum_counters("fileserve_ssd_reads",
                     "fileserve: SSD file reads in the measured phase "
                     "(`workload.fileserve.ssd_reads`, from `ssd.file_reads` of the nodes with an SSD, commands "
                     "other FPGAs sent over the board network included); 0 in other runs.",
                     {"fileserve.ssd_reads"}, run);
    reg.sum_counters("fileserve_ssd_bytes",
                     "fileserve: bytes read from the SSD for files in the measured phase "
                     "(`workload.fileserve.ssd_bytes`); 0 in other runs.",
                     {"fileserve.ssd_bytes"}, run);
    reg.sum_counters("fileserve_major_faults",
                     "fileserve: major file faults in the measured phase on the nodes "
                     "whose page caches serve the data (the SMMU fault path of mmap-fault; "
                     "`workload.fileserve.major_faults`); 0 in other runs.",
                     {"fileserve.major_faults"}, run);
    reg.sum_counters("fileserve_packets",
                     "fileserve, kernel-copy: packets sent (`workload.fileserve.packets`); 0 "
                     "in other runs.",
                     {"fileserve.packets"}, run);
}

FileserveWorkload::FileserveWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps,
                                     const std::vector<FileSystem*>& files, unsigned job)
    : Workload(ctx, job),
      method_(method_of(ctx.config[params_of<FileserveParams>().method])),
      read_(ctx.config[params_of<WorkloadParams>().operation] == "read"),
      direct_(ctx.config[params_of<FileserveParams>().access] == "direct"),
      guard_(ctx.config[params_of<RdmaParams>().buffer_guard] == "mprotect"),
      requests_c_(ctx.stats.counter(stats_prefix(job) + "fileserve.requests", "", "requests the clients sent")),
      answered_(ctx.stats.counter(stats_prefix(job) + "fileserve.answered", "",
                                  "requests answered (replies the clients took)")),
      served_bytes_(ctx.stats.counter(stats_prefix(job) + "fileserve.served_bytes", "B",
                                      "bytes the server sent (or the clients read) and reported sent")),
      copy_bytes_(
          ctx.stats.counter(stats_prefix(job) + "fileserve.copy_bytes", "B", "bytes copied by CPUs for the data")),
      pins_(ctx.stats.counter(stats_prefix(job) + "fileserve.pins", "", "pages the server pinned for the data")),
      ssd_reads_(
          ctx.stats.counter(stats_prefix(job) + "fileserve.ssd_reads", "", "SSD file reads in the measured phase")),
      ssd_bytes_(
          ctx.stats.counter(stats_prefix(job) + "fileserve.ssd_bytes", "B", "SSD file bytes in the measured phase")),
      major_(ctx.stats.counter(stats_prefix(job) + "fileserve.major_faults", "",
                               "major file faults in the measured phase")),
      missed_bytes_(ctx.stats.counter(stats_prefix(job) + "fileserve.missed_bytes", "B",
                                      "page-cache misses in the measured phase x 4 KiB")),
      packets_(ctx.stats.counter(stats_prefix(job) + "fileserve.packets", "", "kernel-copy: packets sent")),
      duplicates_(ctx.stats.counter(stats_prefix(job) + "fileserve.duplicate_replies", "",
                                    "replies naming a request not outstanding (a self-check, always 0)")),
      short_reads_(ctx.stats.counter(stats_prefix(job) + "fileserve.short_reads", "",
                                     "read() calls of a request's data that copied less than asked, or nothing "
                                     "(ENOMEM): each fails its request")),
      pins_refused_(ctx.stats.counter(stats_prefix(job) + "fileserve.pins_refused", "",
                                      "sendfile: pins of a request's page-cache pages refused (pin_file: ENOMEM, "
                                      "RLIMIT_MEMLOCK): each fails its request")),
      reg_time_(ctx.stats.scalar(stats_prefix(job) + "fileserve.registration_time", "us",
                                 "server time spent registering", Scalar::Kind::Sum)),
      server_cpu_(ctx.stats.scalar(stats_prefix(job) + "fileserve.server_cpu", "us",
                                   "server node CPU (direct: the clients' nodes') in the measured phase, poll "
                                   "spinning excluded",
                                   Scalar::Kind::Level)),
      cpu_per_byte_(ctx.stats.scalar(stats_prefix(job) + "fileserve.cpu_ns_per_byte", "ns/B",
                                     "server_cpu per byte served", Scalar::Kind::Level)),
      concurrent_peak_(ctx.stats.scalar(stats_prefix(job) + "fileserve.concurrent_peak", "",
                                        "requests the server served at once, at most", Scalar::Kind::Level)) {
    const Config& c = ctx.config;
    refuse_compositions(c);
    const std::vector<std::string> ssd_groups = choose_server_and_clients(c, apps, files);
    read_settings(c);
    check_memory(c);
    answers_.assign(clients_.size() * requests_, 0);
    rx_area_.assign(clients_.size(), 0);
    kbuf_.assign(clients_.size(), 0);
    eps_.assign(apps.size(), nullptr);
    if (!direct_) {
        owned_.push_back(std::make_unique<msg::Endpoint>(ctx, *server_, client_nodes_));
        eps_[server_->node()] = owned_.back().get();
        for (RdmaProcess* a : clients_) {
            owned_.push_back(std::make_unique<msg::Endpoint>(ctx, *a, std::vector<unsigned>{server_->node()}));
            eps_[a->node()] = owned_.back().get();
        }
    }
    make_meter(ssd_groups);
    server_->program = [this](RdmaProcess& a) { server(a); };
    for (std::size_t i = 0; i < clients_.size(); ++i)
        clients_[i]->program = [this, i](RdmaProcess& a) {
            if (direct_) direct_client(a, static_cast<unsigned>(i));
            else client(a, static_cast<unsigned>(i));
        };
}

void FileserveWorkload::refuse_compositions(const Config& c) const {
    const auto& P = params_of<FileserveParams>();
    if (c[params_of<RdmaParams>().channels] > 1)
        throw c.refuse(params_of<RdmaParams>().channels,
                       "the fileserve workload's requests go through the two-sided library, which counts one channel");
    if (!c.boolean("smmu.enabled"))
        throw c.refuse("smmu.enabled",
                       "the fileserve workload needs processes in the Vm with the page cache and the engine "
                       "reaching them through the SMMU (smmu.enabled = true)");
    if (c.string("ni.translation") != "smmu")
        throw c.refuse("ni.translation", "the fileserve workload is built for the SMMU's translation only");
    if (c[params_of<MsgParams>().eager_threshold] < std::max(sizeof(Wire), sizeof(ReadReply)))
        throw c.refuse(params_of<MsgParams>().eager_threshold,
                       "fileserve's requests and replies are " + std::to_string(sizeof(Wire)) + " B eager messages");
    // docs/composition.md, the refusal table.
    if (direct_ && read_)
        throw c.refuse(params_of<WorkloadParams>().operation,
                       "has nothing to choose with fileserve.access = direct: the clients read() the files through "
                       "their own kernels, no engine moves the data");
    if (read_ && method_ == Method::KernelCopy)
        throw c.refuse(params_of<WorkloadParams>().operation,
                       "has nothing to choose with fileserve.method = kernel-copy: a socket pushes its packets, the "
                       "client cannot read the server's socket buffer");
    if (direct_) {
        if (c[P.outstanding] > 1)
            throw c.refuse(P.outstanding, "with fileserve.access = direct each client read()s, one request at a time");
        if (c[P.server_depth] > 1) throw c.refuse(P.server_depth, "with fileserve.access = direct there is no server");
        if (method_ != Method::ReadCopy)
            throw c.refuse(P.method,
                           "is how the server moves the data; with fileserve.access = direct there is no "
                           "server (the clients read() the files)");
    }
}

std::vector<std::string> FileserveWorkload::choose_server_and_clients(const Config& c,
                                                                      const std::vector<RdmaProcess*>& apps,
                                                                      const std::vector<FileSystem*>& files) {
    const auto& P = params_of<FileserveParams>();
    // The server: process `job` of the first node with a file system
    // (Node::file_system() refused the others when System built `files`).
    std::vector<std::string> ssd_groups;
    for (std::size_t n = 0; n < files.size(); ++n)
        if (files[n]) {
            ssd_groups.push_back(node_group(*apps.at(n)));
            ssd_nodes_.push_back(static_cast<unsigned>(n));
            if (!server_) server_ = apps.at(n), fs_ = files[n];
        }
    if (!server_)
        throw c.refuse(params_of<FsParams>().files, "the fileserve workload needs files (fs.files > 0) on a node");
    server_group_ = server_->group();
    const std::uint64_t want = static_cast<std::uint64_t>(c[P.clients]);
    for (RdmaProcess* a : apps)
        if (a != server_ && clients_.size() < want) clients_.push_back(a), client_nodes_.push_back(a->node());
    if (clients_.size() < want)
        throw c.refuse(P.clients,
                       "the system has " + std::to_string(apps.size() - 1) + " node(s) besides the server's");
    return ssd_groups;
}

void FileserveWorkload::read_settings(const Config& c) {
    const auto& P = params_of<FileserveParams>();
    files_ = fs_->files();
    file_size_ = fs_->size(0);
    const std::uint64_t rq = c[P.request_size];
    req_ = rq == 0 || rq >= file_size_ ? file_size_ : rq;
    if (req_ % kPage != 0 && req_ != file_size_)
        throw c.refuse(P.request_size, "a range must be a whole number of 4 KiB pages");
    span_ = (req_ + kPage - 1) / kPage * kPage;
    requests_ = static_cast<std::uint64_t>(c[P.requests]);
    outstanding_ = static_cast<std::uint64_t>(c[P.outstanding]);
    depth_ = static_cast<std::uint64_t>(c[P.server_depth]);
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
    per_job_ = std::max(nbuf_, window_);
    seed_fs_ = static_cast<std::uint64_t>(c[P.seed]);
    if (sendfile_cache_ && method_ != Method::Sendfile)
        throw c.refuse(P.sendfile_cache, "is for fileserve.method = sendfile only");
    if (method_ == Method::MmapFault && !direct_) {
        if (registration_strategies::of(c).makes_present) {
            // docs/composition.md, the refusal table.
            std::string leave;   // the strategies that leave the pages' faults to the engine
            for (const StrategyKind& k : registration_strategies::all())
                if (!k.makes_present) leave += (leave.empty() ? "" : " or ") + k.name;
            throw c.refuse(params_of<StrategyParams>().strategy,
                           "fileserve.method = mmap-fault posts the unpopulated file mapping to the engine and needs "
                           "its faults resolved: rdma.strategy = " +
                               leave);
        }
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
}

void FileserveWorkload::check_memory(const Config& c) {
    // Fits: the server's buffers, the clients' receive areas.
    const std::uint64_t slots = clients_.size() * outstanding_;
    if (!direct_) {
        const std::uint64_t ep_server = msg::Endpoint::mapped_bytes(c, clients_.size());
        std::uint64_t server_bytes = ep_server + slots * kPage * 3;
        if (method_ == Method::ReadCopy) server_bytes += depth_ * span_;
        if (method_ == Method::Pipeline) server_bytes += depth_ * nbuf_ * chunk_;
        if (chunk_reads()) server_bytes += depth_ * nbuf_ * sizeof(Done);   // a Done's box per buffer
        if (method_ == Method::KernelCopy) server_bytes += depth_ * window_ * packet_;
        check_fits(*server_, server_bytes);
        check_locked(*server_, [&] {
            auto r = msg::Endpoint::locked_regions(c, clients_.size());
            r.push_back(depth_ * per_job_ * sizeof(CompletionRecord));
            if (method_ == Method::KernelCopy) r.push_back(depth_ * window_ * packet_);
            return r;
        }());
    }
    for (RdmaProcess* a : clients_) {
        if (direct_) {
            check_fits(*a, outstanding_ * span_ + 256 * 1024);
            continue;
        }
        check_fits(*a, msg::Endpoint::mapped_bytes(c, 1) +
                           outstanding_ * span_ * (method_ == Method::KernelCopy ? 2 : 1) + outstanding_ * kPage * 2);
        auto r = msg::Endpoint::locked_regions(c, 1);
        if (method_ == Method::KernelCopy) r.push_back(outstanding_ * span_);
        if (read_) r.push_back(outstanding_ * reads_per_slot() * sizeof(CompletionRecord));
        check_locked(*a, r);
    }
}

void FileserveWorkload::make_meter(const std::vector<std::string>& ssd_groups) {
    // The node-wide figures: the server's node, or (direct) the clients'
    // nodes and the SSDs that fill their page caches.
    meter_ = std::make_shared<Meter>();
    meter_->owner = this;
    meter_->parties = direct_ ? static_cast<unsigned>(clients_.size()) : 1;
    if (direct_) {
        for (RdmaProcess* a : clients_) meter_->cpu_groups.push_back(node_group(*a));
        meter_->ssd_groups = ssd_groups;
    } else {
        meter_->cpu_groups = {node_group(*server_)};
        meter_->ssd_groups = {node_group(*server_)};
        meter_->pin_vm = server_->vm();
    }
}

FileserveWorkload::~FileserveWorkload() = default;

std::string FileserveWorkload::partition_refusal() const {
    std::string why = Workload::partition_refusal();
    // The measured phase's figures read statistics of the nodes whose cores
    // and SSDs serve (the meter: the server's; with direct access every
    // client's and every SSD's) when the first party starts and the last one
    // ends, and the end's check counts every client's answers in one table.
    std::vector<unsigned> parties = client_nodes_;
    if (direct_) parties.insert(parties.end(), ssd_nodes_.begin(), ssd_nodes_.end());
    for (unsigned n : parties)
        if (why.empty())
            why = across_boards(server_->node(), n, direct_ ? "fileserve.access = direct" : "",
                                "the measured phase's figures (server_cpu, missed bytes, SSD reads: the Meter) are "
                                "statistics of several nodes read when the first party starts and the last one "
                                "ends, and every client's answers are counted in one table (answers_); and the "
                                "clients' areas (rx_area_, kbuf_) and msg::Endpoint::connect's peers are read "
                                "directly, not published through the start barrier (GlobalSync)");
    return why;
}

double FileserveWorkload::local_ceiling_bps() const {
    return direct_ ? static_cast<double>(clients_.size()) * ctx_.config[params_of<VmParams>().copy_rate] : 0.0;
}

std::string FileserveWorkload::node_group(const RdmaProcess& app) {
    // Process 0 of a node is named as its node; process p > 0 "<node>.proc<p>".
    const std::string& g = app.group();
    const auto at = g.rfind(".proc");
    return at == std::string::npos ? g : g.substr(0, at);
}

void FileserveWorkload::join(Workload& first_job) {
    if (&first_job == this) return;
    auto& first = dynamic_cast<FileserveWorkload&>(first_job);   // every job runs the same kind
    first.meter_->parties += meter_->parties;
    meter_ = first.meter_;
}

void FileserveWorkload::meter_begin() {
    Meter& m = *meter_;
    if (m.begun++ > 0) return;
    for (const std::string& g : m.cpu_groups) {
        m.cpu0 += scalar_now(g + ".cpu.cores_busy_time");
        m.poll0 += scalar_now(g + ".cpu.poll.busy_time");
    }
    for (const std::string& g : m.cpu_groups) {
        m.misses0 += stat_now(g + ".pagecache.misses");
        m.major0 += stat_now(g + ".pagecache.faults_major");
    }
    for (const std::string& g : m.ssd_groups) {
        m.ssd_reads0 += stat_now(g + ".ssd.file_reads");
        m.ssd_bytes0 += stat_now(g + ".ssd.file_bytes");
    }
}

void FileserveWorkload::meter_end(std::uint64_t served) {
    Meter& m = *meter_;
    m.served += served;
    if (++m.ended < m.parties) return;
    // The last of every job's parties: the measured phase ends.
    FileserveWorkload& o = *m.owner;
    double cpu = 0, poll = 0;
    std::uint64_t misses = 0, major = 0, reads = 0, bytes = 0;
    for (const std::string& g : m.cpu_groups) {
        cpu += scalar_now(g + ".cpu.cores_busy_time");
        poll += scalar_now(g + ".cpu.poll.busy_time");
        misses += stat_now(g + ".pagecache.misses");
        major += stat_now(g + ".pagecache.faults_major");
    }
    for (const std::string& g : m.ssd_groups) {
        reads += stat_now(g + ".ssd.file_reads");
        bytes += stat_now(g + ".ssd.file_bytes");
    }
    o.server_cpu_.set((cpu - m.cpu0) - (poll - m.poll0));
    o.cpu_per_byte_.set(m.served ? o.server_cpu_.value() * 1000.0 / static_cast<double>(m.served) : 0.0);
    o.missed_bytes_.inc((misses - m.misses0) * kPage);
    o.major_.inc(major - m.major0);
    o.ssd_reads_.inc(reads - m.ssd_reads0);
    o.ssd_bytes_.inc(bytes - m.ssd_bytes0);
}

void FileserveWorkload::meter_released() {
    Meter& m = *meter_;
    if (++m.released < m.parties) return;
    FileserveWorkload& o = *m.owner;
    if (m.pin_vm)
        for (unsigned f = 0; f < files_; ++f)
            for (std::uint64_t off = 0; off < file_size_; off += kPage) o.pinned_left_ += m.pin_vm->file_pins(f, off);
}

FileserveWorkload::Wire FileserveWorkload::draw(unsigned client, std::uint64_t k, std::mt19937_64& rng) const {
    Wire w;
    w.id = static_cast<std::uint64_t>(client) * requests_ + k;
    if (zipf_) {
        const double u = static_cast<double>(rng() >> 11) * (1.0 / 9007199254740992.0);
        w.file =
            static_cast<std::uint32_t>(std::lower_bound(zipf_cdf_.begin(), zipf_cdf_.end(), u) - zipf_cdf_.begin());
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

double FileserveWorkload::scalar_now(const std::string& name) const {
    const Scalar* s = ctx_.stats.find_scalar(name);   // a CPU activity never run has none yet
    return s ? s->value() : 0.0;
}

std::string FileserveWorkload::describe(const Wire& w, unsigned node) const {
    std::ostringstream os;
    os << "request " << w.id << ": file " << w.file << " [" << w.offset << ", +" << w.len << ") to node" << node;
    return os.str();
}

void FileserveWorkload::slice(RdmaProcess& app, const char* name, sc_time start, const std::string& args,
                              unsigned lane) {
    if (!ctx_.tracer.enabled()) return;
    // A request served beside others (job slot `lane` > 0) on its own track.
    const auto track = lane == 0 ? ctx_.tracer.track(app.group(), "app")
                                 : ctx_.tracer.track(app.group(), "app.serve" + std::to_string(lane));
    ctx_.tracer.span(track, name, start, app.now(), {{"request", Tracer::json_string(args)}});
}

void FileserveWorkload::vm_done(RdmaProcess& app, const VmResult& r, const char* what) {
    if (!r.ok()) throw std::runtime_error(app.group() + ": fileserve: " + what + " failed: " + to_string(r.error));
    app.advance_to(r.done);
}

std::uint64_t FileserveWorkload::read_file(RdmaProcess& app, int fd, std::uint64_t off, std::uint64_t len,
                                           std::uint64_t buf, const char* what) {
    const VmResult r = app.vm()->read(app.pid(), fd, off, len, buf, app.now());
    // ENOMEM before the first byte is the short read's limit, as a server
    // answers either with an error (sendfile's pins refused likewise);
    // another error is the workload's own.
    const bool nomem = r.error == VmError::NoMemory;
    if (nomem) app.advance_to(r.done);
    else vm_done(app, r, what);
    const std::uint64_t got = nomem ? 0 : r.value;
    copy_bytes_.inc(got);
    if (got != len) {
        short_reads_.inc();
        ++meter_->starved;
    }
    return got;
}

// The warm pass: every file read once through the page cache into a
// scratch buffer, before the measured phase (its cost is not measured).
void FileserveWorkload::warm(RdmaProcess& app, const std::vector<int>& fds) {
    const std::uint64_t piece = 256 * 1024;
    const std::uint64_t buf = app.alloc(piece, true);
    Vm& vm = *app.vm();
    for (unsigned f = 0; f < files_; ++f)
        for (std::uint64_t o = 0; o < file_size_; o += piece)
            vm_done(app, vm.read(app.pid(), fds[f], o, std::min(piece, file_size_ - o), buf, app.now()), "warm read()");
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
        os << "DATA MISMATCH: fileserve request " << w.id << " (file " << w.file << " [" << w.offset << ", +" << w.len
           << ")) at " << app.group();
        if (bytes != w.len) os << ": " << bytes << " B reported sent";
        else if (bad < w.len)
            os << ": byte " << bad << " is " << int(got[bad]) << ", the file holds " << int(want[bad]);
        else os << ": the receive slot is unreadable";
        std::cerr << "vrdmasim: " << os.str() << "\n";
        if (ctx_.tracer.noting())
            ctx_.tracer.note(Tracer::Track{}, "data mismatch", app.now(), sc_core::SC_ZERO_TIME, app.group(), os.str());
    }
    return ok;
}

// A client's requests, up to fileserve.outstanding at a time, each in its
// slot of the receive area: issued, answered (the kernel-copy receive path,
// the read form's pull), verified.
class FileserveWorkload::ClientLoop {
public:
    // Per slot: the request, the reply (a ReadReply in the read form) and
    // the read form's Done, in one small buffer each.
    static constexpr std::uint64_t kMsgs = sizeof(Wire) + sizeof(ReadReply) + sizeof(Done);

    ClientLoop(FileserveWorkload& w, RdmaProcess& app, unsigned index, std::uint64_t reqbuf, std::uint64_t reads)
        : w_(w),
          app_(app),
          ep_(*w.eps_[app.node()]),
          index_(index),
          srv_(w.server_->node()),
          kernel_(w.method_ == Method::KernelCopy),
          user_(w.rx_area_[index]),
          reqbuf_(reqbuf),
          reads_(reads),
          reply_len_(w.read_ ? sizeof(ReadReply) : sizeof(Reply)),
          copy_rate_(w.ctx_.config[params_of<VmParams>().copy_rate] / 8),
          rng_(w.seed_fs_ * 0x9e3779b97f4a7c15ull + index + 1),
          slots_(w.outstanding_) {}

    void run() {
        for (std::uint32_t s = 0; s < w_.outstanding_ && next_ < w_.requests_; ++s) issue(s);
        while (answered_ < w_.requests_) {
            const std::uint32_t s = next_answer();
            Slot& sl = slots_[s];
            if (kernel_) kernel_receive(sl, s);
            answer(sl, s);
            if (next_ < w_.requests_) issue(s);
        }
    }

private:
    struct Slot {
        bool busy = false;
        Wire w;
        msg::Endpoint::Request send = 0, recv = 0;
        sc_time start;
        std::uint64_t copied = 0;   // kernel-copy: packets copied to the user buffer
        std::uint64_t guard = 0;   // rdma.buffer-guard: the slot from request to reply (write form)
    };
    // pipeline's read form: a chunk being read (its record, and when its read was posted).
    struct Chunk {
        std::uint64_t record = 0;
        sc_time posted;
    };

    void issue(std::uint32_t s) {
        Slot& sl = slots_[s];
        sl.w = w_.draw(index_, next_++, rng_);
        sl.w.slot = s;
        sl.busy = true;
        sl.copied = 0;
        const std::uint64_t slot_addr = user_ + s * w_.span_;
        w_.poison(app_, slot_addr, sl.w.len, sl.w.id);
        if (kernel_) app_.reset_counter(1 + s, 0);
        const std::uint64_t wa = reqbuf_ + s * kMsgs;
        app_.debug_write(wa, reinterpret_cast<const unsigned char*>(&sl.w), sizeof(Wire));
        sl.start = app_.now();
        w_.log_.posted(sl.start);
        w_.requests_c_.inc();
        sl.recv = ep_.irecv(srv_, kReplyTag + s, wa + sizeof(Wire), reply_len_);
        // The write form: the engine writes the slot from now until the
        // reply (kernel-copy: the client's kernel does, no guard); a touch
        // waits for the reply. The read form guards it in get().
        if (!w_.read_ && !kernel_)
            sl.guard = app_.guard(slot_addr, sl.w.len, true, [this, s] {
                ep_.wait_any({slots_[s].recv});
                app_.unguard(slots_[s].guard);
            });
        sl.send = ep_.isend(srv_, kRequestTag, wa, sizeof(Wire));
    }

    // The oldest outstanding request (the server answers each client's in
    // order when it serves one at a time); in the read form, whichever reply
    // comes first (the server holds each prepared range until its Done, and
    // may have taken a later request of this client first).
    std::uint32_t next_answer() {
        std::uint32_t s = 0;
        for (std::uint32_t k = 0; k < w_.outstanding_; ++k)
            if (slots_[k].busy && (!slots_[s].busy || slots_[k].w.id < slots_[s].w.id)) s = k;
        if (!w_.read_) return s;
        std::vector<msg::Endpoint::Request> waiting;
        std::vector<std::uint32_t> of;
        for (std::uint32_t k = 0; k < w_.outstanding_; ++k)
            if (slots_[k].busy) waiting.push_back(slots_[k].recv), of.push_back(k);
        return of[ep_.wait_any(waiting)];
    }

    // The client kernel's receive path: each packet, once it has landed in
    // the socket receive buffer (its event counter), is copied to the user
    // buffer, with the per-packet protocol cost.
    void kernel_receive(Slot& sl, std::uint32_t s) {
        const std::uint64_t packets = (sl.w.len + w_.packet_ - 1) / w_.packet_;
        while (sl.copied < packets) {
            app_.wait_counter(1 + s, sl.copied + 1);
            const std::uint64_t landed = std::min(packets, app_.read_counter(1 + s));
            for (; sl.copied < landed; ++sl.copied) {
                const std::uint64_t off = sl.copied * w_.packet_, n = std::min(w_.packet_, sl.w.len - off);
                pkt_.resize(n);
                const sc_time c0 = app_.now();
                if (!app_.debug_read(w_.kbuf_[index_] + s * w_.span_ + off, pkt_.data(), n) ||
                    !app_.debug_write(user_ + s * w_.span_ + off, pkt_.data(), n))
                    throw std::runtime_error(app_.group() + ": fileserve: kernel receive copy touched unmapped memory");
                app_.compute("kernel-rx", w_.rx_cost_);
                app_.compute("kernel-copy", sc_time(static_cast<double>(n) / copy_rate_, sc_core::SC_SEC));
                w_.copy_bytes_.inc(n);
                w_.slice(app_, "kernel rx packet", c0, "request " + std::to_string(sl.w.id));
            }
        }
    }

    // The read form: the data waits at rep.src on the server; the client
    // pulls it into its slot, then tells the server it may release the
    // range. Returns the bytes pulled; `ok` false if the read failed.
    std::uint64_t pull(std::uint32_t s, const Slot& sl, const ReadReply& rep, bool& ok) {
        const std::uint64_t rec = reads_ + s * sizeof(CompletionRecord);
        app_.get(srv_, rep.src, user_ + s * w_.span_, sl.w.len, rep.id, rec);
        const CompletionRecord r = app_.wait_record(rec);
        ok = r.status == kStatusOk;
        const std::uint64_t bytes = ok ? r.bytes : 0;
        say_done(s, rep.id, bytes);
        return bytes;
    }

    // pipeline's read form: the server hands the range over chunk by chunk,
    // each read() into one of its fileserve.buffers bounce buffers and
    // registered, with a message on the reply's tag naming where (`first`,
    // the reply, names chunk 0). The client reads each chunk as soon as it
    // is told (so up to `buffers` reads at once: the server has no more
    // buffers) and, once a read has completed (oldest first), says Done:
    // only then may the server read() another chunk into that buffer. A
    // message with an error status ends the hand-over early. Returns the
    // bytes read; `ok` false if a read failed or the server stopped early.
    std::uint64_t pull_chunks(std::uint32_t s, const Slot& sl, const ReadReply& first, bool& ok) {
        const std::uint64_t parts = (sl.w.len + w_.chunk_ - 1) / w_.chunk_;
        const std::uint64_t at = reqbuf_ + s * kMsgs + sizeof(Wire);   // where the server's messages land
        std::deque<Chunk> reading;
        std::uint64_t told = 0, bytes = 0;
        msg::Endpoint::Request more = 0;   // the receive of the next chunk's message (0: none is coming)
        const auto tell = [&](const ReadReply& rep) {
            read_chunk(s, sl, rep, told++, reading);
            if (told < parts) more = ep_.irecv(srv_, kReplyTag + s, at, reply_len_);
        };
        tell(first);
        while (more || !reading.empty()) {
            if (more && ep_.test(more)) {
                const msg::Status st = ep_.wait(more);
                more = 0;
                ReadReply rep;
                app_.debug_read(at, reinterpret_cast<unsigned char*>(&rep), sizeof(ReadReply));
                if (!st.ok || rep.id != sl.w.id)
                    throw std::logic_error(app_.group() + ": fileserve: a chunk's message for request " +
                                           std::to_string(rep.id) + " while reading " + std::to_string(sl.w.id));
                if (rep.status == kStatusOk) tell(rep);
                else ok = false;   // the server stopped: no more chunks
            } else if (!reading.empty() && completed(reading.front())) {
                const CompletionRecord r = app_.wait_record(reading.front().record);
                reading.pop_front();
                const bool good = r.status == kStatusOk;
                ok = ok && good;
                bytes += good ? r.bytes : 0;
                say_done(s, sl.w.id, good ? r.bytes : 0);
            } else {
                app_.wait_event(
                    [&] { return (more && ep_.test(more)) || (!reading.empty() && completed(reading.front())); },
                    "fileserve chunk wait");
            }
        }
        return bytes;
    }

    // Chunk k, ready at rep.src on the server: read into its place in slot s.
    void read_chunk(std::uint32_t s, const Slot& sl, const ReadReply& rep, std::uint64_t k,
                    std::deque<Chunk>& reading) {
        const std::uint64_t off = k * w_.chunk_, len = std::min(w_.chunk_, sl.w.len - off);
        if (rep.bytes != len || reading.size() >= w_.nbuf_)
            throw std::logic_error(app_.group() + ": fileserve: chunk " + std::to_string(k) + " of request " +
                                   std::to_string(rep.id) + " handed over with " + std::to_string(rep.bytes) + " B, " +
                                   std::to_string(reading.size()) + " chunks being read");
        Chunk c;
        c.record = reads_ + (s * w_.nbuf_ + k % w_.nbuf_) * sizeof(CompletionRecord);
        c.posted = app_.now();
        app_.get(srv_, rep.src, user_ + s * w_.span_ + off, len, rep.id, c.record);
        reading.push_back(c);
    }

    // A chunk's read has completed: its record written since its post, by now.
    bool completed(const Chunk& c) const {
        sc_time at;
        return app_.record_written(c.record, at) && at > c.posted && at <= app_.now();
    }

    // The client's word that its read of slot s's request (or of a chunk of
    // it) is done, with the bytes it moved.
    void say_done(std::uint32_t s, std::uint64_t id, std::uint64_t bytes) {
        const std::uint64_t da = reqbuf_ + s * kMsgs + sizeof(Wire) + sizeof(ReadReply);
        const Done d{id, bytes};
        app_.debug_write(da, reinterpret_cast<const unsigned char*>(&d), sizeof(Done));
        ep_.send(srv_, kDoneTag + s, da, sizeof(Done));
    }

    // The reply to slot s's request, checked, its data verified and its latency logged.
    void answer(Slot& sl, std::uint32_t s) {
        const msg::Status st = ep_.wait(sl.recv);
        ep_.wait(sl.send);
        app_.unguard(sl.guard);   // lifted already if a touch waited for the reply
        sl.guard = 0;
        const std::uint64_t wa = reqbuf_ + s * kMsgs;
        ReadReply rep;
        app_.debug_read(wa + sizeof(Wire), reinterpret_cast<unsigned char*>(&rep), reply_len_);
        if (!st.ok || rep.id != sl.w.id || rep.id >= w_.answers_.size()) {
            w_.duplicates_.inc();
            throw std::logic_error(app_.group() + ": fileserve: reply for request " + std::to_string(rep.id) +
                                   " where " + std::to_string(sl.w.id) + " was outstanding in slot " +
                                   std::to_string(s));
        }
        bool ok = rep.status == kStatusOk;
        std::uint64_t bytes = rep.bytes;
        // (An error reply in the read form: the server prepared nothing and awaits no Done.)
        if (w_.read_ && ok) bytes = w_.chunk_reads() ? pull_chunks(s, sl, rep, ok) : pull(s, sl, rep, ok);
        ++w_.answers_[rep.id];
        w_.answered_.inc();
        ++answered_;
        sl.busy = false;
        if (ok) w_.verify(app_, user_ + s * w_.span_, sl.w, bytes);
        const sc_time latency = app_.now() - sl.start;
        w_.log_.finished(app_.now(), ok, ok ? bytes : 0, &latency, static_cast<int>(w_.hops(srv_, app_.node())));
    }

    FileserveWorkload& w_;
    RdmaProcess& app_;
    msg::Endpoint& ep_;
    const unsigned index_, srv_;
    const bool kernel_;
    const std::uint64_t user_, reqbuf_, reads_, reply_len_;
    const double copy_rate_;
    std::mt19937_64 rng_;
    std::vector<Slot> slots_;
    std::uint64_t next_ = 0, answered_ = 0;
    std::vector<unsigned char> pkt_;
};

void FileserveWorkload::client(RdmaProcess& app, unsigned index) {
    msg::Endpoint& ep = *eps_[app.node()];
    rx_area_[index] = app.alloc(outstanding_ * span_, populate_, advice_);
    if (method_ == Method::KernelCopy) {
        kbuf_[index] = app.alloc_locked(outstanding_ * span_);   // the kernel's socket receive buffer
    } else if (!app.register_receive(rx_area_[index], outstanding_ * span_)) {
        throw std::runtime_error(app.group() + ": fileserve: the receive area cannot be registered");
    }
    const std::uint64_t reqbuf = app.alloc(outstanding_ * ClientLoop::kMsgs, true);
    const std::uint64_t reads =
        read_ ? app.alloc_locked(outstanding_ * reads_per_slot() * sizeof(CompletionRecord)) : 0;
    ep.setup();
    ready_and_wait(app, static_cast<unsigned>(clients_.size()) + 1);
    ep.connect(eps_);
    ClientLoop(*this, app, index, reqbuf, reads).run();
    ep.finalize();
    app.finish_registrations();
    ++done_;
    program_ended(app);
}

// fileserve.access = direct: the client read()s each request's range
// through its own kernel into its user buffer; on an FPGA without the SSD
// its page cache fills over the board network (RemoteBlock).
void FileserveWorkload::direct_client(RdmaProcess& app, unsigned index) {
    Vm& vm = *app.vm();
    std::vector<int> fds;
    for (unsigned f = 0; f < files_; ++f) {
        const VmResult r = vm.open(app.pid(), f, app.now());
        vm_done(app, r, "open()");
        fds.push_back(static_cast<int>(r.value));
    }
    if (warm_) warm(app, fds);
    const std::uint64_t user = rx_area_[index] = app.alloc(span_, populate_, advice_);
    ready_and_wait(app, static_cast<unsigned>(clients_.size()) + 1);
    if (warm_ && index == 0) log_.measured_from(app.now());
    meter_begin();
    std::mt19937_64 rng(seed_fs_ * 0x9e3779b97f4a7c15ull + index + 1);
    std::uint64_t served = 0;
    for (std::uint64_t k = 0; k < requests_; ++k) {
        const Wire w = draw(index, k, rng);
        poison(app, user, w.len, w.id);
        const sc_time t0 = app.now();
        log_.posted(t0);
        requests_c_.inc();
        const std::uint64_t got = read_file(app, fds[w.file], w.offset, w.len, user, "read()");
        slice(app, "read()", t0, describe(w, app.node()));
        ++answers_[w.id];
        answered_.inc();
        const bool ok = got == w.len;
        if (ok) {
            served_bytes_.inc(got);
            served += got;
            log_.delivered_locally(got, t0, app.now());
            verify(app, user, w, got);
        }
        const sc_time latency = app.now() - t0;
        log_.finished(app.now(), ok, ok ? got : 0, &latency);
    }
    meter_end(served);
    meter_released();
    ++done_;
    program_ended(app);
}

void FileserveWorkload::unpin_all(RdmaProcess& app, bool spare_in_use) {
    Vm& vm = *app.vm();
    for (auto it = cached_pins_.begin(); it != cached_pins_.end();) {
        if (spare_in_use && in_use_.count(*it)) {
            ++it;
            continue;
        }
        vm_done(app, vm.unpin_file(app.pid(), fds_[it->first], it->second, kPage, app.now()), "unpin");
        it = cached_pins_.erase(it);
    }
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
    // (A read() or pin short of memory may have missed pages it had no frame to read into.)
    if (ssd_bytes_.value() < missed_bytes_.value() && meter_->starved == 0)
        out.push_back({"fileserve-ssd-covers-misses", std::to_string(ssd_bytes_.value()) + " B read from the SSD for " +
                                                          std::to_string(missed_bytes_.value()) +
                                                          " B missed in the page cache"});
    if (pinned_left_ || !cached_pins_.empty() || !in_use_.empty())
        out.push_back({"fileserve-nothing-pinned", std::to_string(pinned_left_) + " page-cache pin(s) left at the end" +
                                                       (in_use_.empty() ? "" : ", pages still counted in use")});
    if (concurrent_peak_.value() > static_cast<double>(depth_))
        out.push_back({"fileserve-server-depth",
                       "the server served " + std::to_string(concurrent_peak_.value()) +
                           " requests at once, more than fileserve.server-depth = " + std::to_string(depth_)});
    if (meter_->owner == this && (meter_->ended != meter_->parties || meter_->released != meter_->parties))
        out.push_back({"fileserve-measured-phase", std::to_string(meter_->ended) + " of " +
                                                       std::to_string(meter_->parties) +
                                                       " programs ended their measured phase"});
    return out;
}

namespace {

const WorkloadKind::Declare declared([] {
    WorkloadKind k;
    k.name = "fileserve";
    k.order = 100;
    k.help =
        "fileserve: a file server on the node with the SSD's files answers clients on the other nodes "
        "(section [fileserve], fs.files)";
    k.create = [](const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job,
                  const std::vector<FileSystem*>& files) -> std::unique_ptr<Workload> {
        Workload::require_all_present(apps, "fileserve");
        return std::make_unique<FileserveWorkload>(ctx, apps, files, job);
    };
    k.declare_params = FileserveWorkload::declare_params;
    k.declare_metrics = FileserveWorkload::declare_metrics;
    k.read_refusal = WorkloadKind::built;
    k.two_sided_refusal = [](const Config&) {
        return std::string("the file server's requests go through the two-sided library already");
    };
    // (with fileserve.access = direct there are no requests)
    k.two_sided_library = [](const Config& c) { return c.string("fileserve.access") != "direct"; };
    k.guard_refusal = [](const Config& c) -> std::string {
        if (c.string("fileserve.access") == "direct")
            return "has nothing to guard with fileserve.access = direct: the clients read() the files through "
                   "their own kernels, no engine moves the data";
        if (c.string("fileserve.method") == "kernel-copy")
            return "has nothing to guard with fileserve.method = kernel-copy: the engine moves the kernels' "
                   "socket buffers, the CPUs copy the application's";
        return "";
    };
    // A few small files (fs.files is 0 by default: nothing to serve); the
    // composition matrix's smaller still. Its mechanisms: how the data
    // moves, and whether the clients ask the server at all.
    k.trial.needs = {{"fs.files", "2"}, {"fs.file-size", "64KiB"}};
    k.trial.matrix = {{"fs.files", "4"}, {"fs.file-size", "16KiB"}};
    k.trial.matrix_axes = {"fileserve.method", "fileserve.access"};
    // Each parameter's effect (tests/system/param_effect_test.cpp), on 4
    // files of 64 KiB, one client asking for 6 of them, a cold cache (so
    // that which files are asked for shows): how the data moves (copies,
    // pins, faults, packets), which files the clients ask for, whether the
    // page cache starts warm (the cold cache reads the SSD), and whether
    // they ask the server or read() the files directly over the board network.
    const WorkloadKind::Settings small{{"fs.files", "4"},
                                       {"fs.file-size", "64KiB"},
                                       {"fileserve.requests", "6"},
                                       {"fileserve.cache", "cold"},
                                       {"sim.time-limit", "1s"}};
    for (const char* param : {"fileserve.method", "fileserve.popularity", "fileserve.cache", "fileserve.access"})
        k.trial.effects.emplace_back(param, small);
    return k;
}());

}   // namespace

}   // namespace vrdmasim
