// The region of interest (src/sim/roi.hpp): a warm-up excluded from the
// summary, or a first pass studied alone, with the built binary on the
// thesis's stream (16 buffers of 64 KiB reused: the first pass over them
// is cold, faulting every page; the three after are warm).
#include <catch2/catch.hpp>

#include <cmath>
#include <map>
#include <string>

#include "run_binary.hpp"

#ifndef VRDMASIM_EXE
#error "VRDMASIM_EXE must name the vrdmasim binary under test"
#endif
#ifndef VRDMASIM_SOURCE_DIR
#error "VRDMASIM_SOURCE_DIR must name the source tree"
#endif

namespace {

using Run = vrdmasim_test::BinaryRun;

const std::string kStream =
    "--workload.total-bytes=4MiB --workload.message-size=64KiB --workload.populate=false "
    "--workload.fill-source=false --workload.buffers=16 --vm.thp=never --fault-lib.policy=touch-ahead";

Run run(const std::string& args) {
    return vrdmasim_test::run_binary(
        VRDMASIM_EXE, std::string(VRDMASIM_SOURCE_DIR) + "/configs/thesis/base.ini " + kStream + " " + args + " -q",
        "vrdmasim-roi");
}

double num(const std::map<std::string, std::string>& s, const std::string& k) {
    INFO("summary column " << k);
    REQUIRE(s.count(k));
    REQUIRE(!s.at(k).empty());
    return std::stod(s.at(k));
}

bool host_column(const std::string& k) { return k.rfind("host_", 0) == 0 || k == "peak_rss_mib"; }

}   // namespace

TEST_CASE("a warm-up is left out of the summary, and the run is the same", "[cli][roi]") {
    const Run plain = run("");
    const Run warm = run("--roi.warmup-transfers=16");
    INFO(warm.err);
    REQUIRE(plain.status == 0);
    REQUIRE(warm.status == 0);
    // Marking a region changes no figure of the run itself.
    REQUIRE(!warm.whole.empty());
    for (const auto& kv : plain.summary) {
        if (host_column(kv.first)) continue;
        INFO(kv.first);
        CHECK(warm.whole.at(kv.first) == kv.second);
    }
    // The region: the 48 warm transfers, none of the first pass's faults.
    const auto& r = warm.summary;
    CHECK(num(r, "transfers") == 48);
    CHECK(num(r, "bytes_delivered") == 48.0 * 64 * 1024);
    CHECK(num(r, "bytes_verified") == 48.0 * 64 * 1024);
    CHECK(num(r, "smmu_faults") == 0);
    CHECK(num(r, "faults_minor") == 0);
    CHECK(num(plain.summary, "smmu_faults") > 0);
    // It begins where the 16th transfer finished and ends with the run's last.
    CHECK(num(r, "region_start_us") > num(plain.summary, "region_start_us"));
    CHECK(num(r, "region_end_us") == num(plain.summary, "region_end_us"));
    const double span_us = num(r, "region_end_us") - num(r, "region_start_us");
    CHECK(num(r, "end_to_end_us") == Approx(span_us).epsilon(1e-4));
    CHECK(num(r, "throughput_gbps") == Approx(48.0 * 64 * 1024 * 8 / (span_us * 1e3)).epsilon(1e-3));
    // Warm, it is faster than the whole run with its cold pass.
    CHECK(num(r, "throughput_gbps") > 1.5 * num(plain.summary, "throughput_gbps"));
    // Latencies of the region's transfers only: the cold ones' tail is gone.
    CHECK(num(r, "latency_us_p99") < num(plain.summary, "latency_us_p99"));
    // No post window or setup of its own; a peak has no value over a part
    // of the run: empty cells, and null in roi-stats.json.
    CHECK(r.at("post_window_throughput_gbps").empty());
    CHECK(r.at("setup_us").empty());
    CHECK(r.at("pinned_peak_bytes").empty());
    CHECK(warm.roi_stats.find("\"node0.rdma.pinned_bytes_peak\": null") != std::string::npos);
    CHECK(warm.roi_stats.find("\"workload.transfers\": 48") != std::string::npos);
    // Energy over the region's time only.
    CHECK(num(r, "energy_j") < num(plain.summary, "energy_j"));
}

TEST_CASE("a first pass studied alone, and the two parts add up to the run", "[cli][roi]") {
    const Run plain = run("");
    const Run cold = run("--roi.transfers=16");
    const Run warm = run("--roi.warmup-transfers=16");
    INFO(cold.err);
    REQUIRE(cold.status == 0);
    const auto& c = cold.summary;
    CHECK(num(c, "transfers") == 16);
    // Every fault of the run is in its first pass.
    CHECK(num(c, "smmu_faults") == num(plain.summary, "smmu_faults"));
    CHECK(num(c, "region_start_us") == num(plain.summary, "region_start_us"));
    CHECK(num(c, "region_end_us") == num(warm.summary, "region_start_us"));
    // Counters split exactly between the two parts.
    for (const char* k : {"transfers", "bytes_delivered", "packets", "smmu_translations", "packet_hops"}) {
        INFO(k);
        CHECK(num(c, k) + num(warm.summary, k) == num(plain.summary, k));
    }
    CHECK(num(c, "throughput_gbps") < num(warm.summary, "throughput_gbps"));
}

TEST_CASE("a region the run cannot reach is refused, or fails the run", "[cli][roi]") {
    // The stream knows it finishes 64 transfers: refused up front.
    const Run over = run("--roi.warmup-transfers=60 --roi.transfers=5");
    CHECK(over.status == 2);
    CHECK(over.err.find("roi.transfers") != std::string::npos);
    CHECK(over.err.find("finishes 64") != std::string::npos);
    // So does sendrecv (200 messages in its latency test).
    const Run two_sided = vrdmasim_test::run_binary(
        VRDMASIM_EXE, "--workload.kind=sendrecv --roi.warmup-transfers=100000 -q", "vrdmasim-roi");
    CHECK(two_sided.status == 2);
    CHECK(two_sided.err.find("finishes 200") != std::string::npos);
    // And the file server (2 clients of 8 requests): every workload kind
    // announces its total now, so no shipped kind is left to reach the
    // check at the end of the run (a region that never began fails the run).
    const Run files = vrdmasim_test::run_binary(
        VRDMASIM_EXE, std::string(VRDMASIM_SOURCE_DIR) + "/configs/fileserve/base.ini --roi.warmup-transfers=100000 -q",
        "vrdmasim-roi");
    CHECK(files.status == 2);
    CHECK(files.err.find("finishes 16") != std::string::npos);
    CHECK(files.summary.count("throughput_gbps") == 0);   // no summary.csv
    // A warm-up of every transfer leaves an empty region: refused, not a
    // row of zeros.
    const Run empty = run("--roi.warmup-transfers=64");
    CHECK(empty.status == 2);
    CHECK(empty.err.find("leaves no transfer for the region of interest") != std::string::npos);
}

TEST_CASE("a region that ends with the run passes its span check", "[cli][roi]") {
    // Its end is the run's last completion, read back from the summary's
    // 9 printed digits: rounded up past the run's end, it failed
    // region-span (exit 1) on this legal region.
    const Run r = vrdmasim_test::run_binary(VRDMASIM_EXE, "--workload.total-bytes=2MiB --roi.warmup-transfers=4 -q",
                                            "vrdmasim-roi");
    INFO(r.err);
    CHECK(r.status == 0);
    CHECK(num(r.summary, "transfers") > 0);
    CHECK(num(r.summary, "region_end_us") >= num(r.summary, "region_start_us"));
}

TEST_CASE("a region counts its transfers by their time and its throughput by the bytes that came in inside it",
          "[cli][roi]") {
    // Short regions of a cold stream (pages fault, transfers finish in
    // bursts): counted when a process said so, the 5th transfer fell
    // before a region that began at the 4th (7 of 8), and a transfer's
    // bytes counted whole at its end put bytes that crossed before the
    // region into it: 14.69 Gb/s over the link's 14.22, and the run failed
    // its own region-throughput-ceiling check (exit 1).
    for (const int warmup : {1, 4, 9})
        for (const int length : {1, 3, 8}) {
            const Run r = vrdmasim_test::run_binary(
                VRDMASIM_EXE,
                "--workload.total-bytes=2MiB --workload.populate=false --roi.warmup-transfers=" +
                    std::to_string(warmup) + " --roi.transfers=" + std::to_string(length) + " -q",
                "vrdmasim-roi");
            INFO("warm-up " << warmup << ", " << length << " transfers: " << r.err);
            REQUIRE(r.status == 0);
            CHECK(num(r.summary, "transfers") == length);
            CHECK(num(r.summary, "bytes_delivered") == length * 65536.0);
            // The throughput is the region's payload (roi-stats.json) over its span.
            const auto at = r.roi_stats.find("\"node1.dma.payload_in_pd1\": ");
            REQUIRE(at != std::string::npos);
            const double payload = std::stod(r.roi_stats.substr(at + 28));
            const double span_us = num(r.summary, "region_end_us") - num(r.summary, "region_start_us");
            CHECK(num(r.summary, "throughput_gbps") == Approx(payload * 8 / (span_us * 1e3)).epsilon(1e-4));
        }
}
