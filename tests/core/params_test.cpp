// Tests of parameter declaration, unit parsing/formatting, INI files, the
// command line, precedence, error messages, write_ini and `params` output.
#include <catch2/catch.hpp>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

#include "src/core/params.hpp"

using namespace vrdmasim;
using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

namespace {

// A fresh directory under /tmp, removed at the end of the test.
struct TempDir {
    std::string path;
    TempDir() {
        char tmpl[] = "/tmp/params_test.XXXXXX";
        const char* p = mkdtemp(tmpl);
        REQUIRE(p != nullptr);
        path = p;
    }
    ~TempDir() {
        std::error_code ec;
        std::filesystem::remove_all(path, ec);
    }
    // Write a file in the directory; returns its path.
    std::string write(const std::string& name, const std::string& text) const {
        const std::string file = path + "/" + name;
        std::ofstream out(file, std::ios::binary);
        out << text;
        REQUIRE(out.good());
        return file;
    }
};

// The message of the exception of type E that f throws ("" and a failed
// check if it throws nothing or something else).
template <typename E = ConfigError, typename F>
std::string message_of(F&& f) {
    try {
        f();
    } catch (const E& e) {
        return e.what();
    } catch (const std::exception& e) {
        FAIL_CHECK("unexpected exception type: " << e.what());
        return "";
    }
    FAIL_CHECK("no exception thrown");
    return "";
}

// The parse error message of a unit parser (std::invalid_argument).
template <typename F>
std::string parse_error(F&& f) {
    return message_of<std::invalid_argument>(std::forward<F>(f));
}

// A parameter struct as the models write theirs (see params_of).
struct DramParamsForTest {
    DramParamsForTest() : set("dram", "DDR4"), latency(set.time("latency", "100ns", "access latency")) {}
    ParamSet set;
    TimeParam latency;
};

// A registry like the simulator's, with every type.
ParamRegistry make_registry() {
    ParamRegistry reg;
    ParamSet dma("dma", "DMA engine of one node");
    dma.size("block-size", "4KiB", "bytes moved per DMA block").range("64B", "1MiB");
    dma.time("setup", "80ns", "descriptor setup time").range("1ns", "10us");
    dma.choice("mode", "eager", {"eager", "lazy", "off"}, "when descriptors are fetched");
    dma.integer("channels", "4", "DMA channels").range("1", "64");
    reg.add(dma);
    ParamSet link("link", "serial link between FPGAs");
    link.rate("rate", "16Gbps", "line rate").range("1Mbps", "10Tbps");
    link.frequency("clock", "156.25MHz", "transceiver clock");
    link.boolean("fec", "on", "forward error correction");
    link.real("ber", "1e-12", "bit error rate").min("0");
    link.string("name", "", "label in traces");
    reg.add(link);
    ParamSet dram("dram", "DDR4 memory");
    dram.size("size", "16GiB", "DRAM per MPSoC");
    dram.time("latency", "100ns", "access latency").min("0ps");
    dram.size("block-size", "64B", "burst size");
    reg.add(dram);
    return reg;
}

}   // namespace

// ---------------------------------------------------------------------------
// Unit parsing

TEST_CASE("parse_time_ps accepts every time unit, spaces, fractions and exponents", "[params][units]") {
    CHECK(parse_time_ps("1ps") == 1);
    CHECK(parse_time_ps("80ns") == 80000);
    CHECK(parse_time_ps("3us") == 3000000);
    CHECK(parse_time_ps("3\xC2\xB5s") == 3000000);   // µs, micro sign
    CHECK(parse_time_ps("3\xCE\xBCs") == 3000000);   // μs, Greek mu
    CHECK(parse_time_ps("2ms") == 2000000000);
    CHECK(parse_time_ps("5s") == 5000000000000);
    CHECK(parse_time_ps("80 ns") == 80000);
    CHECK(parse_time_ps("  80ns\t") == 80000);
    CHECK(parse_time_ps("1.5ns") == 1500);
    CHECK(parse_time_ps("0.001ns") == 1);
    CHECK(parse_time_ps(".5ns") == 500);
    CHECK(parse_time_ps("1e3ns") == 1000000);
    CHECK(parse_time_ps("2.5E-3us") == 2500);
    CHECK(parse_time_ps("+7ps") == 7);
    CHECK(parse_time_ps("0ps") == 0);
    CHECK(parse_time_ps("0s") == 0);
    CHECK(parse_time_ps("0080ns") == 80000);
    CHECK(parse_time_ps("1.100000000000000000000ns") == 1100);
    // The largest representable time.
    CHECK(parse_time_ps("9223372036854775807ps") == std::numeric_limits<std::int64_t>::max());
}

TEST_CASE("parse_time_ps rejects bare numbers, bad units, negatives and garbage", "[params][units]") {
    const std::string expected = "expected a time such as 80ns (units: ps, ns, us, ms, s)";
    CHECK_THAT(parse_error([] { parse_time_ps("80"); }), Contains("missing unit") && Contains(expected));
    CHECK_THAT(parse_error([] { parse_time_ps("80 sec"); }), Contains("unknown unit 'sec'"));
    CHECK_THAT(parse_error([] { parse_time_ps("80NS"); }), Contains("unknown unit 'NS'"));
    CHECK_THAT(parse_error([] { parse_time_ps("80ns extra"); }), Contains("unknown unit 'ns extra'"));
    CHECK_THAT(parse_error([] { parse_time_ps("80nsx"); }), Contains("unknown unit 'nsx'"));
    CHECK_THAT(parse_error([] { parse_time_ps("1.2.3ns"); }), Contains("unknown unit"));
    CHECK_THAT(parse_error([] { parse_time_ps("-1ns"); }), Contains("negative") && Contains(expected));
    CHECK_THAT(parse_error([] { parse_time_ps("-0ns"); }), Contains("negative"));
    CHECK_THAT(parse_error([] { parse_time_ps("0.5ps"); }), Contains("whole number of picoseconds"));
    CHECK_THAT(parse_error([] { parse_time_ps("1.0001ns"); }), Contains("whole number of picoseconds"));
    CHECK_THAT(parse_error([] { parse_time_ps(""); }), Contains("empty value") && Contains(expected));
    CHECK_THAT(parse_error([] { parse_time_ps("   "); }), Contains("empty value"));
    CHECK_THAT(parse_error([] { parse_time_ps("ns"); }), Contains("no number"));
    CHECK_THAT(parse_error([] { parse_time_ps("nan"); }), Contains(expected));
    CHECK_THAT(parse_error([] { parse_time_ps("nanns"); }), Contains(expected));
    CHECK_THAT(parse_error([] { parse_time_ps("infs"); }), Contains(expected));
    CHECK_THAT(parse_error([] { parse_time_ps("1e300s"); }), Contains("too large"));
    CHECK_THAT(parse_error([] { parse_time_ps("9223372036854775808ps"); }), Contains("too large"));
    CHECK_THAT(parse_error([] { parse_time_ps("10000000s"); }), Contains("too large"));
}

TEST_CASE("parse_rate_bps accepts bit, byte and binary byte rates", "[params][units]") {
    CHECK(parse_rate_bps("1bps") == 1.0);
    CHECK(parse_rate_bps("1Kbps") == 1e3);
    CHECK(parse_rate_bps("1Mbps") == 1e6);
    CHECK(parse_rate_bps("16Gbps") == 16e9);
    CHECK(parse_rate_bps("2Tbps") == 2e12);
    CHECK(parse_rate_bps("1B/s") == 8.0);
    CHECK(parse_rate_bps("1KB/s") == 8e3);
    CHECK(parse_rate_bps("1MB/s") == 8e6);
    CHECK(parse_rate_bps("2GB/s") == 16e9);
    CHECK(parse_rate_bps("1TB/s") == 8e12);
    CHECK(parse_rate_bps("1KiB/s") == 8.0 * 1024);
    CHECK(parse_rate_bps("1MiB/s") == 8.0 * 1024 * 1024);
    CHECK(parse_rate_bps("1GiB/s") == 8.0 * 1024 * 1024 * 1024);
    CHECK(parse_rate_bps("1TiB/s") == 8.0 * 1024 * 1024 * 1024 * 1024);
    CHECK(parse_rate_bps("19.2GB/s") == 153.6e9);   // exactly the double nearest 153.6e9
    CHECK(parse_rate_bps("12.5 Gbps") == 12.5e9);
    CHECK(parse_rate_bps("0bps") == 0.0);
    CHECK(parse_rate_bps("0.1Gbps") == 1e8);
    CHECK(parse_rate_bps("0.3bps") == 0.3);
    // As every output writes them: Gb/s (once refused).
    CHECK(parse_rate_bps("14.2Gb/s") == 14.2e9);
    CHECK(parse_rate_bps("1b/s") == 1.0);
    CHECK(parse_rate_bps("1Kb/s") == 1e3);
    CHECK(parse_rate_bps("1Mb/s") == 1e6);
    CHECK(parse_rate_bps("1Tb/s") == 1e12);
}

TEST_CASE("parse_rate_bps rejects bare numbers, wrong case, negatives and garbage", "[params][units]") {
    const std::string units =
        "units: bps, Kbps, Mbps, Gbps, Tbps, b/s, Kb/s, Mb/s, Gb/s, Tb/s, B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s";
    CHECK_THAT(parse_error([] { parse_rate_bps("16"); }), Contains("missing unit") && Contains(units));
    CHECK_THAT(parse_error([] { parse_rate_bps("16gbps"); }), Contains("unknown unit 'gbps'"));
    CHECK_THAT(parse_error([] { parse_rate_bps("16kbps"); }), Contains("unknown unit 'kbps'"));
    CHECK_THAT(parse_error([] { parse_rate_bps("16GB"); }), Contains("unknown unit 'GB'"));
    CHECK_THAT(parse_error([] { parse_rate_bps("-1Gbps"); }), Contains("negative"));
    CHECK_THAT(parse_error([] { parse_rate_bps("infGbps"); }), Contains("no number"));
    CHECK_THAT(parse_error([] { parse_rate_bps("NaNbps"); }), Contains("no number"));
    CHECK_THAT(parse_error([] { parse_rate_bps("1e400bps"); }), Contains("too large"));
    CHECK_THAT(parse_error([] { parse_rate_bps("16Gbps!"); }), Contains("unknown unit 'Gbps!'"));
    CHECK_THAT(parse_error([] { parse_rate_bps(""); }), Contains("empty value"));
}

TEST_CASE("parse_size_bytes accepts binary and decimal units and bare bytes", "[params][units]") {
    CHECK(parse_size_bytes("0") == 0);
    CHECK(parse_size_bytes("4096") == 4096);
    CHECK(parse_size_bytes("64B") == 64);
    CHECK(parse_size_bytes("4KiB") == 4096);
    CHECK(parse_size_bytes("4 KiB") == 4096);
    CHECK(parse_size_bytes("2MiB") == 2u << 20);
    CHECK(parse_size_bytes("16GiB") == 16ull << 30);
    CHECK(parse_size_bytes("1TiB") == 1ull << 40);
    CHECK(parse_size_bytes("1KB") == 1000);
    CHECK(parse_size_bytes("1MB") == 1000000);
    CHECK(parse_size_bytes("1GB") == 1000000000);
    CHECK(parse_size_bytes("2TB") == 2000000000000);
    CHECK(parse_size_bytes("1.5KiB") == 1536);
    CHECK(parse_size_bytes("1.1KB") == 1100);
    CHECK(parse_size_bytes("0.5KiB") == 512);
    CHECK(parse_size_bytes("1e3") == 1000);
    CHECK(parse_size_bytes("18446744073709551615") == std::numeric_limits<std::uint64_t>::max());
    CHECK(parse_size_bytes("9007199254740993B") == 9007199254740993ull);   // beyond a double's precision
}

TEST_CASE("parse_size_bytes rejects fractions of bytes, negatives and garbage", "[params][units]") {
    const std::string expected = "expected a size such as 4KiB (units: B, KiB, MiB, GiB, TiB, KB, MB, GB, TB";
    CHECK_THAT(parse_error([] { parse_size_bytes("0.5B"); }), Contains("whole number of bytes") && Contains(expected));
    CHECK_THAT(parse_error([] { parse_size_bytes("1.0001KiB"); }), Contains("whole number of bytes"));
    CHECK_THAT(parse_error([] { parse_size_bytes("0.3"); }), Contains("whole number of bytes"));
    CHECK_THAT(parse_error([] { parse_size_bytes("-1B"); }), Contains("negative"));
    CHECK_THAT(parse_error([] { parse_size_bytes("4kib"); }), Contains("unknown unit 'kib'"));
    CHECK_THAT(parse_error([] { parse_size_bytes("4KiB/s"); }), Contains("unknown unit 'KiB/s'"));
    CHECK_THAT(parse_error([] { parse_size_bytes("4PiB"); }), Contains("unknown unit 'PiB'"));
    CHECK_THAT(parse_error([] { parse_size_bytes("18446744073709551616"); }), Contains("too large"));
    CHECK_THAT(parse_error([] { parse_size_bytes("20000000TB"); }), Contains("too large"));
    CHECK_THAT(parse_error([] { parse_size_bytes("KiB"); }), Contains("no number"));
    CHECK_THAT(parse_error([] { parse_size_bytes(""); }), Contains("empty value"));
    CHECK_THAT(parse_error([] { parse_size_bytes("inf"); }), Contains("no number"));
}

TEST_CASE("parse_frequency_hz accepts Hz to GHz with k or K", "[params][units]") {
    CHECK(parse_frequency_hz("50Hz") == 50.0);
    CHECK(parse_frequency_hz("32kHz") == 32e3);
    CHECK(parse_frequency_hz("32KHz") == 32e3);
    CHECK(parse_frequency_hz("156.25MHz") == 156.25e6);
    CHECK(parse_frequency_hz("1.5GHz") == 1.5e9);
    CHECK(parse_frequency_hz("1.5 GHz") == 1.5e9);
    CHECK(parse_frequency_hz("0.1GHz") == 1e8);
    CHECK(parse_frequency_hz("0Hz") == 0.0);
}

TEST_CASE("parse_frequency_hz rejects bare numbers, wrong case and negatives", "[params][units]") {
    const std::string expected = "expected a frequency such as 1.5GHz (units: Hz, kHz, MHz, GHz)";
    CHECK_THAT(parse_error([] { parse_frequency_hz("100"); }), Contains("missing unit") && Contains(expected));
    CHECK_THAT(parse_error([] { parse_frequency_hz("100mhz"); }), Contains("unknown unit 'mhz'"));
    CHECK_THAT(parse_error([] { parse_frequency_hz("100hz"); }), Contains("unknown unit 'hz'"));
    CHECK_THAT(parse_error([] { parse_frequency_hz("-1GHz"); }), Contains("negative"));
    CHECK_THAT(parse_error([] { parse_frequency_hz("1e999GHz"); }), Contains("too large"));
    CHECK_THAT(parse_error([] { parse_frequency_hz(""); }), Contains("empty value"));
}

TEST_CASE("parse_bool accepts true/false, yes/no, on/off, 1/0", "[params][units]") {
    for (const char* t : {"true", "yes", "on", "1", "TRUE", "Yes", " on "}) {
        INFO(t);
        CHECK(parse_bool(t));
    }
    for (const char* t : {"false", "no", "off", "0", "False", "NO"}) {
        INFO(t);
        CHECK_FALSE(parse_bool(t));
    }
    const std::string expected = "expected a boolean (true/false, yes/no, on/off, 1/0)";
    CHECK_THAT(parse_error([] { parse_bool("2"); }), Contains(expected));
    CHECK_THAT(parse_error([] { parse_bool("yess"); }), Contains(expected));
    CHECK_THAT(parse_error([] { parse_bool("true x"); }), Contains(expected));
    CHECK_THAT(parse_error([] { parse_bool(""); }), Contains("empty value"));
}

TEST_CASE("parse_int accepts decimal and hex whole numbers in 64 bits", "[params][units]") {
    CHECK(parse_int("42") == 42);
    CHECK(parse_int("-3") == -3);
    CHECK(parse_int("+7") == 7);
    CHECK(parse_int("0") == 0);
    CHECK(parse_int("0x2a") == 42);
    CHECK(parse_int("0X2A") == 42);
    CHECK(parse_int("-0x10") == -16);
    CHECK(parse_int(" 12 ") == 12);
    CHECK(parse_int("9223372036854775807") == std::numeric_limits<std::int64_t>::max());
    CHECK(parse_int("-9223372036854775808") == std::numeric_limits<std::int64_t>::min());
    CHECK(parse_int("0x7fffffffffffffff") == std::numeric_limits<std::int64_t>::max());
    CHECK(parse_int("9007199254740993") == 9007199254740993);
}

TEST_CASE("parse_int rejects fractions, garbage and overflow", "[params][units]") {
    const std::string expected = "expected a whole number";
    CHECK_THAT(parse_error([] { parse_int("1.5"); }), Contains(expected));
    CHECK_THAT(parse_error([] { parse_int("1e3"); }), Contains(expected));
    CHECK_THAT(parse_error([] { parse_int("12abc"); }), Contains(expected));
    CHECK_THAT(parse_error([] { parse_int("0x"); }), Contains(expected));
    CHECK_THAT(parse_error([] { parse_int("0xg"); }), Contains(expected));
    CHECK_THAT(parse_error([] { parse_int("-"); }), Contains(expected));
    CHECK_THAT(parse_error([] { parse_int("1 2"); }), Contains(expected));
    CHECK_THAT(parse_error([] { parse_int(""); }), Contains("empty value"));
    CHECK_THAT(parse_error([] { parse_int("9223372036854775808"); }), Contains("64-bit"));
    CHECK_THAT(parse_error([] { parse_int("-9223372036854775809"); }), Contains("64-bit"));
    CHECK_THAT(parse_error([] { parse_int("0x10000000000000000"); }), Contains("64-bit"));
}

TEST_CASE("parse_real accepts numbers and rejects nan, inf and garbage", "[params][units]") {
    CHECK(parse_real("0.5") == 0.5);
    CHECK(parse_real("-1e-3") == -1e-3);
    CHECK(parse_real(".25") == 0.25);
    CHECK(parse_real("3") == 3.0);
    CHECK(parse_real("1E6") == 1e6);
    CHECK(parse_real("0.1") == 0.1);
    const std::string expected = "expected a number such as 0.25 or 1e-3";
    CHECK_THAT(parse_error([] { parse_real("nan"); }), Contains(expected));
    CHECK_THAT(parse_error([] { parse_real("inf"); }), Contains(expected));
    CHECK_THAT(parse_error([] { parse_real("-inf"); }), Contains(expected));
    CHECK_THAT(parse_error([] { parse_real("1.5x"); }), Contains("unexpected 'x'"));
    CHECK_THAT(parse_error([] { parse_real("1.5 ns"); }), Contains("unexpected 'ns'"));
    CHECK_THAT(parse_error([] { parse_real("1e999"); }), Contains("too large"));
    CHECK_THAT(parse_error([] { parse_real(""); }), Contains("empty value"));
}

// ---------------------------------------------------------------------------
// Formatting

TEST_CASE("format functions use the largest unit in which the value is at least 1", "[params][format]") {
    CHECK(format_time_ps(0) == "0ps");
    CHECK(format_time_ps(999) == "999ps");
    CHECK(format_time_ps(1000) == "1ns");
    CHECK(format_time_ps(80000) == "80ns");
    CHECK(format_time_ps(1500) == "1.5ns");
    CHECK(format_time_ps(2500000) == "2.5us");
    CHECK(format_time_ps(3000000000) == "3ms");
    CHECK(format_time_ps(5000000000000) == "5s");
    CHECK(format_time_ps(3600000000000000) == "3600s");

    CHECK(format_rate_bps(0) == "0bps");
    CHECK(format_rate_bps(16e9) == "16Gbps");
    CHECK(format_rate_bps(153.6e9) == "153.6Gbps");
    CHECK(format_rate_bps(999) == "999bps");
    CHECK(format_rate_bps(1e3) == "1Kbps");
    CHECK(format_rate_bps(2.5e6) == "2.5Mbps");
    CHECK(format_rate_bps(10e12) == "10Tbps");
    CHECK(format_rate_bps(0.5) == "0.5bps");

    CHECK(format_size_bytes(0) == "0B");
    CHECK(format_size_bytes(64) == "64B");
    CHECK(format_size_bytes(1000) == "1KB");
    CHECK(format_size_bytes(1024) == "1KiB");
    CHECK(format_size_bytes(1536) == "1.5KiB");
    CHECK(format_size_bytes(4096) == "4KiB");
    CHECK(format_size_bytes(1500) == "1.5KB");
    CHECK(format_size_bytes(16ull << 30) == "16GiB");
    CHECK(format_size_bytes(1ull << 40) == "1TiB");
    CHECK(format_size_bytes(1000000) == "1MB");
    CHECK(format_size_bytes(1234567) == "1234567B");

    CHECK(format_frequency_hz(0) == "0Hz");
    CHECK(format_frequency_hz(1.5e9) == "1.5GHz");
    CHECK(format_frequency_hz(156.25e6) == "156.25MHz");
    CHECK(format_frequency_hz(32e3) == "32kHz");
    CHECK(format_frequency_hz(50) == "50Hz");
}

TEST_CASE("format functions parse back to the identical value", "[params][format]") {
    std::mt19937_64 rng(12345);
    std::uniform_real_distribution<double> log10_value(-4.0, 16.0);
    std::uniform_int_distribution<int> digits(1, 7);
    for (int i = 0; i < 5000; ++i) {
        // Times: any int64 >= 0, small and large.
        const std::int64_t ps = static_cast<std::int64_t>(rng() >> (1 + rng() % 63));
        const std::string t = format_time_ps(ps);
        INFO(ps << " -> " << t);
        REQUIRE(parse_time_ps(t) == ps);

        // Sizes: any uint64.
        const std::uint64_t bytes = rng() >> (rng() % 64);
        const std::string s = format_size_bytes(bytes);
        INFO(bytes << " -> " << s);
        REQUIRE(parse_size_bytes(s) == bytes);
        // Round sizes come out short.
        const std::uint64_t round = (rng() % 1000 + 1) << (10 * (rng() % 5));
        REQUIRE(parse_size_bytes(format_size_bytes(round)) == round);
        REQUIRE(format_size_bytes(round).size() <= 8);

        // Rates and frequencies: arbitrary doubles, and "typed" ones with few digits.
        const double any = std::pow(10.0, log10_value(rng));
        const double typed = std::round(any / std::pow(10.0, std::floor(std::log10(any)) - digits(rng) + 1)) *
                             std::pow(10.0, std::floor(std::log10(any)) - digits(rng) + 1);
        for (double v : {any, typed}) {
            const std::string r = format_rate_bps(v);
            const std::string f = format_frequency_hz(v);
            INFO(v << " -> " << r << ", " << f);
            REQUIRE(parse_rate_bps(r) == v);
            REQUIRE(parse_frequency_hz(f) == v);
        }
    }
    // Edge values.
    for (std::int64_t ps : {std::int64_t{0}, std::int64_t{1}, std::numeric_limits<std::int64_t>::max()})
        CHECK(parse_time_ps(format_time_ps(ps)) == ps);
    for (std::uint64_t b : {std::uint64_t{0}, std::uint64_t{1}, std::numeric_limits<std::uint64_t>::max()})
        CHECK(parse_size_bytes(format_size_bytes(b)) == b);
    for (double v : {0.1 + 0.2, 1e-300, 1e300, std::numeric_limits<double>::max(),
                     std::numeric_limits<double>::denorm_min(), 153.6e9, 8.0 * 1024 * 1024 * 1024}) {
        INFO(v);
        CHECK(parse_rate_bps(format_rate_bps(v)) == v);
        CHECK(parse_frequency_hz(format_frequency_hz(v)) == v);
    }
    // Shortest form: no needless digits.
    CHECK(format_rate_bps(parse_rate_bps("0.1Gbps")) == "100Mbps");
    CHECK(format_frequency_hz(parse_frequency_hz("0.3GHz")) == "300MHz");
    CHECK(format_rate_bps(0.1 + 0.2) == "0.30000000000000004bps");
}

// ---------------------------------------------------------------------------
// Declarations

TEST_CASE("declaring a parameter twice is a logic_error", "[params][declare]") {
    ParamRegistry reg;
    ParamSet dma("dma", "DMA");
    dma.size("block-size", "4KiB", "block");
    // Twice in one set.
    CHECK_THROWS_AS(dma.size("block-size", "8KiB", "again"), std::logic_error);
    CHECK_THROWS_AS(dma.time("block-size", "8ns", "other type"), std::logic_error);
    reg.add(dma);
    // Twice in one registry, from another set of the same section.
    ParamSet again("dma", "");
    again.size("block-size", "1B", "x");
    CHECK_THAT(message_of<std::logic_error>([&] { reg.add(again); }), Contains("dma.block-size") && Contains("twice"));
    // The same key in another section is a different parameter.
    ParamSet dram("dram", "DRAM");
    dram.size("block-size", "64B", "burst");
    CHECK_NOTHROW(reg.add(dram));
    // Another set of a section already added, with new keys, is fine.
    ParamSet more("dma", "");
    more.size("other", "1B", "x");
    CHECK_NOTHROW(reg.add(more));
    CHECK(reg.all().size() == 3);
    CHECK(reg.sections().size() == 2);
    CHECK(reg.sections()[0].second == "DMA");
}

TEST_CASE("a default that does not parse or is out of range is a logic_error", "[params][declare]") {
    ParamRegistry reg;
    ParamSet sec("x", "test");
    CHECK_THAT(message_of<std::logic_error>([&] { sec.time("t", "80", "no unit"); }),
               Contains("x.t") && Contains("'80'") && Contains("missing unit"));
    CHECK_THROWS_AS(sec.size("s", "1.5B", "fraction"), std::logic_error);
    CHECK_THROWS_AS(sec.rate("r", "fast", "word"), std::logic_error);
    CHECK_THROWS_AS(sec.frequency("f", "-1GHz", "negative"), std::logic_error);
    CHECK_THROWS_AS(sec.boolean("b", "maybe", "word"), std::logic_error);
    CHECK_THROWS_AS(sec.integer("i", "1.5", "fraction"), std::logic_error);
    CHECK_THROWS_AS(sec.real("re", "nan", "nan"), std::logic_error);
    CHECK_THROWS_AS(sec.choice("e", "medium", {"low", "high"}, "not a choice"), std::logic_error);
    CHECK_THROWS_AS(sec.choice("e2", "low", {}, "no choices"), std::logic_error);
    CHECK_THROWS_AS(sec.choice("e3", "low", {"low", "low"}, "duplicate choice"), std::logic_error);
    // Out of range once the range is known.
    auto lat = sec.time("lat", "80ns", "latency");
    CHECK_THAT(message_of<std::logic_error>([&] { lat.range("100ns", "1us"); }),
               Contains("x.lat") && Contains("80ns") && Contains("between 100ns and 1us"));
    auto sz = sec.size("sz", "4KiB", "size");
    CHECK_THROWS_AS(sz.min("8KiB"), std::logic_error);
    // Bad bounds.
    auto n = sec.integer("n", "4", "count");
    CHECK_THROWS_AS(n.range("1ns", "10"), std::logic_error);
    CHECK_THROWS_AS(n.range("10", "1"), std::logic_error);
    // No range for bool, enum, string.
    auto flag = sec.boolean("flag", "yes", "flag");
    CHECK_THROWS_AS(flag.range("0", "1"), std::logic_error);
    auto str = sec.string("str", "", "str");
    CHECK_THROWS_AS(str.min("a"), std::logic_error);
    // (range() with nothing declared does not compile: bounds belong to a handle.)
    reg.add(sec);
    // Failed declarations declared nothing.
    CHECK(reg.find("x.t") == nullptr);
    CHECK(reg.find("x.e") == nullptr);
    CHECK(reg.find("x.lat") != nullptr);
}

TEST_CASE("bad section and key names are a logic_error", "[params][declare]") {
    CHECK_THROWS_AS(ParamSet("", "empty"), std::logic_error);
    CHECK_THROWS_AS(ParamSet("a.b", "dot"), std::logic_error);
    CHECK_THROWS_AS(ParamSet("a b", "space"), std::logic_error);
    ParamSet ok("ok", "");
    CHECK_THROWS_AS(ok.time("a b", "1ns", "space"), std::logic_error);
    CHECK_THROWS_AS(ok.time("a=b", "1ns", "equals"), std::logic_error);
    CHECK_THROWS_AS(ok.time("", "1ns", "empty"), std::logic_error);
}

TEST_CASE("declarations keep their order, types, defaults and ranges", "[params][declare]") {
    const ParamRegistry reg = make_registry();
    REQUIRE(reg.all().size() == 12);
    CHECK(reg.all()[0].name() == "dma.block-size");
    CHECK(reg.all()[1].name() == "dma.setup");
    const ParamDecl* d = reg.find("dma.setup");
    REQUIRE(d != nullptr);
    CHECK(d->type == ParamType::Time);
    CHECK(d->unit() == "time");
    CHECK(d->default_text == "80ns");
    CHECK(d->has_min);
    CHECK(d->has_max);
    CHECK(d->min == 1000.0);
    CHECK(d->max == 10e6);
    CHECK(d->min_text == "1ns");
    CHECK(d->max_text == "10us");
    CHECK(reg.find("dram.latency")->has_min);
    CHECK_FALSE(reg.find("dram.latency")->has_max);
    CHECK(reg.find("nope.nothing") == nullptr);
    CHECK(std::string(to_string(ParamType::Frequency)) == "frequency");
    CHECK(std::string(to_string(ParamType::Enum)) == "enum");
    REQUIRE(reg.sections().size() == 3);
    CHECK(reg.sections()[1].first == "link");
    CHECK(reg.sections()[1].second == "serial link between FPGAs");
}

// ---------------------------------------------------------------------------
// Config: defaults, getters, set

TEST_CASE("Config starts at the defaults with typed getters", "[params][config]") {
    const ParamRegistry reg = make_registry();
    const Config cfg(reg);
    CHECK(cfg.size("dma.block-size") == 4096);
    CHECK(cfg.time_ps("dma.setup") == 80000);
    CHECK(cfg.time("dma.setup") == sc_core::sc_time(80, sc_core::SC_NS));
    CHECK(cfg.string("dma.mode") == "eager");
    CHECK(cfg.integer("dma.channels") == 4);
    CHECK(cfg.rate_bps("link.rate") == 16e9);
    CHECK(cfg.frequency_hz("link.clock") == 156.25e6);
    CHECK(cfg.boolean("link.fec"));
    CHECK(cfg.real("link.ber") == 1e-12);
    CHECK(cfg.string("link.name").empty());
    CHECK(cfg.size("dram.size") == 16ull << 30);
    CHECK(cfg.text("dram.size") == "16GiB");
    CHECK(cfg.origin("dram.size") == "default");
    CHECK(&cfg.registry() == &reg);
}

TEST_CASE("typed getters throw logic_error for undeclared names and wrong types", "[params][config]") {
    const ParamRegistry reg = make_registry();
    const Config cfg(reg);
    CHECK_THAT(message_of<std::logic_error>([&] { cfg.size("dma.blok-size"); }), Contains("dma.blok-size"));
    CHECK_THROWS_AS(cfg.time("dma.block-size"), std::logic_error);
    CHECK_THROWS_AS(cfg.time_ps("link.rate"), std::logic_error);
    CHECK_THROWS_AS(cfg.rate_bps("link.clock"), std::logic_error);
    CHECK_THROWS_AS(cfg.frequency_hz("link.rate"), std::logic_error);
    CHECK_THROWS_AS(cfg.boolean("dma.channels"), std::logic_error);
    CHECK_THROWS_AS(cfg.integer("link.ber"), std::logic_error);
    CHECK_THROWS_AS(cfg.real("dma.channels"), std::logic_error);
    CHECK_THROWS_AS(cfg.string("dma.setup"), std::logic_error);
    CHECK_THROWS_AS(cfg.size("nothing"), std::logic_error);
    CHECK_THROWS_AS(cfg.text("nothing.here"), std::logic_error);
    CHECK_THROWS_AS(cfg.origin("nothing.here"), std::logic_error);
    CHECK_THAT(message_of<std::logic_error>([&] { cfg.time("dma.block-size"); }),
               Contains("dma.block-size") && Contains("size"));
    // Enum and String both through string().
    CHECK_NOTHROW(cfg.string("dma.mode"));
    CHECK_NOTHROW(cfg.string("link.name"));
}

TEST_CASE("settings come in layers, one per source in turn, and typed reads are recorded", "[params][config]") {
    const ParamRegistry reg = make_registry();
    Config cfg(reg);
    CHECK(Config::origin_source("x.ini:3") == "x.ini");
    CHECK(Config::origin_source("s.ini:12, sweep point") == "s.ini, sweep point");
    CHECK(Config::origin_source("command line") == "command line");
    CHECK(Config::origin_source("c:7x") == "c:7x");
    CHECK(cfg.layer("dma.block-size") == 0);   // the defaults
    cfg.set("dma.block-size", "8KiB", "base.ini:3");
    cfg.set("dram.size", "1GiB", "base.ini:9");   // the same file: the same layer
    cfg.set("link.fec", "off", "s.ini:4");   // a sweep file's fixed value
    cfg.set("dma.mode", cfg.text("dma.mode"), "s.ini:7, sweep point");   // its point, over it
    cfg.set("dma.channels", "2", "command line");
    CHECK(cfg.layer("dma.block-size") == 1);
    CHECK(cfg.layer("dram.size") == 1);
    CHECK(cfg.layer("link.fec") == 2);
    CHECK(cfg.layer("dma.mode") == 3);
    CHECK(cfg.layer("dma.channels") == 4);
    // Naming a value is no read; a typed accessor is.
    CHECK(cfg.describe("dma.channels") == "dma.channels = 2 (from command line)");
    CHECK_FALSE(cfg.is_default("dma.channels"));
    CHECK_FALSE(cfg.was_read("dma.channels"));
    CHECK(cfg.integer("dma.channels") == 2);
    CHECK(cfg.was_read("dma.channels"));
    CHECK_FALSE(cfg.was_read("dram.size"));
    CHECK_THROWS_AS(cfg.layer("no.such"), std::logic_error);
}

TEST_CASE("set stores the value, its text and its origin", "[params][config]") {
    const ParamRegistry reg = make_registry();
    Config cfg(reg);
    cfg.set("dma.block-size", " 8 KiB ", "sweep point");
    CHECK(cfg.size("dma.block-size") == 8192);
    CHECK(cfg.text("dma.block-size") == "8 KiB");
    CHECK(cfg.origin("dma.block-size") == "sweep point");
    cfg.set("link.fec", "off", "x");
    CHECK_FALSE(cfg.boolean("link.fec"));
    cfg.set("link.name", "  spaced name ", "x");   // strings are kept as given
    CHECK(cfg.string("link.name") == "  spaced name ");
    cfg.set("dram.size", "9007199254740993", "x");   // exact beyond 2^53
    CHECK(cfg.size("dram.size") == 9007199254740993ull);
    cfg.set("dma.channels", "0x10", "x");
    CHECK(cfg.integer("dma.channels") == 16);
    cfg.set("link.rate", "2GB/s", "x");
    CHECK(cfg.rate_bps("link.rate") == 16e9);
    cfg.set("link.clock", "1.5GHz", "x");
    CHECK(cfg.frequency_hz("link.clock") == 1.5e9);
    cfg.set("link.ber", "1e-9", "x");
    CHECK(cfg.real("link.ber") == 1e-9);
}

TEST_CASE("ranges are inclusive and violations name key, value, origin and range", "[params][config][errors]") {
    const ParamRegistry reg = make_registry();
    Config cfg(reg);
    CHECK_NOTHROW(cfg.set("dma.setup", "1ns", "here"));
    CHECK_NOTHROW(cfg.set("dma.setup", "10us", "here"));
    CHECK_NOTHROW(cfg.set("dma.setup", "10000ns", "here"));
    CHECK_NOTHROW(cfg.set("dma.block-size", "1MiB", "here"));
    CHECK_NOTHROW(cfg.set("dma.channels", "1", "here"));
    CHECK_NOTHROW(cfg.set("dram.latency", "0ps", "here"));
    const std::string above = message_of([&] { cfg.set("dma.setup", "10.001us", "x.ini:12"); });
    CHECK_THAT(above, StartsWith("x.ini:12: ") && Contains("'dma.setup'") && Contains("'10.001us'") &&
                          Contains("out of range") && Contains("between 1ns and 10us"));
    CHECK_THAT(message_of([&] { cfg.set("dma.setup", "999ps", "command line"); }),
               StartsWith("command line: ") && Contains("between 1ns and 10us"));
    CHECK_THAT(message_of([&] { cfg.set("dma.block-size", "2MiB", "o"); }), Contains("between 64B and 1MiB"));
    CHECK_THAT(message_of([&] { cfg.set("dma.channels", "65", "o"); }), Contains("between 1 and 64"));
    CHECK_THAT(message_of([&] { cfg.set("dma.channels", "0", "o"); }), Contains("'0'"));
    CHECK_THAT(message_of([&] { cfg.set("link.rate", "20Tbps", "o"); }), Contains("between 1Mbps and 10Tbps"));
    CHECK_THAT(message_of([&] { cfg.set("link.ber", "-0.1", "o"); }), Contains("must be at least 0"));
    // A failed set leaves the previous value.
    CHECK(cfg.time_ps("dma.setup") == 10000000);
    CHECK(cfg.origin("dma.setup") == "here");
}

TEST_CASE("an enum accepts only its choices and lists them", "[params][config][errors]") {
    const ParamRegistry reg = make_registry();
    Config cfg(reg);
    cfg.set("dma.mode", "lazy", "o");
    CHECK(cfg.string("dma.mode") == "lazy");
    cfg.set("dma.mode", " off ", "o");
    CHECK(cfg.string("dma.mode") == "off");
    const std::string msg = message_of([&] { cfg.set("dma.mode", "Eager", "cfg.ini:4"); });
    CHECK_THAT(msg, StartsWith("cfg.ini:4: ") && Contains("'dma.mode'") && Contains("'Eager'") &&
                        Contains("expected one of: eager, lazy, off"));
}

TEST_CASE("a malformed value names key, value, origin and what was expected", "[params][config][errors]") {
    const ParamRegistry reg = make_registry();
    Config cfg(reg);
    const std::string msg = message_of([&] { cfg.set("dma.setup", "80", "command line"); });
    CHECK(msg ==
          "command line: invalid value '80' for 'dma.setup': missing unit; expected a time such as 80ns "
          "(units: ps, ns, us, ms, s)");
    CHECK_THAT(message_of([&] { cfg.set("dma.block-size", "4 KiBB", "a.ini:2"); }),
               StartsWith("a.ini:2: invalid value '4 KiBB' for 'dma.block-size'") && Contains("unknown unit 'KiBB'"));
    CHECK_THAT(message_of([&] { cfg.set("link.fec", "maybe", "o"); }), Contains("expected a boolean"));
    CHECK_THAT(message_of([&] { cfg.set("dma.channels", "four", "o"); }), Contains("expected a whole number"));
    CHECK_THAT(message_of([&] { cfg.set("link.ber", "", "o"); }), Contains("empty value"));
    CHECK_THAT(message_of([&] { cfg.set("link.clock", "nan", "o"); }), Contains("expected a frequency"));
    CHECK_THAT(message_of([&] { cfg.set("link.rate", "-1Gbps", "o"); }), Contains("negative"));
}

TEST_CASE("an unknown key is an error with the closest known key suggested", "[params][config][errors]") {
    const ParamRegistry reg = make_registry();
    Config cfg(reg);
    CHECK(message_of([&] { cfg.set("dma.blok-size", "4KiB", "command line"); }) ==
          "command line: unknown key 'dma.blok-size' (did you mean 'dma.block-size'?)");
    CHECK_THAT(message_of([&] { cfg.set("link.rtae", "1Gbps", "f.ini:9"); }),
               StartsWith("f.ini:9: unknown key 'link.rtae'") && Contains("did you mean 'link.rate'?"));
    CHECK_THAT(message_of([&] { cfg.set("completely.unrelated", "1", "o"); }),
               Contains("unknown key 'completely.unrelated'") && !Contains("did you mean"));
}

TEST_CASE("closest suggests the same key in another section, then the nearest name", "[params][suggest]") {
    const ParamRegistry reg = make_registry();
    // Same key, other section: the section closest to the one written.
    CHECK(reg.closest("link.size") == "dram.size");
    CHECK(reg.closest("dam.latency") == "dram.latency");
    CHECK(reg.closest("latency") == "dram.latency");
    CHECK(reg.closest("dmb.block-size") == "dma.block-size");
    CHECK(reg.closest("drm.block-size") == "dram.block-size");
    // Typos.
    CHECK(reg.closest("dma.blok-size") == "dma.block-size");
    CHECK(reg.closest("dma.stepu") == "dma.setup");   // transposition
    CHECK(reg.closest("DMA.Setup") == "dma.setup");
    CHECK(reg.closest("link.clok") == "link.clock");
    // Abbreviations.
    CHECK(reg.closest("link.cl") == "link.clock");
    // Nothing reasonably close.
    CHECK(reg.closest("zzzzzzzz.qqqqqqq") == "");
    CHECK(reg.closest("x") == "");
}

// ---------------------------------------------------------------------------
// INI files

TEST_CASE("apply_file reads sections, key = value, comments and blank lines", "[params][ini]") {
    TempDir dir;
    const std::string path = dir.write("a.ini",
                                       "# a comment\n"
                                       "; another comment\n"
                                       "\n"
                                       "[dma]\n"
                                       "block-size = 8KiB\n"
                                       "   setup=120 ns   # trailing comment\n"
                                       "mode = lazy ; trailing comment\n"
                                       "\n"
                                       "  [ link ]   # section comment\n"
                                       "name = a#b\n"
                                       "ber = 1e-9\r\n"
                                       "[dma]\n"
                                       "channels = 0x8\n");
    const ParamRegistry reg = make_registry();
    Config cfg(reg);
    cfg.apply_file(path);
    CHECK(cfg.size("dma.block-size") == 8192);
    CHECK(cfg.origin("dma.block-size") == path + ":5");
    CHECK(cfg.time_ps("dma.setup") == 120000);
    CHECK(cfg.origin("dma.setup") == path + ":6");
    CHECK(cfg.string("dma.mode") == "lazy");
    CHECK(cfg.string("link.name") == "a#b");   // '#' not after whitespace
    CHECK(cfg.real("link.ber") == 1e-9);
    CHECK(cfg.integer("dma.channels") == 8);
    CHECK(cfg.origin("dma.channels") == path + ":13");
    CHECK(cfg.origin("dram.size") == "default");
}

TEST_CASE("apply_file reads double-quoted values with escapes", "[params][ini]") {
    TempDir dir;
    const std::string path = dir.write("q.ini",
                                       "\xEF\xBB\xBF[link]\n"   // UTF-8 byte order mark
                                       "name = \"  a # b ; \\\"c\\\" \\\\ \"   # comment\n");
    const ParamRegistry reg = make_registry();
    Config cfg(reg);
    cfg.apply_file(path);
    CHECK(cfg.string("link.name") == "  a # b ; \"c\" \\ ");
    const std::string bad = dir.write("b.ini", "[link]\nname = \"unterminated\n");
    CHECK_THAT(message_of([&] { cfg.apply_file(bad); }), StartsWith(bad + ":2: ") && Contains("closing"));
    const std::string bad2 = dir.write("c.ini", "[link]\nname = \"a\" b\n");
    CHECK_THAT(message_of([&] { cfg.apply_file(bad2); }), StartsWith(bad2 + ":2: ") && Contains("'b'"));
}

TEST_CASE("precedence: defaults < first file < second file < command line", "[params][precedence]") {
    TempDir dir;
    const std::string f1 = dir.write("one.ini",
                                     "[dma]\n"
                                     "block-size = 8KiB\n"
                                     "setup = 100ns\n"
                                     "mode = lazy\n");
    const std::string f2 = dir.write("two.ini",
                                     "[dma]\n"
                                     "setup = 200ns\n"
                                     "mode = off\n");
    const ParamRegistry reg = make_registry();
    Config cfg(reg);
    cfg.apply_file(f1);
    cfg.apply_file(f2);
    cfg.apply_command_line({"--dma.mode=eager", "--link.rate", "25Gbps"});

    CHECK(cfg.integer("dma.channels") == 4);   // default only
    CHECK(cfg.origin("dma.channels") == "default");
    CHECK(cfg.size("dma.block-size") == 8192);   // file 1 only
    CHECK(cfg.origin("dma.block-size") == f1 + ":2");
    CHECK(cfg.time_ps("dma.setup") == 200000);   // file 2 over file 1
    CHECK(cfg.origin("dma.setup") == f2 + ":2");
    CHECK(cfg.string("dma.mode") == "eager");   // command line over both files
    CHECK(cfg.origin("dma.mode") == "command line");
    CHECK(cfg.rate_bps("link.rate") == 25e9);   // command line over default
    CHECK(cfg.origin("link.rate") == "command line");

    // The files in the other order.
    Config rev(reg);
    rev.apply_file(f2);
    rev.apply_file(f1);
    CHECK(rev.time_ps("dma.setup") == 100000);
    CHECK(rev.string("dma.mode") == "lazy");
    // Within one file a key is set once: twice is an error, not "the later wins".
    const std::string f3 = dir.write("three.ini", "[dma]\nsetup = 1us\nsetup = 2us\n");
    CHECK_THAT(message_of([&] { rev.apply_file(f3); }), StartsWith(f3 + ":3: ") && Contains("already set on line 2"));
}

TEST_CASE("apply_file errors name file and line", "[params][ini][errors]") {
    TempDir dir;
    const ParamRegistry reg = make_registry();
    Config cfg(reg);

    SECTION("unknown key with suggestion") {
        const std::string p = dir.write("x.ini", "[dma]\n\nblok-size = 4KiB\n");
        CHECK(message_of([&] { cfg.apply_file(p); }) ==
              p + ":3: unknown key 'dma.blok-size' (did you mean 'dma.block-size'?)");
    }
    SECTION("known key in the wrong section suggests the right section") {
        const std::string p = dir.write("x.ini", "[link]\nsetup = 1ns\n");
        CHECK(message_of([&] { cfg.apply_file(p); }) == p + ":2: unknown key 'link.setup' (did you mean 'dma.setup'?)");
    }
    SECTION("unknown section with suggestion") {
        const std::string p = dir.write("x.ini", "# c\n[dmaa]\nblock-size = 4KiB\n");
        CHECK(message_of([&] { cfg.apply_file(p); }) == p + ":2: unknown section [dmaa] (did you mean [dma]?)");
    }
    SECTION("unknown section with nothing close") {
        const std::string p = dir.write("x.ini", "[qwertyuiop]\n");
        const std::string msg = message_of([&] { cfg.apply_file(p); });
        CHECK_THAT(msg, StartsWith(p + ":1: unknown section [qwertyuiop]") && !Contains("did you mean"));
    }
    SECTION("malformed value") {
        const std::string p = dir.write("x.ini", "[dma]\nsetup = 80\n");
        CHECK(message_of([&] { cfg.apply_file(p); }) ==
              p + ":2: invalid value '80' for 'dma.setup': missing unit; expected a time such as 80ns "
                  "(units: ps, ns, us, ms, s)");
    }
    SECTION("empty value") {
        const std::string p = dir.write("x.ini", "[dma]\nsetup =   # nothing\n");
        CHECK_THAT(message_of([&] { cfg.apply_file(p); }),
                   StartsWith(p + ":2: invalid value '' for 'dma.setup'") && Contains("empty value"));
    }
    SECTION("value out of range") {
        const std::string p = dir.write("x.ini", "[dma]\nblock-size = 32B\n");
        CHECK(message_of([&] { cfg.apply_file(p); }) ==
              p + ":2: value '32B' for 'dma.block-size' is out of range: must be between 64B and 1MiB");
    }
    SECTION("enum value not among the choices") {
        const std::string p = dir.write("x.ini", "[dma]\nmode = sometimes\n");
        CHECK(message_of([&] { cfg.apply_file(p); }) ==
              p + ":2: invalid value 'sometimes' for 'dma.mode': expected one of: eager, lazy, off");
    }
    SECTION("key = value before any section") {
        const std::string p = dir.write("x.ini", "# header\nblock-size = 4KiB\n[dma]\n");
        CHECK_THAT(message_of([&] { cfg.apply_file(p); }),
                   StartsWith(p + ":2: ") && Contains("block-size = 4KiB") && Contains("before any [section]"));
    }
    SECTION("a line that is neither section, key = value, comment nor blank") {
        const std::string p = dir.write("x.ini", "[dma]\nblock-size 4KiB\n");
        CHECK(message_of([&] { cfg.apply_file(p); }) ==
              p + ":2: expected '[section]', 'key = value', a comment or a blank line, got 'block-size 4KiB'");
        const std::string q = dir.write("y.ini", "[dma]\n= 4KiB\n");
        CHECK_THAT(message_of([&] { cfg.apply_file(q); }), StartsWith(q + ":2: expected '[section]'"));
    }
    SECTION("malformed section headers") {
        const std::string p = dir.write("x.ini", "[dma\n");
        CHECK_THAT(message_of([&] { cfg.apply_file(p); }), StartsWith(p + ":1: ") && Contains("missing ']'"));
        const std::string q = dir.write("y.ini", "[dma] x\n");
        CHECK_THAT(message_of([&] { cfg.apply_file(q); }), StartsWith(q + ":1: ") && Contains("'x'"));
        const std::string r = dir.write("z.ini", "[ ]\n");
        CHECK_THAT(message_of([&] { cfg.apply_file(r); }), StartsWith(r + ":1: ") && Contains("empty section"));
    }
    SECTION("missing file") {
        const std::string p = dir.path + "/missing.ini";
        CHECK(message_of([&] { cfg.apply_file(p); }) ==
              "cannot open config file '" + p + "': No such file or directory");
    }
    SECTION("a directory is not a config file") {
        CHECK(message_of([&] { cfg.apply_file(dir.path); }) ==
              "cannot open config file '" + dir.path + "': Is a directory");
    }
    SECTION("unreadable file") {
        const std::string p = dir.write("x.ini", "[dma]\n");
        std::filesystem::permissions(p, std::filesystem::perms::none);
        std::ifstream probe(p);
        if (probe) {
            WARN("running with permission to read any file (root?): skipping the unreadable case");
        } else {
            CHECK(message_of([&] { cfg.apply_file(p); }) == "cannot open config file '" + p + "': Permission denied");
        }
    }
}

TEST_CASE("values before an error in a file are applied, the rest not", "[params][ini][errors]") {
    TempDir dir;
    const ParamRegistry reg = make_registry();
    Config cfg(reg);
    const std::string p = dir.write("x.ini", "[dma]\nblock-size = 8KiB\nsetup = bad\nmode = lazy\n");
    CHECK_THROWS_AS(cfg.apply_file(p), ConfigError);
    CHECK(cfg.size("dma.block-size") == 8192);
    CHECK(cfg.string("dma.mode") == "eager");
}

// ---------------------------------------------------------------------------
// Command line

TEST_CASE("apply_command_line takes --section.key=value and --section.key value", "[params][cli]") {
    const ParamRegistry reg = make_registry();
    Config cfg(reg);
    cfg.apply_command_line(
        {"--dma.block-size=16KiB", "--dma.setup", "1us", "--link.fec=no", "--link.name=x y", "--link.ber=-0"});
    CHECK(cfg.size("dma.block-size") == 16384);
    CHECK(cfg.time_ps("dma.setup") == 1000000);
    CHECK_FALSE(cfg.boolean("link.fec"));
    CHECK(cfg.string("link.name") == "x y");
    CHECK(cfg.origin("dma.block-size") == "command line");
    CHECK(cfg.origin("dma.channels") == "default");
    // Repeated: the last one wins.
    cfg.apply_command_line({"--dma.channels=2", "--dma.channels=3"});
    CHECK(cfg.integer("dma.channels") == 3);
    // Nothing to do.
    CHECK_NOTHROW(cfg.apply_command_line({}));
}

TEST_CASE("apply_command_line reads --key=value alone as the parser reads it among other forms", "[params][cli]") {
    // Every token a --key=value of a declared parameter is read without
    // Boost.Program_options; one token of another form sends the whole line
    // through it. Both give the same values: a value holds every '=' after
    // the first, and the last repeat wins.
    const ParamRegistry reg = make_registry();
    Config direct(reg), parsed(reg);
    direct.apply_command_line({"--link.name=a=b", "--dma.channels=2", "--dma.channels=5", "--dma.mode=lazy"});
    parsed.apply_command_line({"--link.name=a=b", "--dma.channels=2", "--dma.channels", "5", "--dma.mode=lazy"});
    for (const Config* c : {&direct, &parsed}) {
        CHECK(c->string("link.name") == "a=b");
        CHECK(c->integer("dma.channels") == 5);
        CHECK(c->string("dma.mode") == "lazy");
        CHECK(c->origin("link.name") == "command line");
    }
    // An empty value after '=': the parser's error either way.
    CHECK_THAT(message_of([&] { direct.apply_command_line({"--link.name="}); }),
               Contains("'--link.name' should follow immediately after the equal sign"));
    CHECK_THAT(message_of([&] {
                   parsed.apply_command_line({"--link.name=", "--dma.setup", "1us"});
               }),
               Contains("'--link.name' should follow immediately after the equal sign"));
    // An undeclared name among declared ones: the parser's error, naming it.
    Config cfg(reg);
    CHECK(message_of([&] {
              cfg.apply_command_line({"--dma.channels=2", "--dma.blok-size=4KiB"});
          }) == "command line: unknown parameter '--dma.blok-size' (did you mean 'dma.block-size'?)");
    CHECK(cfg.integer("dma.channels") == 4);
}

TEST_CASE("apply_command_line errors say 'command line' and suggest names", "[params][cli][errors]") {
    const ParamRegistry reg = make_registry();
    Config cfg(reg);
    CHECK(message_of([&] { cfg.apply_command_line({"--dma.blok-size=4KiB"}); }) ==
          "command line: unknown parameter '--dma.blok-size' (did you mean 'dma.block-size'?)");
    CHECK(message_of([&] {
              cfg.apply_command_line({"--link.setup", "1ns"});
          }) == "command line: unknown parameter '--link.setup' (did you mean 'dma.setup'?)");
    // Abbreviations are not silently accepted.
    CHECK(message_of([&] { cfg.apply_command_line({"--dma.block=4KiB"}); }) ==
          "command line: unknown parameter '--dma.block' (did you mean 'dma.block-size'?)");
    CHECK_THAT(message_of([&] { cfg.apply_command_line({"--nothing-like-it=1"}); }),
               Contains("unknown parameter '--nothing-like-it'") && !Contains("did you mean"));
    CHECK_THAT(message_of([&] { cfg.apply_command_line({"-x"}); }), Contains("command line: unknown parameter '-x'"));
    CHECK_THAT(message_of([&] { cfg.apply_command_line({"stray"}); }),
               StartsWith("command line: ") && Contains("'stray'"));
    CHECK_THAT(message_of([&] {
                   cfg.apply_command_line({"--dma.setup=1ns", "1us"});
               }),
               StartsWith("command line: ") && Contains("'1us'"));
    CHECK_THAT(message_of([&] { cfg.apply_command_line({"--dma.setup"}); }),
               StartsWith("command line: ") && Contains("dma.setup") && Contains("missing"));
    CHECK(message_of([&] { cfg.apply_command_line({"--dma.setup=80"}); }) ==
          "command line: invalid value '80' for 'dma.setup': missing unit; expected a time such as 80ns "
          "(units: ps, ns, us, ms, s)");
    CHECK(message_of([&] { cfg.apply_command_line({"--dma.channels=100"}); }) ==
          "command line: value '100' for 'dma.channels' is out of range: must be between 1 and 64");
    // Nothing was applied by the failed calls.
    CHECK(cfg.time_ps("dma.setup") == 80000);
}

TEST_CASE("add_options declares one string option per parameter", "[params][cli]") {
    const ParamRegistry reg = make_registry();
    boost::program_options::options_description desc;
    reg.add_options(desc);
    CHECK(desc.options().size() == reg.all().size());
    const auto* opt = desc.find_nothrow("dma.block-size", false);
    REQUIRE(opt != nullptr);
    CHECK_THAT(opt->description(), Contains("bytes moved per DMA block") && Contains("4KiB"));
    CHECK(desc.find_nothrow("dma.block", false) == nullptr);
    std::ostringstream help;
    help << desc;
    CHECK_THAT(help.str(), Contains("--dma.block-size"));
}

TEST_CASE("is_default compares values, not spellings, non_defaults lists the others in declaration order",
          "[params][defaults]") {
    const ParamRegistry reg = make_registry();
    Config cfg(reg);
    CHECK(cfg.non_defaults().empty());
    for (const auto& d : reg.all()) CHECK(cfg.is_default(d.name()));
    // Set, but to the default however written: still the default.
    cfg.set("dma.setup", "0.08us", "test");
    cfg.set("link.fec", "yes", "test");
    cfg.set("link.rate", "2GB/s", "test");
    cfg.set("dma.block-size", "4096", "test");
    cfg.set("dma.mode", " eager ", "test");
    CHECK(cfg.non_defaults().empty());
    // Different values, listed in declaration order, not in the order set.
    cfg.set("dram.latency", "90ns", "test");
    cfg.set("link.fec", "off", "test");
    cfg.set("link.name", "x", "test");
    cfg.set("dma.mode", "lazy", "test");
    cfg.set("link.ber", "1e-9", "test");
    std::vector<std::string> names;
    for (const ParamDecl* d : cfg.non_defaults()) names.push_back(d->name());
    CHECK(names == std::vector<std::string>{"dma.mode", "link.fec", "link.ber", "link.name", "dram.latency"});
    CHECK_FALSE(cfg.is_default("dram.latency"));
    CHECK(cfg.is_default("dram.size"));
    // Back to the default: no longer listed.
    cfg.set("dram.latency", "100ns", "test");
    CHECK(cfg.is_default("dram.latency"));
    CHECK_THROWS_AS(cfg.is_default("dram.nope"), std::logic_error);
}

// ---------------------------------------------------------------------------
// write_ini and print

TEST_CASE("write_ini writes every parameter with help and origins and reads back identically",
          "[params][ini][roundtrip]") {
    TempDir dir;
    const ParamRegistry reg = make_registry();
    Config cfg(reg);
    const std::string f = dir.write("x.ini", "[dma]\n\n\nsetup = 1.5us\n[link]\nrate = 19.2GB/s\n");
    cfg.apply_file(f);
    cfg.apply_command_line({"--link.name= odd # name ; \"quoted\" \\ ", "--dma.mode=off", "--dram.size=1TiB",
                            "--link.ber=0.1", "--link.clock=1.5GHz"});
    std::ostringstream out;
    cfg.write_ini(out);
    const std::string ini = out.str();
    INFO(ini);
    CHECK_THAT(ini, Contains("[dma]\n") && Contains("[link]\n") && Contains("[dram]\n"));
    CHECK_THAT(ini, Contains("# descriptor setup time\n# from " + f + ":4\nsetup = 1.5us\n"));
    CHECK_THAT(ini, Contains("# from command line\nmode = off\n"));
    CHECK_THAT(ini, Contains("# bytes moved per DMA block\nblock-size = 4KiB\n"));   // a default: no origin
    CHECK_THAT(ini, Contains("# DMA engine of one node\n"));
    for (const auto& d : reg.all()) CHECK_THAT(ini, Contains("\n" + d.key + " = "));

    const std::string copy = dir.write("copy.ini", ini);
    Config back(reg);
    back.apply_file(copy);
    for (const auto& d : reg.all()) {
        INFO(d.name());
        CHECK(back.text(d.name()) == cfg.text(d.name()));
    }
    CHECK(back.string("link.name") == " odd # name ; \"quoted\" \\ ");
    CHECK(back.time_ps("dma.setup") == 1500000);
    CHECK(back.rate_bps("link.rate") == 153.6e9);
    CHECK(back.size("dram.size") == 1ull << 40);
    CHECK(back.real("link.ber") == 0.1);
    CHECK(back.frequency_hz("link.clock") == 1.5e9);
    CHECK(back.string("dma.mode") == "off");
    CHECK(back.origin("dma.mode") == copy + ":" + std::to_string([&] {
                                         // the line of "mode = off" in the written file
                                         std::istringstream in(ini);
                                         std::string line;
                                         int n = 0;
                                         while (std::getline(in, line)) {
                                             ++n;
                                             if (line == "mode = off") return n;
                                         }
                                         return -1;
                                     }()));

    // Writing the re-read configuration gives the same values again, and
    // names an origin only for the values that are not the default (once,
    // every key of the file was marked as set by it).
    std::ostringstream again;
    back.write_ini(again);
    std::size_t origins = 0;
    for (std::size_t at = 0; (at = again.str().find("# from ", at)) != std::string::npos; ++at) ++origins;
    CHECK(origins == back.non_defaults().size());
    CHECK(origins == cfg.non_defaults().size());
    CHECK_THAT(again.str(), Contains("# bytes moved per DMA block\nblock-size = 4KiB\n"));
    const std::string copy2 = dir.write("copy2.ini", again.str());
    Config third(reg);
    third.apply_file(copy2);
    for (const auto& d : reg.all()) CHECK(third.text(d.name()) == cfg.text(d.name()));
}

TEST_CASE("write_ini of the defaults re-reads as the defaults, an empty string included", "[params][ini][roundtrip]") {
    TempDir dir;
    const ParamRegistry reg = make_registry();
    const Config cfg(reg);
    std::ostringstream out;
    cfg.write_ini(out);
    CHECK_THAT(out.str(), !Contains("# from"));
    CHECK_THAT(out.str(), Contains("name = \"\"\n"));
    const std::string p = dir.write("d.ini", out.str());
    Config back(reg);
    back.apply_file(p);
    for (const auto& d : reg.all()) CHECK(back.text(d.name()) == cfg.text(d.name()));
    CHECK(back.string("link.name").empty());
}

TEST_CASE("print lists every parameter by section, aligned, with type, default, range and help", "[params][print]") {
    const ParamRegistry reg = make_registry();
    std::ostringstream out;
    reg.print(out);
    const std::string text = out.str();
    INFO(text);
    CHECK_THAT(text, Contains("[dma]  DMA engine of one node\n"));
    CHECK_THAT(text, Contains("[link]  serial link between FPGAs\n"));
    CHECK_THAT(text, Contains("[dram]  DDR4 memory\n"));
    // Sections in declaration order.
    CHECK(text.find("[dma]") < text.find("[link]"));
    CHECK(text.find("[link]") < text.find("[dram]"));

    // Each parameter: a row of name, type, default and range, then its help
    // below, indented (wrapped to the terminal's width).
    std::istringstream in(text);
    std::string line;
    std::vector<std::string> rows;
    while (std::getline(in, line)) {
        if (line.rfind("      ", 0) == 0) {
            REQUIRE(!rows.empty());
            rows.back() += " | " + line.substr(line.find_first_not_of(' '));
        } else if (line.rfind("  ", 0) == 0) {
            rows.push_back(line);
        }
    }
    REQUIRE(rows.size() == reg.all().size());
    auto row = [&](const std::string& name) {
        for (const auto& r : rows)
            if (r.rfind("  " + name + " ", 0) == 0) return r;
        FAIL("no row for " << name);
        return std::string();
    };
    auto fields_in_order = [](const std::string& r, const std::vector<std::string>& fields) {
        std::size_t pos = 0;
        for (const auto& f : fields) {
            const auto at = r.find(f, pos);
            if (at == std::string::npos) return false;
            pos = at + f.size();
        }
        return true;
    };
    CHECK(fields_in_order(row("dma.block-size"),
                          {"dma.block-size", "size", "4KiB", "[64B, 1MiB]", " | bytes moved per DMA block"}));
    CHECK(fields_in_order(row("dma.setup"), {"dma.setup", "time", "80ns", "[1ns, 10us]", " | descriptor setup time"}));
    CHECK(fields_in_order(row("dma.mode"), {"dma.mode", "enum", "eager", "{eager, lazy, off}"}));
    CHECK(fields_in_order(row("link.rate"), {"link.rate", "rate", "16Gbps", "[1Mbps, 10Tbps]", " | line rate"}));
    CHECK(fields_in_order(row("link.clock"), {"link.clock", "frequency", "156.25MHz", " | transceiver clock"}));
    CHECK(fields_in_order(row("link.ber"), {"link.ber", "real", "1e-12", ">= 0", " | bit error rate"}));
    CHECK(fields_in_order(row("link.name"), {"link.name", "string", "\"\"", " | label in traces"}));
    CHECK(fields_in_order(row("dram.latency"), {"dram.latency", "time", "100ns", ">= 0ps"}));
    // Aligned: within a section, every column starts at the same offset on every row.
    const auto type_col = row("dma.block-size").find(" size ") + 1;
    CHECK(row("dma.setup").find("time") == type_col);
    CHECK(row("dma.mode").find("enum") == type_col);
    CHECK(row("link.clock").find("frequency") == row("link.rate").find(" rate ") + 1);
    // No trailing spaces, no line wider than the width (80 without $COLUMNS).
    std::istringstream again(text);
    while (std::getline(again, line)) {
        CHECK((line.empty() || line.back() != ' '));
        CHECK(line.size() <= 80);
    }
}

TEST_CASE("print shows defaults as declared, with a unit added to bare sizes", "[params][print]") {
    ParamRegistry reg;
    ParamSet mem("mem", "");
    mem.size("queue", "65536", "queue size");
    mem.rate("bandwidth", "19.2GB/s", "peak rate");
    mem.boolean("on", "yes", "enabled");
    reg.add(mem);
    std::ostringstream out;
    reg.print(out);
    const std::string text = out.str();
    INFO(text);
    CHECK_THAT(text, Contains("[mem]\n"));
    CHECK_THAT(text, Contains("  mem.queue      size  64KiB\n      queue size\n"));
    CHECK_THAT(text, Contains("  mem.bandwidth  rate  19.2GB/s\n      peak rate\n"));
    CHECK_THAT(text, Contains("  mem.on         bool  yes\n      enabled\n"));
}

TEST_CASE("an unknown key of a megabyte costs no edit-distance work and is not echoed whole", "[params][errors]") {
    const ParamRegistry reg = make_registry();
    Config cfg(reg);
    const std::string huge = "dma." + std::string(1 << 20, 'x');
    TempDir dir;
    const std::string path = dir.write("huge.ini", "[dma]\n" + huge.substr(4) + " = 1\n");
    const auto t0 = std::chrono::steady_clock::now();
    const std::string m1 = message_of([&] { cfg.set(huge, "1", "here"); });
    const std::string m2 = message_of([&] { cfg.apply_file(path); });
    const std::string m3 = message_of([&] { cfg.apply_command_line({"--" + huge + "=1"}); });
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    CHECK(seconds < 2.0);   // minutes before the bound
    for (const std::string& m : {m1, m2, m3}) {
        CHECK_THAT(m, Contains("unknown") && Contains("dma.xxxx") && Contains(" bytes)"));
        CHECK(m.size() < 400);
    }
    CHECK(reg.closest(huge).empty());
    // A value likewise.
    const std::string m4 = message_of([&] { cfg.set("dma.mode", std::string(100000, 'y'), "here"); });
    CHECK(m4.size() < 600);
    CHECK_THAT(m4, Contains("100000 bytes"));
    // Suggestions for ordinary names are unchanged.
    CHECK(reg.closest("dma.blok-size") == "dma.block-size");
    CHECK(reg.closest("dma.block") == "dma.block-size");
}

TEST_CASE("a key set twice in one INI file is an error naming both lines", "[params][ini][errors]") {
    const ParamRegistry reg = make_registry();
    Config cfg(reg);
    TempDir dir;
    const std::string path = dir.write("twice.ini", "[dma]\nsetup = 100ns\n\n[dma]\nsetup = 200ns\n");
    CHECK_THAT(message_of([&] { cfg.apply_file(path); }),
               StartsWith(path + ":5: ") && Contains("'dma.setup'") && Contains("already set on line 2"));
    // Once in each of two files is precedence, not an error.
    const std::string other = dir.write("other.ini", "[dma]\nsetup = 300ns\n");
    const std::string once = dir.write("once.ini", "[dma]\nsetup = 100ns\n");
    Config ok(reg);
    ok.apply_file(once);
    ok.apply_file(other);
    CHECK(ok.time_ps("dma.setup") == 300000);
}

TEST_CASE("read_ini_file: one grammar, quoted values flagged, sections checked", "[params][ini]") {
    TempDir dir;
    const std::string path = dir.write("g.ini",
                                       "\xEF\xBB\xBF; comment\n"
                                       "[a]\n"
                                       "x = 1, 2   # a list for a sweep\n"
                                       "y = \"1, 2\" ; one quoted value\n");
    const auto entries = read_ini_file(path, {"a", "b"}, "sweep file");
    REQUIRE(entries.size() == 2);
    CHECK(entries[0].name() == "a.x");
    CHECK(entries[0].value == "1, 2");
    CHECK_FALSE(entries[0].quoted);
    CHECK(entries[0].origin == path + ":3");
    CHECK(entries[1].value == "1, 2");
    CHECK(entries[1].quoted);
    CHECK(entries[1].line == 4);
    const std::string bad = dir.write("s.ini", "[c]\nx = 1\n");
    CHECK_THAT(message_of([&] {
                   read_ini_file(bad, {"a", "b"}, "sweep file");
               }),
               StartsWith(bad + ":1: ") && Contains("unknown section [c]"));
    CHECK_THAT(message_of([&] { read_ini_file(dir.path + "/none.ini", {"a"}, "sweep file"); }),
               Contains("cannot open sweep file"));
}

TEST_CASE("write_ini escapes an origin holding a newline so that the file re-reads", "[params][ini][roundtrip]") {
    const ParamRegistry reg = make_registry();
    Config cfg(reg);
    cfg.set("dma.setup", "100ns", "odd\nname\\x.ini:3");
    cfg.set("dma.channels", "8", "tab\there\r\x01.ini:4");
    std::ostringstream os;
    cfg.write_ini(os);
    const std::string text = os.str();
    CHECK_THAT(text, Contains("# from odd\\nname\\\\x.ini:3\n"));
    CHECK_THAT(text, Contains("# from tab\\there\\r\\x01.ini:4\n"));
    TempDir dir;
    const std::string path = dir.write("back.ini", text);
    Config back(reg);
    back.apply_file(path);
    CHECK(back.time_ps("dma.setup") == 100000);
    CHECK(back.integer("dma.channels") == 8);
}

TEST_CASE("a parameter is read through the handle its declaration returned", "[params][handle]") {
    ParamSet dma("dma", "DMA");
    const SizeParam block = dma.size("block-size", "4KiB", "block").range("64B", "1MiB");
    const TimeParam setup = dma.time("setup", "80ns", "setup");
    const EnumParam mode = dma.choice("mode", "eager", {"eager", "lazy"}, "mode");
    const IntParam channels = dma.integer("channels", "4", "channels");
    CHECK(block.name() == "dma.block-size");
    ParamRegistry reg;
    reg.add(dma);
    // The range given on the handle is the registry's.
    REQUIRE(reg.find("dma.block-size") != nullptr);
    CHECK(reg.find("dma.block-size")->has_max);
    CHECK(reg.find("dma.block-size")->max_text == "1MiB");
    Config cfg(reg);
    CHECK(cfg[block] == 4096);
    CHECK(cfg[setup] == sc_core::sc_time(80, sc_core::SC_NS));
    CHECK(cfg.ps(setup) == 80000);
    CHECK(cfg[mode] == "eager");
    cfg.set("dma.block-size", "8KiB", "command line");
    cfg.set("dma.channels", "7", "x.ini:3");
    CHECK(cfg[block] == 8192);
    CHECK(cfg.text(block) == "8KiB");
    CHECK(cfg.origin(channels) == "x.ini:3");
    CHECK(cfg[channels] == 7);
    // A handle of a set that was never added to the registry: a programming error.
    ParamSet other("other", "");
    const BoolParam flag = other.boolean("flag", "yes", "flag");
    CHECK_THROWS_AS(cfg[flag], std::logic_error);
    // Handles of a set built elsewhere read the same registry entry.
    CHECK(params_of<DramParamsForTest>().latency.name() == "dram.latency");
}

TEST_CASE("what a terminal would not show is named in messages, a no-break space separates a unit, UTF-16 said so",
          "[params][errors]") {
    // A no-break space before the unit ("1 MiB" copied from a document):
    // once "unknown unit ' MiB'" with the space invisible.
    CHECK(parse_size_bytes("1\xC2\xA0MiB") == 1048576);
    CHECK(parse_time_ps("5\xE2\x80\xAFns") == 5000);
    CHECK(clip_for_message("\xEF\xBB\xBF"
                           "0") == "<U+FEFF byte-order mark>0");
    CHECK(clip_for_message("a\x01z\tb") == "a\\x01z\tb");
    CHECK(clip_for_message(std::string("[\0d\0", 4)) == "[\\x00d\\x00");
    CHECK(clip_for_message("\xff\xfe") == "\\xff\\xfe");   // not UTF-8
    CHECK(clip_for_message("caf\xC3\xA9") == "caf\xC3\xA9");   // UTF-8: kept
    CHECK_THAT(parse_error([] { parse_size_bytes("4\xE2\x80\x8BKiB"); }),
               Contains("unknown unit '<U+200B zero-width space>KiB'"));
    TempDir dir;
    const ParamRegistry reg = make_registry();
    Config cfg(reg);
    const std::string p = dir.write("u16.ini", std::string("\xFF\xFE[\0d\0m\0a\0]\0", 12));
    CHECK_THAT(message_of([&] { cfg.apply_file(p); }), Contains("is UTF-16") && Contains("save it as UTF-8"));
}

TEST_CASE("path-valued settings: relative to the config file that sets them, the command line's to the cwd",
          "[params][ini][paths]") {
    ParamRegistry reg;
    ParamSet t("trace", "a trace");
    t.path("file", "", "the trace");
    t.path("map", "", "a mapping");
    t.string("name", "", "text, not a path");
    reg.add(t);
    TempDir dir;
    std::filesystem::create_directories(dir.path + "/cfg");
    const std::string file = dir.write("cfg/c.ini", "[trace]\nfile = ../traces/a.otf2\nmap = /abs/m.map\nname = x/y\n");
    Config cfg(reg);
    cfg.apply_file(file);
    CHECK(cfg.text("trace.file") == dir.path + "/traces/a.otf2");
    CHECK(cfg.origin("trace.file") == file + ":2");
    CHECK(cfg.text("trace.map") == "/abs/m.map");   // absolute: as is
    CHECK(cfg.text("trace.name") == "x/y");   // not a path: as written
    // A file named relative to the cwd gives a path relative to the cwd.
    CHECK(resolve_from_file("cfg/c.ini", "../t/a.otf2") == "t/a.otf2");
    CHECK(resolve_from_file("c.ini", "a.otf2") == "a.otf2");
    CHECK(resolve_from_file("cfg/c.ini", "").empty());
    // The command line: relative to the cwd, its origin as given.
    cfg.apply_command_line({"--trace.file=rel/b.otf2"}, {{"trace.file", "s.ini:7"}});
    CHECK(cfg.text("trace.file") == "rel/b.otf2");
    CHECK(cfg.describe("trace.file") == "trace.file = rel/b.otf2 (from s.ini:7)");
    cfg.apply_command_line({"--trace.map=m"});
    CHECK(cfg.origin("trace.map") == "command line");
    // config.ini writes a relative path absolute: it means the same file
    // wherever config.ini is read from.
    std::ostringstream os;
    cfg.write_ini(os);
    CHECK_THAT(os.str(), Contains("\nfile = " + (std::filesystem::current_path() / "rel/b.otf2").string() + "\n"));
    CHECK_THAT(os.str(), Contains("\nname = x/y\n"));
}

TEST_CASE("read_ini_file with lists: bare and quoted values, commas inside quotes kept", "[params][ini]") {
    TempDir dir;
    const std::string path = dir.write("l.ini",
                                       "[a]\n"
                                       "x = 1, \"2, 3\" ,\"4\"  # three\n"
                                       "y = \"1, 2\" ; one\n"
                                       "z = plain\n");
    const auto entries = read_ini_file(path, {"a"}, "sweep file", true);
    REQUIRE(entries.size() == 3);
    CHECK(entries[0].items == std::vector<std::string>{"1", "2, 3", "4"});
    CHECK(entries[1].items == std::vector<std::string>{"1, 2"});
    CHECK(entries[1].value == "1, 2");
    CHECK(entries[2].items == std::vector<std::string>{"plain"});
    // Without lists (config files) a quoted value is the whole value.
    const std::string cfg = dir.write("c.ini", "[a]\nx = \"1\", \"2\"\n");
    CHECK_THAT(message_of([&] { read_ini_file(cfg, {"a"}, "config file"); }),
               Contains("c.ini:2") && Contains("after the quoted value"));
}
