// The workloads declare themselves: each, in its own file, says what
// `workload.kind` calls it, its parameters and metrics, which other settings
// it refuses and why, and how to build it. The simulator (src/sim), the
// command line and the workload base iterate this registry and name no
// workload (issue #58; as SST's ELI registers a component in its own
// header). A workload's file declares it with a static
// `WorkloadKind::Declare`; the library vrdmasim_workloads is linked whole
// (workloads/CMakeLists.txt), so a declaration nothing else refers to is
// still in the program.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace vrdmasim {

class Config;
class FileSystem;
class MetricRegistry;
class ParamRegistry;
class RdmaProcess;
class StatRegistry;
class Workload;
struct SimContext;

struct WorkloadKind {
    // What the kind's programs run on: each node's process of the job
    // (nullptr for a node of another rank in a partitioned run), and each
    // node's file system (nullptr where it has none; empty when the run has
    // no files).
    using Factory = std::function<std::unique_ptr<Workload>(const SimContext&, const std::vector<RdmaProcess*>& apps,
                                                            unsigned job, const std::vector<FileSystem*>& files)>;
    // A reason a setting is refused for this kind ("" when it is not).
    using Refusal = std::function<std::string(const Config&)>;

    std::string name;   // workload.kind's value
    // Its place among workload.kind's choices and in the help (lower first).
    int order = 0;
    std::string help;   // "name: what it is", one sentence of workload.kind's help
    Factory create;
    // Its own sections of parameters and its summary metrics (may be empty).
    std::function<void(ParamRegistry&)> declare_params;
    std::function<void(MetricRegistry&)> declare_metrics;
    // Why workload.operation = read is refused, "" where the kind has a
    // read form (`built` when it always has). Left empty: refused as not
    // built, so that a new kind never runs writes when asked for reads.
    Refusal read_refusal;
    // Why workload.two-sided = true is refused, "" where the kind has a
    // two-sided form (`built`). Left empty: refused, it has none.
    Refusal two_sided_refusal;
    // The refusal that refuses nothing: the form is built.
    static std::string built(const Config&) { return ""; }
    // Why rdma.buffer-guard is refused: nothing of the application's in
    // flight for it to keep the program off.
    Refusal guard_refusal;
    // Why rdma.channels > 1 is refused.
    Refusal channels_refusal;
    // Whether a run of it uses the two-sided library (library/messaging)
    // whatever workload.two-sided says.
    std::function<bool(const Config&)> two_sided_library;
    // Whether it is built for the physical-address experiment
    // (smmu.enabled = false with a registration strategy: src/sim/physical_engine.cpp).
    bool physical_mode = false;
    // Whether its library posts on, and counts the completions of, one
    // channel (the two-sided library's endpoint): rdma.channels > 1 refused.
    bool one_channel = false;
    // Whether it reads workload.stream-notify.
    bool stream_notify = false;
    // The shared parameters of section [workload] that only some kinds read
    // (WorkloadParams::per_kind: workload.message-size, .window, ...) which
    // this one reads, by name. A setting of another one is refused, or only
    // noted in the run's summary when it comes from an earlier layer than
    // workload.kind's own (Workload::refuse_settings, unread_settings);
    // tests/system/param_effect_test.cpp checks the list against what a run
    // of it reads, and each parameter's help names the kinds that list it.
    std::vector<std::string> reads;
    // Of those, the ones it reads only when another of its parameters has
    // one of some values (sendrecv's total-bytes and window: its bandwidth
    // test only, workload.sendrecv-test = bandwidth). A setting of one under
    // another value is refused, or noted, as if the kind did not list it
    // (unread_settings); the parameter's help names the condition.
    struct ReadsOnly {
        std::string param, when;   // `param` is read only when `when` is one of `values`
        std::vector<std::string> values;
        std::string values_text() const {   // "a or b"
            std::string t;
            for (const std::string& v : values) t += (t.empty() ? "" : " or ") + v;
            return t;
        }
    };
    std::vector<ReadsOnly> reads_only;
    // What a finished run's figures say that its exit status does not (an
    // application's own race the byte check caught): a line for the user,
    // or "".
    std::function<std::string(const Config&, const StatRegistry&)> findings;

    // The traffic patterns (models/interconnect/synthetic_pattern.hpp) and
    // their messages in configuration `c`, for the interconnect's own bounds
    // of them (src/sim/channel_load.hpp, `vrdmasim bounds`), declared by the
    // one kind that sends them, so that the simulator and the command line
    // name no workload and none of its parameters.
    struct PatternTraffic {
        std::string pattern;   // the configuration's pattern, by name (synthetic::pattern_names)
        std::uint64_t bytes = 0;   // a message's
        std::uint64_t flits = 0;   // its data packets' flits
        bool reads = false;   // each message a read of the destination's bytes: the data comes back
        unsigned hot_node = 0;   // the hotspot pattern's hot node
        double hot_fraction = 0;   // and the share of the messages it gets
        std::string hot_node_setting;   // the hot node's setting, described (Config::describe)
        // The parameters that choose the pattern and a message's size, by
        // name, as messages and help name them.
        std::string pattern_param, message_size_param;
    };
    std::function<PatternTraffic(const Config&)> pattern_traffic;

    // How a test runs it: the tests (tests/system/param_effect_test.cpp) and
    // the composition matrix (scripts/composition.py, through `vrdmasim
    // params --json`) read this, so that a new kind needs no edit there. In
    // a value, {build} stands for the build's top folder (where vrdmasim is
    // built) and {source} for the source tree's.
    using Settings = std::vector<std::pair<std::string, std::string>>;
    struct Trial {
        // What any run of it needs beyond the defaults (its program, its
        // input files), workload.kind aside.
        Settings needs;
        // The composition matrix's small runs: settings after `needs`, the
        // share of the combinations it runs (1 in `matrix_sample`, by a hash
        // of the settings: a run that starts real processes is slow), and
        // its own enumeration parameters whose choices are mechanisms (each
        // other choice on a sample of its combinations).
        Settings matrix;
        unsigned matrix_sample = 1;
        std::vector<std::string> matrix_axes;
        // For an enumeration parameter of its own, the scenario (after
        // workload.kind = it and `needs`) in which each value changes a
        // statistic (tests/system/param_effect_test.cpp runs it for every
        // value: a value that changes nothing there fails);
        // `default_refuses`: what the error of the default's run names, where
        // the default refuses that very scenario ("": it runs clean).
        // `second`: where the default (`auto`) makes, in `settings`, the same
        // choice as one of the other values, a second scenario (again after
        // workload.kind and `needs`) in which it chooses otherwise: a value
        // must then change a statistic in one of the two ({}: none).
        // `value_needs`: what one value needs besides the scenario (a value
        // that names a file), by value.
        struct Effect {
            using ValueNeeds = std::vector<std::pair<std::string, Settings>>;
            Effect(std::string param, Settings settings, std::string default_refuses = "", Settings second = {},
                   ValueNeeds value_needs = {})
                : param(std::move(param)),
                  settings(std::move(settings)),
                  default_refuses(std::move(default_refuses)),
                  second(std::move(second)),
                  value_needs(std::move(value_needs)) {}
            std::string param;
            Settings settings;
            std::string default_refuses;
            Settings second;
            ValueNeeds value_needs;
        };
        std::vector<Effect> effects;
    };
    Trial trial;

    // Declared at static initialisation, in the workload's own file.
    struct Declare {
        explicit Declare(WorkloadKind k);
    };
};

namespace workload_kinds {

// Every declared kind, by order.
const std::vector<WorkloadKind>& all();
// The kind `name` (std::logic_error if none is declared so: workload.kind's
// choices are the declared names).
const WorkloadKind& of(const std::string& name);
// The kind a configuration runs (workload.kind).
const WorkloadKind& of(const Config& c);
// Every kind's parameters and metrics, by order.
void declare_params(ParamRegistry& reg);
void declare_metrics(MetricRegistry& reg);
// The findings of every kind, concatenated, after the settings the run's
// kind did not read (Workload::unread_note).
std::string findings(const Config& c, const StatRegistry& stats);
// The kinds that read shared parameter `param` (WorkloadKind::reads), by
// order: "stream, pingpong, ...".
std::string readers(const std::string& param);
// The traffic patterns' messages in `c`, as the kind that declares them
// says (std::logic_error if no kind or several do).
WorkloadKind::PatternTraffic pattern_traffic(const Config& c);
// Every kind's trial (WorkloadKind::Trial), by order, as a member of the
// JSON object `vrdmasim params --json` prints (scripts/composition.py reads
// it): "workloads": [{"name", "needs", "matrix" (objects of settings, in
// their order), "matrix_sample", "matrix_axes", "reads" (WorkloadKind::reads),
// "ignores" (the parameters of WorkloadParams::per_kind it does not read:
// a setting of one is refused), "effects": [{"param",
// "settings", "default_refuses", "second", "value_needs": {value:
// settings}}]}, ...].
std::string trials_json();

}   // namespace workload_kinds
}   // namespace vrdmasim
