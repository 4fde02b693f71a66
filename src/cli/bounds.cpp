// `vrdmasim bounds`: the synthetic traffic's bounds on a configuration's
// network, from the simulator's own routing function (src/sim/channel_load.hpp).
#include "src/cli/bounds.hpp"
#include "src/cli/run.hpp"

#include <algorithm>
#include <iomanip>
#include <iostream>
#include <sstream>

#include <boost/program_options.hpp>

#include "src/core/metrics.hpp"
#include "src/sim/channel_load.hpp"
#include "src/sim/system.hpp"

namespace vrdmasim {

namespace po = boost::program_options;

namespace {

const char* const kUsage =
    "usage: vrdmasim bounds [CONFIG.ini ...] [--section.key=value ...] [--patterns LIST|all] [--channels] [--csv]\n";

std::string fixed(double v, int digits) {
    std::ostringstream os;
    os << std::fixed << std::setprecision(digits) << v;
    return os.str();
}

std::vector<synthetic::Pattern> parse_patterns(const std::string& text) {
    std::vector<synthetic::Pattern> v;
    if (text == "all") {
        for (const std::string& n : synthetic::pattern_names()) v.push_back(synthetic::parse_pattern(n));
        return v;
    }
    std::stringstream ss(text);
    std::string item;
    while (std::getline(ss, item, ',')) {
        try {
            v.push_back(synthetic::parse_pattern(item));
        } catch (const std::invalid_argument&) {
            std::string names;
            for (const std::string& n : synthetic::pattern_names()) names += (names.empty() ? "" : ", ") + n;
            throw ConfigError("--patterns " + text + ": no pattern '" + item + "' (the patterns: " + names +
                              ", or all)");
        }
    }
    if (v.empty()) throw ConfigError("--patterns: no pattern given");
    return v;
}

// What `vrdmasim bounds` was asked (its configuration and options).
struct BoundsRequest {
    OfferedTraffic offered;   // what the configuration's workload offers
    std::vector<synthetic::Pattern> patterns;
    bool channels = false, csv = false;
};

// Reads the command line into `cfg` and `req`; an exit status if the
// command ends here (its help, or a bad configuration), else -1.
int parse_bounds_args(const std::vector<std::string>& args, Config& cfg, BoundsRequest& req) {
    // The parameters of the traffic the configuration's workload offers, by
    // name, as its declaration gives them.
    const OfferedTraffic names = offered_traffic(cfg);
    const std::string patterns_help =
        "the patterns to bound, comma-separated, or all (default: " + names.pattern_param + " of the configuration)";
    po::options_description opts("bounds options");
    opts.add_options()("help,h", "show this help")("patterns", po::value<std::string>()->value_name("LIST"),
                                                   patterns_help.c_str())(
        "channels", "also list every channel that carries traffic, the most loaded first, with its load")(
        "csv", "print one CSV row per pattern (and, with --channels, per channel) for scripts");
    po::options_description all;
    all.add(opts).add_options()("config", po::value<std::vector<std::string>>(), "");
    po::positional_options_description pos;
    pos.add("config", -1);
    try {
        po::parsed_options parsed =
            po::command_line_parser(args)
                .options(all)
                .positional(pos)
                .style(po::command_line_style::default_style & ~po::command_line_style::allow_guessing)
                .allow_unregistered()
                .run();
        po::variables_map vm;
        po::store(parsed, vm);
        po::notify(vm);
        if (vm.count("help")) {
            std::cout
                << kUsage << "For the synthetic traffic of the configuration (its topology, links, router latency,\n"
                << names.message_size_param
                << " and hot spot), each pattern's load on every channel from the\n"
                   "simulator's dimension-order routes (each message's data flits on its route, its response's\n"
                   "on the route back; in the read form the data on the route back and the read request and\n"
                   "the data's response on the route there), the offered load at which the most loaded channel is full (the\n"
                   "saturation throughput's bound, a fraction of the NI link's rate) and the zero-load\n"
                   "latency, the sum of the links', routers' and serialisation delays (workloads/README.md\n"
                   "\"Synthetic traffic\"; src/sim/channel_load.hpp). Simulates nothing.\n"
                << opts;
            return 0;
        }
        if (vm.count("config"))
            for (const auto& f : vm["config"].as<std::vector<std::string>>()) cfg.apply_file(f);
        cfg.apply_command_line(po::collect_unrecognized(parsed.options, po::exclude_positional));
        System::resolve(cfg);
        if (cfg.string("router.routing") != "dimension-order")
            throw cfg.refuse("router.routing",
                             "the bound walks the dimension-order routes (Topology::route); adaptive routing "
                             "spreads a pair's packets over several, whose share no routing function fixes");
        req.offered = offered_traffic(cfg);
        req.patterns =
            vm.count("patterns") ? parse_patterns(vm["patterns"].as<std::string>()) : std::vector{req.offered.pattern};
        req.channels = vm.count("channels") > 0;
        req.csv = vm.count("csv") > 0;
    } catch (const ConfigError& e) {
        std::cerr << "vrdmasim: error: bounds: " << e.what() << "\n";
        return kExitBadConfig;
    } catch (const po::error& e) {
        std::cerr << "vrdmasim: error: bounds: " << printable(e.what()) << "\n" << kUsage;
        return kExitBadConfig;
    }
    return -1;
}

// What the bounds are printed from.
struct BoundsOutput {
    const ChannelModel& model;
    const std::vector<PatternBound>& bounds;
    std::uint64_t bytes;   // a message's
    bool reads;   // the read form: the data comes back from the pattern's destination
    double ni;   // the NI link's rate, b/s
    // A pattern's payload at its bound, Gb/s a node.
    double payload_gbps(const ChannelModel::Bound& b) const {
        return b.theta * ni * (static_cast<double>(bytes) * 8) / (static_cast<double>(b.data_flits) * 128) / 1e9;
    }
};

void print_bounds_csv(const BoundsOutput& o, bool channels) {
    const ChannelModel& model = o.model;
    std::cout << "pattern,nodes,message_bytes,data_flits,response_flits,bound,bound_payload_gbps,bottleneck,"
                 "bottleneck_flits,zero_load_us_mean,zero_load_us_min,zero_load_us_max,refusal\n";
    for (const PatternBound& pb : o.bounds) {
        const ChannelModel::Bound& b = pb.bound;
        std::cout << synthetic::name(pb.pattern) << "," << model.topology().size() << "," << o.bytes << ",";
        if (!pb.refusal.empty()) {
            std::string why = pb.refusal;
            std::replace(why.begin(), why.end(), ',', ';');
            std::cout << ",,,,,,,,," << why << "\n";
            continue;
        }
        std::cout << b.data_flits << "," << b.response_flits << "," << format_metric(b.theta, 9) << ","
                  << format_metric(o.payload_gbps(b), 9) << "," << model.channels()[b.loads[0].channel].name << ","
                  << format_metric(b.loads[0].flits, 9) << "," << format_metric(b.zero_load_mean_us, 9) << ","
                  << format_metric(b.zero_load_min_us, 9) << "," << format_metric(b.zero_load_max_us, 9) << ",\n";
    }
    if (!channels) return;
    std::cout << "\npattern,channel,rate_gbps,flits_per_message,utilisation_at_bound\n";
    for (const PatternBound& pb : o.bounds)
        for (const ChannelModel::Load& l : pb.bound.loads)
            std::cout << synthetic::name(pb.pattern) << "," << model.channels()[l.channel].name << ","
                      << format_metric(model.channels()[l.channel].rate_bps / 1e9) << "," << format_metric(l.flits, 9)
                      << ","
                      << format_metric(pb.bound.theta / static_cast<double>(pb.bound.data_flits) * l.per_capacity, 6)
                      << "\n";
}

void print_bounds_table(const BoundsOutput& o, const std::string& kind, bool channels) {
    const ChannelModel& model = o.model;
    const Topology& t = model.topology();
    std::cout << "bounds of synthetic traffic on " << t.size() << " nodes ("
              << (kind == "torus" ? "a torus of " + std::to_string(t.extent(Topology::X)) + " x " +
                                        std::to_string(t.extent(Topology::Y)) + " x " +
                                        std::to_string(t.extent(Topology::Z)) + " QFDBs"
                  : kind == "mezzanine" ? std::string("a mezzanine")
                                        : std::string("one QFDB"))
              << "), dimension-order routes, " << o.bytes << " B messages"
              << (o.reads ? " read (each node's request to its destination, the data back; the zero-load latency "
                            "the request's route and the data's, without the responder's turnaround)"
                          : "")
              << "; NI link " << format_metric(o.ni / 1e9) << " Gb/s\n";
    std::cout << "bound: the offered load (data flits, a fraction of the NI link's rate) at which the most loaded "
                 "channel is full\n\n";
    std::cout << std::left << std::setw(16) << "pattern" << std::setw(9) << "bound" << std::setw(12) << "Gb/s/node"
              << std::setw(34) << "most loaded channel" << std::setw(18) << "flits/message"
              << "zero-load us (min-max)"
              << "\n";
    for (const PatternBound& pb : o.bounds) {
        std::cout << std::left << std::setw(16) << synthetic::name(pb.pattern);
        if (!pb.refusal.empty()) {
            std::cout << "not defined here: " << pb.refusal << "\n";
            continue;
        }
        const ChannelModel::Bound& b = pb.bound;
        std::cout << std::setw(9) << fixed(b.theta, 4) << std::setw(12) << fixed(o.payload_gbps(b), 3) << std::setw(34)
                  << model.channels()[b.loads[0].channel].name << std::setw(18) << fixed(b.loads[0].flits, 3)
                  << fixed(b.zero_load_mean_us, 4) << " (" << fixed(b.zero_load_min_us, 4) << "-"
                  << fixed(b.zero_load_max_us, 4) << ")\n";
    }
    if (!channels) return;
    for (const PatternBound& pb : o.bounds) {
        if (!pb.refusal.empty()) continue;
        const ChannelModel::Bound& b = pb.bound;
        std::cout << "\n"
                  << synthetic::name(pb.pattern) << ": " << b.data_flits << " data flits a message, "
                  << b.response_flits << (b.reads ? " of its request and response" : " of its response")
                  << "; each channel's flits per message a node sends, "
                  << "and its utilisation at the bound\n";
        for (const ChannelModel::Load& l : b.loads)
            std::cout << "  " << std::left << std::setw(34) << model.channels()[l.channel].name << std::setw(8)
                      << format_metric(model.channels()[l.channel].rate_bps / 1e9) << "Gb/s  " << std::setw(12)
                      << fixed(l.flits, 4) << fixed(b.theta / static_cast<double>(b.data_flits) * l.per_capacity, 4)
                      << "\n";
    }
}

}   // namespace

int bounds_command(const ParamRegistry& reg, const std::vector<std::string>& args) {
    Config cfg(reg);
    BoundsRequest req;
    const int status = parse_bounds_args(args, cfg, req);
    if (status >= 0) return status;
    std::vector<PatternBound> bounds;
    std::unique_ptr<ChannelModel> model;
    try {
        model = std::make_unique<ChannelModel>(cfg);
        bounds = synthetic_bounds(*model, cfg, req.patterns);
    } catch (const ConfigError& e) {
        std::cerr << "vrdmasim: error: bounds: " << e.what() << "\n";
        return kExitBadConfig;
    }
    // One pattern asked for by name and not defined here: an error.
    if (req.patterns.size() == 1 && !bounds[0].refusal.empty()) {
        std::cerr << "vrdmasim: error: bounds: " << req.offered.pattern_param << " = "
                  << synthetic::name(req.patterns[0]) << ": " << bounds[0].refusal << "\n";
        return kExitBadConfig;
    }
    const BoundsOutput out{*model, bounds, req.offered.bytes, req.offered.reads, model->ni_rate_bps()};
    if (req.csv) print_bounds_csv(out, req.channels);
    else print_bounds_table(out, cfg.string("topology.kind"), req.channels);
    return 0;
}

}   // namespace vrdmasim
