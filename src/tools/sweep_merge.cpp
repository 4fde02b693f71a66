// Merging sweep results (shards, whole sweeps) and summarising a point's
// replications (sweep.hpp: merge_results, aggregate_replications).
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>

#include "src/core/csv.hpp"
#include "src/sim/summary.hpp"
#include "src/core/metrics.hpp"
#include "src/core/params.hpp"
#include "src/tools/sweep.hpp"
#include "src/tools/sweep_internal.hpp"

namespace vrdmasim {

using namespace sweep_detail;

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

// The replications of one point: its key (every swept key but the seed), how
// many ran, the rows of those that ran ok.
struct Group {
    std::vector<std::string> key;
    std::size_t runs = 0;
    std::vector<const CsvRow*> ok;
};

std::vector<Group> group_replications(const std::vector<CsvRow>& results, const std::vector<long>& keys,
                                      long c_status) {
    const CsvRow& h = results[0];
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
    return groups;
}

// One metric of a point's ok replications: mean, sd, 95 % CI half-width. Text
// (or a figure some replication lacks): its value when every replication
// agrees, else nothing.
void append_metric(const Group& g, std::size_t c, CsvRow& row) {
    std::vector<double> v;
    bool numeric = !g.ok.empty();
    for (const CsvRow* r : g.ok) {
        double x = 0;
        if (parse_number((*r)[c], x)) v.push_back(x);
        else numeric = false;
    }
    if (!numeric) {
        std::string same = g.ok.empty() ? "" : (*g.ok[0])[c];
        for (const CsvRow* r : g.ok)
            if ((*r)[c] != same) same.clear();
        row.insert(row.end(), {same, "", ""});
        return;
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
    std::vector<long> metrics;
    for (long c = col("error") + 1; c < static_cast<long>(h.size()); ++c) metrics.push_back(c);
    std::ostringstream os;
    CsvRow head;
    for (long c : keys) head.push_back(h[static_cast<std::size_t>(c)]);
    head.push_back("replications");
    head.push_back("replications_ok");
    // A text column (the workload, the strategy, `job:Gb/s` pairs: unit
    // "text" in the summary's declarations) has no spread: its value alone.
    std::vector<bool> text(h.size(), false);
    for (long c : metrics) {
        const std::string& name = h[static_cast<std::size_t>(c)];
        const Metric* m = summary_metrics().find(name);
        text[static_cast<std::size_t>(c)] = m && m->unit == "text";
        head.push_back(name);
        if (text[static_cast<std::size_t>(c)]) continue;
        head.push_back(name + "_sd");
        head.push_back(name + "_ci95");
    }
    write_csv_row(os, head);
    for (const Group& g : group_replications(results, keys, c_status)) {
        CsvRow row = g.key;
        row.push_back(std::to_string(g.runs));
        row.push_back(std::to_string(g.ok.size()));
        for (long c : metrics) {
            append_metric(g, static_cast<std::size_t>(c), row);
            if (text[static_cast<std::size_t>(c)]) row.resize(row.size() - 2);   // no _sd, _ci95
        }
        write_csv_row(os, row);
    }
    return os.str();
}

// ---------------------------------------------------------------------------
// Merging

namespace {

// The merge behind merge_results and compose_shards: inputs read one by
// one against the plans beside them, then every sweep checked whole.
class Merge {
public:
    Merge(bool allow_partial, std::ostream* notes) : allow_partial_(allow_partial), notes_(notes) {}
    void read(const std::string& path);
    // Every sweep whole, or said what is missing.
    void check_complete() const;
    // Returns the rows written.
    std::size_t write(std::ostream& out);

private:
    struct Row {
        long index;
        std::map<std::string, std::string> cells;
    };
    struct Sweep {
        PlanFile plan;
        std::vector<std::string> inputs;
        std::set<std::string> present;
    };
    Sweep* sweep_of(const std::string& path, fs::path& plan_path);
    void add_columns(const std::string& path, const CsvRow& h);
    void add_row(const std::string& path, std::size_t i, const CsvRow& h, const CsvRow& r, std::size_t point_col,
                 Sweep* sweep, const fs::path& plan_path);

    bool allow_partial_;
    std::ostream* notes_;
    CsvRow header_;
    std::map<std::string, std::size_t> col_of_;
    std::vector<Row> rows_;
    std::map<std::string, std::string> input_of_id_;   // point id -> the input that holds it
    std::vector<Sweep> sweeps_;   // in order of first input
    std::vector<std::string> unchecked_;
};

// The sweep of an input, by the plan beside it (nullptr: none, allowed partial).
Merge::Sweep* Merge::sweep_of(const std::string& path, fs::path& plan_path) {
    plan_path = plan_path_for(path);
    PlanFile plan;
    if (!read_plan_file(plan_path, plan)) {
        if (!allow_partial_)
            throw ConfigError(path + ": no sweep plan beside it (" + plan_path.string() +
                              "): not the results of a vrdmasim sweep, or of one from before sweeps wrote plans; "
                              "merge --allow-partial takes it without checking that its sweep is complete");
        unchecked_.push_back(path);
        return nullptr;
    }
    Sweep* sweep = nullptr;
    for (auto& s : sweeps_)
        if (s.plan.fingerprint == plan.fingerprint) sweep = &s;
    if (!sweep) {
        sweeps_.push_back(Sweep{plan, {}, {}});
        sweep = &sweeps_.back();
    }
    sweep->inputs.push_back(path);
    return sweep;
}

void Merge::add_columns(const std::string& path, const CsvRow& h) {
    std::set<std::string> hset;
    for (const auto& name : h) {
        if (!hset.insert(name).second) throw ConfigError(path + ": column '" + name + "' appears twice");
        if (!col_of_.count(name)) {
            col_of_[name] = header_.size();
            header_.push_back(name);
        }
    }
}

void Merge::add_row(const std::string& path, std::size_t i, const CsvRow& h, const CsvRow& r, std::size_t point_col,
                    Sweep* sweep, const fs::path& plan_path) {
    if (r.size() != h.size())
        throw ConfigError(path + ": row " + std::to_string(i + 1) + " has " + std::to_string(r.size()) +
                          " fields, the header has " + std::to_string(h.size()));
    const std::string& id = r[point_col];
    long index = point_index_of(id);
    if (index < 0) throw ConfigError(path + ": row " + std::to_string(i + 1) + ": bad point id '" + id + "'");
    if (sweep && (static_cast<std::size_t>(index) >= sweep->plan.ids.size() || sweep->plan.ids[index] != id))
        throw ConfigError(path + ": row " + std::to_string(i + 1) + ": point " + id +
                          " is not a point of the sweep whose plan is beside it (" + plan_path.string() + ")");
    auto [it, fresh] = input_of_id_.emplace(id, path);
    if (!fresh)
        throw ConfigError("point " + id + " is in " + it->second + " and in " + path +
                          (it->second == path ? " twice" : " (the same shard given twice?)"));
    if (sweep) sweep->present.insert(id);
    Row row{index, {}};
    for (std::size_t c = 0; c < h.size(); ++c) row.cells[h[c]] = r[c];
    rows_.push_back(std::move(row));
}

void Merge::read(const std::string& path) {
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
    fs::path plan_path;
    Sweep* sweep = sweep_of(path, plan_path);
    const CsvRow& h = data[0];
    auto pc = std::find(h.begin(), h.end(), "point");
    if (pc == h.end()) throw ConfigError(path + ": no 'point' column");
    const std::size_t point_col = static_cast<std::size_t>(pc - h.begin());
    add_columns(path, h);
    for (std::size_t i = 1; i < data.size(); ++i) {
        if (data[i].size() == 1 && data[i][0].empty()) continue;   // blank line
        add_row(path, i, h, data[i], point_col, sweep, plan_path);
    }
}

void Merge::check_complete() const {
    for (const auto& s : sweeps_) {
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
            if (!allow_partial_)
                throw ConfigError(msg +
                                  " (a shard missing or not finished; merge --allow-partial merges what is there)");
            if (notes_) *notes_ << "merge: " << msg << "\n";
        } else if (notes_) {
            *notes_ << "merge: " << name << ": all " << s.plan.ids.size() << " points, from " << s.inputs.size()
                    << " input(s)\n";
        }
    }
    if (notes_)
        for (const auto& u : unchecked_) *notes_ << "merge: " << u << ": no plan beside it, merged unchecked\n";
}

std::size_t Merge::write(std::ostream& out) {
    std::stable_sort(rows_.begin(), rows_.end(), [](const Row& a, const Row& b) { return a.index < b.index; });
    write_csv_row(out, header_);
    for (const auto& r : rows_) {
        CsvRow line(header_.size());
        for (const auto& [name, value] : r.cells) line[col_of_[name]] = value;
        write_csv_row(out, line);
    }
    return rows_.size();
}

std::size_t merge_into(const std::vector<std::string>& inputs, std::ostream& out, bool allow_partial,
                       std::ostream* notes) {
    Merge m(allow_partial, notes);
    for (const auto& path : inputs) m.read(path);
    m.check_complete();
    return m.write(out);
}

}   // namespace

void merge_results(const std::vector<std::string>& inputs, std::ostream& out, bool allow_partial, std::ostream* notes) {
    merge_into(inputs, out, allow_partial, notes);
}

namespace sweep_detail {

std::size_t compose_shards(const fs::path& out, const fs::path& shards_dir, int count) {
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

}   // namespace sweep_detail

}   // namespace vrdmasim
