// Planning a sweep: the sweep file read and checked against the parameters,
// its points and their ids, the plan file beside its results (sweep.hpp).
#include <unistd.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "src/core/params.hpp"
#include "src/tools/sweep.hpp"
#include "src/tools/sweep_internal.hpp"

namespace vrdmasim {

namespace sweep_detail {

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

}   // namespace sweep_detail

namespace {

using namespace sweep_detail;

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

}   // namespace

namespace sweep_detail {

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

namespace {
constexpr const char* kPlanMagic = "vrdmasim sweep plan 1";
}   // namespace

std::string plan_text(const SweepPlan& plan) {
    std::string t = std::string(kPlanMagic) + "\nfingerprint " + plan.fingerprint + "\nlabel " + plan.label +
                    "\npoints " + std::to_string(plan.points.size()) + "\n";
    for (const auto& p : plan.points) t += p.id + "\n";
    return t;
}

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

fs::path plan_path_for(const std::string& results) {
    fs::path dir = fs::path(results).parent_path();
    if (dir.empty()) dir = ".";
    if (dir.filename() == "shards") return dir.parent_path() / kPlanFile;
    return dir / kPlanFile;
}

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

}   // namespace sweep_detail

namespace {

using namespace sweep_detail;

// More points than this is almost certainly a mistake in the sweep file.
constexpr std::size_t kMaxPoints = 1000000;

// "FILE:LINE" of the sweep file.
struct Where {
    std::string file;
    std::string operator()(int line) const { return file + ":" + std::to_string(line); }
};

// A key of the sweep file: one value, or a list to sweep.
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

// What a sweep file says.
struct SweepFile {
    std::vector<Entry> entries;
    std::vector<Base> bases;
    std::string label;
    int replications = 1, replications_line = 0;
};

// A key of [sweep]: base, label or replications.
void read_sweep_key(const IniEntry& ie, const fs::path& dir, const Where& where, SweepFile& f) {
    const std::string& key = ie.key;
    const std::string& value = ie.value;
    if (key == "label") {
        if (value.empty() || value.find(',') != std::string::npos)
            throw ConfigError(where(ie.line) + ": sweep.label = '" + clip_for_message(value) +
                              "': a label is one non-empty value, without commas");
        f.label = value;
        return;
    }
    if (key == "replications") {
        if (value.empty() || value.size() > 4 || value.find_first_not_of("0123456789") != std::string::npos ||
            std::stoi(value) < 1 || std::stoi(value) > 1000)
            throw ConfigError(where(ie.line) + ": sweep.replications = '" + clip_for_message(value) +
                              "': a whole number from 1 to 1000");
        f.replications = std::stoi(value);
        f.replications_line = ie.line;
        return;
    }
    if (key != "base")
        throw ConfigError(where(ie.line) + ": unknown key '" + clip_for_message(ie.name()) +
                          "' in [sweep] (the keys allowed there are 'base', 'label' and 'replications')");
    std::istringstream ss(value);
    std::string p;
    while (ss >> p) {
        fs::path rp = fs::path(p).is_absolute() ? fs::path(p) : dir / p;
        f.bases.push_back({p, rp.lexically_normal().string(), ie.line});
    }
}

// A parameter's line: several values (separated by commas outside double
// quotes: `a, "b, c"`) are a list; one value, quoted or not, is fixed.
Entry read_entry(const IniEntry& ie, const Where& where) {
    Entry e;
    e.name = ie.name();
    e.line = ie.line;
    if (ie.items.size() <= 1) {
        e.values.push_back(ie.value);
        return e;
    }
    e.list = true;
    for (const auto& v : ie.items) {
        if (v.empty())
            throw ConfigError(where(ie.line) + ": empty value in the list for '" + e.name + "': '" +
                              clip_for_message(ie.value) + "'");
        e.values.push_back(v);
    }
    return e;
}

// The grammar of config files, plus the [sweep] section.
SweepFile read_sweep_file(const ParamRegistry& reg, const std::string& sweep_file, const Where& where) {
    SweepFile f;
    const fs::path dir = fs::path(sweep_file).parent_path();
    std::vector<std::string> sections{"sweep"};
    for (const auto& sec : reg.sections()) sections.push_back(sec.first);
    for (const IniEntry& ie : read_ini_file(sweep_file, sections, "sweep file", true)) {
        if (ie.section == "sweep") {
            read_sweep_key(ie, dir, where, f);
            continue;
        }
        const std::string name = ie.name();
        if (!reg.find(name)) {
            std::string hint = reg.closest(name);
            throw ConfigError(where(ie.line) + ": unknown key '" + clip_for_message(name) + "'" +
                              (hint.empty() ? std::string() : " (did you mean '" + hint + "'?)"));
        }
        f.entries.push_back(read_entry(ie, where));
    }
    return f;
}

// A value as a point's run is given it: a path relative to the sweep file.
std::string run_value(const SweepPlan& plan, const std::string& key, const std::string& value) {
    return plan.path_keys.count(key) ? resolve_from_file(plan.file, value) : value;
}

// Where each key's values come from, and which are paths.
void note_origins(const ParamRegistry& reg, const SweepFile& f, const Where& where, SweepPlan& plan) {
    for (const auto& e : f.entries) {
        plan.origins[e.name] = where(e.line);
        const ParamDecl* d = reg.find(e.name);
        if (d != nullptr && d->path) plan.path_keys.insert(e.name);
    }
}

// The base configs, then the fixed values, applied to `cfg` exactly as a
// point's run would apply them.
void apply_bases_and_fixed(const SweepFile& f, const Where& where, Config& cfg, SweepPlan& plan) {
    for (const auto& b : f.bases) {
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
    for (const auto& e : f.entries)
        if (!e.list) {
            cfg.set(e.name, run_value(plan, e.name, e.values[0]), where(e.line));
            plan.fixed.emplace_back(e.name, e.values[0]);
        }
}

// Replications: sim.seed swept last, from the seed the points would have.
void add_replication_seeds(SweepFile& f, const Config& cfg, const Where& where) {
    if (f.replications <= 1) return;
    for (const auto& e : f.entries)
        if (e.name == "sim.seed")
            throw ConfigError(where(e.line) + ": sim.seed is set here and sweep.replications (line " +
                              std::to_string(f.replications_line) +
                              ") gives each replication its own seed: set one of them");
    Entry seeds;
    seeds.name = "sim.seed";
    seeds.list = true;
    seeds.line = f.replications_line;
    const long long base = cfg.integer("sim.seed");
    for (int k = 0; k < f.replications; ++k) seeds.values.push_back(std::to_string(base + k));
    f.entries.push_back(std::move(seeds));
}

// Points in row-major order, the last swept key varying fastest.
void make_points(const std::vector<const Entry*>& swept, std::size_t total, SweepPlan& plan) {
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
}

// Replications of a point that nothing varies would be copies: refuse,
// naming the first such point (every point's own configuration).
void check_replications_vary(const ParamRegistry& reg, const SweepPlan& plan, const SweepFile& f,
                             const std::function<bool(const Config&)>& varies, const Where& where) {
    if (f.replications <= 1) return;
    for (const auto& p : plan.points) {
        Config c(reg);
        for (const auto& b : plan.base_configs) c.apply_file(b);
        for (const auto& kv : plan.fixed) c.set(kv.first, run_value(plan, kv.first, kv.second), "sweep");
        for (const auto& kv : p.assignment) c.set(kv.first, run_value(plan, kv.first, kv.second), "sweep");
        if (varies && varies(c)) continue;
        std::string what;
        for (const auto& kv : p.assignment)
            if (kv.first != "sim.seed") what += (what.empty() ? "" : ", ") + kv.first + " = " + kv.second;
        throw ConfigError(where(f.replications_line) + ": sweep.replications = " + std::to_string(f.replications) +
                          ", but no variation source is on" + (what.empty() ? std::string() : " at the point " + what) +
                          ": the simulation is deterministic, so every seed would give the same figures "
                          "and a confidence interval of width 0. Turn one on (noise.start-skew, "
                          "noise.cpu-jitter: `vrdmasim params noise`)");
    }
}

// The plan's fingerprint: what the points run (the base configs'
// contents, which their ids do not cover), the label and every id.
std::string fingerprint(const SweepPlan& plan) {
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
    return fp;
}

}   // namespace

SweepPlan plan_sweep(const ParamRegistry& reg, const std::string& sweep_file,
                     const std::function<bool(const Config&)>& varies) {
    const Where where{sweep_file};
    SweepFile f = read_sweep_file(reg, sweep_file, where);
    // Validate: base configs, then fixed values, then every listed value,
    // exactly as a point's run would apply them.
    SweepPlan plan;
    plan.file = sweep_file;
    plan.label = f.label;
    note_origins(reg, f, where, plan);
    Config cfg(reg);
    apply_bases_and_fixed(f, where, cfg, plan);
    add_replication_seeds(f, cfg, where);
    if (f.replications > 1) plan.origins["sim.seed"] = where(f.replications_line) + " (sweep.replications)";
    plan.replications = f.replications;
    std::vector<const Entry*> swept;
    std::size_t total = 1;
    for (const auto& e : f.entries)
        if (e.list) {
            for (const auto& v : e.values) cfg.set(e.name, run_value(plan, e.name, v), where(e.line));
            plan.swept_keys.push_back(e.name);
            swept.push_back(&e);
            total *= e.values.size();
            if (total > kMaxPoints)
                throw ConfigError(where(e.line) + ": the sweep has more than " + std::to_string(kMaxPoints) +
                                  " points");
        }
    make_points(swept, total, plan);
    check_replications_vary(reg, plan, f, varies, where);
    plan.fingerprint = fingerprint(plan);
    return plan;
}

std::vector<std::string> point_arguments(const SweepPlan& plan, const SweepPoint& p) {
    std::vector<std::string> args(plan.base_configs.begin(), plan.base_configs.end());
    Assignments all = plan.fixed;
    all.insert(all.end(), p.assignment.begin(), p.assignment.end());
    for (const auto& kv : all) args.push_back("--" + kv.first + "=" + run_value(plan, kv.first, kv.second));
    // A swept value's origin says it is the point's: the point is a layer
    // over the sweep file's fixed values (Config::layer).
    for (std::size_t i = 0; i < all.size(); ++i) {
        const auto o = plan.origins.find(all[i].first);
        if (o != plan.origins.end())
            args.push_back("--origin=" + all[i].first + "=" + o->second +
                           (i < plan.fixed.size() ? "" : ", sweep point"));
    }
    return args;
}

}   // namespace vrdmasim
