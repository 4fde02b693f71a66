// CpuCores: the node's Cortex-A53 cores as a reservation resource. Plain
// sc_time arithmetic, no simulation: exact start/end times, core choice,
// per-activity statistics and trace spans.
#include <catch2/catch.hpp>

#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>
#include <unistd.h>
#include <utility>
#include <vector>

#include <systemc>

#include "model_env.hpp"
#include "models/os/cpu.hpp"

using namespace vrdmasim;
using sc_core::sc_time;

namespace {

using vrdmasim_test::Settings;

sc_time us(double v) { return sc_time::from_value(static_cast<sc_dt::uint64>(v * 1e6 + 0.5)); }
sc_time ps(sc_dt::uint64 v) { return sc_time::from_value(v); }

const vrdmasim_test::ParamDecls kCpuParams = {CpuCores::declare_params};

ParamRegistry cpu_params() { return vrdmasim_test::params_of(kCpuParams); }

struct CpuEnv : vrdmasim_test::ModelEnv {
    explicit CpuEnv(const Settings& settings = {}) : ModelEnv(kCpuParams, {}, settings) {}
};

}   // namespace

TEST_CASE("cpu: parameters default to 4 cores at 1.5 GHz, with sources", "[os][cpu]") {
    ParamRegistry reg = cpu_params();
    const ParamDecl* cores = reg.find("cpu.cores");
    const ParamDecl* clock = reg.find("cpu.clock");
    REQUIRE(cores);
    REQUIRE(clock);
    CHECK(cores->type == ParamType::Int);
    CHECK(cores->default_text == "4");
    CHECK(clock->type == ParamType::Frequency);
    CHECK(clock->default_text == "1.5GHz");
    CHECK(cores->help.find("2307.09371") != std::string::npos);
    CHECK(clock->help.find("2307.09371") != std::string::npos);

    CpuEnv env;
    CpuCores cpu(env.ctx, "node0.cpu", "node0");
    CHECK(cpu.cores() == 4);
    CHECK(cpu.frequency_hz() == 1.5e9);

    CpuEnv two(Settings{{"cpu.cores", "2"}, {"cpu.clock", "1GHz"}});
    CpuCores cpu2(two.ctx, "node0.cpu", "node0");
    CHECK(cpu2.cores() == 2);
    CHECK(cpu2.frequency_hz() == 1e9);
    CHECK_THROWS_AS(two.cfg.set("cpu.cores", "0", "test"), ConfigError);
}

TEST_CASE("cpu: cycles() converts at the configured clock, rounded to 1 ps", "[os][cpu]") {
    CpuEnv env;
    CpuCores cpu(env.ctx, "node0.cpu", "node0");
    CHECK(cpu.cycles(0) == sc_core::SC_ZERO_TIME);
    CHECK(cpu.cycles(1500) == us(1));   // 1500 cycles at 1.5 GHz
    CHECK(cpu.cycles(3) == ps(2000));
    CHECK(cpu.cycles(1) == ps(667));   // 666.67 ps rounded
    CHECK(cpu.cycles(1.5e9) == ps(1000000000000ULL));
    CHECK_THROWS_AS(cpu.cycles(-1), std::invalid_argument);

    CpuEnv slow(Settings{{"cpu.clock", "1GHz"}});
    CpuCores cpu1(slow.ctx, "node0.cpu", "node0");
    CHECK(cpu1.cycles(5) == ps(5000));
}

TEST_CASE("cpu: four jobs run in parallel, a fifth waits for the first free core", "[os][cpu]") {
    CpuEnv env;
    CpuCores cpu(env.ctx, "node0.cpu", "node0");
    for (unsigned k = 0; k < 4; ++k) {
        const auto s = cpu.run("syscall", sc_core::SC_ZERO_TIME, us(10));
        CHECK(s.core == k);
        CHECK(s.start == sc_core::SC_ZERO_TIME);
        CHECK(s.end == us(10));
    }
    // All four busy until 10 us: ready at 1 us, it starts at 10 us on core 0.
    const auto fifth = cpu.run("syscall", us(1), us(5));
    CHECK(fifth.core == 0);
    CHECK(fifth.start == us(10));
    CHECK(fifth.end == us(15));
    // Ready at 12 us: cores 1..3 are idle (free since 10 us): the lowest one.
    const auto sixth = cpu.run("syscall", us(12), us(1));
    CHECK(sixth.core == 1);
    CHECK(sixth.start == us(12));
    CHECK(sixth.end == us(13));

    const Histogram* wait = env.stats.find_histogram("node0.cpu.syscall.wait_time");
    REQUIRE(wait);
    CHECK(wait->count() == 6);
    CHECK(wait->max() == 9000.0);   // ns: the fifth job
    CHECK(wait->sum() == 9000.0);
    CHECK(wait->min() == 0.0);
}

TEST_CASE("cpu: a waiting job takes the core that frees first, not the lowest", "[os][cpu]") {
    CpuEnv env;
    CpuCores cpu(env.ctx, "node0.cpu", "node0");
    CHECK(cpu.run("irq", sc_core::SC_ZERO_TIME, us(4)).core == 0);
    CHECK(cpu.run("irq", sc_core::SC_ZERO_TIME, us(3)).core == 1);
    CHECK(cpu.run("irq", sc_core::SC_ZERO_TIME, us(2)).core == 2);
    CHECK(cpu.run("irq", sc_core::SC_ZERO_TIME, us(1)).core == 3);
    auto s = cpu.run("irq", sc_core::SC_ZERO_TIME, us(2));
    CHECK(s.core == 3);
    CHECK(s.start == us(1));
    CHECK(s.end == us(3));
    s = cpu.run("irq", sc_core::SC_ZERO_TIME, us(1));   // core 2 free at 2 us
    CHECK(s.core == 2);
    CHECK(s.start == us(2));
    // Ties at the same free time (cores 1 and 3 at 3 us): the lowest.
    s = cpu.run("irq", sc_core::SC_ZERO_TIME, us(1));
    CHECK(s.core == 1);
    CHECK(s.start == us(3));
    s = cpu.run("irq", sc_core::SC_ZERO_TIME, us(1));
    CHECK(s.core == 2);   // core 2 free at 3 us too, below core 3
    CHECK(s.start == us(3));
    // Free at 4, 4, 4, 3 us. Work ready at 10 us finds every core idle: it goes
    // to the lowest-numbered one, not to the one idle longest (core 3).
    s = cpu.run("irq", us(10), us(1));
    CHECK(s.core == 0);
    CHECK(s.start == us(10));
    s = cpu.run("irq", us(10), us(1));
    CHECK(s.core == 1);

    // With one core everything serialises in call order.
    CpuEnv one(Settings{{"cpu.cores", "1"}});
    CpuCores single(one.ctx, "node0.cpu", "node0");
    sc_time t = sc_core::SC_ZERO_TIME;
    for (int i = 0; i < 5; ++i) {
        const auto r = single.run("kswapd", sc_core::SC_ZERO_TIME, us(2));
        CHECK(r.core == 0);
        CHECK(r.start == t);
        t += us(2);
        CHECK(r.end == t);
    }
    CHECK(one.stats.find_histogram("node0.cpu.kswapd.wait_time")->sum() == 2000.0 + 4000 + 6000 + 8000);
}

TEST_CASE("cpu: work booked once over holds a core from when one was free, never past its end", "[os][cpu]") {
    // A spin that lasted [start, end): booked when it is over (ran()), it
    // held a core only while one was free, and never beyond `end`: with
    // more spinners than cores, booking it after the work that took the
    // cores meanwhile (run()) would hold a core into the future and make
    // every later piece of work wait for time already spent (issue #57).
    CpuEnv env(Settings{{"cpu.cores", "2"}});
    CpuCores cpu(env.ctx, "node0.cpu", "node0");
    // A core idle all along: the whole span, as run() would book it.
    auto s = cpu.ran("poll", us(0), us(10));
    CHECK(s.core == 0);
    CHECK(s.start == us(0));
    CHECK(s.end == us(10));
    CHECK(cpu.run("app", us(2), us(10)).core == 1);   // core 1 [2, 12)
    // Spun [5, 20): core 0 free from 10 us, so held [10, 20), not [10, 25).
    s = cpu.ran("poll", us(5), us(20));
    CHECK(s.core == 0);
    CHECK(s.start == us(10));
    CHECK(s.end == us(20));
    // Spun [12, 15) while core 1 was free (core 0 busy until 20 us).
    s = cpu.ran("poll", us(12), us(15));
    CHECK(s.core == 1);
    CHECK(s.start == us(12));
    CHECK(s.end == us(15));
    // Work ready at 16 us does not wait for spins already over.
    CHECK(cpu.run("app", us(16), us(1)).start == us(16));   // core 1 [16, 17)
    // Both cores busy past a spin's end: it held none, and books nothing.
    cpu.run("app", us(17), us(30));   // core 1 [17, 47)
    s = cpu.ran("poll", us(14), us(18));
    CHECK(s.start == s.end);
    CHECK(s.start == us(20));   // core 0 still free from 20 us
    CHECK(cpu.run("app", us(21), us(1)).start == us(21));
    CHECK(cpu.busy("poll") == us(10 + 10 + 3));
    const Histogram* wait = env.stats.find_histogram("node0.cpu.poll.wait_time");
    REQUIRE(wait);
    CHECK(wait->count() == 4);
    CHECK(wait->sum() == 5000.0 + 6000.0);   // ns: from start to when a core was free

    // Many spinners on few cores, for ever: the cores' backlog stays bounded
    // (booked with run(), each spin after the last, it grows by the excess
    // spinning every round).
    CpuEnv one(Settings{{"cpu.cores", "1"}});
    CpuCores single(one.ctx, "node0.cpu", "node0");
    for (int round = 0; round < 100; ++round)
        for (int spinner = 0; spinner < 4; ++spinner) single.ran("poll", us(round), us(round + 1));
    CHECK(single.run("app", us(100), us(1)).start == us(100));
    CHECK(single.busy("poll") == us(100));
}

TEST_CASE("cpu: work booked after work ready later takes a gap before it, or waits and is counted and said",
          "[os][cpu]") {
    // A process running ahead of the kernel books its work at its own
    // time; work ready earlier may be booked after it (the kernel's
    // interrupt handler). It takes the first idle interval at or after its
    // ready time that holds it, before the later work if it fits there.
    CpuEnv env(Settings{{"cpu.cores", "1"}});
    CpuCores cpu(env.ctx, "node0.cpu", "node0");
    cpu.run("app", us(10), us(5));   // [10, 15)
    cpu.run("app", us(20), us(5));   // [20, 25)
    // Ready at 15.5 us, 2 us long: the gap [15, 20) holds it.
    auto s = cpu.run("irq", us(15.5), us(2));
    CHECK(s.start == us(15.5));
    CHECK(s.end == us(17.5));
    // Ready at 16 us: waits for that one (ready before it: in order), then
    // the rest of the gap, [17.5, 20), holds it.
    s = cpu.run("irq", us(16), us(1));
    CHECK(s.start == us(17.5));
    CHECK(env.stats.find_counter("node0.cpu.order_inversions") == nullptr);   // nothing out of order yet
    CHECK(CpuCores::order_warning(env.stats).empty());
    CHECK(env.stats.require_sum_counters("cpu.order_inversions") == 0);   // declared: an honest 0
    // Ready at 18 us, 3 us long: no gap holds it before the app's piece
    // ready at 20 us, booked before it by call: it waits until 25 us.
    s = cpu.run("irq", us(18), us(3));
    CHECK(s.start == us(25));
    const Counter* n = env.stats.find_counter("node0.cpu.order_inversions");
    REQUIRE(n);
    CHECK(n->value() == 1);
    CHECK(env.stats.find_scalar("node0.cpu.order_wait")->value() == Approx(7.0));   // us: 18 -> 25
    CHECK_THAT(CpuCores::order_warning(env.stats),
               Catch::Contains("1 piece(s) of CPU work waited for a core behind work that became ready after them"));
    // Work booked once over (a spin, ran()) waited for nothing: placed after
    // all the core's work, from when it was free, and never counted.
    cpu.run("app", us(40), us(5));   // [40, 45)
    s = cpu.ran("poll", us(30), us(50));
    CHECK(s.start == us(45));
    CHECK(n->value() == 1);
}

TEST_CASE("cpu: busy time and runs are accounted per activity", "[os][cpu]") {
    CpuEnv env;
    CpuCores cpu(env.ctx, "node1.cpu", "node1");
    CHECK(env.stats.find_scalar("node1.cpu.khugepaged.busy_time") == nullptr);   // created on first use
    cpu.run("khugepaged", us(0), us(7));
    cpu.run("khugepaged", us(100), ps(500));
    cpu.run("fault-handler", us(3), us(2), "smmu fault cb0");
    cpu.run("fault-handler", us(3), sc_core::SC_ZERO_TIME);

    CHECK(cpu.busy("khugepaged") == us(7) + ps(500));
    CHECK(cpu.busy("fault-handler") == us(2));
    CHECK(cpu.busy("kswapd") == sc_core::SC_ZERO_TIME);

    const Scalar* kh = env.stats.find_scalar("node1.cpu.khugepaged.busy_time");
    const Scalar* fh = env.stats.find_scalar("node1.cpu.fault-handler.busy_time");
    REQUIRE(kh);
    REQUIRE(fh);
    CHECK(kh->value() == Approx(7.0005).epsilon(1e-12));
    CHECK(env.stats.info(*kh).unit() == "us");
    CHECK(fh->value() == Approx(2.0).epsilon(1e-12));
    REQUIRE(env.stats.find_counter("node1.cpu.khugepaged.runs"));
    CHECK(env.stats.find_counter("node1.cpu.khugepaged.runs")->value() == 2);
    CHECK(env.stats.find_counter("node1.cpu.fault-handler.runs")->value() == 2);
    CHECK(env.stats.find_histogram("node1.cpu.fault-handler.wait_time")->info.unit() == "ns");
    CHECK(env.stats.find_scalar("node1.cpu.kswapd.busy_time") == nullptr);
    CHECK(env.stats.sum_counters("transactions") == 0);   // CPU work is not a transaction

    CHECK_THROWS_AS(cpu.run("", us(0), us(1)), std::invalid_argument);
}

TEST_CASE("cpu: a run that ends counts the work booked beyond its end only up to it", "[os][cpu]") {
    // Loosely timed, a piece of work is counted busy in full when booked. A
    // hog's populate still under way when the workload ends (the run's last
    // event) must not make the cores busier than the run lasted.
    CpuEnv env(Settings{{"cpu.cores", "2"}});
    CpuCores cpu(env.ctx, "node1.cpu", "node1");
    cpu.run("syscall", us(0), us(250));   // core 0 until 250 us
    cpu.run("poll", us(0), us(10));   // core 1 until 10 us
    cpu.run("poll", us(10), us(5));   // core 1 [10, 15)
    cpu.run("poll", us(5), us(50));   // core 1 [15, 65)
    cpu.run("khugepaged", us(100), us(20));   // core 1 [100, 120): after the end
    cpu.end_run(us(60));
    CHECK(cpu.busy("syscall") == us(60));
    CHECK(cpu.busy("poll") == us(60));
    CHECK(cpu.busy("khugepaged") == sc_core::SC_ZERO_TIME);
    CHECK(env.stats.find_scalar("node1.cpu.syscall.busy_time")->value() == Approx(60).epsilon(1e-12));
    CHECK(env.stats.find_scalar("node1.cpu.poll.busy_time")->value() == Approx(60).epsilon(1e-12));
    CHECK(env.stats.find_scalar("node1.cpu.khugepaged.busy_time")->value() == Approx(0).margin(1e-9));
    CHECK(env.stats.find_scalar("node1.cpu.cores_busy_time")->value() == Approx(120).epsilon(1e-12));
    // Twice is once: nothing is left beyond the end.
    cpu.end_run(us(60));
    CHECK(cpu.busy("syscall") == us(60));
}

TEST_CASE("cpu: work booked wholly beyond a run's end leaves a busy time of exactly zero, never below", "[os][cpu]") {
    // A run that fails mid-way ends with work booked beyond it: every
    // piece is taken back. Added and taken back as microseconds in floating
    // point, 0.1 + 0.1 + 1 - 0.1 - 0.1 - 1 came to -1.1e-16 us: a negative
    // busy time in stats.json. The busy times are exact picoseconds.
    CpuEnv env(Settings{{"cpu.cores", "1"}});
    CpuCores cpu(env.ctx, "node1.cpu", "node1");
    cpu.run("syscall", us(0), us(30));   // [0, 30): before the end
    cpu.run("kswapd", us(100), us(0.1));   // from 100 us, one after another: after the end
    cpu.run("kswapd", us(100), us(0.1));
    cpu.run("kswapd", us(100), us(1));
    cpu.end_run(us(60));
    CHECK(cpu.busy("kswapd") == sc_core::SC_ZERO_TIME);
    const double kswapd = env.stats.find_scalar("node1.cpu.kswapd.busy_time")->value();
    CHECK(kswapd >= 0);
    CHECK(kswapd == 0);
    CHECK(env.stats.find_scalar("node1.cpu.syscall.busy_time")->value() == Approx(30).epsilon(1e-12));
    CHECK(env.stats.find_scalar("node1.cpu.cores_busy_time")->value() == Approx(30).epsilon(1e-12));
}

TEST_CASE("cpu: one trace span per run on track cpu<k>, named by label or activity", "[os][cpu]") {
    CpuEnv env;
    CpuCores cpu(env.ctx, "node0.cpu", "node0");
    cpu.run("syscall", us(0), us(1));   // tracer closed: nothing recorded
    CHECK(env.tracer.events_written() == 0);

    const std::string path = "/tmp/vrdmasim_cpu_test_" + std::to_string(getpid()) + ".json";
    env.tracer.open(path);
    CpuCores traced(env.ctx, "node2.cpu", "node2");
    traced.run("fault-handler", us(0), us(3), "smmu-fault");
    traced.run("fault-library", us(0), us(2));
    traced.run("fault-library", us(0), us(2));
    CHECK(env.tracer.events_written() == 3);
    env.tracer.close();

    std::ifstream in(path);
    REQUIRE(in);
    std::stringstream ss;
    ss << in.rdbuf();
    const std::string json = ss.str();
    std::remove(path.c_str());
    CHECK(json.find("\"node2\"") != std::string::npos);
    for (const char* track : {"\"cpu0\"", "\"cpu1\"", "\"cpu2\"", "\"cpu3\""})
        CHECK(json.find(track) != std::string::npos);
    CHECK(json.find("\"name\":\"smmu-fault\"") != std::string::npos);
    CHECK(json.find("\"name\":\"fault-library\"") != std::string::npos);
    CHECK(json.find("\"activity\":\"fault-handler\"") != std::string::npos);
    CHECK(json.find("\"name\":\"fault-handler\"") == std::string::npos);   // the label replaced it
    CHECK(json.find("\"dur\":3") != std::string::npos);
    // Each span on its core's track.
    auto on_track = [&](unsigned core, const std::string& name) {
        const Tracer::Track t = env.tracer.track("node2", "cpu" + std::to_string(core));
        const std::string head =
            "\"pid\":" + std::to_string(t.pid) + ",\"tid\":" + std::to_string(t.tid) + ",\"name\":\"" + name + "\"";
        return json.find(head) != std::string::npos;
    };
    CHECK(on_track(0, "smmu-fault"));
    CHECK(on_track(1, "fault-library"));
    CHECK(on_track(2, "fault-library"));
    CHECK_FALSE(on_track(3, "fault-library"));
}
