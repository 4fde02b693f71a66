#include "workloads/registry.hpp"

#include <algorithm>
#include <stdexcept>

#include "src/core/declarations.hpp"
#include "src/core/params.hpp"
#include "workloads/workload.hpp"

namespace vrdmasim {
namespace {

Declarations<WorkloadKind>& kinds() {
    static Declarations<WorkloadKind> k("workload kind");   // made at its first use: any order of initialisation
    return k;
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
    std::string out;
    for (const WorkloadKind& k : all())
        if (k.findings) out += k.findings(c, stats);
    return out;
}

}   // namespace workload_kinds
}   // namespace vrdmasim
