// The run report's parts (src/tools/report.hpp): the fault timeline from a Tracer
// fed with notes directly, the choice and drawing of the key distributions,
// and the page's verdict. The page as a whole, in a real browser:
// tests/scripts/report_browser_test.py.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "src/core/output_dir.hpp"
#include "src/tools/report.hpp"

using namespace vrdmasim;
using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_US;

namespace {

bool contains(const std::string& hay, const std::string& needle) { return hay.find(needle) != std::string::npos; }

std::size_t count_of(const std::string& hay, const std::string& needle) {
    std::size_t n = 0;
    for (auto p = hay.find(needle); p != std::string::npos; p = hay.find(needle, p + 1)) ++n;
    return n;
}

// Every in-page link names a row that exists, and no row id is repeated.
void check_links(const std::string& html) {
    std::set<std::string> ids;
    const std::regex id_re("id=\"(step-[0-9]+)\"");
    for (std::sregex_iterator it(html.begin(), html.end(), id_re), end; it != end; ++it) {
        INFO("row " << (*it)[1]);
        CHECK(ids.insert((*it)[1]).second);
    }
    const std::regex href_re("href=\"#(step-[0-9]+)\"");
    for (std::sregex_iterator it(html.begin(), html.end(), href_re), end; it != end; ++it) {
        INFO("link to " << (*it)[1]);
        CHECK(ids.count((*it)[1]) == 1);
    }
}

// One fault's story as the models tell it: the engine reads a block, the
// SMMU faults, the driver's handler runs, the fault library pages in, the
// engine resumes. Returns the fault's cause.
Tracer::Cause fault_story(Tracer& t, double at_us, int i) {
    const auto dma = t.track("node0", "dma");
    const auto smmu = t.track("node0", "smmu");
    const auto drv = t.track("node0", "smmu_driver");
    const std::string n = std::to_string(i);
    const auto read = t.note(dma, "read", sc_time(at_us, SC_US), sc_time(10, SC_NS), "node0.dma",
                             "read block " + n + " of the source", Tracer::Cause{});
    const auto fault = t.note(smmu, "fault", sc_time(at_us + 0.05, SC_US), sc_time(0, SC_US), "node0.smmu",
                              "translation fault at 0x7f0000" + n + "000 (read)", read);
    const auto irq = t.note(drv, "handler", sc_time(at_us + 0.5, SC_US), sc_time(1, SC_US), "node0.smmu_driver",
                            "interrupt handler reads the event queue", fault);
    {
        Tracer::Scope s(t, irq);
        const auto lib = t.note(drv, "resolve", sc_time(at_us + 1.5, SC_US), sc_time(2, SC_US), "node0.fault_lib",
                                "touch-one: page in 0x7f0000" + n + "000");
        t.note(dma, "resume", sc_time(at_us + 4, SC_US), sc_time(0, SC_US), "node0.dma", "re-read block " + n, lib);
    }
    return fault;
}

}   // namespace

TEST_CASE("a run that noted nothing says so instead of drawing an empty timeline", "[report][timeline]") {
    const std::string html = render_timeline({}, 0);
    CHECK(contains(html, "No noted steps (this run noted none)"));
    CHECK_FALSE(contains(html, "<table"));
}

TEST_CASE("the timeline shows a fault with its cause and what followed, linked by after #N", "[report][timeline]") {
    Tracer t;
    t.keep_story(100);
    const auto link = t.track("node0", "link");
    // A story without a fault, before it: not part of the fault's table.
    t.note(link, "send", sc_time(0.5, SC_US), sc_time(0, SC_US), "node0.link", "packet 1 sent", Tracer::Cause{});
    const auto fault = fault_story(t, 1, 1);
    const std::string html = render_timeline(t.story(), t.story_dropped());
    INFO(html);
    CHECK(contains(html, "Fault 1"));
    CHECK_FALSE(contains(html, "Fault 2"));
    CHECK(contains(html, "1 story starts at a fault; it is shown with the steps that caused it"));
    // Its cause (the read, shaded), the fault itself and the three steps after it.
    CHECK(count_of(html, "<tr class=\"cause\"") == 1);
    CHECK(count_of(html, "<tr class=\"start\"") == 1);
    CHECK(count_of(html, "<tr class=\"step\"") == 3);
    CHECK(contains(html, "id=\"step-" + std::to_string(fault.id) + "\""));
    CHECK(contains(html,
                   "<a href=\"#step-" + std::to_string(fault.id) + "\">after #" + std::to_string(fault.id) + "</a>"));
    CHECK_FALSE(contains(html, "packet 1 sent"));
    // Time-ordered: the read, then the fault, the handler, the page-in, the resume.
    const auto pos = [&](const std::string& s) { return html.find(s, html.find("<tbody>")); };
    CHECK(pos("read block 1") < pos("translation fault"));
    CHECK(pos("translation fault at") < pos("interrupt handler"));
    CHECK(pos("interrupt handler") < pos("touch-one: page in"));
    CHECK(pos("touch-one: page in") < pos("re-read block 1"));
    CHECK(contains(html, "1.050"));   // the fault's time in us
    CHECK(contains(html, "+2.000"));   // the page-in's duration
    check_links(html);
}

TEST_CASE("the timeline shows the SMMU's faults first, then the CPU's", "[report][timeline]") {
    Tracer t;
    t.keep_story(100);
    const auto vm = t.track("node0", "vm");
    // The program populating its buffers faults first, on the CPU.
    t.note(vm, "fault", sc_time(0.2, SC_US), sc_time(1, SC_US), "node0.vm", "page fault at 0x7f0000a000 (CPU write)",
           Tracer::Cause{});
    fault_story(t, 1, 1);
    const std::string html = render_timeline(t.story(), t.story_dropped());
    INFO(html);
    CHECK(contains(html, "2 stories start at a fault"));
    const std::size_t first = html.find("id=\"story-1\""), second = html.find("id=\"story-2\"");
    REQUIRE(first != std::string::npos);
    REQUIRE(second != std::string::npos);
    // Fault 1 is the SMMU's (its rows before story 2's), Fault 2 the CPU's.
    CHECK(html.find("translation fault at 0x7f00001000") < second);
    CHECK(html.find("page fault at 0x7f0000a000 (CPU write)") > second);
    check_links(html);
}

TEST_CASE("the timeline shows the first five fault stories, each once", "[report][timeline]") {
    Tracer t;
    t.keep_story(100);
    for (int i = 1; i <= 7; ++i) fault_story(t, 10.0 * i, i);
    const std::string html = render_timeline(t.story(), t.story_dropped());
    CHECK(contains(html, "7 stories start at a fault"));
    CHECK(contains(html, "the first 5 are shown, each with the steps"));
    for (int i = 1; i <= 5; ++i) CHECK(contains(html, "id=\"story-" + std::to_string(i) + "\""));
    CHECK_FALSE(contains(html, "id=\"story-6\""));
    CHECK(contains(html, "re-read block 5"));
    CHECK_FALSE(contains(html, "re-read block 6"));
    check_links(html);
    // Fewer when asked.
    const std::string two = render_timeline(t.story(), 0, 2);
    CHECK(contains(two, "id=\"story-2\""));
    CHECK_FALSE(contains(two, "id=\"story-3\""));
}

TEST_CASE("the timeline says how many steps were not kept and escapes their text", "[report][timeline]") {
    Tracer t;
    t.keep_story(4);   // the first story's read, fault, handler and page-in; the rest dropped
    fault_story(t, 1, 1);
    fault_story(t, 2, 2);
    REQUIRE(t.story().size() == 4);
    const std::string html = render_timeline(t.story(), t.story_dropped());
    CHECK(contains(html, "4 steps noted (and 6 later steps not kept)"));
    check_links(html);

    Tracer u;
    u.keep_story(10);
    const auto tr = u.track("node1", "vm");
    const auto a = u.note(tr, "evict", sc_time(1, SC_US), sc_time(0, SC_US), "node1.vm", "evict <page> & \"swap\"",
                          Tracer::Cause{});
    u.note(tr, "write", sc_time(2, SC_US), sc_time(0, SC_US), "node1.ssd", "write back", a);
    const std::string plain = render_timeline(u.story(), 0);
    CHECK(contains(plain, "no step mentions a fault"));
    CHECK(contains(plain, "Story 1"));
    CHECK(contains(plain, "evict &lt;page&gt; &amp; &quot;swap&quot;"));
    CHECK_FALSE(contains(plain, "<page>"));
    check_links(plain);
}

TEST_CASE("a step whose cause was not kept names it without a dead link", "[report][timeline]") {
    std::vector<Tracer::StoryStep> steps;
    Tracer::StoryStep s;
    s.id = 9;
    s.after = 3;   // not among the kept steps
    s.at = sc_time(5, SC_US);
    s.who = "node0.smmu";
    s.name = "fault";
    s.text = "permission fault";
    steps.push_back(s);
    const std::string html = render_timeline(steps, 0);
    CHECK(contains(html, "Fault 1"));
    CHECK(contains(html, "after #3"));
    CHECK_FALSE(contains(html, "href=\"#step-3\""));
    check_links(html);
}

TEST_CASE("key distributions: histograms with samples, latencies first, nodes merged", "[report][plots]") {
    StatRegistry stats;
    Histogram& q0 = stats.histogram("node0.dram.queue_delay", "ns", "queueing delay");
    Histogram& l0 = stats.histogram("node0.dma.transfer_latency", "us", "doorbell to completion");
    Histogram& l1 = stats.histogram("node1.dma.transfer_latency", "us", "doorbell to completion");
    stats.histogram("node0.ssd.read_latency", "us", "never used");
    Histogram& w = stats.histogram("workload.wait", "us", "waits");
    for (int i = 0; i < 50; ++i) q0.add(i);
    for (int i = 0; i < 5; ++i) l0.add(2 + i);
    l1.add(3);
    for (int i = 0; i < 20; ++i) w.add(1);
    const auto keys = key_histograms(stats);
    REQUIRE(keys.size() == 3);
    CHECK(keys[0].statistic == "transfer_latency");
    CHECK(keys[0].merged.count() == 6);
    CHECK(keys[0].title == "dma.transfer_latency (node0 + node1)");
    CHECK(keys[0].family == "dma.transfer_latency");
    CHECK(keys[0].merged.info.unit() == "us");
    CHECK(keys[1].title == "node0.dram.queue_delay");   // then by samples: 50
    CHECK(keys[2].title == "workload.wait");   // 20
    // The service time of faults before other latencies, whatever their samples.
    Histogram& svc = stats.histogram("node1.smmu_driver.service_time", "us", "fault service");
    svc.add(3);
    Histogram& walk = stats.histogram("node0.smmu.walk_latency", "ns", "walks");
    for (int i = 0; i < 90; ++i) walk.add(100 + i);
    const auto again = key_histograms(stats);
    REQUIRE(again.size() == 5);
    CHECK(again[0].family == "dma.transfer_latency");
    CHECK(again[1].title == "node1.smmu_driver.service_time");
    CHECK(again[2].title == "node0.smmu.walk_latency");
    CHECK(again[3].title == "node0.dram.queue_delay");
    CHECK(key_histograms(stats, 1).size() == 1);
    CHECK(key_histograms(StatRegistry()).empty());
}

TEST_CASE("a distribution is an SVG bar chart with axis labels, units and percentiles", "[report][plots]") {
    KeyHistogram k;
    k.title = "node0.dma.transfer_latency";
    k.statistic = "transfer_latency";
    k.merged.info.set_unit("us");
    for (int i = 1; i <= 200; ++i) k.merged.add(1 + (i % 20) * 0.1);
    std::string svg = render_histogram_svg(k);
    CHECK(contains(svg, "<svg"));
    CHECK(contains(svg, "</svg>"));
    CHECK(contains(svg, "transfer_latency (\xC2\xB5s)"));
    CHECK(contains(svg, ">samples</text>"));
    CHECK(contains(svg, "p50 "));
    CHECK(contains(svg, "p99 "));
    CHECK(count_of(svg, "<rect class=\"bar\"") == 20);   // one bar per distinct value
    CHECK_FALSE(contains(svg, "log scale"));
    CHECK_FALSE(contains(svg, "nan"));
    CHECK_FALSE(contains(svg, "inf"));

    // One value: one visible bar.
    KeyHistogram one;
    one.statistic = "service_time";
    one.merged.info.set_unit("us");
    one.merged.add(7.5);
    svg = render_histogram_svg(one);
    CHECK(count_of(svg, "<rect class=\"bar\"") == 1);
    CHECK(contains(svg, "p50 = p99 = 7.5"));
    CHECK_FALSE(contains(svg, "nan"));

    // Four decades: a log axis.
    KeyHistogram wide;
    wide.statistic = "queue_delay";
    wide.merged.info.set_unit("ns");
    for (double v : {0.5, 3.0, 40.0, 900.0, 5000.0}) wide.merged.add(v);
    svg = render_histogram_svg(wide);
    CHECK(contains(svg, "queue_delay (ns), log scale"));
    CHECK(count_of(svg, "<rect class=\"bar\"") == 5);
}

namespace {

struct PageFixture {
    PageFixture() : set("dma", "the engine") {
        set.boolean("fault-tolerant", "false", "re-read after a fault (`dma.fault-tolerant`)");
        set.size("block-size", "4KiB", "bytes per block");
        reg.add(set);
        metrics.add_supplied("transfers", "", "RDMA transfers that finished, successfully or not.");
        metrics.add_supplied("latency_us_p50", "us", "Median transfer latency (`workload.latency`).");
    }
    ParamSet set;
    ParamRegistry reg;
    MetricRegistry metrics;
    StatRegistry stats;
    std::vector<Tracer::StoryStep> story;
};

std::string page(const PageFixture& f, const Config& cfg, ReportInputs in) {
    in.metrics = &f.metrics;
    in.config = &cfg;
    in.stats = &f.stats;
    in.story = &f.story;
    std::ostringstream os;
    write_report(os, in);
    return os.str();
}

}   // namespace

TEST_CASE("the page carries the summary, the changed parameters and vrdmasim's mark", "[report][page]") {
    PageFixture f;
    Config cfg(f.reg);
    cfg.set("dma.fault-tolerant", "true", "x.ini:3");
    cfg.set("dma.block-size", "4096", "x.ini:4");   // the default, written otherwise: not listed
    f.stats.histogram("node0.dma.transfer_latency", "us", "doorbell to completion").add(2.5);
    ReportInputs in;
    in.command = "vrdmasim run x.ini --report";
    in.out_dir = "out";
    in.summary = {{"transfers", "1"}, {"latency_us_p50", "2.5"}};
    in.files = {"config.ini", "stats.txt"};
    const std::string html = page(f, cfg, in);
    // The mark that says vrdmasim wrote it, where is_our_report looks.
    CHECK(html.find(kReportMark) < 1024);
    CHECK(contains(html, "The run succeeded"));
    CHECK_FALSE(contains(html, "FAILED"));
    CHECK(contains(html, "<td class=\"key\">transfers</td><td class=\"val\">1</td>"));
    CHECK(contains(html, "Median transfer latency (<code>workload.latency</code>)."));
    CHECK(contains(html, "1 of 2 parameters differ"));
    CHECK(contains(html, "<td class=\"key\">dma.fault-tolerant</td>"));
    CHECK(contains(html, "x.ini:3"));
    CHECK_FALSE(contains(html, "<td class=\"key\">dma.block-size</td>"));
    CHECK(contains(html, "<svg"));
    CHECK(contains(html, "No noted steps (this run noted none)"));
    CHECK(contains(html, "<a href=\"stats.txt\">"));
    // Self-contained: no script, nothing fetched.
    CHECK_FALSE(contains(html, "<script"));
    CHECK_FALSE(contains(html, "src=\"http"));
    CHECK_FALSE(contains(html, "<link"));
}

TEST_CASE("a failed run's page says so loudly at the top", "[report][page]") {
    PageFixture f;
    Config cfg(f.reg);
    ReportInputs in;
    in.verdict = ReportInputs::Verdict::Failed;
    in.verdict_text = "simulation failed at 12 us: the workload did not finish within sim.time-limit = 12us";
    in.out_dir = "out";
    const std::string html = page(f, cfg, in);
    const auto banner = html.find("THIS RUN FAILED");
    REQUIRE(banner != std::string::npos);
    CHECK(banner < html.find("id=\"summary\""));
    CHECK(contains(html, "<title>FAILED"));
    CHECK(contains(html, "did not finish within sim.time-limit"));
    CHECK(contains(html, "No summary: the run failed"));
    CHECK_FALSE(contains(html, "The run succeeded"));
    CHECK(contains(html, "Every parameter is at its default."));
    CHECK(contains(html, "No histogram has samples"));

    in.verdict = ReportInputs::Verdict::TransferErrors;
    in.verdict_text = "1 of 4 transfer(s) failed: 2 SMMU fault(s)";
    in.summary = {{"transfers", "4"}};
    const std::string warn = page(f, cfg, in);
    CHECK(contains(warn, "transfers FAILED"));
    CHECK(contains(warn, "1 of 4 transfer(s) failed"));
    CHECK_FALSE(contains(warn, "The run succeeded"));
}

TEST_CASE("a page with fault stories links every cause (VRDMASIM_REPORT_SAMPLE=FILE keeps it for a look)",
          "[report][page][timeline]") {
    PageFixture f;
    Config cfg(f.reg);
    Tracer t;
    t.keep_story(100);
    for (int i = 1; i <= 3; ++i) fault_story(t, 10.0 * i, i);
    f.story = t.story();
    Histogram& l = f.stats.histogram("node0.dma.transfer_latency", "us", "doorbell to completion");
    for (int i = 0; i < 40; ++i) l.add(30 + (i * 7) % 13);
    ReportInputs in;
    in.command = "vrdmasim run sample.ini --report";
    in.out_dir = "sample";
    in.summary = {{"transfers", "3"}, {"latency_us_p50", "36.5"}};
    in.files = {"config.ini"};
    const std::string html = page(f, cfg, in);
    CHECK(contains(html, "id=\"story-3\""));
    check_links(html);
    if (const char* keep = std::getenv("VRDMASIM_REPORT_SAMPLE")) {
        std::ofstream os(keep);
        os << html;
    }
}

TEST_CASE("a long story is cut to its first rows, and links only to rows on the page", "[report][timeline]") {
    Tracer t;
    t.keep_story(200);
    const auto tr = t.track("node0", "smmu");
    auto prev = t.note(tr, "fault", sc_time(1, SC_US), sc_time(0, SC_US), "node0.smmu", "stall fault", Tracer::Cause{});
    for (int i = 0; i < 60; ++i)   // a chain of 60 retries, each after the one before
        prev = t.note(tr, "retry", sc_time(2 + i, SC_US), sc_time(0, SC_US), "node0.smmu", "retry " + std::to_string(i),
                      prev);
    const std::string html = render_timeline(t.story(), 0);
    CHECK(count_of(html, "<tr class=") == 40);
    CHECK(contains(html, "and 21 more steps of this story"));
    CHECK(contains(html, "61 steps over"));   // the fault and its 60 retries
    check_links(html);
}
