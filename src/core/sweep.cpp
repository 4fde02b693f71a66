// Parameter sweeps: planning, running points as child processes, resuming,
// sharding and merging results. See sweep.hpp for the contract.
#include "src/tools/sweep.hpp"

#include "src/core/csv.hpp"
#include "src/core/metrics.hpp"
#include "src/core/output_dir.hpp"
#include "src/core/params.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cinttypes>
#include <cstdint>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <thread>

extern char** environ;

namespace vrdmasim {

namespace fs = std::filesystem;

namespace {

using Assignments = std::vector<std::pair<std::string, std::string>>;

// More points than this is almost certainly a mistake in the sweep file.
constexpr std::size_t kMaxPoints = 1000000;

std::string trim(const std::string& s) {
    const char* ws = " \t\r\n";
    auto b = s.find_first_not_of(ws);
    if (b == std::string::npos) return "";
    auto e = s.find_last_not_of(ws);
    return s.substr(b, e - b + 1);
}

std::uint64_t fnv1a64(const std::string& s) {
    std::uint64_t h = 14695981039346656037ULL;
    for (unsigned char c : s) {
        h ^= c;
        h *= 1099511628211ULL;
    }
    return h;
}

// "p0003-1a2b3c4d": index, then the low 32 bits of an FNV-1a 64 hash of every
// "key=value\n" assignment of the point (fixed and swept), sorted by key so
// that reordering lines of the sweep file does not change the hash.
std::string make_point_id(int index, Assignments all) {
    std::sort(all.begin(), all.end());
    std::string text;
    for (const auto& kv : all) text += kv.first + "=" + kv.second + "\n";
    char buf[64];
    std::snprintf(buf, sizeof buf, "p%04d-%08" PRIx32, index,
                  static_cast<std::uint32_t>(fnv1a64(text) & 0xffffffffULL));
    return buf;
}

// The index encoded in a point id ("p0003-..." -> 3), or -1.
long point_index_of(const std::string& id) {
    if (id.size() < 2 || id[0] != 'p') return -1;
    std::size_t i = 1;
    long v = 0;
    while (i < id.size() && id[i] >= '0' && id[i] <= '9') {
        if (v > 100000000L) return -1;
        v = v * 10 + (id[i] - '0');
        ++i;
    }
    if (i == 1 || (i < id.size() && id[i] != '-')) return -1;
    return v;
}

std::string fmt_duration(double seconds) {
    if (seconds < 0) seconds = 0;
    long s = static_cast<long>(seconds + 0.5);
    char buf[32];
    if (s >= 3600) std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, (s / 60) % 60, s % 60);
    else std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
    return buf;
}

// The last non-empty line of a (log) file, trimmed; "" if none or unreadable.
std::string last_nonempty_line(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return "";
    in.seekg(0, std::ios::end);
    std::streamoff size = in.tellg();
    const std::streamoff tail = 65536;
    in.seekg(size > tail ? size - tail : 0);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::string last;
    std::istringstream ss(data);
    std::string line;
    while (std::getline(ss, line)) {
        std::string t = trim(line);
        if (!t.empty()) last = t;
    }
    return last;
}

// ---------------------------------------------------------------------------
// The plan file beside a sweep's results (OUT/.vrdmasim-plan)

constexpr const char* kPlanFile = ".vrdmasim-plan";
constexpr const char* kPlanMagic = "vrdmasim sweep plan 1";

struct PlanFile {
    std::string path, fingerprint, label;
    std::vector<std::string> ids;   // every point of the sweep, by index
};

std::string plan_text(const SweepPlan& plan) {
    std::string t = std::string(kPlanMagic) + "\nfingerprint " + plan.fingerprint + "\nlabel " + plan.label +
                    "\npoints " + std::to_string(plan.points.size()) + "\n";
    for (const auto& p : plan.points) t += p.id + "\n";
    return t;
}

// Read a plan file; nullopt-like false when absent; ConfigError when it is
// there but not a plan.
bool read_plan_file(const fs::path& path, PlanFile& out) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return false;
    std::ifstream in(path, std::ios::binary);
    std::string line;
    auto bad = [&](const std::string& why) { return ConfigError(path.string() + ": not a sweep plan (" + why + ")"); };
    if (!std::getline(in, line) || line != kPlanMagic) throw bad("first line is not '" + std::string(kPlanMagic) + "'");
    out = PlanFile{};
    out.path = path.string();
    if (!std::getline(in, line) || line.rfind("fingerprint ", 0) != 0) throw bad("no fingerprint line");
    out.fingerprint = line.substr(12);
    if (!std::getline(in, line) || line.rfind("label ", 0) != 0) throw bad("no label line");
    out.label = line.substr(6);
    if (!std::getline(in, line) || line.rfind("points ", 0) != 0) throw bad("no points line");
    const long n = std::atol(line.c_str() + 7);
    while (std::getline(in, line))
        if (!line.empty()) out.ids.push_back(line);
    if (n < 0 || static_cast<std::size_t>(n) != out.ids.size())
        throw bad(std::to_string(out.ids.size()) + " point ids for 'points " + std::to_string(n) + "'");
    for (std::size_t i = 0; i < out.ids.size(); ++i)
        if (point_index_of(out.ids[i]) != static_cast<long>(i)) throw bad("point " + out.ids[i] + " out of order");
    return true;
}

// The plan that describes a results file: beside it, or, for a shard's file
// in OUT/shards, in OUT.
fs::path plan_path_for(const std::string& results) {
    fs::path dir = fs::path(results).parent_path();
    if (dir.empty()) dir = ".";
    if (dir.filename() == "shards") return dir.parent_path() / kPlanFile;
    return dir / kPlanFile;
}

// Write `text` to `path` through a unique temporary and a rename (several
// shards may write the same plan at once).
bool write_atomically(const fs::path& path, const std::string& text, std::string& err) {
    const fs::path tmp = path.string() + ".tmp-" + std::to_string(getpid());
    {
        std::ofstream os(tmp, std::ios::binary | std::ios::trunc);
        os << text;
        os.flush();
        if (!os) {
            err = "cannot write " + tmp.string();
            std::error_code ec;
            fs::remove(tmp, ec);
            return false;
        }
    }
    std::error_code ec;
    fs::rename(tmp, path, ec);
    if (ec) {
        err = "cannot rename " + tmp.string() + " to " + path.string() + ": " + ec.message();
        fs::remove(tmp, ec);
        return false;
    }
    return true;
}

std::string shard_name(int index, int count) { return std::to_string(index) + "-of-" + std::to_string(count); }

// ---------------------------------------------------------------------------
// Running

volatile sig_atomic_t g_interrupted = 0;
extern "C" void on_sigint(int) { g_interrupted = 1; }

struct Record {
    std::string status;   // ok, transfer-errors, failed, mismatch, interrupted
    std::string exit_code;
    std::string error;
    Assignments metrics;   // summary.csv columns, in its order
};

// The first data row of summary.csv as (column, value) pairs.
Assignments read_summary(const std::string& path) {
    Assignments out;
    std::vector<CsvRow> rows;
    try {
        rows = read_csv_file(path);
    } catch (const std::exception&) {
        return out;
    }
    if (rows.empty()) return out;
    const CsvRow& header = rows[0];
    for (std::size_t i = 0; i < header.size(); ++i) {
        std::string v = (rows.size() > 1 && i < rows[1].size()) ? rows[1][i] : "";
        out.emplace_back(header[i], v);
    }
    return out;
}

void write_results(const fs::path& final_path, const SweepPlan& plan,
                   const std::map<int, const SweepPoint*>& shard_points, const std::map<int, Record>& records) {
    CsvRow header{"point"};
    const bool labelled = !plan.label.empty();
    if (labelled) header.push_back("label");
    const std::size_t first_key = header.size();
    for (const auto& k : plan.swept_keys) header.push_back(k);
    header.push_back("status");
    header.push_back("exit_code");
    header.push_back("error");
    const std::size_t fixed_cols = header.size();
    std::set<std::string> names(header.begin(), header.end());
    std::map<std::string, std::size_t> metric_col;
    for (const auto& ir : records) {
        for (const auto& kv : ir.second.metrics) {
            // A summary column named like a leading column (e.g. an echo of a
            // swept key) would duplicate it: the leading column wins.
            if (names.count(kv.first)) continue;
            names.insert(kv.first);
            metric_col[kv.first] = header.size();
            header.push_back(kv.first);
        }
    }

    const fs::path tmp_path = final_path.string() + ".tmp";
    {
        std::ofstream os(tmp_path, std::ios::binary | std::ios::trunc);
        if (!os) {
            std::cerr << "vrdmasim: warning: cannot write " << tmp_path.string() << "\n";
            return;
        }
        write_csv_row(os, header);
        for (const auto& [index, rec] : records) {
            auto pit = shard_points.find(index);
            if (pit == shard_points.end()) continue;
            const SweepPoint& p = *pit->second;
            CsvRow row(header.size());
            row[0] = p.id;
            if (labelled) row[1] = plan.label;
            for (std::size_t k = 0; k < p.assignment.size(); ++k) row[first_key + k] = p.assignment[k].second;
            row[fixed_cols - 3] = rec.status;
            row[fixed_cols - 2] = rec.exit_code;
            row[fixed_cols - 1] = rec.error;
            for (const auto& kv : rec.metrics) {
                auto c = metric_col.find(kv.first);
                if (c != metric_col.end()) row[c->second] = kv.second;
            }
            write_csv_row(os, row);
        }
        os.flush();
        if (!os) {
            std::cerr << "vrdmasim: warning: error writing " << tmp_path.string() << "\n";
            return;
        }
    }
    std::error_code ec;
    fs::rename(tmp_path, final_path, ec);
    if (ec)
        std::cerr << "vrdmasim: warning: cannot rename " << tmp_path.string() << " to " << final_path.string() << ": "
                  << ec.message() << "\n";
}

// Rows of an earlier invocation's results.csv, by point id: status,
// exit_code, error. Unreadable or malformed files give nothing.
std::map<std::string, Record> read_old_results(const std::string& path) {
    std::map<std::string, Record> out;
    std::error_code ec;
    if (!fs::exists(path, ec)) return out;
    std::vector<CsvRow> rows;
    try {
        rows = read_csv_file(path);
    } catch (const std::exception&) {
        std::cerr << "vrdmasim: warning: ignoring unreadable " << path << "\n";
        return out;
    }
    if (rows.empty()) return out;
    auto col = [&](const char* name) -> long {
        auto it = std::find(rows[0].begin(), rows[0].end(), name);
        return it == rows[0].end() ? -1 : static_cast<long>(it - rows[0].begin());
    };
    long c_point = col("point"), c_status = col("status"), c_exit = col("exit_code"), c_err = col("error");
    if (c_point < 0 || c_status < 0) return out;
    auto cell = [](const CsvRow& r, long c) -> std::string {
        return (c >= 0 && static_cast<std::size_t>(c) < r.size()) ? r[c] : "";
    };
    for (std::size_t i = 1; i < rows.size(); ++i) {
        Record r;
        r.status = cell(rows[i], c_status);
        r.exit_code = cell(rows[i], c_exit);
        r.error = cell(rows[i], c_err);
        out.emplace(cell(rows[i], c_point), r);
    }
    return out;
}

pid_t spawn_point(const std::string& exe, const std::vector<std::string>& args, const std::string& log_path,
                  std::string& error) {
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&fa, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_adddup2(&fa, 1, 2);
    std::vector<char*> argv;
    for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    pid_t pid = -1;
    int rc = posix_spawnp(&pid, exe.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        error = "cannot run " + exe + ": " + std::strerror(rc);
        return -1;
    }
    return pid;
}

}   // namespace

// ---------------------------------------------------------------------------
// Planning

SweepPlan plan_sweep(const ParamRegistry& reg, const std::string& sweep_file,
                     const std::function<bool(const Config&)>& varies) {
    struct Entry {
        std::string name;
        std::vector<std::string> values;
        bool list = false;
        int line = 0;
    };
    struct Base {
        std::string given, path;
        int line = 0;
    };
    std::vector<Entry> entries;
    std::vector<Base> bases;
    std::string label;
    int replications = 1, replications_line = 0;
    const fs::path dir = fs::path(sweep_file).parent_path();
    auto where = [&](int l) { return sweep_file + ":" + std::to_string(l); };

    // The grammar of config files, plus the [sweep] section.
    std::vector<std::string> sections{"sweep"};
    for (const auto& sec : reg.sections()) sections.push_back(sec.first);
    for (const IniEntry& ie : read_ini_file(sweep_file, sections, "sweep file")) {
        const int lineno = ie.line;
        const std::string& key = ie.key;
        const std::string& value = ie.value;
        const std::string name = ie.name();

        if (ie.section == "sweep") {
            if (key == "label") {
                if (value.empty() || value.find(',') != std::string::npos)
                    throw ConfigError(where(lineno) + ": sweep.label = '" + clip_for_message(value) +
                                      "': a label is one non-empty value, without commas");
                label = value;
                continue;
            }
            if (key == "replications") {
                if (value.empty() || value.size() > 4 || value.find_first_not_of("0123456789") != std::string::npos ||
                    std::stoi(value) < 1 || std::stoi(value) > 1000)
                    throw ConfigError(where(lineno) + ": sweep.replications = '" + clip_for_message(value) +
                                      "': a whole number from 1 to 1000");
                replications = std::stoi(value);
                replications_line = lineno;
                continue;
            }
            if (key != "base")
                throw ConfigError(where(lineno) + ": unknown key '" + clip_for_message(name) +
                                  "' in [sweep] (the keys allowed there are 'base', 'label' and 'replications')");
            std::istringstream ss(value);
            std::string p;
            while (ss >> p) {
                fs::path rp = fs::path(p).is_absolute() ? fs::path(p) : dir / p;
                bases.push_back({p, rp.lexically_normal().string(), lineno});
            }
            continue;
        }

        if (!reg.find(name)) {
            std::string hint = reg.closest(name);
            throw ConfigError(where(lineno) + ": unknown key '" + clip_for_message(name) + "'" +
                              (hint.empty() ? std::string() : " (did you mean '" + hint + "'?)"));
        }

        Entry e;
        e.name = name;
        e.line = lineno;
        // A bare value holding commas is a list; a quoted one is one value.
        if (!ie.quoted && value.find(',') != std::string::npos) {
            e.list = true;
            std::size_t start = 0;
            while (true) {
                auto comma = value.find(',', start);
                std::string v =
                    trim(value.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
                if (v.empty())
                    throw ConfigError(where(lineno) + ": empty value in the list for '" + name + "': '" +
                                      clip_for_message(value) + "'");
                e.values.push_back(v);
                if (comma == std::string::npos) break;
                start = comma + 1;
            }
        } else {
            e.values.push_back(value);
        }
        entries.push_back(std::move(e));
    }

    // Validate: base configs, then fixed values, then every listed value,
    // exactly as a point's run would apply them.
    SweepPlan plan;
    plan.label = label;
    Config cfg(reg);
    for (const auto& b : bases) {
        std::error_code ec;
        if (!fs::exists(b.path, ec))
            throw ConfigError(where(b.line) + ": base config '" + b.given + "' not found (looked for '" + b.path +
                              "')");
        try {
            cfg.apply_file(b.path);
        } catch (const ConfigError& e) {
            throw ConfigError(where(b.line) + ": in base config '" + b.given + "': " + e.what());
        }
        plan.base_configs.push_back(b.path);
    }
    for (const auto& e : entries)
        if (!e.list) {
            cfg.set(e.name, e.values[0], where(e.line));
            plan.fixed.emplace_back(e.name, e.values[0]);
        }
    // Replications: sim.seed swept last, from the seed the points would have.
    if (replications > 1) {
        for (const auto& e : entries)
            if (e.name == "sim.seed")
                throw ConfigError(where(e.line) + ": sim.seed is set here and sweep.replications (line " +
                                  std::to_string(replications_line) +
                                  ") gives each replication its own seed: set one of them");
        Entry seeds;
        seeds.name = "sim.seed";
        seeds.list = true;
        seeds.line = replications_line;
        const long long base = cfg.integer("sim.seed");
        for (int k = 0; k < replications; ++k) seeds.values.push_back(std::to_string(base + k));
        entries.push_back(std::move(seeds));
    }
    plan.replications = replications;
    std::vector<const Entry*> swept;
    std::size_t total = 1;
    for (const auto& e : entries)
        if (e.list) {
            for (const auto& v : e.values) cfg.set(e.name, v, where(e.line));
            plan.swept_keys.push_back(e.name);
            swept.push_back(&e);
            total *= e.values.size();
            if (total > kMaxPoints)
                throw ConfigError(where(e.line) + ": the sweep has more than " + std::to_string(kMaxPoints) +
                                  " points");
        }

    // Points in row-major order, the last swept key varying fastest.
    plan.points.reserve(total);
    for (std::size_t i = 0; i < total; ++i) {
        SweepPoint p;
        p.index = static_cast<int>(i);
        p.assignment.resize(swept.size());
        std::size_t rest = i;
        for (std::size_t k = swept.size(); k-- > 0;) {
            const auto& vals = swept[k]->values;
            p.assignment[k] = {swept[k]->name, vals[rest % vals.size()]};
            rest /= vals.size();
        }
        Assignments all = plan.fixed;
        all.insert(all.end(), p.assignment.begin(), p.assignment.end());
        if (!plan.label.empty()) all.emplace_back("sweep.label", plan.label);
        p.id = make_point_id(p.index, std::move(all));
        plan.points.push_back(std::move(p));
    }
    // Replications of a point that nothing varies would be copies: refuse,
    // naming the first such point (every point's own configuration).
    if (replications > 1) {
        for (const auto& p : plan.points) {
            Config c(reg);
            for (const auto& b : plan.base_configs) c.apply_file(b);
            for (const auto& kv : plan.fixed) c.set(kv.first, kv.second, "sweep");
            for (const auto& kv : p.assignment) c.set(kv.first, kv.second, "sweep");
            if (!varies || !varies(c)) {
                std::string what;
                for (const auto& kv : p.assignment)
                    if (kv.first != "sim.seed") what += (what.empty() ? "" : ", ") + kv.first + " = " + kv.second;
                throw ConfigError(where(replications_line) + ": sweep.replications = " + std::to_string(replications) +
                                  ", but no variation source is on" +
                                  (what.empty() ? std::string() : " at the point " + what) +
                                  ": the simulation is deterministic, so every seed would give the same figures "
                                  "and a confidence interval of width 0. Turn one on (noise.start-skew, "
                                  "noise.cpu-jitter: `vrdmasim params noise`)");
            }
        }
    }
    // The plan's fingerprint: what the points run (the base configs'
    // contents, which their ids do not cover), the label and every id.
    std::string text = "label=" + plan.label + "\n";
    if (plan.replications > 1) text += "replications=" + std::to_string(plan.replications) + "\n";
    for (const auto& b : plan.base_configs) {
        std::ifstream in(b, std::ios::binary);
        text += "base=" + b + "\n" + std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()) +
                "\n";
    }
    for (const auto& p : plan.points) text += p.id + "\n";
    char fp[32];
    std::snprintf(fp, sizeof fp, "%016" PRIx64, fnv1a64(text));
    plan.fingerprint = fp;
    return plan;
}

// ---------------------------------------------------------------------------
// Running

// results.csv of a directory that shards share: the merge of every
// shards/results-<I>-of-<count>.csv there (defined with merging, below).
// Returns the number of rows written.
static std::size_t compose_shards(const fs::path& out, const fs::path& shards_dir, int count);

// ---------------------------------------------------------------------------
// The shard of a Slurm array task or an MPI rank

ShardFromEnv shard_from_environment(const std::function<const char*(const char*)>& env) {
    auto get = [&](const char* name) -> const char* {
        const char* v = env(name);
        return v && *v ? v : nullptr;
    };
    auto number = [&](const char* name) -> long {
        const char* v = get(name);
        const std::string s = v ? v : "";
        if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos)
            throw ConfigError("environment: " + std::string(name) + "=" + clip_for_message(s) +
                              ": expected a whole number (or give --shard I/N)");
        return std::stol(s);
    };
    // A Slurm array task: its index in the range of the array's ids.
    long task = -1, tasks = 0;
    std::string from;
    if (get("SLURM_ARRAY_TASK_ID")) {
        const long id = number("SLURM_ARRAY_TASK_ID");
        if (get("SLURM_ARRAY_TASK_MIN") && get("SLURM_ARRAY_TASK_MAX")) {
            const long lo = number("SLURM_ARRAY_TASK_MIN"), hi = number("SLURM_ARRAY_TASK_MAX");
            const long step = get("SLURM_ARRAY_TASK_STEP") ? number("SLURM_ARRAY_TASK_STEP") : 1;
            if (step < 1 || hi < lo || id < lo || id > hi || (id - lo) % step != 0)
                throw ConfigError("environment: SLURM_ARRAY_TASK_ID=" + std::to_string(id) + " is not in the range " +
                                  std::to_string(lo) + "-" + std::to_string(hi) + ":" + std::to_string(step) +
                                  " of SLURM_ARRAY_TASK_MIN/MAX/STEP (give --shard I/N)");
            task = (id - lo) / step;
            tasks = (hi - lo) / step + 1;
            if (get("SLURM_ARRAY_TASK_COUNT") && number("SLURM_ARRAY_TASK_COUNT") != tasks)
                throw ConfigError("environment: the array's task ids are not the range " + std::to_string(lo) + "-" +
                                  std::to_string(hi) + ":" + std::to_string(step) +
                                  " (SLURM_ARRAY_TASK_COUNT=" + std::to_string(number("SLURM_ARRAY_TASK_COUNT")) +
                                  "): a sweep needs tasks numbered as a range; give --shard I/N");
            from = "SLURM_ARRAY_TASK_ID/MIN/MAX";
        } else if (get("SLURM_ARRAY_TASK_COUNT")) {
            tasks = number("SLURM_ARRAY_TASK_COUNT");
            task = id - (get("SLURM_ARRAY_TASK_MIN") ? number("SLURM_ARRAY_TASK_MIN") : 0);
            if (tasks < 1 || task < 0 || task >= tasks)
                throw ConfigError("environment: SLURM_ARRAY_TASK_ID=" + std::to_string(id) +
                                  " is not one of SLURM_ARRAY_TASK_COUNT=" + std::to_string(tasks) +
                                  " tasks (give --shard I/N)");
            from = "SLURM_ARRAY_TASK_ID/COUNT";
        } else {
            throw ConfigError(
                "environment: SLURM_ARRAY_TASK_ID is set but neither SLURM_ARRAY_TASK_MIN/MAX nor "
                "SLURM_ARRAY_TASK_COUNT: cannot tell how many tasks share the sweep (give --shard I/N)");
        }
    }
    // An MPI rank. (Not SLURM_PROCID/SLURM_NTASKS: a batch script that runs
    // the sweep itself has them too, 0 of N, and would run one shard only;
    // under srun, give --shard $SLURM_PROCID/$SLURM_NTASKS.)
    long rank = -1, ranks = 0;
    std::string rank_from;
    for (const auto& [r, n] : {std::pair<const char*, const char*>{"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
                               {"PMI_RANK", "PMI_SIZE"}}) {
        if (!get(r)) continue;
        if (!get(n))
            throw ConfigError("environment: " + std::string(r) + " is set but not " + n +
                              ": cannot tell how many ranks share the sweep (give --shard I/N)");
        rank = number(r);
        ranks = number(n);
        if (ranks < 1 || rank >= ranks)
            throw ConfigError("environment: " + std::string(r) + "=" + std::to_string(rank) + " is not below " + n +
                              "=" + std::to_string(ranks) + " (give --shard I/N)");
        rank_from = std::string(r) + "/" + n;
        break;
    }
    ShardFromEnv s;
    if (task >= 0 && rank >= 0) {
        s.index = static_cast<int>(task * ranks + rank);
        s.count = static_cast<int>(tasks * ranks);
        s.from = from + " and " + rank_from;
    } else if (task >= 0) {
        s.index = static_cast<int>(task);
        s.count = static_cast<int>(tasks);
        s.from = from;
    } else if (rank >= 0) {
        s.index = static_cast<int>(rank);
        s.count = static_cast<int>(ranks);
        s.from = rank_from;
    }
    if (s.count > 100000)
        throw ConfigError("environment: " + std::to_string(s.count) + " shards (" + s.from +
                          "): more than 100000; give --shard I/N");
    return s;
}

// ---------------------------------------------------------------------------
// Running

int run_sweep(const ParamRegistry& reg, const SweepOptions& opts) {
    auto fail = [](const std::string& msg) {
        std::cerr << "vrdmasim: error: " << msg << "\n";
        return 2;
    };
    if (opts.shard_count < 1 || opts.shard_index < 0 || opts.shard_index >= opts.shard_count)
        return fail("bad --shard " + std::to_string(opts.shard_index) + "/" + std::to_string(opts.shard_count) +
                    ": expected I/N with 0 <= I < N");
    if (opts.jobs < 0) return fail("bad --jobs " + std::to_string(opts.jobs) + ": must be at least 1");
    if (opts.out_dir.empty()) return fail("no output directory");
    if (opts.executable.empty()) return fail("no executable to run the points with");
    if (opts.executable.find('/') != std::string::npos && access(opts.executable.c_str(), X_OK) != 0)
        return fail("cannot run '" + opts.executable + "': " + std::strerror(errno));

    SweepPlan plan;
    try {
        plan = plan_sweep(reg, opts.sweep_file, opts.varies);
    } catch (const ConfigError& e) {
        return fail(e.what());
    }

    const fs::path out(opts.out_dir);
    const fs::path points_dir = out / "points", logs_dir = out / "logs", shards_dir = out / "shards";
    const bool sharded = opts.shard_count > 1;
    const std::string shard = shard_name(opts.shard_index, opts.shard_count);
    {
        // Never write into a directory that is not a sweep's: an existing,
        // non-empty --out must carry the sweep marker.
        std::error_code ec;
        if (fs::exists(fs::symlink_status(out, ec))) {
            if (!fs::is_directory(out, ec)) return fail("--out " + opts.out_dir + ": exists and is not a directory");
            if (!fs::is_empty(out, ec) && !fs::is_regular_file(out / kSweepMarker, ec))
                return fail("--out " + opts.out_dir +
                            ": directory is not empty and is not a vrdmasim sweep's output (no " + kSweepMarker +
                            " marker); refusing to write into it");
        }
        // The marker before anything else in it: shards of one sweep start
        // at once into one --out, and one that looks while another has
        // made the directory must find it empty or marked, never holding
        // points/ without the marker.
        fs::create_directories(out, ec);
        if (ec) return fail("cannot create " + opts.out_dir + ": " + ec.message());
        const int mfd = open((out / kSweepMarker).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (mfd < 0) return fail("cannot create " + (out / kSweepMarker).string() + ": " + std::strerror(errno));
        close(mfd);
        fs::create_directories(points_dir, ec);
        if (!ec) fs::create_directories(logs_dir, ec);
        if (!ec && sharded) fs::create_directories(shards_dir, ec);
        if (ec) return fail("cannot create " + opts.out_dir + ": " + ec.message());
    }
    // One sweep at a time per directory, or the shards of one sweep: an
    // unsharded sweep holds the marker exclusively, a shard holds it shared
    // and its own shard file exclusively. The locks' file descriptors are
    // inherited by every point's process (no close-on-exec), so they stay
    // locked while points of a killed sweep still run: a resume refuses
    // instead of running them a second time beside the orphans.
    struct LockFd {
        int fd = -1;
        ~LockFd() {
            if (fd >= 0) close(fd);
        }
    } lock, shard_lock;
    const std::string lock_path = (out / kSweepMarker).string();
    lock.fd = open(lock_path.c_str(), O_RDWR | O_CREAT, 0644);
    if (lock.fd < 0) return fail("cannot open " + lock_path + ": " + std::strerror(errno));
    if (flock(lock.fd, (sharded ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            return fail("--out " + opts.out_dir +
                        (sharded ? ": an unsharded sweep, or points of a killed one, is still running there; wait "
                                   "until it ends"
                                 : ": another sweep (or a shard of one), or points of a killed one, is still running "
                                   "there; wait until it ends"));
        return fail("cannot lock " + lock_path + ": " + std::strerror(errno));
    }
    {
        static const char kText[] = "vrdmasim sweep output (this file is its lock)\n";
        struct stat st {};
        if (fstat(lock.fd, &st) != 0 || st.st_size != static_cast<off_t>(sizeof kText - 1))
            if (ftruncate(lock.fd, 0) != 0 || pwrite(lock.fd, kText, sizeof kText - 1, 0) != sizeof kText - 1)
                return fail("cannot write " + lock_path + ": " + std::strerror(errno));
    }
    if (sharded) {
        // Shards of one directory split the same way: another split's rows,
        // or a running shard of another split, refuse this one.
        std::error_code ec;
        const std::string tail = "-of-" + std::to_string(opts.shard_count);
        for (fs::directory_iterator it(shards_dir, ec), end; !ec && it != end; it.increment(ec)) {
            const std::string file = it->path().filename().string();
            std::string name = file;
            const bool is_lock = it->path().extension() == ".lock";
            if (!is_lock && !(it->path().extension() == ".csv" && name.rfind("results-", 0) == 0)) continue;
            name.resize(name.size() - it->path().extension().string().size());
            const auto of = name.find("-of-");
            if (of == std::string::npos || name.substr(of) == tail) continue;
            if (is_lock) {
                const int fd = open(it->path().c_str(), O_RDONLY | O_CLOEXEC);
                const bool running = fd >= 0 && flock(fd, LOCK_SH | LOCK_NB) != 0 && errno == EWOULDBLOCK;
                if (fd >= 0) close(fd);
                if (!running) continue;   // a finished shard's lock
            }
            return fail("--out " + opts.out_dir + ": holds shards of a split in " + name.substr(of + 4) + " (" + file +
                        (is_lock ? ", running" : "") + "), this is shard " + std::to_string(opts.shard_index) + "/" +
                        std::to_string(opts.shard_count) + "; give every shard the same N, or use another --out");
        }
        const std::string shard_lock_path = (shards_dir / (shard + ".lock")).string();
        shard_lock.fd = open(shard_lock_path.c_str(), O_RDWR | O_CREAT, 0644);
        if (shard_lock.fd < 0) return fail("cannot open " + shard_lock_path + ": " + std::strerror(errno));
        if (flock(shard_lock.fd, LOCK_EX | LOCK_NB) != 0) {
            if (errno == EWOULDBLOCK)
                return fail("--out " + opts.out_dir + ": shard " + std::to_string(opts.shard_index) + "/" +
                            std::to_string(opts.shard_count) +
                            " is already running there (or points of a killed run of it); two processes were "
                            "given the same shard");
            return fail("cannot lock " + shard_lock_path + ": " + std::strerror(errno));
        }
    }
    // The plan beside the results: what `merge` checks inputs against.
    {
        PlanFile old_plan;
        bool have = false;
        try {
            have = read_plan_file(out / kPlanFile, old_plan);
        } catch (const ConfigError&) {
            have = false;   // ours, damaged: rewritten below
        }
        if (!have || old_plan.fingerprint != plan.fingerprint) {
            std::error_code ec;
            std::vector<fs::path> old_shards;
            for (fs::directory_iterator it(shards_dir, ec), end; !ec && it != end; it.increment(ec))
                if (it->path().extension() == ".csv" && it->path().filename().string().rfind("results-", 0) == 0)
                    old_shards.push_back(it->path());
            if (have && !old_shards.empty()) {
                if (sharded)
                    return fail("--out " + opts.out_dir + ": holds shards of another sweep (plan " +
                                old_plan.fingerprint + ", " + std::to_string(old_plan.ids.size()) +
                                " points; this one is " + plan.fingerprint + "); use another --out");
                for (const auto& f : old_shards) fs::remove(f, ec);   // another plan's, and none runs (locked)
            }
            std::string err;
            if (!write_atomically(out / kPlanFile, plan_text(plan), err)) return fail(err);
        }
    }
    // With the lock held no point of an earlier invocation runs any more:
    // what killed ones left behind goes.
    remove_stale_partials(points_dir);

    std::map<int, const SweepPoint*> shard_points;
    for (const auto& p : plan.points)
        if (p.index % opts.shard_count == opts.shard_index) shard_points[p.index] = &p;

    // What earlier invocations did.
    const std::string results_path = (out / "results.csv").string();
    const fs::path own_results = sharded ? shards_dir / ("results-" + shard + ".csv") : fs::path(results_path);
    std::map<std::string, Record> old = read_old_results(own_results.string());
    std::map<int, Record> records;
    std::deque<const SweepPoint*> pending;
    std::size_t already_done = 0;
    for (const auto& [index, p] : shard_points) {
        const fs::path summary = points_dir / p->id / "summary.csv";
        std::error_code ec;
        auto o = old.find(p->id);
        if (fs::exists(summary, ec)) {
            Record r;
            if (o != old.end() &&
                (o->second.status == "ok" || o->second.status == "mismatch" || o->second.status == "transfer-errors")) {
                r.status = o->second.status;
                r.exit_code = o->second.exit_code;
            } else {
                r.status = "ok";
                r.exit_code = "0";
            }
            r.metrics = read_summary(summary.string());
            records[index] = std::move(r);
            ++already_done;
        } else {
            if (o != old.end() && o->second.status == "failed") records[index] = o->second;
            pending.push_back(p);
        }
    }
    // A shard writes its own rows, then results.csv as the merge of every
    // shard's rows so far.
    std::size_t in_results = 0;
    auto publish = [&]() {
        write_results(own_results, plan, shard_points, records);
        if (sharded) in_results = compose_shards(out, shards_dir, opts.shard_count);
        if (plan.replications > 1) {
            // Each point's replications: mean, sd, 95 % CI (aggregate.csv).
            try {
                const std::string text = aggregate_replications(plan, read_csv_file(results_path));
                const std::string err = write_file_atomically(out / "aggregate.csv", text);
                if (!err.empty()) std::cerr << "vrdmasim: warning: " << err << "\n";
            } catch (const std::exception& e) {
                std::cerr << "vrdmasim: warning: aggregate.csv not updated: " << e.what() << "\n";
            }
        }
    };
    publish();

    unsigned jobs = opts.jobs > 0 ? static_cast<unsigned>(opts.jobs) : std::thread::hardware_concurrency();
    if (jobs == 0) jobs = 1;

    // Ctrl-C: stop starting points, let the running ones end, record them.
    // A second Ctrl-C kills the sweep (SA_RESETHAND).
    struct sigaction old_int {};
    bool handler_installed = false;
    if (sigaction(SIGINT, nullptr, &old_int) == 0 && old_int.sa_handler == SIG_DFL) {
        struct sigaction sa {};
        sa.sa_handler = on_sigint;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESETHAND;   // no SA_RESTART: waitpid returns EINTR
        g_interrupted = 0;
        handler_installed = sigaction(SIGINT, &sa, nullptr) == 0;
    }

    const auto start = std::chrono::steady_clock::now();
    const std::size_t total = shard_points.size();
    std::size_t finished_now = 0, done = already_done;
    auto count_status = [&](const char* s) {
        std::size_t n = 0;
        for (const auto& kv : records)
            if (kv.second.status == s) ++n;
        return n;
    };
    std::size_t last_len = 0;
    auto draw = [&]() {
        if (!opts.progress) return;
        double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        std::string eta = "--";
        std::size_t remaining = total - done;
        if (remaining == 0) eta = "0:00";
        else if (finished_now > 0)
            eta = fmt_duration(elapsed / static_cast<double>(finished_now) * static_cast<double>(remaining));
        std::size_t failed = 0;
        for (const auto& kv : records)
            if (kv.second.status != "ok") ++failed;
        std::string line = "sweep: " + std::to_string(done) + "/" + std::to_string(total) + " points";
        if (failed) line += ", " + std::to_string(failed) + " not ok";
        line += ", elapsed " + fmt_duration(elapsed) + ", ETA " + eta;
        std::string pad = line.size() < last_len ? std::string(last_len - line.size(), ' ') : "";
        last_len = line.size();
        std::cerr << "\r" << line << pad << std::flush;
    };

    std::map<pid_t, const SweepPoint*> running;
    bool interrupted = false;
    auto finish = [&](const SweepPoint& p, Record r) {
        records[p.index] = std::move(r);
        ++finished_now;
        ++done;
        publish();
        draw();
    };

    draw();
    auto last_draw = std::chrono::steady_clock::now();
    while (!pending.empty() || !running.empty()) {
        if (g_interrupted && !interrupted) {
            interrupted = true;
            if (opts.progress) std::cerr << "\n";
            std::cerr << "sweep: interrupted; waiting for " << running.size() << " running point(s)\n";
            pending.clear();
        }
        while (!interrupted && running.size() < jobs && !pending.empty()) {
            const SweepPoint* p = pending.front();
            pending.pop_front();
            const fs::path pdir = points_dir / p->id;
            std::error_code ec;
            fs::remove_all(pdir, ec);   // a stale partial output would block the run's rename
            std::vector<std::string> args{opts.executable, "run"};
            for (const auto& b : plan.base_configs) args.push_back(b);
            for (const auto& kv : plan.fixed) args.push_back("--" + kv.first + "=" + kv.second);
            for (const auto& kv : p->assignment) args.push_back("--" + kv.first + "=" + kv.second);
            args.push_back("--out");
            args.push_back(pdir.string());
            args.push_back("--quiet");
            std::string err;
            pid_t pid = spawn_point(opts.executable, args, (logs_dir / (p->id + ".log")).string(), err);
            if (pid < 0) {
                Record r;
                r.status = "failed";
                r.error = err;
                finish(*p, std::move(r));
                continue;
            }
            running[pid] = p;
        }
        if (running.empty()) continue;

        int wstatus = 0;
        pid_t pid;
        if (opts.progress) {
            pid = waitpid(-1, &wstatus, WNOHANG);
            if (pid == 0) {
                std::this_thread::sleep_for(std::chrono::milliseconds(100));
                auto now = std::chrono::steady_clock::now();
                if (now - last_draw >= std::chrono::milliseconds(500)) {
                    draw();
                    last_draw = now;
                }
                continue;
            }
        } else {
            pid = waitpid(-1, &wstatus, 0);
        }
        if (pid < 0) {
            if (errno == EINTR) continue;
            // ECHILD: somebody else reaped our children; we cannot know how they ended.
            for (const auto& kv : running) {
                Record r;
                r.status = "failed";
                r.error = std::string("lost track of the process: ") + std::strerror(errno);
                finish(*kv.second, std::move(r));
            }
            running.clear();
            continue;
        }
        auto it = running.find(pid);
        if (it == running.end()) continue;   // not one of ours
        const SweepPoint& p = *it->second;
        running.erase(it);

        const fs::path pdir = points_dir / p.id;
        const fs::path summary = pdir / "summary.csv";
        std::error_code ec;
        const bool has_summary = fs::exists(summary, ec);
        Record r;
        if (WIFEXITED(wstatus)) {
            int code = WEXITSTATUS(wstatus);
            r.exit_code = std::to_string(code);
            if (code == 0 && has_summary) {
                r.status = "ok";
            } else if (code == 3 && has_summary) {
                r.status = "transfer-errors";   // simulated to the end, but transfers failed
            } else if (code == 1 && has_summary) {
                r.status = "mismatch";
            } else {
                r.status = "failed";
                r.error = last_nonempty_line((logs_dir / (p.id + ".log")).string());
                if (r.error.empty())
                    r.error = code == 0 ? "exited 0 without writing summary.csv"
                                        : "exited with status " + std::to_string(code);
            }
        } else if (WIFSIGNALED(wstatus)) {
            r.status = "failed";
            r.exit_code = std::to_string(-WTERMSIG(wstatus));
            r.error = "killed by signal " + std::to_string(WTERMSIG(wstatus));
        } else {
            continue;   // stopped/continued: not finished
        }
        // Ctrl-C reaches the points too (one process group): a point it
        // stopped did not fail, it was interrupted; a resume runs it again.
        const bool stopped_by_sigint = (WIFSIGNALED(wstatus) && WTERMSIG(wstatus) == SIGINT) ||
                                       (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 128 + SIGINT);
        if (r.status == "failed" && g_interrupted && stopped_by_sigint) {
            r.status = "interrupted";
            r.error = "interrupted (Ctrl-C) while it ran; running the sweep again runs it";
            fs::remove_all(pdir, ec);   // its unfinished output: the rerun starts afresh
        }
        if (r.status == "failed") {
            // Keep whatever it wrote for inspection, but out of the way of resume.
            if (fs::exists(pdir, ec)) {
                fs::path aside = points_dir / (p.id + ".failed");
                fs::remove_all(aside, ec);
                fs::rename(pdir, aside, ec);
            }
        } else {
            r.metrics = read_summary(summary.string());
        }
        finish(p, std::move(r));
    }

    if (handler_installed) sigaction(SIGINT, &old_int, nullptr);
    if (opts.progress) {
        draw();
        std::cerr << "\n";
    }

    const std::size_t ok = count_status("ok"), mismatch = count_status("mismatch"), failed = count_status("failed"),
                      stopped = count_status("interrupted");
    std::ostringstream msg;
    msg << "sweep: " << total << " point" << (total == 1 ? "" : "s");
    if (opts.shard_count > 1) msg << " in shard " << opts.shard_index << "/" << opts.shard_count;
    if (already_done) msg << " (" << already_done << " already done)";
    msg << ", " << ok << " ok";
    if (mismatch) msg << ", " << mismatch << " mismatch";
    msg << ", " << failed << " failed";
    if (stopped) msg << ", " << stopped << " interrupted";
    if (total - records.size() > 0) msg << ", " << (total - records.size()) << " not run";
    if (interrupted) msg << " (interrupted: the same command again resumes, running what is not done)";
    if (sharded) {
        msg << "; rows in " << own_results.string() << "; " << results_path << " holds " << in_results << " of the "
            << plan.points.size() << " points of the sweep";
        if (in_results < plan.points.size()) msg << " (other shards still running or not run)";
    } else {
        msg << "; results in " << results_path;
    }
    std::cerr << msg.str() << "\n";

    if (interrupted) return 128 + SIGINT;   // as a shell reports a Ctrl-C'd command
    return ok == total ? 0 : 1;
}

// ---------------------------------------------------------------------------
// Replications

namespace {

// Student's t, two-sided 95 %, for df degrees of freedom (1.96 past 30).
double t95(std::size_t df) {
    static const double t[] = {0,     12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                               2.201, 2.179,  2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080,
                               2.074, 2.069,  2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042};
    return df < sizeof t / sizeof t[0] ? t[df] : 1.960;
}

bool parse_number(const std::string& s, double& v) {
    if (s.empty()) return false;
    char* end = nullptr;
    v = std::strtod(s.c_str(), &end);
    return end && *end == '\0' && std::isfinite(v);
}

}   // namespace

std::string aggregate_replications(const SweepPlan& plan, const std::vector<std::vector<std::string>>& results) {
    if (results.empty()) throw ConfigError("results.csv is empty");
    const CsvRow& h = results[0];
    auto col = [&](const std::string& name) -> long {
        const auto it = std::find(h.begin(), h.end(), name);
        return it == h.end() ? -1 : static_cast<long>(it - h.begin());
    };
    const long c_status = col("status"), c_seed = col("sim.seed");
    if (c_status < 0 || c_seed < 0) throw ConfigError("results.csv has no status or sim.seed column");
    // The point's keys (all swept keys but the seed), and the metrics: every
    // column after error.
    std::vector<long> keys;
    if (col("label") >= 0) keys.push_back(col("label"));
    for (const auto& k : plan.swept_keys)
        if (k != "sim.seed" && col(k) >= 0) keys.push_back(col(k));
    const long c_error = col("error");
    std::vector<long> metrics;
    for (long c = c_error + 1; c < static_cast<long>(h.size()); ++c) metrics.push_back(c);
    struct Group {
        std::vector<std::string> key;
        std::size_t runs = 0;
        std::vector<const CsvRow*> ok;
    };
    std::vector<Group> groups;
    std::map<std::vector<std::string>, std::size_t> at;
    for (std::size_t i = 1; i < results.size(); ++i) {
        const CsvRow& r = results[i];
        if (r.size() != h.size()) continue;
        std::vector<std::string> key;
        for (long c : keys) key.push_back(r[static_cast<std::size_t>(c)]);
        auto [it, fresh] = at.emplace(key, groups.size());
        if (fresh) groups.push_back({key, 0, {}});
        Group& g = groups[it->second];
        ++g.runs;
        if (r[static_cast<std::size_t>(c_status)] == "ok") g.ok.push_back(&r);
    }
    std::ostringstream os;
    CsvRow head;
    for (long c : keys) head.push_back(h[static_cast<std::size_t>(c)]);
    head.push_back("replications");
    head.push_back("replications_ok");
    for (long c : metrics) {
        head.push_back(h[static_cast<std::size_t>(c)]);
        head.push_back(h[static_cast<std::size_t>(c)] + "_sd");
        head.push_back(h[static_cast<std::size_t>(c)] + "_ci95");
    }
    write_csv_row(os, head);
    for (const Group& g : groups) {
        CsvRow row = g.key;
        row.push_back(std::to_string(g.runs));
        row.push_back(std::to_string(g.ok.size()));
        for (long c : metrics) {
            std::vector<double> v;
            bool numeric = !g.ok.empty();
            for (const CsvRow* r : g.ok) {
                double x = 0;
                if (parse_number((*r)[static_cast<std::size_t>(c)], x)) v.push_back(x);
                else numeric = false;
            }
            if (!numeric) {
                // Text (or a figure some replication lacks): its value when
                // every replication agrees, else nothing.
                std::string same = g.ok.empty() ? "" : (*g.ok[0])[static_cast<std::size_t>(c)];
                for (const CsvRow* r : g.ok)
                    if ((*r)[static_cast<std::size_t>(c)] != same) same.clear();
                row.insert(row.end(), {same, "", ""});
                continue;
            }
            const double n = static_cast<double>(v.size());
            double mean = 0;
            for (double x : v) mean += x;
            mean /= n;
            double ss = 0;
            for (double x : v) ss += (x - mean) * (x - mean);
            const double sd = v.size() > 1 ? std::sqrt(ss / (n - 1)) : 0.0;
            row.push_back(format_metric(mean, 9));
            row.push_back(v.size() > 1 ? format_metric(sd, 6) : "");
            row.push_back(v.size() > 1 ? format_metric(t95(v.size() - 1) * sd / std::sqrt(n), 6) : "");
        }
        write_csv_row(os, row);
    }
    return os.str();
}

// ---------------------------------------------------------------------------
// Merging

namespace {

// The merge behind merge_results and compose_shards; returns the rows written.
std::size_t merge_into(const std::vector<std::string>& inputs, std::ostream& out, bool allow_partial,
                       std::ostream* notes) {
    CsvRow header;
    std::map<std::string, std::size_t> col_of;
    struct Row {
        long index;
        std::map<std::string, std::string> cells;
    };
    std::vector<Row> rows;
    std::map<std::string, std::string> input_of_id;   // point id -> the input that holds it
    struct Sweep {
        PlanFile plan;
        std::vector<std::string> inputs;
        std::set<std::string> present;
    };
    std::vector<Sweep> sweeps;   // in order of first input
    std::vector<std::string> unchecked;

    for (const auto& path : inputs) {
        std::error_code ec;
        if (!fs::exists(path, ec)) throw ConfigError("cannot open results file '" + path + "'");
        std::vector<CsvRow> data;
        try {
            data = read_csv_file(path);
        } catch (const std::exception& e) {
            throw ConfigError("cannot read results file '" + path + "': " + e.what());
        }
        if (data.empty() || (data[0].size() == 1 && data[0][0].empty()))
            throw ConfigError(path + ": empty results file (no header)");
        // Its sweep, by the plan beside it.
        const fs::path plan_path = plan_path_for(path);
        PlanFile plan;
        Sweep* sweep = nullptr;
        if (read_plan_file(plan_path, plan)) {
            for (auto& s : sweeps)
                if (s.plan.fingerprint == plan.fingerprint) sweep = &s;
            if (!sweep) {
                sweeps.push_back(Sweep{plan, {}, {}});
                sweep = &sweeps.back();
            }
            sweep->inputs.push_back(path);
        } else if (!allow_partial) {
            throw ConfigError(path + ": no sweep plan beside it (" + plan_path.string() +
                              "): not the results of a vrdmasim sweep, or of one from before sweeps wrote plans; "
                              "merge --allow-partial takes it without checking that its sweep is complete");
        } else {
            unchecked.push_back(path);
        }
        const CsvRow& h = data[0];
        auto pc = std::find(h.begin(), h.end(), "point");
        if (pc == h.end()) throw ConfigError(path + ": no 'point' column");
        const std::size_t point_col = static_cast<std::size_t>(pc - h.begin());
        std::set<std::string> hset;
        for (const auto& name : h) {
            if (!hset.insert(name).second) throw ConfigError(path + ": column '" + name + "' appears twice");
            if (!col_of.count(name)) {
                col_of[name] = header.size();
                header.push_back(name);
            }
        }
        for (std::size_t i = 1; i < data.size(); ++i) {
            const CsvRow& r = data[i];
            if (r.size() == 1 && r[0].empty()) continue;   // blank line
            if (r.size() != h.size())
                throw ConfigError(path + ": row " + std::to_string(i + 1) + " has " + std::to_string(r.size()) +
                                  " fields, the header has " + std::to_string(h.size()));
            const std::string& id = r[point_col];
            long index = point_index_of(id);
            if (index < 0) throw ConfigError(path + ": row " + std::to_string(i + 1) + ": bad point id '" + id + "'");
            if (sweep && (static_cast<std::size_t>(index) >= sweep->plan.ids.size() || sweep->plan.ids[index] != id))
                throw ConfigError(path + ": row " + std::to_string(i + 1) + ": point " + id +
                                  " is not a point of the sweep whose plan is beside it (" + plan_path.string() + ")");
            auto [it, fresh] = input_of_id.emplace(id, path);
            if (!fresh)
                throw ConfigError("point " + id + " is in " + it->second + " and in " + path +
                                  (it->second == path ? " twice" : " (the same shard given twice?)"));
            if (sweep) sweep->present.insert(id);
            Row row{index, {}};
            for (std::size_t c = 0; c < h.size(); ++c) row.cells[h[c]] = r[c];
            rows.push_back(std::move(row));
        }
    }
    // Every sweep whole, or said what is missing.
    for (const auto& s : sweeps) {
        std::vector<std::string> missing;
        for (const auto& id : s.plan.ids)
            if (!s.present.count(id)) missing.push_back(id);
        std::string name = "sweep " + (s.plan.label.empty() ? std::string("(no label)") : "'" + s.plan.label + "'") +
                           " (plan " + s.plan.fingerprint + ")";
        if (!missing.empty()) {
            std::string list;
            for (std::size_t k = 0; k < missing.size() && k < 8; ++k) list += (k ? ", " : "") + missing[k];
            if (missing.size() > 8) list += ", ...";
            const std::string msg = name + ": " + std::to_string(missing.size()) + " of its " +
                                    std::to_string(s.plan.ids.size()) + " points are in none of its " +
                                    std::to_string(s.inputs.size()) + " input(s): " + list;
            if (!allow_partial)
                throw ConfigError(msg +
                                  " (a shard missing or not finished; merge --allow-partial merges what is there)");
            if (notes) *notes << "merge: " << msg << "\n";
        } else if (notes) {
            *notes << "merge: " << name << ": all " << s.plan.ids.size() << " points, from " << s.inputs.size()
                   << " input(s)\n";
        }
    }
    if (notes)
        for (const auto& u : unchecked) *notes << "merge: " << u << ": no plan beside it, merged unchecked\n";
    std::stable_sort(rows.begin(), rows.end(), [](const Row& a, const Row& b) { return a.index < b.index; });
    write_csv_row(out, header);
    for (const auto& r : rows) {
        CsvRow line(header.size());
        for (const auto& [name, value] : r.cells) line[col_of[name]] = value;
        write_csv_row(out, line);
    }
    return rows.size();
}

}   // namespace

void merge_results(const std::vector<std::string>& inputs, std::ostream& out, bool allow_partial, std::ostream* notes) {
    merge_into(inputs, out, allow_partial, notes);
}

static std::size_t compose_shards(const fs::path& out, const fs::path& shards_dir, int count) {
    // One shard at a time rewrites results.csv (a short exclusive lock).
    const std::string lock_path = (shards_dir / "compose.lock").string();
    const int fd = open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0 || flock(fd, LOCK_EX) != 0) {
        std::cerr << "vrdmasim: warning: cannot lock " << lock_path << ": " << std::strerror(errno) << "\n";
        if (fd >= 0) close(fd);
        return 0;
    }
    std::vector<std::pair<long, std::string>> files;
    const std::string tail = "-of-" + std::to_string(count) + ".csv";
    std::error_code ec;
    for (fs::directory_iterator it(shards_dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (name.rfind("results-", 0) != 0 || name.size() <= tail.size() ||
            name.compare(name.size() - tail.size(), std::string::npos, tail) != 0)
            continue;
        files.emplace_back(std::atol(name.c_str() + 8), it->path().string());
    }
    std::sort(files.begin(), files.end());
    std::vector<std::string> inputs;
    for (const auto& f : files) inputs.push_back(f.second);
    std::size_t rows = 0;
    const fs::path final_path = out / "results.csv";
    const fs::path tmp = final_path.string() + ".tmp-" + std::to_string(getpid());
    try {
        std::ofstream os(tmp, std::ios::binary | std::ios::trunc);
        rows = merge_into(inputs, os, true, nullptr);
        os.flush();
        if (!os) throw ConfigError("cannot write " + tmp.string());
        os.close();
        fs::rename(tmp, final_path, ec);
        if (ec) throw ConfigError("cannot rename " + tmp.string() + ": " + ec.message());
    } catch (const ConfigError& e) {
        std::cerr << "vrdmasim: warning: " << final_path.string() << " not updated: " << e.what() << "\n";
        fs::remove(tmp, ec);
    }
    close(fd);
    return rows;
}

}   // namespace vrdmasim
