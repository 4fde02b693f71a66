// Tests of the Chrome trace-event writer and the narrated log.
#include <catch2/catch.hpp>

#include <algorithm>
#include <filesystem>
namespace fs = std::filesystem;

#include "json_check.hpp"

#include "src/core/trace.hpp"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include <sys/stat.h>
#include <zlib.h>
#include <unistd.h>

using namespace vrdmasim;
using sc_core::SC_NS;
using sc_core::SC_PS;
using sc_core::SC_SEC;
using sc_core::sc_time;
using sc_core::SC_US;

namespace {

using vrdmasim_test::JVal;
using vrdmasim_test::parse_json;

std::string make_temp_dir() {
    char tmpl[] = "/tmp/vrdmasim_trace_XXXXXX";
    const char* d = mkdtemp(tmpl);
    REQUIRE(d != nullptr);
    return d;
}

std::string slurp(const std::string& path) {
    std::ifstream is(path, std::ios::binary);
    std::ostringstream os;
    os << is.rdbuf();
    return os.str();
}

std::vector<std::string> lines_of(const std::string& text) {
    std::vector<std::string> out;
    std::istringstream is(text);
    for (std::string l; std::getline(is, l);) out.push_back(l);
    return out;
}

// Parse a finished trace file and return its traceEvents array.
std::vector<JVal> trace_events(const std::string& path) {
    const std::string text = slurp(path);
    INFO(text);
    JVal doc = parse_json(text);
    REQUIRE(doc.type == JVal::Obj);
    REQUIRE(doc.get("displayTimeUnit") != nullptr);
    CHECK(doc.get("displayTimeUnit")->text == "ns");
    const JVal* ev = doc.get("traceEvents");
    REQUIRE(ev != nullptr);
    REQUIRE(ev->type == JVal::Arr);
    return ev->arr;
}

std::vector<const JVal*> with_ph(const std::vector<JVal>& evs, const std::string& ph) {
    std::vector<const JVal*> out;
    for (const JVal& e : evs)
        if (e.get("ph") && e.get("ph")->text == ph) out.push_back(&e);
    return out;
}

const JVal* find_meta(const std::vector<JVal>& evs, const std::string& name, int pid, int tid = -1) {
    for (const JVal& e : evs) {
        if (e.get("ph")->text != "M" || e.get("name")->text != name) continue;
        if (e.get("pid")->num != pid) continue;
        if (tid >= 0 && (!e.get("tid") || e.get("tid")->num != tid)) continue;
        return &e;
    }
    return nullptr;
}

struct Cleanup {
    std::string dir;
    std::vector<std::string> files;
    ~Cleanup() {
        for (const auto& f : files) std::remove(f.c_str());
        rmdir(dir.c_str());
    }
};

}   // namespace

TEST_CASE("json_string escapes quotes, backslashes and control characters", "[trace]") {
    CHECK(Tracer::json_string("") == "\"\"");
    CHECK(Tracer::json_string("plain text") == "\"plain text\"");
    CHECK(Tracer::json_string("a\"b") == "\"a\\\"b\"");
    CHECK(Tracer::json_string("a\\b") == "\"a\\\\b\"");
    CHECK(Tracer::json_string("l1\nl2\t\r") == "\"l1\\u000al2\\u0009\\u000d\"");
    CHECK(Tracer::json_string(std::string("\x01\x1f", 2)) == "\"\\u0001\\u001f\"");
    CHECK(Tracer::json_string(std::string("nul\0x", 5)) == "\"nul\\u0000x\"");
    CHECK(Tracer::json_string("link->node0 \xC2\xB5s") == "\"link->node0 \xC2\xB5s\"");   // UTF-8 kept
    const std::string nasty = "q\"b\\c\nd\x02/e";
    CHECK(parse_json(Tracer::json_string(nasty)).text == nasty);
}

TEST_CASE("json_number is finite and shortest exact", "[trace]") {
    CHECK(Tracer::json_number(0.0) == "0");
    CHECK(Tracer::json_number(3.0) == "3");
    CHECK(Tracer::json_number(0.1) == "0.1");
    CHECK(Tracer::json_number(-2.5) == "-2.5");
    CHECK(Tracer::json_number(std::numeric_limits<double>::quiet_NaN()) == "0");
    CHECK(Tracer::json_number(std::numeric_limits<double>::infinity()) == "0");
    CHECK(Tracer::json_number(-std::numeric_limits<double>::infinity()) == "0");
    for (double v : {1.0 / 3, 1e300, 5e-324, 123456789.123456789, 6.02214076e23}) {
        const std::string t = Tracer::json_number(v);
        INFO(t);
        CHECK(std::strtod(t.c_str(), nullptr) == v);
        CHECK(parse_json(t).type == JVal::Num);
        CHECK(t.size() <= 24);
    }
    CHECK(Tracer::json_number(std::uint64_t{0}) == "0");
    CHECK(Tracer::json_number(std::uint64_t{18446744073709551615ull}) == "18446744073709551615");
}

TEST_CASE("a disabled tracer records nothing but hands out tracks", "[trace]") {
    Tracer t;
    CHECK_FALSE(t.enabled());
    CHECK_FALSE(t.narrating());
    auto a = t.track("node1", "dma");
    auto b = t.track("node1", "dram");
    auto c = t.track("node2", "dma");
    CHECK(a.pid == 1);
    CHECK(a.tid == 1);
    CHECK(b.pid == 1);
    CHECK(b.tid == 2);
    CHECK(c.pid == 2);
    CHECK(c.tid == 1);
    auto a2 = t.track("node1", "dma");
    CHECK(a2.pid == a.pid);
    CHECK(a2.tid == a.tid);
    t.span(a, "x", sc_time(1, SC_NS), sc_time(2, SC_NS));
    t.instant(a, "y", sc_time(1, SC_NS));
    t.note(Tracer::Track{}, "step", sc_time(1, SC_NS), sc_core::SC_ZERO_TIME, "node1.dma", "nothing");
    CHECK(t.events_written() == 0);
    t.close();   // harmless
    CHECK_FALSE(t.enabled());
}

TEST_CASE("trace file has spans, instants and metadata", "[trace]") {
    Cleanup cl{make_temp_dir(), {}};
    const std::string json = cl.dir + "/trace.json";
    const std::string log = cl.dir + "/events.log";
    cl.files = {json, log};

    Tracer t;
    t.set_group_order({"node1", "node0"});   // pids in this order (a system's: node order)
    auto dma = t.track("node1", "dma");   // before open(): metadata at open()
    auto dram = t.track("node1", "dram");
    t.open(json, log);
    CHECK(t.enabled());
    CHECK(t.narrating());
    auto link = t.track("node0", "link->node1");   // after open(): metadata at once
    auto dma2 = t.track("node1", "dma");
    CHECK(dma2.tid == dma.tid);
    CHECK(link.pid == 2);
    CHECK(link.tid == 1);

    t.span(dma, "transfer \"3\"", sc_time(12.345678, SC_US), sc_time(12.345679, SC_US),
           {{"bytes", Tracer::json_number(std::uint64_t{4096})}, {"tag", Tracer::json_string("a\\b")}});
    t.span(dram, "read", sc_time(1, SC_PS), sc_time(3, SC_US));
    t.instant(link, "drop", sc_time(20000, SC_SEC), {{"ratio", Tracer::json_number(0.25)}});
    t.span(link, "zero", sc_time(5, SC_NS), sc_time(5, SC_NS));
    t.note(Tracer::Track{}, "step", sc_time(12.345678, SC_US), sc_core::SC_ZERO_TIME, "node1.dma", "transfer 3 posted");
    t.note(Tracer::Track{}, "step", sc_core::SC_ZERO_TIME, sc_core::SC_ZERO_TIME, "node0", "start");
    t.note(Tracer::Track{}, "step", sc_time(1234567.5, SC_US), sc_core::SC_ZERO_TIME, "x", "late");
    CHECK(t.events_written() == 4);
    t.close();
    t.close();   // idempotent
    CHECK_FALSE(t.enabled());
    CHECK_FALSE(t.narrating());

    const std::string text = slurp(json);
    INFO(text);
    // Ends with the closing brackets exactly once.
    CHECK(text.rfind("]", text.find("displayTimeUnit")) != std::string::npos);
    const auto evs = trace_events(json);
    // 2 groups x (process_name, process_sort_index) + 3 tracks x (thread_name,
    // thread_sort_index) + 4 events.
    CHECK(evs.size() == 4 + 6 + 4);
    CHECK(with_ph(evs, "M").size() == 10);
    CHECK(with_ph(evs, "X").size() == 3);
    CHECK(with_ph(evs, "i").size() == 1);

    // Metadata.
    const JVal* p1 = find_meta(evs, "process_name", 1);
    REQUIRE(p1);
    CHECK(p1->get("args")->get("name")->text == "node1");
    const JVal* p2 = find_meta(evs, "process_name", 2);
    REQUIRE(p2);
    CHECK(p2->get("args")->get("name")->text == "node0");
    const JVal* ps2 = find_meta(evs, "process_sort_index", 2);
    REQUIRE(ps2);
    CHECK(ps2->get("args")->get("sort_index")->num == 2);
    const JVal* t12 = find_meta(evs, "thread_name", 1, 2);
    REQUIRE(t12);
    CHECK(t12->get("args")->get("name")->text == "dram");
    const JVal* t21 = find_meta(evs, "thread_name", 2, 1);
    REQUIRE(t21);
    CHECK(t21->get("args")->get("name")->text == "link->node1");
    const JVal* ts12 = find_meta(evs, "thread_sort_index", 1, 2);
    REQUIRE(ts12);
    CHECK(ts12->get("args")->get("sort_index")->num == 2000);   // room for the track's lanes after it
    CHECK(find_meta(evs, "thread_name", 1, 3) == nullptr);

    // Metadata of a track precedes its first event.
    std::size_t meta_link = 0, first_link_event = 0;
    for (std::size_t i = 0; i < evs.size(); ++i) {
        if (&evs[i] == t21) meta_link = i;
        if (evs[i].get("ph")->text != "M" && evs[i].get("pid")->num == 2 && !first_link_event) first_link_event = i;
    }
    CHECK(meta_link < first_link_event);

    // Events: ts/dur in microseconds, exact; written in time order, whatever
    // the order they were emitted in.
    const auto spans = with_ph(evs, "X");
    REQUIRE(spans.size() == 3);
    CHECK(spans[0]->get("name")->text == "read");
    CHECK(spans[1]->get("name")->text == "zero");
    CHECK(spans[2]->get("name")->text == "transfer \"3\"");
    const JVal& s0 = *spans[2];
    CHECK(s0.get("name")->text == "transfer \"3\"");
    CHECK(s0.get("pid")->num == 1);
    CHECK(s0.get("tid")->num == 1);
    CHECK(s0.get("ts")->text == "12.345678");
    CHECK(s0.get("dur")->text == "0.000001");
    CHECK(s0.get("args")->get("bytes")->text == "4096");
    CHECK(s0.get("args")->get("tag")->text == "a\\b");
    const JVal& s1 = *spans[0];
    CHECK(s1.get("tid")->num == 2);
    CHECK(s1.get("ts")->text == "0.000001");
    CHECK(s1.get("dur")->text == "2.999999");
    CHECK(s1.get("args") == nullptr);
    const JVal& s2 = *spans[1];
    CHECK(s2.get("ts")->text == "0.005");
    CHECK(s2.get("dur")->text == "0");
    const JVal& i0 = *with_ph(evs, "i")[0];
    CHECK(i0.get("s")->text == "t");
    CHECK(i0.get("ts")->text == "20000000000");
    CHECK(i0.get("pid")->num == 2);
    CHECK(i0.get("tid")->num == 1);
    CHECK(i0.get("name")->text == "drop");
    CHECK(i0.get("args")->get("ratio")->text == "0.25");
    CHECK(i0.get("dur") == nullptr);

    // Narrated log: written at close, sorted by time (lines arrive out of
    // order under temporal decoupling).
    const auto lines = lines_of(slurp(log));
    REQUIRE(lines.size() == 3);
    CHECK(lines[0] == "    0.000000 us  node0  #1 start");
    CHECK(lines[1] == "   12.345678 us  node1.dma  #2 transfer 3 posted");
    CHECK(lines[2] == "1234567.500000 us  x  #3 late");
}

TEST_CASE("trace without a log and an empty trace", "[trace]") {
    Cleanup cl{make_temp_dir(), {}};
    const std::string json = cl.dir + "/empty.json";
    cl.files = {json};
    Tracer t;
    t.open(json);
    CHECK(t.enabled());
    CHECK_FALSE(t.narrating());
    t.note(Tracer::Track{}, "step", sc_time(1, SC_NS), sc_core::SC_ZERO_TIME, "a", "b");   // no log: nothing
    t.close();
    const auto evs = trace_events(json);
    CHECK(evs.empty());
}

TEST_CASE("the destructor finishes the trace", "[trace]") {
    Cleanup cl{make_temp_dir(), {}};
    const std::string json = cl.dir + "/t.json";
    const std::string log = cl.dir + "/t.log";
    cl.files = {json, log};
    {
        Tracer t;
        t.open(json, log);
        auto tr = t.track("g", "t");
        t.span(tr, "s", sc_time(1, SC_NS), sc_time(2, SC_NS));
        t.note(Tracer::Track{}, "step", sc_time(1, SC_NS), sc_core::SC_ZERO_TIME, "g.t", "hello");
    }
    const auto evs = trace_events(json);
    CHECK(evs.size() == 5);
    CHECK(lines_of(slurp(log)) == std::vector<std::string>{"    0.001000 us  g.t  #1 hello"});
}

TEST_CASE("reopening writes every track's metadata again", "[trace]") {
    Cleanup cl{make_temp_dir(), {}};
    const std::string a = cl.dir + "/a.json";
    const std::string b = cl.dir + "/b.json";
    cl.files = {a, b};
    Tracer t;
    t.open(a);
    auto x = t.track("n1", "x");
    auto y = t.track("n2", "y");
    t.span(x, "s", sc_time(1, SC_NS), sc_time(2, SC_NS));
    t.open(b);   // closes a
    t.instant(y, "i", sc_time(3, SC_NS));
    t.close();
    CHECK(trace_events(a).size() == 8 + 1);
    const auto evs = trace_events(b);
    CHECK(evs.size() == 8 + 1);
    REQUIRE(find_meta(evs, "thread_name", 1, 1));
    CHECK(find_meta(evs, "thread_name", 1, 1)->get("args")->get("name")->text == "x");
    REQUIRE(find_meta(evs, "process_name", 2));
    CHECK(find_meta(evs, "process_name", 2)->get("args")->get("name")->text == "n2");
    CHECK(t.events_written() == 2);
}

TEST_CASE("open fails cleanly on unwritable paths", "[trace]") {
    Cleanup cl{make_temp_dir(), {}};
    const std::string json = cl.dir + "/ok.json";
    cl.files = {json};
    Tracer t;
    CHECK_THROWS_AS(t.open(cl.dir + "/no/such/dir/t.json"), std::runtime_error);
    CHECK_FALSE(t.enabled());
    CHECK_THROWS_AS(t.open(json, cl.dir + "/no/such/dir/t.log"), std::runtime_error);
    CHECK_FALSE(t.enabled());
    CHECK_FALSE(t.narrating());
}

TEST_CASE("events come out in time order in bounded memory: sorted runs spill to disk and merge", "[trace]") {
    Cleanup cl{make_temp_dir(), {}};
    const std::string json = cl.dir + "/big.json";
    cl.files = {json};
    Tracer t;
    t.set_spill_bytes(64 * 1024);   // a few hundred events per run
    t.open(json);
    auto tr = t.track("node1", "dma");
    auto tr2 = t.track("node1", "dram");
    // Emitted out of time order, as models under temporal decoupling do:
    // interleaved descending and ascending times, on two tracks.
    for (int i = 0; i < 10000; ++i) {
        t.span(tr, "transfer", sc_time(20000 - i, SC_NS), sc_time(20001 - i, SC_NS),
               {{"i", Tracer::json_number(static_cast<std::uint64_t>(i))}});
        t.span(tr2, "read", sc_time(i, SC_NS), sc_time(i + 1, SC_NS));
    }
    // Runs are on disk before close(), not in memory.
    CHECK(fs::exists(json + ".run0"));
    CHECK(fs::exists(json + ".run10"));
    t.close();
    CHECK_FALSE(fs::exists(json + ".run0"));
    const auto evs = trace_events(json);
    CHECK(evs.size() == 20000 + 6);
    CHECK(t.events_written() == 20000);
    const auto spans = with_ph(evs, "X");
    REQUIRE(spans.size() == 20000);
    double last = -1;
    bool ordered = true;
    for (const JVal* s : spans) {
        const double ts = std::stod(s->get("ts")->text);
        ordered = ordered && ts >= last;
        last = ts;
    }
    CHECK(ordered);
    CHECK(spans.front()->get("ts")->text == "0");
    CHECK(spans.back()->get("ts")->text == "20");
}

TEST_CASE("overlapping spans are slices on lanes: the track, then '<track> lane N'", "[trace]") {
    Cleanup cl{make_temp_dir(), {}};
    const std::string json = cl.dir + "/async.json";
    cl.files = {json};
    Tracer t;
    const auto tr = t.track("node0", "dma");
    const auto walks = t.track("node0", "smmu tcu");
    t.open(json);
    // Recorded out of start order, as models do: 8 ends before 7 does.
    t.async_span(tr, "transfer", 8, sc_time(2, SC_US), sc_time(3, SC_US));
    t.async_span(tr, "transfer", 7, sc_time(1, SC_US), sc_time(5, SC_US),
                 {{"bytes", Tracer::json_number(std::uint64_t(64))}});
    t.async_span(tr, "transfer", 9, sc_time(3, SC_US), sc_time(4, SC_US));   // lane 2 is free again at 3
    t.span(tr, "credit wait", sc_time(6, SC_US), sc_time(7, SC_US));   // dma draws slices of its own
    t.async_span(walks, "walk", 1, sc_time(1, SC_US), sc_time(2, SC_US));   // smmu tcu draws none
    t.async_span(walks, "walk", 2, sc_time(1500, SC_NS), sc_time(2, SC_US));
    t.close();
    CHECK(t.events_written() == 6);
    const auto evs = trace_events(json);
    CHECK(with_ph(evs, "b").empty());   // no async events: the DevTools panel draws none
    CHECK(with_ph(evs, "e").empty());
    const auto xs = with_ph(evs, "X");
    REQUIRE(xs.size() == 6);
    auto lane_of = [&](const JVal* x) {
        const JVal* m =
            find_meta(evs, "thread_name", static_cast<int>(x->get("pid")->num), static_cast<int>(x->get("tid")->num));
        REQUIRE(m);
        return m->get("args")->get("name")->text;
    };
    // In time order: 7 at 1 and the first walk at 1, the second walk, 8 at 2, 9 at 3, the credit wait.
    CHECK(xs[0]->get("name")->text == "transfer");
    CHECK(xs[0]->get("ts")->text == "1");
    CHECK(xs[0]->get("dur")->text == "4");
    CHECK(xs[0]->get("cat")->text == "async");
    CHECK(xs[0]->get("args")->get("bytes")->text == "64");
    // dma has slices of its own, so its spans start on lane 2.
    CHECK(lane_of(xs[0]) == "dma lane 2");
    CHECK(xs[1]->get("name")->text == "walk");
    CHECK(lane_of(xs[1]) == "smmu tcu");   // its own track: nothing else is drawn there
    CHECK(xs[2]->get("ts")->text == "1.5");
    CHECK(lane_of(xs[2]) == "smmu tcu lane 2");
    CHECK(xs[3]->get("ts")->text == "2");
    CHECK(lane_of(xs[3]) == "dma lane 3");
    CHECK(xs[4]->get("ts")->text == "3");
    CHECK(lane_of(xs[4]) == "dma lane 3");   // 8 ended at 3: the lowest free lane
    CHECK(xs[5]->get("name")->text == "credit wait");
    CHECK(lane_of(xs[5]) == "dma");
    // Lanes sort right after their track; their names come before their first slice.
    const int pid = static_cast<int>(xs[0]->get("pid")->num), tid = static_cast<int>(xs[0]->get("tid")->num);
    const JVal* lane2 = find_meta(evs, "thread_name", pid, tid);
    const JVal* sort2 = find_meta(evs, "thread_sort_index", pid, tid);
    REQUIRE(sort2);
    CHECK(sort2->get("args")->get("sort_index")->num == tr.tid * 1000 + 1);
    CHECK(lane2 < xs[0]);
}

TEST_CASE("lanes never overlap, whatever the order spans are recorded in, through spilled runs", "[trace]") {
    Cleanup cl{make_temp_dir(), {}};
    const std::string json = cl.dir + "/lanes.json";
    cl.files = {json};
    Tracer t;
    t.set_spill_bytes(8 * 1024);   // a few dozen records per sorted run
    const auto tr = t.track("node0", "ssd");
    t.open(json);
    // Spans of random starts and lengths, recorded in a scrambled order.
    std::vector<std::pair<int, int>> spans;   // [start, end) in ns
    unsigned x = 12345;
    auto rnd = [&x](int n) {
        x = x * 1103515245u + 12345u;
        return static_cast<int>((x >> 8) % static_cast<unsigned>(n));
    };
    for (int i = 0; i < 3000; ++i) {
        const int s = rnd(100000);
        spans.emplace_back(s, s + rnd(400));
    }
    for (std::size_t i = spans.size(); i > 1; --i)
        std::swap(spans[i - 1], spans[static_cast<std::size_t>(rnd(static_cast<int>(i)))]);
    for (std::size_t i = 0; i < spans.size(); ++i)
        t.async_span(tr, "read", i, sc_time(spans[i].first, SC_NS), sc_time(spans[i].second, SC_NS),
                     {{"i", Tracer::json_number(static_cast<std::uint64_t>(i))}});
    CHECK(fs::exists(json + ".run0"));
    t.close();
    // As many lanes as spans ever overlap (greedy by start is optimal).
    std::vector<std::pair<int, int>> ends;
    for (const auto& s : spans) ends.emplace_back(s.first, 1), ends.emplace_back(s.second, -1);
    std::sort(ends.begin(), ends.end());   // an end before a start at the same time
    int depth = 0, most = 0;
    for (const auto& e : ends) most = std::max(most, depth += e.second);

    const auto evs = trace_events(json);
    const auto xs = with_ph(evs, "X");
    REQUIRE(xs.size() == spans.size());
    std::map<int, double> lane_end;
    std::vector<int> seen(spans.size(), 0);
    bool overlap = false;
    for (const JVal* s : xs) {
        const double ts = std::stod(s->get("ts")->text), end = ts + std::stod(s->get("dur")->text);
        const int tid = static_cast<int>(s->get("tid")->num);
        auto it = lane_end.find(tid);
        if (it != lane_end.end() && it->second > ts + 1e-9) overlap = true;
        lane_end[tid] = end;
        const auto i = static_cast<std::size_t>(std::stoul(s->get("args")->get("i")->text));
        ++seen[i];
        CHECK(std::llround(ts * 1000) == spans[i].first);
    }
    CHECK_FALSE(overlap);
    CHECK(std::count(seen.begin(), seen.end(), 1) == static_cast<long>(spans.size()));
    CHECK(static_cast<int>(lane_end.size()) == most);
    CHECK(most > 3);
    for (const auto& [tid, end] : lane_end) {
        const JVal* m = find_meta(evs, "thread_name", tr.pid, tid);
        REQUIRE(m);
        CHECK(m->get("args")->get("name")->text ==
              (tid == tr.tid ? "ssd" : "ssd lane " + std::to_string(tid - tr.tid + 1)));
    }
}

TEST_CASE("a log without a trace narrates but writes no JSON", "[trace]") {
    Cleanup cl{make_temp_dir(), {}};
    const std::string log = cl.dir + "/events.log";
    cl.files = {log};
    Tracer t;
    t.open("", log);
    CHECK_FALSE(t.enabled());
    CHECK(t.narrating());
    t.span(t.track("a", "b"), "x", sc_time(1, SC_NS), sc_time(2, SC_NS));
    t.note(Tracer::Track{}, "step", sc_time(2, SC_NS), sc_core::SC_ZERO_TIME, "a", "second");
    t.note(Tracer::Track{}, "step", sc_time(1, SC_NS), sc_core::SC_ZERO_TIME, "a", "first");
    t.close();
    const auto lines = lines_of(slurp(log));
    REQUIRE(lines.size() == 2);
    CHECK(lines[0] == "    0.001000 us  a  #1 first");   // numbered in the order written
    CHECK(lines[1] == "    0.002000 us  a  #2 second");
}

TEST_CASE("a long log comes out in time order in bounded memory", "[trace]") {
    Cleanup cl{make_temp_dir(), {}};
    const std::string log = cl.dir + "/events.log";
    cl.files = {log};
    Tracer t;
    t.set_spill_bytes(16 * 1024);
    t.open("", log);
    for (int i = 0; i < 5000; ++i) {
        t.note(Tracer::Track{}, "step", sc_time(10000 - i, SC_NS), sc_core::SC_ZERO_TIME, "node0.dma",
               "down " + std::to_string(i));
        t.note(Tracer::Track{}, "step", sc_time(i, SC_NS), sc_core::SC_ZERO_TIME, "node1.dma",
               "up " + std::to_string(i));
    }
    // Lines are on disk before close(), not in memory.
    CHECK(fs::exists(log + ".run0"));
    t.close();
    CHECK_FALSE(fs::exists(log + ".run0"));
    const auto lines = lines_of(slurp(log));
    REQUIRE(lines.size() == 10000);
    double last = -1;
    bool ordered = true;
    for (const auto& l : lines) {
        const double us = std::stod(l);
        ordered = ordered && us >= last;
        last = us;
    }
    CHECK(ordered);
    CHECK(lines.front() == "    0.000000 us  node1.dma  #1 up 0");
    CHECK(lines.back() == "   10.000000 us  node0.dma  #10000 down 0");
}

TEST_CASE("the log filter keeps the lines of the named nodes and models", "[trace]") {
    Cleanup cl{make_temp_dir(), {}};
    const std::string log = cl.dir + "/events.log";
    cl.files = {log};
    Tracer t;
    t.track("node0", "dma");   // the groups (nodes) the models made tracks for
    t.track("node1", "dma");
    t.open("", log);
    t.set_log_filter({"node1", "smmu"});
    t.note(Tracer::Track{}, "step", sc_time(1, SC_NS), sc_core::SC_ZERO_TIME, "node1.smmu", "kept: node and model");
    t.note(Tracer::Track{}, "step", sc_time(2, SC_NS), sc_core::SC_ZERO_TIME, "node1.smmu_driver",
           "kept: smmu_ is smmu's family");
    t.note(Tracer::Track{}, "step", sc_time(3, SC_NS), sc_core::SC_ZERO_TIME, "node0.smmu", "dropped: another node");
    t.note(Tracer::Track{}, "step", sc_time(4, SC_NS), sc_core::SC_ZERO_TIME, "node1.dma", "dropped: another model");
    t.note(Tracer::Track{}, "step", sc_time(5, SC_NS), sc_core::SC_ZERO_TIME, "node1.smmuX",
           "dropped: not a component match");
    t.close();
    const auto lines = lines_of(slurp(log));
    REQUIRE(lines.size() == 2);
    CHECK(lines[0].find("kept: node and model") != std::string::npos);
    CHECK(lines[1].find("kept: smmu_") != std::string::npos);

    Tracer only_nodes;
    only_nodes.track("node0", "dma");
    only_nodes.track("node1", "dma");
    only_nodes.open("", log);
    only_nodes.set_log_filter({"node0"});
    only_nodes.note(Tracer::Track{}, "step", sc_time(1, SC_NS), sc_core::SC_ZERO_TIME, "node0.dma", "kept");
    only_nodes.note(Tracer::Track{}, "step", sc_time(1, SC_NS), sc_core::SC_ZERO_TIME, "node0.smmu", "kept too");
    only_nodes.note(Tracer::Track{}, "step", sc_time(1, SC_NS), sc_core::SC_ZERO_TIME, "node1.dma", "dropped");
    only_nodes.close();
    CHECK(lines_of(slurp(log)).size() == 2);
}

TEST_CASE("noted steps name their cause: ids in the log, flow arrows in the trace", "[trace]") {
    Cleanup cl{make_temp_dir(), {}};
    const std::string json = cl.dir + "/t.json";
    const std::string log = cl.dir + "/events.log";
    cl.files = {json, log};
    Tracer t;
    const auto smmu = t.track("node1", "smmu faults");
    const auto cpu = t.track("node1", "cpu0");
    t.open(json, log);
    const auto fault = t.note(smmu, "fault", sc_time(1, SC_US), sc_core::SC_ZERO_TIME, "node1.smmu",
                              "translation fault at " + Tracer::hex(0x7efffffff000ull), Tracer::Cause{},
                              {{"va", Tracer::json_hex(0x7efffffff000ull)}});
    const auto irq = t.note(cpu, "smmu irq handler", sc_time(2, SC_US), sc_time(3, SC_US), "node1.smmu_driver",
                            "the handler reads FSR", fault);
    const auto lib = t.note(cpu, "fault library", sc_time(6, SC_US), sc_time(4, SC_US), "node1.fault_lib",
                            "makes the page present", irq);
    CHECK(fault.id != 0);
    CHECK(irq.id != fault.id);
    CHECK(lib.track.tid == cpu.tid);
    t.close();

    const auto lines = lines_of(slurp(log));
    REQUIRE(lines.size() == 3);
    CHECK(lines[0].find("node1.smmu  #" + std::to_string(fault.id) + " translation fault at 0x7efffffff000") !=
          std::string::npos);
    CHECK(lines[1].find("the handler reads FSR (after #" + std::to_string(fault.id) + ")") != std::string::npos);
    CHECK(lines[2].find("(after #" + std::to_string(irq.id) + ")") != std::string::npos);

    const auto evs = trace_events(json);
    const auto slices = with_ph(evs, "X");
    REQUIRE(slices.size() == 3);
    CHECK(slices[0]->get("args")->get("va")->text == "0x7efffffff000");
    CHECK(slices[1]->get("args")->get("after")->text == "#" + std::to_string(fault.id));
    const auto starts = with_ph(evs, "s");
    const auto finishes = with_ph(evs, "f");
    REQUIRE(starts.size() == 2);
    REQUIRE(finishes.size() == 2);
    // Arrow 1: from the fault (on its track, at its time) to the handler.
    CHECK(starts[0]->get("tid")->num == smmu.tid);
    CHECK(starts[0]->get("ts")->text == "1");
    CHECK(finishes[0]->get("tid")->num == cpu.tid);
    CHECK(finishes[0]->get("ts")->text == "2");
    CHECK(finishes[0]->get("bp")->text == "e");
    CHECK(starts[0]->get("id")->num == finishes[0]->get("id")->num);
    CHECK(starts[1]->get("id")->num != starts[0]->get("id")->num);
    CHECK(starts[0]->get("cat")->text == finishes[0]->get("cat")->text);
    // Each end of an arrow is at the start of a slice of its cat on its
    // thread (what the DevTools Performance panel binds a flow event to).
    for (const JVal* x : slices) CHECK(x->get("cat")->text == starts[0]->get("cat")->text);

    // Neither output on: nothing noted, no id handed out.
    Tracer off;
    CHECK_FALSE(off.note(off.track("a", "b"), "x", sc_time(1, SC_NS), sc_core::SC_ZERO_TIME, "a", "x"));
}

TEST_CASE("a Scope makes notes follow its cause, kept stories need no output file", "[trace]") {
    Tracer t;
    t.keep_story(3);
    CHECK(t.noting());
    const auto tr = t.track("node0", "cpu0");
    const auto fault = t.note(tr, "fault", sc_time(1, SC_US), sc_time(0, SC_US), "node0.smmu", "fault");
    REQUIRE(fault);
    CHECK_FALSE(t.current());
    Tracer::Cause inner;
    {
        Tracer::Scope s(t, fault);
        CHECK(t.current().id == fault.id);
        const auto lib = t.note(tr, "lib", sc_time(2, SC_US), sc_time(1, SC_US), "node0.lib", "library");
        {
            Tracer::Scope s2(t, lib);
            inner = t.note(tr, "page", sc_time(3, SC_US), sc_time(1, SC_US), "node0.vm", "page in");
        }
        CHECK(t.current().id == fault.id);   // the outer scope is back
        REQUIRE(t.story().size() == 3);
        CHECK(t.story()[1].after == fault.id);
        CHECK(t.story()[2].after == lib.id);
    }
    CHECK_FALSE(t.current());
    // An explicit cause wins over the scope; past the cap, steps are counted, not kept.
    t.note(tr, "x", sc_time(4, SC_US), sc_time(0, SC_US), "node0.dma", "dropped");
    CHECK(t.story().size() == 3);
    CHECK(t.story_dropped() == 1);
    CHECK(t.story()[0].text == "fault");
    CHECK(t.story()[2].id == inner.id);
}

TEST_CASE("slices that touch still touch when a viewer adds start and duration in double precision", "[trace]") {
    Cleanup cl{make_temp_dir(), {}};
    const std::string json = cl.dir + "/touch.json";
    cl.files = {json};
    Tracer t;
    const auto link = t.track("node0", "link->node1");
    t.open(json);
    // Packets back to back, 144 ns each: 9.490322 + 0.144 is 9.634322000000001
    // in doubles, past the next packet's start (the DevTools panel drops one).
    for (int i = 0; i < 200; ++i)
        t.span(link, "data", sc_time(8914322 + 144000 * i, SC_PS), sc_time(8914322 + 144000 * (i + 1), SC_PS));
    t.close();
    const auto evs = trace_events(json);
    const auto xs = with_ph(evs, "X");
    REQUIRE(xs.size() == 200);
    int shortened = 0;
    for (std::size_t i = 0; i + 1 < xs.size(); ++i) {
        const double ts = std::strtod(xs[i]->get("ts")->text.c_str(), nullptr);
        const double dur = std::strtod(xs[i]->get("dur")->text.c_str(), nullptr);
        const double next = std::strtod(xs[i + 1]->get("ts")->text.c_str(), nullptr);
        INFO("slice " << i << " at " << xs[i]->get("ts")->text << " for " << xs[i]->get("dur")->text);
        CHECK(ts + dur <= next);
        CHECK(std::fabs(dur - 0.144) < 1e-8);   // femtoseconds short at most
        CHECK(xs[i + 1]->get("ts")->text == Tracer::json_number((8914322 + 144000.0 * (i + 1)) / 1e6));
        shortened += xs[i]->get("dur")->text != "0.144";
    }
    CHECK(shortened > 0);   // the case arises (9.490322 among them)
    CHECK(shortened < 100);
}

TEST_CASE("a window keeps what overlaps it, in the trace and the log alike", "[trace]") {
    Cleanup cl{make_temp_dir(), {}};
    const std::string json = cl.dir + "/w.json";
    const std::string log = cl.dir + "/w.log";
    cl.files = {json, log};
    Tracer t;
    const auto cpu = t.track("node0", "cpu0");
    const auto dma = t.track("node0", "dma");
    t.open(json, log);
    t.set_window(sc_time(10, SC_US), sc_time(20, SC_US));
    t.span(cpu, "before", sc_time(1, SC_US), sc_time(9, SC_US));
    t.span(cpu, "across the start", sc_time(5, SC_US), sc_time(12, SC_US));   // kept whole
    t.span(cpu, "inside", sc_time(13, SC_US), sc_time(14, SC_US));
    t.span(cpu, "after", sc_time(21, SC_US), sc_time(22, SC_US));
    t.async_span(dma, "transfer", 1, sc_time(19, SC_US), sc_time(30, SC_US));   // across the end
    t.async_span(dma, "transfer", 2, sc_time(25, SC_US), sc_time(30, SC_US));
    t.instant(dma, "NACK", sc_time(9, SC_US));
    t.instant(dma, "NACK", sc_time(10, SC_US));
    t.note(Tracer::Track{}, "step", sc_time(9, SC_US), sc_core::SC_ZERO_TIME, "node0.dma", "out");   // #1
    t.note(Tracer::Track{}, "step", sc_time(20, SC_US), sc_core::SC_ZERO_TIME, "node0.dma", "in");   // #2
    // A story across the window's start: the arrow from the step before it
    // is dropped with that step's slice; the arrow within it is kept.
    const auto a = t.note(cpu, "fault", sc_time(8, SC_US), sc_core::SC_ZERO_TIME, "node0.smmu", "fault");
    const auto b = t.note(cpu, "handler", sc_time(15, SC_US), sc_time(1, SC_US), "node0.drv", "handler", a);
    t.note(dma, "resume", sc_time(17, SC_US), sc_core::SC_ZERO_TIME, "node0.dma", "resume", b);
    t.close();
    CHECK(t.events_written() == 6);
    const auto evs = trace_events(json);
    std::vector<std::string> names;
    for (const JVal* x : with_ph(evs, "X")) names.push_back(x->get("name")->text);
    CHECK(names == std::vector<std::string>{"across the start", "inside", "handler", "resume", "transfer"});
    REQUIRE(with_ph(evs, "i").size() == 1);
    CHECK(with_ph(evs, "i")[0]->get("ts")->text == "10");
    REQUIRE(with_ph(evs, "s").size() == 1);   // handler -> resume only
    CHECK(with_ph(evs, "s")[0]->get("ts")->text == "15");
    REQUIRE(with_ph(evs, "f").size() == 1);
    const auto lines = lines_of(slurp(log));
    REQUIRE(lines.size() == 3);
    // Numbers count every step, written or not: fault #1 (8 us), out #2.
    CHECK(lines[0].find("node0.drv  #3 handler") != std::string::npos);
    CHECK(lines[1].find("node0.dma  #4 resume (after #3)") != std::string::npos);
    CHECK(lines[2] == "   20.000000 us  node0.dma  #5 in");
}

TEST_CASE("the trace filter keeps the tracks of the named nodes and models, and arrows between kept tracks",
          "[trace]") {
    Cleanup cl{make_temp_dir(), {}};
    const std::string json = cl.dir + "/f.json";
    cl.files = {json};
    Tracer t;
    const auto dma0 = t.track("node0", "dma");
    const auto dma1 = t.track("node1", "dma");
    const auto tcu1 = t.track("node1", "smmu tcu");
    const auto faults1 = t.track("node1", "smmu faults");
    const auto cpu1 = t.track("node1", "cpu2");
    const auto dram1 = t.track("node1", "dram");
    t.open(json);
    t.set_trace_filter({"node1", "smmu", "cpu", "nosuchmodel"});
    t.span(dma0, "x", sc_time(1, SC_NS), sc_time(2, SC_NS));
    t.span(dma1, "x", sc_time(1, SC_NS), sc_time(2, SC_NS));
    t.async_span(tcu1, "walk", 1, sc_time(1, SC_NS), sc_time(2, SC_NS));   // "smmu" matches "smmu tcu"
    t.instant(faults1, "fault", sc_time(1, SC_NS));
    t.span(cpu1, "handler", sc_time(3, SC_NS), sc_time(4, SC_NS));   // "cpu" matches cpu2
    t.span(dram1, "read", sc_time(1, SC_NS), sc_time(2, SC_NS));
    const auto f = t.note(faults1, "fault", sc_time(5, SC_NS), sc_core::SC_ZERO_TIME, "node1.smmu", "fault");
    const auto h = t.note(cpu1, "handler", sc_time(6, SC_NS), sc_time(1, SC_NS), "node1.drv", "handler", f);
    t.note(dma1, "resume", sc_time(8, SC_NS), sc_core::SC_ZERO_TIME, "node1.dma", "resume", h);   // dropped
    t.close();
    const auto evs = trace_events(json);
    std::vector<std::string> kept;
    for (const JVal& e : evs)
        if (e.get("ph")->text == "X" || e.get("ph")->text == "i")
            kept.push_back(std::to_string(static_cast<int>(e.get("pid")->num)) + "/" + e.get("name")->text);
    CHECK(kept == std::vector<std::string>{"2/walk", "2/fault", "2/handler", "2/fault", "2/handler"});
    CHECK(with_ph(evs, "s").size() == 1);   // fault -> handler; handler -> resume went with dma
    CHECK(with_ph(evs, "f").size() == 1);
    CHECK(t.unmatched_trace_filter_terms() == std::vector<std::string>{"nosuchmodel"});
    // Every track still has its name: a viewer shows the empty ones as such.
    CHECK(find_meta(evs, "thread_name", dma0.pid, dma0.tid) != nullptr);
}

TEST_CASE("a trace path ending in .gz is written gzip-compressed", "[trace]") {
    Cleanup cl{make_temp_dir(), {}};
    const std::string plain = cl.dir + "/t.json";
    const std::string gz = cl.dir + "/t.json.gz";
    cl.files = {plain, gz};
    for (const std::string& path : {plain, gz}) {
        Tracer t;
        t.set_spill_bytes(16 * 1024);
        const auto tr = t.track("node0", "dma");
        t.open(path);
        for (int i = 0; i < 3000; ++i) {
            // Two at a time at most: lanes 2 and 3 (dma draws slices of its own).
            t.async_span(tr, "transfer", static_cast<std::uint64_t>(i), sc_time((3000 - i) * 100, SC_NS),
                         sc_time((3000 - i) * 100 + 150, SC_NS),
                         {{"i", Tracer::json_number(static_cast<std::uint64_t>(i))}});
            t.span(tr, "credit wait", sc_time(i * 10, SC_US), sc_time(i * 10 + 1, SC_US));
        }
        t.close();
    }
    const std::string text = slurp(plain);
    const std::string packed = slurp(gz);
    REQUIRE(packed.size() > 2);
    CHECK(static_cast<unsigned char>(packed[0]) == 0x1f);   // gzip's magic
    CHECK(static_cast<unsigned char>(packed[1]) == 0x8b);
    CHECK(packed.size() * 3 < text.size());
    // Decompressed, it is the plain file byte for byte.
    gzFile in = gzopen(gz.c_str(), "rb");
    REQUIRE(in != nullptr);
    std::string back;
    char buf[65536];
    for (int n; (n = gzread(in, buf, sizeof buf)) > 0;) back.append(buf, static_cast<std::size_t>(n));
    gzclose(in);
    CHECK(back == text);
    CHECK(trace_events(plain).size() == 6000 + 2 + 2 + 2 * 2);   // lanes: dma lane 2..3
    CHECK_FALSE(fs::exists(gz + ".run0"));
}

TEST_CASE("a growing trace or log is reported at its size thresholds", "[trace]") {
    Cleanup cl{make_temp_dir(), {}};
    const std::string json = cl.dir + "/s.json";
    const std::string log = cl.dir + "/s.log";
    cl.files = {json, log};
    Tracer t;
    const auto tr = t.track("node0", "dram");
    t.open(json, log);
    std::vector<std::pair<std::string, std::uint64_t>> warned;
    t.watch_size(10000, [&](const char* file, std::uint64_t bytes) { warned.emplace_back(file, bytes); });
    for (int i = 0; i < 4000; ++i) t.span(tr, "read", sc_time(i, SC_NS), sc_time(i + 1, SC_NS));
    t.note(Tracer::Track{}, "step", sc_time(1, SC_NS), sc_core::SC_ZERO_TIME, "node0.dram", std::string(20000, 'x'));
    const std::uint64_t recorded = t.trace_bytes();
    t.close();
    // At 10 kB, 40 kB and 160 kB of events; the log once, past 10 kB and 40 kB in one line.
    REQUIRE(warned.size() == 4);
    CHECK(warned[0].first == "trace");
    CHECK(warned[0].second >= 10000);
    CHECK(warned[0].second < 10100);
    CHECK(warned[1].second >= 40000);
    CHECK(warned[2].second >= 160000);
    CHECK(warned[3].first == "log");
    CHECK(warned[3].second > 20000);
    // The bytes counted are the events' text: the file is that, the
    // tracks' names and its frame.
    const auto size = fs::file_size(json);
    CHECK(size >= recorded);
    CHECK(size < recorded + 1000);
}

TEST_CASE("hex writes addresses as 0x and lower-case digits", "[trace]") {
    CHECK(Tracer::hex(0) == "0x0");
    CHECK(Tracer::hex(0x7efffffff000ull) == "0x7efffffff000");
    CHECK(Tracer::json_hex(255) == "\"0xff\"");
    CHECK(Tracer::hex(~0ull) == "0xffffffffffffffff");
}

namespace {

// The numbers of a log's lines and of the steps they follow ("#N ... (after #M)").
struct Numbered {
    std::uint64_t id = 0, after = 0;
};
std::vector<Numbered> numbers_of(const std::vector<std::string>& lines) {
    std::vector<Numbered> out;
    for (const auto& l : lines) {
        Numbered n;
        const auto hash = l.find("  #");
        if (hash != std::string::npos) n.id = std::stoull(l.substr(hash + 3));
        const auto after = l.rfind("(after #");
        if (after != std::string::npos) n.after = std::stoull(l.substr(after + 8));
        out.push_back(n);
    }
    return out;
}

}   // namespace

TEST_CASE("steps are numbered in the order written: consecutive, each cause before its effects", "[trace]") {
    Cleanup cl{make_temp_dir(), {}};
    const std::string log = cl.dir + "/events.log";
    cl.files = {log};
    Tracer t;
    t.open("", log);
    const auto cpu = t.track("node0", "cpu0");
    // Recorded out of time order (temporal decoupling), and a chain of
    // steps of one time whose causes come later in arrival than unrelated
    // steps of that time.
    const auto late = t.note(cpu, "late", sc_time(30, SC_NS), sc_core::SC_ZERO_TIME, "node0.a", "late");
    const auto a = t.note(cpu, "a", sc_time(10, SC_NS), sc_core::SC_ZERO_TIME, "node0.a", "a");
    const auto b = t.note(Tracer::Track{}, "b", sc_time(10, SC_NS), sc_core::SC_ZERO_TIME, "node0.b", "b", a);
    const auto c = t.note(cpu, "c", sc_time(10, SC_NS), sc_core::SC_ZERO_TIME, "node0.c", "c", b);
    t.note(cpu, "d", sc_time(10, SC_NS), sc_core::SC_ZERO_TIME, "node0.d", "d");
    t.note(cpu, "e", sc_time(40, SC_NS), sc_core::SC_ZERO_TIME, "node0.e", "e", late);
    t.note(cpu, "f", sc_time(5, SC_NS), sc_core::SC_ZERO_TIME, "node0.f", "f");
    CHECK(c.depth == 2);
    CHECK(b.noted == sc_time(10, SC_NS));
    t.close();
    const auto lines = lines_of(slurp(log));
    REQUIRE(lines.size() == 7);
    const auto n = numbers_of(lines);
    for (std::size_t k = 0; k < n.size(); ++k) {
        INFO(lines[k]);
        CHECK(n[k].id == k + 1);   // consecutive, in the order written
        if (n[k].after) CHECK(n[k].after < n[k].id);   // a cause is written before its effects
    }
    // Same time: the steps without a cause at that time (depth 0) first, then
    // each chain's next step.
    CHECK(lines[0].find("#1 f") != std::string::npos);
    CHECK(lines[1].find("#2 a") != std::string::npos);
    CHECK(lines[2].find("#3 d") != std::string::npos);
    CHECK(lines[3].find("#4 b (after #2)") != std::string::npos);
    CHECK(lines[4].find("#5 c (after #4)") != std::string::npos);
    CHECK(lines[6].find("#7 e (after #6)") != std::string::npos);
}

TEST_CASE("one rank's records handed to another write what one tracer writes", "[trace]") {
    // Two ranks, each with its own group; a story that crosses from one to
    // the other (a Cause carried with a portable track, as CutMail does).
    // What rank 0 writes after taking rank 1's records must be byte for
    // byte what one tracer recording both writes.
    Cleanup cl{make_temp_dir(), {}};
    const std::string one_json = cl.dir + "/one.json", one_log = cl.dir + "/one.log";
    const std::string two_json = cl.dir + "/two.json", two_log = cl.dir + "/two.log";
    cl.files = {one_json, one_log, two_json, two_log};
    const std::vector<std::string> order{"node0", "node1"};
    struct Side {
        Tracer& tr;
        unsigned rank;
    };
    // The same calls, on `a` for node0's models and `b` for node1's.
    auto play = [&order](Side a, Side b) {
        for (Side s : {a, b}) s.tr.set_group_order(order);
        // Each side's calls as one SystemC process's of its node would make them.
        auto A = [&a]() -> Tracer& {
            a.tr.set_outside_process("node0.proc");
            return a.tr;
        };
        auto B = [&b]() -> Tracer& {
            b.tr.set_outside_process("node1.proc");
            return b.tr;
        };
        const auto dma0 = A().track("node0", "dma");
        const auto link0 = A().track("node0", "link->node1");
        const auto dma1 = B().track("node1", "dma");
        const auto cpu1 = B().track("node1", "cpu0");
        A().span(link0, "data", sc_time(2, SC_NS), sc_time(3, SC_NS));
        A().async_span(dma0, "transfer", 1, sc_time(1, SC_NS), sc_time(9, SC_NS));
        A().async_span(dma0, "transfer", 2, sc_time(2, SC_NS), sc_time(4, SC_NS));
        const auto start = A().note(dma0, "start", sc_time(1, SC_NS), sc_core::SC_ZERO_TIME, "node0.dma", "start");
        Tracer::Cause carried = start;
        if (a.rank != b.rank) carried.track = Tracer::portable(a.rank, carried.track);
        const auto fault =
            B().note(cpu1, "fault", sc_time(4, SC_NS), sc_time(1, SC_NS), "node1.smmu", "fault", carried);
        B().note(Tracer::Track{}, "log only", sc_time(4, SC_NS), sc_core::SC_ZERO_TIME, "node1.drv", "then", fault);
        B().instant(dma1, "NACK", sc_time(6, SC_NS));
        B().note(dma1, "resend", sc_time(7, SC_NS), sc_core::SC_ZERO_TIME, "node1.dma", "resend", fault);
        A().note(dma0, "done", sc_time(8, SC_NS), sc_core::SC_ZERO_TIME, "node0.dma", "done", start);
    };
    {
        Tracer one;
        one.open(one_json, one_log);
        play({one, 0}, {one, 0});
        one.close();
    }
    {
        Tracer r0, r1;
        r1.set_rank(1);
        r0.open(two_json, two_log);
        r1.record_only(true, true, cl.dir + "/r1");
        play({r0, 0}, {r1, 1});
        r0.import_tables(1, r1.export_tables());
        r1.export_records([&r0](std::uint8_t stream, std::uint64_t ts, const TimeSortedSpool::Tie& tie,
                                const std::string& rec) { r0.import_record(1, stream, ts, tie, rec); });
        r1.close();
        r0.close();
    }
    CHECK(slurp(two_log) == slurp(one_log));
    CHECK(slurp(two_json) == slurp(one_json));
    const auto evs = trace_events(two_json);
    CHECK(with_ph(evs, "s").size() == 3);   // start -> fault (across), fault -> resend, start -> done
    const auto lines = lines_of(slurp(one_log));
    REQUIRE(lines.size() == 5);
    CHECK(lines[1].find("#2 fault (after #1)") != std::string::npos);
    CHECK(lines[2].find("#3 then (after #2)") != std::string::npos);
}
