// Every parameter does what it says: each value of every enumeration
// parameter (taken from the registry, so a new parameter or value without a
// scenario here fails) changes some statistic of a scenario where it should
// matter, and the three completion modes of the RDMA library differ as they
// should. Each run is its own SystemC elaboration, in a child process.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <sstream>
#include <string>

#include <unistd.h>

#include "child_process.hpp"
#include "src/sim/system.hpp"
#include "system_sim.hpp"
#include "workloads/registry.hpp"

using namespace vrdmasim;

namespace {

// What a child run reports: whether it finished cleanly, a few figures, and
// every statistic as text (the fingerprint compared between values).
struct Outcome {
    bool ran = false;   // the child reported at all
    bool clean = false;   // finished, no transfer error, no mismatch
    std::string error;   // an exception's message
    std::map<std::string, double> figures;
    std::string stats;
};

// Builds and runs the system with `settings` in a child process.
Outcome run_child(const Settings& settings) {
    const std::string text = in_child_text([&settings] {
        std::ostringstream os;
        try {
            SystemSim s(settings);
            s.run();
            const TransferLog& log = s.log();
            os << "clean " << (s.finished() && log.errors.value() == 0 && log.mismatches.value() == 0) << "\n";
            os << "latency_us " << log.latency_us.quantile(0.5) << "\n";
            os << "polls " << s.stats.sum_counters("rdma.polls") << "\n";
            os << "wakeups " << s.stats.sum_counters("rdma.wakeups") << "\n";
            os << "counter_reads " << s.stats.sum_counters("rdma.counter_reads") << "\n";
            os << "handler_runs " << s.stats.sum_counters("rdma.handler_runs") << "\n";
            os << "handler_wakeups " << s.stats.sum_counters("rdma.handler_wakeups") << "\n";
            os << "wait_cpu_us " << s.stats.sum_scalars("rdma.wait_cpu") << "\n";
            os << "counter_increments " << s.stats.sum_counters("dma.counter_increments") << "\n";
            os << "transfers " << log.transfers.value() << "\n";
            os << "--\n";
            s.stats.write_text(os);
        } catch (const std::exception& e) {
            os.str("");
            os << "error " << e.what() << "\n--\n";
        }
        return os.str();
    });
    Outcome o;
    const std::size_t sep = text.find("--\n");
    if (sep == std::string::npos) return o;
    o.ran = true;
    std::istringstream head(text.substr(0, sep));
    std::string key;
    while (head >> key) {
        if (key == "error") {
            std::getline(head, o.error);
            continue;
        }
        double v = 0;
        head >> v;
        o.figures[key] = v;
    }
    o.clean = o.error.empty() && o.figures["clean"] == 1;
    o.stats = text.substr(sep + 3);
    return o;
}

// The folder of this test program (the build's top: a workload's test
// programs are under it, {build} in its trial's settings).
std::string build_dir() {
    char exe[4096];
    const ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    const std::string path(exe, n > 0 ? static_cast<std::size_t>(n) : 0);
    return path.substr(0, path.rfind('/'));
}

// A workload's trial settings (WorkloadKind::Trial), {build} and {source}
// in their values put in.
Settings placed(const WorkloadKind::Settings& s) {
    Settings out;
    for (auto [key, value] : s) {
        for (const auto& [mark, path] :
             {std::pair<std::string, std::string>{"{build}", build_dir()}, {"{source}", VRDMASIM_SOURCE_DIR}})
            for (std::size_t at = value.find(mark); at != std::string::npos; at = value.find(mark))
                value.replace(at, mark.size(), path);
        out.emplace_back(key, value);
    }
    return out;
}

// Small runs: a few ms of simulated time each.
const Settings kStream{{"workload.total-bytes", "512KiB"},
                       {"workload.message-size", "64KiB"},
                       {"workload.window", "2"},
                       {"sim.time-limit", "1s"}};
// Every message in fresh, never-touched buffers: the engine meets faults.
const Settings kCold = kStream + Settings{{"workload.buffers", "8"},
                                          {"workload.populate", "false"},
                                          {"workload.fill-source", "false"},
                                          {"vm.thp", "never"},
                                          {"vm.memlock-limit", "64MiB"}};

// Every node of a 3x2 torus writes 64 KiB to its image, 3 VCs (adaptive needs them).
const Settings kTorusPermutation{{"topology.kind", "torus"},
                                 {"topology.x", "3"},
                                 {"topology.y", "2"},
                                 {"router.vcs", "3"},
                                 {"dram.size", "1GiB"},
                                 {"workload.kind", "permutation"},
                                 {"workload.total-bytes", "64KiB"},
                                 {"workload.message-size", "16KiB"},
                                 {"sim.time-limit", "1s"}};

// The overlap workload, small: 16 transfers of 16 KiB, half the phases
// touching a buffer in flight.
const Settings kOverlap{{"workload.kind", "overlap"},
                        {"workload.message-size", "16KiB"},
                        {"workload.iterations", "16"},
                        {"overlap.touch-probability", "0.5"},
                        {"sim.time-limit", "1s"}};

// The fileserve workload, small: 4 files of 64 KiB, one client asking for
// 6 of them, a cold cache (so that which files are asked for shows).
const Settings kFileserve{{"workload.kind", "fileserve"}, {"fs.files", "4"},           {"fs.file-size", "64KiB"},
                          {"fileserve.requests", "6"},    {"fileserve.cache", "cold"}, {"sim.time-limit", "1s"}};

// The collective workload, small: 8 ranks (two QFDBs), 64 B per rank.
const Settings kCollective{{"workload.kind", "collective"},
                           {"topology.kind", "torus"},
                           {"topology.x", "2"},
                           {"workload.message-size", "64B"},
                           {"workload.iterations", "2"}};
const Settings kSynthetic{{"workload.kind", "synthetic"},
                          {"topology.kind", "torus"},
                          {"topology.x", "3"},
                          {"topology.y", "3"},
                          {"synthetic.load", "0.05"},
                          {"synthetic.warmup", "2us"},
                          {"synthetic.measure", "10us"},
                          {"synthetic.drain", "10us"}};

// For each enumeration parameter, a scenario in which every one of its
// values should show: each value, set on top of the scenario, must change
// some statistic against the parameter's default.
const std::map<std::string, Settings>& scenarios() {
    static const std::map<std::string, Settings> s{
        // Node count and names, links.
        {"topology.kind", kStream},
        // Who sends to whom.
        {"workload.kind", Settings{{"topology.nodes", "4"},
                                   {"workload.total-bytes", "128KiB"},
                                   {"workload.message-size", "16KiB"},
                                   {"workload.iterations", "2"},
                                   // (each kind with what it needs: value_settings())
                                   {"sim.time-limit", "1s"}}},
        // Faults, pins, cache, populate, chunks, kernel copies.
        {"rdma.strategy", kCold + Settings{{"rdma.pipeline-chunk", "16KiB"}}},
        // Polls, wake-ups, counter reads, handler runs, and the latency they cost.
        {"rdma.completion", kStream},
        // Notified messages seen through the ring or an event counter: the
        // counter costs a register store per post and counts increments.
        {"rdma.notify",
         Settings{{"workload.kind", "pingpong"}, {"workload.message-size", "64B"}, {"workload.iterations", "20"}}},
        // 2 MiB buffers cold and advised (madvise), next to a hog that is
        // not (always): huge faults where each mode allows them.
        {"vm.thp", Settings{{"workload.total-bytes", "4MiB"},
                            {"workload.message-size", "2MiB"},
                            {"workload.window", "1"},
                            {"workload.buffers", "2"},
                            {"workload.populate", "false"},
                            {"workload.fill-source", "false"},
                            {"workload.madvise", "hugepage"},
                            {"hog.bytes", "4MiB"},
                            {"hog.interval", "1ms"},
                            {"sim.time-limit", "1s"}}},
        // The buffers' advice under vm.thp = madvise, 2 MiB cold buffers:
        // hugepage gets huge faults, nohugepage costs the madvise() calls.
        {"workload.madvise", Settings{{"vm.thp", "madvise"},
                                      {"workload.total-bytes", "4MiB"},
                                      {"workload.message-size", "2MiB"},
                                      {"workload.window", "1"},
                                      {"workload.buffers", "2"},
                                      {"workload.populate", "false"},
                                      {"workload.fill-source", "false"},
                                      {"sim.time-limit", "1s"}}},
        // Pages resolved per fault.
        {"fault-lib.policy", kCold},
        // A faulting process next to a warm one: engine parking holds the
        // warm one's transfers too (configs/neighbours.ini, smaller).
        {"dma.park", kStream + Settings{{"node.processes", "2"},
                                        {"workload.cold-jobs", "1"},
                                        {"workload.buffers", "8"},
                                        {"vm.thp", "never"},
                                        {"fault-lib.policy", "touch-one"}}},
        // Faults recovered by the engine or stalled in the SMMU.
        {"smmu-driver.fault-mode", kCold},
        // The engine translated by the SMMU or by the NI's shadow table:
        // SMMU faults or NI misses, table updates on the CPU.
        {"ni.translation", kCold},
        // Through a four-entry micro-TLB, two fresh source pages per
        // message and the record page after each: LRU keeps the record
        // page (used every third translation), round robin evicts it in turn.
        {"smmu.tlb-replacement", Settings{{"vm.thp", "never"},
                                          {"smmu.micro-tlb-entries", "4"},
                                          {"workload.total-bytes", "256KiB"},
                                          {"workload.message-size", "8KiB"},
                                          {"workload.window", "1"},
                                          {"workload.buffers", "16"},
                                          {"sim.time-limit", "1s"}}},
        // The two-sided library: how a rendezvous moves the data (write:
        // clear-to-send and writes; read: reads and a FIN), and which test
        // the sendrecv workload runs.
        {"msg.rendezvous",
         Settings{{"workload.kind", "sendrecv"}, {"workload.message-size", "16KiB"}, {"workload.iterations", "4"}}},
        {"workload.sendrecv-test", Settings{{"workload.kind", "sendrecv"},
                                            {"workload.message-size", "4KiB"},
                                            {"workload.iterations", "4"},
                                            {"workload.total-bytes", "64KiB"}}},
        // Which node's hog re-touches its memory.
        {"hog.nodes", kStream + Settings{{"hog.bytes", "2MiB"}, {"hog.interval", "50us"}}},
        // Writes posted by src-node or reads posted by dst-node: who posts,
        // who serves read requests.
        {"workload.operation", kStream},
        // Each write notifies and the receiving program reads the records.
        {"workload.stream-notify", kStream},
        // Compute phases touching buffers in flight: blocking waits first,
        // the guard makes the touches fault instead of racing.
        {"overlap.mode", kOverlap},
        {"rdma.buffer-guard", kOverlap},
        // Prefetch advice on a cold stream: the workers populate, the
        // engines fault less.
        {"rdma.prefetch", Settings{{"workload.total-bytes", "256KiB"},
                                   {"workload.populate", "false"},
                                   {"workload.fill-source", "false"},
                                   {"workload.buffers", "16"}}},
        // The file server: how the data moves (copies, pins, faults,
        // packets), which files the clients ask for, and whether the page
        // cache starts warm (the cold cache reads the SSD).
        {"fileserve.method", kFileserve},
        {"fileserve.popularity", kFileserve},
        {"fileserve.cache", kFileserve},
        // Ask the server, or read() the files directly over the board network.
        {"fileserve.access", kFileserve},
        // Which collective, and each one's algorithms (auto: MPICH's
        // choice by size, the same as one other value here: see
        // second_scenarios()).
        {"collective.op", kCollective},
        {"collective.allreduce-algorithm", kCollective},
        {"collective.allgather-algorithm", kCollective + Settings{{"collective.op", "allgather"}}},
        {"collective.alltoall-algorithm", kCollective + Settings{{"collective.op", "alltoall"}}},
        // How the steps move: messages, or writes into the receiver.
        {"collective.transport", kCollective},
        // Which node each rank of a trace runs on (the solver's ring of 8
        // ranks on two QFDBs: round robin puts neighbours on other boards;
        // the file reverses the ranks: value_settings()).
        {"trace.mapping", Settings{{"workload.kind", "trace"},
                                   {"topology.kind", "torus"},
                                   {"topology.x", "2"},
                                   {"trace.file", VRDMASIM_SOURCE_DIR "/configs/traces/solver/solver.otf2"}}},
        // The buffers of a trace vrdmasim recorded (tests/fixtures/
        // recorded_ring: workloads/mpi/tests/mpi_ring on 2 ranks, "1024 1",
        // mpi.record): the program's own (auto), or the replay's rule.
        {"trace.buffers",
         Settings{{"workload.kind", "trace"},
                  {"trace.file", VRDMASIM_SOURCE_DIR "/tests/fixtures/recorded_ring/recorded_ring.otf2"}}},
        // Which lock the nodes contend for (every kind: its own operations
        // on the wire and its own acquire latencies).
        {"lock.kind", Settings{{"workload.kind", "lock"}, {"lock.acquisitions", "4"}, {"sim.time-limit", "1s"}}},
        // How a node of a cluster workload learns its arrivals are in: ring
        // records, the event counter, or per-peer flags (one round: the
        // counter takes one).
        {"workload.arrivals", Settings{{"workload.kind", "incast"},
                                       {"workload.dst-node", "0"},
                                       {"workload.total-bytes", "32KiB"},
                                       {"workload.message-size", "8KiB"}}},
        // Synthetic traffic on a 3 x 3 torus (every pattern defined: tornado
        // needs rings of 3 boards, transpose x = y): where the messages go,
        // and how their arrivals are drawn.
        {"synthetic.pattern", kSynthetic},
        {"synthetic.arrivals", kSynthetic},
        // Congestion on a torus of 3x2 QFDBs: adaptive routes around it
        // (router.routing); time-ordered links let packets that came first
        // go first (router.link-order, with dimension order).
        {"router.routing", kTorusPermutation},
        {"router.link-order", kTorusPermutation},
        // Same-time order (src/sim/event_order.hpp): the halo of
        // configs/halo.ini in the approximate time order, where senders meet
        // at the ejection links and same-time ties are served by call, moves
        // with which of two same-time events runs first (in exact order,
        // the default, nothing moves: the ctest event_order_configs).
        {"sim.event-order", Settings{{"topology.kind", "qfdb"},
                                     {"topology.nodes", "4"},
                                     {"workload.kind", "halo"},
                                     {"workload.message-size", "32KiB"},
                                     {"workload.iterations", "20"},
                                     {"workload.window", "6"},
                                     {"router.link-order", "time-approximate"}}},
        // The same torus with its board links as cut links, in the
        // approximate time order (exact order cuts links only between
        // ranks): the far board handles a packet at its head's arrival and
        // credits come back a latency later (models/interconnect/README.md
        // "Cut links").
        {"board-link.handoff", kTorusPermutation + Settings{{"router.link-order", "time-approximate"}}},
    };
    return s;
}

}   // namespace

// A second scenario for a parameter whose default (`auto`) makes, in any
// one scenario, the same choice as one of its other values: there each
// value must change some statistic in one of the two scenarios. Here the
// size makes auto choose otherwise than in the first.
const std::map<std::string, Settings>& second_scenarios() {
    static const std::map<std::string, Settings> s{
        {"collective.allreduce-algorithm", kCollective + Settings{{"workload.message-size", "64KiB"}}},
        {"collective.allgather-algorithm",
         kCollective + Settings{{"collective.op", "allgather"}, {"workload.message-size", "16KiB"}}},
        {"collective.alltoall-algorithm",
         kCollective + Settings{{"collective.op", "alltoall"}, {"workload.message-size", "1KiB"}}},
    };
    return s;
}

// The scenarios above, and those each workload declares of its own
// parameters (WorkloadKind::Trial::effects: workload.kind = it, what it
// needs, the scenario's settings), so that a new kind's parameters need no
// edit here. A parameter with a scenario in both is an error.
const std::map<std::string, Settings>& all_scenarios() {
    static const std::map<std::string, Settings> s = [] {
        std::map<std::string, Settings> all = scenarios();
        for (const WorkloadKind& k : workload_kinds::all())
            for (const WorkloadKind::Trial::Effect& e : k.trial.effects)
                if (!all.emplace(e.param,
                                 Settings{{"workload.kind", k.name}} + placed(k.trial.needs) + placed(e.settings))
                         .second)
                    throw std::logic_error(e.param + ": a scenario here and one declared by workload.kind = " + k.name);
        return all;
    }();
    return s;
}

// Parameters whose default refuses the very scenario the other values show
// in (mpi.untimed = refuse stops at the call that count lets through), as
// their workloads declare them, with what the refusal names: the default's
// run must fail, naming why, and the others run clean.
std::map<std::string, std::string> refusing_defaults() {
    std::map<std::string, std::string> r;
    for (const WorkloadKind& k : workload_kinds::all())
        for (const WorkloadKind::Trial::Effect& e : k.trial.effects)
            if (!e.default_refuses.empty()) r.emplace(e.param, e.default_refuses);
    return r;
}

// What one value of a parameter needs besides the scenario (a value that
// names a file; a workload kind, what it declares it needs to run).
Settings value_settings(const std::string& name, const std::string& value) {
    if (name == "trace.mapping" && value == "file")
        return {{"trace.mapping-file", VRDMASIM_SOURCE_DIR "/configs/traces/solver-reversed.map"}};
    if (name == "workload.kind") return placed(workload_kinds::of(value).trial.needs);
    return {};
}

TEST_CASE("every value of every enumeration parameter changes a statistic where it should matter", "[params][system]") {
    ParamRegistry reg;
    declare_all_params(reg);
    unsigned enums = 0;
    for (const ParamDecl& d : reg.all()) {
        if (d.type != ParamType::Enum) continue;
        ++enums;
        const std::string name = d.name();
        INFO("parameter " << name);
        const auto it = all_scenarios().find(name);
        if (it == all_scenarios().end()) {
            FAIL_CHECK("enumeration parameter " << name
                                                << " has no scenario in tests/system/param_effect_test.cpp nor in "
                                                   "its workload's declaration (WorkloadKind::Trial::effects)");
            continue;
        }
        const Outcome base = run_child(it->second + Settings{{name, d.default_text}});
        INFO(name << " = " << d.default_text << " (default): " << base.error);
        REQUIRE(base.ran);
        const std::map<std::string, std::string> refusing_default = refusing_defaults();
        const auto refusing = refusing_default.find(name);
        if (refusing != refusing_default.end())
            CHECK((!base.clean && base.error.find(refusing->second) != std::string::npos));
        else CHECK(base.clean);
        for (const std::string& v : d.choices) {
            if (v == d.default_text) continue;
            const Outcome o = run_child(it->second + Settings{{name, v}} + value_settings(name, v));
            INFO(name << " = " << v << ": " << o.error);
            REQUIRE(o.ran);
            CHECK(o.clean);
            const auto second = second_scenarios().find(name);
            if (o.stats == base.stats && second != second_scenarios().end()) {
                const Outcome b2 = run_child(second->second + Settings{{name, d.default_text}});
                const Outcome o2 = run_child(second->second + Settings{{name, v}} + value_settings(name, v));
                REQUIRE(b2.ran);
                REQUIRE(o2.ran);
                CHECK(b2.clean);
                CHECK(o2.clean);
                CHECK(o2.stats != b2.stats);
                continue;
            }
            CHECK(o.stats != base.stats);
        }
    }
    CHECK(enums >= 9);
}

TEST_CASE("rdma.completion: interrupt sleeps, poll spins on the record, counter spins on the register",
          "[params][system]") {
    // One message at a time: each latency sample (doorbell to the
    // completion seen by the sender) includes one wait for its record.
    const Settings stream{
        {"workload.message-size", "4KiB"}, {"workload.total-bytes", "128KiB"}, {"workload.window", "1"}};
    std::map<std::string, Outcome> by;
    for (const char* mode : {"interrupt", "poll", "counter"}) {
        by[mode] = run_child(stream + Settings{{"rdma.completion", mode}});
        INFO(mode << ": " << by[mode].error);
        REQUIRE(by[mode].ran);
        REQUIRE(by[mode].clean);
        CHECK(by[mode].figures["transfers"] > 0);
    }
    auto fig = [&](const char* mode, const char* key) { return by[mode].figures[key]; };
    // Who wakes up, who spins on what.
    CHECK(fig("interrupt", "wakeups") > 0);
    CHECK(fig("interrupt", "polls") == 0);
    CHECK(fig("interrupt", "counter_reads") == 0);
    CHECK(fig("poll", "wakeups") == 0);
    CHECK(fig("poll", "polls") > 0);
    CHECK(fig("poll", "counter_reads") == 0);
    CHECK(fig("counter", "wakeups") == 0);
    CHECK(fig("counter", "polls") > 0);
    CHECK(fig("counter", "counter_reads") > 0);
    // Reading the register is a device read of its own besides the
    // record's: the counter's timing is not the poller's; both are far below
    // an interrupt's wake-up (rdma.irq-wakeup, 5 us).
    const double poll = fig("poll", "latency_us"), counter = fig("counter", "latency_us"),
                 irq = fig("interrupt", "latency_us");
    INFO("write latency p50: poll " << poll << " us, counter " << counter << " us, interrupt " << irq << " us");
    CHECK(counter != poll);
    CHECK(irq > counter + 4);
    CHECK(irq > poll + 4);
}

TEST_CASE("rdma.completion = handler: a handler run per notification, dearer than a wake-up, cheap on CPU",
          "[params][system]") {
    // Pingpong, notifications through event counter 0: each side waits for
    // the other's message (a counter increment) and its own completion.
    const Settings pp{{"workload.kind", "pingpong"},
                      {"workload.message-size", "64B"},
                      {"workload.iterations", "50"},
                      {"rdma.notify", "counter"}};
    std::map<std::string, Outcome> by;
    for (const char* mode : {"interrupt", "poll", "handler"}) {
        by[mode] = run_child(pp + Settings{{"rdma.completion", mode}});
        INFO(mode << ": " << by[mode].error);
        REQUIRE(by[mode].ran);
        REQUIRE(by[mode].clean);
    }
    auto fig = [&](const char* mode, const char* key) { return by[mode].figures[key]; };
    // 50 notifications and 50 completions per side, one handler run each.
    CHECK(fig("handler", "handler_runs") == 200);
    CHECK(fig("handler", "counter_increments") == 100);
    CHECK(fig("interrupt", "handler_runs") == 0);
    CHECK(fig("handler", "wakeups") == 0);
    CHECK(fig("handler", "polls") == 0);
    // One-way latency: the handler's dispatch (6 us) and run (0.2 us) on top
    // of the data's arrival, against the interrupt's wake-up (5 us) and a
    // poller's next read.
    const double h = fig("handler", "latency_us"), irq = fig("interrupt", "latency_us"),
                 poll = fig("poll", "latency_us");
    INFO("pingpong one-way p50: poll " << poll << " us, interrupt " << irq << " us, handler " << h << " us");
    CHECK(h > irq + 1.0);
    CHECK(irq > poll + 4.0);
    // CPU the waits cost: the poller spins all along, the others pay per event.
    CHECK(fig("poll", "wait_cpu_us") > fig("handler", "wait_cpu_us") / 10);
    // Exactly a dispatch per wake-up and a run per notification.
    const double wakeups = fig("handler", "handler_wakeups");
    CHECK(wakeups >= 100);
    CHECK(wakeups <= 200);
    CHECK(fig("handler", "wait_cpu_us") == Approx(6.0 * wakeups + 0.2 * 200).epsilon(1e-9));
}

TEST_CASE("configs/netvm/detection.ini figures: 64 B one-way latency and wait CPU per mechanism",
          "[params][system][notify]") {
    // The 64 B points of configs/netvm/detection.ini, as docs/rdma.md "Notifications:
    // event counters and detection" quotes them.
    const Settings pp{{"workload.kind", "pingpong"},
                      {"workload.message-size", "64B"},
                      {"workload.iterations", "1000"},
                      {"rdma.notify", "counter"}};
    const std::map<std::string, std::pair<double, double>> quoted{{"counter", {1.1994, 4525.32}},
                                                                  {"poll", {1.1994, 4473.32}},
                                                                  {"interrupt", {6.18144, 20000}},
                                                                  {"handler", {7.36219, 24800}}};
    for (const auto& [mode, fig] : quoted) {
        const Outcome o = run_child(pp + Settings{{"rdma.completion", mode}});
        INFO(mode << ": " << o.error);
        REQUIRE(o.ran);
        REQUIRE(o.clean);
        CHECK(o.figures.at("latency_us") == Approx(fig.first).epsilon(1e-4));
        CHECK(o.figures.at("wait_cpu_us") == Approx(fig.second).epsilon(1e-4));
        CHECK(o.figures.at("counter_increments") == 2000);
    }
}
