// The shard of a sweep a process runs when --shard is not given: a Slurm
// array task's or an MPI rank's, from the environment (sweep.hpp,
// shard_from_environment).
#include <string>
#include <utility>

#include "src/core/params.hpp"
#include "src/tools/sweep.hpp"

namespace vrdmasim {

namespace {

// The environment as the shard is read from it: unset and empty are the same.
class Environment {
public:
    explicit Environment(const std::function<const char*(const char*)>& env) : env_(env) {}
    const char* get(const char* name) const {
        const char* v = env_(name);
        return v && *v ? v : nullptr;
    }
    long number(const char* name) const {
        const char* v = get(name);
        const std::string s = v ? v : "";
        if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
            throw ConfigError("environment: " + std::string(name) + "=" + clip_for_message(s) +
                              ": expected a whole number (or give --shard I/N)");
        return std::stol(s);
    }

private:
    const std::function<const char*(const char*)>& env_;
};

// One way of splitting a sweep: this process's index of `count`, and the variables that said so.
struct Split {
    long index = -1, count = 0;
    std::string from;
};

// A Slurm array task: its index in the range of the array's ids.
Split slurm_task(const Environment& e) {
    Split s;
    if (!e.get("SLURM_ARRAY_TASK_ID")) return s;
    const long id = e.number("SLURM_ARRAY_TASK_ID");
    if (e.get("SLURM_ARRAY_TASK_MIN") && e.get("SLURM_ARRAY_TASK_MAX")) {
        const long lo = e.number("SLURM_ARRAY_TASK_MIN"), hi = e.number("SLURM_ARRAY_TASK_MAX");
        const long step = e.get("SLURM_ARRAY_TASK_STEP") ? e.number("SLURM_ARRAY_TASK_STEP") : 1;
        if (step < 1 || hi < lo || id < lo || id > hi || (id - lo) % step != 0)
            throw ConfigError("environment: SLURM_ARRAY_TASK_ID=" + std::to_string(id) + " is not in the range " +
                              std::to_string(lo) + "-" + std::to_string(hi) + ":" + std::to_string(step) +
                              " of SLURM_ARRAY_TASK_MIN/MAX/STEP (give --shard I/N)");
        s.index = (id - lo) / step;
        s.count = (hi - lo) / step + 1;
        if (e.get("SLURM_ARRAY_TASK_COUNT") && e.number("SLURM_ARRAY_TASK_COUNT") != s.count)
            throw ConfigError("environment: the array's task ids are not the range " + std::to_string(lo) + "-" +
                              std::to_string(hi) + ":" + std::to_string(step) +
                              " (SLURM_ARRAY_TASK_COUNT=" + std::to_string(e.number("SLURM_ARRAY_TASK_COUNT")) +
                              "): a sweep needs tasks numbered as a range; give --shard I/N");
        s.from = "SLURM_ARRAY_TASK_ID/MIN/MAX";
    } else if (e.get("SLURM_ARRAY_TASK_COUNT")) {
        s.count = e.number("SLURM_ARRAY_TASK_COUNT");
        s.index = id - (e.get("SLURM_ARRAY_TASK_MIN") ? e.number("SLURM_ARRAY_TASK_MIN") : 0);
        if (s.count < 1 || s.index < 0 || s.index >= s.count)
            throw ConfigError("environment: SLURM_ARRAY_TASK_ID=" + std::to_string(id) +
                              " is not one of SLURM_ARRAY_TASK_COUNT=" + std::to_string(s.count) +
                              " tasks (give --shard I/N)");
        s.from = "SLURM_ARRAY_TASK_ID/COUNT";
    } else {
        throw ConfigError(
            "environment: SLURM_ARRAY_TASK_ID is set but neither SLURM_ARRAY_TASK_MIN/MAX nor "
            "SLURM_ARRAY_TASK_COUNT: cannot tell how many tasks share the sweep (give --shard I/N)");
    }
    return s;
}

// An MPI rank. (Not SLURM_PROCID/SLURM_NTASKS: a batch script that runs the
// sweep itself has them too, 0 of N, and would run one shard only; under
// srun, give --shard $SLURM_PROCID/$SLURM_NTASKS.)
Split mpi_rank(const Environment& e) {
    Split s;
    for (const auto& [r, n] : {std::pair<const char*, const char*>{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                               {"PMI_RANK", "PMI_SIZE"}}) {
        if (!e.get(r)) continue;
        if (!e.get(n))
            throw ConfigError("environment: " + std::string(r) + " is set but not " + n +
                              ": cannot tell how many ranks share the sweep (give --shard I/N)");
        s.index = e.number(r);
        s.count = e.number(n);
        if (s.count < 1 || s.index >= s.count)
            throw ConfigError("environment: " + std::string(r) + "=" + std::to_string(s.index) + " is not below " + n +
                              "=" + std::to_string(s.count) + " (give --shard I/N)");
        s.from = std::string(r) + "/" + n;
        break;
    }
    return s;
}

}   // namespace

ShardFromEnv mpi_rank_from_environment(const std::function<const char*(const char*)>& env) {
    const Split rank = mpi_rank(Environment(env));
    ShardFromEnv s;
    if (rank.index >= 0) {
        s.index = static_cast<int>(rank.index);
        s.count = static_cast<int>(rank.count);
        s.from = rank.from;
    }
    return s;
}

ShardFromEnv shard_from_environment(const std::function<const char*(const char*)>& env) {
    const Environment e(env);
    const Split task = slurm_task(e);
    const Split rank = mpi_rank(e);
    ShardFromEnv s;
    if (task.index >= 0 && rank.index >= 0) {
        s.index = static_cast<int>(task.index * rank.count + rank.index);
        s.count = static_cast<int>(task.count * rank.count);
        s.from = task.from + " and " + rank.from;
    } else if (task.index >= 0) {
        s.index = static_cast<int>(task.index);
        s.count = static_cast<int>(task.count);
        s.from = task.from;
    } else if (rank.index >= 0) {
        s.index = static_cast<int>(rank.index);
        s.count = static_cast<int>(rank.count);
        s.from = rank.from;
    }
    if (s.count > 100000)
        throw ConfigError("environment: " + std::to_string(s.count) + " shards (" + s.from +
                          "): more than 100000; give --shard I/N");
    return s;
}

}   // namespace vrdmasim
