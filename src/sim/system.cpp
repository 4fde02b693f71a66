#include "src/sim/system.hpp"
#include "src/sim/link_settings.hpp"
#include "src/sim/node.hpp"
#include "src/sim/parallel/cut_mail.hpp"
#include "workloads/workload.hpp"
#include "models/common/noise.hpp"

#include "src/sim/channel_load.hpp"
#include "workloads/registry.hpp"
#include "src/sim/event_order.hpp"
#include "src/sim/roi.hpp"

#include "models/power/power.hpp"

#include <tlm_utils/tlm_quantumkeeper.h>

#include "models/interconnect/exanet_packet.hpp"
#include "library/rdma/buffer_guard.hpp"
#include "library/rdma/strategy/strategy.hpp"
#include "library/messaging/params.hpp"
#include "src/sim/thread_budget.hpp"

#include <algorithm>

namespace vrdmasim {

using sc_core::sc_time;

TopologyParams::TopologyParams()
    : set("topology", "which nodes exist and how they are wired"),
      kind(set.choice("kind", "qfdb", {"qfdb", "mezzanine", "torus"},
                      "qfdb: the FPGAs of one Quad-FPGA Daughter Board, fully connected (QFDB paper); "
                      "mezzanine: 4 QFDBs in a ring, 16 MPSoCs (INFN ExaNeSt page); torus: x*y*z QFDBs "
                      "in a 3-D torus, F1 of each board holding its links (arXiv 2307.09371)")),
      nodes(set.integer("nodes", "2", "MPSoCs (FPGAs) of the QFDB that take part (kind = qfdb only)").range("2", "4")),
      x(set.integer("x", "1", "QFDBs along x (kind = torus only; a dimension of 1 has no links)").range("1", "64")),
      y(set.integer("y", "1", "QFDBs along y (kind = torus only)").range("1", "64")),
      z(set.integer("z", "1", "QFDBs along z (kind = torus only)").range("1", "64")) {}

void System::declare_params(ParamRegistry& reg) {
    reg.add(params_of<SimParams>().set);
    reg.add(params_of<TopologyParams>().set);
    Link::declare_params(reg);
    // Section [ni]'s translation keys, next to the link's (NetVM's NI).
    ShadowTranslator::declare_params(reg);
    ShadowPager::declare_params(reg);
}

void declare_all_params(ParamRegistry& reg) {
    System::declare_params(reg);
    Workload::declare_params(reg);
    RdmaParams::declare_params(reg);
    MsgParams::declare_params(reg);
    Pldma::declare_params(reg);
    Router::declare_params(reg);
    Bus::declare_params(reg);
    Dram::declare_params(reg);
    Smmu500::declare_params(reg);
    CpuCores::declare_params(reg);
    Ssd::declare_params(reg);
    FileSystem::declare_params(reg);
    Vm::declare_params(reg);
    SmmuDriver::declare_params(reg);
    FaultLibrary::declare_params(reg);
    MemoryHog::declare_params(reg);
    PowerModel::declare_params(reg);
    NoiseParams::declare_params(reg);
    RoiParams::declare_params(reg);
}

std::string workload_trials_json() { return workload_kinds::trials_json(); }

void System::resolve(Config& c) {
    // What the registration strategy implies of the machine, and why
    // (library/rdma/strategy: its declaration).
    const StrategyKind& k = registration_strategies::of(c);
    const std::string strategy = "rdma.strategy = " + c.text(params_of<StrategyParams>().strategy);
    const std::string& why = k.implies_why;
    for (const StrategyKind::Setting& n : k.implies) {
        const ParamDecl* d = c.registry().find(n.key);
        if (!d)
            throw std::logic_error("rdma.strategy = " + k.name + " implies " + n.key + ", which is not a parameter");
        const bool holds =
            d->type == ParamType::Bool ? c.boolean(n.key) == parse_bool(n.value) : c.string(n.key) == n.value;
        if (holds) continue;
        if (c.origin(n.key) == "default") {
            c.set(n.key, n.value, "implied by " + strategy);
            continue;
        }
        throw ConfigError(strategy + " (from " + c.origin(params_of<StrategyParams>().strategy) + ") needs " + n.key +
                          " = " + n.value + ", but " + c.describe(n.key) + ": " + why + ". Set " + n.key + " = " +
                          n.value + " (or leave it out), or choose another rdma.strategy");
    }
}

namespace {
// rdma.buffer-guard = mprotect needs what it is built on: processes in a Vm
// whose engine translates through the SMMU (the privileged transactions),
// and the one workload whose library paths guard (overlap: RdmaProcess::send, get).
void check_buffer_guard(const Config& c) {
    if (!buffer_guard_on(c)) return;
    const std::string why = " (" + c.describe(params_of<RdmaParams>().buffer_guard) + ")";
    if (!c[params_of<SmmuParams>().enabled])
        throw c.refuse(params_of<RdmaParams>().buffer_guard,
                       "needs smmu.enabled = true: the guard is an mprotect of the process's page tables that the "
                       "SMMU walks with privileged transactions");
    if (shadow_translation(c))
        throw c.refuse(params_of<RdmaParams>().buffer_guard,
                       "needs ni.translation = smmu: NetVM's shadow table has no access-permission bits for a "
                       "privileged engine to keep" +
                           why);
    // Every one-sided transfer goes through the library's send and get,
    // which guard and lift; the two-sided library guards a request's user
    // buffer from isend or irecv to completion; the file server guards each
    // source it posts until its record, a client its slot until the reply.
    // The lock workload's engine operations are atomics on words the
    // library owns; the file server's kernel-copy moves kernel socket
    // buffers, and direct access moves nothing through the engine: no
    // buffer of the application is in flight for a guard to keep it off.
    // (docs/composition.md, the refusal table.)
    const WorkloadKind& k = workload_kinds::of(c);
    if (const std::string why = k.guard_refusal ? k.guard_refusal(c) : ""; !why.empty())
        throw c.refuse(params_of<RdmaParams>().buffer_guard, why);
}

// rdma.prefetch = advise makes pages of the processes' mappings present:
// it needs processes in the VM (the SMMU, or physical-address mode).
void check_prefetch(const Config& c) {
    if (!prefetch_on(c) || c[params_of<SmmuParams>().enabled] || physical_mode(c)) return;
    throw c.refuse(params_of<RdmaParams>().prefetch,
                   "has nothing to prefetch with smmu.enabled = false and rdma.strategy = " +
                       c.text(params_of<StrategyParams>().strategy) +
                       ": buffers are physically contiguous DMA memory, always present");
}
}   // namespace

void System::check_processes(const Config& c) {
    const auto procs = static_cast<std::uint64_t>(c[params_of<NodeParams>().processes]);
    const auto per = static_cast<std::uint64_t>(c[params_of<RdmaParams>().channels]);
    const auto channels = static_cast<std::uint64_t>(c[params_of<PldmaParams>().channels]);
    if (procs * per > channels)
        throw c.refuse(procs > 1 ? params_of<NodeParams>().processes : params_of<RdmaParams>().channels,
                       "node.processes x rdma.channels = " + std::to_string(procs * per) + " channels per node, but " +
                           c.describe(params_of<PldmaParams>().channels) +
                           ": each process needs channels of its own. Raise dma.channels or lower the others");
    if (procs > Smmu500::kContextBanks)
        throw c.refuse(params_of<NodeParams>().processes,
                       "the SMMU has " + std::to_string(Smmu500::kContextBanks) + " context banks, one per process");
    if (procs > 1 && !c[params_of<SmmuParams>().enabled])
        throw c.refuse(params_of<NodeParams>().processes,
                       "needs smmu.enabled = true: without the SMMU the engine has no stream IDs to tell the "
                       "processes apart and buffers are physical memory of one process");
    if (static_cast<std::uint64_t>(c[params_of<WorkloadParams>().cold_jobs]) > procs)
        throw c.refuse(params_of<WorkloadParams>().cold_jobs,
                       "names more jobs than there are (" + c.describe(params_of<NodeParams>().processes) + ")");
    // The two-sided library (an endpoint per process, statistics under the
    // process's group) watches one channel's completion count: one channel
    // per process.
    const bool one_channel = workload_kinds::of(c).one_channel;
    const bool two_sided = c[params_of<WorkloadParams>().two_sided];
    if (per > 1 && (one_channel || two_sided))
        throw c.refuse(params_of<RdmaParams>().channels,
                       "the two-sided library posts on and counts the completions of one channel, so " +
                           (one_channel ? c.describe(params_of<WorkloadParams>().kind)
                                        : c.describe(params_of<WorkloadParams>().two_sided)) +
                           " needs rdma.channels = 1");
    const auto axi = static_cast<std::uint64_t>(c[params_of<PldmaParams>().axi_id]);
    if (axi + procs - 1 > 63)
        throw c.refuse(params_of<NodeParams>().processes,
                       "process p's channels carry AXI ID dma.axi-id + p, at most 63, but " +
                           c.describe(params_of<PldmaParams>().axi_id));
}

void System::check_packet_fits(const Config& c, const Topology& t) {
    // The largest data packet carries min(dma.packet-size, dma.block-size,
    // workload.message-size) bytes (a message is read in blocks, a block cut
    // into packets); control and response packets carry at most 24 B (4
    // flits). A link forwards a packet only once its far-end buffer (per VC)
    // has room for the whole of it.
    auto named = [&](const std::string& key) { return c.describe(key); };
    std::uint64_t payload = c[params_of<PldmaParams>().packet_size];
    std::string by = "dma.packet-size";
    if (c[params_of<PldmaParams>().block_size] < payload)
        payload = c[params_of<PldmaParams>().block_size], by = "dma.block-size";
    // The messages' size where the kind reads it (synthetic traffic's is its own).
    const std::vector<std::string>& reads = workload_kinds::of(c).reads;
    const SizeParam& message_size = params_of<WorkloadParams>().message_size;
    const std::uint64_t msg =
        std::find(reads.begin(), reads.end(), message_size.name()) != reads.end() ? c[message_size] : 0;
    if (msg > 0 && msg < payload) payload = msg, by = "workload.message-size";
    const std::uint64_t flits = std::max<std::uint64_t>(2 + (payload + kFlitBytes - 1) / kFlitBytes, 4);
    const std::uint64_t need = flits * kFlitBytes;
    std::vector<std::string> sections{"ni"};
    bool local = false, ring = false;
    for (unsigned i = 0; i < t.size(); ++i)
        for (unsigned k = 1; k < t.port_count(i); ++k) (t.port(i, k).dim == Topology::kLocal ? local : ring) = true;
    if (local) sections.push_back("link");
    if (ring) sections.push_back(t.kind() == TopologyKind::Mezzanine ? "mezz-link" : "board-link");
    for (const std::string& s : sections) {
        const std::string key = s + ".buffer";
        const std::uint64_t held = c.size(key) / kFlitBytes;
        if (held * kFlitBytes >= need) continue;
        const std::string what = by == "dma.packet-size" ? named(by) : named(by) + " with " + named("dma.packet-size");
        throw ConfigError(what + " makes packets of " + std::to_string(payload) + " B of payload, " +
                          std::to_string(flits) + " flits of 16 B with header and footer (" + std::to_string(need) +
                          " B), but " + named(key) + " holds " + std::to_string(held) +
                          " flits per VC: a packet must fit in it whole, so none could ever be sent. Raise " + key +
                          " to at least " + std::to_string(need) + "B, or lower " + by + " to at most " +
                          (held >= 3 ? std::to_string((held - 2) * kFlitBytes) + "B" : std::string("what it holds")));
    }
}

void System::check_files(const Config& c) const {
    if (!FileSystem::configured(c)) return;
    if (static_cast<unsigned>(c[params_of<FsParams>().ssd_fpga]) >= topology_.fpgas_per_board())
        throw c.refuse(params_of<FsParams>().ssd_fpga,
                       "the board has " + std::to_string(topology_.fpgas_per_board()) + " FPGAs");
    // The SSD's data go to the board's other nodes in packets of
    // dma.packet-size through the NI links and the board's links.
    const std::uint64_t need =
        (2 + (c[params_of<PldmaParams>().packet_size] + kFlitBytes - 1) / kFlitBytes) * kFlitBytes;
    for (const std::string key : {"ni.buffer", "link.buffer"})
        if (c.size(key) < need)
            throw c.refuse(params_of<PldmaParams>().packet_size,
                           "the SSD's data packets to the board's other nodes take " + std::to_string(need) +
                               " B with header and footer, more than " + key + " = " + std::to_string(c.size(key)) +
                               " B holds (fs.files > 0)");
}

void System::share_files(const SimContext& ctx) {
    if (!FileSystem::configured(ctx.config)) return;
    // The node of FPGA fs.ssd-fpga of each board serves first, then the
    // board's other nodes connect to it.
    const auto ssd_fpga = static_cast<unsigned>(ctx.config[params_of<FsParams>().ssd_fpga]);
    auto server_of = [&](unsigned i) {
        Coord at = topology_.coord(i);
        at.f = ssd_fpga;
        if (!topology_.contains(at))
            throw std::logic_error("topology: no FPGA " + std::to_string(ssd_fpga) + " on the board of " +
                                   topology_.name(i));
        return topology_.node_of(at);
    };
    // A board is on one rank, whole: its server is where its nodes are.
    for (unsigned i = 0; i < nodes_.size(); ++i)
        if (present(i) && server_of(i) == i) nodes_[i]->share_files(ctx, *nodes_[i], coord(i));
    for (unsigned i = 0; i < nodes_.size(); ++i)
        if (present(i) && server_of(i) != i) nodes_[i]->share_files(ctx, *nodes_[server_of(i)], coord(i));
}

Topology System::topology_from(const Config& c) {
    const std::string kind = c[params_of<TopologyParams>().kind];
    auto refuse = [&](const std::string& key, const std::string& why) { return c.refuse(key, why); };
    // A key of another kind may keep its default (a run's config.ini lists
    // every key), but any other value is a mistake.
    const auto given = [&](const char* key) {
        return c.origin(key) != "default" && c.integer(key) != std::stoll(c.registry().find(key)->default_text);
    };
    if (kind != "qfdb" && given("topology.nodes"))
        throw refuse("topology.nodes",
                     "applies to topology.kind = qfdb only; a " + kind + " has 4 MPSoCs on each of its QFDBs");
    if (kind != "torus")
        for (const char* k : {"topology.x", "topology.y", "topology.z"})
            if (given(k)) throw refuse(k, "applies to topology.kind = torus only (topology.kind = " + kind + ")");
    if (kind == "qfdb" && adaptive_routing(c))
        throw refuse("router.routing",
                     "adaptive routing chooses among the torus dimensions of the F1 routers: it "
                     "needs topology.kind = torus with 2 or more QFDBs (" +
                         c.describe(params_of<TopologyParams>().kind) + ")");
    if (kind == "qfdb") return Topology::qfdb(static_cast<unsigned>(c[params_of<TopologyParams>().nodes]));
    Topology t = kind == "mezzanine" ? Topology::mezzanine()
                                     : Topology::torus(static_cast<unsigned>(c[params_of<TopologyParams>().x]),
                                                       static_cast<unsigned>(c[params_of<TopologyParams>().y]),
                                                       static_cast<unsigned>(c[params_of<TopologyParams>().z]));
    bool rings = false;
    for (int d = Topology::X; d <= Topology::Z; ++d) rings = rings || t.extent(d) >= 3;
    if (adaptive_routing(c)) {
        if (kind != "torus" || !t.multi_board())
            throw refuse("router.routing",
                         "adaptive routing chooses among the torus dimensions of the F1 "
                         "routers: it needs topology.kind = torus with 2 or more QFDBs (" +
                             c.describe(params_of<TopologyParams>().kind) + ")");
        if (!time_ordered_links(c) && !exact_links(c))
            throw refuse("router.link-order",
                         "router.routing = adaptive needs links served in time order: packets of one transfer "
                         "take different paths and overtake where they meet, which first come first served by "
                         "call would undo (router.link-order = exact or time-approximate)");
        if (c[params_of<RouterParams>().vcs] < 3)
            throw refuse("router.vcs",
                         "router.routing = adaptive needs at least 3 virtual channels: VCs 0 and 1 "
                         "are the dimension-order escape channels (dateline), 2 and up adaptive");
        if (!c.boolean("dma.fault-tolerant"))
            throw refuse("dma.fault-tolerant",
                         "router.routing = adaptive delivers the packets of one transfer out of sequence (they "
                         "take different paths), and the original engine's receiver marks a transfer whose packet "
                         "comes out of sequence as failed (models/dma/README.md, *Protocol*): adaptive routing "
                         "needs the fault-tolerant engine's receiver, which takes them in any order "
                         "(dma.fault-tolerant = true, the default)");
    }
    if (rings && c[params_of<RouterParams>().vcs] < 2)
        throw refuse("router.vcs", "a " + kind +
                                       " with rings of 3 or more boards needs at least 2 virtual "
                                       "channels for its dateline (deadlock avoidance)");
    return t;
}

System::System(const SimContext& ctx) : System(ctx, 1, 0) {}

System::~System() = default;

Node& System::node(std::size_t i) { return *nodes_[i]; }

Workload& System::workload() { return *workloads_.front(); }

const LinkParams& System::params_of_link(std::size_t i) const { return link_params_.at(i); }

System::System(const SimContext& ctx, unsigned ranks, unsigned rank)
    : config_(&ctx.config),
      topology_(topology_from(ctx.config)),
      time_limit_(ctx.config[params_of<SimParams>().time_limit]) {
    // Its form is checked in one process too (which ignores it), so that a
    // configuration meant for N ranks does not carry a value N ranks refuse.
    Partition::check_spec(ctx.config[params_of<SimParams>().partition]);
    if (ranks > 1) {
        partition_ = Partition::choose(topology_, ranks, rank, ctx.config[params_of<SimParams>().partition]);
        check_partitioned(ctx.config);
        mail_ = std::make_unique<CutMail>(ranks, rank);
    }
    if (sc_core::sc_get_time_resolution() != sc_time(1, sc_core::SC_PS))
        throw std::logic_error("vrdmasim needs SystemC's default 1 ps time resolution");
    tlm_utils::tlm_quantumkeeper::set_global_quantum(ctx.config[params_of<SimParams>().quantum]);
    // Before anything is built: the kernel's heap must order every
    // notification of this run alike.
    event_order::set(event_order::parse(ctx.config[params_of<SimParams>().event_order]),
                     static_cast<std::uint64_t>(ctx.config[params_of<SimParams>().event_order_seed]));
    const Config& c = ctx.config;
    const unsigned n = topology_.size();
    // The trace's groups are numbered in node order, on every rank alike
    // (each rank makes only its nodes' tracks), and its ids are unique
    // across ranks (docs/trace.md "Order and numbering").
    {
        std::vector<std::string> groups;
        groups.reserve(n);
        for (unsigned i = 0; i < n; ++i) groups.push_back(topology_.name(i));
        ctx.tracer.set_group_order(groups);
        ctx.tracer.set_rank(rank);
    }
    check_packet_fits(c, topology_);
    check_processes(c);
    check_buffer_guard(c);
    check_prefetch(c);
    check_shadow_config(c, n, registration_strategies::of(c).redirects_faulted_packets);
    check_physical(c);
    check_files(c);
    PowerModel{c};   // its settings, checked before the run rather than by its energy at the end
    if (c[params_of<DramParams>().size] < address_map::kHeapBase + (2ull << 20))
        throw c.refuse(params_of<DramParams>().size, "must exceed the 256 MiB kept for the kernel by at least 2 MiB");
    build_nodes(ctx);
    if (physical_mode(c))
        for (auto& node : nodes_) node->attach_physical(ctx, keys_);
    share_files(ctx);
    build_links(ctx);
    if (exact_links(c)) use_hops();
    smmu_enabled_ = c[params_of<SmmuParams>().enabled];
    build_jobs(ctx);
    stop_daemons_when_done();
    if (partition_.split())
        for (const auto& w : workloads_)
            if (std::string why = w->partition_refusal(); !why.empty())
                throw ConfigError("a partitioned run (" + std::to_string(ranks) +
                                  " MPI ranks) cannot give the "
                                  "one-process results of this workload: " +
                                  why);
}

void System::use_hops() {
    if ((*config_)[params_of<LinkSections>().handoff] == "message")
        throw config_->refuse(
            params_of<LinkSections>().handoff,
            "applies to router.link-order = time-approximate and call-approximate: in exact time order a board "
            "link cut between the ranks of a partitioned run gives the figures of one process "
            "without it (models/interconnect/README.md, *Exact time order: cut links*)");
    hops_ = std::make_unique<HopQueue>("hops");
    // Numbered in node order, then the links between nodes, as the topology
    // orders them (on every rank alike, whatever it simulates): the numbers
    // break ties among same-time events.
    const auto n = static_cast<std::uint32_t>(nodes_.size());
    for (std::uint32_t i = 0; i < n; ++i) {
        if (!nodes_[i]) continue;
        nodes_[i]->inject.use_hops(*hops_, 2 * i);
        nodes_[i]->eject.use_hops(*hops_, 2 * i + 1);
    }
    for (std::size_t j = 0; j < links_.size(); ++j)
        if (links_[j]) links_[j]->use_hops(*hops_, 2 * n + static_cast<std::uint32_t>(j));
    // The far ends here of links cut between ranks (their near ends were
    // given the mail's port when they were built).
    for (auto& end : hop_far_ends_) end->attach(*hops_, 2 * n + end->far().number());
}

void System::window_ends_at(sc_time end) {
    if (hops_) hops_->serve_before(end);
}

Node& System::any_node() {
    for (auto& n : nodes_)
        if (n) return *n;
    throw std::logic_error("System: no node on this rank");
}

void System::check_partitioned(const Config& c) const {
    const std::string why =
        "; a partitioned run must give what one process gives, whatever the partition "
        "(docs/scaling.md \"The same results for any partitioning\")";
    // Exact time order gives the same figures with or without cut links
    // and under every order of same-time events (hop_cut.hpp): it needs
    // neither setting.
    const bool exact = exact_links(c);
    if (!exact && c[params_of<LinkSections>().handoff] != "message")
        throw c.refuse(params_of<LinkSections>().handoff,
                       "must be message in a partitioned run: the boards of two ranks meet only through messages "
                       "on their links, and its one-process reference runs every board link so" +
                           why);
    if (!exact && c[params_of<SimParams>().event_order] != "keyed")
        throw c.refuse(params_of<SimParams>().event_order,
                       "must be keyed in a partitioned run: a rank's kernel holds other events than the "
                       "one-process run's, and SystemC's own order of same-time events depends on them" +
                           why);
    if (!exact && !time_ordered_links(c))
        throw c.refuse(
            params_of<RouterParams>().link_order,
            "must be exact or time-approximate in a partitioned run: first come, first served by call order depends on "
            "which process runs first, which a rank decides otherwise than one process" +
                why);
    if (physical_mode(c))
        throw ConfigError(
            "a partitioned run of physical-address mode (smmu.enabled = false with a registration "
            "strategy) is not built: its key table is read by every sender" +
            why);
}

void System::build_nodes(const SimContext& ctx) {
    const unsigned n = topology_.size();
    // One node index -> coordinate table for every PLDMA (an entry per node:
    // a copy each would cost nodes² words).
    const auto coords = std::make_shared<const std::vector<std::uint32_t>>(topology_.coord_words());
    const std::size_t stats_before = ctx.stats.registered();
    // A partitioned run's rank builds its own boards' nodes only.
    unsigned here = 0;
    for (unsigned i = 0; i < n; ++i) here += partition_.present(i) ? 1 : 0;
    bool first = true;
    for (unsigned i = 0; i < n; ++i) {
        if (!partition_.present(i)) {
            nodes_.push_back(nullptr);
            continue;
        }
        nodes_.push_back(std::make_unique<Node>(topology_.name(i).c_str(), ctx, i, topology_, coords));
        // Every node has the threads of the first: a system whose stacks the
        // host cannot map is refused now, not after minutes (thread_budget.hpp).
        // And the statistics of the first: the name index is sized once for
        // all nodes (rehashing it as it grows was a tenth of elaboration).
        if (first) {
            first = false;
            check_thread_budget(thread_processes_under(*nodes_[i]), here,
                                "a system of " + std::to_string(here) + " nodes");
            ctx.stats.reserve(stats_before + (ctx.stats.registered() - stats_before) * here);
        }
    }
}

bool System::varies(const Config& c) { return NoiseParams::any(c); }

std::string System::workload_findings(const Config& c, const StatRegistry& stats) {
    return workload_kinds::findings(c, stats);
}

std::map<std::string, std::string> System::settings_not_used(const Config& c) {
    std::map<std::string, std::string> out;
    for (const Workload::Unread& u : Workload::unread_settings(c))
        if (u.earlier) out[u.param] = u.why;
    return out;
}

std::string System::model_warnings(const Config& c, const StatRegistry& stats) {
    return Router::contention_warning(c, stats) + CpuCores::order_warning(stats);
}

void System::build_links(const SimContext& ctx) {
    const Config& c = ctx.config;
    const unsigned n = topology_.size();
    // Router ports as topology.hpp numbers them: 0 the NI, then the other
    // FPGAs of the board (class `link`), then on F1 the off-board links
    // (`mezz-link` on a mezzanine, `board-link` on a torus). Every link's far
    // end has router.vcs buffers.
    const unsigned vcs = static_cast<unsigned>(c[params_of<RouterParams>().vcs]);
    LinkParams board = link_params(c, params_of<LinkSections>().link);
    LinkParams ring =
        link_params(c, topology_.kind() == TopologyKind::Mezzanine ? params_of<LinkSections>().mezz_link
                                                                   : params_of<LinkSections>().board_link);
    board.vcs = ring.vcs = vcs;
    // board-link.handoff = message: every link between two boards is a cut
    // link (on a mezzanine its ring edges, class mezz-link).
    ring.handoff = c[params_of<LinkSections>().handoff] == "message";
    // A cut link's far end delivers in a thread of its own, which must
    // return the packet's credit before it may wait for another's: the
    // engines answer from their control threads.
    // (In exact time order a far end only posts an arrival: nothing waits.)
    if (ring.handoff && !ring.exact && topology_.kind() != TopologyKind::Qfdb)
        for (auto& node : nodes_)
            if (node) node->dma.respond_from_thread();
    // Output port k of node i: links_out[i][k] (its number number_out[i][k]).
    std::vector<std::vector<Link*>> links_out(n);
    std::vector<std::vector<std::uint32_t>> number_out(n);
    build_link_outputs(ctx, board, ring, links_out, number_out);
    bind_link_inputs(ctx, board, ring, links_out, number_out);
    const std::size_t cut = check_cut_link_threads();
    // What the workloads share across nodes is released a cut link's
    // latency after its latest arrival when the boards meet only at cut
    // links: the time a partitioned run's window loop can release it at
    // (docs/scaling.md, "What the workloads share across nodes").
    // In exact time order the same with or without cut links, so that one
    // process gives what a partitioned run gives (a board link's cut
    // changes no other figure there: hop_cut.hpp).
    sync_ = std::make_unique<GlobalSync>(ring.latency,
                                         cut > 0 || partition_.split() || (ring.exact && topology_.multi_board()));
}

// The links that leave each node, bound to its router's outputs in port
// order. On a partitioned run's rank: the links that leave its nodes (null
// elsewhere), numbered as in one process; a link to another rank's node has
// its near end only here, reached through the cut mail.
void System::build_link_outputs(const SimContext& ctx, const LinkParams& board, const LinkParams& ring,
                                std::vector<std::vector<Link*>>& links_out,
                                std::vector<std::vector<std::uint32_t>>& number_out) {
    const unsigned n = topology_.size();
    for (unsigned i = 0; i < n; ++i) {
        const unsigned ports = topology_.port_count(i);
        links_out[i].assign(ports, nullptr);
        number_out[i].assign(ports, 0);
        for (unsigned k = 1; k < ports; ++k) {
            const Topology::Port p = topology_.port(i, k);
            const std::string a_group = topology_.name(i), b_group = topology_.name(p.to);
            LinkParams lp = p.dim == Topology::kLocal ? board : ring;
            lp.number = static_cast<std::uint32_t>(links_.size());   // names a cut link in its messages
            number_out[i][k] = lp.number;
            link_to_.push_back(p.to);
            link_names_.push_back(a_group + "_to_" + b_group);
            link_params_.push_back(lp);
            if (p.dim != Topology::kLocal) lookahead_ = ring.latency;
            if (!present(i)) {
                links_.push_back(nullptr);
                continue;
            }
            Node& a = *nodes_[i];
            lp.far_elsewhere = !present(p.to);
            links_.push_back(
                std::make_unique<Link>((a_group + "_to_" + b_group).c_str(), ctx, lp, a.group, "link->" + b_group));
            links_out[i][k] = links_.back().get();
            a.router.out.bind(links_out[i][k]->in);
            a.router.set_output_link(k, links_out[i][k]);
            if (lp.far_elsewhere) {
                links_out[i][k]->connect_far(mail_->packets_to(partition_.rank_of_node(p.to), lp.number));
                mail_->near_end(lp.number, links_out[i][k]->cut_near_end());
            }
        }
    }
}

// Each node's router inputs: input port k of node j comes from the node its
// output port k leads to. A link from another rank's node has its far end
// here (a RemoteHopLink in exact time order, else a RemoteLink's
// CutLinkEnd), reached through the cut mail.
void System::bind_link_inputs(const SimContext& ctx, const LinkParams& board, const LinkParams& ring,
                              const std::vector<std::vector<Link*>>& links_out,
                              const std::vector<std::vector<std::uint32_t>>& number_out) {
    for (unsigned j = 0; j < topology_.size(); ++j) {
        if (!present(j)) continue;
        Node& b = *nodes_[j];
        for (unsigned k = 1; k < topology_.port_count(j); ++k) {
            const unsigned i = topology_.port(j, k).to;
            const int back = topology_.port_to(i, j);
            if (back < 0) throw std::logic_error("topology: no link back from " + topology_.name(i));
            if (present(i)) {
                Link& l = *links_out[i][static_cast<unsigned>(back)];
                l.connect(b.router);
                b.router.set_input_buffer(k, l.params().buffer_flits, l.params().vcs);
                continue;
            }
            // The link's near end is on another rank: its far end here.
            const Topology::Port p = topology_.port(i, static_cast<unsigned>(back));
            const LinkParams lp = p.dim == Topology::kLocal ? board : ring;
            const std::uint32_t number = number_out[i][static_cast<unsigned>(back)];
            if (lp.exact) {
                hop_far_ends_.push_back(std::make_unique<RemoteHopLink>((topology_.name(i) + "_to_" + b.group).c_str(),
                                                                        number, lp.latency));
                RemoteHopLink& end = *hop_far_ends_.back();
                end.connect(b.router);
                end.far().reply_to(mail_->credits_to(partition_.rank_of_node(i), number));
                mail_->far_end(number, end.far());
                b.router.set_input_buffer(k, lp.buffer_flits, lp.vcs);
                continue;
            }
            far_ends_.push_back(std::make_unique<RemoteLink>((topology_.name(i) + "_to_" + b.group).c_str(), number,
                                                             ctx, lp.vcs, lp.latency));
            CutLinkEnd& end = far_ends_.back()->end;
            end.connect(b.router);
            end.far().reply_to(mail_->credits_to(partition_.rank_of_node(i), number));
            mail_->far_end(number, end.far());
            b.router.set_input_buffer(k, lp.buffer_flits, lp.vcs);
        }
    }
}

// Each cut link has a delivery thread per VC (spawned at its VC's first
// packet): counted with the nodes', spread over them, against the thread
// budget. Returns the cut links.
std::size_t System::check_cut_link_threads() const {
    std::size_t cut = 0, delivery = 0, here = 0;
    const Node* some = nullptr;
    for (const auto& node : nodes_)
        if (node) ++here, some = some ? some : node.get();
    for (const auto& l : links_)
        if (l && l->cut_far()) ++cut, delivery += thread_processes_under(*l);
    for (const auto& e : far_ends_) ++cut, delivery += thread_processes_under(*e);
    if (cut > 0 && some)
        check_thread_budget(thread_processes_under(*some) + (delivery + here - 1) / here, here,
                            "a system of " + std::to_string(here) + " nodes and " + std::to_string(cut) + " cut links");
    return cut;
}

void System::build_jobs(const SimContext& ctx) {
    const Config& c = ctx.config;
    // Job p: process p of every node, running its own copy of the workload.
    const unsigned jobs = static_cast<unsigned>(c[params_of<NodeParams>().processes]);
    // Each node's file system for the fileserve workload (Node::file_system()
    // on a node that has one; nullptr elsewhere).
    std::vector<FileSystem*> files;
    if (FileSystem::configured(c))
        for (auto& node : nodes_) files.push_back(node && node->fs ? &node->file_system() : nullptr);
    for (unsigned p = 0; p < jobs; ++p) {
        std::vector<RdmaProcess*> apps;   // null: a node on another rank
        for (auto& node : nodes_) apps.push_back(node ? &node->process(p) : nullptr);
        workloads_.push_back(Workload::create(ctx, apps, p, files));
        workloads_.back()->set_hops([this](unsigned a, unsigned b) { return hops(a, b); });
        // A node's board: node index = board * FPGAs per board + FPGA (topology.hpp).
        workloads_.back()->set_boards([this](unsigned n) { return n / topology_.fpgas_per_board(); });
        // What the jobs measure once together (the file server's node-wide figures).
        workloads_.back()->join(*workloads_.front());
        // A workload may check its job's operations against the completions
        // the engines counted on that job's channels alone (the lock workload).
        workloads_.back()->count_engine_completions([this, p] {
            std::uint64_t n = 0;
            for (auto& node : nodes_) {
                if (!node) continue;
                const RdmaProcess& a = node->process(p);
                for (unsigned k = 0; k < a.channel_count(); ++k) n += node->dma.tx_signal(a.channel() + k).raised();
            }
            return n;
        });
    }
    wire_network_observers(ctx);
}

void System::wire_network_observers(const SimContext& ctx) {
    std::vector<Workload*> jobs;
    bool any = false;
    for (const auto& w : workloads_) {
        jobs.push_back(w->observes_network() ? w.get() : nullptr);
        any = any || jobs.back();
    }
    if (!any) return;
    channels_ = std::make_shared<const ChannelModel>(ctx.config);
    std::shared_ptr<const ChannelModel> model = channels_;
    for (Workload* w : jobs)
        if (w)
            w->set_network(model->ni_flit(), [model](unsigned src, unsigned dst, std::uint64_t flits) {
                return model->zero_load(src, dst, flits);
            });
    // A data packet belongs to the job of its protection domain (domain_of_job).
    for (auto& node : nodes_) {
        if (!node) continue;
        node->dma.on_data_arrival([jobs](const ExanetPacket& p, sc_core::sc_time tail) {
            if (p.header.pdid == 0) return;
            const unsigned job = p.header.pdid - 1u;
            if (job < jobs.size() && jobs[job])
                jobs[job]->packet_arrived(p.src_node, p.dst_node, p.header.dst_va, p.flits(), p.header.size, p.injected,
                                          tail);
        });
    }
}

void System::end_run() {
    for (auto& node : nodes_)
        if (node) node->cpu.end_run(sc_core::sc_time_stamp());
    // Exact time order: the routers' accounting of the arrivals made ahead
    // that were due by the end (none left where every packet was
    // delivered; a run stopped by sim.time-limit may leave some).
    if (hops_) {
        const sc_core::sc_time t = std::max(sc_core::sc_time_stamp(), hops_->time());
        for (auto& node : nodes_)
            if (node) node->inject.settle_ahead_until(t);
        for (const auto& l : links_)
            if (l) l->settle_ahead_until(t);
    }
}

void System::stop_daemons_when_done() {
    // The kernel's daemons run until every program of every job has ended,
    // so that the simulation ends when nothing is left to do: one
    // rendezvous of all of them, then each job's start barrier, registered
    // in this order on every rank.
    std::uint64_t programs = 0;
    for (auto& w : workloads_) programs += w->programs();
    end_rv_ = sync_->rendezvous("end", programs);
    for (auto& w : workloads_) w->set_global_sync(*sync_, end_rv_);
    sync_->on_release(end_rv_, [this] {
        for (auto& node : nodes_) {
            if (!node) continue;   // (a partitioned run's nodes of other ranks)
            node->daemons.stop();
            if (node->hog) node->hog->stop();
        }
        if (all_finished_fired_) return;
        all_finished_fired_ = true;
        for (auto& fn : all_finished_) fn();
    });
}

}   // namespace vrdmasim
