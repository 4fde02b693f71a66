// End-to-end tests of the vrdmasim command line: the built binary
// (VRDMASIM_EXE) runs as a child process in a fresh temporary directory, its
// stdout and stderr captured to files, and the tests look at its exit status,
// its messages and the files it writes. Workloads are kept small so that the
// whole suite takes a few seconds.
//
// Set VRDMASIM_KEEP_TEST_DIRS=1 to keep the temporary directories for
// inspection.
#include <catch2/catch.hpp>

#include "temp_dir.hpp"
#include "src/sim/progress.hpp"
#include "workloads/registry.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "src/core/params.hpp"
#include "json_check.hpp"
#include "src/sim/system.hpp"

#include <zlib.h>   // after the models' headers: its zconf.h defines FAR, a register's name there

#ifndef VRDMASIM_EXE
#error "VRDMASIM_EXE must name the vrdmasim binary under test"
#endif
#ifndef VRDMASIM_SOURCE_DIR
#error "VRDMASIM_SOURCE_DIR must name the source tree"
#endif

namespace fs = std::filesystem;
using vrdmasim_test::JVal;
using vrdmasim_test::parse_json;

namespace {

// ---------------------------------------------------------------------------
// Files and directories

std::string slurp(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    if (!in) throw std::runtime_error("cannot read " + p.string());
    std::ostringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

void spit(const fs::path& p, const std::string& text) {
    std::ofstream out(p, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out) throw std::runtime_error("cannot write " + p.string());
}

// A fresh directory for each test (tests/temp_dir.hpp).
struct TempDir : vrdmasim_test::TempDir {
    TempDir() : vrdmasim_test::TempDir("vrdmasim-cli") {}
};

// Names in a directory (not recursive), hidden ones included.
std::set<std::string> listing(const fs::path& dir) {
    std::set<std::string> names;
    for (const auto& e : fs::directory_iterator(dir)) names.insert(e.path().filename().string());
    return names;
}

// A file, or everything under a directory, for "left untouched" checks:
// relative path -> type, size, inode, modification time (ns) and content.
std::map<std::string, std::string> snapshot(const fs::path& dir) {
    std::map<std::string, std::string> snap;
    auto state = [](const fs::path& p) {
        struct stat st {};
        if (lstat(p.c_str(), &st) != 0) return std::string("missing");
        std::ostringstream os;
        os << "mode=" << st.st_mode << " ino=" << st.st_ino << " size=" << st.st_size << " mtime=" << st.st_mtim.tv_sec
           << "." << st.st_mtim.tv_nsec;
        if (S_ISREG(st.st_mode)) os << " content=" << slurp(p);
        return os.str();
    };
    snap["."] = state(dir);
    if (!fs::is_directory(dir)) return snap;
    for (const auto& e : fs::recursive_directory_iterator(dir))
        snap[fs::relative(e.path(), dir).string()] = state(e.path());
    return snap;
}

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

std::size_t count_lines(const std::string& text) {
    return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n'));
}

// ---------------------------------------------------------------------------
// Running the binary

struct Result {
    int status = -1;   // exit status; 128 + signal number if killed
    std::string out, err;
};

// Captured output goes here, out of the way of the directories under test.
const fs::path& capture_dir() {
    static TempDir dir;
    return dir.path();
}

// Runs VRDMASIM_EXE with `args` in directory `cwd`, stdin from /dev/null.
// No shell: every argument reaches the program as is. A child that runs for
// more than two minutes is killed (SIGALRM survives exec).
// A positive `file_size_limit` (bytes, RLIMIT_FSIZE) makes a write past it
// fail as on a full disk (EFBIG: vrdmasim ignores SIGXFSZ).
Result run_exe(const std::vector<std::string>& args, const fs::path& cwd, long file_size_limit = 0) {
    static int counter = 0;
    ++counter;
    const std::string out_path = (capture_dir() / ("stdout-" + std::to_string(counter))).string();
    const std::string err_path = (capture_dir() / ("stderr-" + std::to_string(counter))).string();
    const std::string exe = VRDMASIM_EXE;
    const std::string dir = cwd.string();

    std::vector<std::string> argv_s{exe};
    argv_s.insert(argv_s.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);

    const pid_t pid = fork();
    if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
    if (pid == 0) {
        // Only async-signal-safe calls between fork and exec.
        const int in = open("/dev/null", O_RDONLY);
        const int out = open(out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        const int err = open(err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (in < 0 || out < 0 || err < 0) _exit(125);
        if (dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err, 2) < 0) _exit(125);
        if (chdir(dir.c_str()) != 0) _exit(126);
        alarm(120);
        if (file_size_limit > 0) {
            // SIGXFSZ at its default (it kills): vrdmasim ignores it itself.
            signal(SIGXFSZ, SIG_DFL);
            struct rlimit lim {};
            lim.rlim_cur = lim.rlim_max = static_cast<rlim_t>(file_size_limit);
            if (setrlimit(RLIMIT_FSIZE, &lim) != 0) _exit(125);
        }
        execv(exe.c_str(), argv.data());
        _exit(127);
    }
    int wstatus = 0;
    while (waitpid(pid, &wstatus, 0) < 0) {
        if (errno != EINTR) throw std::runtime_error(std::string("waitpid: ") + std::strerror(errno));
    }
    Result r;
    if (WIFEXITED(wstatus)) r.status = WEXITSTATUS(wstatus);
    else if (WIFSIGNALED(wstatus)) r.status = 128 + WTERMSIG(wstatus);
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    if (r.status >= 125) FAIL("vrdmasim did not run or was killed: status " << r.status << "\nstderr:\n" << r.err);
    return r;
}

// Shows a run's output when an assertion about it fails.
std::string describe(const Result& r) {
    return "exit status " + std::to_string(r.status) + "\n--- stdout:\n" + r.out + "--- stderr:\n" + r.err;
}

// ---------------------------------------------------------------------------
// Reading outputs

// RFC 4180 CSV: quoted fields, doubled quotes, commas and newlines inside quotes.
std::vector<std::vector<std::string>> parse_csv(const std::string& text) {
    std::vector<std::vector<std::string>> rows;
    std::vector<std::string> row;
    std::string field;
    bool quoted = false, any = false;
    for (std::size_t i = 0; i < text.size(); ++i) {
        const char c = text[i];
        if (quoted) {
            if (c == '"' && i + 1 < text.size() && text[i + 1] == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
            continue;
        }
        any = true;
        if (c == '"') {
            quoted = true;
        } else if (c == ',') {
            row.push_back(field);
            field.clear();
        } else if (c == '\n' || c == '\r') {
            if (c == '\r' && i + 1 < text.size() && text[i + 1] == '\n') ++i;
            row.push_back(field);
            field.clear();
            rows.push_back(row);
            row.clear();
            any = false;
        } else {
            field += c;
        }
    }
    if (quoted) throw std::runtime_error("CSV: unterminated quoted field");
    if (any) {
        row.push_back(field);
        rows.push_back(row);
    }
    return rows;
}

// A CSV file with a header: rows as column -> value. Every row must have as
// many fields as the header and no column may appear twice.
struct Table {
    std::vector<std::string> header;
    std::vector<std::map<std::string, std::string>> rows;
    bool has(const std::string& col) const { return std::find(header.begin(), header.end(), col) != header.end(); }
};

Table read_table(const fs::path& p) {
    const auto raw = parse_csv(slurp(p));
    if (raw.empty()) throw std::runtime_error(p.string() + ": no header");
    Table t;
    t.header = raw[0];
    const std::set<std::string> unique(t.header.begin(), t.header.end());
    if (unique.size() != t.header.size()) throw std::runtime_error(p.string() + ": duplicate column");
    for (std::size_t i = 1; i < raw.size(); ++i) {
        if (raw[i].size() != t.header.size())
            throw std::runtime_error(p.string() + ": row " + std::to_string(i + 1) + " has " +
                                     std::to_string(raw[i].size()) + " fields, header " +
                                     std::to_string(t.header.size()));
        std::map<std::string, std::string> row;
        for (std::size_t c = 0; c < t.header.size(); ++c) row[t.header[c]] = raw[i][c];
        t.rows.push_back(std::move(row));
    }
    return t;
}

double number(const std::map<std::string, std::string>& row, const std::string& col) {
    auto it = row.find(col);
    if (it == row.end()) throw std::runtime_error("no column " + col);
    const char* s = it->second.c_str();
    char* end = nullptr;
    errno = 0;
    const double v = std::strtod(s, &end);
    if (it->second.empty() || *end != '\0' || errno != 0)
        throw std::runtime_error("column " + col + ": '" + it->second + "' is not a number");
    return v;
}

// A CSV table with some columns left out, as text: for comparing results
// while ignoring host-dependent columns.
std::string without_columns(const Table& t, const std::set<std::string>& drop) {
    std::string s;
    for (const auto& h : t.header)
        if (!drop.count(h)) s += h + "|";
    s += "\n";
    for (const auto& r : t.rows) {
        for (const auto& h : t.header)
            if (!drop.count(h)) s += r.at(h) + "|";
        s += "\n";
    }
    return s;
}

const std::set<std::string> kHostColumns{"host_seconds",       "peak_rss_mib",         "host_huge_pages_mib",
                                         "host_build_seconds", "host_output_seconds",  "ranks",
                                         "host_windows",       "host_exchanged_bytes", "host_peak_rss_mib_max"};

// Columns summary.csv must have, per the run contract.
const std::vector<std::string> kSummaryColumns{
    "sim_seconds",     "host_seconds",   "sim_events",      "transfers",       "transfer_errors",
    "bytes_delivered", "bytes_verified", "data_mismatches", "throughput_gbps", "latency_us_p50",
    "latency_us_p99",  "peak_rss_mib",   "link_util_max",   "link_util_mean"};

// config.ini: "section.key" -> value, with the origin from the "# from ..."
// comment just above it ("" for a default), and the sections in order.
struct IniEntry {
    std::string value, origin;
};
struct Ini {
    std::map<std::string, IniEntry> entries;
    std::vector<std::string> keys;   // in file order
    std::vector<std::string> sections;   // in file order
    int line_of(const std::string& key) const { return line.at(key); }
    std::map<std::string, int> line;
};

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos) return "";
    return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

Ini read_ini(const fs::path& p) {
    Ini ini;
    std::istringstream in(slurp(p));
    std::string raw, section, origin;
    int lineno = 0;
    while (std::getline(in, raw)) {
        ++lineno;
        const std::string l = trim(raw);
        if (l.empty()) {
            origin.clear();
            continue;
        }
        if (l[0] == '#' || l[0] == ';') {
            if (l.rfind("# from ", 0) == 0) origin = l.substr(7);
            continue;
        }
        if (l[0] == '[') {
            section = l.substr(1, l.size() - 2);
            ini.sections.push_back(section);
            origin.clear();
            continue;
        }
        const auto eq = l.find('=');
        if (eq == std::string::npos || section.empty())
            throw std::runtime_error(p.string() + ":" + std::to_string(lineno) + ": not key = value: " + l);
        const std::string key = section + "." + trim(l.substr(0, eq));
        if (ini.entries.count(key)) throw std::runtime_error(p.string() + ": " + key + " twice");
        ini.entries[key] = {trim(l.substr(eq + 1)), origin};
        ini.keys.push_back(key);
        ini.line[key] = lineno;
        origin.clear();
    }
    return ini;
}

std::map<std::string, std::string> values_of(const Ini& ini) {
    std::map<std::string, std::string> v;
    for (const auto& kv : ini.entries) v[kv.first] = kv.second.value;
    return v;
}

// One parameter of `vrdmasim params`: its line, then its help, wrapped and
// indented; a range or list of choices too long for its line goes on below
// its start:
//   "  dma.block-size  size  4KiB  [16B, 1MiB]"
//   "      bytes read from the source per memory request ..."
// A section's description goes on below its "[section]  " line, indented
// by four. Texts are read back with their words joined by single spaces.
struct ParamLine {
    std::string section, name, type, dflt, range, help;
};
struct ParamsOutput {
    std::vector<std::pair<std::string, std::string>> sections;   // name, description
    std::vector<ParamLine> params;
};

// `text`'s words joined by single spaces (what wrapping keeps of a text).
std::string squeeze(const std::string& text) {
    std::istringstream in(text);
    std::string out;
    for (std::string w; in >> w;) out += (out.empty() ? "" : " ") + w;
    return out;
}

ParamsOutput parse_params(const std::string& text) {
    ParamsOutput po;
    std::istringstream in(text);
    std::string l;
    const std::regex header(R"(^\[([a-z0-9_-]+)\](?:  (.+))?$)");
    const std::regex param(R"(^  (\S+)\s+(\S+)\s+(\S+)(?:\s+(.*))?$)");
    auto indent = [](const std::string& x) { return x.find_first_not_of(' '); };
    auto open_range = [](const std::string& r) {
        return (!r.empty() && r[0] == '{' && r.back() != '}') || (!r.empty() && r[0] == '[' && r.back() != ']');
    };
    auto append = [](std::string& to, const std::string& more) { to += (to.empty() ? "" : " ") + squeeze(more); };
    bool in_section_head = false;
    while (std::getline(in, l)) {
        std::smatch m;
        if (l.empty()) continue;
        if (std::regex_match(l, m, header)) {
            po.sections.emplace_back(m[1], squeeze(m[2]));
            in_section_head = true;
        } else if (indent(l) == 4 && in_section_head) {
            append(po.sections.back().second, l);
        } else if (indent(l) == 2 && std::regex_match(l, m, param)) {
            if (po.sections.empty()) throw std::runtime_error("params: parameter before any section: " + l);
            po.params.push_back({po.sections.back().first, m[1], m[2], m[3], squeeze(m[4]), ""});
            in_section_head = false;
        } else if (indent(l) >= 6 && !po.params.empty() && !in_section_head) {
            ParamLine& p = po.params.back();
            if (p.help.empty() && open_range(p.range)) append(p.range, l);
            else append(p.help, l);
        } else {
            throw std::runtime_error("params: unexpected line: '" + l + "'");
        }
    }
    return po;
}

// Whether two texts of a parameter of type `type` (as `params` names it) mean
// the same value: "1us" and "1000ns" do.
bool same_value(const std::string& type, const std::string& x, const std::string& y) {
    try {
        if (type == "time") return vrdmasim::parse_time_ps(x) == vrdmasim::parse_time_ps(y);
        if (type == "rate") return vrdmasim::parse_rate_bps(x) == vrdmasim::parse_rate_bps(y);
        if (type == "size") return vrdmasim::parse_size_bytes(x) == vrdmasim::parse_size_bytes(y);
        if (type == "frequency") return vrdmasim::parse_frequency_hz(x) == vrdmasim::parse_frequency_hz(y);
        if (type == "bool") return vrdmasim::parse_bool(x) == vrdmasim::parse_bool(y);
        if (type == "int") return vrdmasim::parse_int(x) == vrdmasim::parse_int(y);
        if (type == "real") return vrdmasim::parse_real(x) == vrdmasim::parse_real(y);
    } catch (const std::exception&) {
        return false;
    }
    return x == y;
}

// The JSON document of a file; fails the test if it does not parse.
JVal json_file(const fs::path& p) {
    const std::string text = slurp(p);
    try {
        return parse_json(text);
    } catch (const std::exception& e) {
        FAIL(p.string() << " is not valid JSON: " << e.what());
    }
    return {};
}

// Sum of the stats.json counters whose name ends in ".<suffix>".
double sum_counters(const JVal& stats, const std::string& suffix) {
    double sum = 0;
    for (const auto& kv : stats.obj) {
        const std::string& k = kv.first;
        const std::string tail = "." + suffix;
        if (k.size() > tail.size() && k.compare(k.size() - tail.size(), tail.size(), tail) == 0) {
            REQUIRE(kv.second.type == JVal::Num);
            sum += kv.second.num;
        }
    }
    return sum;
}

std::string project_version() {
    const std::string cm = slurp(fs::path(VRDMASIM_SOURCE_DIR) / "CMakeLists.txt");
    std::smatch m;
    if (!std::regex_search(cm, m, std::regex(R"(project\s*\(\s*vrdmasim\s+VERSION\s+([0-9.]+))")))
        throw std::runtime_error("no project version in CMakeLists.txt");
    return m[1];
}

// A small stream run's command line (256 KiB in 64 KiB writes: 4 transfers).
const std::vector<std::string> kSmall{"--workload.total-bytes=256KiB"};
// A run that simulates for a few host seconds (the file-safety tests act while it runs).
const char* const kLongRunBytes = "4GiB";
// A run that a test stops (SIGSTOP) as soon as it simulates, acts, and lets
// go: long enough to be seen simulating (over a second of host time on
// 2026-11-29's build), short enough to run to its end.
const char* const kStoppedRunBytes = "256MiB";

std::vector<std::string> cat(std::vector<std::string> a, const std::vector<std::string>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

}   // namespace

// ===========================================================================
// Help, version, bad commands

TEST_CASE("help prints the usage and exits 0", "[cli]") {
    TempDir tmp;
    for (const std::string flag : {"--help", "-h", "help"}) {
        INFO("vrdmasim " << flag);
        const Result r = run_exe({flag}, tmp.path());
        INFO(describe(r));
        CHECK(r.status == 0);
        for (const char* text : {"usage:", "vrdmasim run", "vrdmasim params", "vrdmasim metrics", "vrdmasim sweep",
                                 "vrdmasim merge", "vrdmasim bench", "--version", "Exit status"})
            CHECK(contains(r.out, text));
        // Only options the commands take: bench has --volume, --scale, --max-nodes, --iterations.
        CHECK(!contains(r.out, "--packets"));
        CHECK(r.err.empty());
    }
    // `run --help` too, and it simulates nothing and writes nothing.
    const Result r = run_exe({"run", "--help"}, tmp.path());
    INFO(describe(r));
    CHECK(r.status == 0);
    for (const char* text :
         {"usage: vrdmasim run", "--out", "--trace", "--log", "--quiet", "--no-progress", "vrdmasim params"})
        CHECK(contains(r.out, text));
    CHECK(listing(tmp.path()).empty());
    // Every "See FILE, 'SECTION'" a command's help gives names a section
    // that exists (sweep --help once named a README section long gone).
    int pointers = 0;
    for (const char* cmd : {"run", "sweep", "merge", "bench", "params"}) {
        const Result h = run_exe({cmd, "--help"}, tmp.path());
        const std::regex see("See ([^ ,]+), '([^']+)'");
        for (std::sregex_iterator it(h.out.begin(), h.out.end(), see), end; it != end; ++it, ++pointers) {
            INFO("vrdmasim " << cmd << " --help: " << it->str());
            const std::string doc = slurp(fs::path(VRDMASIM_SOURCE_DIR) / (*it)[1].str());
            CHECK(contains(doc, "## " + (*it)[2].str() + "\n"));
        }
    }
    CHECK(pointers >= 1);   // sweep --help's, at least
}

TEST_CASE("version prints the project version and exits 0", "[cli]") {
    TempDir tmp;
    for (const std::string flag : {"--version", "-V", "version"}) {
        const Result r = run_exe({flag}, tmp.path());
        INFO(describe(r));
        CHECK(r.status == 0);
        std::smatch m;
        REQUIRE(std::regex_match(r.out, m, std::regex(R"(vrdmasim (\S+) \(SystemC [^)\n]+\)\n)")));
        CHECK(m[1] == project_version());
        CHECK(r.err.empty());
    }
}

TEST_CASE("no arguments or an unknown command exits 2 with the usage on stderr", "[cli]") {
    TempDir tmp;
    Result r = run_exe({}, tmp.path());
    INFO(describe(r));
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(contains(r.err, "usage:"));

    r = run_exe({"frobnicate", "--out", "x"}, tmp.path());
    INFO(describe(r));
    CHECK(r.status == 2);
    CHECK(r.out.empty());
    CHECK(contains(r.err, "unknown command 'frobnicate'"));
    CHECK(contains(r.err, "usage:"));

    // A misspelled command is not taken for something else either.
    r = run_exe({"runn"}, tmp.path());
    CHECK(r.status == 2);
    CHECK(contains(r.err, "unknown command 'runn'"));
    CHECK(listing(tmp.path()).empty());
}

// ===========================================================================
// params

TEST_CASE("params lists every section and parameter with type default range and help", "[cli][params]") {
    TempDir tmp;
    const Result r = run_exe({"params"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    const ParamsOutput po = parse_params(r.out);

    // Against the registry the binary is built from.
    vrdmasim::ParamRegistry reg;
    vrdmasim::declare_all_params(reg);
    REQUIRE(po.sections.size() == reg.sections().size());
    for (std::size_t i = 0; i < po.sections.size(); ++i) {
        CHECK(po.sections[i].first == reg.sections()[i].first);
        CHECK(po.sections[i].second == squeeze(reg.sections()[i].second));
    }
    for (const char* s : {"sim", "topology", "link", "mezz-link", "board-link", "ni", "workload", "lock", "rdma", "dma",
                          "router", "bus", "dram"}) {
        INFO("section " << s);
        CHECK(std::any_of(po.sections.begin(), po.sections.end(), [&](const auto& x) { return x.first == s; }));
    }
    REQUIRE(po.params.size() == reg.all().size());
    const std::set<std::string> types{"time", "rate", "size", "frequency", "bool", "enum", "int", "real", "string"};
    for (std::size_t i = 0; i < po.params.size(); ++i) {
        const ParamLine& p = po.params[i];
        const vrdmasim::ParamDecl& d = reg.all()[i];
        INFO("parameter " << p.name);
        CHECK(p.name == d.name());
        CHECK(p.section == d.section);
        CHECK(p.type == d.unit());
        CHECK(types.count(p.type) == 1);
        CHECK(!p.dflt.empty());
        CHECK(p.help == squeeze(d.help));
        CHECK(!p.help.empty());
        if (p.type == "enum") {
            CHECK(p.range.front() == '{');
            for (const auto& c : d.choices) CHECK(contains(p.range, c));
        }
        if (d.has_min || d.has_max) CHECK(!p.range.empty());
    }

    const auto bs =
        std::find_if(po.params.begin(), po.params.end(), [](const ParamLine& p) { return p.name == "dma.block-size"; });
    REQUIRE(bs != po.params.end());
    CHECK(bs->section == "dma");
    CHECK(bs->type == "size");
    CHECK(bs->dflt == "4KiB");
    CHECK(bs->range == "[16B, 1MiB]");
    CHECK(contains(bs->help, "bytes read from the source per memory request"));

    const auto kind =
        std::find_if(po.params.begin(), po.params.end(), [](const ParamLine& p) { return p.name == "workload.kind"; });
    REQUIRE(kind != po.params.end());
    CHECK(kind->type == "enum");
    CHECK(kind->dflt == "stream");
    // Its choices are every declared kind (workloads/registry.hpp), in
    // their order: a kind declared in its own folder is a choice with no
    // edit here, and one the command line lost fails.
    std::string declared;
    for (const vrdmasim::WorkloadKind& k : vrdmasim::workload_kinds::all())
        declared += (declared.empty() ? "{" : ", ") + k.name;
    CHECK(vrdmasim::workload_kinds::all().size() >= 14);
    CHECK(kind->range == declared + "}");
}

// Columns a line of UTF-8 takes on a terminal (its characters).
std::size_t columns(const std::string& line) {
    return static_cast<std::size_t>(std::count_if(
        line.begin(), line.end(), [](char ch) { return (static_cast<unsigned char>(ch) & 0xC0) != 0x80; }));
}

TEST_CASE("params wraps to 80 columns, or to $COLUMNS, each help below its parameter", "[cli][params]") {
    TempDir tmp;
    unsetenv("COLUMNS");
    const Result narrow = run_exe({"params"}, tmp.path());
    REQUIRE(setenv("COLUMNS", "120", 1) == 0);
    const Result wide = run_exe({"params"}, tmp.path());
    REQUIRE(setenv("COLUMNS", "wide", 1) == 0);
    const Result junk = run_exe({"params"}, tmp.path());
    unsetenv("COLUMNS");
    INFO(describe(narrow));
    REQUIRE(narrow.status == 0);
    REQUIRE(wide.status == 0);
    auto widest = [](const std::string& text) {
        std::size_t w = 0;
        std::istringstream in(text);
        for (std::string l; std::getline(in, l);) w = std::max(w, columns(l));
        return w;
    };
    CHECK(widest(narrow.out) <= 80);
    CHECK(widest(wide.out) <= 120);
    CHECK(widest(wide.out) > 80);   // the width is used, not only a bound
    CHECK(junk.out == narrow.out);   // a $COLUMNS that is not a number: 80
    // The same parameters, sections and texts at either width.
    const ParamsOutput a = parse_params(narrow.out), b = parse_params(wide.out);
    REQUIRE(a.params.size() == b.params.size());
    CHECK(a.sections == b.sections);
    for (std::size_t i = 0; i < a.params.size(); ++i) {
        INFO(a.params[i].name);
        CHECK(a.params[i].range == b.params[i].range);
        CHECK(a.params[i].help == b.params[i].help);
    }
    // A parameter's line, then its help indented below it.
    std::istringstream in(narrow.out);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(l);
    const auto at = std::find_if(lines.begin(), lines.end(),
                                 [](const std::string& l) { return l.rfind("  dma.block-size ", 0) == 0; });
    REQUIRE(at != lines.end());
    REQUIRE(at + 1 != lines.end());
    CHECK(contains(*at, "[16B, 1MiB]"));
    CHECK((at + 1)->rfind("      ", 0) == 0);
    CHECK(contains(*(at + 1), "bytes read"));
}

TEST_CASE("params SECTION lists that section's parameters, and an unknown one is refused naming the sections",
          "[cli][params]") {
    TempDir tmp;
    const Result one = run_exe({"params", "smmu"}, tmp.path());
    INFO(describe(one));
    REQUIRE(one.status == 0);
    const ParamsOutput po = parse_params(one.out);
    REQUIRE(po.sections.size() == 1);
    CHECK(po.sections[0].first == "smmu");
    vrdmasim::ParamRegistry reg;
    vrdmasim::declare_all_params(reg);
    const auto smmu = std::count_if(reg.all().begin(), reg.all().end(),
                                    [](const vrdmasim::ParamDecl& d) { return d.section == "smmu"; });
    CHECK(static_cast<long>(po.params.size()) == smmu);
    for (const auto& p : po.params) CHECK(p.section == "smmu");
    // Several, in the registry's order.
    const Result two = run_exe({"params", "smmu", "dma"}, tmp.path());
    REQUIRE(two.status == 0);
    const ParamsOutput both = parse_params(two.out);
    REQUIRE(both.sections.size() == 2);
    std::vector<std::string> order;
    for (const auto& s : reg.sections())
        if (s.first == "smmu" || s.first == "dma") order.push_back(s.first);
    CHECK(std::vector<std::string>{both.sections[0].first, both.sections[1].first} == order);
    // Unknown: exit 2, the section named, the known ones listed, nothing on stdout.
    const Result bad = run_exe({"params", "smu"}, tmp.path());
    CHECK(bad.status == 2);
    CHECK(bad.out.empty());
    CHECK(contains(bad.err, "'smu'"));
    CHECK(contains(bad.err, "did you mean 'smmu'"));
    for (const char* s : {"sim", "smmu", "dma", "dram", "workload"}) CHECK(contains(bad.err, s));
    CHECK(run_exe({"params", "--json", "smmu"}, tmp.path()).status == 2);
    // Said in the help.
    const Result help = run_exe({"params", "--help"}, tmp.path());
    CHECK(contains(help.out, "SECTION"));
    CHECK(contains(run_exe({"--help"}, tmp.path()).out, "params [--markdown] [SECTION ...]"));
}

TEST_CASE("every parameter listed by params appears in a run's config.ini", "[cli][params]") {
    TempDir tmp;
    const Result p = run_exe({"params"}, tmp.path());
    REQUIRE(p.status == 0);
    const ParamsOutput po = parse_params(p.out);
    REQUIRE(!po.params.empty());

    const Result r = run_exe(cat({"run"}, cat(kSmall, {"--out", "out", "--quiet"})), tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    const Ini ini = read_ini(tmp.path() / "out" / "config.ini");

    // Same parameters, same order, same sections.
    std::vector<std::string> names;
    for (const auto& x : po.params) names.push_back(x.name);
    CHECK(ini.keys == names);
    std::vector<std::string> sections;
    for (const auto& s : po.sections) sections.push_back(s.first);
    CHECK(ini.sections == sections);

    for (const auto& x : po.params) {
        INFO("parameter " << x.name);
        REQUIRE(ini.entries.count(x.name) == 1);
        const IniEntry& e = ini.entries.at(x.name);
        if (x.name == "workload.total-bytes") {
            CHECK(e.value == "256KiB");
            CHECK(e.origin == "command line");
        } else {
            CHECK(same_value(x.type, e.value, x.dflt));
            CHECK(e.origin.empty());
        }
    }
}

// ===========================================================================
// run

TEST_CASE("run without a config writes exactly config.ini stats.json stats.txt and summary.csv", "[cli][run]") {
    TempDir tmp;
    // The built-in default (16 MiB streamed from node 0 to node 1); a relative --out.
    const Result r = run_exe({"run", "--out", "out"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(r.err.empty());
    CHECK(contains(r.out, "outputs in out"));
    // Nothing but the output directory: no partial directories left beside it,
    // no default vrdmasim-out/.
    CHECK(listing(tmp.path()) == std::set<std::string>{"out"});
    const fs::path out = tmp.path() / "out";
    CHECK(listing(out) ==
          std::set<std::string>{".vrdmasim-run", "config.ini", "stats.json", "stats.txt", "summary.csv"});

    // Every parameter at its default.
    const Ini ini = read_ini(out / "config.ini");
    for (const auto& kv : ini.entries) {
        INFO(kv.first);
        CHECK(kv.second.origin.empty());
    }
    const std::uint64_t total = vrdmasim::parse_size_bytes(ini.entries.at("workload.total-bytes").value);
    const std::uint64_t msg = vrdmasim::parse_size_bytes(ini.entries.at("workload.message-size").value);
    CHECK(total == 16u << 20);
    CHECK(ini.entries.at("workload.kind").value == "stream");

    // summary.csv: one header, one data row.
    const std::string summary_text = slurp(out / "summary.csv");
    CHECK(count_lines(summary_text) == 2);
    const Table s = read_table(out / "summary.csv");
    REQUIRE(s.rows.size() == 1);
    for (const auto& c : kSummaryColumns) {
        INFO("column " << c);
        REQUIRE(s.has(c));
        CHECK_NOTHROW(number(s.rows[0], c));
    }
    const auto& row = s.rows[0];
    CHECK(row.at("workload") == "stream");
    CHECK(row.at("nodes") == "2");
    CHECK(number(row, "bytes_delivered") == static_cast<double>(total));
    CHECK(number(row, "bytes_verified") == static_cast<double>(total));
    CHECK(number(row, "data_mismatches") == 0);
    CHECK(number(row, "transfer_errors") == 0);
    CHECK(number(row, "transfers") == static_cast<double>(total / msg));
    CHECK(number(row, "sim_seconds") > 0);
    CHECK(number(row, "host_seconds") >= 0);
    // Building the system and writing the outputs, apart from the simulation.
    CHECK(number(row, "host_build_seconds") > 0);
    CHECK(number(row, "host_output_seconds") > 0);
    CHECK(number(row, "sim_events") > 0);
    CHECK(number(row, "peak_rss_mib") > 0);
    // Cannot beat the 16 Gb/s link.
    CHECK(number(row, "throughput_gbps") > 0);
    CHECK(number(row, "throughput_gbps") <= 16.0);
    CHECK(number(row, "latency_us_p50") > 0);
    CHECK(number(row, "latency_us_p50") <= number(row, "latency_us_p99"));
    // Moving the bytes takes at least their time on the wire.
    CHECK(number(row, "sim_seconds") >= static_cast<double>(total) * 8 / 16e9);

    // stats.json: valid JSON, an object of statistics, consistent with the summary.
    const JVal stats = json_file(out / "stats.json");
    REQUIRE(stats.type == JVal::Obj);
    REQUIRE(stats.get("workload.bytes_delivered"));
    CHECK(stats.get("workload.bytes_delivered")->num == number(row, "bytes_delivered"));
    REQUIRE(stats.get("workload.bytes_verified"));
    CHECK(stats.get("workload.bytes_verified")->num == number(row, "bytes_verified"));
    REQUIRE(stats.get("workload.transfers"));
    CHECK(stats.get("workload.transfers")->num == number(row, "transfers"));
    CHECK(sum_counters(stats, "transactions") == number(row, "sim_events"));
    if (s.has("packets")) CHECK(sum_counters(stats, "packets_sent") == number(row, "packets"));

    // Only simulated quantities in stats.json: nothing named after the host.
    // (The simulated node's CPU, "nodeN.cpu.*", is simulated, not host time.)
    const std::regex hostish(R"((^|[._])(host|wall|rss|elapsed|peak_rss|hostname|pid)([._]|$))", std::regex::icase);
    std::vector<std::string> keys;
    for (const auto& kv : stats.obj) {
        keys.push_back(kv.first);
        if (kv.second.type == JVal::Obj)
            for (const auto& sub : kv.second.obj) keys.push_back(kv.first + "." + sub.first);
    }
    for (const auto& k : keys) {
        INFO("stats.json key " << k);
        CHECK(!std::regex_search(k, hostish));
    }

    // stats.txt: the same statistics as stats.json, one per line.
    std::set<std::string> json_stats, txt_stats;
    for (const auto& kv : stats.obj)
        if (kv.first != "units") json_stats.insert(kv.first);
    std::istringstream txt(slurp(out / "stats.txt"));
    std::string line;
    while (std::getline(txt, line)) {
        std::istringstream ls(line);
        std::string name;
        if (ls >> name) txt_stats.insert(name);
    }
    CHECK(!txt_stats.empty());
    CHECK(txt_stats == json_stats);
}

TEST_CASE("stats.txt: every statistic with its description, gem5's trailing # column, aligned", "[cli][run][stats]") {
    TempDir tmp;
    // A stream and a file server: between them the models' statistics,
    // the CPU's activities, the page cache and the workloads' own.
    const std::vector<std::vector<std::string>> runs{
        cat({"run", "--out", "stream", "-q"}, kSmall),
        {"run", "--out", "fileserve", "-q", "--workload.kind=fileserve", "--fs.files=4", "--fs.file-size=16KiB"}};
    for (const auto& args : runs) {
        const Result r = run_exe(args, tmp.path());
        INFO(describe(r));
        REQUIRE(r.status == 0);
        const std::string dir = args[2];
        const JVal stats = json_file(tmp.path() / dir / "stats.json");
        std::istringstream txt(slurp(tmp.path() / dir / "stats.txt"));
        std::size_t lines = 0, column = std::string::npos;
        for (std::string line; std::getline(txt, line);) {
            std::istringstream ls(line);
            std::string name;
            if (!(ls >> name) || !stats.get(name)) continue;   // not a statistic's line
            ++lines;
            INFO(dir << "/stats.txt: " << line);
            const std::size_t hash = line.find("  # ");
            REQUIRE(hash != std::string::npos);
            CHECK(line.find_first_not_of(' ', hash + 4) != std::string::npos);   // a description, not blank
            if (column == std::string::npos) column = hash;
            CHECK(hash == column);   // one column
        }
        CHECK(lines > 50);
    }
}

TEST_CASE("no busy time below zero, in a run that ends with CPU work booked beyond its end", "[cli][run][stats]") {
    // configs/memory-pressure.ini ends with kernel work (a hog's, the
    // swap daemon's) booked past the run's last event, taken back at the
    // end: once a busy time of -4.7e-12 us in stats.json, rounding of
    // microseconds added and taken back. Also a run stopped early by its
    // time limit (a failed run keeps its statistics).
    TempDir tmp;
    const std::string config = std::string(VRDMASIM_SOURCE_DIR) + "/configs/memory-pressure.ini";
    const Result whole = run_exe({"run", config, "--out", "whole", "-q"}, tmp.path());
    INFO(describe(whole));
    CHECK(whole.status == 0);
    const Result cut = run_exe({"run", config, "--out", "cut", "-q", "--sim.time-limit=200us"}, tmp.path());
    INFO(describe(cut));
    CHECK(cut.status == 1);
    for (const char* dir : {"whole", "cut"}) {
        const JVal stats = json_file(tmp.path() / dir / "stats.json");
        std::size_t busy = 0;
        for (const auto& kv : stats.obj) {
            if (kv.second.type != JVal::Num || kv.first.find("busy_time") == std::string::npos) continue;
            ++busy;
            INFO(dir << "/stats.json: " << kv.first << " = " << kv.second.num);
            CHECK(kv.second.num >= 0);
        }
        CHECK(busy > 10);
    }
}

TEST_CASE("the terminal summary: the headline and the figures the run has, --all every figure", "[cli][run][summary]") {
    TempDir tmp;
    const Result r = run_exe({"run", "--out", "a", "--workload.total-bytes=1MiB"}, tmp.path());
    const Result all = run_exe({"run", "--out", "b", "--workload.total-bytes=1MiB", "--all"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    REQUIRE(all.status == 0);
    const Table s = read_table(tmp.path() / "a" / "summary.csv");
    REQUIRE(s.rows.size() == 1);
    // The figure lines ("  name value"), by name.
    auto figures = [](const std::string& out) {
        std::map<std::string, std::string> f;
        std::istringstream in(out);
        for (std::string line; std::getline(in, line);) {
            if (line.rfind("  ", 0) != 0 || line.rfind("  (", 0) == 0) continue;
            std::istringstream ls(line);
            std::string name, value;
            ls >> name;
            std::getline(ls >> std::ws, value);
            f[name] = value;
        }
        return f;
    };
    const auto shown = figures(r.out), every = figures(all.out);
    std::size_t hidden = 0;
    for (const auto& [name, value] : s.rows[0]) {
        INFO(name << " = '" << value << "'");
        // --all: every column, as summary.csv has it (host figures aside).
        CHECK(every.count(name) == 1);
        const bool head =
            name == "transfers" || name == "transfer_errors" || name == "throughput_gbps" || name == "smmu_faults";
        if (head || (value != "0" && !value.empty())) {
            CHECK(shown.count(name) == 1);
        } else {
            CHECK(shown.count(name) == 0);
            ++hidden;
        }
    }
    // The default run of this stream takes no SMMU fault: the headline
    // shows it anyway, the rest of the zeros are counted.
    CHECK(shown.at("smmu_faults") == "0");
    CHECK(hidden > 50);
    CHECK(contains(r.out, "(" + std::to_string(hidden) + " more figures are 0 or have no value in this run: --all"));
    CHECK_FALSE(contains(all.out, "more figures are 0"));
}

TEST_CASE("cpu_busy_us counts the application cores only, not DRAM, link or NI busy time", "[cli][run][summary]") {
    TempDir tmp;
    const Result r = run_exe(cat({"run", "--out", "out", "-q"}, kSmall), tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    const Table s = read_table(tmp.path() / "out" / "summary.csv");
    REQUIRE(s.rows.size() == 1);
    const double cpu_busy = number(s.rows[0], "cpu_busy_us");
    const JVal stats = json_file(tmp.path() / "out" / "stats.json");
    auto ends_with = [](const std::string& k, const std::string& tail) {
        return k.size() > tail.size() && k.compare(k.size() - tail.size(), tail.size(), tail) == 0;
    };
    double cores = 0, activities = 0, every_busy_time = 0;
    for (const auto& kv : stats.obj) {
        const std::string& k = kv.first;
        if (kv.second.type != JVal::Num) continue;
        if (ends_with(k, ".cpu.cores_busy_time")) cores += kv.second.num;
        if (ends_with(k, ".busy_time")) {
            every_busy_time += kv.second.num;
            if (k.find(".cpu.") != std::string::npos) activities += kv.second.num;
        }
    }
    // The software paths of the run (mmap, populate, registration) ran on the cores.
    CHECK(cores > 0);
    CHECK(std::fabs(cores - activities) <= 1e-9 * std::max(1.0, cores));
    CHECK(std::fabs(cpu_busy - cores) <= 1e-5 * cores);
    // DRAM, links and the NI have busy times too; they are not CPU time.
    CHECK(every_busy_time > cores);
    CHECK(cpu_busy < 0.999 * every_busy_time);
}

TEST_CASE("energy per byte is energy_j over the row's jobs_bytes_delivered, with two processes a node",
          "[cli][run][summary]") {
    TempDir tmp;
    const Result r = run_exe(cat({"run", "--out", "out", "-q", "--node.processes=2"}, kSmall), tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    const Table s = read_table(tmp.path() / "out" / "summary.csv");
    REQUIRE(s.rows.size() == 1);
    const auto& row = s.rows[0];
    // bytes_delivered is job 0's; the energy is every job's, and so is the
    // byte count it is divided by, printed beside it.
    CHECK(number(row, "jobs_bytes_delivered") == 2 * number(row, "bytes_delivered"));
    CHECK(number(row, "energy_nj_per_byte") ==
          Approx(number(row, "energy_j") / number(row, "jobs_bytes_delivered") * 1e9).epsilon(1e-5));
}

TEST_CASE("params --json: the whole schema, as params lists it, valid JSON", "[cli][params]") {
    TempDir tmp;
    const Result j = run_exe({"params", "--json"}, tmp.path());
    const Result text = run_exe({"params"}, tmp.path());
    INFO(describe(j));
    REQUIRE(j.status == 0);
    REQUIRE(text.status == 0);
    const JVal doc = vrdmasim_test::parse_json(j.out);
    const JVal* sections = doc.get("sections");
    REQUIRE(sections);
    std::size_t params = 0, estimates = 0;
    for (const JVal& sec : sections->arr) {
        const std::string section = sec.get("name")->text;
        // The same sections, in order, as the text listing's [section] lines.
        CHECK(contains(text.out, "[" + section + "]"));
        for (const JVal& p : sec.get("parameters")->arr) {
            ++params;
            const std::string name = p.get("name")->text, type = p.get("type")->text, dflt = p.get("default")->text;
            INFO(name);
            CHECK(p.get("section")->text == section);
            CHECK(name == section + "." + p.get("key")->text);
            // Its line in `params` (indented by two; its help below by more):
            // name, type, default as written.
            std::istringstream in(text.out);
            bool found = false;
            for (std::string line; std::getline(in, line);) {
                if (line.rfind("  ", 0) != 0 || line.size() < 3 || line[2] == ' ') continue;
                std::istringstream ls(line);
                std::string n, t, d;
                ls >> n >> t >> d;
                if (n != name) continue;
                found = true;
                CHECK(t == type);
                if (!dflt.empty()) CHECK(d == dflt);
            }
            CHECK(found);
            if (type == "enum") {
                REQUIRE(p.get("choices"));
                bool listed = false;
                for (const JVal& c : p.get("choices")->arr) listed = listed || c.text == dflt;
                CHECK(listed);
            }
            if (type == "time") {
                CHECK(p.get("canonical_unit")->text == "ps");
                CHECK(p.get("default_value")->num == static_cast<double>(vrdmasim::parse_time_ps(dflt)));
            }
            if (type == "size")
                CHECK(p.get("default_value")->num == static_cast<double>(vrdmasim::parse_size_bytes(dflt)));
            if (p.get("min") && p.get("default_value")) CHECK(p.get("min")->num <= p.get("default_value")->num);
            if (p.get("max") && p.get("default_value")) CHECK(p.get("default_value")->num <= p.get("max")->num);
            const bool estimate = p.get("help")->text.find("*estimate*") != std::string::npos;
            CHECK(p.get("estimate")->b == estimate);
            estimates += estimate;
        }
    }
    CHECK(params > 200);
    CHECK(estimates > 0);
    // An integer's bounds exactly (a double would round 2^63 - 1).
    CHECK_THAT(j.out, Catch::Contains("\"max\": 9223372036854775807"));
    CHECK(run_exe({"params", "--json", "--markdown"}, tmp.path()).status == 2);
}

TEST_CASE("metrics lists exactly the columns of summary.csv, in order, each with a unit column and a meaning",
          "[cli][metrics]") {
    TempDir tmp;
    const Result m = run_exe({"metrics", "--markdown"}, tmp.path());
    INFO(describe(m));
    REQUIRE(m.status == 0);
    // The summary's table, then the time series' (timeseries.csv).
    std::vector<std::string> documented, series;
    std::istringstream in(m.out);
    std::string l;
    const std::regex row(R"(^\| `([a-z0-9_]+)` \| [^|]* \| (.+) \|$)");
    bool in_series = false;
    while (std::getline(in, l)) {
        if (l.rfind("## Time series", 0) == 0) in_series = true;
        std::smatch g;
        if (std::regex_match(l, g, row)) {
            (in_series ? series : documented).push_back(g[1]);
            CHECK(g[2].length() > 10);
        }
    }
    const Result r = run_exe(cat({"run", "--out", "out", "--sample-interval=100us", "-q"}, kSmall), tmp.path());
    REQUIRE(r.status == 0);
    const Table s = read_table(tmp.path() / "out" / "summary.csv");
    CHECK(documented == s.header);
    CHECK(series == read_table(tmp.path() / "out" / "timeseries.csv").header);
    CHECK(run_exe({"metrics", "--bogus"}, tmp.path()).status == 2);
}

TEST_CASE("params --markdown has a row for every parameter and refuses an unknown section", "[cli][params]") {
    TempDir tmp;
    const Result plain = run_exe({"params"}, tmp.path());
    REQUIRE(plain.status == 0);
    const Result md = run_exe({"params", "--markdown"}, tmp.path());
    INFO(describe(md));
    REQUIRE(md.status == 0);
    const ParamsOutput po = parse_params(plain.out);
    REQUIRE(!po.params.empty());
    for (const auto& p : po.params) {
        INFO(p.name);
        CHECK(contains(md.out, "| `" + p.name + "` | " + p.type + " | "));
    }
    for (const auto& sec : po.sections) CHECK(contains(md.out, "## [" + sec.first + "]"));
    const Result one = run_exe({"params", "--markdown", "dma"}, tmp.path());
    REQUIRE(one.status == 0);
    CHECK(contains(one.out, "| `dma.packet-size` |"));
    CHECK(!contains(one.out, "| `dram.latency` |"));
    const Result bad = run_exe({"params", "--markdown", "nosuch"}, tmp.path());
    CHECK(bad.status == 2);
    CHECK(contains(bad.err, "nosuch"));
}

TEST_CASE("run with trace and log writes a Chrome trace and a time-sorted event log", "[cli][run]") {
    TempDir tmp;
    const Result r = run_exe({"run", "--workload.kind=pingpong", "--workload.message-size=64B",
                              "--workload.iterations=20", "--trace", "--log", "--out", "out", "--quiet"},
                             tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(r.out.empty());   // --quiet
    const fs::path out = tmp.path() / "out";
    CHECK(listing(out) == std::set<std::string>{".vrdmasim-run", "config.ini", "stats.json", "stats.txt", "summary.csv",
                                                "trace.json", "events.log"});
    const Table s = read_table(out / "summary.csv");
    REQUIRE(s.rows.size() == 1);
    const double transfers = number(s.rows[0], "transfers");
    CHECK(transfers == 40);

    const JVal trace = json_file(out / "trace.json");
    REQUIRE(trace.type == JVal::Obj);
    const JVal* events = trace.get("traceEvents");
    REQUIRE(events);
    REQUIRE(events->type == JVal::Arr);

    std::map<double, std::string> process_names;   // pid -> name
    std::set<std::pair<double, double>> named_threads;   // (pid, tid)
    std::set<std::pair<double, double>> span_threads;
    // Spans that may overlap (cat "async": transfers, walks) are slices on
    // lanes, "<track> lane <N>": per thread, their slices must not overlap.
    std::map<std::pair<double, double>, std::vector<std::pair<double, double>>> lanes;
    std::size_t spans = 0, async_events = 0, transfer_slices = 0;
    for (const JVal& e : events->arr) {
        REQUIRE(e.type == JVal::Obj);
        const JVal* ph = e.get("ph");
        REQUIRE(ph);
        REQUIRE(ph->type == JVal::Str);
        const JVal* pid = e.get("pid");
        REQUIRE(pid);
        REQUIRE(pid->type == JVal::Num);
        if (ph->text == "M") {
            const JVal* name = e.get("name");
            const JVal* args = e.get("args");
            REQUIRE(name);
            REQUIRE(args);
            if (name->text == "process_name") {
                REQUIRE(args->get("name"));
                process_names[pid->num] = args->get("name")->text;
            } else if (name->text == "thread_name") {
                REQUIRE(e.get("tid"));
                named_threads.insert({pid->num, e.get("tid")->num});
            }
            continue;
        }
        const JVal* ts = e.get("ts");
        REQUIRE(ts);
        REQUIRE(ts->type == JVal::Num);
        CHECK(ts->num >= 0);
        REQUIRE(e.get("name"));
        if (ph->text == "X") {
            ++spans;
            const JVal* dur = e.get("dur");
            REQUIRE(dur);
            REQUIRE(dur->type == JVal::Num);
            CHECK(dur->num >= 0);
            REQUIRE(e.get("tid"));
            span_threads.insert({pid->num, e.get("tid")->num});
            // One named track per thread, its name given before its slices.
            CHECK(named_threads.count({pid->num, e.get("tid")->num}) == 1);
            if (e.get("cat") && e.get("cat")->text == "async") {
                lanes[{pid->num, e.get("tid")->num}].emplace_back(ts->num, ts->num + dur->num);
                if (e.get("name")->text.rfind("transfer", 0) == 0) ++transfer_slices;
            }
        } else if (ph->text == "b" || ph->text == "e" || ph->text == "n") {
            ++async_events;
        }
    }
    CHECK(spans > 0);
    CHECK(async_events == 0);   // the DevTools Performance panel draws no async events
    CHECK(static_cast<double>(transfer_slices) == transfers);   // one "transfer" slice per transfer
    CHECK(lanes.size() >= 2);   // node0's transfers and node1's walks at least
    for (auto& [thread, slices] : lanes) {
        INFO("lane pid " << thread.first << " tid " << thread.second);
        std::sort(slices.begin(), slices.end());
        for (std::size_t i = 1; i < slices.size(); ++i) CHECK(slices[i].first >= slices[i - 1].second - 1e-9);
    }
    std::set<std::string> names;
    for (const auto& kv : process_names) names.insert(kv.second);
    CHECK(names.count("node0") == 1);
    CHECK(names.count("node1") == 1);
    // Every span is on a named track of a named process.
    for (const auto& pt : span_threads) {
        INFO("pid " << pt.first << " tid " << pt.second);
        CHECK(process_names.count(pt.first) == 1);
        CHECK(named_threads.count(pt) == 1);
    }

    // events.log: "<time> us  <who>  <what>", sorted by time, both nodes.
    const std::string log = slurp(out / "events.log");
    std::istringstream in(log);
    std::string line;
    const std::regex fmt(R"(^\s*([0-9]+\.[0-9]+) us  (\S+)  (.+)$)");
    double last = -1;
    std::size_t lines = 0;
    std::set<std::string> who;
    while (std::getline(in, line)) {
        std::smatch m;
        INFO("events.log line " << lines + 1 << ": " << line);
        REQUIRE(std::regex_match(line, m, fmt));
        const double t = std::stod(m[1]);
        CHECK(t >= last);
        last = t;
        who.insert(m[2].str().substr(0, m[2].str().find('.')));
        ++lines;
    }
    CHECK(lines >= transfers);
    CHECK(who.count("node0") == 1);
    CHECK(who.count("node1") == 1);
}

TEST_CASE("run with log alone writes a sorted events.log of overlapping transfers and no trace", "[cli][run]") {
    TempDir tmp;
    const Result r = run_exe({"run", "--workload.total-bytes=256KiB", "--workload.message-size=16KiB",
                              "--workload.window=4", "--log", "--out", "out", "-q"},
                             tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    const fs::path out = tmp.path() / "out";
    CHECK(listing(out) ==
          std::set<std::string>{".vrdmasim-run", "config.ini", "stats.json", "stats.txt", "summary.csv", "events.log"});
    std::istringstream in(slurp(out / "events.log"));
    std::string line;
    double last = -1;
    std::size_t lines = 0;
    while (std::getline(in, line)) {
        std::istringstream ls(line);
        double t = 0;
        std::string unit;
        INFO("line " << line);
        REQUIRE(static_cast<bool>(ls >> t >> unit));
        CHECK(unit == "us");
        CHECK(t >= last);
        last = t;
        ++lines;
    }
    CHECK(lines >= 16);   // 16 transfers, each starts and completes
}

TEST_CASE("a malformed or misplaced --trace-window, --trace-filter or --trace-gzip exits 2 and writes nothing",
          "[cli][errors][trace]") {
    TempDir tmp;
    const std::vector<std::pair<std::vector<std::string>, std::string>> bad{
        {{"--trace", "--trace-window", "100us"}, "give FROM,TO in simulated time with units"},
        {{"--trace", "--trace-window", "100,200us"}, "FROM '100': missing unit"},
        {{"--trace", "--trace-window", "1us,fast"}, "TO 'fast'"},
        {{"--trace", "--trace-window", "200us,100us"}, "TO must be later than FROM"},
        {{"--trace", "--trace-window", "1us,2us,3us"}, "give FROM,TO"},
        {{"--trace", "--trace-window", ","}, "give FROM,TO"},
        {{"--trace", "--trace-window", "-1us,2us"}, "cannot be negative"},
        {{"--trace-window", "1us,2us"}, "--trace-window needs --trace or --log"},
        {{"--trace-filter", "node1"}, "--trace-filter needs --trace"},
        {{"--trace", "--trace-filter", "node1,,dma"}, "--trace-filter: 'node1,,dma': give node and model names"},
        {{"--trace-gzip"}, "--trace-gzip needs --trace"},
        {{"--trace", "--trace-warn-size", "lots"}, "--trace-warn-size lots"},
    };
    for (const auto& [args, message] : bad) {
        const Result r = run_exe(cat({"run", "--out", "o"}, args), tmp.path());
        INFO(describe(r));
        CHECK(r.status == 2);
        CHECK(contains(r.err, message));
        CHECK(!fs::exists(tmp.path() / "o"));
    }
}

TEST_CASE("a trace window, a trace filter and gzip record less and change no result", "[cli][run][trace]") {
    TempDir tmp;
    const std::vector<std::string> run{"run", "--workload.kind=pingpong", "--workload.message-size=64B",
                                       "--workload.iterations=20", "-q"};
    Result r = run_exe(cat(run, {"--out", "plain"}), tmp.path());
    REQUIRE(r.status == 0);
    r = run_exe(cat(run, {"--trace", "--log", "--out", "whole"}), tmp.path());
    REQUIRE(r.status == 0);
    // A window of a few pingpongs (the run takes about 65 us), in the trace and the log.
    r = run_exe(cat(run, {"--trace", "--log", "--trace-window", "20us,30us", "--out", "window"}), tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    r = run_exe(cat(run, {"--trace", "--trace-filter", "node1,smmu,nosuchmodel", "--out", "filter"}), tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(contains(r.err, "vrdmasim: warning: --trace-filter: 'nosuchmodel' matched no track"));
    r = run_exe(cat(run, {"--trace", "--trace-gzip", "--out", "gz"}), tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);

    // The simulation is the same whatever is recorded.
    const std::string stats = slurp(tmp.path() / "plain" / "stats.json");
    const std::string summary = without_columns(read_table(tmp.path() / "plain" / "summary.csv"), kHostColumns);
    for (const char* d : {"whole", "window", "filter", "gz"}) {
        INFO(d);
        CHECK(slurp(tmp.path() / d / "stats.json") == stats);
        CHECK(without_columns(read_table(tmp.path() / d / "summary.csv"), kHostColumns) == summary);
    }

    auto events_of = [](const fs::path& p) {
        const JVal doc = json_file(p);
        REQUIRE(doc.get("traceEvents"));
        return doc.get("traceEvents")->arr;
    };
    const auto whole = events_of(tmp.path() / "whole" / "trace.json");
    const auto window = events_of(tmp.path() / "window" / "trace.json");
    std::size_t timed = 0, whole_timed = 0;
    for (const JVal& e : whole) whole_timed += e.get("ph")->text != "M";
    for (const JVal& e : window) {
        if (e.get("ph")->text == "M") continue;
        ++timed;
        const double ts = e.get("ts")->num, end = ts + (e.get("dur") ? e.get("dur")->num : 0);
        INFO(e.get("ph")->text << " " << e.get("name")->text << " at " << ts);
        CHECK(ts <= 30 + 1e-9);
        CHECK(end >= 20 - 1e-9);
    }
    CHECK(timed > 0);
    CHECK(timed * 3 < whole_timed);
    std::istringstream log(slurp(tmp.path() / "window" / "events.log"));
    std::size_t lines = 0;
    for (std::string line; std::getline(log, line); ++lines) {
        const double t = std::stod(line);
        CHECK(t >= 20);
        CHECK(t <= 30);
    }
    CHECK(lines > 0);
    CHECK(lines * 3 < count_lines(slurp(tmp.path() / "whole" / "events.log")));

    // The filter: node1's SMMU tracks only ("smmu tcu", "smmu faults" and their lanes).
    std::map<std::pair<double, double>, std::string> thread_names;
    std::map<double, std::string> process_names;
    const auto filtered = events_of(tmp.path() / "filter" / "trace.json");
    std::size_t kept = 0;
    for (const JVal& e : filtered) {
        if (e.get("ph")->text == "M") {
            if (e.get("name")->text == "thread_name")
                thread_names[{e.get("pid")->num, e.get("tid")->num}] = e.get("args")->get("name")->text;
            if (e.get("name")->text == "process_name")
                process_names[e.get("pid")->num] = e.get("args")->get("name")->text;
            continue;
        }
        ++kept;
        INFO(e.get("name")->text);
        CHECK(process_names[e.get("pid")->num] == "node1");
        CHECK(thread_names[{e.get("pid")->num, e.get("tid")->num}].rfind("smmu ", 0) == 0);
    }
    CHECK(kept > 0);

    // trace.json.gz: gzip, and decompressed the very file --trace writes.
    CHECK(listing(tmp.path() / "gz") == std::set<std::string>{".vrdmasim-run", "config.ini", "stats.json", "stats.txt",
                                                              "summary.csv", "trace.json.gz"});
    const std::string packed = slurp(tmp.path() / "gz" / "trace.json.gz");
    REQUIRE(packed.size() > 2);
    CHECK(static_cast<unsigned char>(packed[0]) == 0x1f);
    CHECK(static_cast<unsigned char>(packed[1]) == 0x8b);
    gzFile in = gzopen((tmp.path() / "gz" / "trace.json.gz").c_str(), "rb");
    REQUIRE(in != nullptr);
    std::string text;
    char buf[65536];
    for (int n; (n = gzread(in, buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
    gzclose(in);
    const std::string plain = slurp(tmp.path() / "whole" / "trace.json");
    CHECK(text == plain);
    CHECK(packed.size() * 4 < plain.size());
    // A run's output with trace.json.gz is still a run's output: a later run replaces it.
    r = run_exe(cat(run, {"--out", "gz"}), tmp.path());
    CHECK(r.status == 0);
    CHECK(!fs::exists(tmp.path() / "gz" / "trace.json.gz"));
}

TEST_CASE("a trace that grows big says so while the run simulates, with the size to expect", "[cli][run][trace]") {
    TempDir tmp;
    // 200 pingpongs, a trace of a few hundred KiB: warned at 32 KiB, 128 KiB, ...
    const Result r = run_exe({"run", "--workload.kind=pingpong", "--workload.message-size=64B",
                              "--workload.iterations=200", "--trace", "--trace-warn-size", "32KiB", "--out", "o", "-q"},
                             tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    const std::regex warning(
        R"(vrdmasim: warning: trace\.json has reached ([0-9.]+) KiB at [0-9.]+ ?[munp]?s of simulated )"
        R"(time, ([0-9]+) of 400 transfers done: at this rate about ([0-9.]+) (KiB|MiB) in all; )"
        R"(it is written when the run ends)");
    std::smatch m;
    REQUIRE(std::regex_search(r.err, m, warning));
    CHECK(std::stod(m[1]) >= 32);
    CHECK(std::stod(m[1]) < 33);
    CHECK(contains(r.err, "--trace-window FROM,TO"));
    // The estimate: the size so far scaled by the transfers still to do,
    // within a factor of 2 of the file written (pingpongs are alike).
    const double estimate = std::stod(m[3]) * (m[4] == "MiB" ? 1024 * 1024 : 1024);
    const double actual = static_cast<double>(fs::file_size(tmp.path() / "o" / "trace.json"));
    CHECK(estimate > actual / 2);
    CHECK(estimate < actual * 2);
    // Warned again at each factor of 4: 128 KiB next.
    CHECK(contains(r.err, "trace.json has reached 128."));
    // By default (256 MiB) a small run says nothing.
    const Result quiet = run_exe(
        {"run", "--workload.kind=pingpong", "--workload.iterations=20", "--trace", "--out", "p", "-q"}, tmp.path());
    CHECK(quiet.status == 0);
    CHECK(quiet.err.empty());
}

TEST_CASE("a pingpong run makes two transfers per iteration at a plausible latency", "[cli][run]") {
    TempDir tmp;
    const Result r = run_exe({"run", "--workload.kind=pingpong", "--workload.message-size=64B",
                              "--workload.iterations=50", "--out", "out", "-q"},
                             tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    const Table s = read_table(tmp.path() / "out" / "summary.csv");
    REQUIRE(s.rows.size() == 1);
    const auto& row = s.rows[0];
    CHECK(row.at("workload") == "pingpong");
    CHECK(number(row, "transfers") == 100);
    CHECK(number(row, "transfer_errors") == 0);
    CHECK(number(row, "bytes_delivered") == 100 * 64);
    CHECK(number(row, "bytes_verified") == 100 * 64);
    CHECK(number(row, "data_mismatches") == 0);
    const double p50 = number(row, "latency_us_p50"), p99 = number(row, "latency_us_p99");
    CHECK(p50 >= 0.5);
    CHECK(p50 <= 5.0);
    CHECK(p99 >= p50);
    CHECK(p99 <= 5.0);
    // 100 one-way trips of at least p50-ish each.
    CHECK(number(row, "sim_seconds") * 1e6 >= 100 * 0.5);
}

TEST_CASE("the shipped torus config streams across a 3x2x2 torus, statistics named by coordinate",
          "[cli][run][topology]") {
    TempDir tmp;
    const std::string cfg = (fs::path(VRDMASIM_SOURCE_DIR) / "configs" / "torus.ini").string();
    const Result r = run_exe({"run", cfg, "--workload.total-bytes=1MiB", "--out", "out", "-q"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    const Table s = read_table(tmp.path() / "out" / "summary.csv");
    REQUIRE(s.rows.size() == 1);
    CHECK(number(s.rows[0], "nodes") == 48);
    CHECK(number(s.rows[0], "bytes_verified") == 1 << 20);
    CHECK(number(s.rows[0], "data_mismatches") == 0);
    // Below the 10 Gb/s of a board link, above half of it.
    CHECK(number(s.rows[0], "throughput_gbps") < 10.0 * 256 / 288);
    CHECK(number(s.rows[0], "throughput_gbps") > 5.0);
    const std::string stats = slurp(tmp.path() / "out" / "stats.txt");
    CHECK(contains(stats, "x0y0z0f0.dma.packets_sent"));
    CHECK(contains(stats, "x0y1z1f1_to_x2y1z1f1.vc1.buffer_hwm"));
}

TEST_CASE("run --check prints the work planned as the workload kind plans it", "[cli][run][check]") {
    TempDir tmp;
    const fs::path configs = fs::path(VRDMASIM_SOURCE_DIR) / "configs";
    auto check = [&](const std::vector<std::string>& args) {
        const Result r = run_exe(cat({"run"}, cat(args, {"--check"})), tmp.path());
        INFO(describe(r));
        REQUIRE(r.status == 0);
        return r.out;
    };
    const std::string ok = "vrdmasim: configuration ok, nothing simulated; planned: ";
    // A lock moves no payload: its acquisitions are network atomics, and
    // workload.message-size (which it does not read) is no figure of it.
    const std::string locks = check({(configs / "locks.ini").string()});
    CHECK(contains(locks, ok + "80 transfers, 0 bytes of payload\n"));
    CHECK_FALSE(contains(locks, "65536"));
    // A stream's total-bytes, its last message the rest of it.
    CHECK(contains(check({(configs / "torus.ini").string()}), ok + "64 transfers, 4194304 bytes of payload\n"));
    CHECK(contains(check({(configs / "torus.ini").string(), "--workload.total-bytes=100KiB"}),
                   ok + "2 transfers, 102400 bytes of payload\n"));
    // A halo: every node to each of its distinct neighbours (6 on 4x4x3),
    // 4 rounds of one 64 KiB message.
    CHECK(contains(check({(configs / "torus-cluster.ini").string()}),
                   ok + "1152 transfers, 75497472 bytes of payload\n"));
    // A collective: every rank's result, each iteration (an allreduce of
    // 64 KiB on 8 ranks, 8 times).
    CHECK(contains(check({(configs / "collective.ini").string()}), ok + "64 transfers, 4194304 bytes of payload\n"));
    // A file server: every request's range (2 clients x 8 requests of a
    // whole 256 KiB file).
    CHECK(contains(check({(configs / "fileserve" / "base.ini").string()}),
                   ok + "16 transfers, 4194304 bytes of payload\n"));
    // A trace: its receives and every rank's collective results, from the
    // trace alone (the solver: 8 ranks x 10 iterations x two 8 KiB halos
    // and an allreduce of 8 B).
    CHECK(contains(check({"--topology.kind=torus", "--topology.x=2", "--workload.kind=trace",
                          "--trace.file=" + (configs / "traces" / "solver" / "solver.otf2").string()}),
                   ok + "240 transfers, 1311360 bytes of payload\n"));
    // A kind that does not tell its transfers says so.
    CHECK(contains(check({(configs / "synthetic.ini").string()}),
                   ok + "transfers not known in advance (workload.kind = synthetic)\n"));
}

// The docs' commands for the cluster kinds on the 3x2x2 torus run
// configs/torus-cluster.ini: configs/torus.ini's torus and messages
// without the stream's own settings, which a halo or an alltoall does not
// read (a run of torus.ini with --workload.kind=halo warns of them).
TEST_CASE("configs/torus-cluster.ini is torus.ini's torus for the cluster kinds and the docs use it",
          "[cli][run][cluster]") {
    const fs::path source(VRDMASIM_SOURCE_DIR);
    const auto stream = values_of(read_ini(source / "configs" / "torus.ini"));
    const auto cluster = values_of(read_ini(source / "configs" / "torus-cluster.ini"));
    CHECK(cluster.at("workload.kind") == "halo");
    CHECK(cluster.at("workload.iterations") == "4");   // not the default 100: a short run
    std::set<std::string> only_stream;
    for (const auto& kv : stream) {
        INFO(kv.first);
        if (kv.first == "workload.kind") continue;
        if (cluster.count(kv.first)) CHECK(cluster.at(kv.first) == kv.second);
        else only_stream.insert(kv.first);
    }
    for (const auto& kv : cluster)
        CHECK((kv.first == "workload.kind" || kv.first == "workload.iterations" || stream.count(kv.first) > 0));
    CHECK(only_stream == std::set<std::string>{"workload.src-node", "workload.dst-node", "workload.total-bytes"});

    TempDir tmp;
    const std::vector<std::string> small{"--workload.kind=alltoall",
                                         "--workload.message-size=1KiB",
                                         "--workload.iterations=1",
                                         "--topology.x=2",
                                         "--topology.y=1",
                                         "--topology.z=1",
                                         "-q"};
    const Result clean = run_exe(
        cat({"run", (source / "configs" / "torus-cluster.ini").string()}, cat(small, {"--out", "a"})), tmp.path());
    INFO(describe(clean));
    CHECK(clean.status == 0);
    CHECK_FALSE(contains(clean.err, "was not read"));
    const Result warned =
        run_exe(cat({"run", (source / "configs" / "torus.ini").string()}, cat(small, {"--out", "b"})), tmp.path());
    INFO(describe(warned));
    CHECK(warned.status == 0);
    CHECK(contains(warned.err, "workload.total-bytes = 4MiB (from "));
    CHECK(contains(warned.err, "was not read: workload.kind = alltoall (from command line)"));

    // No command of the docs runs torus.ini as another kind than its stream.
    const std::regex command(R"(configs/torus\.ini((?:[ \t]*(?:\\\n|\n)?[ \t]*--[\w.-]+=[^\s`]+)*))");
    const std::regex kind(R"(--workload\.kind=([\w-]+))");
    std::vector<fs::path> pages{source / "README.md"};
    for (const auto& e : fs::recursive_directory_iterator(source / "docs"))
        if (e.path().extension() == ".md") pages.push_back(e.path());
    for (const fs::path& page : pages) {
        const std::string text = slurp(page);
        for (std::sregex_iterator m(text.begin(), text.end(), command), end; m != end; ++m) {
            const std::string args = (*m)[1].str();
            std::smatch k;
            INFO(page.string() << ": configs/torus.ini" << args);
            CHECK((!std::regex_search(args, k, kind) || k[1].str() == "stream"));
        }
    }
}

TEST_CASE("the cluster example configs run and verify every byte and report the network", "[cli][run][cluster]") {
    TempDir tmp;
    const fs::path configs = fs::path(VRDMASIM_SOURCE_DIR) / "configs";
    // The column set is fixed: the same for a stream as for the cluster workloads.
    Result r = run_exe(cat({"run"}, cat(kSmall, {"--out", "stream", "-q"})), tmp.path());
    REQUIRE(r.status == 0);
    const Table stream = read_table(tmp.path() / "stream" / "summary.csv");
    CHECK(stream.rows.at(0).at("latency_us_p50_by_hops").rfind("1:", 0) == 0);
    CHECK(stream.rows.at(0).at("busiest_link") == "node0_to_node1");
    struct Case {
        std::string config;
        double transfers;
        std::string busiest_suffix;
    };
    for (const Case& c : {Case{"alltoall.ini", 4 * 3 * 10, ""}, Case{"halo.ini", 4 * 2 * 20, ""},
                          Case{"incast.ini", 3 * 64, "_to_node0"}}) {
        INFO(c.config);
        r = run_exe({"run", (configs / c.config).string(), "--out", c.config, "-q"}, tmp.path());
        INFO(describe(r));
        REQUIRE(r.status == 0);
        const Table s = read_table(tmp.path() / c.config / "summary.csv");
        CHECK(s.header == stream.header);
        const auto& row = s.rows.at(0);
        CHECK(row.at("nodes") == "4");
        CHECK(number(row, "transfers") == c.transfers);
        CHECK(number(row, "transfer_errors") == 0);
        CHECK(number(row, "data_mismatches") == 0);
        CHECK(number(row, "bytes_verified") == number(row, "bytes_delivered"));
        CHECK(row.at("latency_us_p50_by_hops").rfind("1:", 0) == 0);
        CHECK(row.at("latency_us_p50_by_hops").find(';') == std::string::npos);   // one hop count on a QFDB
        CHECK(number(row, "link_util_max") > 0);
        CHECK(number(row, "link_util_max") <= 1.0);
        CHECK(number(row, "link_util_mean") <= number(row, "link_util_max"));
        const std::string busiest = row.at("busiest_link");
        CHECK(busiest.find("_to_node") != std::string::npos);
        if (!c.busiest_suffix.empty()) {
            REQUIRE(busiest.size() > c.busiest_suffix.size());
            CHECK(busiest.substr(busiest.size() - c.busiest_suffix.size()) == c.busiest_suffix);
            // Incast: only the three links into node 0 carry data.
            CHECK(number(row, "link_util_mean") < 0.35 * number(row, "link_util_max"));
        }
    }
}

TEST_CASE("precedence: defaults < first config < second config < command line", "[cli][run]") {
    TempDir tmp;
    spit(tmp.path() / "a.ini",
         "# first config\n"   // 1
         "[dma]\n"   // 2
         "block-size = 8KiB\n"   // 3
         "packet-size = 128B\n"   // 4
         "\n"   // 5
         "[link]\n"   // 6
         "rate = 10Gbps   ; comment\n"   // 7
         "[workload]\n"   // 8
         "total-bytes = 512KiB\n"   // 9
         "message-size = 32KiB\n");   // 10
    spit(tmp.path() / "b.ini",
         "[dma]\n"   // 1
         "packet-size = 512B\n"   // 2
         "[link]\n"   // 3
         "rate = 12Gbps\n"   // 4
         "[workload]\n"   // 5
         "total-bytes = 256KiB\n");   // 6
    const std::string a = tmp / "a.ini", b = tmp / "b.ini";

    // The command-line value comes first in argv and still wins over both files.
    Result r = run_exe({"run", "--link.rate=8Gbps", a, b, "--out", "ab", "-q"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    Ini ini = read_ini(tmp.path() / "ab" / "config.ini");
    auto check = [&](const Ini& i, const std::string& key, const std::string& value, const std::string& origin) {
        INFO(key);
        REQUIRE(i.entries.count(key) == 1);
        CHECK(i.entries.at(key).value == value);
        if (origin.empty()) CHECK(i.entries.at(key).origin.empty());
        else CHECK(contains(i.entries.at(key).origin, origin));
    };
    check(ini, "dma.block-size", "8KiB", "a.ini:3");   // only in a
    check(ini, "dma.packet-size", "512B", "b.ini:2");   // b over a
    check(ini, "workload.total-bytes", "256KiB", "b.ini:6");
    check(ini, "workload.message-size", "32KiB", "a.ini:10");
    check(ini, "link.rate", "8Gbps", "command line");   // command line over both
    check(ini, "dram.latency", "100ns", "");   // default
    check(ini, "workload.window", "4", "");
    // The effective values are the ones simulated.
    Table s = read_table(tmp.path() / "ab" / "summary.csv");
    REQUIRE(s.rows.size() == 1);
    CHECK(number(s.rows[0], "bytes_delivered") == 256 * 1024);
    CHECK(number(s.rows[0], "transfers") == 256 / 32);
    if (s.has("packets")) CHECK(number(s.rows[0], "packets") == 256 * 1024 / 512);
    CHECK(number(s.rows[0], "throughput_gbps") <= 8.0);

    // Files in the other order: a wins, and without the command line a's rate.
    r = run_exe({"run", b, a, "--out", "ba", "-q"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    ini = read_ini(tmp.path() / "ba" / "config.ini");
    check(ini, "dma.block-size", "8KiB", "a.ini:3");
    check(ini, "dma.packet-size", "128B", "a.ini:4");
    check(ini, "workload.total-bytes", "512KiB", "a.ini:9");
    check(ini, "link.rate", "10Gbps", "a.ini:7");
    check(ini, "dram.latency", "100ns", "");
    s = read_table(tmp.path() / "ba" / "summary.csv");
    REQUIRE(s.rows.size() == 1);
    CHECK(number(s.rows[0], "bytes_delivered") == 512 * 1024);
    CHECK(number(s.rows[0], "transfers") == 512 / 32);
    if (s.has("packets")) CHECK(number(s.rows[0], "packets") == 512 * 1024 / 128);
    CHECK(number(s.rows[0], "throughput_gbps") <= 10.0);

    // "--section.key value" means the same as "--section.key=value".
    r = run_exe({"run", a, "--link.rate", "9Gbps", "--workload.window", "2", "--out", "sp", "-q"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    ini = read_ini(tmp.path() / "sp" / "config.ini");
    check(ini, "link.rate", "9Gbps", "command line");
    check(ini, "workload.window", "2", "command line");
    check(ini, "dma.block-size", "8KiB", "a.ini:3");
}

// The run's options that are not defaults, some of them awkward to write back.
const std::vector<std::string> kUnusual{
    "--workload.total-bytes=240KiB", "--workload.message-size=12KiB", "--workload.window=3",    "--sim.seed=7",
    "--dram.bandwidth=12.8GB/s",     "--link.latency=155ns",          "--dma.packet-size=192B", "--ni.rate=15Gbps"};

TEST_CASE("re-running a run's config.ini reproduces its simulated results exactly", "[cli][run][determinism]") {
    TempDir tmp;
    Result r = run_exe(cat(cat({"run"}, kUnusual), {"--trace", "--log", "--out", "first", "-q"}), tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    r = run_exe({"run", "first/config.ini", "--trace", "--log", "--out", "again", "-q"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    const fs::path first = tmp.path() / "first", again = tmp.path() / "again";

    const Ini i1 = read_ini(first / "config.ini"), i2 = read_ini(again / "config.ini");
    CHECK(values_of(i1) == values_of(i2));
    CHECK(i1.entries.at("sim.seed").value == "7");
    CHECK(i1.entries.at("dram.bandwidth").value == "12.8GB/s");
    // Every value of the re-run that is not the default came from the config
    // file, from the line it is on; the defaults name no origin, as in the
    // first run (once, all 193 keys said they came from the file).
    std::size_t set1 = 0, set2 = 0;
    for (const auto& kv : i1.entries) set1 += !kv.second.origin.empty();
    for (const auto& kv : i2.entries) {
        INFO(kv.first);
        if (i1.entries.at(kv.first).origin.empty()) {
            CHECK(kv.second.origin.empty());
        } else {
            CHECK(kv.second.origin == "first/config.ini:" + std::to_string(i1.line_of(kv.first)));
            ++set2;
        }
    }
    CHECK(set1 == kUnusual.size());
    CHECK(set2 == set1);

    CHECK(slurp(first / "stats.json") == slurp(again / "stats.json"));
    CHECK(slurp(first / "stats.txt") == slurp(again / "stats.txt"));
    CHECK(slurp(first / "trace.json") == slurp(again / "trace.json"));
    CHECK(slurp(first / "events.log") == slurp(again / "events.log"));
    const Table s1 = read_table(first / "summary.csv"), s2 = read_table(again / "summary.csv");
    REQUIRE(s1.rows.size() == 1);
    CHECK(s1.header == s2.header);
    CHECK(without_columns(s1, kHostColumns) == without_columns(s2, kHostColumns));
    CHECK(number(s1.rows[0], "bytes_verified") == 240 * 1024);
    CHECK(number(s1.rows[0], "transfers") == 20);
}

TEST_CASE("the same configuration and seed twice gives identical outputs", "[cli][run][determinism]") {
    TempDir tmp;
    const std::vector<std::string> args = cat({"run"}, kUnusual);
    for (const char* out : {"one", "two"}) {
        const Result r = run_exe(cat(args, {"--trace", "--log", "--out", out, "-q"}), tmp.path());
        INFO(describe(r));
        REQUIRE(r.status == 0);
    }
    const fs::path one = tmp.path() / "one", two = tmp.path() / "two";
    for (const char* f : {"config.ini", "stats.json", "stats.txt", "trace.json", "events.log"}) {
        INFO(f);
        CHECK(slurp(one / f) == slurp(two / f));
    }
    const Table s1 = read_table(one / "summary.csv"), s2 = read_table(two / "summary.csv");
    CHECK(without_columns(s1, kHostColumns) == without_columns(s2, kHostColumns));
}

TEST_CASE("a --out through a symbolic link to a directory writes into that directory", "[cli][run]") {
    // Once refused as "exists and is not a directory".
    TempDir tmp;
    fs::create_directory(tmp.path() / "real");
    fs::create_directory_symlink("real", tmp.path() / "link");
    const Result r = run_exe(cat({"run"}, cat(kSmall, {"--out", "link", "-q"})), tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(fs::is_symlink(tmp.path() / "link"));
    CHECK(fs::exists(tmp.path() / "real" / "summary.csv"));
    CHECK(listing(tmp.path()) == std::set<std::string>{"real", "link"});
}

TEST_CASE("run replaces an earlier run's output directory", "[cli][run]") {
    TempDir tmp;
    Result r = run_exe(cat({"run"}, cat(kSmall, {"--trace", "--out", "out", "-q"})), tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    REQUIRE(fs::exists(tmp.path() / "out" / "trace.json"));
    r = run_exe({"run", "--workload.total-bytes=128KiB", "--out", "out", "-q"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    // The earlier trace goes with the earlier outputs: said (once silent).
    CHECK(
        contains(r.err, "held an earlier run's outputs; replaced, with its trace.json, which this run did not write"));
    CHECK(listing(tmp.path()) == std::set<std::string>{"out"});
    CHECK(listing(tmp.path() / "out") ==
          std::set<std::string>{".vrdmasim-run", "config.ini", "stats.json", "stats.txt", "summary.csv"});
    const Table s = read_table(tmp.path() / "out" / "summary.csv");
    REQUIRE(s.rows.size() == 1);
    CHECK(number(s.rows[0], "bytes_delivered") == 128 * 1024);

    // "DIR/" is DIR, whether new or holding an earlier run.
    for (const char* dir : {"out/", "fresh/"}) {
        INFO("--out " << dir);
        r = run_exe({"run", "--workload.total-bytes=64KiB", "--out", dir, "-q"}, tmp.path());
        INFO(describe(r));
        REQUIRE(r.status == 0);
        const std::string name = std::string(dir).substr(0, std::strlen(dir) - 1);
        CHECK(listing(tmp.path() / name) ==
              std::set<std::string>{".vrdmasim-run", "config.ini", "stats.json", "stats.txt", "summary.csv"});
        const Table t = read_table(tmp.path() / name / "summary.csv");
        REQUIRE(t.rows.size() == 1);
        CHECK(number(t.rows[0], "bytes_delivered") == 64 * 1024);
    }
    CHECK(listing(tmp.path()) == std::set<std::string>{"out", "fresh"});
}

TEST_CASE("a run that does not finish within sim.time-limit exits 1 and leaves diagnostics but no result",
          "[cli][run]") {
    TempDir tmp;
    const Result r = run_exe({"run", "--sim.time-limit=10us", "--out", "out"}, tmp.path());
    INFO(describe(r));
    CHECK(r.status == 1);
    CHECK(contains(r.err, "sim.time-limit"));
    CHECK(contains(r.err, "10us"));
    CHECK(!contains(r.err, "deadlock"));
    // What helps find out why: configuration, statistics, the error; no summary.
    CHECK(fs::exists(tmp.path() / "out" / "config.ini"));
    CHECK(fs::exists(tmp.path() / "out" / "stats.json"));
    CHECK(fs::exists(tmp.path() / "out" / "stats.txt"));
    CHECK(contains(slurp(tmp.path() / "out" / "error.txt"), "sim.time-limit"));
    CHECK(!fs::exists(tmp.path() / "out" / "summary.csv"));
}

TEST_CASE("run-batch: each run is what the process `vrdmasim run ARGS` gives: status, messages, every output",
          "[cli][run][batch]") {
    // scripts/composition.py's thousands of runs go through run-batch: each
    // of its children must be a `vrdmasim run` in all but how it started.
    TempDir tmp;
    const std::vector<std::vector<std::string>> runs{
        {"-q", "--out", "finished", "--workload.total-bytes=64KiB", "--trace", "--log"},
        {"-q", "--out", "refused", "--workload.two-sided=true"},
        {"-q", "--out", "failed", "--sim.time-limit=10us"},
        {"-q", "--bogus"},
        {"--out", "loud", "--workload.iterations=20", "--workload.kind=pingpong"},
    };
    const fs::path direct = tmp.path() / "direct", batch = tmp.path() / "batch";
    fs::create_directories(direct);
    fs::create_directories(batch / "logs");
    std::string lines;
    for (const auto& args : runs) {
        std::string line;
        for (const auto& a : args) line += (line.empty() ? "" : "\t") + a;
        lines += line + "\n";
    }
    spit(tmp.path() / "runs.txt", lines);
    const Result b = run_exe({"run-batch", "../runs.txt", "--logs", "logs", "--jobs", "2"}, batch);
    INFO(describe(b));
    REQUIRE(b.status == 0);
    CHECK(b.err.empty());
    // One line per run as it ends: its number and its exit status.
    std::map<std::size_t, std::string> status;
    std::istringstream in(b.out);
    for (std::string n, how, value; in >> n >> how >> value;) status[std::stoul(n)] = how + " " + value;
    REQUIRE(status.size() == runs.size());
    // Lines, sorted: the log holds stdout and stderr in one file, in the
    // order they were written, which two files do not keep.
    auto sorted_lines = [](const std::string& text) {
        std::vector<std::string> v;
        std::istringstream ss(text);
        for (std::string l; std::getline(ss, l);) v.push_back(l);
        std::sort(v.begin(), v.end());
        return v;
    };
    const std::vector<std::string> expected_status{"exit 0", "exit 2", "exit 1", "exit 2", "exit 0"};
    for (std::size_t n = 0; n < runs.size(); ++n) {
        const Result d = run_exe(cat({"run"}, runs[n]), direct);
        INFO("run " << n << " directly: " << describe(d));
        CHECK(status[n] == "exit " + std::to_string(d.status));
        CHECK(status[n] == expected_status[n]);
        const std::string log = slurp(batch / "logs" / (std::to_string(n) + ".log"));
        INFO("its log in the batch:\n" << log);
        if (n == 4) {   // not quiet: the summary has host times, which differ
            CHECK(contains(log, "verified"));
            // The same lines but the host's figures (shown when not 0: a
            // child of run-batch, whose parameters were declared before it
            // forked, allocates less, and its heap may take no huge page).
            auto simulated_lines = [](const std::string& text) {
                std::size_t k = 0;
                std::istringstream ss(text);
                for (std::string l; std::getline(ss, l);) k += l.rfind("  host_", 0) != 0;
                return k;
            };
            CHECK(simulated_lines(log) == simulated_lines(d.out + d.err));
        } else {
            CHECK(sorted_lines(log) == sorted_lines(d.out + d.err));
        }
    }
    for (const char* out : {"finished", "failed", "loud"}) {
        INFO(out);
        REQUIRE(fs::is_directory(batch / out));
        CHECK(listing(batch / out) == listing(direct / out));
        for (const char* f : {"config.ini", "stats.json", "stats.txt", "trace.json", "events.log", "error.txt"})
            if (fs::exists(direct / out / f)) CHECK(slurp(batch / out / f) == slurp(direct / out / f));
        if (fs::exists(direct / out / "summary.csv"))
            CHECK(without_columns(read_table(batch / out / "summary.csv"), kHostColumns) ==
                  without_columns(read_table(direct / out / "summary.csv"), kHostColumns));
    }
    CHECK(!fs::exists(batch / "refused"));
    // What it refuses: no --logs, no runs file, one it cannot read.
    CHECK(run_exe({"run-batch", "../runs.txt"}, batch).status == 2);
    CHECK(run_exe({"run-batch", "--logs", "logs"}, batch).status == 2);
    CHECK(run_exe({"run-batch", "missing.txt", "--logs", "logs"}, batch).status == 2);
}

TEST_CASE("sampling over time (--sample-interval) writes timeseries.csv and changes nothing else the run writes",
          "[cli][run][timeseries]") {
    TempDir tmp;
    Result r = run_exe({"run", "--out", "plain", "-q"}, tmp.path());
    REQUIRE(r.status == 0);
    r = run_exe({"run", "--sample-interval=1ms", "--report", "--out", "sampled", "-q"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    // The same simulation: statistics and summary (host time aside).
    CHECK(slurp(tmp.path() / "plain" / "stats.json") == slurp(tmp.path() / "sampled" / "stats.json"));
    const Table s1 = read_table(tmp.path() / "plain" / "summary.csv");
    const Table s2 = read_table(tmp.path() / "sampled" / "summary.csv");
    CHECK(without_columns(s1, kHostColumns) == without_columns(s2, kHostColumns));
    // A row every millisecond, and one where the workload finished.
    const Table ts = read_table(tmp.path() / "sampled" / "timeseries.csv");
    // (The default run's 9.77 ms: nine whole milliseconds and the end.)
    REQUIRE(ts.rows.size() == 10);
    CHECK(ts.header.front() == "time_us");
    double t_prev = 0, integral_bits = 0;
    for (std::size_t i = 0; i < ts.rows.size(); ++i) {
        const double t = number(ts.rows[i], "time_us");
        if (i < 9) CHECK(t == Approx(1000.0 * (i + 1)));
        CHECK(t > t_prev);
        integral_bits += number(ts.rows[i], "throughput_gbps") * 1e9 * (t - t_prev) * 1e-6;
        CHECK(number(ts.rows[i], "link_util_max") <= 1.0);
        t_prev = t;
    }
    const double bytes = number(s2.rows[0], "bytes_delivered");
    CHECK(number(ts.rows.back(), "bytes_delivered") == bytes);
    CHECK(integral_bits == Approx(bytes * 8).epsilon(1e-3));   // the intervals' throughputs add up
    CHECK(t_prev <= number(s2.rows[0], "sim_seconds") * 1e6 + 1e-6);
    // The report draws it.
    const std::string html = slurp(tmp.path() / "sampled" / "report.html");
    CHECK(contains(html, "<section id=\"timeseries\">"));
    CHECK(contains(html, "polyline"));
    // The directory is still a run's output: a later run may replace it.
    r = run_exe({"run", "--workload.total-bytes=64KiB", "--out", "sampled", "-q"}, tmp.path());
    CHECK(r.status == 0);
    CHECK(!fs::exists(tmp.path() / "sampled" / "timeseries.csv"));
}

TEST_CASE("a sample interval shorter than the quantum, or malformed, is refused", "[cli][errors][timeseries]") {
    TempDir tmp;
    for (const char* bad : {"--sample-interval=100ns", "--sample-interval=fast", "--sample-interval=0us"}) {
        const Result r = run_exe({"run", bad, "--out", "o"}, tmp.path());
        INFO(bad << ": " << describe(r));
        CHECK(r.status == 2);
        CHECK(contains(r.err, "--sample-interval"));
        CHECK(!fs::exists(tmp.path() / "o"));
    }
    // A run that fails still has its samples, the last where it stopped.
    const Result r = run_exe({"run", "--sim.time-limit=5ms", "--sample-interval=1ms", "--out", "o", "-q"}, tmp.path());
    CHECK(r.status == 1);
    const Table ts = read_table(tmp.path() / "o" / "timeseries.csv");
    REQUIRE(!ts.rows.empty());
    CHECK(number(ts.rows.back(), "time_us") <= 5000);
}

TEST_CASE("a time-limit failure says when it failed: at the limit, in units", "[cli][run]") {
    // Once: "failed at 260 ns" for a 100 us limit (the last event before
    // it), and "failed at 1997492791 ps" for 2 ms.
    TempDir tmp;
    for (const auto& [limit, shown] :
         {std::pair<std::string, std::string>{"100us", "failed at 100us:"}, {"2ms", "failed at 2ms:"}}) {
        const Result r = run_exe(
            {"run", "--sim.time-limit=" + limit, "--workload.total-bytes=1GiB", "--out", "out", "-q"}, tmp.path());
        INFO(describe(r));
        CHECK(r.status == 1);
        CHECK(contains(r.err, shown));
        CHECK(!contains(r.err, " ps:"));
    }
}

TEST_CASE("error messages show control bytes from a value escaped, never raw", "[cli][errors]") {
    TempDir tmp;
    spit(tmp.path() / "esc.ini", "[dma]\nblock-size = \033[2J 4KiB\n");
    for (const auto& args : {std::vector<std::string>{"run", "esc.ini", "--out", "o"},
                             std::vector<std::string>{"run", "--dma.block-size=\033[2J", "--out", "o"},
                             std::vector<std::string>{"run", "--no-such\033[2J=1", "--out", "o"}}) {
        const Result r = run_exe(args, tmp.path());
        INFO(describe(r));
        CHECK(r.status == 2);
        CHECK(contains(r.err, "\\x1b[2J"));
        CHECK(!contains(r.err, "\033"));
    }
}

// ===========================================================================
// Configuration errors

namespace {

struct BadCase {
    std::string what;
    std::vector<std::string> args;   // after "run"; "@name" is tmp/name
    std::vector<std::string> expect;   // substrings of stderr
};

}   // namespace

TEST_CASE("configuration errors exit 2 and say what is wrong and where and write nothing", "[cli][errors]") {
    TempDir tmp;
    spit(tmp.path() / "unknown_key.ini", "# a config with a typo\n[dma]\nblok-size = 4KiB\n");
    spit(tmp.path() / "bad_value.ini", "[workload]\nwindow = 4\n[dma]\nblock-size = 4Kib\n");
    spit(tmp.path() / "bad_enum.ini", "[workload]\nkind = pingpnog\n");
    spit(tmp.path() / "dst.ini", "[topology]\nnodes = 3\n[workload]\ndst-node = 3\n");
    spit(tmp.path() / "no_section.ini", "block-size = 4KiB\n");
    spit(tmp.path() / "a_sweep.ini", "[sweep]\nlabel = x\n[dma]\nnotify-window = 0, 4\n");

    // An earlier run's output, which a failing run must leave alone.
    Result r = run_exe(cat({"run"}, cat(kSmall, {"--out", "earlier", "-q"})), tmp.path());
    REQUIRE(r.status == 0);
    const auto earlier = snapshot(tmp.path() / "earlier");
    const auto before = listing(tmp.path());

    const std::vector<BadCase> cases{
        {"unknown key on the command line",
         {"--dma.blok-size=4KiB"},
         {"dma.blok-size", "command line", "did you mean 'dma.block-size'"}},
        {"a sweep file given to run", {"@a_sweep.ini"}, {"a_sweep.ini:1", "[sweep]", "vrdmasim sweep"}},
        {"unknown key in a file",
         {"@unknown_key.ini"},
         {"unknown_key.ini:3", "dma.blok-size", "did you mean 'dma.block-size'"}},
        {"unknown section on the command line", {"--dam.latency=100ns"}, {"dam.latency", "dram.latency"}},
        {"malformed size on the command line", {"--dma.block-size=4Kib"}, {"dma.block-size", "'4Kib'", "command line"}},
        {"malformed size in a file", {"@bad_value.ini"}, {"bad_value.ini:4", "dma.block-size", "'4Kib'"}},
        {"time without a unit", {"--link.latency=150"}, {"link.latency", "'150'", "command line"}},
        {"malformed integer", {"--workload.window=two"}, {"workload.window", "'two'", "command line"}},
        {"size above its range",
         {"--dma.block-size=2MiB"},
         {"dma.block-size", "'2MiB'", "command line", "range", "1MiB"}},
        {"integer below its range", {"--workload.window=0"}, {"workload.window", "'0'", "command line", "range"}},
        {"bad enum value on the command line",
         {"--workload.kind=foo"},
         {"workload.kind", "'foo'", "command line", "stream", "pingpong"}},
        {"bad enum value in a file", {"@bad_enum.ini"}, {"workload.kind", "pingpnog", "bad_enum.ini:2"}},
        {"missing config file", {"@missing.ini"}, {"missing.ini"}},
        {"key outside any section", {"@no_section.ini"}, {"no_section.ini:1"}},
        {"parameter without a value", {"--dma.block-size"}, {"dma.block-size"}},
        {"destination node beyond the nodes",
         {"--workload.dst-node=5"},
         {"workload.dst-node", "5", "command line", "2 nodes"}},
        {"destination node beyond the nodes, from a file",
         {"@dst.ini"},
         {"workload.dst-node", "3", "dst.ini:4", "3 nodes"}},
        {"source node beyond the nodes",
         {"--workload.src-node=2", "--workload.dst-node=1"},
         {"workload.src-node", "2", "command line"}},
        {"topology.nodes with a torus",
         {"--topology.kind=torus", "--topology.x=2", "--topology.nodes=4"},
         {"topology.nodes", "command line", "qfdb"}},
        {"a torus dimension of 0",
         {"--topology.kind=torus", "--topology.x=0"},
         {"topology.x", "'0'", "command line", "range"}},
        // More SystemC threads than the stack arena can hold stacks for
        // (src/sim/thread_stacks.hpp): refused after the first node, not
        // after minutes.
        {"a torus whose thread stacks exceed the stack arena",
         {"--topology.kind=torus", "--topology.x=64", "--topology.y=64", "--topology.z=64"},
         {"1048576 nodes", "7340032 SystemC threads", "stack arena", "simulate fewer nodes"}},
        {"one VC on a torus with rings",
         {"--topology.kind=torus", "--topology.x=3", "--router.vcs=1"},
         {"router.vcs", "command line", "dateline"}},
        {"adaptive routing with two VCs",
         {"--topology.kind=torus", "--topology.x=3", "--router.routing=adaptive", "--router.vcs=2"},
         {"router.vcs", "command line", "escape"}},
        {"adaptive routing on one QFDB", {"--router.routing=adaptive"}, {"router.routing", "command line", "torus"}},
        {"halo grid that does not match the nodes",
         {"--workload.kind=halo", "--workload.grid=3x3x3"},
         {"workload.grid", "3x3x3", "command line", "27", "2"}},
        {"malformed halo grid", {"--workload.kind=halo", "--workload.grid=2by1"}, {"workload.grid", "2by1", "AxBxC"}},
    };
    for (const BadCase& c : cases) {
        std::vector<std::string> args{"run"};
        for (const auto& a : c.args) args.push_back(a[0] == '@' ? tmp / a.substr(1) : a);
        for (const char* out : {"new", "earlier"}) {
            INFO(c.what << ", --out " << out);
            std::vector<std::string> full = args;
            full.insert(full.end(), {"--out", out});
            r = run_exe(full, tmp.path());
            INFO(describe(r));
            CHECK(r.status == 2);
            CHECK(r.out.empty());
            CHECK(r.err.rfind("vrdmasim: error: ", 0) == 0);
            for (const auto& e : c.expect) {
                INFO("expected on stderr: " << e);
                CHECK(contains(r.err, e));
            }
            // Nothing created (no output, no partial directory), the earlier output intact.
            CHECK(listing(tmp.path()) == before);
            CHECK(snapshot(tmp.path() / "earlier") == earlier);
        }
    }
}

TEST_CASE("configurations that could never work exit 2 before simulation, naming what to change", "[cli][errors]") {
    TempDir tmp;
    const std::string prototype = (fs::path(VRDMASIM_SOURCE_DIR) / "configs" / "exanest-prototype.ini").string();
    const auto before = listing(tmp.path());
    const std::vector<BadCase> cases{
        {"the README's packet-size example: a 1 KiB packet is 66 flits, the NI buffer holds 40",
         {"--dma.packet-size=1KiB", "--link.rate=10Gbps"},
         {"dma.packet-size = 1KiB (from command line)", "ni.buffer = 640B (from default)", "1056B"}},
        {"the prototype config with 1 KiB packets of 4 KiB messages",
         {prototype, "--dma.packet-size=1KiB", "--workload.message-size=4KiB"},
         {"dma.packet-size = 1KiB (from command line)", "ni.buffer"}},
        {"messages smaller than packets that still do not fit",
         {"--workload.message-size=1000B", "--dma.packet-size=4KiB", "--ni.buffer=512B"},
         {"workload.message-size = 1000B (from command line) with dma.packet-size = 4KiB", "ni.buffer = 512B",
          "lower workload.message-size to at most 480B"}},
        {"a packet larger than the on-board links' buffers",
         {"--dma.packet-size=4KiB", "--ni.buffer=8KiB"},
         {"dma.packet-size = 4KiB", "link.buffer = 2KiB"}},
        {"a packet larger than the torus links' buffers",
         {"--topology.kind=torus", "--topology.x=2", "--dma.packet-size=4KiB", "--ni.buffer=8KiB",
          "--link.buffer=8KiB"},
         {"dma.packet-size = 4KiB", "board-link.buffer = 2KiB"}},
        {"a memlock limit below the library's own records",
         {"--rdma.strategy=pin", "--vm.memlock-limit=0B"},
         {"vm.memlock-limit = 0B (from command line)", "completion records", "at least 4KiB"}},
        {"a kernel copy rate of zero", {"--vm.copy-rate=0B/s"}, {"vm.copy-rate", "'0B/s'", "range"}},
        {"nothing to transfer", {"--workload.total-bytes=0"}, {"workload.total-bytes", "'0'", "range"}},
        {"netvm with the original engine",
         {"--rdma.strategy=netvm", "--dma.fault-tolerant=false"},
         {"rdma.strategy = netvm (from command line) needs dma.fault-tolerant = true",
          "dma.fault-tolerant = false (from command line)"}},
        {"netvm with stalled faults",
         {"--rdma.strategy=netvm", "--smmu-driver.fault-mode=stall"},
         {"needs smmu-driver.fault-mode = terminate", "smmu-driver.fault-mode = stall (from command line)"}},
    };
    for (const BadCase& c : cases) {
        INFO(c.what);
        std::vector<std::string> args{"run"};
        args.insert(args.end(), c.args.begin(), c.args.end());
        args.insert(args.end(), {"--out", "new", "--sim.time-limit=100ms"});
        const Result r = run_exe(args, tmp.path());
        INFO(describe(r));
        CHECK(r.status == 2);
        CHECK(r.out.empty());
        CHECK(r.err.rfind("vrdmasim: error: ", 0) == 0);
        CHECK(count_lines(r.err) == 1);
        for (const auto& e : c.expect) {
            INFO("expected on stderr: " << e);
            CHECK(contains(r.err, e));
        }
        CHECK(listing(tmp.path()) == before);
    }
}

TEST_CASE("a torus whose threads SystemC's own stacks cannot map runs with the stack arena", "[cli][run]") {
    // 11 x 11 x 10 QFDBs: 4,840 nodes of up to 7 threads, 67,760 mappings
    // with a guard page per stack, more than vm.max_map_count's default
    // (src/sim/thread_stacks.hpp). About 14 s and 500 MiB.
    TempDir tmp;
    const std::string torus = (fs::path(VRDMASIM_SOURCE_DIR) / "configs" / "torus.ini").string();
    const std::vector<std::string> args{"run",
                                        torus,
                                        "--topology.x=11",
                                        "--topology.y=11",
                                        "--topology.z=10",
                                        "--workload.total-bytes=64KiB",
                                        "--workload.populate=false",
                                        "--smmu-driver.fault-mode=terminate",
                                        "--dma.fault-tolerant=true",
                                        "--quiet",
                                        "--out"};
    std::ifstream limit_file("/proc/sys/vm/max_map_count");
    std::size_t limit = 0;
    REQUIRE(limit_file >> limit);
    if (limit > 2 * 7 * 4840) {
        WARN("vm.max_map_count is raised here: SystemC's own stacks would fit; nothing to show");
        return;
    }
    SECTION("SystemC's own stacks: refused before the simulation, naming the limit and the arena") {
        REQUIRE(setenv("VRDMASIM_STACK_GUARD_PAGES", "1", 1) == 0);
        std::vector<std::string> a = args;
        a.push_back("guard");
        const Result r = run_exe(a, tmp.path());
        unsetenv("VRDMASIM_STACK_GUARD_PAGES");
        INFO(describe(r));
        CHECK(r.status == 2);
        CHECK(contains(r.err, "a system of 4840 nodes needs about"));
        CHECK(contains(r.err, "67760 mappings: SystemC's own stacks, as VRDMASIM_STACK_GUARD_PAGES is set"));
        CHECK(contains(r.err, "unset VRDMASIM_STACK_GUARD_PAGES"));
        CHECK_FALSE(fs::exists(tmp.path() / "guard"));
    }
    SECTION("the stack arena: runs to the end") {
        std::vector<std::string> a = args;
        a.push_back("arena");
        const Result r = run_exe(a, tmp.path());
        INFO(describe(r));
        CHECK(r.status == 0);
        CHECK(fs::exists(tmp.path() / "arena" / "summary.csv"));
    }
}

TEST_CASE("packets that are large only in name run: 1 KiB packets of 64 B pingpong messages", "[cli][run]") {
    TempDir tmp;
    const std::string prototype = (fs::path(VRDMASIM_SOURCE_DIR) / "configs" / "exanest-prototype.ini").string();
    const Result r = run_exe(
        {"run", prototype, "--dma.packet-size=1KiB", "--workload.iterations=5", "--out", "out", "-q"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(number(read_table(tmp.path() / "out" / "summary.csv").rows.at(0), "transfer_errors") == 0);
}

TEST_CASE("each strategy works on the default system: the thesis's fault-tolerant engine in terminate mode",
          "[cli][run]") {
    TempDir tmp;
    struct Case {
        std::vector<std::string> args;
        bool faults;   // the engine must have met (and survived) SMMU faults
    };
    for (const Case& c :
         {Case{{"--workload.populate=false"}, true}, Case{{"--rdma.strategy=netvm", "--workload.populate=false"}, true},
          Case{{"--rdma.strategy=pin", "--workload.populate=false"}, false}}) {
        INFO(c.args.front() << (c.args.size() > 1 ? " " + c.args[1] : ""));
        std::vector<std::string> args = cat({"run"}, cat(kSmall, c.args));
        args.insert(args.end(), {"--out", "out", "-q"});
        const Result r = run_exe(args, tmp.path());
        INFO(describe(r));
        REQUIRE(r.status == 0);
        const Table t = read_table(tmp.path() / "out" / "summary.csv");
        const auto& row = t.rows.at(0);
        CHECK(number(row, "transfer_errors") == 0);
        CHECK(number(row, "bytes_verified") == 256 * 1024);
        CHECK((number(row, "smmu_faults") > 0) == c.faults);
    }
    // The original engine is one switch away, and fails what faults.
    const Result r = run_exe(
        cat({"run"}, cat(kSmall, {"--workload.populate=false", "--dma.fault-tolerant=false", "--out", "orig", "-q"})),
        tmp.path());
    INFO(describe(r));
    CHECK(r.status != 2);
    if (r.status == 0) CHECK(number(read_table(tmp.path() / "orig" / "summary.csv").rows.at(0), "transfer_errors") > 0);
}

TEST_CASE("an exception inside a simulation process ends as one clean error line, not a SystemC report",
          "[cli][errors]") {
    TempDir tmp;
    // Enough memlock for the library's records and ring (two pages), not for
    // pinning the all-to-all receive area: the program fails at run time.
    const Result r = run_exe({"run", "--workload.kind=alltoall", "--topology.nodes=4", "--workload.iterations=1",
                              "--rdma.strategy=pin", "--vm.memlock-limit=8KiB", "--out", "out"},
                             tmp.path());
    INFO(describe(r));
    CHECK(r.status == 1);
    // Under scripts/sanitize.sh, ASan notes the exception leaving a SystemC
    // coroutine stack (a known false positive, google/sanitizers#189) before
    // the message: that note is not vrdmasim's output.
    std::string err = r.err;
    const auto note = err.find("WARNING: ASan is ignoring requested __asan_handle_no_return");
    if (note != std::string::npos) {
        const auto end = err.find("issues/189\n", note);
        if (end != std::string::npos) {
            const auto nl = err.rfind('\n', note);
            const std::size_t start = nl == std::string::npos ? 0 : nl + 1;
            err.erase(start, end + std::string("issues/189\n").size() - start);
        }
    }
    CHECK(err.rfind("vrdmasim: error: simulation failed at ", 0) == 0);
    CHECK(contains(err, "could not register the receive area"));
    CHECK(count_lines(err) == 1);
    CHECK(!contains(r.err, "In file"));
    CHECK(!contains(r.err, "In process"));
    CHECK(!contains(r.err, "Error: ("));
    CHECK(fs::exists(tmp.path() / "out" / "error.txt"));
    CHECK(!fs::exists(tmp.path() / "out" / "summary.csv"));
}

TEST_CASE("run refuses an output directory that does not hold vrdmasim output", "[cli][errors]") {
    TempDir tmp;
    const fs::path foreign = tmp.path() / "thesis";
    fs::create_directories(foreign / "figures");
    spit(foreign / "chapter1.tex", "\\chapter{Introduction}\n");
    spit(foreign / "figures" / "plot.csv", "x,y\n1,2\n");
    spit(tmp.path() / "notes.txt", "keep me\n");
    const auto foreign_before = snapshot(foreign);
    const auto file_before = snapshot(tmp.path() / "notes.txt");
    const auto before = listing(tmp.path());

    Result r = run_exe(cat({"run"}, cat(kSmall, {"--out", "thesis"})), tmp.path());
    INFO(describe(r));
    CHECK(r.status == 2);
    CHECK(contains(r.err, "thesis"));
    CHECK(contains(r.err, "refusing"));
    CHECK(snapshot(foreign) == foreign_before);
    CHECK(listing(tmp.path()) == before);

    // Nor a regular file.
    r = run_exe(cat({"run"}, cat(kSmall, {"--out", "notes.txt"})), tmp.path());
    INFO(describe(r));
    CHECK(r.status == 2);
    CHECK(contains(r.err, "notes.txt"));
    CHECK(snapshot(tmp.path() / "notes.txt") == file_before);
    CHECK(listing(tmp.path()) == before);

    // Nor an empty name.
    r = run_exe(cat({"run"}, cat(kSmall, {"--out", ""})), tmp.path());
    INFO(describe(r));
    CHECK(r.status == 2);
    CHECK(contains(r.err, "--out"));
    CHECK(listing(tmp.path()) == before);

    // An empty directory is fine.
    fs::create_directory(tmp.path() / "empty");
    r = run_exe(cat({"run"}, cat(kSmall, {"--out", "empty", "-q"})), tmp.path());
    INFO(describe(r));
    CHECK(r.status == 0);
    CHECK(fs::exists(tmp.path() / "empty" / "summary.csv"));
}

TEST_CASE("a run never deletes what appears at its --out path while it simulates", "[cli][errors]") {
    // The user makes the directory and writes into it while the run is
    // under way (`vrdmasim run --out o & mkdir o; echo x > o/thesis.tex`):
    // once, the run deleted it and exited 0. It now claims the path when it
    // starts, and at the end finds something that is not a run's output.
    TempDir tmp;
    const fs::path o = tmp.path() / "o";
    Result r;
    std::thread run([&] {
        r = run_exe({"run", "--workload.total-bytes=" + std::string(kStoppedRunBytes), "--out", "o", "-q"}, tmp.path());
    });
    // The path stays absent until the outputs are renamed to it; the user
    // makes the directory while the run simulates (stopped meanwhile, so
    // that it cannot end first however fast the host).
    auto staging = [&]() -> pid_t {
        std::error_code e;
        for (fs::directory_iterator it(tmp.path(), e), end; !e && it != end; it.increment(e)) {
            const std::string name = it->path().filename().string();
            if (name.rfind(".o.partial-", 0) == 0 && fs::exists(it->path() / ".vrdmasim-run", e))
                return static_cast<pid_t>(std::stol(name.substr(std::string(".o.partial-").size())));
        }
        return 0;
    };
    const auto start = std::chrono::steady_clock::now();
    pid_t pid = 0;
    while ((pid = staging()) == 0 && std::chrono::steady_clock::now() - start < std::chrono::seconds(20))
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    if (pid > 0) kill(pid, SIGSTOP);
    std::error_code ec;
    CHECK(pid > 0);
    CHECK(staging() == pid);   // still simulating
    CHECK(!fs::exists(o, ec));
    fs::create_directory(o, ec);
    spit(o / "thesis.tex", "x\n");
    if (pid > 0) kill(pid, SIGCONT);
    run.join();
    INFO(describe(r));
    CHECK(r.status == 1);
    CHECK(contains(r.err, "no longer a vrdmasim run's output"));
    CHECK(slurp(o / "thesis.tex") == "x\n");
    // The run's outputs are kept beside it, named in the message.
    std::string kept;
    for (const auto& e : fs::directory_iterator(tmp.path()))
        if (e.path().filename().string().rfind("o.run-", 0) == 0) kept = e.path().filename().string();
    REQUIRE(!kept.empty());
    CHECK(contains(r.err, kept));
    CHECK(fs::exists(tmp.path() / kept / "summary.csv"));
}

// ===========================================================================
// sweep and merge

namespace {

const char* const kSweep =
    "# 2 x 2 points\n"
    "[workload]\n"
    "message-size = 4KiB, 16KiB\n"
    "window = 1, 2\n"
    "total-bytes = 256KiB\n";

struct FileStamp {
    ino_t ino;
    std::int64_t sec, nsec;
    bool operator==(const FileStamp& o) const { return ino == o.ino && sec == o.sec && nsec == o.nsec; }
};
FileStamp stamp(const fs::path& p) {
    struct stat st {};
    if (stat(p.c_str(), &st) != 0) return {0, -1, -1};
    return {st.st_ino, static_cast<std::int64_t>(st.st_mtim.tv_sec), static_cast<std::int64_t>(st.st_mtim.tv_nsec)};
}

// The common leading columns of results.csv for the sweep above.
const std::vector<std::string> kLeading{"point", "workload.message-size", "workload.window", "status", "exit_code",
                                        "error"};

}   // namespace

TEST_CASE("sweep runs every point and records it in results.csv and resumes", "[cli][sweep]") {
    TempDir tmp;
    // The sweep file in a subdirectory, its base config relative to it.
    fs::create_directory(tmp.path() / "cfg");
    spit(tmp.path() / "cfg" / "small.ini", "[workload]\ntotal-bytes = 256KiB\n[sim]\nseed = 3\n");
    spit(tmp.path() / "cfg" / "s.ini",
         "[sweep]\n"
         "base = small.ini\n"
         "[workload]\n"
         "message-size = 4KiB, 16KiB\n"
         "window = 1, 2\n");
    Result r = run_exe({"sweep", "cfg/s.ini", "--jobs", "2", "--out", "out"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(listing(tmp.path()) == std::set<std::string>{"cfg", "out"});
    const fs::path out = tmp.path() / "out";
    CHECK(listing(out) ==
          std::set<std::string>{".vrdmasim-sweep", ".vrdmasim-plan", "results.csv", "points", "logs", "warnings.txt"});
    CHECK(contains(slurp(out / "warnings.txt"), "no point warned"));

    const Table t = read_table(out / "results.csv");
    REQUIRE(t.header.size() > kLeading.size());
    CHECK(std::vector<std::string>(t.header.begin(), t.header.begin() + kLeading.size()) == kLeading);
    for (const auto& c : kSummaryColumns) {
        INFO("column " << c);
        CHECK(t.has(c));
    }
    REQUIRE(t.rows.size() == 4);
    const std::vector<std::pair<std::string, std::string>> expected{
        {"4KiB", "1"}, {"4KiB", "2"}, {"16KiB", "1"}, {"16KiB", "2"}};
    std::set<std::string> ids;
    for (std::size_t i = 0; i < 4; ++i) {
        const auto& row = t.rows[i];
        INFO("row " << i << ": point " << row.at("point") << ", error " << row.at("error"));
        CHECK(std::regex_match(row.at("point"), std::regex("p000" + std::to_string(i) + "-[0-9a-f]{8}")));
        ids.insert(row.at("point"));
        CHECK(row.at("workload.message-size") == expected[i].first);
        CHECK(row.at("workload.window") == expected[i].second);
        CHECK(row.at("status") == "ok");
        CHECK(row.at("exit_code") == "0");
        CHECK(row.at("error").empty());
        CHECK(number(row, "bytes_delivered") == 256 * 1024);
        CHECK(number(row, "bytes_verified") == 256 * 1024);
        CHECK(number(row, "data_mismatches") == 0);
        CHECK(number(row, "transfers") == (expected[i].first == "4KiB" ? 64 : 16));

        // The point's own outputs: its summary is the row's metrics, its
        // config the base, the fixed and the swept values.
        const fs::path pdir = out / "points" / row.at("point");
        const Table ps = read_table(pdir / "summary.csv");
        REQUIRE(ps.rows.size() == 1);
        CHECK(std::vector<std::string>(t.header.begin() + kLeading.size(), t.header.end()) == ps.header);
        for (const auto& h : ps.header) {
            INFO("column " << h);
            CHECK(ps.rows[0].at(h) == row.at(h));
        }
        const Ini ini = read_ini(pdir / "config.ini");
        CHECK(ini.entries.at("workload.message-size").value == expected[i].first);
        CHECK(ini.entries.at("workload.window").value == expected[i].second);
        CHECK(ini.entries.at("workload.total-bytes").value == "256KiB");
        CHECK(ini.entries.at("sim.seed").value == "3");
    }
    CHECK(ids.size() == 4);
    std::set<std::string> logs;
    for (const auto& id : ids) logs.insert(id + ".log");
    CHECK(listing(out / "points") == ids);
    CHECK(listing(out / "logs") == logs);

    // Again: every point is done, nothing runs, nothing changes.
    std::map<std::string, FileStamp> stamps;
    for (const auto& id : ids) {
        stamps["points/" + id] = stamp(out / "points" / id);
        stamps["points/" + id + "/summary.csv"] = stamp(out / "points" / id / "summary.csv");
        stamps["logs/" + id + ".log"] = stamp(out / "logs" / (id + ".log"));
    }
    const std::string results = slurp(out / "results.csv");
    r = run_exe({"sweep", "cfg/s.ini", "--jobs", "2", "--out", "out"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(contains(r.err, "4 already done"));
    CHECK(slurp(out / "results.csv") == results);
    for (const auto& kv : stamps) {
        INFO(kv.first << " was rewritten");
        CHECK(stamp(out / kv.first) == kv.second);
    }
}

TEST_CASE("sweep records a point that fails at run time and runs the others", "[cli][sweep]") {
    TempDir tmp;
    // A time limit of 1 us is a configuration every run accepts; only the
    // run finds that the workload cannot finish by then.
    spit(tmp.path() / "f.ini",
         "[workload]\n"
         "message-size = 4KiB, 16KiB\n"
         "total-bytes = 256KiB\n"
         "[sim]\n"
         "time-limit = 1s, 1us\n");
    const Result r = run_exe({"sweep", "f.ini", "--jobs", "2", "--out", "out"}, tmp.path());
    INFO(describe(r));
    CHECK(r.status == 1);
    CHECK(contains(r.err, "2 ok"));
    CHECK(contains(r.err, "2 failed"));
    const fs::path out = tmp.path() / "out";
    const Table t = read_table(out / "results.csv");
    REQUIRE(t.rows.size() == 4);
    const std::vector<std::string> leading{"point", "workload.message-size", "sim.time-limit", "status", "exit_code",
                                           "error"};
    CHECK(std::vector<std::string>(t.header.begin(), t.header.begin() + leading.size()) == leading);
    for (const auto& c : kSummaryColumns) CHECK(t.has(c));
    for (std::size_t i = 0; i < 4; ++i) {
        const auto& row = t.rows[i];
        INFO("row " << i << ": point " << row.at("point") << ", error " << row.at("error"));
        const bool bad = row.at("sim.time-limit") == "1us";
        CHECK(bad == (i % 2 == 1));
        if (bad) {
            CHECK(row.at("status") == "failed");
            CHECK(row.at("exit_code") == "1");
            CHECK(!row.at("error").empty());
            for (const auto& c : kSummaryColumns) CHECK(row.at(c).empty());
            CHECK(!fs::exists(out / "points" / row.at("point")));
        } else {
            CHECK(row.at("status") == "ok");
            CHECK(row.at("exit_code") == "0");
            CHECK(row.at("error").empty());
            CHECK(number(row, "bytes_verified") == 256 * 1024);
            CHECK(fs::exists(out / "points" / row.at("point") / "summary.csv"));
        }
    }
}

TEST_CASE("sweep checks every point's configuration first: one a run refuses stops it, nothing run", "[cli][sweep]") {
    TempDir tmp;
    // dst-node 5 is in the parameter's range, so the plan accepts it; only
    // building the system finds that it has 2 nodes: the check does,
    // before any point runs.
    spit(tmp.path() / "f.ini",
         "[workload]\n"
         "message-size = 4KiB, 16KiB\n"
         "dst-node = 1, 5\n"
         "total-bytes = 256KiB\n");
    const Result r = run_exe({"sweep", "f.ini", "--jobs", "2", "--out", "out"}, tmp.path());
    INFO(describe(r));
    CHECK(r.status == 2);
    CHECK(contains(r.err, "f.ini: 2 of 4 points have a configuration a run refuses; nothing run"));
    CHECK(contains(r.err, "(workload.message-size = 4KiB, workload.dst-node = 5) and 1 other point: "));
    CHECK(contains(r.err, "workload.dst-node = 5 (from f.ini:3, sweep point)"));
    CHECK(contains(r.err, "2 nodes"));
    CHECK(!fs::exists(tmp.path() / "out"));
}

TEST_CASE("sweep: paths in a sweep file are relative to it, a shared bad one stops the sweep naming its line",
          "[cli][sweep][paths]") {
    TempDir tmp;
    fs::create_directories(tmp.path() / "sweeps");
    // A copy of the farm trace beside the sweep file's directory: found by
    // ../traces/farm.otf2 from there, not from the working directory.
    fs::copy(fs::path(VRDMASIM_SOURCE_DIR) / "configs" / "traces" / "farm", tmp.path() / "traces",
             fs::copy_options::recursive);
    const fs::path farm = tmp.path() / "traces" / "farm.otf2";
    const std::string rel = "../traces/farm.otf2";
    SECTION("a trace found from the sweep file's directory, not the working directory") {
        spit(tmp.path() / "sweeps" / "t.ini",
             "[topology]\nkind = torus\nx = 2\n[workload]\nkind = trace\n[trace]\nfile = " + rel +
                 "\n[rdma]\nstrategy = pin, prefault\n");
        const Result r = run_exe({"sweep", "sweeps/t.ini", "--jobs", "2", "--out", "out"}, tmp.path());
        INFO(describe(r));
        CHECK(r.status == 0);
        const Table t = read_table(tmp.path() / "out" / "results.csv");
        REQUIRE(t.rows.size() == 2);
        for (const auto& row : t.rows) {
            CHECK(row.at("status") == "ok");
            // The point's config.ini: the trace by its absolute path, from the sweep file's line.
            const Ini ini = read_ini(tmp.path() / "out" / "points" / row.at("point") / "config.ini");
            CHECK(fs::equivalent(ini.entries.at("trace.file").value, farm));
            CHECK(ini.entries.at("trace.file").origin == "sweeps/t.ini:7");
        }
    }
    SECTION("a missing trace: once, from the sweep file's line, nothing run") {
        spit(tmp.path() / "sweeps" / "t.ini",
             "[topology]\nkind = torus\nx = 2\n[workload]\nkind = trace\n[trace]\nfile = nothere.otf2\n"
             "[rdma]\nstrategy = pin, prefault, fault-tolerant\n");
        const Result r = run_exe({"sweep", "sweeps/t.ini", "--jobs", "2", "--out", "out"}, tmp.path());
        INFO(describe(r));
        CHECK(r.status == 2);
        CHECK(contains(r.err, "trace.file = sweeps/nothere.otf2 (from sweeps/t.ini:7)"));
        CHECK(!contains(r.err, "command line"));
        CHECK(contains(r.err, "every point of sweeps/t.ini is refused alike: 3 of 3 checked; nothing run"));
        CHECK(!fs::exists(tmp.path() / "out"));
    }
    SECTION("a config file's path is relative to the config file, also with --config") {
        fs::create_directories(tmp.path() / "cfg");
        spit(tmp.path() / "cfg" / "c.ini",
             "[topology]\nkind = torus\nx = 2\n[workload]\nkind = trace\n[trace]\nfile = " + rel + "\n");
        for (const std::vector<std::string>& how :
             {std::vector<std::string>{"run", "cfg/c.ini"}, std::vector<std::string>{"run", "--config", "cfg/c.ini"}}) {
            const Result r = run_exe(cat(how, {"--out", "o", "-q"}), tmp.path());
            INFO(describe(r));
            CHECK(r.status == 0);
            const Ini ini = read_ini(tmp.path() / "o" / "config.ini");
            CHECK(fs::equivalent(ini.entries.at("trace.file").value, farm));
            CHECK(ini.entries.at("trace.file").origin == "cfg/c.ini:7");
        }
        // The command line's is relative to the working directory.
        const Result r =
            run_exe({"run", "cfg/c.ini", "--trace.file=cfg/nothere.otf2", "--out", "o2", "-q"}, tmp.path());
        CHECK(r.status == 2);
        CHECK(contains(r.err, "trace.file = cfg/nothere.otf2 (from command line)"));
    }
}

TEST_CASE("sweep shards merge into the full sweep's results", "[cli][sweep]") {
    TempDir tmp;
    spit(tmp.path() / "s.ini", kSweep);
    Result r = run_exe({"sweep", "s.ini", "--jobs", "2", "--out", "full"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    r = run_exe({"sweep", "s.ini", "--shard", "0/2", "--jobs", "2", "--out", "a"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    r = run_exe({"sweep", "s.ini", "--shard=1/2", "--jobs=2", "--out=b"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);

    const Table full = read_table(tmp.path() / "full" / "results.csv");
    const Table ta = read_table(tmp.path() / "a" / "results.csv");
    const Table tb = read_table(tmp.path() / "b" / "results.csv");
    REQUIRE(full.rows.size() == 4);
    REQUIRE(ta.rows.size() == 2);
    REQUIRE(tb.rows.size() == 2);
    for (const auto& row : ta.rows) CHECK(std::regex_match(row.at("point"), std::regex("p000[02]-.*")));
    for (const auto& row : tb.rows) CHECK(std::regex_match(row.at("point"), std::regex("p000[13]-.*")));

    r = run_exe({"merge", "all.csv", "a/results.csv", "b/results.csv"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    const Table all = read_table(tmp.path() / "all.csv");
    CHECK(all.header == full.header);
    REQUIRE(all.rows.size() == 4);
    CHECK(without_columns(all, kHostColumns) == without_columns(full, kHostColumns));
    CHECK(!fs::exists(tmp.path() / "all.csv.partial"));

    // The order of the inputs does not matter.
    r = run_exe({"merge", "all2.csv", "b/results.csv", "a/results.csv"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(slurp(tmp.path() / "all2.csv") == slurp(tmp.path() / "all.csv"));

    // Bad merges: exit 2, the output not written.
    r = run_exe({"merge", "bad.csv", "a/results.csv", "missing.csv"}, tmp.path());
    CHECK(r.status == 2);
    CHECK(contains(r.err, "missing.csv"));
    CHECK(!fs::exists(tmp.path() / "bad.csv"));
    CHECK(!fs::exists(tmp.path() / "bad.csv.partial"));
    r = run_exe({"merge", "a/results.csv", "a/results.csv"}, tmp.path());
    CHECK(r.status == 2);
    // Another sweep's results are not a merge output: `merge a/results.csv
    // b/results.csv` once replaced a's. A sweep's own results.csv rebuilt
    // from its own shards (the Slurm merge job) is fine.
    const std::string a_results = slurp(tmp.path() / "a" / "results.csv");
    r = run_exe({"merge", "--allow-partial", "a/results.csv", "b/results.csv"}, tmp.path());
    CHECK(r.status == 2);
    CHECK(contains(r.err, "is not an earlier vrdmasim merge output"));
    CHECK(slurp(tmp.path() / "a" / "results.csv") == a_results);
    r = run_exe({"merge", "--allow-partial", "a/results.csv", "a/shards/results-0-of-2.csv"}, tmp.path());
    INFO(describe(r));
    CHECK(r.status == 0);
    CHECK(read_table(tmp.path() / "a" / "results.csv").rows.size() == 2);
    // One shard alone: incomplete, its missing points named; --allow-partial takes it.
    r = run_exe({"merge", "half.csv", "a/results.csv"}, tmp.path());
    CHECK(r.status == 2);
    CHECK(contains(r.err, "2 of its 4 points are in none of its 1 input(s)"));
    CHECK(contains(r.err, tb.rows.at(0).at("point")));
    CHECK(!fs::exists(tmp.path() / "half.csv"));
    r = run_exe({"merge", "--allow-partial", "half.csv", "a/results.csv"}, tmp.path());
    CHECK(r.status == 0);
    CHECK(contains(r.err, "2 of its 4 points are in none"));
    CHECK(read_table(tmp.path() / "half.csv").rows.size() == 2);
    // A shard twice.
    r = run_exe({"merge", "twice.csv", "a/results.csv", "b/results.csv", "a/shards/results-0-of-2.csv"}, tmp.path());
    CHECK(r.status == 2);
    CHECK(contains(r.err, "the same shard given twice?"));
    // The points, without running them.
    r = run_exe({"sweep", "s.ini", "--list-points"}, tmp.path());
    CHECK(r.status == 0);
    CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 4);
    CHECK(contains(r.out, full.rows.at(3).at("point")));
    CHECK(contains(r.err, "4 points (plan "));
    r = run_exe({"merge", "only.csv"}, tmp.path());
    CHECK(r.status == 2);
    CHECK(!fs::exists(tmp.path() / "only.csv"));
}

TEST_CASE("Ctrl-C during a sweep records the running points as interrupted, and a resume runs them", "[cli][sweep]") {
    // A terminal's Ctrl-C goes to the whole process group: the sweep and its
    // running points. Once, those points were recorded as failed.
    TempDir tmp;
    spit(tmp.path() / "long.ini",
         std::string("[workload]\nmessage-size = 64KiB, 1MiB\ntotal-bytes = ") + kStoppedRunBytes + "\n");
    const std::string exe = VRDMASIM_EXE, dir = tmp.path().string(), log = (tmp.path() / "sweep.log").string();
    const pid_t pid = fork();
    REQUIRE(pid >= 0);
    if (pid == 0) {
        setpgid(0, 0);   // its own group, as a shell's foreground job
        const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (fd < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0 || chdir(dir.c_str()) != 0) _exit(125);
        execl(exe.c_str(), exe.c_str(), "sweep", "long.ini", "--jobs", "2", "--out", "s", static_cast<char*>(nullptr));
        _exit(127);
    }
    setpgid(pid, pid);
    // Both points simulating (each has claimed its staged output), then the
    // group stopped where it is, Ctrl-C sent and the group let go: the
    // points are interrupted mid-run however fast the host, and need last
    // no longer than it takes to see them start.
    const auto start = std::chrono::steady_clock::now();
    auto simulating = [&]() {
        std::size_t n = 0;
        std::error_code ec;
        for (fs::directory_iterator it(tmp.path() / "s" / "points", ec), end; !ec && it != end; it.increment(ec))
            if (it->path().filename().string().rfind('.', 0) == 0 && fs::exists(it->path() / ".vrdmasim-run", ec)) ++n;
        return n;
    };
    while (simulating() < 2 && std::chrono::steady_clock::now() - start < std::chrono::seconds(20))
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    kill(-pid, SIGSTOP);
    CHECK(simulating() == 2);
    kill(-pid, SIGINT);
    kill(-pid, SIGCONT);
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    INFO(slurp(log));
    REQUIRE(WIFEXITED(ws));
    CHECK(WEXITSTATUS(ws) == 130);
    CHECK(contains(slurp(log), "2 interrupted"));
    const Table t = read_table(tmp.path() / "s" / "results.csv");
    REQUIRE(t.rows.size() == 2);
    for (const auto& row : t.rows) {
        CHECK(row.at("status") == "interrupted");
        CHECK(!fs::exists(tmp.path() / "s" / "points" / (row.at("point") + ".failed")));
    }
    // The resume runs them.
    const Result r = run_exe({"sweep", "long.ini", "--jobs", "2", "--out", "s"}, tmp.path());
    INFO(describe(r));
    CHECK(r.status == 0);
    const Table after = read_table(tmp.path() / "s" / "results.csv");
    REQUIRE(after.rows.size() == 2);
    for (const auto& row : after.rows) CHECK(row.at("status") == "ok");
}

TEST_CASE("replications: each point with several seeds, aggregate.csv with mean, sd and 95 % CI",
          "[cli][sweep][replications]") {
    TempDir tmp;
    // A variation source on: OS noise on the cores, a launcher's skew.
    spit(tmp.path() / "r.ini",
         "[sweep]\nreplications = 3\n[noise]\ncpu-jitter = 0.05\nstart-skew = 20us\n"
         "[workload]\nmessage-size = 4KiB, 64KiB\ntotal-bytes = 256KiB\n");
    Result r = run_exe({"sweep", "r.ini", "--jobs", "2", "--out", "s"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    const Table res = read_table(tmp.path() / "s" / "results.csv");
    REQUIRE(res.rows.size() == 6);
    const Table agg = read_table(tmp.path() / "s" / "aggregate.csv");
    REQUIRE(agg.rows.size() == 2);
    for (const auto& row : agg.rows) {
        CHECK(row.at("replications") == "3");
        CHECK(row.at("replications_ok") == "3");
        CHECK(number(row, "throughput_gbps_ci95") > 0);   // the seeds differ
        CHECK(number(row, "throughput_gbps_sd") > 0);
        // Text columns have no spread: no workload_sd, strategy_ci95.
        CHECK(row.at("workload") == "stream");
        CHECK(row.count("workload_sd") == 0);
        CHECK(row.count("strategy_ci95") == 0);
    }
    // The mean is the replications' mean.
    double sum = 0;
    for (const auto& row : res.rows)
        if (row.at("workload.message-size") == "4KiB") sum += number(row, "throughput_gbps");
    CHECK(number(agg.rows[0], "throughput_gbps") == Approx(sum / 3).epsilon(1e-6));
    // Without a variation source: refused, saying why, nothing written.
    spit(tmp.path() / "q.ini", "[sweep]\nreplications = 3\n[workload]\ntotal-bytes = 256KiB\n");
    r = run_exe({"sweep", "q.ini", "--out", "q"}, tmp.path());
    CHECK(r.status == 2);
    CHECK(contains(r.err, "no variation source is on"));
    CHECK(!fs::exists(tmp.path() / "q"));
}

TEST_CASE(
    "variation sources: the same seed gives the same figures, another seed others, and off by default no seed moves a figure",
    "[cli][run][replications]") {
    TempDir tmp;
    const std::vector<std::string> noisy{"--noise.cpu-jitter=0.05", "--noise.start-skew=20us",
                                         "--workload.total-bytes=256KiB"};
    auto summary_of = [&](const std::vector<std::string>& extra, const std::string& out) {
        const Result r = run_exe(cat(cat({"run", "--out", out, "-q"}, noisy), extra), tmp.path());
        REQUIRE(r.status == 0);
        return read_table(tmp.path() / out / "summary.csv");
    };
    const Table a = summary_of({"--sim.seed=1"}, "a"), b = summary_of({"--sim.seed=1"}, "b"),
                c = summary_of({"--sim.seed=2"}, "c");
    CHECK(without_columns(a, kHostColumns) == without_columns(b, kHostColumns));
    CHECK(number(a.rows[0], "end_to_end_us") != number(c.rows[0], "end_to_end_us"));
    // The daemons' phase: khugepaged's first pass comes at another time.
    auto thp = [&](const char* seed, const std::string& out) {
        const Result r = run_exe({"run", VRDMASIM_SOURCE_DIR "/configs/thp-collapse.ini", "--noise.daemon-phase=true",
                                  std::string("--sim.seed=") + seed, "--out", out, "-q"},
                                 tmp.path());
        REQUIRE(r.status == 3);   // the configuration's transfers fail by design (the old engine)
        return number(read_table(tmp.path() / out / "summary.csv").rows[0], "end_to_end_us");
    };
    CHECK(thp("1", "t1") != thp("2", "t2"));
    // Off: another seed changes no timing.
    const Result d1 =
        run_exe({"run", "--out", "d1", "-q", "--sim.seed=1", "--workload.total-bytes=256KiB"}, tmp.path());
    const Result d2 =
        run_exe({"run", "--out", "d2", "-q", "--sim.seed=2", "--workload.total-bytes=256KiB"}, tmp.path());
    REQUIRE(d1.status == 0);
    REQUIRE(d2.status == 0);
    CHECK(number(read_table(tmp.path() / "d1" / "summary.csv").rows[0], "end_to_end_us") ==
          number(read_table(tmp.path() / "d2" / "summary.csv").rows[0], "end_to_end_us"));
}

TEST_CASE("bad sweep files and options exit 2 and create nothing", "[cli][sweep][errors]") {
    TempDir tmp;
    spit(tmp.path() / "unknown.ini", "[workload]\nmessage-size = 4KiB, 16KiB\nwindw = 1, 2\n");
    spit(tmp.path() / "range.ini", "[dma]\nblock-size = 4KiB, 2MiB\n");
    spit(tmp.path() / "malformed.ini", "[dma]\nblock-size = 4KiB, 4Kib\n");
    spit(tmp.path() / "sweepkey.ini", "[sweep]\nbases = x.ini\n[workload]\nwindow = 1, 2\n");
    spit(tmp.path() / "nobase.ini", "[sweep]\nbase = nothere.ini\n[workload]\nwindow = 1, 2\n");
    spit(tmp.path() / "good.ini", kSweep);
    const auto before = listing(tmp.path());

    const std::vector<BadCase> cases{
        {"unknown key", {"unknown.ini"}, {"unknown.ini:3", "workload.windw", "did you mean 'workload.window'"}},
        {"listed value out of range", {"range.ini"}, {"range.ini:2", "dma.block-size", "'2MiB'"}},
        {"malformed listed value", {"malformed.ini"}, {"malformed.ini:2", "dma.block-size", "'4Kib'"}},
        {"unknown key in [sweep]", {"sweepkey.ini"}, {"sweepkey.ini:2", "sweep.bases"}},
        {"missing base config", {"nobase.ini"}, {"nobase.ini:2", "nothere.ini"}},
        {"missing sweep file", {"nothere.ini"}, {"nothere.ini"}},
        {"no sweep file", {}, {"sweep file"}},
        {"two sweep files", {"good.ini", "range.ini"}, {"only one sweep file"}},
        {"bad shard", {"good.ini", "--shard", "2/2"}, {"--shard"}},
        {"bad jobs", {"good.ini", "--jobs", "0"}, {"--jobs"}},
        {"unknown option", {"good.ini", "--frobnicate"}, {"--frobnicate"}},
    };
    for (const BadCase& c : cases) {
        INFO(c.what);
        const Result r = run_exe(cat(cat({"sweep"}, c.args), {"--out", "out"}), tmp.path());
        INFO(describe(r));
        CHECK(r.status == 2);
        for (const auto& e : c.expect) {
            INFO("expected on stderr: " << e);
            CHECK(contains(r.err, e));
        }
        CHECK(listing(tmp.path()) == before);
    }
}

TEST_CASE("calibration: the prototype's one-hop one-way latency is 1.3 us within 10%", "[cli][run][calibration]") {
    TempDir tmp;
    const std::string cfg = (fs::path(VRDMASIM_SOURCE_DIR) / "configs" / "exanest-prototype.ini").string();
    const Result r = run_exe({"run", cfg, "--out", "out", "-q"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    const Table s = read_table(tmp.path() / "out" / "summary.csv");
    REQUIRE(s.rows.size() == 1);
    const auto& row = s.rows[0];
    CHECK(number(row, "data_mismatches") == 0);
    CHECK(number(row, "transfers") == 200);
    // arXiv 2307.09371: 1.3 us user to user, one hop (two neighbouring QFDBs' network FPGAs).
    CHECK(number(row, "latency_us_p50") > 1.3 * 0.9);
    CHECK(number(row, "latency_us_p50") < 1.3 * 1.1);
    CHECK(row.at("latency_us_p50_by_hops").rfind("1:", 0) == 0);
}

TEST_CASE("the shipped thp-collapse config: old pins fail the original engine, FOLL_LONGTERM skips pinned ranges",
          "[cli][run][thp]") {
    // What configs/thp-collapse.ini and docs/os.md claim, for its three runs.
    TempDir tmp;
    const std::string cfg = (fs::path(VRDMASIM_SOURCE_DIR) / "configs" / "thp-collapse.ini").string();
    struct Case {
        std::string out;
        std::vector<std::string> extra;
    };
    auto run_case = [&](const Case& c) {
        const Result r = run_exe(cat({"run", cfg, "--out", c.out, "-q"}, c.extra), tmp.path());
        INFO(describe(r));
        // A run whose transfers failed exits 3 (failed transfers) and still writes its summary.
        REQUIRE(r.status == (c.out == "old" ? 3 : 0));
        const Table s = read_table(tmp.path() / c.out / "summary.csv");
        REQUIRE(s.rows.size() == 1);
        return std::make_pair(s.rows[0], json_file(tmp.path() / c.out / "stats.json"));
    };
    {   // old kernel, original engine: collapses of pinned ranges, faults in their windows, failed transfers
        const auto [row, stats] = run_case({"old", {}});
        CHECK(number(row, "thp_collapses") > 0);
        CHECK(sum_counters(stats, "vm.stale_pins") > 0);
        CHECK(number(row, "transfer_errors") > 0);
        CHECK(number(row, "data_mismatches") == 0);   // loud, never wrong data
    }
    {   // old kernel, fault-tolerant engine: the faults are survived, every byte verifies
        const auto [row, stats] = run_case({"ft", {"--dma.fault-tolerant=true"}});
        CHECK(number(row, "thp_collapses") > 0);
        CHECK(sum_counters(stats, "vm.stale_pins") > 0);
        CHECK(number(row, "transfer_errors") == 0);
        CHECK(number(row, "data_mismatches") == 0);
        CHECK(number(row, "bytes_verified") == 16 << 20);
    }
    {   // FOLL_LONGTERM: pinned ranges are skipped, nothing pinned is unmapped, every byte verifies
        const auto [row, stats] = run_case({"longterm", {"--vm.pins-block-thp-collapse=true"}});
        CHECK(sum_counters(stats, "vm.collapse_skipped_pinned") > 0);
        CHECK(sum_counters(stats, "vm.stale_pins") == 0);
        CHECK(number(row, "transfer_errors") == 0);
        CHECK(number(row, "data_mismatches") == 0);
        CHECK(number(row, "bytes_verified") == 16 << 20);
    }
}

// ===========================================================================
// Input, output and process safety

namespace {

// The run marker as a run on this host writes it (on another host: `host`).
std::string run_marker(std::string host = "") {
    if (host.empty()) {
        char buf[256] = {};
        REQUIRE(gethostname(buf, sizeof buf - 1) == 0);
        host = buf;
    }
    return "vrdmasim run output\nhost " + host + "\n";
}

// The pid of a process that has ended (forked, exited, reaped).
pid_t dead_pid() {
    const pid_t pid = fork();
    if (pid == 0) _exit(0);
    REQUIRE(pid > 0);
    int st = 0;
    REQUIRE(waitpid(pid, &st, 0) == pid);
    return pid;
}

}   // namespace

TEST_CASE("run replaces only a directory that provably holds an earlier run's output", "[cli][run][errors]") {
    TempDir tmp;
    // A config.ini among other things is not a run's output.
    const fs::path mine = tmp.path() / "mine";
    fs::create_directory(mine);
    spit(mine / "config.ini", "[workload]\nwindow = 2\n");
    spit(mine / "thesis.tex", "precious\n");
    const auto mine_before = snapshot(mine);
    Result r = run_exe(cat({"run"}, cat(kSmall, {"--out", "mine", "-q"})), tmp.path());
    INFO(describe(r));
    CHECK(r.status == 2);
    CHECK(contains(r.err, "refusing"));
    CHECK(snapshot(mine) == mine_before);

    // A run's output replaces: it carries the marker.
    r = run_exe(cat({"run"}, cat(kSmall, {"--out", "out", "-q"})), tmp.path());
    REQUIRE(r.status == 0);
    CHECK(fs::is_regular_file(tmp.path() / "out" / ".vrdmasim-run"));
    r = run_exe(cat({"run"}, cat(kSmall, {"--out", "out", "-q"})), tmp.path());
    CHECK(r.status == 0);

    // Not once somebody has put their own file in it.
    spit(tmp.path() / "out" / "notes.txt", "mine\n");
    const auto out_before = snapshot(tmp.path() / "out");
    r = run_exe(cat({"run"}, cat(kSmall, {"--out", "out", "-q"})), tmp.path());
    INFO(describe(r));
    CHECK(r.status == 2);
    CHECK(contains(r.err, "refusing"));
    CHECK(snapshot(tmp.path() / "out") == out_before);
    CHECK(listing(tmp.path()) == std::set<std::string>{"mine", "out"});
}

TEST_CASE("run --report writes report.html beside the outputs, a bad configuration writes nothing",
          "[cli][run][report]") {
    TempDir tmp;
    Result r = run_exe(cat({"run"}, cat(kSmall, {"--report", "--out", "out", "-q"})), tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(listing(tmp.path() / "out") == std::set<std::string>{".vrdmasim-run", "config.ini", "stats.json", "stats.txt",
                                                               "summary.csv", "report.html"});
    const std::string html = slurp(tmp.path() / "out" / "report.html");
    CHECK(contains(html, "<meta name=\"generator\" content=\"vrdmasim run --report\">"));
    CHECK(contains(html, "The run succeeded"));
    CHECK(contains(html, "<td class=\"key\">workload.total-bytes</td><td class=\"val\"><b>256KiB</b>"));
    CHECK((contains(html, "No noted steps (this run noted none)") || contains(html, "id=\"story-1\"")));
    CHECK_FALSE(contains(html, "<script"));
    // An earlier run's report is the run's own: replaced like the rest.
    r = run_exe(cat({"run"}, cat(kSmall, {"--report", "--out", "out", "-q"})), tmp.path());
    INFO(describe(r));
    CHECK(r.status == 0);
    // Without --report the next run's output has none.
    r = run_exe(cat({"run"}, cat(kSmall, {"--out", "out", "-q"})), tmp.path());
    CHECK(r.status == 0);
    CHECK_FALSE(fs::exists(tmp.path() / "out" / "report.html"));

    // A configuration that cannot run: exit 2, no directory, no report.
    const auto before = listing(tmp.path());
    r = run_exe({"run", "--report", "--dma.block-size=banana", "--out", "bad", "-q"}, tmp.path());
    INFO(describe(r));
    CHECK(r.status == 2);
    CHECK(listing(tmp.path()) == before);
}

TEST_CASE("run --report of a failed run says at the top that it failed and why", "[cli][run][report]") {
    TempDir tmp;
    const Result r = run_exe({"run", "--sim.time-limit=10us", "--report", "--out", "out"}, tmp.path());
    INFO(describe(r));
    CHECK(r.status == 1);
    CHECK(fs::exists(tmp.path() / "out" / "error.txt"));
    CHECK(contains(r.out, "report.html says why"));
    const std::string html = slurp(tmp.path() / "out" / "report.html");
    const auto banner = html.find("THIS RUN FAILED");
    REQUIRE(banner != std::string::npos);
    CHECK(banner < html.find("id=\"summary\""));
    CHECK(contains(html, "sim.time-limit = 10us"));
    CHECK(contains(html, "No summary: the run failed"));
    CHECK_FALSE(contains(html, "The run succeeded"));
}

TEST_CASE("run never replaces a report.html that vrdmasim did not write", "[cli][run][report][errors]") {
    TempDir tmp;
    Result r = run_exe(cat({"run"}, cat(kSmall, {"--out", "out", "-q"})), tmp.path());
    REQUIRE(r.status == 0);
    // The student's own report, put into an earlier run's directory.
    spit(tmp.path() / "out" / "report.html", "<html><body>my notes on run 1</body></html>\n");
    const auto before = snapshot(tmp.path() / "out");
    for (bool with_report : {true, false}) {
        INFO("--report " << with_report);
        std::vector<std::string> args = cat({"run"}, cat(kSmall, {"--out", "out", "-q"}));
        if (with_report) args.push_back("--report");
        r = run_exe(args, tmp.path());
        INFO(describe(r));
        CHECK(r.status == 2);
        CHECK(contains(r.err, "refusing"));
        CHECK(snapshot(tmp.path() / "out") == before);
    }
    CHECK(listing(tmp.path()) == std::set<std::string>{"out"});
}

namespace {

// A long run (`extra` on top of kLongRunBytes) into DIR/o, started in the
// background, its stderr into `err` (or /dev/null); returns once it is
// simulating (its staged outputs claimed), with its pid.
pid_t start_long_run(const fs::path& dir, const std::vector<std::string>& extra, const fs::path& err) {
    const std::string exe = VRDMASIM_EXE;
    std::vector<std::string> args = {exe, "run", std::string("--workload.total-bytes=") + kLongRunBytes};
    args.insert(args.end(), extra.begin(), extra.end());
    for (const char* a : {"--out", "o", "-q"}) args.emplace_back(a);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    const pid_t pid = fork();
    if (pid == 0) {
        const int out = open("/dev/null", O_WRONLY);
        const int fd = err.empty() ? out : open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
        if (out < 0 || fd < 0 || dup2(out, 1) < 0 || dup2(fd, 2) < 0 || chdir(dir.c_str()) != 0) _exit(125);
        execv(exe.c_str(), argv.data());
        _exit(127);
    }
    const fs::path staging = dir / (".o.partial-" + std::to_string(pid));
    const auto start = std::chrono::steady_clock::now();
    std::error_code ec;
    while (pid > 0 && !fs::exists(staging / ".vrdmasim-run", ec) &&
           std::chrono::steady_clock::now() - start < std::chrono::seconds(20))
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));   // simulating
    return pid;
}

int signal_and_wait(pid_t pid, int sig) {
    kill(pid, sig);
    int ws = 0;
    while (waitpid(pid, &ws, 0) < 0 && errno == EINTR) {
    }
    return ws;
}

}   // namespace

TEST_CASE("a run killed mid-way leaves nothing at its --out path, the next run clears its leftover",
          "[cli][run][errors]") {
    // SIGKILL gives the run no chance to clean up: it used to leave an
    // empty directory (its claim marker only) at --out, against "outputs
    // complete or not at all".
    TempDir tmp;
    const pid_t pid = start_long_run(tmp.path(), {}, {});
    REQUIRE(pid > 0);
    const int ws = signal_and_wait(pid, SIGKILL);
    REQUIRE(WIFSIGNALED(ws));
    std::error_code ec;
    CHECK(!fs::exists(tmp.path() / "o", ec));
    CHECK(listing(tmp.path()) == std::set<std::string>{".o.partial-" + std::to_string(pid)});
    const Result r = run_exe(cat({"run"}, cat(kSmall, {"--out", "o", "-q"})), tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(listing(tmp.path()) == std::set<std::string>{"o"});
}

TEST_CASE("a run interrupted by a signal says so, removes what it began and ends by that signal",
          "[cli][run][errors]") {
    // It used to end silently (SIGINT: status 130, no word) and leave its
    // staged outputs (with --trace, the trace written so far) for the next
    // run to find.
    for (const int sig : {SIGINT, SIGTERM}) {
        TempDir tmp;
        const fs::path err = tmp.path() / "err.txt";
        const pid_t pid = start_long_run(tmp.path(), {"--trace"}, err);
        REQUIRE(pid > 0);
        const int ws = signal_and_wait(pid, sig);
        INFO(slurp(err));
        REQUIRE(WIFSIGNALED(ws));
        CHECK(WTERMSIG(ws) == sig);
        CHECK(contains(slurp(err), std::string("vrdmasim: interrupted by ") + (sig == SIGINT ? "SIGINT" : "SIGTERM")));
        CHECK(contains(slurp(err), "no output written to --out o"));
        CHECK(listing(tmp.path()) == std::set<std::string>{"err.txt"});
    }
}

TEST_CASE("a trace or log the disk cannot take fails the run cleanly, leaving nothing", "[cli][run][errors]") {
    // A file-size limit (ulimit -f) fails the write as a full disk does:
    // once, SIGXFSZ killed the run with no word, and a full disk ended in
    // SystemC's E549 dump of the exception thrown while simulating.
    for (const char* opt : {"--trace", "--log"}) {
        TempDir tmp;
        const Result r =
            run_exe({"run", opt, "--workload.total-bytes=16MiB", "--out", "o", "-q"}, tmp.path(), 64 * 1024);
        INFO(opt << "\n" << describe(r));
        CHECK(r.status == 1);
        CHECK(contains(r.err, std::string(opt) == "--trace" ? "cannot write trace file" : "cannot write event log"));
        CHECK(contains(r.err, "File too large"));
        CHECK(!contains(r.err, "E549"));
        CHECK(listing(tmp.path()).empty());
    }
}

TEST_CASE("run removes what killed runs left behind, and only that", "[cli][run]") {
    TempDir tmp;
    const pid_t dead = dead_pid();
    const std::string stale = ".out.partial-" + std::to_string(dead);
    const std::string stale_old = ".other.old-" + std::to_string(dead);
    const std::string unmarked = ".thing.partial-" + std::to_string(dead);
    const std::string alive = ".out.partial-" + std::to_string(getpid());
    const std::string elsewhere = ".far.partial-" + std::to_string(dead);   // another host's pid
    for (const auto& d : {stale, stale_old, unmarked, alive, elsewhere}) {
        fs::create_directory(tmp.path() / d);
        spit(tmp.path() / d / "trace.json", "[");
    }
    for (const auto& d : {stale, stale_old, alive}) spit(tmp.path() / d / ".vrdmasim-run", run_marker());
    spit(tmp.path() / elsewhere / ".vrdmasim-run", run_marker("some-other-host.invalid"));
    const Result r = run_exe(cat({"run"}, cat(kSmall, {"--out", "out", "-q"})), tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(listing(tmp.path()) == std::set<std::string>{"out", unmarked, alive, elsewhere});
}

TEST_CASE("config.ini of a config file whose name holds a newline re-runs", "[cli][run]") {
    TempDir tmp;
    const std::string name = "odd\n[dma]\nblock-size = 1.ini";
    spit(tmp.path() / name, "[workload]\ntotal-bytes = 128KiB\n");
    Result r = run_exe({"run", name, "--out", "a", "-q"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    const std::string ini = slurp(tmp.path() / "a" / "config.ini");
    CHECK(contains(ini, "# from odd\\n[dma]\\nblock-size = 1.ini:2\n"));
    r = run_exe({"run", "a/config.ini", "--out", "b", "-q"}, tmp.path());
    INFO(describe(r));
    CHECK(r.status == 0);
    CHECK(slurp(tmp.path() / "b" / "summary.csv").size() > 0);
}

TEST_CASE("config.ini of a run whose kind, set over a base file, does not read its setting re-runs", "[cli][run]") {
    // The base file's total-bytes (alltoall reads rounds, not bytes) is only
    // noted; config.ini writes it at the default with the setting as a
    // comment, or its re-run, one layer, would refuse it.
    TempDir tmp;
    spit(tmp.path() / "base.ini", "[workload]\ntotal-bytes = 48KiB\nmessage-size = 4KiB\niterations = 2\n");
    Result r = run_exe({"run", "base.ini", "--workload.kind=alltoall", "--out", "a"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(contains(r.err + r.out, "workload.total-bytes = 48KiB (from base.ini:2) was not read"));
    const std::string ini = slurp(tmp.path() / "a" / "config.ini");
    CHECK(contains(ini,
                   "# set to 48KiB (from base.ini:2), not used: workload.kind = alltoall (from command line), "
                   "set over it, does not read it\ntotal-bytes = 16MiB\n"));
    r = run_exe({"run", "a/config.ini", "--out", "b"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    CHECK(!contains(r.err + r.out, "was not read"));
    CHECK(slurp(tmp.path() / "a" / "stats.json") == slurp(tmp.path() / "b" / "stats.json"));
}

TEST_CASE("a megabyte-long unknown key fails at once with a short message", "[cli][errors]") {
    TempDir tmp;
    const std::string key(1 << 20, 'k');
    spit(tmp.path() / "huge.ini", "[workload]\n" + key + " = 1\n");
    spit(tmp.path() / "huge-sweep.ini", "[workload]\nwindow = 1, 2\n" + key + " = 1\n");
    for (const auto& args : {std::vector<std::string>{"run", "huge.ini", "--out", "o"},
                             std::vector<std::string>{"sweep", "huge-sweep.ini", "--out", "o"}}) {
        const auto t0 = std::chrono::steady_clock::now();
        const Result r = run_exe(args, tmp.path());
        const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        INFO(args[0] << ": exit status " << r.status << ", " << r.err.size() << " bytes on stderr");
        CHECK(r.status == 2);
        CHECK(seconds < 10);
        CHECK(r.err.size() < 1000);
        CHECK(contains(r.err, "unknown key"));
        CHECK(contains(r.err, "1048585 bytes"));
        CHECK_FALSE(fs::exists(tmp.path() / "o"));
    }
}

TEST_CASE("a key set twice in one config file exits 2 naming both lines", "[cli][errors]") {
    TempDir tmp;
    spit(tmp.path() / "twice.ini", "[workload]\nwindow = 2\ntotal-bytes = 64KiB\nwindow = 4\n");
    const Result r = run_exe({"run", "twice.ini", "--out", "o"}, tmp.path());
    INFO(describe(r));
    CHECK(r.status == 2);
    CHECK(contains(r.err, "twice.ini:4"));
    CHECK(contains(r.err, "already set on line 2"));
    CHECK_FALSE(fs::exists(tmp.path() / "o"));
}

TEST_CASE("a sweep file has the config file grammar: byte order mark, quoted values", "[cli][sweep]") {
    TempDir tmp;
    spit(tmp.path() / "s.ini",
         "\xEF\xBB\xBF[workload]\n"
         "kind = \"stream\"   # quoted, with a comment\n"
         "total-bytes = 128KiB\n"
         "window = 1, 2\n");
    const Result r = run_exe({"sweep", "s.ini", "--jobs", "2", "--out", "out"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    const Table t = read_table(tmp.path() / "out" / "results.csv");
    REQUIRE(t.rows.size() == 2);
    for (const auto& row : t.rows) CHECK(row.at("status") == "ok");
}

TEST_CASE("sweep never writes into a directory that is not a sweep's", "[cli][sweep][errors]") {
    TempDir tmp;
    spit(tmp.path() / "s.ini", kSweep);
    fs::create_directory(tmp.path() / "thesis");
    spit(tmp.path() / "thesis" / "chapter1.tex", "precious\n");
    const auto before = snapshot(tmp.path() / "thesis");
    const Result r = run_exe({"sweep", "s.ini", "--out", "thesis"}, tmp.path());
    INFO(describe(r));
    CHECK(r.status == 2);
    CHECK(contains(r.err, "thesis"));
    CHECK(contains(r.err, "refusing"));
    CHECK(snapshot(tmp.path() / "thesis") == before);
}

TEST_CASE("a sweep directory is locked while a sweep or its points run and stale partials go", "[cli][sweep]") {
    TempDir tmp;
    spit(tmp.path() / "s.ini", kSweep);
    Result r = run_exe({"sweep", "s.ini", "--jobs", "2", "--out", "out"}, tmp.path());
    INFO(describe(r));
    REQUIRE(r.status == 0);
    const fs::path out = tmp.path() / "out";
    const Table t = read_table(out / "results.csv");
    REQUIRE(t.rows.size() == 4);
    const std::string id = t.rows[0].at("point");

    // A point that is still running (here: this process holds the lock, as
    // the orphaned points of a killed sweep do): a resume refuses and
    // changes nothing.
    fs::remove_all(out / "points" / id);
    const auto before = snapshot(out);
    {
        const int fd = open((out / ".vrdmasim-sweep").c_str(), O_RDWR);
        REQUIRE(fd >= 0);
        REQUIRE(flock(fd, LOCK_EX | LOCK_NB) == 0);
        r = run_exe({"sweep", "s.ini", "--jobs", "2", "--out", "out"}, tmp.path());
        close(fd);
    }
    INFO(describe(r));
    CHECK(r.status == 2);
    CHECK(contains(r.err, "still running"));
    CHECK(snapshot(out) == before);

    // Killed points' partial outputs are removed on the next resume.
    const std::string stale = "." + id + ".partial-" + std::to_string(dead_pid());
    fs::create_directory(out / "points" / stale);
    spit(out / "points" / stale / ".vrdmasim-run", run_marker());
    spit(out / "points" / stale / "trace.json", "[");
    r = run_exe({"sweep", "s.ini", "--jobs", "2", "--out", "out"}, tmp.path());
    INFO(describe(r));
    CHECK(r.status == 0);
    CHECK(contains(r.err, "3 already done"));
    CHECK_FALSE(fs::exists(out / "points" / stale));
    CHECK(fs::exists(out / "points" / id / "summary.csv"));
}

TEST_CASE("merge refuses an output that is a directory or one of its inputs under another name", "[cli][merge]") {
    TempDir tmp;
    const std::string header = "point,status\n";
    spit(tmp.path() / "a.csv", header + "p0000-00000000,ok\n");
    spit(tmp.path() / "b.csv", header + "p0001-00000000,ok\n");
    fs::create_directory(tmp.path() / "dir");
    const auto before = snapshot(tmp.path());
    for (const auto& args : {std::vector<std::string>{"merge", "dir", "a.csv", "b.csv"},
                             std::vector<std::string>{"merge", "./a.csv", "a.csv", "b.csv"},
                             std::vector<std::string>{"merge", "a.csv", "b.csv", "./a.csv"}}) {
        const Result r = run_exe(args, tmp.path());
        INFO(args[1] << ": " << describe(r));
        CHECK(r.status == 2);
        CHECK(snapshot(tmp.path()) == before);
    }
    // Files no sweep wrote (no plan beside them): refused, or taken unchecked.
    Result r = run_exe({"merge", "all.csv", "a.csv", "b.csv"}, tmp.path());
    CHECK(r.status == 2);
    CHECK(contains(r.err, "no sweep plan beside it"));
    r = run_exe({"merge", "--allow-partial", "all.csv", "a.csv", "b.csv"}, tmp.path());
    INFO(describe(r));
    CHECK(r.status == 0);
    CHECK(contains(r.err, "a.csv: no plan beside it, merged unchecked"));
    CHECK(slurp(tmp.path() / "all.csv") == header + "p0000-00000000,ok\np0001-00000000,ok\n");
    // Its own earlier output is replaced; anybody else's file is not: not a
    // sweep's results (`merge a/results.csv b/results.csv` once destroyed
    // a's), not its output once edited by hand.
    r = run_exe({"merge", "--allow-partial", "all.csv", "b.csv", "a.csv"}, tmp.path());
    CHECK(r.status == 0);
    const std::string edited = header + "p0000-00000000,mine\n";
    for (const char* victim : {"a.csv", "all.csv"}) {
        if (std::string(victim) == "all.csv") spit(tmp.path() / "all.csv", edited);
        const std::string kept = slurp(tmp.path() / victim);
        r = run_exe({"merge", "--allow-partial", victim, "b.csv"}, tmp.path());
        INFO(victim << ": " << describe(r));
        CHECK(r.status == 2);
        CHECK(contains(r.err, "is not an earlier vrdmasim merge output"));
        CHECK(slurp(tmp.path() / victim) == kept);
    }
}

TEST_CASE("merge onto a full disk says why, and leaves nothing half-written", "[cli][merge][errors]") {
    TempDir tmp;
    std::string rows = "point,status,note\n";
    for (int i = 0; i < 200; ++i) {
        char id[32];
        std::snprintf(id, sizeof id, "p%04d-00000000", i);
        rows += std::string(id) + ",ok,a note long enough to make the merged file grow\n";
    }
    spit(tmp.path() / "a.csv", rows);
    // Writes past 4 KiB fail as on a full disk: the merge is 12 KiB.
    const Result r = run_exe({"merge", "--allow-partial", "all.csv", "a.csv"}, tmp.path(), 4096);
    INFO(describe(r));
    CHECK(r.status == 1);
    CHECK(contains(r.err, "cannot write"));
    CHECK(contains(r.err, std::strerror(EFBIG)));
    CHECK(!fs::exists(tmp.path() / "all.csv"));
    for (const auto& e : fs::directory_iterator(tmp.path()))
        CHECK(e.path().filename().string().find("partial") == std::string::npos);
}

TEST_CASE("every subcommand rejects abbreviated, unknown or extra options", "[cli][errors]") {
    TempDir tmp;
    spit(tmp.path() / "s.ini", kSweep);
    const std::vector<std::vector<std::string>> cases{
        {"sweep", "s.ini", "--output", "o"},
        {"sweep", "s.ini", "--jobsX", "2", "--out", "o"},
        {"sweep", "s.ini", "--jo", "2", "--out", "o"},
        {"sweep", "s.ini", "--jobs", "-1", "--out", "o"},
        {"sweep", "s.ini", "--jobs", "2x", "--out", "o"},
        {"params", "extra"},
        {"params", "--verbose"},
        {"bench", "extra"},
        {"merge", "--frobnicate", "a.csv", "b.csv"},
        {"bench", "--iterations", "-1", "--scale", "--max-nodes", "4"},
        {"bench", "--iterations", "4x", "--scale", "--max-nodes", "4"},
        {"bench", "--max-nodes", "-1", "--scale"},
        {"bench", "--memory", "--scale"},
        {"bench", "--memory", "--max-nodes", "64"},
        {"bench", "--vol", "1MiB"},
        {"bench", "--volume", "1 parsec"},
        {"bench-bare", "--iterations", "-1"},
        {"bench-smmu", "--iterations", "0"},
    };
    const auto before = listing(tmp.path());
    for (const auto& c : cases) {
        std::string line;
        for (const auto& a : c) line += " " + a;
        const Result r = run_exe(c, tmp.path());
        INFO("vrdmasim" << line << ": " << describe(r));
        CHECK(r.status == 2);
        CHECK(contains(r.err, "error"));
        CHECK(listing(tmp.path()) == before);
    }
    // Options given in full still work.
    const Result p = run_exe({"params", "--help"}, tmp.path());
    CHECK(p.status == 0);
    const Result s = run_exe({"sweep", "--help"}, tmp.path());
    CHECK(s.status == 0);
    CHECK(contains(s.out, "--jobs"));
}

TEST_CASE("bench --volume is range-checked up front, and bench keeps its temporary files in $TMPDIR",
          "[cli][bench][errors]") {
    TempDir tmp;
    const fs::path scratch = tmp.path() / "scratch";
    fs::create_directory(scratch);
    capture_dir();   // the test's own captures stay where they are
    REQUIRE(setenv("TMPDIR", scratch.c_str(), 1) == 0);
    // Once: no range check, "exit status 512", exit 1, the temporary
    // directory left behind in /tmp.
    Result r = run_exe({"bench", "--volume", "100GiB"}, tmp.path());
    INFO(describe(r));
    CHECK(r.status == 2);
    CHECK(contains(r.err, "bench --volume 100GiB"));
    CHECK(contains(r.err, "workload.total-bytes"));
    CHECK(!contains(r.err, "exit status 512"));
    CHECK(fs::is_empty(scratch));
    // $TMPDIR is where it makes its directory.
    REQUIRE(setenv("TMPDIR", (tmp.path() / "no-such-dir").c_str(), 1) == 0);
    r = run_exe({"bench", "--scale", "--max-nodes", "4", "--iterations", "1"}, tmp.path());
    INFO(describe(r));
    CHECK(r.status == 1);
    CHECK(contains(r.err, (tmp.path() / "no-such-dir" / "vrdmasim-bench-").string()));
    unsetenv("TMPDIR");
}

TEST_CASE("bench passes a size with a space to its child runs as one argument", "[cli][bench]") {
    TempDir tmp;
    const Result r = run_exe({"bench", "--volume", "1 MiB"}, tmp.path());
    INFO(describe(r));
    CHECK(r.status == 0);
    CHECK(contains(r.out, "stream, 1 MiB in 1 MiB messages, through the SMMU: 4096 packets"));
}

// The progress line's ETA (src/sim/progress.hpp) on made-up runs: the rate of
// the whole run and the recent rate.
namespace {
std::vector<vrdmasim::RunProgress::Sample> run_of(const std::vector<std::pair<double, std::uint64_t>>& points) {
    std::vector<vrdmasim::RunProgress::Sample> s;
    for (const auto& p : points) s.push_back({p.first, p.second});
    return s;
}
// Transfers done one per `each` host seconds from `from` (at `first`) to `to` done.
void steady(std::vector<std::pair<double, std::uint64_t>>& pts, double& t, std::uint64_t from, std::uint64_t to,
            double each) {
    for (std::uint64_t d = from + 1; d <= to; ++d) pts.push_back({t += each, d});
}
}   // namespace

TEST_CASE("progress ETA: a steady run gives one figure, once enough of it has passed", "[cli][progress]") {
    using vrdmasim::RunProgress;
    std::vector<std::pair<double, std::uint64_t>> pts{{0.0, 0}};
    double t = 0;
    steady(pts, t, 0, 50, 1.0);   // 50 of 100 in 50 s
    const RunProgress::Eta e = RunProgress::estimate(run_of(pts), 100);
    CHECK(e.sure);
    CHECK(e.low == Approx(50.0));
    CHECK(e.high == Approx(50.0));
    const std::string l = RunProgress::line(1.0, {50, 100}, 50.0, 10.0, e);
    INFO(l);
    CHECK(l.find("| ETA 50.0 s") != std::string::npos);
    CHECK(l.find(" to ") == std::string::npos);
    CHECK(l.find('?') == std::string::npos);
}

TEST_CASE("progress ETA: a run that slows down shows the range, which holds the truth", "[cli][progress]") {
    using vrdmasim::RunProgress;
    std::vector<std::pair<double, std::uint64_t>> pts{{0.0, 0}};
    double t = 0;
    steady(pts, t, 0, 20, 1.0);   // fast at first (memory still free)
    steady(pts, t, 20, 30, 4.0);   // then four times slower (pressure)
    // 30 of 100 after 60 s; at the slow rate 280 s are left. The whole
    // run's average says 140 s, the recent rate 280 s.
    const RunProgress::Eta e = RunProgress::estimate(run_of(pts), 100);
    CHECK(e.sure);
    CHECK(e.low == Approx(140.0));
    CHECK(e.high == Approx(280.0));
    const std::string l = RunProgress::line(1.0, {30, 100}, t, 10.0, e);
    INFO(l);
    CHECK(l.find("| ETA 2m20s to 4m40s") != std::string::npos);
}

TEST_CASE("progress ETA: too little of the run has passed to tell", "[cli][progress]") {
    using vrdmasim::RunProgress;
    std::vector<std::pair<double, std::uint64_t>> pts{{0.0, 0}};
    double t = 0;
    steady(pts, t, 0, 2, 1.0);   // 2 of 100
    const RunProgress::Eta e = RunProgress::estimate(run_of(pts), 100);
    CHECK_FALSE(e.sure);
    const std::string l = RunProgress::line(1.0, {2, 100}, t, 10.0, e);
    INFO(l);
    CHECK(l.find("| ETA 1m38s?") != std::string::npos);
    // Nothing done: no ETA at all.
    CHECK(RunProgress::estimate(run_of({{0.0, 0}, {5.0, 0}}), 100).low < 0);
    CHECK(RunProgress::line(1.0, {0, 100}, 5.0, 10.0, {}).find("ETA") == std::string::npos);
}

TEST_CASE("an application's own race is said by the workload that counts it, and only where it raced",
          "[cli][run][registry]") {
    // The overlap workload declares this finding (workloads/registry.hpp,
    // WorkloadKind::findings); the command line names no workload.
    TempDir tmp;
    const std::string cfg = (fs::path(VRDMASIM_SOURCE_DIR) / "configs" / "overlap" / "base.ini").string();
    const std::string said = "transfer(s) corrupted by the application's own stores into buffers in flight";
    const Result raced = run_exe({"run", cfg, "--workload.iterations=20", "--out", "raced", "-q"}, tmp.path());
    INFO(describe(raced));
    REQUIRE(raced.status == 0);
    const Table s = read_table(tmp.path() / "raced" / "summary.csv");
    REQUIRE(s.rows.size() == 1);
    const double corrupted = number(s.rows[0], "overlap_corrupted_transfers");
    CHECK(corrupted > 0);
    CHECK(contains(raced.err, "vrdmasim: " + std::to_string(static_cast<long>(corrupted)) + " " + said));
    // The guard keeps the program off its buffers in flight: nothing to say.
    const Result guarded = run_exe(
        {"run", cfg, "--workload.iterations=20", "--rdma.buffer-guard=mprotect", "--out", "guarded", "-q"}, tmp.path());
    INFO(describe(guarded));
    REQUIRE(guarded.status == 0);
    CHECK(!contains(guarded.err, said));
}
