// The trace reader (workloads/trace_reader.*) on traces of 1,024 ranks
// written by scripts/make_traces.py: every event of every rank delivered,
// and memory that does not grow with the trace's length (the events are
// streamed, a chunk per rank at a time, never loaded whole), read as the
// replay reads them: every rank's stream open at once, one event of each
// in turn.
#include <catch2/catch.hpp>

#include <sys/resource.h>
#include <unistd.h>

#include <cstdlib>
#include <iostream>
#include <string>
#include <vector>

#include "src/core/params.hpp"
#include "src/sim/system.hpp"
#include "workloads/trace_reader.hpp"

using namespace vrdmasim;

namespace {

std::string scratch(const std::string& name) {
    return std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") + "/vrdmasim-trace-reader-" +
           std::to_string(::getpid()) + "-" + name;
}

// A solver of `ranks` ranks and `iterations` iterations; its anchor file.
std::string write_solver(unsigned ranks, unsigned iterations) {
    const std::string dir = scratch(std::to_string(iterations));
    const std::string cmd = "/usr/bin/python3 " + std::string(VRDMASIM_SOURCE_DIR) +
                            "/scripts/make_traces.py --only solver --ranks " + std::to_string(ranks) +
                            " --iterations " + std::to_string(iterations) + " --out '" + dir + "' > /dev/null";
    REQUIRE(std::system(cmd.c_str()) == 0);
    return dir + "/solver/solver.otf2";
}

long peak_rss_kib() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

struct Read {
    std::uint64_t events = 0, sends = 0, collectives = 0;
};

// Every rank's stream open, one event of each in turn until all end.
Read read_all(const Config& c, const std::string& anchor) {
    TraceReader reader(c, "trace.file", anchor);
    const TraceSummary summary = reader.check();
    REQUIRE(summary.collectives.size() == 1);
    Read out;
    std::vector<bool> ended(reader.ranks(), false);
    for (unsigned live = reader.ranks(); live > 0;)
        for (unsigned r = 0; r < reader.ranks(); ++r) {
            if (ended[r]) continue;
            TraceEvent e;
            if (!reader.next(r, e)) {
                ended[r] = true;
                --live;
                continue;
            }
            ++out.events;
            out.sends += e.kind == TraceEvent::Kind::Isend;
            out.collectives += e.kind == TraceEvent::Kind::CollectiveEnd;
        }
    return out;
}

}   // namespace

TEST_CASE("trace reader: 2,048 ranks streamed in memory that does not grow with the trace", "[trace]") {
    ParamRegistry reg;
    declare_all_params(reg);
    Config c(reg);
    const unsigned ranks = 2048;
    // Each rank has more than TraceReader::kChunk events in both: the solver
    // records 24 a rank an iteration (make_traces.py: enter and leave of its
    // compute and of six MPI calls, 4 requests posted, 4 completed, the
    // allreduce's begin and end), so both fill every rank's buffer and read
    // it again. The fewest iterations that do (12: 288 events a rank), since
    // writing the traces is most of the case's time.
    constexpr unsigned kShort = 12, kLong = 4 * kShort;
    static_assert(24 * kShort > TraceReader::kChunk, "every rank must fill a chunk");
    const std::string short_trace = write_solver(ranks, kShort), long_trace = write_solver(ranks, kLong);
    const Read a = read_all(c, short_trace);
    const long after_short = peak_rss_kib();
    const Read b = read_all(c, long_trace);
    const long after_long = peak_rss_kib();
    // What the solver does (make_traces.py): per rank and iteration two
    // halo sends and an allreduce.
    CHECK(a.sends == 2ull * ranks * kShort);
    CHECK(a.collectives == 1ull * ranks * kShort);
    CHECK(b.sends == 2ull * ranks * kLong);
    CHECK(b.collectives == 1ull * ranks * kLong);
    CHECK(b.events == 4 * a.events);
    std::cout << "trace reader, 2,048 ranks: " << a.events << " events read with the peak at " << after_short / 1024
              << " MiB, then " << b.events << " events: peak " << after_long / 1024 << " MiB\n";
    // Four times the events, and the peak grows by less than 4 MiB: at
    // most kChunk events buffered a rank and kOpenReaders OTF2 readers
    // open, whatever the trace's length. Loaded whole, the long trace's
    // 1.8 M events more (2.4 M in all) would take some
    // 1.8 M x sizeof(TraceEvent) more, several times that bound.
    CHECK((b.events - a.events) * sizeof(TraceEvent) > 4 * 4 * 1024 * 1024);
    CHECK(after_long - after_short < 4 * 1024);
    std::system(("rm -rf '" + scratch(std::to_string(kShort)) + "' '" + scratch(std::to_string(kLong)) + "'").c_str());
}

TEST_CASE("trace reader: a rank's file closed and opened again goes on at the event it stopped at", "[trace]") {
    // 64 ranks (more than TraceReader::kOpenReaders files open at once),
    // each with several chunks of events (more than TraceReader::kChunk):
    // read one rank at a time (its file stays open), and round robin (the
    // files are closed and reopened, seeking to where each stopped): the
    // same events.
    ParamRegistry reg;
    declare_all_params(reg);
    Config c(reg);
    const unsigned ranks = 64;
    static_assert(TraceReader::kOpenReaders < 64, "the test must close files");
    const std::string anchor = write_solver(ranks, 200);
    auto key = [](const TraceEvent& e) {
        return std::to_string(static_cast<int>(e.kind)) + " " + std::to_string(e.time) + " " + std::to_string(e.peer) +
               " " + std::to_string(e.request) + " " + std::to_string(e.length);
    };
    std::vector<std::vector<std::string>> in_turn(ranks), one_by_one(ranks);
    {
        TraceReader reader(c, "trace.file", anchor);
        for (unsigned r = 0; r < ranks; ++r)
            for (TraceEvent e; reader.next(r, e);) one_by_one[r].push_back(key(e));
    }
    {
        TraceReader reader(c, "trace.file", anchor);
        std::vector<bool> ended(ranks, false);
        for (unsigned live = ranks; live > 0;)
            for (unsigned r = 0; r < ranks; ++r) {
                TraceEvent e;
                if (ended[r]) continue;
                if (reader.next(r, e)) in_turn[r].push_back(key(e));
                else ended[r] = true, --live;
            }
    }
    REQUIRE(one_by_one[0].size() > 2 * TraceReader::kChunk);
    for (unsigned r = 0; r < ranks; ++r) {
        INFO("rank " << r);
        CHECK(in_turn[r] == one_by_one[r]);
    }
    std::system(("rm -rf '" + scratch("200") + "'").c_str());
}

TEST_CASE("trace reader: a trace vrdmasim recorded carries the program's buffers, tests and probes", "[trace]") {
    // tests/fixtures/recorded_ring: workloads/mpi/tests/mpi_ring on 2 ranks,
    // "1024 1", recorded with mpi.record (workloads/mpi/README.md "Record,
    // then replay").
    ParamRegistry reg;
    declare_all_params(reg);
    Config c(reg);
    const std::string anchor = std::string(VRDMASIM_SOURCE_DIR) + "/tests/fixtures/recorded_ring/recorded_ring.otf2";
    TraceReader reader(c, "trace.file", anchor);
    CHECK(reader.recorded_by_vrdmasim());
    CHECK(reader.ticks_per_second() == 1000000000000ull);
    const TraceSummary summary = reader.check();
    CHECK(summary.with_buffers > 0);
    CHECK(summary.without_buffers == 0);
    unsigned sends = 0, receives = 0, tests = 0, probes = 0, collectives = 0;
    for (TraceEvent e; reader.next(0, e);) {
        using K = TraceEvent::Kind;
        if (e.kind == K::Send || e.kind == K::Isend) {
            ++sends;
            CHECK((e.buffers && e.va != 0 && e.length > 0));
        }
        if (e.kind == K::Recv || e.kind == K::Irecv) {
            ++receives;
            CHECK((e.buffers && e.va != 0 && e.capacity >= e.length));
        }
        if (e.kind == K::CollectiveEnd) collectives += e.buffers;
        tests += e.kind == K::RequestTest;
        probes += e.kind == K::Enter && (e.call == TraceEvent::Call::Probe || e.call == TraceEvent::Call::Iprobe);
    }
    CHECK(sends > 0);
    CHECK(receives > 0);
    CHECK(tests > 0);   // Waitany, Testany, Testall
    CHECK(probes > 0);   // rank 0 probes for the any-source messages
    CHECK(collectives >= 7);
}
