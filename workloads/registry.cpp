#include "workloads/registry.hpp"

#include <algorithm>
#include <stdexcept>

#include "src/core/params.hpp"
#include "workloads/workload.hpp"

namespace vrdmasim {
namespace {

struct Kinds {
    std::vector<WorkloadKind> v;
    bool read = false;   // all() has been read: no declaration may come after
};

Kinds& kinds() {
    static Kinds k;   // made at its first use: any order of initialisation
    return k;
}

}   // namespace

WorkloadKind::Declare::Declare(WorkloadKind k) {
    Kinds& all = kinds();
    if (all.read) throw std::logic_error("workload kind '" + k.name + "' declared after the kinds were read");
    for (const WorkloadKind& o : all.v)
        if (o.name == k.name || o.order == k.order)
            throw std::logic_error("workload kind '" + k.name + "' declared twice, or at the order of '" + o.name +
                                   "'");
    if (!k.create) throw std::logic_error("workload kind '" + k.name + "' declared without a factory");
    all.v.push_back(std::move(k));
    std::sort(all.v.begin(), all.v.end(),
              [](const WorkloadKind& a, const WorkloadKind& b) { return a.order < b.order; });
}

namespace workload_kinds {

const std::vector<WorkloadKind>& all() {
    kinds().read = true;
    return kinds().v;
}

const WorkloadKind& of(const std::string& name) {
    for (const WorkloadKind& k : all())
        if (k.name == name) return k;
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
    std::string out;
    for (const WorkloadKind& k : all())
        if (k.findings) out += k.findings(c, stats);
    return out;
}

}   // namespace workload_kinds
}   // namespace vrdmasim
