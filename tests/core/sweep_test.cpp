// Tests of parameter sweeps: planning, validation, running (with fake_run
// standing in for `vrdmasim run`), failures, resume, shards, merging.
#include <catch2/catch.hpp>

#include "src/core/csv.hpp"
#include "src/core/params.hpp"
#include "src/tools/sweep.hpp"
#include "src/tools/sweep_internal.hpp"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

namespace fs = std::filesystem;
using namespace vrdmasim;
using Catch::Matchers::Contains;

namespace {

struct TempDir {
    fs::path path;
    TempDir() {
        std::string tmpl = (fs::temp_directory_path() / "vrdmasim-sweep-test-XXXXXX").string();
        std::vector<char> buf(tmpl.begin(), tmpl.end());
        buf.push_back('\0');
        REQUIRE(mkdtemp(buf.data()) != nullptr);
        path = buf.data();
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    std::string operator/(const std::string& name) const { return (path / name).string(); }
};

struct CerrCapture {
    std::ostringstream ss;
    std::streambuf* old;
    CerrCapture() : old(std::cerr.rdbuf(ss.rdbuf())) {}
    ~CerrCapture() { std::cerr.rdbuf(old); }
    std::string str() const { return ss.str(); }
};

void write_file(const std::string& path, const std::string& text) {
    std::ofstream os(path, std::ios::binary);
    os << text;
    REQUIRE(os.good());
}

std::string read_file(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
}

std::vector<std::string> read_lines(const std::string& path) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    std::string l;
    while (std::getline(in, l))
        if (!l.empty()) lines.push_back(l);
    return lines;
}

void declare(ParamRegistry& reg) {
    ParamSet workload("workload", "the traffic");
    workload.size("message-size", "4KiB", "bytes per message");
    workload.integer("window", "4", "messages in flight").range("1", "1024");
    workload.choice("pattern", "seq", {"seq", "rand"}, "address pattern");
    workload.string("tag", "x", "free text");
    reg.add(workload);
    ParamSet dma("dma", "the DMA engine");
    dma.size("block-size", "4KiB", "bytes per descriptor");
    reg.add(dma);
}

// A table read from a results.csv: header and rows by point id.
struct Table {
    std::vector<std::string> header;
    std::vector<std::map<std::string, std::string>> rows;
    const std::map<std::string, std::string>& row(std::size_t i) const { return rows.at(i); }
};

Table read_table(const std::string& path) {
    auto data = read_csv_file(path);
    REQUIRE(!data.empty());
    Table t;
    t.header = data[0];
    for (std::size_t i = 1; i < data.size(); ++i) {
        REQUIRE(data[i].size() == t.header.size());
        std::map<std::string, std::string> r;
        for (std::size_t c = 0; c < t.header.size(); ++c) r[t.header[c]] = data[i][c];
        t.rows.push_back(r);
    }
    return t;
}

SweepOptions options(const std::string& sweep, const std::string& out, int jobs = 2) {
    SweepOptions o;
    o.sweep_file = sweep;
    o.out_dir = out;
    o.executable = FAKE_RUN_EXE;
    o.jobs = jobs;
    return o;
}

const char* kSweep =
    "# a test sweep\n"
    "[workload]\n"
    "message-size = 4KiB, 64KiB   # swept\n"
    "window = 1, 2, 3\n"
    "\n"
    "[dma]\n"
    "block-size = 8KiB ; fixed\n";

}   // namespace

TEST_CASE("plan_sweep: cartesian product in row-major order with stable ids", "[sweep]") {
    ParamRegistry reg;
    declare(reg);
    TempDir dir;
    write_file(dir / "s.ini", kSweep);
    SweepPlan plan = plan_sweep(reg, dir / "s.ini");

    REQUIRE(plan.swept_keys == std::vector<std::string>{"workload.message-size", "workload.window"});
    REQUIRE(plan.fixed == std::vector<std::pair<std::string, std::string>>{{"dma.block-size", "8KiB"}});
    REQUIRE(plan.base_configs.empty());
    REQUIRE(plan.points.size() == 6);

    const char* expect[6][2] = {{"4KiB", "1"},  {"4KiB", "2"},  {"4KiB", "3"},
                                {"64KiB", "1"}, {"64KiB", "2"}, {"64KiB", "3"}};
    std::set<std::string> ids;
    std::regex id_re("p[0-9]{4}-[0-9a-f]{8}");
    for (int i = 0; i < 6; ++i) {
        const SweepPoint& p = plan.points[i];
        CHECK(p.index == i);
        REQUIRE(p.assignment.size() == 2);
        CHECK(p.assignment[0] == std::make_pair(std::string("workload.message-size"), std::string(expect[i][0])));
        CHECK(p.assignment[1] == std::make_pair(std::string("workload.window"), std::string(expect[i][1])));
        CHECK(std::regex_match(p.id, id_re));
        CHECK(p.id.substr(0, 5) == "p000" + std::to_string(i));
        ids.insert(p.id);
    }
    CHECK(ids.size() == 6);
    // FNV-1a 64 of the sorted "key=value\n" assignments, low 32 bits.
    CHECK(plan.points[0].id == "p0000-b5f8dcdf");

    // Stable: planning again gives the same ids.
    SweepPlan again = plan_sweep(reg, dir / "s.ini");
    for (int i = 0; i < 6; ++i) CHECK(again.points[i].id == plan.points[i].id);

    // A changed fixed value changes every id.
    write_file(dir / "s2.ini", "[workload]\nmessage-size = 4KiB, 64KiB\nwindow = 1, 2, 3\n[dma]\nblock-size = 16KiB\n");
    SweepPlan changed = plan_sweep(reg, dir / "s2.ini");
    REQUIRE(changed.points.size() == 6);
    for (int i = 0; i < 6; ++i) CHECK(changed.points[i].id != plan.points[i].id);

    // Appending a value to the first key keeps the earlier points' ids.
    write_file(dir / "s3.ini",
               "[workload]\nmessage-size = 4KiB, 64KiB, 1MiB\nwindow = 1,2,3\n[dma]\nblock-size = 8KiB\n");
    SweepPlan grown = plan_sweep(reg, dir / "s3.ini");
    REQUIRE(grown.points.size() == 9);
    for (int i = 0; i < 6; ++i) CHECK(grown.points[i].id == plan.points[i].id);
    CHECK(grown.points[8].assignment[0].second == "1MiB");
    CHECK(grown.points[8].assignment[1].second == "3");
}

TEST_CASE("plan_sweep: no list means exactly one point, base configs resolve next to the sweep file", "[sweep]") {
    ParamRegistry reg;
    declare(reg);
    TempDir dir;
    fs::create_directories(dir.path / "sweeps");
    write_file(dir / "base.ini", "[workload]\npattern = rand\n");
    write_file(dir / "sweeps/one.ini", "[sweep]\nbase = ../base.ini\n[workload]\nwindow = 4\n");
    SweepPlan plan = plan_sweep(reg, dir / "sweeps/one.ini");
    REQUIRE(plan.points.size() == 1);
    CHECK(plan.points[0].index == 0);
    CHECK(plan.points[0].assignment.empty());
    CHECK(plan.points[0].id == "p0000-1c7ee6fb");
    CHECK(plan.swept_keys.empty());
    REQUIRE(plan.base_configs.size() == 1);
    CHECK(fs::equivalent(plan.base_configs[0], dir / "base.ini"));
}

TEST_CASE("plan_sweep: errors name the file, line, key and value", "[sweep]") {
    ParamRegistry reg;
    declare(reg);
    TempDir dir;
    const std::string f = dir / "bad.ini";

    SECTION("unknown key") {
        write_file(f, "[workload]\nwindow = 1, 2\nmesage-size = 4KiB\n");
        REQUIRE_THROWS_AS(plan_sweep(reg, f), ConfigError);
        REQUIRE_THROWS_WITH(plan_sweep(reg, f), Contains("bad.ini:3") && Contains("workload.mesage-size"));
    }
    SECTION("bad value in a list") {
        write_file(f, "[workload]\n\nmessage-size = 4KiB, 12parsecs, 1MiB\n");
        REQUIRE_THROWS_AS(plan_sweep(reg, f), ConfigError);
        REQUIRE_THROWS_WITH(plan_sweep(reg, f),
                            Contains("bad.ini:3") && Contains("workload.message-size") && Contains("12parsecs"));
    }
    SECTION("value out of range") {
        write_file(f, "# comment\n[workload]\nwindow = 1, 2000\n");
        REQUIRE_THROWS_AS(plan_sweep(reg, f), ConfigError);
        REQUIRE_THROWS_WITH(plan_sweep(reg, f),
                            Contains("bad.ini:3") && Contains("workload.window") && Contains("2000"));
    }
    SECTION("bad fixed value") {
        write_file(f, "[workload]\npattern = zigzag\n");
        REQUIRE_THROWS_WITH(plan_sweep(reg, f), Contains("bad.ini:2") && Contains("zigzag"));
    }
    SECTION("empty list element") {
        write_file(f, "[workload]\nwindow = 1,,2\n");
        REQUIRE_THROWS_AS(plan_sweep(reg, f), ConfigError);
        REQUIRE_THROWS_WITH(plan_sweep(reg, f), Contains("bad.ini:2") && Contains("workload.window"));
    }
    SECTION("unknown key in [sweep]") {
        write_file(f, "[sweep]\nbase =\njobs = 4\n");
        REQUIRE_THROWS_AS(plan_sweep(reg, f), ConfigError);
        REQUIRE_THROWS_WITH(plan_sweep(reg, f), Contains("bad.ini:3") && Contains("sweep.jobs"));
    }
    SECTION("missing base config") {
        write_file(f, "[workload]\nwindow = 1, 2\n[sweep]\nbase = nowhere.ini\n");
        REQUIRE_THROWS_AS(plan_sweep(reg, f), ConfigError);
        REQUIRE_THROWS_WITH(plan_sweep(reg, f), Contains("bad.ini:4") && Contains("nowhere.ini"));
    }
    SECTION("invalid base config") {
        write_file(dir / "base.ini", "[workload]\nwindow = 0\n");
        write_file(f, "[sweep]\nbase = base.ini\n");
        REQUIRE_THROWS_AS(plan_sweep(reg, f), ConfigError);
        REQUIRE_THROWS_WITH(plan_sweep(reg, f), Contains("base.ini") && Contains("workload.window"));
    }
    SECTION("duplicate key") {
        write_file(f, "[workload]\nwindow = 1, 2\nwindow = 3\n");
        REQUIRE_THROWS_WITH(plan_sweep(reg, f), Contains("bad.ini:3") && Contains("workload.window"));
    }
    SECTION("missing sweep file") { REQUIRE_THROWS_AS(plan_sweep(reg, dir / "none.ini"), ConfigError); }
}

TEST_CASE("run_sweep: a bad sweep file or bad options run and create nothing", "[sweep]") {
    ParamRegistry reg;
    declare(reg);
    TempDir dir;
    const std::string out = dir / "out";
    write_file(dir / "ok.ini", kSweep);

    SECTION("bad value") {
        write_file(dir / "bad.ini", "[workload]\nwindow = 1, 2000\n");
        CerrCapture err;
        CHECK(run_sweep(reg, options(dir / "bad.ini", out)) == 2);
        CHECK_THAT(err.str(), Contains("vrdmasim: error:") && Contains("bad.ini:2") && Contains("2000"));
    }
    SECTION("unknown [sweep] key") {
        write_file(dir / "bad.ini", "[sweep]\nbasis = x.ini\n");
        CerrCapture err;
        CHECK(run_sweep(reg, options(dir / "bad.ini", out)) == 2);
        CHECK_THAT(err.str(), Contains("vrdmasim: error:") && Contains("sweep.basis"));
    }
    SECTION("bad shard") {
        SweepOptions o = options(dir / "ok.ini", out);
        o.shard_index = 2;
        o.shard_count = 2;
        CerrCapture err;
        CHECK(run_sweep(reg, o) == 2);
        CHECK_THAT(err.str(), Contains("vrdmasim: error:"));
    }
    SECTION("missing executable") {
        SweepOptions o = options(dir / "ok.ini", out);
        o.executable = dir / "no-such-exe";
        CerrCapture err;
        CHECK(run_sweep(reg, o) == 2);
    }
    CHECK(!fs::exists(out));
}

TEST_CASE("run_sweep: a full run writes one results.csv row per point", "[sweep]") {
    ParamRegistry reg;
    declare(reg);
    TempDir dir;
    write_file(dir / "base.ini", "[workload]\npattern = rand\n");
    write_file(dir / "s.ini", std::string(kSweep) + "[sweep]\nbase = base.ini\n");
    const std::string out = dir / "out";
    CerrCapture err;
    REQUIRE(run_sweep(reg, options(dir / "s.ini", out)) == 0);
    CHECK_THAT(err.str(), Contains("sweep: 6 points, 6 ok, 0 failed; results in"));

    SweepPlan plan = plan_sweep(reg, dir / "s.ini");
    Table t = read_table(out + "/results.csv");
    CHECK(t.header == std::vector<std::string>{"point", "workload.message-size", "workload.window", "status",
                                               "exit_code", "error", "dma.block-size", "configs", "metric"});
    REQUIRE(t.rows.size() == 6);
    for (int i = 0; i < 6; ++i) {
        const auto& r = t.row(i);
        const SweepPoint& p = plan.points[i];
        CHECK(r.at("point") == p.id);
        CHECK(r.at("workload.message-size") == p.assignment[0].second);
        CHECK(r.at("workload.window") == p.assignment[1].second);
        CHECK(r.at("status") == "ok");
        CHECK(r.at("exit_code") == "0");
        CHECK(r.at("error") == "");
        CHECK(r.at("dma.block-size") == "8KiB");
        CHECK(r.at("configs") == "base.ini");
        std::size_t len = 4 + p.assignment[0].second.size() + p.assignment[1].second.size();
        CHECK(r.at("metric") == std::to_string(len));
        CHECK(fs::exists(out + "/points/" + p.id + "/summary.csv"));
        CHECK(fs::exists(out + "/logs/" + p.id + ".log"));
    }
    CHECK(read_lines(out + "/runs.log").size() == 6);
    CHECK(!fs::exists(out + "/results.csv.tmp"));
}

TEST_CASE("run_sweep: failing points are recorded and the others go on", "[sweep]") {
    ParamRegistry reg;
    declare(reg);
    TempDir dir;
    write_file(dir / "s.ini", "[workload]\ntag = a, fail, crash, mismatch, b\n");
    const std::string out = dir / "out";
    {
        CerrCapture err;
        REQUIRE(run_sweep(reg, options(dir / "s.ini", out, 3)) == 1);
        CHECK_THAT(err.str(), Contains("5 points, 2 ok, 1 mismatch, 2 failed"));
    }
    Table t = read_table(out + "/results.csv");
    REQUIRE(t.rows.size() == 5);
    CHECK(t.row(0).at("status") == "ok");
    CHECK(t.row(0).at("metric") == "1");

    CHECK(t.row(1).at("workload.tag") == "fail");
    CHECK(t.row(1).at("status") == "failed");
    CHECK(t.row(1).at("exit_code") == "3");
    CHECK(t.row(1).at("error") == "error: asked to fail");
    CHECK(t.row(1).at("metric") == "");

    CHECK(t.row(2).at("status") == "failed");
    CHECK(t.row(2).at("error") == "killed by signal 6");

    CHECK(t.row(3).at("status") == "mismatch");
    CHECK(t.row(3).at("exit_code") == "1");
    CHECK(t.row(3).at("error") == "");
    CHECK(t.row(3).at("metric") == "8");

    CHECK(t.row(4).at("status") == "ok");
    CHECK(read_lines(out + "/runs.log").size() == 5);

    // Resume: the failed points run again, the mismatch is done and keeps its status.
    {
        CerrCapture err;
        REQUIRE(run_sweep(reg, options(dir / "s.ini", out, 3)) == 1);
    }
    CHECK(read_lines(out + "/runs.log").size() == 7);
    Table t2 = read_table(out + "/results.csv");
    REQUIRE(t2.rows.size() == 5);
    CHECK(t2.row(1).at("status") == "failed");
    CHECK(t2.row(3).at("status") == "mismatch");
    CHECK(t2.row(3).at("exit_code") == "1");
}

TEST_CASE("run_sweep: resume skips done points and reruns a deleted one alone", "[sweep]") {
    ParamRegistry reg;
    declare(reg);
    TempDir dir;
    write_file(dir / "s.ini", kSweep);
    const std::string out = dir / "out";
    CerrCapture err;
    REQUIRE(run_sweep(reg, options(dir / "s.ini", out)) == 0);
    const std::string first = read_file(out + "/results.csv");
    REQUIRE(read_lines(out + "/runs.log").size() == 6);

    REQUIRE(run_sweep(reg, options(dir / "s.ini", out)) == 0);
    CHECK(read_lines(out + "/runs.log").size() == 6);
    CHECK(read_file(out + "/results.csv") == first);
    CHECK_THAT(err.str(), Contains("(6 already done)"));

    SweepPlan plan = plan_sweep(reg, dir / "s.ini");
    fs::remove_all(out + "/points/" + plan.points[4].id);
    REQUIRE(run_sweep(reg, options(dir / "s.ini", out)) == 0);
    auto runs = read_lines(out + "/runs.log");
    REQUIRE(runs.size() == 7);
    CHECK(runs.back() == plan.points[4].id);
    CHECK(read_file(out + "/results.csv") == first);
}

TEST_CASE("run_sweep: shards cover every point once and merge into the full results", "[sweep]") {
    ParamRegistry reg;
    declare(reg);
    TempDir dir;
    write_file(dir / "s.ini", kSweep);
    CerrCapture err;

    REQUIRE(run_sweep(reg, options(dir / "s.ini", dir / "full")) == 0);
    SweepOptions s0 = options(dir / "s.ini", dir / "s0");
    s0.shard_index = 0;
    s0.shard_count = 2;
    SweepOptions s1 = s0;
    s1.out_dir = dir / "s1";
    s1.shard_index = 1;
    REQUIRE(run_sweep(reg, s0) == 0);
    REQUIRE(run_sweep(reg, s1) == 0);

    auto r0 = read_lines(dir / "s0/runs.log");
    auto r1 = read_lines(dir / "s1/runs.log");
    CHECK(r0.size() == 3);
    CHECK(r1.size() == 3);
    std::multiset<std::string> ran(r0.begin(), r0.end());
    ran.insert(r1.begin(), r1.end());
    SweepPlan plan = plan_sweep(reg, dir / "s.ini");
    std::multiset<std::string> all;
    for (const auto& p : plan.points) all.insert(p.id);
    CHECK(ran == all);
    for (const auto& id : r0) CHECK(id.substr(0, 5) != "p0001");

    Table t0 = read_table(dir / "s0/results.csv");
    REQUIRE(t0.rows.size() == 3);
    CHECK(t0.row(1).at("point") == plan.points[2].id);

    std::ostringstream merged;
    merge_results({dir / "s1/results.csv", dir / "s0/results.csv"}, merged);
    CHECK(merged.str() == read_file(dir / "full/results.csv"));
}

TEST_CASE("run_sweep: jobs=1 and jobs=3 give identical results", "[sweep]") {
    ParamRegistry reg;
    declare(reg);
    TempDir dir;
    write_file(dir / "s.ini", "[workload]\nmessage-size = 1KiB, 2KiB, 4KiB\nwindow = 1, 2\ntag = a, bb\n");
    CerrCapture err;
    REQUIRE(run_sweep(reg, options(dir / "s.ini", dir / "j1", 1)) == 0);
    REQUIRE(run_sweep(reg, options(dir / "s.ini", dir / "j3", 3)) == 0);
    const std::string a = read_file(dir / "j1/results.csv");
    CHECK(std::count(a.begin(), a.end(), '\n') == 13);
    CHECK(a == read_file(dir / "j3/results.csv"));
}

TEST_CASE("run_sweep: progress on stderr updates one line", "[sweep]") {
    ParamRegistry reg;
    declare(reg);
    TempDir dir;
    write_file(dir / "s.ini", "[workload]\nwindow = 1, 2, 3\n");
    SweepOptions o = options(dir / "s.ini", dir / "out");
    o.progress = true;
    CerrCapture err;
    REQUIRE(run_sweep(reg, o) == 0);
    const std::string s = err.str();
    CHECK_THAT(s, Contains("\rsweep: 0/3 points") && Contains("\rsweep: 3/3 points") && Contains("ETA"));
    CHECK_THAT(s, Contains("3/3 points, elapsed "));
    CHECK_THAT(s, Contains("\nsweep: 3 points, 3 ok, 0 failed"));
}

TEST_CASE("merge_results: union of columns by name, rows by point index, a point twice is an error", "[sweep]") {
    // Files without a plan beside them: only with allow_partial, said so.
    TempDir dir;
    write_file(dir / "a.csv", "point,x,status,m1\np0002-aaaaaaaa,2,ok,20\np0000-bbbbbbbb,0,ok,0\n");
    write_file(dir / "b.csv", "point,status,x,m2\np0001-cccccccc,failed,1,\"a,b\"\n");
    std::ostringstream out, notes;
    merge_results({dir / "a.csv", dir / "b.csv"}, out, true, &notes);
    CHECK(out.str() ==
          "point,x,status,m1,m2\n"
          "p0000-bbbbbbbb,0,ok,0,\n"
          "p0001-cccccccc,1,failed,,\"a,b\"\n"
          "p0002-aaaaaaaa,2,ok,20,\n");
    CHECK_THAT(notes.str(), Contains("a.csv: no plan beside it, merged unchecked"));

    std::ostringstream sink;
    CHECK_THROWS_WITH(merge_results({dir / "a.csv", dir / "b.csv"}, sink),
                      Contains("no sweep plan beside it") && Contains("--allow-partial"));
    write_file(dir / "dup.csv", "point,status,x\np0002-aaaaaaaa,ok,9\n");
    CHECK_THROWS_WITH(merge_results({dir / "a.csv", dir / "dup.csv"}, sink, true),
                      Contains("p0002-aaaaaaaa is in") && Contains("the same shard given twice?"));
    CHECK_THROWS_AS(merge_results({dir / "a.csv", dir / "missing.csv"}, sink, true), ConfigError);
    write_file(dir / "nopoint.csv", "id,x\n1,2\n");
    CHECK_THROWS_AS(merge_results({dir / "nopoint.csv"}, sink, true), ConfigError);
    write_file(dir / "ragged.csv", "point,x\np0000-bbbbbbbb,1,2\n");
    CHECK_THROWS_WITH(merge_results({dir / "ragged.csv"}, sink, true), Contains("ragged.csv"));
    write_file(dir / "badid.csv", "point,x\nzzz,1\n");
    CHECK_THROWS_AS(merge_results({dir / "badid.csv"}, sink, true), ConfigError);
}

TEST_CASE("merge_results checks every sweep is whole: a shard missing, twice, or of another sweep", "[sweep]") {
    ParamRegistry reg;
    declare(reg);
    TempDir dir;
    write_file(dir / "s.ini", kSweep);
    write_file(dir / "t.ini", std::string(kSweep) + "[sweep]\nlabel = other\n");
    CerrCapture err;
    for (int i = 0; i < 2; ++i) {
        SweepOptions o = options(dir / "s.ini", dir / ("s" + std::to_string(i)));
        o.shard_index = i;
        o.shard_count = 2;
        REQUIRE(run_sweep(reg, o) == 0);
        o.sweep_file = dir / "t.ini";
        o.out_dir = dir / ("t" + std::to_string(i));
        REQUIRE(run_sweep(reg, o) == 0);
    }
    const SweepPlan s = plan_sweep(reg, dir / "s.ini");
    std::ostringstream sink, notes;
    // Both shards: whole.
    merge_results({dir / "s0/results.csv", dir / "s1/results.csv"}, sink, false, &notes);
    CHECK_THAT(notes.str(), Contains("sweep (no label) (plan " + s.fingerprint + "): all 6 points, from 2 input(s)"));
    // One shard alone: the other's points named.
    CHECK_THROWS_WITH(merge_results({dir / "s0/results.csv"}, sink),
                      Contains("3 of its 6 points are in none of its 1 input(s)") && Contains(s.points[1].id) &&
                          Contains(s.points[5].id) && Contains("--allow-partial"));
    std::ostringstream partial, said;
    merge_results({dir / "s0/results.csv"}, partial, true, &said);
    CHECK_THAT(said.str(), Contains("3 of its 6 points are in none") && Contains(s.points[3].id));
    const std::string part = partial.str();
    CHECK(std::count(part.begin(), part.end(), '\n') == 4);
    // The same shard twice (another copy of it included).
    CHECK_THROWS_WITH(merge_results({dir / "s0/results.csv", dir / "s0/results.csv"}, sink), Contains("twice"));
    CHECK_THROWS_WITH(merge_results({dir / "s0/results.csv", dir / "s0/shards/results-0-of-2.csv"}, sink),
                      Contains("the same shard given twice?"));
    // Shards of two different sweeps: neither is whole.
    CHECK_THROWS_WITH(merge_results({dir / "s0/results.csv", dir / "t1/results.csv"}, sink),
                      Contains("3 of its 6 points are in none"));
    // Two whole sweeps: merged, each said whole.
    std::ostringstream both, both_notes;
    merge_results({dir / "s0/results.csv", dir / "s1/results.csv", dir / "t0/results.csv", dir / "t1/results.csv"},
                  both, false, &both_notes);
    const std::string all = both.str();
    CHECK(std::count(all.begin(), all.end(), '\n') == 13);
    CHECK_THAT(both_notes.str(), Contains("sweep 'other'") && Contains("sweep (no label)"));
    // A row that is not a point of the plan beside it.
    std::string rows = read_file(dir / "s1/shards/results-1-of-2.csv");
    const std::string t_id = plan_sweep(reg, dir / "t.ini").points[1].id;
    rows.replace(rows.find(s.points[1].id), s.points[1].id.size(), t_id);
    write_file(dir / "s1/shards/results-1-of-2.csv", rows);
    CHECK_THROWS_WITH(merge_results({dir / "s0/results.csv", dir / "s1/shards/results-1-of-2.csv"}, sink),
                      Contains("is not a point of the sweep whose plan is beside it"));
}

TEST_CASE("run_sweep: shards share one output directory and leave the whole sweep in results.csv", "[sweep]") {
    ParamRegistry reg;
    declare(reg);
    TempDir dir;
    write_file(dir / "s.ini", kSweep);
    CerrCapture err;
    REQUIRE(run_sweep(reg, options(dir / "s.ini", dir / "full")) == 0);
    SweepOptions o = options(dir / "s.ini", dir / "shared");
    o.shard_count = 3;
    for (int i : {2, 0}) {
        o.shard_index = i;
        REQUIRE(run_sweep(reg, o) == 0);
    }
    CHECK_THAT(err.str(), Contains("results.csv holds 4 of the 6 points of the sweep (other shards still running"));
    // While shard 1 runs (its locks held as a running shard holds them), the
    // same shard refuses, and so does an unsharded sweep.
    {
        const std::string lock = (dir / "shared/shards/1-of-3.lock"), marker = (dir / "shared/.vrdmasim-sweep");
        const int fd = open(lock.c_str(), O_RDWR | O_CREAT, 0644);
        const int mfd = open(marker.c_str(), O_RDWR);
        REQUIRE(flock(fd, LOCK_EX) == 0);
        REQUIRE(flock(mfd, LOCK_SH) == 0);
        o.shard_index = 1;
        CHECK(run_sweep(reg, o) == 2);
        CHECK_THAT(err.str(), Contains("shard 1/3 is already running there"));
        // An unsharded sweep refuses while a shard runs.
        CHECK(run_sweep(reg, options(dir / "s.ini", dir / "shared")) == 2);
        CHECK_THAT(err.str(), Contains("another sweep (or a shard of one)"));
        close(mfd);
        close(fd);
    }
    // Another split in the same directory refuses.
    SweepOptions other = o;
    other.shard_count = 2;
    other.shard_index = 1;
    CHECK(run_sweep(reg, other) == 2);
    CHECK_THAT(err.str(), Contains("holds shards of a split in 3") && Contains("give every shard the same N"));
    o.shard_index = 1;
    REQUIRE(run_sweep(reg, o) == 0);
    CHECK_THAT(err.str(), Contains("results.csv holds 6 of the 6 points of the sweep"));
    CHECK(read_file(dir / "shared/results.csv") == read_file(dir / "full/results.csv"));
    // What merge sees: the shard files and the plan, whole.
    std::ostringstream merged;
    merge_results({dir / "shared/shards/results-0-of-3.csv", dir / "shared/shards/results-1-of-3.csv",
                   dir / "shared/shards/results-2-of-3.csv"},
                  merged);
    CHECK(merged.str() == read_file(dir / "full/results.csv"));
}

TEST_CASE("run_sweep: shards started at the same instant into a new --out all run", "[sweep]") {
    // mpirun and Slurm start every shard at once: one that looks at --out
    // while another has just made it must take it for a sweep's, never for
    // a foreign directory (the marker is made first). Many rounds, each
    // releasing all shards through one pipe, make the overlap likely.
    ParamRegistry reg;
    declare(reg);
    TempDir dir;
    write_file(dir / "s.ini", kSweep);
    constexpr int kShards = 6, kRounds = 25;
    int refused = 0;
    std::string first_error;
    for (int round = 0; round < kRounds; ++round) {
        const std::string out = dir / ("out" + std::to_string(round));
        int gate[2];
        REQUIRE(pipe(gate) == 0);
        std::vector<pid_t> pids;
        for (int i = 0; i < kShards; ++i) {
            const pid_t pid = fork();
            REQUIRE(pid >= 0);
            if (pid == 0) {
                close(gate[1]);
                char c;
                while (read(gate[0], &c, 1) > 0) {
                }
                const std::string log = out + "-" + std::to_string(i) + ".err";
                const int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
                if (fd >= 0) dup2(fd, 2);
                SweepOptions o = options(dir / "s.ini", out, 1);
                o.shard_index = i;
                o.shard_count = kShards;
                _exit(run_sweep(reg, o));
            }
            pids.push_back(pid);
        }
        close(gate[0]);
        close(gate[1]);   // all go
        for (int i = 0; i < kShards; ++i) {
            int status = 0;
            REQUIRE(waitpid(pids[i], &status, 0) == pids[i]);
            if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
                ++refused;
                if (first_error.empty()) first_error = read_file(out + "-" + std::to_string(i) + ".err");
            }
        }
        REQUIRE(fs::exists(out + "/results.csv"));
    }
    INFO(first_error);
    CHECK(refused == 0);
}

TEST_CASE("shard_from_environment: Slurm array tasks and MPI ranks", "[sweep]") {
    using Env = std::map<std::string, std::string>;
    auto shard = [](const Env& e) {
        return shard_from_environment([&e](const char* n) -> const char* {
            auto it = e.find(n);
            return it == e.end() ? nullptr : it->second.c_str();
        });
    };
    auto is = [](const ShardFromEnv& s, int i, int n) { return s.index == i && s.count == n; };
    CHECK(shard({}).from.empty());
    CHECK(is(shard({}), 0, 1));
    CHECK(is(shard({{"SLURM_ARRAY_TASK_ID", "3"},
                    {"SLURM_ARRAY_TASK_MIN", "0"},
                    {"SLURM_ARRAY_TASK_MAX", "15"},
                    {"SLURM_ARRAY_TASK_COUNT", "16"}}),
             3, 16));
    CHECK(
        is(shard({{"SLURM_ARRAY_TASK_ID", "7"}, {"SLURM_ARRAY_TASK_MIN", "5"}, {"SLURM_ARRAY_TASK_MAX", "9"}}), 2, 5));
    CHECK(is(shard({{"SLURM_ARRAY_TASK_ID", "5"},
                    {"SLURM_ARRAY_TASK_MIN", "1"},
                    {"SLURM_ARRAY_TASK_MAX", "9"},
                    {"SLURM_ARRAY_TASK_STEP", "2"}}),
             2, 5));
    CHECK(is(shard({{"SLURM_ARRAY_TASK_ID", "2"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}), 2, 4));
    CHECK(is(shard({{"OMPI_COMM_WORLD_RANK", "1"}, {"OMPI_COMM_WORLD_SIZE", "2"}}), 1, 2));
    CHECK(is(shard({{"PMI_RANK", "0"}, {"PMI_SIZE", "3"}}), 0, 3));
    CHECK(shard({{"PMI_RANK", "0"}, {"PMI_SIZE", "3"}}).from == "PMI_RANK/PMI_SIZE");
    // A batch step's own task variables say nothing about shards.
    CHECK(shard({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}}).from.empty());
    // mpirun inside an array task: task * ranks + rank.
    CHECK(is(shard({{"SLURM_ARRAY_TASK_ID", "1"},
                    {"SLURM_ARRAY_TASK_COUNT", "3"},
                    {"OMPI_COMM_WORLD_RANK", "1"},
                    {"OMPI_COMM_WORLD_SIZE", "2"}}),
             3, 6));
    // Malformed or inconsistent: an error naming the variable.
    CHECK_THROWS_WITH(shard({{"SLURM_ARRAY_TASK_ID", "3"}}), Contains("SLURM_ARRAY_TASK_COUNT"));
    CHECK_THROWS_WITH(shard({{"SLURM_ARRAY_TASK_ID", "x"}, {"SLURM_ARRAY_TASK_COUNT", "4"}}),
                      Contains("SLURM_ARRAY_TASK_ID=x"));
    CHECK_THROWS_WITH(shard({{"SLURM_ARRAY_TASK_ID", "3"},
                             {"SLURM_ARRAY_TASK_MIN", "1"},
                             {"SLURM_ARRAY_TASK_MAX", "7"},
                             {"SLURM_ARRAY_TASK_COUNT", "3"}}),
                      Contains("not the range"));
    CHECK_THROWS_WITH(shard({{"OMPI_COMM_WORLD_RANK", "2"}, {"OMPI_COMM_WORLD_SIZE", "2"}}),
                      Contains("OMPI_COMM_WORLD_RANK=2 is not below OMPI_COMM_WORLD_SIZE=2"));
    CHECK_THROWS_WITH(shard({{"PMI_RANK", "1"}}), Contains("PMI_SIZE"));
}

TEST_CASE("sweep label: a `label` column tells merged sweeps apart", "[sweep]") {
    ParamRegistry reg;
    declare(reg);
    TempDir dir;
    // The same points, labelled differently (as the thesis's cold and warm
    // buffer states differ in fixed keys that results.csv does not show).
    write_file(dir / "cold.ini", std::string(kSweep) + "[sweep]\nlabel = cold   # buffers never touched\n");
    write_file(dir / "warm.ini", std::string(kSweep) + "[sweep]\nlabel = warm\n");
    write_file(dir / "plain.ini", kSweep);
    CerrCapture err;

    const SweepPlan cold = plan_sweep(reg, dir / "cold.ini");
    const SweepPlan warm = plan_sweep(reg, dir / "warm.ini");
    const SweepPlan plain = plan_sweep(reg, dir / "plain.ini");
    CHECK(cold.label == "cold");
    CHECK(plain.label.empty());
    REQUIRE(cold.points.size() == 6);
    for (std::size_t i = 0; i < 6; ++i) {
        // Same index, different ids: merging never drops one as a duplicate.
        CHECK(cold.points[i].id.substr(0, 5) == warm.points[i].id.substr(0, 5));
        CHECK(cold.points[i].id != warm.points[i].id);
        CHECK(cold.points[i].id != plain.points[i].id);
    }

    REQUIRE(run_sweep(reg, options(dir / "cold.ini", dir / "c")) == 0);
    REQUIRE(run_sweep(reg, options(dir / "warm.ini", dir / "w")) == 0);
    REQUIRE(run_sweep(reg, options(dir / "plain.ini", dir / "p")) == 0);
    Table c = read_table(dir / "c/results.csv");
    REQUIRE(c.header.size() > 2);
    CHECK(c.header[0] == "point");
    CHECK(c.header[1] == "label");
    CHECK(c.header[2] == "workload.message-size");
    REQUIRE(c.rows.size() == 6);
    for (const auto& r : c.rows) CHECK(r.at("label") == "cold");
    // No label, no column: unlabelled sweeps' results are as before.
    Table p = read_table(dir / "p/results.csv");
    CHECK(std::find(p.header.begin(), p.header.end(), "label") == p.header.end());

    std::ostringstream merged;
    merge_results({dir / "c/results.csv", dir / "w/results.csv"}, merged);
    write_file(dir / "merged.csv", merged.str());
    Table m = read_table(dir / "merged.csv");
    REQUIRE(m.rows.size() == 12);
    std::map<std::string, int> by_label;
    for (const auto& r : m.rows) ++by_label[r.at("label")];
    CHECK(by_label == std::map<std::string, int>{{"cold", 6}, {"warm", 6}});

    // Resume keeps the label.
    REQUIRE(run_sweep(reg, options(dir / "cold.ini", dir / "c")) == 0);
    CHECK(read_table(dir / "c/results.csv").row(0).at("label") == "cold");
}

TEST_CASE("sweep label: one value, set once", "[sweep]") {
    ParamRegistry reg;
    declare(reg);
    TempDir dir;
    const std::string f = dir / "bad.ini";
    SECTION("a list") {
        write_file(f, "[sweep]\nlabel = cold, warm\n");
        REQUIRE_THROWS_WITH(plan_sweep(reg, f), Contains("bad.ini:2") && Contains("sweep.label"));
    }
    SECTION("empty") {
        write_file(f, "[sweep]\nlabel =\n");
        REQUIRE_THROWS_WITH(plan_sweep(reg, f), Contains("bad.ini:2") && Contains("sweep.label"));
    }
    SECTION("twice") {
        write_file(f, "[sweep]\nlabel = a\nlabel = b\n");
        REQUIRE_THROWS_WITH(plan_sweep(reg, f), Contains("bad.ini:3") && Contains("line 2"));
    }
}

// ---------------------------------------------------------------------------
// Replications

namespace {

void declare_with_seed(ParamRegistry& reg) {
    declare(reg);
    ParamSet sim("sim", "the run");
    sim.integer("seed", "1", "seed");
    sim.real("noise", "0", "a variation source, for the test");
    reg.add(sim);
}

bool noisy(const Config& c) { return c.real("sim.noise") > 0; }

}   // namespace

TEST_CASE("plan_sweep: replications sweep sim.seed last, and need a variation source", "[sweep][replications]") {
    ParamRegistry reg;
    declare_with_seed(reg);
    TempDir dir;
    write_file(dir / "r.ini", "[sweep]\nreplications = 3\n[sim]\nnoise = 0.1\nseed = 7\n[workload]\nwindow = 1, 2\n");
    // sim.seed given as well: refused (it is the replications' key).
    REQUIRE_THROWS_WITH(plan_sweep(reg, dir / "r.ini", noisy), Contains("set one of them"));
    write_file(dir / "r.ini", "[sweep]\nreplications = 3\n[sim]\nnoise = 0.1\n[workload]\nwindow = 1, 2\n");
    const SweepPlan plan = plan_sweep(reg, dir / "r.ini", noisy);
    CHECK(plan.replications == 3);
    CHECK(plan.swept_keys == std::vector<std::string>{"workload.window", "sim.seed"});
    REQUIRE(plan.points.size() == 6);
    CHECK(plan.points[0].assignment[1].second == "1");
    CHECK(plan.points[2].assignment[1].second == "3");
    CHECK(plan.points[3].assignment[0].second == "2");
    // Without a variation source every seed gives the same figures: refused.
    write_file(dir / "q.ini", "[sweep]\nreplications = 3\n[workload]\nwindow = 1, 2\n");
    REQUIRE_THROWS_WITH(plan_sweep(reg, dir / "q.ini", noisy), Contains("no variation source is on"));
    REQUIRE_THROWS_WITH(plan_sweep(reg, dir / "q.ini"), Contains("no variation source is on"));
    // On at one point only: the other is named.
    write_file(dir / "h.ini", "[sweep]\nreplications = 2\n[sim]\nnoise = 0, 0.1\n");
    REQUIRE_THROWS_WITH(plan_sweep(reg, dir / "h.ini", noisy), Contains("at the point sim.noise = 0"));
    for (const char* bad : {"0", "1001", "two", "-1"}) {
        write_file(dir / "b.ini", std::string("[sweep]\nreplications = ") + bad + "\n[sim]\nnoise = 0.1\n");
        REQUIRE_THROWS_WITH(plan_sweep(reg, dir / "b.ini", noisy), Contains("a whole number from 1 to 1000"));
    }
}

TEST_CASE("aggregate_replications: mean, sample sd and Student's t 95 % interval per metric", "[sweep][replications]") {
    SweepPlan plan;
    plan.swept_keys = {"workload.window", "sim.seed"};
    plan.replications = 3;
    const std::vector<std::vector<std::string>> results{
        {"point", "workload.window", "sim.seed", "status", "exit_code", "error", "strategy", "gbps"},
        {"p0", "1", "1", "ok", "0", "", "pin", "10"},
        {"p1", "1", "2", "ok", "0", "", "pin", "12"},
        {"p2", "1", "3", "ok", "0", "", "pin", "14"},
        {"p3", "2", "1", "ok", "0", "", "pin", "5"},
        {"p4", "2", "2", "failed", "1", "x", "", ""},
        {"p5", "2", "3", "ok", "0", "", "pin", "7"},
    };
    std::istringstream in(aggregate_replications(plan, results));
    const auto rows = read_csv(in);
    REQUIRE(rows.size() == 3);
    // strategy is text (its unit in the summary's declarations): its value
    // alone, no spread columns.
    CHECK(rows[0] == std::vector<std::string>{"workload.window", "replications", "replications_ok", "strategy", "gbps",
                                              "gbps_sd", "gbps_ci95"});
    // 10, 12, 14: mean 12, sd 2, half-width t(0.975, 2) x 2 / sqrt(3) = 4.303 x 1.1547 = 4.96869.
    CHECK(rows[1][0] == "1");
    CHECK(rows[1][1] == "3");
    CHECK(rows[1][2] == "3");
    CHECK(rows[1][3] == "pin");
    CHECK(std::stod(rows[1][4]) == Approx(12));
    CHECK(std::stod(rows[1][5]) == Approx(2));
    CHECK(std::stod(rows[1][6]) == Approx(4.303 * 2 / std::sqrt(3.0)).epsilon(1e-5));
    // The failed replication is counted, not averaged: 5 and 7.
    CHECK(rows[2][1] == "3");
    CHECK(rows[2][2] == "2");
    CHECK(std::stod(rows[2][4]) == Approx(6));
    CHECK(std::stod(rows[2][6]) == Approx(12.706 * std::sqrt(2.0) / std::sqrt(2.0)).epsilon(1e-5));
}

// ---------------------------------------------------------------------------
// What a sweep's points warn, configurations every point shares, paths,
// quoted lists, the ETA.

TEST_CASE("run_sweep: every warning of the points, counted by kind, on stderr and in warnings.txt", "[sweep]") {
    ParamRegistry reg;
    declare(reg);
    TempDir dir;
    write_file(dir / "s.ini", "[workload]\ntag = warn, x, warn-other, warn\n");
    const std::string out = dir / "out";
    CerrCapture err;
    REQUIRE(run_sweep(reg, options(dir / "s.ini", out)) == 0);
    const SweepPlan plan = plan_sweep(reg, dir / "s.ini");
    // The sweep's own last lines: how many points warned, each kind counted,
    // each kind's first warning in full, and where every warning is.
    CHECK_THAT(err.str(), Contains("sweep: 3 of 4 points warned: 'link order inverted' \u00d72, 'hog mmap failed' "
                                   "\u00d71 (every warning in " +
                                   out + "/warnings.txt)"));
    CHECK_THAT(err.str(), Contains(plan.points[0].id + ": warning: link order inverted: 3 packet-hop(s)"));
    CHECK_THAT(err.str(), Contains(plan.points[2].id + ": warning: hog mmap failed: hog1"));
    const std::string w = read_file(out + "/warnings.txt");
    CHECK_THAT(w, Contains("3 of 4 points warned: 'link order inverted' \u00d72, 'hog mmap failed' \u00d71"));
    for (int i : {0, 3}) CHECK_THAT(w, Contains(plan.points[i].id + ": link order inverted: 3 packet-hop(s)"));
    CHECK_THAT(w, Contains(plan.points[2].id + ": hog mmap failed: hog1: mmap of 10 bytes"));
    CHECK(w.find(plan.points[1].id) == std::string::npos);

    // Resumed with every point done: the warnings of the earlier run are
    // still counted (from the points' logs).
    CerrCapture again;
    REQUIRE(run_sweep(reg, options(dir / "s.ini", out)) == 0);
    CHECK_THAT(again.str(), Contains("3 of 4 points warned"));
}

TEST_CASE("warning_kind and warnings_line: kinds by their text, numbers left out", "[sweep]") {
    using namespace sweep_detail;
    CHECK(warning_kind("link order inverted: 12 packet-hop(s) waited") == "link order inverted");
    CHECK(warning_kind("trace.json has reached 300 MiB at 5 ms of simulated time, 3 of 9 transfers done") ==
          "trace.json has reached N MiB at N ms of simulated time");
    CHECK(warning_kind("(W571) no activity") == "(W571) no activity");
    CHECK(warnings_in_log("fake\nvrdmasim: warning: a: 1\n\rprogress\rWarning: (W1) b\nvrdmasim: error: c\n") ==
          std::vector<std::string>{"a: 1", "(W1) b"});
    CHECK(warnings_line({{"p0", {}}, {"p1", {}}}, 2).empty());
    CHECK(warnings_line({{"p0", {"a: 1", "b (2)"}}, {"p1", {"a: 7"}}}, 5) ==
          "2 of 5 points warned: 'a' \u00d72, 'b' \u00d71");
}

TEST_CASE("run_sweep: a configuration every point shares is refused before any point runs", "[sweep]") {
    ParamRegistry reg;
    declare(reg);
    TempDir dir;
    const std::string out = dir / "out";
    SECTION("every point") {
        write_file(dir / "s.ini", "[workload]\nwindow = 1, 2, 3\n# the same for all\ntag = badconfig\n");
        CerrCapture err;
        CHECK(run_sweep(reg, options(dir / "s.ini", out)) == 2);
        // Once, with the sweep file's line as the value's origin.
        CHECK_THAT(err.str(), Contains("vrdmasim: error: workload.tag = badconfig (from " + dir / "s.ini" +
                                       ":4): refused (every point of") &&
                                  Contains("3 of 3 checked; nothing run"));
    }
    SECTION("one point") {
        write_file(dir / "s.ini", "[workload]\nwindow = 1, 2\ntag = x, badconfig\n");
        CerrCapture err;
        CHECK(run_sweep(reg, options(dir / "s.ini", out)) == 2);
        const SweepPlan plan = plan_sweep(reg, dir / "s.ini");
        // The first refused point named, with its values, and how many more.
        CHECK_THAT(err.str(), Contains("2 of 4 points have a configuration a run refuses; nothing run") &&
                                  Contains(plan.points[1].id + " (workload.window = 1, workload.tag = badconfig) and "
                                                               "1 other point: workload.tag = badconfig (from "));
    }
    // Nothing ran, nothing was written.
    CHECK(!fs::exists(out));
}

TEST_CASE("plan_sweep: a list may hold quoted values, commas inside quotes kept", "[sweep]") {
    ParamRegistry reg;
    declare(reg);
    TempDir dir;
    write_file(dir / "q.ini",
               "[workload]\n"
               "tag = \"a, b\", \"c\" , plain, \"d \\\" e\"   # four values\n"
               "pattern = \"rand\"\n");
    const SweepPlan plan = plan_sweep(reg, dir / "q.ini");
    REQUIRE(plan.points.size() == 4);
    CHECK(plan.points[0].assignment[0].second == "a, b");
    CHECK(plan.points[1].assignment[0].second == "c");
    CHECK(plan.points[2].assignment[0].second == "plain");
    CHECK(plan.points[3].assignment[0].second == "d \" e");
    CHECK(plan.fixed == std::vector<std::pair<std::string, std::string>>{{"workload.pattern", "rand"}});
    // One quoted value is one value, commas and all.
    write_file(dir / "one.ini", "[workload]\ntag = \"a, b\"\n");
    CHECK(plan_sweep(reg, dir / "one.ini").points.size() == 1);
    // Two quoted values without a comma between them: said so.
    write_file(dir / "bad.ini", "[workload]\ntag = \"a\" \"b\"\n");
    REQUIRE_THROWS_WITH(plan_sweep(reg, dir / "bad.ini"),
                        Contains("bad.ini:2") && Contains("separated by commas") && Contains("'\"b\"'"));
    write_file(dir / "open.ini", "[workload]\ntag = \"a\", \"b\n");
    REQUIRE_THROWS_WITH(plan_sweep(reg, dir / "open.ini"), Contains("open.ini:2") && Contains("missing closing"));
    write_file(dir / "empty.ini", "[workload]\ntag = \"a\", \n");
    REQUIRE_THROWS_WITH(plan_sweep(reg, dir / "empty.ini"), Contains("empty value in the list"));
}

TEST_CASE("sweep paths: a path-valued setting is relative to the sweep file, its origin the file's line", "[sweep]") {
    ParamRegistry reg;
    ParamSet trace("trace", "a trace");
    trace.path("file", "", "the trace");
    trace.string("name", "", "not a path");
    reg.add(trace);
    TempDir dir;
    fs::create_directories(dir.path / "sweeps");
    write_file(dir / "sweeps/p.ini", "[trace]\nfile = ../t/a.otf2, /abs/b.otf2\nname = ../t/x\n");
    const SweepPlan plan = plan_sweep(reg, dir / "sweeps/p.ini");
    REQUIRE(plan.points.size() == 2);
    // results.csv and the ids keep the value as written.
    CHECK(plan.points[0].assignment[0].second == "../t/a.otf2");
    const std::string where = dir / "sweeps/p.ini";
    CHECK(point_arguments(plan, plan.points[0]) ==
          std::vector<std::string>{"--trace.name=../t/x", "--trace.file=" + dir / "t/a.otf2",
                                   "--origin=trace.name=" + where + ":3",
                                   "--origin=trace.file=" + where + ":2, sweep point"});
    CHECK(point_arguments(plan, plan.points[1])[1] == "--trace.file=/abs/b.otf2");
}

TEST_CASE("sweep ETA: points weigh what their check planned", "[sweep]") {
    using namespace sweep_detail;
    // The user's sweep: 30 points, the last 15 eight times the first's
    // size; 15 done in 8 s. Counting points said 8 s were left; 64 s were.
    CHECK(eta_seconds(8, 15 * 1.0, 15 * 8.0) == Approx(64));
    CHECK(eta_seconds(8, 0, 10) < 0);   // nothing finished yet: unknown
    CHECK(eta_seconds(8, 3, 0) == 0);
    // The weight: packets of 256 bytes of payload (at least one a
    // transfer) plus one a transfer.
    CHECK(point_weight("vrdmasim: configuration ok, nothing simulated; planned: 10 transfers, 10240 bytes of "
                       "payload\n") == Approx(10 * (4 + 1)));
    CHECK(point_weight("planned: 3 transfers, 3 bytes of payload") == Approx(3 * 2));
    CHECK(point_weight("planned: 3 transfers, 2560 bytes of payload") == Approx(3 + 10));
    // Transfers without payload (the lock's atomics): one each.
    CHECK(point_weight("planned: 80 transfers, 0 bytes of payload") == Approx(80));
    // Bytes or transfers not known: unknown (the mean of the known).
    CHECK(point_weight("planned: 12 transfers (their bytes not known in advance)") == 0);
    CHECK(point_weight("planned: transfers not known in advance (workload.kind = synthetic)") == 0);
    // The old line, which printed message-size for every kind, is no plan.
    CHECK(point_weight("planned: 80 transfers of 65536 bytes") == 0);
    CHECK(point_weight("no plan here") == 0);
    std::vector<double> w{0, 2, 4, 0};
    fill_unknown_weights(w);
    CHECK(w == std::vector<double>{3, 2, 4, 3});
    std::vector<double> none{0, 0};
    fill_unknown_weights(none);
    CHECK(none == std::vector<double>{1, 1});
}
