#include "workloads/registry.hpp"

#include <algorithm>
#include <stdexcept>

#include "src/core/declarations.hpp"
#include "src/core/json.hpp"
#include "src/core/params.hpp"
#include "workloads/workload.hpp"

namespace vrdmasim {
namespace {

Declarations<WorkloadKind>& kinds() {
    static Declarations<WorkloadKind> k("workload kind");   // made at its first use: any order of initialisation
    return k;
}

std::string settings_json(const WorkloadKind::Settings& s) {
    std::string out = "{";
    for (const auto& [key, value] : s)
        out += (out.size() > 1 ? ", " : "") + json_string(key) + ": " + json_string(value);
    return out + "}";
}

std::string names_json(const std::vector<std::string>& names) {
    std::string out;
    for (const std::string& n : names) out += (out.empty() ? "" : ", ") + json_string(n);
    return "[" + out + "]";
}

std::string trial_json(const WorkloadKind& k) {
    const WorkloadKind::Trial& t = k.trial;
    std::string effects;
    std::vector<std::string> ignores;
    for (const std::string& p : params_of<WorkloadParams>().per_kind)
        if (std::find(k.reads.begin(), k.reads.end(), p) == k.reads.end()) ignores.push_back(p);
    for (const WorkloadKind::Trial::Effect& e : t.effects) {
        std::string values;
        for (const auto& [value, settings] : e.value_needs)
            values += (values.empty() ? "" : ", ") + json_string(value) + ": " + settings_json(settings);
        effects += std::string(effects.empty() ? "" : ", ") + "{\"param\": " + json_string(e.param) +
                   ", \"settings\": " + settings_json(e.settings) +
                   ", \"default_refuses\": " + json_string(e.default_refuses) +
                   ", \"second\": " + settings_json(e.second) + ", \"value_needs\": {" + values + "}}";
    }
    std::string only;
    for (const WorkloadKind::ReadsOnly& r : k.reads_only)
        only += std::string(only.empty() ? "" : ", ") + "{\"param\": " + json_string(r.param) +
                ", \"when\": " + json_string(r.when) + ", \"values\": " + names_json(r.values) + "}";
    return "{\"name\": " + json_string(k.name) + ", \"needs\": " + settings_json(t.needs) +
           ", \"matrix\": " + settings_json(t.matrix) + ", \"matrix_sample\": " + json_number(t.matrix_sample) +
           ", \"matrix_axes\": " + names_json(t.matrix_axes) + ", \"reads\": " + names_json(k.reads) +
           ", \"ignores\": " + names_json(ignores) + ", \"reads_only\": [" + only + "], \"effects\": [" + effects +
           "]}";
}

}   // namespace

WorkloadKind::Declare::Declare(WorkloadKind k) { kinds().add(std::move(k)); }

namespace workload_kinds {

const std::vector<WorkloadKind>& all() { return kinds().all(); }

const WorkloadKind& of(const std::string& name) {
    if (const WorkloadKind* k = kinds().find(name)) return *k;
    throw std::logic_error("workload.kind = " + name + ": no such workload is declared");
}

const WorkloadKind& of(const Config& c) { return of(c[params_of<WorkloadParams>().kind]); }

void declare_params(ParamRegistry& reg) {
    for (const WorkloadKind& k : all())
        if (k.declare_params) k.declare_params(reg);
}

void declare_metrics(MetricRegistry& reg) {
    for (const WorkloadKind& k : all())
        if (k.declare_metrics) k.declare_metrics(reg);
}

std::string findings(const Config& c, const StatRegistry& stats) {
    std::string out = Workload::unread_note(c);
    for (const WorkloadKind& k : all())
        if (k.findings) out += k.findings(c, stats);
    return out;
}

std::string readers(const std::string& param) {
    std::string out;
    for (const WorkloadKind& k : all()) {
        if (std::find(k.reads.begin(), k.reads.end(), param) == k.reads.end()) continue;
        out += (out.empty() ? "" : ", ") + k.name;
        for (const WorkloadKind::ReadsOnly& r : k.reads_only) {
            if (r.param != param) continue;
            out += " (with " + r.when + " = " + r.values_text() + ")";
        }
    }
    return out;
}

WorkloadKind::PatternTraffic pattern_traffic(const Config& c) {
    const WorkloadKind* sender = nullptr;
    for (const WorkloadKind& k : all())
        if (k.pattern_traffic) {
            if (sender)
                throw std::logic_error("the traffic patterns' messages declared by " + sender->name + " and " + k.name);
            sender = &k;
        }
    if (!sender) throw std::logic_error("no workload kind declares the traffic patterns' messages");
    return sender->pattern_traffic(c);
}

std::string trials_json() {
    std::string out;
    for (const WorkloadKind& k : all()) out += (out.empty() ? "\n    " : ",\n    ") + trial_json(k);
    return "\"workloads\": [" + out + "\n  ]";
}

}   // namespace workload_kinds
}   // namespace vrdmasim
