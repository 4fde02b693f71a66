// The workload registry (workloads/registry.hpp): a kind declared in its own
// file, here a test's, is a choice of workload.kind that `vrdmasim run`
// builds and runs through System, which names no workload; what it does not
// declare it refuses.
#include <catch2/catch.hpp>

#include <algorithm>
#include <memory>

#include "src/sim/system.hpp"
#include "system_sim.hpp"
#include "workloads/registry.hpp"
#include "workloads/stream.hpp"

using namespace vrdmasim;

namespace {

// A new workload as its own file declares it: the stream's programs under
// another name, with neither a read nor a two-sided form declared.
const WorkloadKind::Declare probe([] {
    WorkloadKind k;
    k.name = "registry-probe";
    k.order = 100000;
    k.help = "registry-probe: a test's own kind";
    k.create = [](const SimContext& ctx, const std::vector<RdmaProcess*>& apps, unsigned job,
                  const std::vector<FileSystem*>&) -> std::unique_ptr<Workload> {
        const auto [src, dst] = Workload::two_nodes(ctx.config, apps);
        return std::make_unique<StreamWorkload>(ctx, apps, src, dst, job);
    };
    k.reads = {"workload.src-node",    "workload.dst-node", "workload.message-size",
               "workload.total-bytes", "workload.window",   "workload.buffers"};
    return k;
}());

}   // namespace

TEST_CASE("registry: a kind declared in its own file is a choice of workload.kind, and System runs it", "[registry]") {
    ParamRegistry reg;
    declare_all_params(reg);
    const ParamDecl* kind = reg.find("workload.kind");
    REQUIRE(kind != nullptr);
    CHECK(std::count(kind->choices.begin(), kind->choices.end(), "registry-probe") == 1);
    CHECK(kind->help.find("registry-probe: a test's own kind") != std::string::npos);
    SystemSim s({{"workload.kind", "registry-probe"}, {"workload.total-bytes", "64KiB"}});
    s.run();
    REQUIRE(s.finished());
    CHECK(s.log().bytes_verified.value() == 64 * 1024);
    CHECK(s.log().errors.value() == 0);
}

TEST_CASE("registry: what a kind does not declare it refuses, naming the setting", "[registry]") {
    const std::string read = build_refusal({{"workload.kind", "registry-probe"}, {"workload.operation", "read"}});
    CHECK(read.find("workload.operation") != std::string::npos);
    CHECK(read.find("the read form is not built for workload.kind = registry-probe") != std::string::npos);
    const std::string two = build_refusal({{"workload.kind", "registry-probe"}, {"workload.two-sided", "true"}});
    CHECK(two.find("workload.two-sided") != std::string::npos);
    CHECK(two.find("it has no two-sided form") != std::string::npos);
    // A shared parameter it does not declare it reads, set in the same
    // layer as workload.kind: refused, naming the kinds that read it.
    const std::string unread = build_refusal({{"workload.kind", "registry-probe"}, {"workload.iterations", "5"}});
    CHECK(unread.find("workload.iterations = 5 (from test): is not read by workload.kind = registry-probe") !=
          std::string::npos);
    CHECK(unread.find("only workload.kind = pingpong, sendrecv (with workload.sendrecv-test = latency), alltoall, "
                      "halo, overlap, collective read it") != std::string::npos);
    // workload.kind at its default: no layer is earlier than the defaults'.
    CHECK(build_refusal({{"workload.grid", "2x1x1"}})
              .find("workload.grid = 2x1x1 (from test): is not read by "
                    "workload.kind = stream (from default)") != std::string::npos);
    // The stream, which declares its read form, is not refused.
    CHECK(build_refusal({{"workload.kind", "stream"}, {"workload.operation", "read"}}).empty());
}

TEST_CASE("registry: a shared parameter the kind does not read set in an earlier layer is said and not refused",
          "[registry]") {
    // The same setting in an earlier layer than workload.kind's (a base for
    // several kinds, the kind set over it): the run builds and its summary
    // says so; at its default value, not even that.
    SystemSim sim(SystemSim::Defaults{{{"workload.iterations", "5"}, {"workload.grid", "auto"}}},
                  {{"workload.kind", "registry-probe"}});
    CHECK(Workload::unread_note(*sim.cfg) ==
          "vrdmasim: warning: workload.iterations = 5 (from test defaults) was not read: workload.kind = "
          "registry-probe (from test), set over it, does not read it (only workload.kind = pingpong, sendrecv "
          "(with workload.sendrecv-test = latency), alltoall, halo, overlap, collective do)\n");
    CHECK(workload_kinds::findings(*sim.cfg, sim.stats).find(Workload::unread_note(*sim.cfg)) == 0);
}

TEST_CASE("registry: a parameter a kind reads under some values of another is refused under the others", "[registry]") {
    // sendrecv's latency test reads neither total-bytes nor window, its
    // bandwidth test not iterations (WorkloadKind::reads_only).
    CHECK(build_refusal({{"workload.kind", "sendrecv"}, {"workload.total-bytes", "1MiB"}})
              .find("workload.total-bytes = 1MiB (from test): is not read by workload.kind = sendrecv (from test) "
                    "with workload.sendrecv-test = latency (from default): only workload.sendrecv-test = bandwidth "
                    "reads it, so it would change nothing") != std::string::npos);
    CHECK(build_refusal(
              {{"workload.kind", "sendrecv"}, {"workload.sendrecv-test", "bandwidth"}, {"workload.iterations", "5"}})
              .find("workload.iterations = 5 (from test): is not read by workload.kind = sendrecv (from test) with "
                    "workload.sendrecv-test = bandwidth (from test): only workload.sendrecv-test = latency reads it") !=
          std::string::npos);
    CHECK(build_refusal({{"workload.kind", "sendrecv"},
                         {"workload.sendrecv-test", "bandwidth"},
                         {"workload.total-bytes", "64KiB"},
                         {"workload.window", "2"}})
              .empty());
    // Set in a layer before the test's choice: said, not refused.
    SystemSim sim(SystemSim::Defaults{{{"workload.total-bytes", "1MiB"}, {"workload.sendrecv-test", "bandwidth"}}},
                  {{"workload.kind", "sendrecv"}, {"workload.sendrecv-test", "latency"}});
    CHECK(Workload::unread_note(*sim.cfg) ==
          "vrdmasim: warning: workload.total-bytes = 1MiB (from test defaults) was not read: workload.kind = sendrecv "
          "(from test) with workload.sendrecv-test = latency (from test), set over it, does not read it (only "
          "workload.sendrecv-test = bandwidth does)\n");
    // The parameter's help names the condition.
    ParamRegistry reg;
    declare_all_params(reg);
    CHECK(reg.find("workload.window")->help.find("sendrecv (with workload.sendrecv-test = bandwidth)") !=
          std::string::npos);
}

TEST_CASE("registry: every workload of the library is in the program, each once and by order", "[registry]") {
    // vrdmasim_workloads is linked whole: a kind nothing refers to is there too.
    std::vector<std::string> names;
    int last = -1;
    for (const WorkloadKind& k : workload_kinds::all()) {
        names.push_back(k.name);
        CHECK(k.order > last);
        last = k.order;
        CHECK(k.create);
        CHECK(k.help.rfind(k.name + ": ", 0) == 0);
    }
    for (const char* n : {"stream", "pingpong", "sendrecv", "alltoall", "halo", "incast", "permutation", "lock",
                          "overlap", "fileserve", "collective", "trace", "synthetic"})
        CHECK(std::count(names.begin(), names.end(), n) == 1);
}
