// Running a sweep: its points as child processes, N at a time, resumable
// and shardable, with the output directory's marker and locks (sweep.hpp,
// run_sweep).
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
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>

#include "src/core/csv.hpp"
#include "src/core/output_dir.hpp"
#include "src/core/params.hpp"
#include "src/tools/sweep.hpp"
#include "src/tools/sweep_internal.hpp"

extern char** environ;

namespace vrdmasim {

namespace sweep_detail {

double point_weight(const std::string& check_output) {
    static const std::string kPlanned = "planned: ";
    const auto at = check_output.rfind(kPlanned);
    if (at == std::string::npos) return 0;
    const char* plan = check_output.c_str() + at + kPlanned.size();
    unsigned long long transfers = 0, bytes = 0;
    int used = 0;
    if (std::sscanf(plan, "%llu transfers%n", &transfers, &used) != 1 || used == 0) return 0;
    // "T transfers, B bytes of payload"; "T transfers (their bytes not
    // known in advance)" weighs as unknown.
    if (std::sscanf(plan + used, ", %llu bytes of payload", &bytes) != 1) return 0;
    // Its packets: the payload in packets of 256 bytes, at least one for
    // each transfer when there is payload.
    const double t = static_cast<double>(transfers);
    const double packets = bytes > 0 ? std::max(t, std::ceil(static_cast<double>(bytes) / 256.0)) : 0.0;
    return t + packets;
}

void fill_unknown_weights(std::vector<double>& weights) {
    double sum = 0;
    std::size_t known = 0;
    for (const double w : weights)
        if (w > 0) {
            sum += w;
            ++known;
        }
    const double mean = known ? sum / static_cast<double>(known) : 1.0;
    for (double& w : weights)
        if (!(w > 0)) w = mean;
}

double eta_seconds(double elapsed, double finished, double remaining) {
    if (remaining <= 0) return 0;
    if (!(finished > 0)) return -1;
    return elapsed / finished * remaining;
}

std::vector<std::string> warnings_in_log(const std::string& log_text) {
    std::vector<std::string> out;
    std::istringstream in(log_text);
    std::string line;
    while (std::getline(in, line)) {
        // A progress line's '\r' redraws before it: the text after the last.
        const auto cr = line.find_last_of('\r');
        if (cr != std::string::npos) line.erase(0, cr + 1);
        const std::string t = trim(line);
        for (const char* prefix : {"vrdmasim: warning: ", "Warning: "})
            if (t.rfind(prefix, 0) == 0 && t.size() > std::strlen(prefix)) {
                out.push_back(t.substr(std::strlen(prefix)));
                break;
            }
    }
    return out;
}

std::string warning_kind(const std::string& warning) {
    std::size_t end = warning.size();
    for (const char* sep : {": ", " (", ", ", "; "}) {
        const auto at = warning.find(sep);
        if (at != std::string::npos && at > 0) end = std::min(end, at);
    }
    std::string kind;
    for (std::size_t i = 0; i < end; ++i) {
        const char c = warning[i];
        const bool starts_number =
            c >= '0' && c <= '9' && (i == 0 || !std::isalnum(static_cast<unsigned char>(warning[i - 1])));
        if (!starts_number) {
            kind += c;
            continue;
        }
        while (i + 1 < end && (std::isdigit(static_cast<unsigned char>(warning[i + 1])) || warning[i + 1] == '.')) ++i;
        kind += 'N';
    }
    if (kind.size() > 60) kind = kind.substr(0, 57) + "...";
    return kind;
}

std::string warnings_line(const std::vector<std::pair<std::string, std::vector<std::string>>>& points,
                          std::size_t total) {
    std::vector<std::pair<std::string, std::size_t>> kinds;   // in order of first appearance
    std::size_t warned = 0;
    for (const auto& p : points) {
        if (p.second.empty()) continue;
        ++warned;
        for (const auto& w : p.second) {
            const std::string k = warning_kind(w);
            auto it = std::find_if(kinds.begin(), kinds.end(), [&](const auto& e) { return e.first == k; });
            if (it == kinds.end()) kinds.emplace_back(k, 1);
            else ++it->second;
        }
    }
    if (warned == 0) return "";
    std::string line =
        std::to_string(warned) + " of " + std::to_string(total) + " point" + (total == 1 ? "" : "s") + " warned: ";
    for (std::size_t i = 0; i < kinds.size(); ++i)
        line += (i ? ", '" : "'") + kinds[i].first + "' \u00d7" + std::to_string(kinds[i].second);
    return line;
}

}   // namespace sweep_detail

namespace {

using namespace sweep_detail;

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

volatile sig_atomic_t g_interrupted = 0;
extern "C" void on_sigint(int) { g_interrupted = 1; }

struct Record {
    std::string status;   // ok, transfer-errors, failed, mismatch, interrupted
    std::string exit_code;
    std::string error;
    Assignments metrics;   // summary.csv columns, in its order
    std::vector<std::string> warnings;   // what its run warned (warnings_in_log of its log)
};

// A whole (log) file; "" if unreadable.
std::string read_whole(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

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

// The environment a point runs in: the sweep's, without the variables that
// make a process an MPI rank (OMPI_COMM_WORLD_*, PMI_RANK, PMI_SIZE). A point
// is one simulation in one process, even when the sweep is a rank of mpirun
// (`vrdmasim run` refuses to be one of several ranks).
std::vector<char*> point_environment() {
    std::vector<char*> env;
    for (char** e = environ; *e; ++e) {
        const std::string_view v(*e);
        if (v.rfind("OMPI_COMM_WORLD_", 0) == 0 || v.rfind("PMI_RANK=", 0) == 0 || v.rfind("PMI_SIZE=", 0) == 0)
            continue;
        env.push_back(*e);
    }
    env.push_back(nullptr);
    return env;
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
    std::vector<char*> env = point_environment();
    int rc = posix_spawnp(&pid, exe.c_str(), &fa, nullptr, argv.data(), env.data());
    posix_spawn_file_actions_destroy(&fa);
    if (rc != 0) {
        error = "cannot run " + exe + ": " + std::strerror(rc);
        return -1;
    }
    return pid;
}

// A file descriptor that closes with its owner.
struct LockFd {
    int fd = -1;
    LockFd() = default;
    LockFd(const LockFd&) = delete;
    LockFd& operator=(const LockFd&) = delete;
    ~LockFd() {
        if (fd >= 0) close(fd);
    }
};

// One invocation of run_sweep: the steps below, in order. A step that
// refuses returns the exit status (the error printed), -1 to go on.
class SweepRun {
public:
    SweepRun(const ParamRegistry& reg, const SweepOptions& opts)
        : reg_(reg),
          opts_(opts),
          out_(opts.out_dir),
          points_dir_(out_ / "points"),
          logs_dir_(out_ / "logs"),
          shards_dir_(out_ / "shards"),
          sharded_(opts.shard_count > 1),
          shard_(shard_name(opts.shard_index, opts.shard_count)),
          results_path_((out_ / "results.csv").string()),
          own_results_(sharded_ ? shards_dir_ / ("results-" + shard_ + ".csv") : fs::path(results_path_)),
          own_warnings_(sharded_ ? shards_dir_ / ("warnings-" + shard_ + ".txt") : out_ / "warnings.txt") {}
    int run();

private:
    int fail(const std::string& msg) const {
        std::cerr << "vrdmasim: error: " << msg << "\n";
        return 2;
    }
    int check_options() const;
    int check_points();
    int refuse_points(const std::map<int, std::string>& refused, std::size_t checked) const;
    std::string describe_point(const SweepPoint& p) const;
    void note_warnings(const SweepPoint& p, Record& r) const;
    void write_warnings() const;
    std::vector<std::string> run_arguments(const SweepPoint& p) const;
    int make_directory() const;
    int lock_directory();
    int check_other_splits() const;
    int lock_shard();
    int record_plan() const;
    void load_earlier();
    void publish();
    void draw();
    void start_points();
    void wait_for_points();
    Record outcome(const SweepPoint& p, int wstatus, bool& ended) const;
    void finish(const SweepPoint& p, Record r);
    void install_sigint();
    std::size_t count_status(const char* s) const;
    int report() const;

    const ParamRegistry& reg_;
    const SweepOptions& opts_;
    SweepPlan plan_;
    const fs::path out_, points_dir_, logs_dir_, shards_dir_;
    const bool sharded_;
    const std::string shard_;
    const std::string results_path_;
    const fs::path own_results_;
    const fs::path own_warnings_;   // every warning of the shard's points, by kind
    // One sweep at a time per directory, or the shards of one sweep: an
    // unsharded sweep holds the marker exclusively, a shard holds it shared
    // and its own shard file exclusively. The locks' file descriptors are
    // inherited by every point's process (no close-on-exec), so they stay
    // locked while points of a killed sweep still run: a resume refuses
    // instead of running them a second time beside the orphans.
    LockFd lock_, shard_lock_;
    std::map<int, const SweepPoint*> shard_points_;
    std::map<int, Record> records_;
    std::deque<const SweepPoint*> pending_;
    std::map<pid_t, const SweepPoint*> running_;
    std::size_t already_done_ = 0, in_results_ = 0, finished_now_ = 0, done_ = 0, last_len_ = 0;
    std::map<int, double> weight_;   // the ETA's weight of each point of the shard (point_weight)
    double finished_weight_ = 0;   // of the points finished in this invocation
    unsigned jobs_ = 1;
    bool interrupted_ = false;
    struct sigaction old_int_ {};
    bool handler_installed_ = false;
    std::chrono::steady_clock::time_point start_, last_draw_;
};

int SweepRun::check_options() const {
    if (opts_.shard_count < 1 || opts_.shard_index < 0 || opts_.shard_index >= opts_.shard_count)
        return fail("bad --shard " + std::to_string(opts_.shard_index) + "/" + std::to_string(opts_.shard_count) +
                    ": expected I/N with 0 <= I < N");
    if (opts_.jobs < 0) return fail("bad --jobs " + std::to_string(opts_.jobs) + ": must be at least 1");
    if (opts_.out_dir.empty()) return fail("no output directory");
    if (opts_.executable.empty()) return fail("no executable to run the points with");
    if (opts_.executable.find('/') != std::string::npos && access(opts_.executable.c_str(), X_OK) != 0)
        return fail("cannot run '" + opts_.executable + "': " + std::strerror(errno));
    return -1;
}

std::vector<std::string> SweepRun::run_arguments(const SweepPoint& p) const {
    std::vector<std::string> args{opts_.executable, "run"};
    for (auto& a : point_arguments(plan_, p)) args.push_back(std::move(a));
    return args;
}

// "p0003-1a2b3c4d (workload.message-size = 4KiB, ...)".
std::string SweepRun::describe_point(const SweepPoint& p) const {
    std::string what;
    for (const auto& kv : p.assignment) what += (what.empty() ? "" : ", ") + kv.first + " = " + kv.second;
    return p.id + (what.empty() ? std::string() : " (" + what + ")");
}

// Every point of the shard that is not done is checked before any runs
// (`run --check`, --jobs at a time: its system built, nothing simulated):
// a configuration a point's run would refuse stops the sweep with exit 2,
// nothing run, whether all points share it or one has it. The checks give
// each point its weight for the ETA.
int SweepRun::check_points() {
    std::vector<const SweepPoint*> todo;
    for (const auto& p : plan_.points) {
        if (p.index % opts_.shard_count != opts_.shard_index) continue;
        std::error_code ec;
        if (fs::exists(points_dir_ / p.id / "summary.csv", ec)) continue;
        todo.push_back(&p);
    }
    if (todo.empty()) return -1;
    std::string tmpl = (fs::temp_directory_path() / "vrdmasim-sweep-check-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) return fail("cannot create a directory for the checks in " + tmpl);
    const fs::path tmp(tmpl);
    struct Cleanup {
        fs::path dir;
        ~Cleanup() {
            std::error_code ec;
            fs::remove_all(dir, ec);
        }
    } cleanup{tmp};
    std::map<pid_t, const SweepPoint*> running;
    std::map<int, std::string> refused;   // point index -> the error
    std::size_t next = 0, checked = 0;
    while (next < todo.size() || !running.empty()) {
        while (running.size() < jobs_ && next < todo.size()) {
            const SweepPoint* p = todo[next++];
            std::vector<std::string> args = run_arguments(*p);
            args.push_back("--check");
            std::string err;
            const pid_t pid = spawn_point(opts_.executable, args, (tmp / (p->id + ".log")).string(), err);
            if (pid < 0) {
                for (const auto& kv : running) waitpid(kv.first, nullptr, 0);
                return fail(err);
            }
            running[pid] = p;
        }
        int wstatus = 0;
        const pid_t pid = waitpid(-1, &wstatus, 0);
        if (pid < 0) {
            if (errno == EINTR) continue;
            break;   // ECHILD: nothing left to wait for
        }
        const auto it = running.find(pid);
        if (it == running.end()) continue;
        const SweepPoint& p = *it->second;
        running.erase(it);
        ++checked;
        const std::string text = read_whole((tmp / (p.id + ".log")).string());
        if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) {
            weight_[p.index] = point_weight(text);
        } else if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 2) {
            std::string error;
            std::istringstream in(text);
            std::string line;
            while (std::getline(in, line))
                if (line.rfind("vrdmasim: error: ", 0) == 0) error += (error.empty() ? "" : "; ") + line.substr(17);
            if (error.empty()) error = last_nonempty_line((tmp / (p.id + ".log")).string());
            refused[p.index] = error.empty() ? "refused (exit status 2)" : error;
        }
        // Another end (a crash): not a configuration the run refuses; the
        // point runs, and its run says what happens.
        if (opts_.progress) {
            std::cerr << "\rsweep: checking the points' configurations, " << checked << "/" << todo.size()
                      << std::flush;
            if (running.empty() && next >= todo.size()) std::cerr << "\n";
        }
    }
    if (!refused.empty()) return refuse_points(refused, checked);
    return -1;
}

// Exit 2, naming what the checks refused: the error, once, when every point
// shares it; otherwise each error with the points it refused.
int SweepRun::refuse_points(const std::map<int, std::string>& refused, std::size_t checked) const {
    std::vector<std::pair<std::string, std::vector<int>>> errors;   // in point order
    for (const auto& [index, error] : refused) {
        // A name of its own: clang before 16 cannot capture a structured binding.
        const std::string& text = error;
        auto it = std::find_if(errors.begin(), errors.end(), [&](const auto& e) { return e.first == text; });
        if (it == errors.end()) errors.push_back({error, {index}});
        else it->second.push_back(index);
    }
    const std::string nothing = "; nothing run (each point's configuration is checked before any point runs)";
    if (errors.size() == 1 && refused.size() == checked)
        return fail(errors[0].first + " (every point of " + opts_.sweep_file + " is refused alike: " +
                    std::to_string(checked) + " of " + std::to_string(checked) + " checked" + nothing + ")");
    std::string msg = opts_.sweep_file + ": " + std::to_string(refused.size()) + " of " + std::to_string(checked) +
                      " points have a configuration a run refuses" + nothing + ":";
    for (const auto& [error, indexes] : errors) {
        msg += "\n  " + describe_point(plan_.points[static_cast<std::size_t>(indexes[0])]);
        if (indexes.size() > 1)
            msg += " and " + std::to_string(indexes.size() - 1) + " other point" + (indexes.size() > 2 ? "s" : "");
        msg += ": " + error;
    }
    return fail(msg);
}

// Never write into a directory that is not a sweep's: an existing,
// non-empty --out must carry the sweep marker. The marker before anything
// else in it: shards of one sweep start at once into one --out, and one
// that looks while another has made the directory must find it empty or
// marked, never holding points/ without the marker.
int SweepRun::make_directory() const {
    std::error_code ec;
    if (fs::exists(fs::symlink_status(out_, ec))) {
        if (!fs::is_directory(out_, ec)) return fail("--out " + opts_.out_dir + ": exists and is not a directory");
        if (!fs::is_empty(out_, ec) && !fs::is_regular_file(out_ / kSweepMarker, ec))
            return fail("--out " + opts_.out_dir +
                        ": directory is not empty and is not a vrdmasim sweep's output (no " + kSweepMarker +
                        " marker); refusing to write into it");
    }
    fs::create_directories(out_, ec);
    if (ec) return fail("cannot create " + opts_.out_dir + ": " + ec.message());
    const int mfd = open((out_ / kSweepMarker).c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (mfd < 0) return fail("cannot create " + (out_ / kSweepMarker).string() + ": " + std::strerror(errno));
    close(mfd);
    fs::create_directories(points_dir_, ec);
    if (!ec) fs::create_directories(logs_dir_, ec);
    if (!ec && sharded_) fs::create_directories(shards_dir_, ec);
    if (ec) return fail("cannot create " + opts_.out_dir + ": " + ec.message());
    return -1;
}

int SweepRun::lock_directory() {
    const std::string lock_path = (out_ / kSweepMarker).string();
    lock_.fd = open(lock_path.c_str(), O_RDWR | O_CREAT, 0644);
    if (lock_.fd < 0) return fail("cannot open " + lock_path + ": " + std::strerror(errno));
    if (flock(lock_.fd, (sharded_ ? LOCK_SH : LOCK_EX) | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            return fail("--out " + opts_.out_dir +
                        (sharded_ ? ": an unsharded sweep, or points of a killed one, is still running there; wait "
                                    "until it ends"
                                  : ": another sweep (or a shard of one), or points of a killed one, is still running "
                                    "there; wait until it ends"));
        return fail("cannot lock " + lock_path + ": " + std::strerror(errno));
    }
    static const char kText[] = "vrdmasim sweep output (this file is its lock)\n";
    struct stat st {};
    if (fstat(lock_.fd, &st) != 0 || st.st_size != static_cast<off_t>(sizeof kText - 1))
        if (ftruncate(lock_.fd, 0) != 0 || pwrite(lock_.fd, kText, sizeof kText - 1, 0) != sizeof kText - 1)
            return fail("cannot write " + lock_path + ": " + std::strerror(errno));
    return -1;
}

// Shards of one directory split the same way: another split's rows, or a
// running shard of another split, refuse this one.
int SweepRun::check_other_splits() const {
    std::error_code ec;
    const std::string tail = "-of-" + std::to_string(opts_.shard_count);
    for (fs::directory_iterator it(shards_dir_, ec), end; !ec && it != end; it.increment(ec)) {
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
        return fail("--out " + opts_.out_dir + ": holds shards of a split in " + name.substr(of + 4) + " (" + file +
                    (is_lock ? ", running" : "") + "), this is shard " + std::to_string(opts_.shard_index) + "/" +
                    std::to_string(opts_.shard_count) + "; give every shard the same N, or use another --out");
    }
    return -1;
}

int SweepRun::lock_shard() {
    const std::string shard_lock_path = (shards_dir_ / (shard_ + ".lock")).string();
    shard_lock_.fd = open(shard_lock_path.c_str(), O_RDWR | O_CREAT, 0644);
    if (shard_lock_.fd < 0) return fail("cannot open " + shard_lock_path + ": " + std::strerror(errno));
    if (flock(shard_lock_.fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno == EWOULDBLOCK)
            return fail("--out " + opts_.out_dir + ": shard " + std::to_string(opts_.shard_index) + "/" +
                        std::to_string(opts_.shard_count) +
                        " is already running there (or points of a killed run of it); two processes were "
                        "given the same shard");
        return fail("cannot lock " + shard_lock_path + ": " + std::strerror(errno));
    }
    return -1;
}

// The plan beside the results: what `merge` checks inputs against.
int SweepRun::record_plan() const {
    PlanFile old_plan;
    bool have = false;
    try {
        have = read_plan_file(out_ / kPlanFile, old_plan);
    } catch (const ConfigError&) {
        have = false;   // ours, damaged: rewritten below
    }
    if (have && old_plan.fingerprint == plan_.fingerprint) return -1;
    std::error_code ec;
    std::vector<fs::path> old_shards;
    for (fs::directory_iterator it(shards_dir_, ec), end; !ec && it != end; it.increment(ec))
        if (it->path().extension() == ".csv" && it->path().filename().string().rfind("results-", 0) == 0)
            old_shards.push_back(it->path());
    if (have && !old_shards.empty()) {
        if (sharded_)
            return fail("--out " + opts_.out_dir + ": holds shards of another sweep (plan " + old_plan.fingerprint +
                        ", " + std::to_string(old_plan.ids.size()) + " points; this one is " + plan_.fingerprint +
                        "); use another --out");
        for (const auto& f : old_shards) fs::remove(f, ec);   // another plan's, and none runs (locked)
    }
    std::string err;
    if (!write_atomically(out_ / kPlanFile, plan_text(plan_), err)) return fail(err);
    return -1;
}

// What earlier invocations did: points with a summary are done, failed
// ones keep their record until they run again.
void SweepRun::load_earlier() {
    for (const auto& p : plan_.points)
        if (p.index % opts_.shard_count == opts_.shard_index) shard_points_[p.index] = &p;
    std::map<std::string, Record> old = read_old_results(own_results_.string());
    for (const auto& [index, p] : shard_points_) {
        const fs::path summary = points_dir_ / p->id / "summary.csv";
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
            note_warnings(*p, r);
            records_[index] = std::move(r);
            ++already_done_;
        } else {
            if (o != old.end() && o->second.status == "failed") records_[index] = o->second;
            pending_.push_back(p);
        }
    }
}

// A shard writes its own rows, then results.csv as the merge of every
// shard's rows so far.
void SweepRun::publish() {
    write_results(own_results_, plan_, shard_points_, records_);
    write_warnings();
    if (sharded_) in_results_ = compose_shards(out_, shards_dir_, opts_.shard_count);
    if (plan_.replications <= 1) return;
    // Each point's replications: mean, sd, 95 % CI (aggregate.csv).
    try {
        const std::string text = aggregate_replications(plan_, read_csv_file(results_path_));
        const std::string err = write_file_atomically(out_ / "aggregate.csv", text);
        if (!err.empty()) std::cerr << "vrdmasim: warning: " << err << "\n";
    } catch (const std::exception& e) {
        std::cerr << "vrdmasim: warning: aggregate.csv not updated: " << e.what() << "\n";
    }
}

std::size_t SweepRun::count_status(const char* s) const {
    std::size_t n = 0;
    for (const auto& kv : records_)
        if (kv.second.status == s) ++n;
    return n;
}

void SweepRun::draw() {
    if (!opts_.progress) return;
    const std::size_t total = shard_points_.size();
    double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    std::string eta = "--";
    double remaining = 0;
    for (const SweepPoint* p : pending_) remaining += weight_.at(p->index);
    for (const auto& kv : running_) remaining += weight_.at(kv.second->index);
    if (const double s = eta_seconds(elapsed, finished_weight_, remaining); s >= 0) eta = fmt_duration(s);
    std::size_t failed = 0;
    for (const auto& kv : records_)
        if (kv.second.status != "ok") ++failed;
    std::string line = "sweep: " + std::to_string(done_) + "/" + std::to_string(total) + " points";
    if (failed) line += ", " + std::to_string(failed) + " not ok";
    line += ", elapsed " + fmt_duration(elapsed) + ", ETA " + eta;
    std::string pad = line.size() < last_len_ ? std::string(last_len_ - line.size(), ' ') : "";
    last_len_ = line.size();
    std::cerr << "\r" << line << pad << std::flush;
}

void SweepRun::finish(const SweepPoint& p, Record r) {
    note_warnings(p, r);
    records_[p.index] = std::move(r);
    finished_weight_ += weight_.at(p.index);
    ++finished_now_;
    ++done_;
    publish();
    draw();
}

// What the point's run warned, from its log.
void SweepRun::note_warnings(const SweepPoint& p, Record& r) const {
    r.warnings = warnings_in_log(read_whole((logs_dir_ / (p.id + ".log")).string()));
}

// OUT/warnings.txt (a shard's: OUT/shards/warnings-I-of-N.txt): the count
// by kind, then every warning of every point, by kind.
void SweepRun::write_warnings() const {
    std::vector<std::pair<std::string, std::vector<std::string>>> points;
    for (const auto& [index, rec] : records_) points.emplace_back(shard_points_.at(index)->id, rec.warnings);
    const std::string line = warnings_line(points, shard_points_.size());
    std::string text =
        "# vrdmasim sweep " + opts_.sweep_file + ": what its points' runs warned (from logs/<point>.log)\n";
    text += (line.empty() ? "no point warned (" + std::to_string(records_.size()) + " of " +
                                std::to_string(shard_points_.size()) + " points run)"
                          : line) +
            "\n";
    std::vector<std::string> kinds;
    for (const auto& p : points)
        for (const auto& w : p.second)
            if (std::find(kinds.begin(), kinds.end(), warning_kind(w)) == kinds.end()) kinds.push_back(warning_kind(w));
    for (const auto& kind : kinds) {
        text += "\n" + kind + ":\n";
        for (const auto& p : points)
            for (const auto& w : p.second)
                if (warning_kind(w) == kind) text += "  " + p.first + ": " + w + "\n";
    }
    const std::string err = write_file_atomically(own_warnings_, text);
    if (!err.empty()) std::cerr << "vrdmasim: warning: " << err << "\n";
}

// Points from the queue while fewer than --jobs run.
void SweepRun::start_points() {
    while (!interrupted_ && running_.size() < jobs_ && !pending_.empty()) {
        const SweepPoint* p = pending_.front();
        pending_.pop_front();
        const fs::path pdir = points_dir_ / p->id;
        std::error_code ec;
        fs::remove_all(pdir, ec);   // a stale partial output would block the run's rename
        std::vector<std::string> args = run_arguments(*p);
        args.push_back("--out");
        args.push_back(pdir.string());
        args.push_back("--quiet");
        std::string err;
        pid_t pid = spawn_point(opts_.executable, args, (logs_dir_ / (p->id + ".log")).string(), err);
        if (pid < 0) {
            Record r;
            r.status = "failed";
            r.error = err;
            finish(*p, std::move(r));
            continue;
        }
        running_[pid] = p;
    }
}

// How a point's process ended (`ended` false: stopped or continued, not finished).
Record SweepRun::outcome(const SweepPoint& p, int wstatus, bool& ended) const {
    const fs::path pdir = points_dir_ / p.id;
    const fs::path summary = pdir / "summary.csv";
    std::error_code ec;
    const bool has_summary = fs::exists(summary, ec);
    Record r;
    ended = true;
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
            r.error = last_nonempty_line((logs_dir_ / (p.id + ".log")).string());
            if (r.error.empty())
                r.error =
                    code == 0 ? "exited 0 without writing summary.csv" : "exited with status " + std::to_string(code);
        }
    } else if (WIFSIGNALED(wstatus)) {
        r.status = "failed";
        r.exit_code = std::to_string(-WTERMSIG(wstatus));
        r.error = "killed by signal " + std::to_string(WTERMSIG(wstatus));
    } else {
        ended = false;
        return r;
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
            fs::path aside = points_dir_ / (p.id + ".failed");
            fs::remove_all(aside, ec);
            fs::rename(pdir, aside, ec);
        }
    } else {
        r.metrics = read_summary(summary.string());
    }
    return r;
}

// One child reaped (or, with a progress line, none yet: the line redrawn).
void SweepRun::wait_for_points() {
    int wstatus = 0;
    pid_t pid;
    if (opts_.progress) {
        pid = waitpid(-1, &wstatus, WNOHANG);
        if (pid == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(100));
            auto now = std::chrono::steady_clock::now();
            if (now - last_draw_ >= std::chrono::milliseconds(500)) {
                draw();
                last_draw_ = now;
            }
            return;
        }
    } else {
        pid = waitpid(-1, &wstatus, 0);
    }
    if (pid < 0) {
        if (errno == EINTR) return;
        // ECHILD: somebody else reaped our children; we cannot know how they ended.
        for (const auto& kv : running_) {
            Record r;
            r.status = "failed";
            r.error = std::string("lost track of the process: ") + std::strerror(errno);
            finish(*kv.second, std::move(r));
        }
        running_.clear();
        return;
    }
    auto it = running_.find(pid);
    if (it == running_.end()) return;   // not one of ours
    const SweepPoint& p = *it->second;
    running_.erase(it);
    bool ended = false;
    Record r = outcome(p, wstatus, ended);
    if (ended) finish(p, std::move(r));
}

// Ctrl-C: stop starting points, let the running ones end, record them. A
// second Ctrl-C kills the sweep (SA_RESETHAND).
void SweepRun::install_sigint() {
    if (sigaction(SIGINT, nullptr, &old_int_) != 0 || old_int_.sa_handler != SIG_DFL) return;
    struct sigaction sa {};
    sa.sa_handler = on_sigint;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;   // no SA_RESTART: waitpid returns EINTR
    g_interrupted = 0;
    handler_installed_ = sigaction(SIGINT, &sa, nullptr) == 0;
}

// The sweep's last line, and its exit status.
int SweepRun::report() const {
    const std::size_t total = shard_points_.size();
    const std::size_t ok = count_status("ok"), mismatch = count_status("mismatch"), failed = count_status("failed"),
                      stopped = count_status("interrupted");
    std::ostringstream msg;
    msg << "sweep: " << total << " point" << (total == 1 ? "" : "s");
    if (opts_.shard_count > 1) msg << " in shard " << opts_.shard_index << "/" << opts_.shard_count;
    if (already_done_) msg << " (" << already_done_ << " already done)";
    msg << ", " << ok << " ok";
    if (mismatch) msg << ", " << mismatch << " mismatch";
    msg << ", " << failed << " failed";
    if (stopped) msg << ", " << stopped << " interrupted";
    if (total - records_.size() > 0) msg << ", " << (total - records_.size()) << " not run";
    if (interrupted_) msg << " (interrupted: the same command again resumes, running what is not done)";
    if (sharded_) {
        msg << "; rows in " << own_results_.string() << "; " << results_path_ << " holds " << in_results_ << " of the "
            << plan_.points.size() << " points of the sweep";
        if (in_results_ < plan_.points.size()) msg << " (other shards still running or not run)";
    } else {
        msg << "; results in " << results_path_;
    }
    std::cerr << msg.str() << "\n";
    // What the points warned, counted by kind, each kind's first warning in
    // full: a sweep's warnings are seen, not left in its points' logs.
    std::vector<std::pair<std::string, std::vector<std::string>>> points;
    for (const auto& [index, rec] : records_) points.emplace_back(shard_points_.at(index)->id, rec.warnings);
    if (const std::string line = warnings_line(points, total); !line.empty()) {
        std::string text = "sweep: " + line + " (every warning in " + own_warnings_.string() + ")\n";
        std::vector<std::string> kinds;
        for (const auto& p : points)
            for (const auto& w : p.second)
                if (std::find(kinds.begin(), kinds.end(), warning_kind(w)) == kinds.end()) {
                    kinds.push_back(warning_kind(w));
                    text += "  " + p.first + ": warning: " + w + "\n";
                }
        std::cerr << text;
    }
    if (interrupted_) return 128 + SIGINT;   // as a shell reports a Ctrl-C'd command
    return ok == total ? 0 : 1;
}

int SweepRun::run() {
    if (const int s = check_options(); s >= 0) return s;
    try {
        plan_ = plan_sweep(reg_, opts_.sweep_file, opts_.varies);
    } catch (const ConfigError& e) {
        return fail(e.what());
    }
    jobs_ = opts_.jobs > 0 ? static_cast<unsigned>(opts_.jobs) : std::thread::hardware_concurrency();
    if (jobs_ == 0) jobs_ = 1;
    if (const int s = check_points(); s >= 0) return s;
    if (const int s = make_directory(); s >= 0) return s;
    if (const int s = lock_directory(); s >= 0) return s;
    if (sharded_) {
        if (const int s = check_other_splits(); s >= 0) return s;
        if (const int s = lock_shard(); s >= 0) return s;
    }
    if (const int s = record_plan(); s >= 0) return s;
    // With the lock held no point of an earlier invocation runs any more:
    // what killed ones left behind goes.
    remove_stale_partials(points_dir_);
    load_earlier();
    publish();
    {
        std::vector<double> w;
        for (const auto& kv : shard_points_) w.push_back(weight_.count(kv.first) ? weight_[kv.first] : 0.0);
        fill_unknown_weights(w);
        std::size_t i = 0;
        for (const auto& kv : shard_points_) weight_[kv.first] = w[i++];
    }
    install_sigint();
    start_ = std::chrono::steady_clock::now();
    done_ = already_done_;
    draw();
    last_draw_ = std::chrono::steady_clock::now();
    while (!pending_.empty() || !running_.empty()) {
        if (g_interrupted && !interrupted_) {
            interrupted_ = true;
            if (opts_.progress) std::cerr << "\n";
            std::cerr << "sweep: interrupted; waiting for " << running_.size() << " running point(s)\n";
            pending_.clear();
        }
        start_points();
        if (!running_.empty()) wait_for_points();
    }
    if (handler_installed_) sigaction(SIGINT, &old_int_, nullptr);
    if (opts_.progress) {
        draw();
        std::cerr << "\n";
    }
    return report();
}

}   // namespace

int run_sweep(const ParamRegistry& reg, const SweepOptions& opts) {
    SweepRun run(reg, opts);
    return run.run();
}

}   // namespace vrdmasim
