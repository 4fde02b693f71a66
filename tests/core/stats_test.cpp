// Tests of counters, scalars, histograms and the statistics registry.
#include <catch2/catch.hpp>

#include "json_check.hpp"

#include "src/core/json.hpp"
#include "src/core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

using namespace vrdmasim;

namespace {

using vrdmasim_test::JVal;
using vrdmasim_test::parse_json;

// Nearest-rank quantile of sorted samples: the ceil(q n)-th smallest.
double exact_quantile(const std::vector<double>& sorted, double q) {
    const double n = static_cast<double>(sorted.size());
    auto rank = static_cast<std::size_t>(std::ceil(q * n - 1e-9 * n));
    rank = std::clamp<std::size_t>(rank, 1, sorted.size());
    return sorted[rank - 1];
}

template <class Dist>
void check_quantiles(const char* what, Dist dist, std::uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<double> xs;
    Histogram h;
    double sum = 0;
    for (int i = 0; i < 100000; ++i) {
        const double v = dist(rng);
        xs.push_back(v);
        h.add(v);
        sum += v;
    }
    std::sort(xs.begin(), xs.end());
    INFO(what);
    CHECK(h.count() == xs.size());
    CHECK(h.min() == xs.front());
    CHECK(h.max() == xs.back());
    CHECK(h.sum() == sum);
    CHECK(h.mean() == sum / static_cast<double>(xs.size()));
    CHECK(h.quantile(0) == xs.front());
    CHECK(h.quantile(1) == xs.back());
    for (double q : {0.01, 0.1, 0.25, 0.5, 0.75, 0.9, 0.99, 0.999}) {
        const double exact = exact_quantile(xs, q);
        const double got = h.quantile(q);
        INFO("q = " << q << ", exact = " << exact << ", got = " << got);
        CHECK(std::fabs(got - exact) <= 0.01 * std::fabs(exact));
        CHECK(got >= h.min());
        CHECK(got <= h.max());
    }
    double prev = h.quantile(0);
    for (int k = 1; k <= 1000; ++k) {
        const double v = h.quantile(k / 1000.0);
        CHECK(v >= prev);
        prev = v;
    }
}

std::string json_of(const StatRegistry& r) {
    std::ostringstream os;
    r.write_json(os);
    return os.str();
}

}   // namespace

TEST_CASE("counter and scalar basics", "[stats]") {
    Counter c;
    CHECK(c.value() == 0);
    c.inc();
    c.inc(41);
    CHECK(c.value() == 42);
    Scalar s;
    CHECK(s.value() == 0);
    s.set(1.5);
    s.add(2.25);
    CHECK(s.value() == 3.75);
}

TEST_CASE("a registry finds a counter's and a scalar's index and name from its address", "[stats][registry]") {
    StatRegistry r;
    // More than a chunk of each (stat_store.hpp), so that addresses in the
    // second chunk are found too.
    std::vector<Counter*> cs;
    std::vector<Scalar*> ss;
    for (int i = 0; i < 1100; ++i) {
        cs.push_back(&r.counter("n" + std::to_string(i) + ".c", "", ""));
        ss.push_back(&r.scalar("n" + std::to_string(i) + ".s", "us", "", Scalar::Kind::Sum));
    }
    for (int i : {0, 1, 511, 512, 513, 1023, 1024, 1099}) {
        CHECK(r.info(*cs[i]).name == "n" + std::to_string(i) + ".c");
        CHECK(r.info(*ss[i]).name == "n" + std::to_string(i) + ".s");
        CHECK(r.info(*ss[i]).unit() == "us");
    }
    // Packed: a value is its 8 bytes, the next registered beside it.
    CHECK(reinterpret_cast<char*>(cs[1]) - reinterpret_cast<char*>(cs[0]) == 8);
    CHECK(reinterpret_cast<char*>(ss[7]) - reinterpret_cast<char*>(ss[6]) == 8);
    // A value not registered here is refused, not taken for another.
    Counter alone;
    CHECK_THROWS_AS(r.info(alone), std::logic_error);
    StatRegistry other;
    Counter& theirs = other.counter("x.c", "", "");
    CHECK_THROWS_AS(r.info(theirs), std::logic_error);
    // Counts held for a region find their counter by its address.
    r.will_read();
    r.count_at(*cs[700], 3, 10, 5);
    r.flush_timed();
    CHECK(cs[700]->value() == 3);
}

TEST_CASE("histogram with no samples", "[stats][histogram]") {
    Histogram h;
    CHECK(h.count() == 0);
    CHECK(h.sum() == 0);
    CHECK(h.mean() == 0);
    CHECK(h.min() == 0);
    CHECK(h.max() == 0);
    CHECK(h.quantile(0) == 0);
    CHECK(h.quantile(0.5) == 0);
    CHECK(h.quantile(1) == 0);
    CHECK(h.clamped() == 0);
}

TEST_CASE("histogram with a single sample is exact", "[stats][histogram]") {
    for (double v : {0.0, 1e-300, 5e-324, 0.1, 1.0, 3.7, 123456.789, 1e300}) {
        Histogram h;
        h.add(v);
        INFO("v = " << v);
        CHECK(h.count() == 1);
        CHECK(h.min() == v);
        CHECK(h.max() == v);
        CHECK(h.mean() == v);
        for (double q : {0.0, 0.01, 0.5, 0.99, 1.0}) CHECK(h.quantile(q) == v);
    }
}

TEST_CASE("histogram min, max and mean are exact", "[stats][histogram]") {
    Histogram h;
    const std::vector<double> xs = {3.25, 1e-9, 7.0, 1e12, 0.333, 42.0, 5.5};
    double sum = 0;
    for (double x : xs) {
        h.add(x);
        sum += x;
    }
    CHECK(h.count() == xs.size());
    CHECK(h.min() == 1e-9);
    CHECK(h.max() == 1e12);
    CHECK(h.sum() == sum);
    CHECK(h.mean() == sum / xs.size());
    CHECK(h.quantile(0) == 1e-9);
    CHECK(h.quantile(1) == 1e12);
    // Rank 4 of 7 is 5.5.
    CHECK(h.quantile(0.5) == Approx(5.5).epsilon(0.008));
}

TEST_CASE("histogram zeros", "[stats][histogram]") {
    Histogram h;
    for (int i = 0; i < 60; ++i) h.add(0.0);
    for (int i = 1; i <= 40; ++i) h.add(i);
    CHECK(h.count() == 100);
    CHECK(h.min() == 0);
    CHECK(h.max() == 40);
    CHECK(h.quantile(0.5) == 0);
    CHECK(h.quantile(0.6) == 0);
    CHECK(h.quantile(0.61) == Approx(1).epsilon(0.008));
    CHECK(h.quantile(0.99) == Approx(39).epsilon(0.008));
    CHECK(h.mean() == Approx(820.0 / 100));

    Histogram all_zero;
    for (int i = 0; i < 10; ++i) all_zero.add(0.0);
    CHECK(all_zero.quantile(0.5) == 0);
    CHECK(all_zero.quantile(0.99) == 0);
    CHECK(all_zero.mean() == 0);
}

TEST_CASE("histogram clamps negative and NaN samples to zero", "[stats][histogram]") {
    Histogram h;
    h.add(-5);
    h.add(std::numeric_limits<double>::quiet_NaN());
    h.add(2);
    CHECK(h.clamped() == 2);
    CHECK(h.count() == 3);
    CHECK(h.min() == 0);
    CHECK(h.max() == 2);
    CHECK(h.sum() == 2);
    CHECK(std::isfinite(h.quantile(0.5)));
}

TEST_CASE("histogram samples within one bucket stay within [min, max]", "[stats][histogram]") {
    Histogram h;
    for (int i = 0; i < 1000; ++i) h.add(1000.0 + i * 1e-6);
    for (double q : {0.01, 0.3, 0.5, 0.9, 0.99}) {
        CHECK(h.quantile(q) >= h.min());
        CHECK(h.quantile(q) <= h.max());
    }
}

TEST_CASE("histogram quantiles are within 1% for smooth distributions", "[stats][histogram]") {
    check_quantiles("uniform(0, 1000)", std::uniform_real_distribution<double>(0, 1000), 1);
    check_quantiles("exponential(mean 50)", std::exponential_distribution<double>(1.0 / 50), 2);
    check_quantiles("lognormal(3, 1)", std::lognormal_distribution<double>(3, 1), 3);
    check_quantiles("lognormal(-20, 3)", std::lognormal_distribution<double>(-20, 3), 4);
    auto normal = [d = std::normal_distribution<double>(100, 15)](std::mt19937_64& g) mutable {
        return std::fabs(d(g));
    };
    check_quantiles("|normal(100, 15)|", normal, 5);
    check_quantiles("uniform(1e6, 1.01e6)", std::uniform_real_distribution<double>(1e6, 1.01e6), 6);
}

TEST_CASE("histogram quantiles on whole numbers", "[stats][histogram]") {
    Histogram h;
    for (int i = 1; i <= 1000; ++i) h.add(i);
    CHECK(h.quantile(0.5) == Approx(500).epsilon(0.008));
    CHECK(h.quantile(0.99) == Approx(990).epsilon(0.008));
    CHECK(h.quantile(0.001) == 1);
    CHECK(h.quantile(-1) == 1);
    CHECK(h.quantile(2) == 1000);
}

TEST_CASE("histogram quantile pairs, found in one pass, are the two quantiles", "[stats][histogram]") {
    // Samples spread over many buckets, with zeros, a single sample, none.
    std::mt19937 rng(11);
    std::lognormal_distribution<double> dist(3.0, 2.0);
    const std::vector<double> qs = {0, 0.001, 0.25, 0.5, 0.9, 0.99, 0.999, 1};
    for (int n : {0, 1, 2, 7, 100, 5000}) {
        for (int zeros : {0, 3}) {
            Histogram h;
            for (int i = 0; i < zeros; ++i) h.add(0);
            for (int i = 0; i < n; ++i) h.add(dist(rng));
            for (double a : qs)
                for (double b : qs) {
                    INFO("n " << n << " zeros " << zeros << " qa " << a << " qb " << b);
                    const auto [va, vb] = h.quantile_pair(a, b);
                    CHECK(va == h.quantile(a));
                    CHECK(vb == h.quantile(b));
                }
        }
    }
    // And quantile() itself, against a histogram's exact ranks on whole numbers.
    Histogram h;
    for (int i = 1; i <= 1000; ++i) h.add(i);
    const auto [p50, p99] = h.quantile_pair(0.5, 0.99);
    CHECK(p50 == Approx(500).epsilon(0.008));
    CHECK(p99 == Approx(990).epsilon(0.008));
}

TEST_CASE("histogram buckets add up to the count, in order, within [min, max]", "[stats][histogram]") {
    Histogram empty;
    CHECK(empty.buckets().empty());
    Histogram h;
    h.add(0);
    h.add(0);
    for (int i = 1; i <= 1000; ++i) h.add(i * 0.37);
    const auto b = h.buckets();
    REQUIRE(!b.empty());
    CHECK(b[0].lo == 0);
    CHECK(b[0].hi == 0);
    CHECK(b[0].count == 2);
    std::uint64_t total = 0;
    double prev_hi = 0;
    for (const auto& k : b) {
        total += k.count;
        CHECK(k.count > 0);
        CHECK(k.lo >= h.min());
        CHECK(k.hi <= h.max());
        CHECK(k.lo <= k.hi);
        CHECK(k.lo >= prev_hi);
        // At most 1/128 of the value wide.
        CHECK(k.hi - k.lo <= k.hi / 128 + 1e-12);
        prev_hi = k.hi;
    }
    CHECK(total == h.count());
    CHECK(b.back().hi == h.max());
}

TEST_CASE("registry lists its histograms sorted by name", "[stats][registry]") {
    StatRegistry r;
    r.counter("a.count", "", "a counter");
    Histogram& z = r.histogram("node1.dma.latency", "us", "latency");
    Histogram& a = r.histogram("node0.smmu.walk", "ns", "walk");
    const auto all = r.histograms();
    REQUIRE(all.size() == 2);
    CHECK(all[0] == &a);
    CHECK(all[1] == &z);
    CHECK(StatRegistry().histograms().empty());
}

TEST_CASE("registry outputs list every name in the order of its string, whatever its dots", "[stats][registry]") {
    // The outputs' order is sorted a first component at a time
    // (StatRegistry::sorted_refs): names with characters below '.', names
    // without a dot, names that begin others, empty components, registered
    // in a random order of kinds, must come out as std::sort orders their
    // strings.
    std::vector<std::string> names = {"a",
                                      "a.x",
                                      "a-b.y",
                                      "ab",
                                      "a.b",
                                      "a.b.c",
                                      "a.b-c",
                                      "a.b.c.d",
                                      "a.b0",
                                      ".lead",
                                      "..two",
                                      "a..b",
                                      "a.",
                                      "b.a",
                                      "b",
                                      "b!.z",
                                      "b.a.a",
                                      "b-",
                                      "x1y0z0f0.dma.ch0.bytes",
                                      "x1y0z0f0.dma.bytes",
                                      "x1y0z0f0.dma-x.bytes",
                                      "x1y0z0f0.dmb",
                                      "x1y0z0f0",
                                      "x10y0z0f0.dma.bytes",
                                      "x1y0z0f0.dma.ch0",
                                      "x1y0z0f0.dma.ch",
                                      "x1y0z0f0.dma.ch0.a.b",
                                      "z",
                                      "\x7f.a",
                                      "\xc3\xa9.b"};
    for (int n = 0; n < 300; ++n)
        names.push_back("n" + std::to_string(n % 37) + ".m" + std::to_string(n % 5) + "." + std::to_string(n));
    std::mt19937 rng(7);
    std::shuffle(names.begin(), names.end(), rng);
    StatRegistry r;
    for (std::size_t i = 0; i < names.size(); ++i) {
        if (i % 3 == 0) r.counter(names[i], "", "");
        else if (i % 3 == 1) r.scalar(names[i], "", "", Scalar::Kind::Sum);
        else r.histogram(names[i], "", "");
    }
    std::vector<std::string> want = names;
    std::sort(want.begin(), want.end());
    std::vector<std::string> got;
    std::istringstream text([&] {
        std::ostringstream os;
        r.write_text(os);
        return os.str();
    }());
    for (std::string line; std::getline(text, line);) got.push_back(line.substr(0, line.find(' ')));
    CHECK(got == want);
}

TEST_CASE("registry registers and finds statistics", "[stats][registry]") {
    StatRegistry r;
    Counter& c = r.counter("node1.dma.bytes", "B", "bytes moved");
    Scalar& s = r.scalar("node1.link.util", "", "utilisation", Scalar::Kind::Sum);
    Histogram& h = r.histogram("node1.dma.latency", "us", "latency");
    CHECK(r.info(c).name == "node1.dma.bytes");
    CHECK(r.info(c).unit() == "B");
    CHECK(r.info(c).help() == "bytes moved");
    CHECK(r.info(s).name == "node1.link.util");
    CHECK(h.info.unit() == "us");
    c.inc(5);
    CHECK(r.find_counter("node1.dma.bytes") == &c);
    CHECK(r.find_counter("node1.dma.bytes")->value() == 5);
    CHECK(r.find_scalar("node1.link.util") == &s);
    CHECK(r.find_histogram("node1.dma.latency") == &h);
    // Wrong kind or unknown name.
    CHECK(r.find_scalar("node1.dma.bytes") == nullptr);
    CHECK(r.find_histogram("node1.dma.bytes") == nullptr);
    CHECK(r.find_counter("node1.link.util") == nullptr);
    CHECK(r.find_counter("nope") == nullptr);
}

TEST_CASE("a statistic's name kept as prefix and last component reads, compares and matches as its string",
          "[stats][registry]") {
    // Names with no dot, a leading or trailing dot, two dots in a row, a
    // long one: each must come back exactly, and compare, end with and
    // equal exactly as its std::string would.
    const std::vector<std::string> names = {"packets_sent",
                                            ".x",
                                            "x.",
                                            "a..b",
                                            "a.b",
                                            "a.b.c",
                                            "a.bc",
                                            "ab.c",
                                            "a",
                                            "",
                                            ".",
                                            "node10.dma.ch3.bytes",
                                            "node1.dma.ch3.bytes",
                                            "node1.dma.ch3.byte",
                                            "node1.dma",
                                            "node1.dma.",
                                            "\xff.z",
                                            std::string(300, 'q') + ".tail",
                                            std::string(250, 'q') + "." + std::string(60, 'r')};
    for (const auto& a : names) {
        const StatName na(a);
        CHECK(na.str() == a);
        CHECK(na.size() == a.size());
        CHECK(na.equals(a));
        for (const auto& b : names) {
            const StatName nb(b);
            const int want = a.compare(b);
            const int got = StatName::compare(na, nb);
            CHECK((want < 0) == (got < 0));
            CHECK((want == 0) == (got == 0));
            CHECK(na.equals(b) == (a == b));
            const bool tail = a.size() >= b.size() && a.compare(a.size() - b.size(), b.size(), b) == 0;
            CHECK(na.ends_with(b) == tail);
        }
    }
}

TEST_CASE("registry finds every one of many statistics by name and no other", "[stats][registry]") {
    // Enough names to grow the index several times, under many prefixes
    // sharing last components, as nodes do.
    StatRegistry r;
    std::vector<Counter*> cs;
    for (int n = 0; n < 300; ++n)
        for (const char* leaf : {"bytes", "packets", "faults"})
            cs.push_back(&r.counter("node" + std::to_string(n) + ".dma." + leaf, "", ""));
    std::size_t i = 0;
    for (int n = 0; n < 300; ++n)
        for (const char* leaf : {"bytes", "packets", "faults"}) {
            const std::string name = "node" + std::to_string(n) + ".dma." + leaf;
            CHECK(r.find_counter(name) == cs[i++]);
            CHECK(r.find_counter(name + "x") == nullptr);
            CHECK(r.find_counter("x" + name) == nullptr);
            CHECK_THROWS_AS(r.scalar(name, "", "", Scalar::Kind::Sum), std::logic_error);
        }
    CHECK(r.find_counter("node300.dma.bytes") == nullptr);
    CHECK(r.count_counters("dma.bytes") == 300);
}

TEST_CASE("registry finds odd names after its index grows, and sums see statistics registered late",
          "[stats][registry]") {
    // The index keeps only references and hashes names again when it grows:
    // a name's hash from its pieces must be its string's (".x" has an empty
    // prefix, "x" none, "x." an empty last component).
    StatRegistry r;
    const std::vector<std::string> odd = {".x", "x", "x.", "a..b", "", ".", "\xff.z"};
    std::vector<Counter*> cs;
    for (const auto& n : odd) cs.push_back(&r.counter(n, "", ""));
    for (std::size_t k = 0; k < cs.size(); ++k) cs[k]->inc(std::uint64_t{1} << k);
    for (int i = 0; i < 3000; ++i)
        r.scalar("grow" + std::to_string(i) + ".s", "", "", Scalar::Kind::Sum);   // several growths
    for (std::size_t k = 0; k < odd.size(); ++k) CHECK(r.find_counter(odd[k]) == cs[k]);
    CHECK(r.find_counter("..x") == nullptr);
    // Sums of scalars in registration order, then one registered after a
    // sum: the next sum includes it.
    double want = 0;
    for (int i = 0; i < 50; ++i) {
        const double v = 1.0 / (i + 3);
        r.scalar("node" + std::to_string(i) + ".link.util", "", "", Scalar::Kind::Sum).set(v);
        want += v;
    }
    CHECK(r.sum_scalars("link.util") == want);   // exact: the same order
    CHECK(r.count_scalars("util") == 50);
    r.scalar("late.link.util", "", "", Scalar::Kind::Sum).set(0.25);
    CHECK(r.sum_scalars("link.util") == want + 0.25);
    CHECK(r.count_scalars("link.util") == 51);
    CHECK(r.sum_counters("x") == 1);   // ".x" only: "x" alone has no "." before it
    // Released, the index is built again by the next sum.
    r.release_sum_indexes();
    r.scalar("later.link.util", "", "", Scalar::Kind::Sum).set(0.5);
    CHECK(r.sum_scalars("link.util") == want + 0.25 + 0.5);
    r.release_sum_indexes();
    CHECK(r.count_scalars("link.util") == 52);
}

TEST_CASE("registry refuses duplicate names", "[stats][registry]") {
    StatRegistry r;
    r.counter("a.b", "", "");
    CHECK_THROWS_AS(r.counter("a.b", "", ""), std::logic_error);
    CHECK_THROWS_AS(r.scalar("a.b", "", "", Scalar::Kind::Sum), std::logic_error);
    CHECK_THROWS_AS(r.histogram("a.b", "", ""), std::logic_error);
    r.histogram("a.h", "", "");
    CHECK_THROWS_AS(r.counter("a.h", "", ""), std::logic_error);
    CHECK_THROWS_AS(r.scalar("units", "", "", Scalar::Kind::Sum), std::logic_error);   // reserved for write_json
    CHECK(r.find_counter("a.b") != nullptr);
}

TEST_CASE("registry references stay valid", "[stats][registry]") {
    StatRegistry r;
    Counter& first = r.counter("c.0", "", "");
    Histogram& hfirst = r.histogram("h.0", "", "");
    for (int i = 1; i < 5000; ++i) {
        r.counter("c." + std::to_string(i), "", "");
        r.histogram("h." + std::to_string(i), "", "");
    }
    first.inc(7);
    hfirst.add(3);
    CHECK(r.find_counter("c.0") == &first);
    CHECK(r.find_counter("c.0")->value() == 7);
    CHECK(r.find_histogram("h.0")->count() == 1);
    CHECK(r.find_counter("c.4999") != nullptr);
}

TEST_CASE("registry sums counters by suffix", "[stats][registry]") {
    StatRegistry r;
    r.counter("node0.nic.packets_sent", "", "").inc(3);
    r.counter("node1.nic.packets_sent", "", "").inc(4);
    r.counter("node1.nic.xpackets_sent", "", "").inc(100);   // not a "." + suffix match
    r.counter("packets_sent", "", "").inc(1000);   // no leading dot
    r.counter("node1.nic.packets_sent_total", "", "").inc(10000);
    r.scalar("node2.packets_sent", "", "", Scalar::Kind::Sum).set(1e6);   // not a counter
    CHECK(r.sum_counters("packets_sent") == 7);
    CHECK(r.sum_counters("nic.packets_sent") == 7);
    CHECK(r.sum_counters("nothing") == 0);
}

TEST_CASE("registry JSON is valid, sorted and complete", "[stats][registry][json]") {
    StatRegistry r;
    r.counter("b.count", "pkt", "").inc(18446744073709551615ull);
    r.scalar("a.ratio", "", "", Scalar::Kind::Sum).set(0.1);
    r.scalar("c.bad", "x", "", Scalar::Kind::Sum).set(std::numeric_limits<double>::quiet_NaN());
    r.scalar("c.inf", "", "", Scalar::Kind::Sum).set(std::numeric_limits<double>::infinity());
    r.scalar("d.big", "B/s", "", Scalar::Kind::Sum).set(1.2345678901234567e300);
    r.scalar("e.third", "", "", Scalar::Kind::Sum).set(1.0 / 3);
    Histogram& h = r.histogram("f.lat", "us", "");
    for (int i = 1; i <= 100; ++i) h.add(i);
    r.histogram("g.empty", "ns", "");
    r.counter("z\"quote\\back", "", "");

    const std::string text = json_of(r);
    INFO(text);
    JVal doc;
    REQUIRE_NOTHROW(doc = parse_json(text));
    REQUIRE(doc.type == JVal::Obj);

    // Sorted by name, then "units".
    std::vector<std::string> keys;
    for (const auto& kv : doc.obj) keys.push_back(kv.first);
    const std::vector<std::string> want = {"a.ratio", "b.count", "c.bad",   "c.inf",          "d.big",
                                           "e.third", "f.lat",   "g.empty", "z\"quote\\back", "units"};
    CHECK(keys == want);

    CHECK(doc.get("b.count")->text == "18446744073709551615");
    CHECK(doc.get("a.ratio")->text == "0.1");
    // NaN is no value (a Level scalar over a region): null, never a 0
    // that reads as a figure; infinity has no JSON number either.
    CHECK(doc.get("c.bad")->type == JVal::Null);
    CHECK(doc.get("c.inf")->text == "0");
    CHECK(doc.get("d.big")->num == 1.2345678901234567e300);
    CHECK(doc.get("e.third")->num == 1.0 / 3);   // round-trips exactly
    CHECK(doc.get("z\"quote\\back")->text == "0");

    const JVal* lat = doc.get("f.lat");
    REQUIRE(lat->type == JVal::Obj);
    std::vector<std::string> hkeys;
    for (const auto& kv : lat->obj) hkeys.push_back(kv.first);
    CHECK(hkeys == std::vector<std::string>{"count", "mean", "min", "max", "p50", "p99", "unit"});
    CHECK(lat->get("count")->text == "100");
    CHECK(lat->get("mean")->num == 50.5);
    CHECK(lat->get("min")->num == 1);
    CHECK(lat->get("max")->num == 100);
    CHECK(lat->get("p50")->num == Approx(50).epsilon(0.008));
    CHECK(lat->get("p99")->num == Approx(99).epsilon(0.008));
    CHECK(lat->get("unit")->text == "us");

    const JVal* empty = doc.get("g.empty");
    REQUIRE(empty->type == JVal::Obj);
    CHECK(empty->get("count")->text == "0");
    CHECK(empty->get("p99")->text == "0");
    CHECK(empty->get("unit")->text == "ns");

    const JVal* units = doc.get("units");
    REQUIRE(units->type == JVal::Obj);
    CHECK(units->obj.size() == 9);
    CHECK(units->get("b.count")->text == "pkt");
    CHECK(units->get("a.ratio")->text == "");
    CHECK(units->get("d.big")->text == "B/s");
    CHECK(units->get("f.lat")->text == "us");

    // Readable: one statistic per line.
    CHECK(text.find("\n  \"b.count\": 18446744073709551615,\n") != std::string::npos);
}

TEST_CASE("registry JSON of an empty registry", "[stats][registry][json]") {
    StatRegistry r;
    const std::string text = json_of(r);
    JVal doc;
    REQUIRE_NOTHROW(doc = parse_json(text));
    REQUIRE(doc.type == JVal::Obj);
    REQUIRE(doc.obj.size() == 1);
    CHECK(doc.get("units")->obj.empty());
}

TEST_CASE("json test parser rejects invalid JSON", "[stats][json]") {
    CHECK_THROWS(parse_json("{\"a\": 1,}"));
    CHECK_THROWS(parse_json("{\"a\": nan}"));
    CHECK_THROWS(parse_json("{\"a\": 1, \"a\": 2}"));
    CHECK_THROWS(parse_json("[1, 2"));
    CHECK_THROWS(parse_json("\"a\nb\""));
    CHECK_NOTHROW(parse_json("{\"a\": [1, -2.5e-3, \"x\\u0001\", true, null]}"));
}

TEST_CASE("registry text table", "[stats][registry][text]") {
    StatRegistry r;
    r.counter("node1.dma.bytes", "B", "").inc(4096);
    r.scalar("node1.util", "", "", Scalar::Kind::Sum).set(0.25);
    Histogram& h = r.histogram("node1.dma.latency", "us", "");
    h.add(1);
    h.add(2);
    h.add(3);
    std::ostringstream os;
    r.write_text(os);
    const std::string text = os.str();
    INFO(text);

    std::vector<std::string> lines;
    std::istringstream is(text);
    for (std::string l; std::getline(is, l);) lines.push_back(l);
    REQUIRE(lines.size() == 3);
    // Sorted by name.
    CHECK(lines[0].rfind("node1.dma.bytes ", 0) == 0);
    CHECK(lines[1].rfind("node1.dma.latency ", 0) == 0);
    CHECK(lines[2].rfind("node1.util ", 0) == 0);
    // Values start in one column.
    const std::size_t col = lines[0].find("4096");
    REQUIRE(col != std::string::npos);
    CHECK(lines[1].find("count=3") == col);
    CHECK(lines[2].find("0.25") == col);
    CHECK(col == std::string("node1.dma.latency").size() + 2);
    // Histogram details and units, units in one column.
    CHECK(lines[1].find("mean=2") != std::string::npos);
    CHECK(lines[1].find("min=1") != std::string::npos);
    CHECK(lines[1].find("max=3") != std::string::npos);
    CHECK(lines[1].find("p50=") != std::string::npos);
    CHECK(lines[1].find("p99=3") != std::string::npos);
    CHECK(lines[0].size() >= 1);
    CHECK(lines[0].substr(lines[0].size() - 1) == "B");
    CHECK(lines[1].substr(lines[1].size() - 2) == "us");
    CHECK(lines[0].size() - 1 == lines[1].size() - 2);
}

TEST_CASE("registry text table: each statistic's description in one column after the units, gem5's # column",
          "[stats][registry][text]") {
    StatRegistry r;
    r.counter("node1.dma.bytes", "B", "bytes moved").inc(4096);
    r.scalar("node1.util", "", "utilisation\nof the link", Scalar::Kind::Sum).set(0.25);
    r.histogram("node1.dma.latency", "us", "latency of a transfer").add(2);
    r.counter("node1.dma.quiet", "", "");   // registered without help: no description
    std::ostringstream os;
    r.write_text(os);
    INFO(os.str());
    std::vector<std::string> lines;
    std::istringstream is(os.str());
    for (std::string l; std::getline(is, l);) lines.push_back(l);
    REQUIRE(lines.size() == 4);
    // Sorted by name: bytes, latency, quiet, util.
    const std::size_t col = lines[0].find("# ");
    REQUIRE(col != std::string::npos);
    CHECK(lines[0].substr(col) == "# bytes moved");
    CHECK(lines[1].find("# ") == col);
    CHECK(lines[1].substr(col) == "# latency of a transfer");
    CHECK(lines[2].find('#') == std::string::npos);
    CHECK(lines[2].back() != ' ');
    // A help text's line break stays on the statistic's line.
    CHECK(lines[3].find("# ") == col);
    CHECK(lines[3].substr(col) == "# utilisation of the link");
    // The units keep their column, before the descriptions'.
    CHECK(lines[0].find(" B ") == lines[1].find(" us "));
}

TEST_CASE("histogram counts stay exact as they outgrow one, two and four bytes", "[stats][histogram]") {
    // Bucket counts start one byte wide and widen chunk by chunk: what is
    // read back is the count at every width, next to small counts in the
    // same chunk and in other chunks.
    auto count_near = [](const Histogram& h, double v) {
        for (const auto& b : h.buckets())
            if (b.lo <= v && v <= b.hi) return b.count;
        return std::uint64_t{0};
    };
    Histogram h;
    h.add(100.0);   // a neighbour in the same chunk (bucket keys 128 per octave, 16 a chunk)
    h.add(5000.0);   // and one in another chunk
    for (std::uint64_t n = 1; n <= 70000; ++n) {
        h.add(101.0);
        if (n == 255 || n == 256 || n == 257 || n == 65535 || n == 65536 || n == 65537 || n == 70000) {
            INFO("n = " << n);
            CHECK(count_near(h, 101.0) == n);
            CHECK(count_near(h, 100.0) == 1);
            CHECK(count_near(h, 5000.0) == 1);
            CHECK(h.count() == n + 2);
        }
    }
    // Doubling by merges past 2^32 and 2^33 (too many samples to add).
    Histogram big = h;
    std::uint64_t want = 70000;
    for (int i = 0; i < 17; ++i) {
        const Histogram copy = big;
        big.merge(copy);
        want *= 2;
    }
    CHECK(want > (std::uint64_t{1} << 33));
    CHECK(count_near(big, 101.0) == want);
    CHECK(count_near(big, 100.0) == (std::uint64_t{1} << 17));
    CHECK(count_near(big, 5000.0) == (std::uint64_t{1} << 17));
    CHECK(big.count() == (70000 + 2) * (std::uint64_t{1} << 17));
    std::uint64_t total = 0;
    for (const auto& b : big.buckets()) total += b.count;
    CHECK(total == big.count());
    // The same distribution added in another order (small counts merged into
    // wide chunks and wide counts into narrow ones) reads the same.
    Histogram narrow;
    narrow.add(100.0);
    narrow.merge(big);
    Histogram wide = big;
    Histogram one;
    one.add(100.0);
    wide.merge(one);
    CHECK(narrow.buckets().size() == wide.buckets().size());
    CHECK(count_near(narrow, 100.0) == count_near(wide, 100.0));
    CHECK(count_near(narrow, 101.0) == want);
    CHECK(narrow.quantile_pair(0.5, 0.99) == wide.quantile_pair(0.5, 0.99));
}

TEST_CASE("merging histograms gives the distribution of all their samples", "[stats]") {
    std::mt19937_64 rng(7);
    std::lognormal_distribution<double> d(2.0, 1.0);
    Histogram a, b, both;
    std::vector<double> all;
    for (int i = 0; i < 20000; ++i) {
        const double v = d(rng) * (i % 3 == 0 ? 1000.0 : 1.0);   // b's samples span other decades
        (i % 2 ? a : b).add(v);
        both.add(v);
        all.push_back(v);
    }
    a.add(0.0);
    both.add(0.0);
    Histogram m;
    m.merge(a);
    m.merge(b);
    CHECK(m.count() == both.count());
    CHECK(m.min() == both.min());
    CHECK(m.max() == both.max());
    CHECK(m.sum() == Approx(both.sum()));
    for (double q : {0.01, 0.25, 0.5, 0.9, 0.99}) {
        INFO("q = " << q);
        CHECK(m.quantile(q) == both.quantile(q));
    }
    StatRegistry reg;
    reg.histogram("n0.x.lat", "us", "").add(1.0);
    reg.histogram("n1.x.lat", "us", "").add(3.0);
    reg.histogram("n1.x.other", "us", "").add(100.0);
    const Histogram r = reg.merge_histograms("lat");
    CHECK(r.count() == 2);
    CHECK(r.max() == 3.0);
}

TEST_CASE("statistics declared for parts made later sum to 0 until made, then to their values", "[stats]") {
    StatRegistry reg;
    reg.declare_counter("smmu.cbN.translated");
    reg.declare_counter("smmu.cbN.translated");   // again: nothing more
    reg.declare_histogram("smmu.cbN.stall_time");
    CHECK(reg.require_sum_counters("translated") == 0);
    CHECK(reg.require_sum_counters("cbN.translated") == 0);
    CHECK(reg.require_merge_histograms("stall_time").count() == 0);
    // Only whole components of a declared name, and only of its kind.
    CHECK_THROWS_AS(reg.require_sum_counters("lated"), std::logic_error);
    CHECK_THROWS_AS(reg.require_sum_counters("stall_time"), std::logic_error);
    CHECK_THROWS_AS(reg.require_merge_histograms("translated"), std::logic_error);
    CHECK_THROWS_AS(reg.require_sum_scalars("translated"), std::logic_error);
    // A declared name is not a statistic: nothing to find or to print.
    CHECK(reg.find_counter("smmu.cbN.translated") == nullptr);
    std::ostringstream text;
    reg.write_text(text);
    CHECK(text.str().find("cbN") == std::string::npos);
    reg.counter("node0.smmu.cb2.translated", "", "t").inc(5);
    CHECK(reg.require_sum_counters("translated") == 5);
}

TEST_CASE("require_* sums refuse a suffix that matches no statistic instead of reading 0", "[stats]") {
    StatRegistry reg;
    reg.counter("node0.dma.parks", "", "parks").inc(3);
    reg.counter("node1.dma.parks", "", "parks").inc(4);
    reg.scalar("node0.cpu.cores_busy_time", "us", "cpu", Scalar::Kind::Sum).add(2.5);
    reg.scalar("node0.dram.busy_time", "us", "dram", Scalar::Kind::Sum).add(7.0);
    reg.histogram("node0.smmu_driver.service_time", "us", "service").add(1.0);

    CHECK(reg.count_counters("dma.parks") == 2);
    CHECK(reg.require_sum_counters("dma.parks") == 7);
    CHECK(reg.require_sum_scalars("cpu.cores_busy_time") == 2.5);
    CHECK(reg.require_merge_histograms("smmu_driver.service_time").count() == 1);

    // The plain sums read 0 for a name nobody registered; the require_ forms throw.
    CHECK(reg.sum_counters("dma.nacks_sent") == 0);
    CHECK_THROWS_AS(reg.require_sum_counters("dma.nacks_sent"), std::logic_error);
    CHECK_THROWS_AS(reg.require_sum_scalars("cpu.busy_time"), std::logic_error);
    CHECK_THROWS_AS(reg.require_merge_histograms("service_time_us"), std::logic_error);
    // A suffix matches whole name components only, and only statistics of its kind.
    CHECK_THROWS_AS(reg.require_sum_scalars("res_busy_time"), std::logic_error);
    CHECK_THROWS_AS(reg.require_sum_counters("cpu.cores_busy_time"), std::logic_error);
    try {
        reg.require_sum_counters("dma.nacks_sent");
    } catch (const std::logic_error& e) {
        CHECK(std::string(e.what()).find("dma.nacks_sent") != std::string::npos);
    }
}

TEST_CASE("stats.json writes every name escaped as json_string would, odd names included", "[stats]") {
    StatRegistry r;
    const std::vector<std::string> names = {"plain",     "node0.dma.sent", ".leading",  "trailing.",   "a..b",
                                            "q\"uote.x", "back\\slash.y",  "ctl\x01.z", "pre.fix\ttab"};
    for (const std::string& n : names) r.counter(n, "B", "h").inc(3);
    const std::string js = json_of(r);
    for (const std::string& n : names) {
        INFO(n);
        CHECK(js.find("  " + vrdmasim::json_string(n) + ": 3,\n") != std::string::npos);
        CHECK(js.find("    " + vrdmasim::json_string(n) + ": \"B\"") != std::string::npos);
    }
    // Written twice (once per output): the same order each time.
    std::ostringstream a, b;
    r.write_text(a);
    r.write_text(b);
    CHECK(a.str() == b.str());
    r.counter("aaa.first", "", "h");   // registered after: sorted in
    std::ostringstream c;
    r.write_text(c);
    // After ".leading" ('.' sorts before 'a'), before "back\\slash.y".
    const std::size_t at = c.str().find("aaa.first");
    REQUIRE(at != std::string::npos);
    CHECK(c.str().find(".leading") < at);
    CHECK(at < c.str().find("back\\slash.y"));
}

// ---------------------------------------------------------------- Regions

TEST_CASE("a region's statistics are what happened between its two ends", "[stats][window]") {
    StatRegistry r;
    Counter& c = r.counter("node0.dma.packets", "", "packets");
    Scalar& busy = r.scalar("node0.link.busy_time", "us", "busy", Scalar::Kind::Sum);
    Scalar& peak = r.scalar("node0.rdma.pinned_bytes_peak", "B", "peak", Scalar::Kind::Level);
    Histogram& h = r.histogram("workload.latency", "us", "latency");
    c.inc(10);
    busy.add(5);
    peak.set(4096);
    h.add(100);   // a cold sample, before the region
    h.add(0.5);
    r.begin_window(100);
    CHECK(r.window_begun());
    CHECK_FALSE(r.window_ended());
    c.inc(3);
    busy.add(2.5);
    peak.set(8192);
    h.add(2);
    h.add(3);
    // Registered during the region: it starts at zero.
    Counter& late = r.counter("node1.dma.packets", "", "packets");
    late.inc(7);
    Histogram& late_h = r.histogram("workload.latency_hops2", "us", "by hops");
    late_h.add(9);
    r.end_window(200);
    // After the region: not in it.
    c.inc(1000);
    busy.add(1000);
    h.add(5000);
    Counter& after = r.counter("node2.dma.packets", "", "packets");
    after.inc(5);

    const StatRegistry w = r.window();
    CHECK(w.find_counter("node0.dma.packets")->value() == 3);
    CHECK(w.find_counter("node1.dma.packets")->value() == 7);
    CHECK(w.find_counter("node2.dma.packets")->value() == 0);
    CHECK(w.find_scalar("node0.link.busy_time")->value() == 2.5);
    CHECK(std::isnan(w.find_scalar("node0.rdma.pinned_bytes_peak")->value()));
    const Histogram& wh = *w.find_histogram("workload.latency");
    CHECK(wh.count() == 2);
    CHECK(wh.min() == 2);   // exact, not a bucket's bound
    CHECK(wh.max() == 3);
    CHECK(wh.sum() == 5);
    CHECK(w.find_histogram("workload.latency_hops2")->count() == 1);
    CHECK(w.sum_counters("packets") == 10);
    // The registry itself still holds the whole run.
    CHECK(c.value() == 1013);
    CHECK(h.count() == 5);
    CHECK(h.min() == 0.5);
    CHECK(h.max() == 5000);
    CHECK(h.sum() == Approx(100 + 0.5 + 2 + 3 + 5000));
    CHECK(late_h.count() == 1);
    // Units and help carry over; a Level's missing value is null in JSON.
    CHECK(w.info(*w.find_scalar("node0.link.busy_time")).unit() == "us");
    std::ostringstream js;
    w.write_json(js);
    CHECK(js.str().find("\"node0.rdma.pinned_bytes_peak\": null") != std::string::npos);
    CHECK(js.str().find("\"node0.link.busy_time\": 2.5") != std::string::npos);
}

TEST_CASE("a spread amount counts in a region for the part of its interval inside it", "[stats][window]") {
    StatRegistry r;
    Spread& in = r.spread("node0.dma.payload_in_pd1", "B", "payload");
    CHECK_THROWS_AS(r.begin_window(0), std::logic_error);   // not announced: nothing kept for it
    r.will_read();
    in.add(100, 0, 100, 0);   // [0, 100]: 40 before the region, 50 in it, 10 after
    in.add(30, 10, 20, 10);   // wholly before
    r.begin_window(40);
    in.add(60, 20, 80, 40);   // late: began before the region's start, 40 of it inside
    in.add(8, 50, 50, 50);   // an instant inside
    // Many in flight and done: the pending list is pruned, nothing lost.
    for (std::uint64_t t = 50; t < 60; ++t)
        for (int k = 0; k < 100; ++k) in.add(1, t, t + 1, t);
    r.end_window(90);
    in.add(20, 85, 95, 90);   // late again: half of it before the region's end
    in.add(500, 95, 200, 95);   // after it
    Spread& born_late = r.spread("node1.dma.payload_in_pd1", "B", "payload");
    born_late.add(10, 80, 100, 95);   // registered after the region: its part inside still counts
    const StatRegistry w = r.window();
    CHECK(w.find_scalar("node0.dma.payload_in_pd1")->value() == Approx(50 + 40 + 8 + 1000 + 10));
    CHECK(w.find_scalar("node1.dma.payload_in_pd1")->value() == Approx(5));
    // The whole run holds every amount.
    CHECK(in.sum().value() == Approx(100 + 30 + 60 + 8 + 1000 + 20 + 500));
    CHECK_THROWS_AS(in.add(1, 5, 4, 5), std::logic_error);
    // Announced after something was added: its readings would miss it.
    StatRegistry late;
    late.spread("a.b", "B", "").add(1, 0, 10, 0);
    CHECK_THROWS_AS(late.will_read(), std::logic_error);
}

// Counts and samples made ahead of the kernel (count_at, sample_at) are
// held while a region is announced and added in the order of their times,
// ties in the order they were made, whenever they are flushed: a
// histogram's mean depends on the order of its samples in its last bits
// (here 1e16 + 1 + 1 is 1e16, 1 + 1 + 1e16 is 1e16 + 2), and how many
// other counts are held sets when a flush happens (a hop's counts in exact
// time order are held once a packet-hop), so that must not move a figure.
TEST_CASE("held samples are added in their times' order, however many other counts were held", "[stats][window]") {
    auto run = [](unsigned others) {
        auto r = std::make_unique<StatRegistry>();
        Histogram& h = r->histogram("lat", "us", "");
        Counter& c = r->counter("hops", "", "");
        r->will_read();
        r->sample_at(h, 1e16, 60, 0);   // made first, due last
        r->sample_at(h, 1, 50, 0);
        r->sample_at(h, 1, 55, 0);
        // The kernel at 56: these fill the list until it is pruned there
        // (with 61 of them), which adds what is due by then.
        for (unsigned k = 0; k < others; ++k) r->count_at(c, 1, 1000, 56);
        r->flush_timed();
        CHECK(c.value() == others);
        return h.mean();
    };
    const double quiet = run(0), busy = run(61);
    CHECK(quiet == busy);
    CHECK(quiet == (1e16 + 2) / 3);   // 1 + 1 + 1e16, in their times' order
}

TEST_CASE("a region's ends come once each, in order", "[stats][window]") {
    StatRegistry r;
    r.counter("a.b", "", "");
    CHECK_THROWS_AS(r.end_window(0), std::logic_error);
    CHECK_THROWS_AS(r.window(), std::logic_error);
    r.begin_window(0);
    CHECK_THROWS_AS(r.begin_window(0), std::logic_error);
    CHECK_THROWS_AS(r.window(), std::logic_error);
    r.end_window(0);
    CHECK_THROWS_AS(r.end_window(0), std::logic_error);
    CHECK(r.window().find_counter("a.b")->value() == 0);
}

// A partitioned run's ranks each hold some statistics; rank 0 merges every
// rank's packed registry (src/sim/parallel/windows.cpp merge_ranks).
TEST_CASE("packed registries merge into the registry one process would have", "[stats]") {
    StatRegistry whole, a, b;
    // Statistics of one rank alone, as a node's or a link's.
    auto fill = [](StatRegistry& r, const std::string& n, std::uint64_t c, double s, double level,
                   const std::vector<double>& h) {
        r.counter(n + ".packets", "", "p").inc(c);
        r.scalar(n + ".busy_time", "us", "b", Scalar::Kind::Sum).add(s);
        r.scalar(n + ".hwm", "flits", "h", Scalar::Kind::Level).set(level);
        Histogram& hist = r.histogram(n + ".queue_delay", "ns", "q");
        for (double v : h) hist.add(v);
    };
    const std::vector<double> h0{0, 1.5, 2.25, 1e6, 3.0}, h1{7.5, 0, 0.001, 42};
    fill(whole, "x0", 3, 1.25, 7, h0);
    fill(whole, "x1", 5, 2.5, 9, h1);
    fill(a, "x0", 3, 1.25, 7, h0);
    fill(b, "x1", 5, 2.5, 9, h1);
    // One every rank has (a workload's log): counters add, levels the larger.
    whole.counter("workload.transfers", "", "t").inc(8);
    a.counter("workload.transfers", "", "t").inc(3);
    b.counter("workload.transfers", "", "t").inc(5);
    whole.histogram("workload.latency", "us", "l").add(2.0);
    a.histogram("workload.latency", "us", "l");
    b.histogram("workload.latency", "us", "l").add(2.0);
    a.merge_packed(b.pack());
    std::ostringstream want, got;
    whole.write_json(want);
    a.write_json(got);
    CHECK(got.str() == want.str());
    // A merge that is not one: bytes cut short are refused, not half-read.
    std::vector<unsigned char> cut = b.pack();
    cut.resize(cut.size() - 3);
    StatRegistry c;
    CHECK_THROWS_AS(c.merge_packed(cut), std::logic_error);
}
