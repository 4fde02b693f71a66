// Every parameter does what it says: each value of every enumeration
// parameter (taken from the registry, so a new parameter or value without a
// scenario here fails) changes some statistic of a scenario where it should
// matter, and the three completion modes of the RDMA library differ as they
// should. Each run is its own SystemC elaboration, in a child process.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include <unistd.h>

#include "child_process.hpp"
#include "src/sim/system.hpp"
#include "system_sim.hpp"
#include "workloads/registry.hpp"
#include "workloads/workload.hpp"

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

// Builds and runs the system with `settings` in a child process: `over`
// a layer over them (Config::layer), as the command line over a config
// file (a scenario's workload.kind over its other settings).
Outcome run_child(const Settings& settings, const Settings& over = {}) {
    const std::string text = in_child_text([&settings, &over] {
        std::ostringstream os;
        try {
            SystemSim s(SystemSim::Defaults{settings}, over);
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

// Every node of a 3x2 torus writes 64 KiB to its image, 3 VCs (adaptive
// needs them): the interconnect's parameters.
const Settings kTorusPermutation{{"topology.kind", "torus"},
                                 {"topology.x", "3"},
                                 {"topology.y", "2"},
                                 {"router.vcs", "3"},
                                 {"dram.size", "1GiB"},
                                 {"workload.kind", "permutation"},
                                 {"workload.total-bytes", "64KiB"},
                                 {"workload.message-size", "16KiB"},
                                 {"sim.time-limit", "1s"}};

// For each enumeration parameter of the simulator's, the models' and the
// libraries' (a workload kind's own parameters: its declaration,
// WorkloadKind::Trial::effects), a scenario in which every one of its
// values should show: each value, set on top of the scenario, must change
// some statistic against the parameter's default. A kind named here is only
// the traffic a generic parameter shows in.
const std::map<std::string, Settings>& scenarios() {
    static const std::map<std::string, Settings> s{
        // Node count and names, links.
        {"topology.kind", kStream},
        // Who sends to whom.
        {"workload.kind", Settings{{"topology.nodes", "4"},
                                   {"workload.total-bytes", "128KiB"},
                                   {"workload.message-size", "16KiB"},
                                   {"workload.iterations", "2"},
                                   // (each kind with what it needs: Scenario::value_needs)
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
        // clear-to-send and writes; read: reads and a FIN).
        {"msg.rendezvous",
         Settings{{"workload.kind", "sendrecv"}, {"workload.message-size", "16KiB"}, {"workload.iterations", "4"}}},
        // Which node's hog re-touches its memory.
        {"hog.nodes", kStream + Settings{{"hog.bytes", "2MiB"}, {"hog.interval", "50us"}}},
        // Writes posted by src-node or reads posted by dst-node: who posts,
        // who serves read requests.
        {"workload.operation", kStream},
        // Compute phases touching buffers in flight (16 transfers of 16 KiB,
        // half the phases touching a buffer in flight): the guard makes the
        // touches fault instead of racing.
        {"rdma.buffer-guard", Settings{{"workload.kind", "overlap"},
                                       {"workload.message-size", "16KiB"},
                                       {"workload.iterations", "16"},
                                       {"overlap.touch-probability", "0.5"},
                                       {"sim.time-limit", "1s"}}},
        // Prefetch advice on a cold stream: the workers populate, the
        // engines fault less.
        {"rdma.prefetch", Settings{{"workload.total-bytes", "256KiB"},
                                   {"workload.populate", "false"},
                                   {"workload.fill-source", "false"},
                                   {"workload.buffers", "16"}}},
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

// A parameter's scenario: its settings; where its default (`auto`) makes
// in them the same choice as one of its other values, a second scenario in
// which it chooses otherwise (there each value must change some statistic
// in one of the two; {}: none); what one value needs besides the scenario
// (a value that names a file; a workload kind, what it declares it needs to
// run), by value; and, where its default refuses that very scenario (as
// mpi.untimed = refuse stops at the call that count lets through), what the
// default's error names ("": the default runs clean).
struct Scenario {
    Settings settings;
    Settings second;
    std::map<std::string, Settings> value_needs;
    std::string default_refuses;
};

// The scenarios above, and those each workload declares of its own
// parameters (WorkloadKind::Trial::effects: workload.kind = it, what it
// needs, the scenario's settings), so that a new kind's parameters need no
// edit here. A parameter with a scenario in both is an error.
const std::map<std::string, Scenario>& all_scenarios() {
    static const std::map<std::string, Scenario> s = [] {
        std::map<std::string, Scenario> all;
        for (const auto& [param, settings] : scenarios()) all[param].settings = settings;
        for (const WorkloadKind& k : workload_kinds::all())
            all.at("workload.kind").value_needs[k.name] = placed(k.trial.needs);
        for (const WorkloadKind& k : workload_kinds::all())
            for (const WorkloadKind::Trial::Effect& e : k.trial.effects) {
                const Settings own = Settings{{"workload.kind", k.name}} + placed(k.trial.needs);
                Scenario sc{own + placed(e.settings),
                            e.second.empty() ? Settings{} : own + placed(e.second),
                            {},
                            e.default_refuses};
                for (const auto& [value, needs] : e.value_needs) sc.value_needs[value] = placed(needs);
                if (!all.emplace(e.param, sc).second)
                    throw std::logic_error(e.param + ": a scenario here and one declared by workload.kind = " + k.name);
            }
        return all;
    }();
    return s;
}

// What value `value` of the parameter of scenario `sc` needs besides it.
Settings value_needs(const Scenario& sc, const std::string& value) {
    const auto it = sc.value_needs.find(value);
    return it == sc.value_needs.end() ? Settings{} : it->second;
}

}   // namespace

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
        const Scenario& sc = it->second;
        const Outcome base = run_child(sc.settings, Settings{{name, d.default_text}});
        INFO(name << " = " << d.default_text << " (default): " << base.error);
        REQUIRE(base.ran);
        if (!sc.default_refuses.empty())
            CHECK((!base.clean && base.error.find(sc.default_refuses) != std::string::npos));
        else CHECK(base.clean);
        for (const std::string& v : d.choices) {
            if (v == d.default_text) continue;
            const Outcome o = run_child(sc.settings, Settings{{name, v}} + value_needs(sc, v));
            INFO(name << " = " << v << ": " << o.error);
            REQUIRE(o.ran);
            CHECK(o.clean);
            if (o.stats == base.stats && !sc.second.empty()) {
                const Outcome b2 = run_child(sc.second, Settings{{name, d.default_text}});
                const Outcome o2 = run_child(sc.second, Settings{{name, v}} + value_needs(sc, v));
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

// A run for each value a kind's reads depend on (WorkloadKind::reads_only:
// sendrecv's workload.sendrecv-test, latency and bandwidth), or one run.
std::vector<Settings> reads_only_variants(const WorkloadKind& k) {
    std::vector<Settings> out{Settings{}};
    std::map<std::string, std::set<std::string>> values;   // by the parameter they are of
    for (const WorkloadKind::ReadsOnly& r : k.reads_only) values[r.when].insert(r.values.begin(), r.values.end());
    for (const auto& [when, vs] : values) {
        std::vector<Settings> next;
        for (const Settings& before : out)
            for (const std::string& v : vs) next.push_back(before + Settings{{when, v}});
        out = next;
    }
    return out;
}

TEST_CASE("each workload kind reads exactly the shared workload parameters it declares", "[params][system]") {
    // A small run of each kind (what its trial needs, and its matrix's
    // small settings), each shared parameter it declares it reads
    // (WorkloadKind::reads, among WorkloadParams::per_kind) set small:
    // Config::was_read must find each of them read, and no other of them
    // (one read and undeclared: a setting of it refused, though it counts).
    const std::map<std::string, std::string> small{{"workload.message-size", "8KiB"},
                                                   {"workload.total-bytes", "32KiB"},
                                                   {"workload.iterations", "2"},
                                                   {"workload.window", "2"}};
    const std::vector<std::string>& shared = params_of<WorkloadParams>().per_kind;
    for (const WorkloadKind& k : workload_kinds::all())
        for (const Settings& variant : reads_only_variants(k)) {
            // What it reads with this variant's values (reads_only).
            std::set<std::string> expected(k.reads.begin(), k.reads.end());
            for (const WorkloadKind::ReadsOnly& r : k.reads_only)
                for (const auto& [when, value] : variant)
                    if (when == r.when && std::find(r.values.begin(), r.values.end(), value) == r.values.end())
                        expected.erase(r.param);
            Settings s = Settings{{"workload.kind", k.name}, {"sim.time-limit", "1s"}} + placed(k.trial.needs) +
                         placed(k.trial.matrix) + variant;
            for (const std::string& p : expected)
                if (small.count(p)) s.emplace_back(p, small.at(p));
            const std::string text = in_child_text([&s, &shared] {
                std::ostringstream os;
                try {
                    SystemSim sim(s);
                    sim.run();
                    os << "ran\n";
                    for (const std::string& p : shared)
                        if (sim.cfg->was_read(p)) os << p << "\n";
                } catch (const std::exception& e) {
                    os << "error " << e.what() << "\n";
                }
                return os.str();
            });
            std::string with;
            for (const auto& [when, value] : variant) with += " " + when + "=" + value;
            INFO("workload.kind = " << k.name << with << ":\n" << text);
            std::istringstream in(text);
            std::string line;
            REQUIRE(std::getline(in, line));
            REQUIRE(line == "ran");
            std::set<std::string> read;
            while (std::getline(in, line)) read.insert(line);
            CHECK(read == expected);
        }
}

TEST_CASE("every scenario is of an enumeration parameter and each has one", "[params]") {
    ParamRegistry reg;
    declare_all_params(reg);
    std::size_t enums = 0;
    for (const ParamDecl& d : reg.all()) enums += d.type == ParamType::Enum;
    for (const auto& [name, scenario] : all_scenarios()) {
        INFO("scenario of " << name);
        const ParamDecl* d = reg.find(name);
        CHECK((d != nullptr && d->type == ParamType::Enum));
    }
    // (the first case checks that each has one)
    CHECK(all_scenarios().size() == enums);
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
