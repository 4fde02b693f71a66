// Variation sources a real system has, seeded by sim.seed and off by
// default (every figure reproducible): a run with the same seed gives the
// same figures, another seed another sample of the noise. What `vrdmasim
// sweep --replications N` needs to give a mean with a confidence interval.
//
//   noise.start-skew  each process starts its program after a delay drawn
//                     uniformly from [0, start-skew] (a launcher's skew:
//                     mpirun, srun start ranks microseconds to milliseconds
//                     apart)
//   noise.cpu-jitter  every piece of software work on a core takes its time
//                     times (1 + x), x drawn uniformly from [0, 2 cpu-jitter]
//                     (mean cpu-jitter): OS noise, timer ticks and daemons
//                     taking a share of the core (Hoefler, Schneider and
//                     Lumsdaine, "Characterizing the Influence of System Noise
//                     on Large-Scale Applications by Simulation", SC10: noise
//                     of the order of 0.1 % to a few % of a core)
//
// Each draw comes from its own stream (a node, a process, a purpose), so
// adding a draw somewhere does not shift every other one.
#pragma once

#include <cstdint>
#include <string>

#include "src/core/params.hpp"

namespace vrdmasim {

struct NoiseParams {
    NoiseParams()
        : set("noise", "variation sources, seeded by sim.seed, off by default (models/common/noise.hpp)"),
          start_skew(set.time("start-skew", "0ps",
                              "each process's program starts after a delay drawn uniformly from [0, start-skew] "
                              "(*estimate* of a launcher's skew: microseconds to milliseconds); 0: all at once")
                         .range("0ps", "1s")),
          cpu_jitter(set.real("cpu-jitter", "0",
                              "every piece of software work on a core takes (1 + x) times as long, x uniform in "
                              "[0, 2 cpu-jitter] (mean cpu-jitter): OS noise (Hoefler et al., SC10: 0.1 % to a "
                              "few %); 0: none")
                         .range("0", "1")),
          daemon_phase(set.boolean("daemon-phase", "false",
                                   "the kernel's periodic daemons (khugepaged, kcompactd) start their first sleep at "
                                   "a phase drawn uniformly from their period, as timers that began long before "
                                   "the workload would; false: all at the start")) {}
    ParamSet set;
    TimeParam start_skew;
    RealParam cpu_jitter;
    BoolParam daemon_phase;
    // Declared by every model that draws noise (once: a second call does nothing).
    static void declare_params(ParamRegistry& reg) {
        if (!reg.find(params_of<NoiseParams>().cpu_jitter.name())) reg.add(params_of<NoiseParams>().set);
    }
    // Whether any variation source is on: with none, every seed gives the
    // same timing (the simulation is deterministic).
    static bool any(const Config& c) {
        const NoiseParams& p = params_of<NoiseParams>();
        return c[p.start_skew] > sc_core::SC_ZERO_TIME || c[p.cpu_jitter] > 0 || c[p.daemon_phase];
    }
};

// A small, portable generator (splitmix64): the same numbers on every
// platform and library, unlike std::uniform_real_distribution.
class NoiseStream {
public:
    NoiseStream(std::uint64_t seed, const std::string& purpose, std::uint64_t index) : state_(seed) {
        for (const char c : purpose) state_ = mix(state_ ^ static_cast<unsigned char>(c));
        state_ = mix(state_ ^ (index + 0x9e3779b97f4a7c15ull));
    }
    // Uniform in [0, 1).
    double uniform() {
        state_ += 0x9e3779b97f4a7c15ull;
        return static_cast<double>(mix(state_) >> 11) * (1.0 / 9007199254740992.0);
    }

private:
    static std::uint64_t mix(std::uint64_t z) {
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
        return z ^ (z >> 31);
    }
    std::uint64_t state_;
};

}   // namespace vrdmasim
