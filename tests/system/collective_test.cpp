// The collective workload and the collectives library (library/collectives)
// in the whole system: every collective with each of its algorithms on a
// power-of-two (8) and another (12, 3) number of ranks, eager and
// rendezvous sizes, every byte of every rank's result verified and every
// self-check passed; the messages each algorithm sends (its definition);
// the figures library/collectives/README.md quotes; and what the workload
// refuses. Each run in a child process (SystemC elaborates once per
// process).
#include <catch2/catch.hpp>

#include <sys/resource.h>

#include <map>
#include <sstream>
#include <string>

#include "child_process.hpp"
#include "situation_run.hpp"
#include "src/sim/invariants.hpp"
#include "system_sim.hpp"
#include "workloads/collective_data.hpp"

using namespace vrdmasim;

namespace {

using Figures = std::map<std::string, double>;

Settings ranks(unsigned n) {
    if (n <= 4) return {{"topology.kind", "qfdb"}, {"topology.nodes", std::to_string(n)}};
    return {{"topology.kind", "torus"}, {"topology.x", std::to_string(n / 4)}};
}

// One run: clean (finished, every byte verified, no self-check violated)
// and its figures.
Figures run(unsigned n, const std::string& op, const std::string& algorithm, const std::string& size,
            unsigned iterations = 2, const Settings& extra = {}) {
    Settings s = ranks(n);
    s.insert(s.end(), {{"workload.kind", "collective"},
                       {"collective.op", op},
                       {"collective.root", n > 2 ? "1" : "0"},
                       {"workload.message-size", size},
                       {"workload.iterations", std::to_string(iterations)},
                       {"sim.time-limit", "1s"}});
    if (op == "allreduce" || op == "allgather" || op == "alltoall")
        s.push_back({"collective." + op + "-algorithm", algorithm});
    if (op == "reduce_scatter" || op == "reduce_scatter_block")
        s.push_back({"collective.reduce-scatter-algorithm", algorithm});
    s.insert(s.end(), extra.begin(), extra.end());
    return in_child_figures([&s] {
        std::ostringstream os;
        SystemSim sim(s);
        sim.run();
        const TransferLog& l = sim.log();
        const auto v = sim.self_check();
        if (!v.empty()) std::cerr << describe(v) << "\n";
        // (the payload announced before the run, Workload::planned_bytes,
        // delivered: the self-check planned-bytes, here with the plan known)
        const std::int64_t planned = sim.sys->workloads().at(0)->planned_bytes();
        os << "clean "
           << (sim.finished() && v.empty() && l.errors.value() == 0 && l.mismatches.value() == 0 &&
               l.bytes_verified.value() == l.bytes_delivered.value() &&
               planned == static_cast<std::int64_t>(l.bytes_delivered.value()))
           << "\n";
        os << "planned " << planned << "\n";
        os << "transfers " << l.transfers.value() << "\n";
        os << "verified " << l.bytes_verified.value() << "\n";
        os << "messages " << sim.counter("workload.collective.messages") << "\n";
        os << "reduced " << sim.counter("workload.collective.reduced_bytes") << "\n";
        os << "control " << sim.counter("workload.collective.control_writes") << "\n";
        os << "msg_sends " << sim.stats.sum_counters("msg.eager_sends") + sim.stats.sum_counters("msg.rendezvous_sends")
           << "\n";
        os << "p50 " << sim.stats.find_histogram("workload.collective.latency")->quantile(0.5) << "\n";
        return os.str();
    });
}

void clean(const Figures& f) {
    REQUIRE(f.count("clean"));
    CHECK(f.at("clean") == 1);
}

// Migration: blocks of 64 KiB (results of 512 KiB), so that the buffers run
// over from the compactor's filler block into one that holds no page
// table (tests/fault_situations.hpp) on both transports' layouts.
const char* const kMigrateBlock = "64KiB";

// Every collective with each of its algorithms.
const std::pair<const char*, const char*> kSpecs[] = {{"barrier", "dissemination"},
                                                      {"bcast", "binomial"},
                                                      {"reduce", "binomial"},
                                                      {"allreduce", "recursive-doubling"},
                                                      {"allreduce", "ring"},
                                                      {"allreduce", "rabenseifner"},
                                                      {"allgather", "ring"},
                                                      {"allgather", "recursive-doubling"},
                                                      {"alltoall", "pairwise"},
                                                      {"alltoall", "bruck"},
                                                      {"scan", "recursive-doubling"},
                                                      {"exscan", "recursive-doubling"},
                                                      {"gather", "binomial"},
                                                      {"scatter", "binomial"},
                                                      {"gatherv", "linear"},
                                                      {"scatterv", "linear"},
                                                      {"allgatherv", "ring"},
                                                      {"alltoallv", "pairwise"},
                                                      {"reduce_scatter", "recursive-halving"},
                                                      {"reduce_scatter", "pairwise"},
                                                      {"reduce_scatter_block", "recursive-halving"},
                                                      {"reduce_scatter_block", "pairwise"}};

unsigned log2_ceil(unsigned n) {
    unsigned k = 0;
    while ((1u << k) < n) ++k;
    return k;
}

}   // namespace

TEST_CASE("collectives: every algorithm on 8 and 12 ranks, eager and rendezvous sizes, every byte verified",
          "[collective]") {
    for (unsigned n : {8u, 12u, 3u})
        for (const auto& [op, alg] : kSpecs)
            for (const char* size : {"8B", "24KiB"}) {
                if (std::string(alg) == "recursive-doubling" && std::string(op) == "allgather" && n != 8) continue;
                INFO(op << " " << alg << ", " << n << " ranks, " << size);
                const Figures f = run(n, op, alg, size);
                clean(f);
                CHECK(f.at("transfers") == 2.0 * n);   // each rank's result, each iteration
            }
}

// The payload a run announces before it runs (`run --check`, the
// self-check planned-bytes) is each rank's result, each iteration, each
// call in flight: counted here by hand on 3 ranks of 8 B (root 1), for the
// collectives whose results differ by rank. The v-variants' uneven blocks
// (CollectiveData::uneven: 0, 1/2, 1 or 3/2 of 8 B by (from + 2 to) mod 4):
// gatherv's root holds 8 + 12 + 0 B (from ranks 0, 1, 2); alltoallv's
// ranks 0 + 4 + 8 B, 8 + 12 + 0 B and 0 + 4 + 8 B. reduce_scatter's
// blocks are whole words of uneven(1 word): 0, 8 and 8 B.
TEST_CASE("collectives: the payload announced before the run is every rank's result and is delivered", "[collective]") {
    const std::pair<const char*, std::uint64_t> per_iteration[] = {
        {"barrier", 0},           {"bcast", 3 * 8},  {"reduce", 8},   {"exscan", 2 * 8},
        {"allgather", 3 * 3 * 8}, {"gather", 3 * 8}, {"gatherv", 20}, {"alltoallv", 12 + 20 + 12},
        {"reduce_scatter", 16}};
    for (const auto& [op, bytes] : per_iteration) {
        INFO(op);
        const Figures f = run(3, op, "auto", "8B");
        clean(f);
        CHECK(f.at("planned") == 2.0 * bytes);   // 2 iterations
    }
    // Non-blocking, two allreduces in flight: each rank's result twice.
    const Figures two =
        run(3, "allreduce", "auto", "8B", 2, {{"collective.call", "nonblocking"}, {"collective.outstanding", "2"}});
    clean(two);
    CHECK(two.at("planned") == 2.0 * 2 * 3 * 8);
}

// CollectiveData::total_result_bytes (what the workload announces) sums
// the v-variants' blocks by formula; here rank by rank, as the workload's
// programs size their results (for_rank), for every collective.
TEST_CASE("collectives: the announced results are the sum of every rank's", "[collective]") {
    for (const coll::Op op : {coll::Op::Barrier, coll::Op::Bcast, coll::Op::Reduce, coll::Op::Allreduce, coll::Op::Scan,
                              coll::Op::Exscan, coll::Op::Allgather, coll::Op::Alltoall, coll::Op::Gather,
                              coll::Op::Scatter, coll::Op::Gatherv, coll::Op::Scatterv, coll::Op::Allgatherv,
                              coll::Op::Alltoallv, coll::Op::ReduceScatter, coll::Op::ReduceScatterBlock})
        for (unsigned n : {2u, 3u, 5u, 8u, 12u, 13u})
            for (std::uint64_t bytes : {8u, 24u, 4096u, 24584u}) {
                INFO(coll::name_of(op) << " on " << n << " ranks, " << bytes << " B");
                const CollectiveData d{op, n, n - 1, bytes, {}, {}, {}};
                std::uint64_t sum = 0;
                for (unsigned r = 0; r < n; ++r) sum += d.for_rank(r).result_bytes(r);
                CHECK(d.total_result_bytes() == sum);
            }
}

// Every reduction algorithm with operations and datatypes other than the
// default sum on uint64 (elements of 1, 2, 4, 8 and 16 B, a pair type's
// padding), on a power of two and on a number of ranks that folds, at 48 B
// (3 double-int elements: fewer than the ranks, so some of the ring's and
// Rabenseifner's blocks are empty) and at 24 KiB (rendezvous): each
// rank's result verified against the operation computed directly.
TEST_CASE("collectives: every reduction algorithm with other operations and datatypes, every byte verified",
          "[collective]") {
    const std::pair<const char*, const char*> reductions[] = {
        {"minloc", "double-int"}, {"bxor", "int8"},          {"max", "int32"},   {"prod", "double"},
        {"land", "uint16"},       {"prod", "float-complex"}, {"minloc", "2real"}};
    for (unsigned n : {8u, 3u})
        for (const auto& [op, alg] : kSpecs) {
            if (std::string(op).find("reduce") == std::string::npos &&
                std::string(op).find("scan") == std::string::npos)
                continue;
            for (const auto& [rop, type] : reductions)
                for (const char* size : {"48B", "24KiB"}) {
                    // (rendezvous: two of them, on 8 ranks)
                    const bool rendezvous = std::string(type) == "int8" || std::string(type) == "double-int";
                    if (std::string(size) == "24KiB" && (n == 3 || !rendezvous)) continue;
                    INFO(op << " " << alg << ", " << rop << " on " << type << ", " << n << " ranks, " << size);
                    const Figures f =
                        run(n, op, alg, size, 1, {{"collective.reduce-op", rop}, {"collective.datatype", type}});
                    clean(f);
                    CHECK(f.at("verified") > 0);
                }
        }
}

TEST_CASE("collectives: each algorithm sends the messages its definition says", "[collective]") {
    // Per call, over all ranks (two iterations here).
    const unsigned n = 8, odd = 12, pof2 = 8, rem = odd - pof2;
    auto messages = [](unsigned ranks, const char* op, const char* alg) {
        const Figures f = run(ranks, op, alg, "64B");
        clean(f);
        return f.at("messages") / 2;
    };
    CHECK(messages(n, "barrier", "dissemination") == n * log2_ceil(n));
    CHECK(messages(odd, "barrier", "dissemination") == odd * log2_ceil(odd));
    CHECK(messages(odd, "bcast", "binomial") == odd - 1);
    CHECK(messages(odd, "reduce", "binomial") == odd - 1);
    CHECK(messages(odd, "gather", "binomial") == odd - 1);
    CHECK(messages(odd, "scatter", "binomial") == odd - 1);
    CHECK(messages(n, "allreduce", "recursive-doubling") == n * log2_ceil(n));
    // Not a power of two: rem ranks hand in and get back their vectors.
    CHECK(messages(odd, "allreduce", "recursive-doubling") == pof2 * 3 + 2 * rem);
    CHECK(messages(n, "allreduce", "ring") == 2 * n * (n - 1));
    CHECK(messages(n, "allreduce", "rabenseifner") == 2 * n * log2_ceil(n));
    CHECK(messages(odd, "allreduce", "rabenseifner") == 2 * pof2 * 3 + 2 * rem);
    CHECK(messages(odd, "allgather", "ring") == odd * (odd - 1));
    CHECK(messages(n, "allgather", "recursive-doubling") == n * log2_ceil(n));
    CHECK(messages(odd, "alltoall", "pairwise") == odd * (odd - 1));
    CHECK(messages(odd, "alltoall", "bruck") == odd * log2_ceil(odd));
    // Every rank with every rank XOR 2^k below 12: 12 + 12 + 8 + 8.
    CHECK(messages(odd, "scan", "recursive-doubling") == 40);
    CHECK(messages(odd, "exscan", "recursive-doubling") == 40);
    CHECK(messages(n, "scan", "recursive-doubling") == n * log2_ceil(n));
    // The v-variants' uneven blocks (collective.op's help): rank f's for
    // rank t is (f + 2 t) mod 4 halves of 64 B. Linear gatherv to root 1:
    // a message from every other rank whose block is not empty (ranks 2, 6
    // and 10 have none); scatterv from root 1: every block odd halves, none
    // empty. The ring and pairwise send empty blocks too.
    CHECK(messages(odd, "gatherv", "linear") == odd - 1 - 3);
    CHECK(messages(odd, "scatterv", "linear") == odd - 1);
    CHECK(messages(odd, "allgatherv", "ring") == odd * (odd - 1));
    CHECK(messages(odd, "alltoallv", "pairwise") == odd * (odd - 1));
    // Reduce-scatter of equal blocks: pairwise, n - 1 exchanges a rank;
    // recursive halving, log2 n a rank (12: the fold's 4 each way and 3
    // among the 8 that remain).
    CHECK(messages(odd, "reduce_scatter_block", "pairwise") == odd * (odd - 1));
    CHECK(messages(n, "reduce_scatter_block", "recursive-halving") == n * log2_ceil(n));
    CHECK(messages(odd, "reduce_scatter_block", "recursive-halving") == 4 + pof2 * 3 + 4);
}

TEST_CASE("collectives: allreduce on 8 ranks, as library/collectives/README.md quotes", "[collective]") {
    // Small vectors: fewest steps wins; large ones: least data per rank.
    const Figures rd_small = run(8, "allreduce", "recursive-doubling", "8B", 4);
    const Figures ring_small = run(8, "allreduce", "ring", "8B", 4);
    const Figures rd_large = run(8, "allreduce", "recursive-doubling", "1MiB", 4);
    const Figures rab_large = run(8, "allreduce", "rabenseifner", "1MiB", 4);
    const Figures ring_large = run(8, "allreduce", "ring", "1MiB", 4);
    for (const Figures* f : {&rd_small, &ring_small, &rd_large, &rab_large, &ring_large}) clean(*f);
    INFO("8 B: recursive doubling " << rd_small.at("p50") << " us, ring " << ring_small.at("p50")
                                    << " us; 1 MiB: " << rd_large.at("p50") << ", " << rab_large.at("p50") << ", "
                                    << ring_large.at("p50"));
    CHECK(rd_small.at("p50") < ring_small.at("p50") / 2);
    CHECK(rab_large.at("p50") < rd_large.at("p50") / 2);
    CHECK(ring_large.at("p50") < rd_large.at("p50") / 2);
    // Each rank sums log2 8 = 3 whole vectors by recursive doubling, 7/8 of
    // one by the other two.
    CHECK(rd_large.at("reduced") == 4.0 * 8 * 3 * (1 << 20));
    CHECK(rab_large.at("reduced") == 4.0 * 8 * 7 * (1 << 17));
    CHECK(ring_large.at("reduced") == rab_large.at("reduced"));
}

TEST_CASE("collectives: non-blocking, overlapped with compute, several in flight, every byte verified",
          "[collective]") {
    // Allreduce of 64 KiB on 8 ranks (Rabenseifner: rendezvous parts and sums).
    const Settings nonblocking{{"collective.call", "nonblocking"}};
    const Figures blocking = run(8, "allreduce", "rabenseifner", "64KiB");
    const Figures alone = run(8, "allreduce", "rabenseifner", "64KiB", 2, nonblocking);
    clean(blocking);
    clean(alone);
    const double l = blocking.at("p50");
    // Waited for at once: the same steps, the same time.
    CHECK(alone.at("messages") == blocking.at("messages"));
    CHECK(alone.at("reduced") == blocking.at("reduced"));
    CHECK(alone.at("p50") == Approx(l).epsilon(0.02));
    // Compute as long as the blocking call, the collective in flight
    // meanwhile: no later than compute + the blocking call, no earlier than
    // the compute, and less than their sum (its steps proceeded during it).
    Settings overlap = nonblocking;
    overlap.push_back({"collective.overlap-compute", std::to_string(l) + "us"});
    const Figures both = run(8, "allreduce", "rabenseifner", "64KiB", 2, overlap);
    clean(both);
    INFO("blocking " << l << " us, overlapped with " << l << " us of compute " << both.at("p50") << " us");
    CHECK(both.at("p50") <= 2 * l);
    CHECK(both.at("p50") >= l);
    CHECK(both.at("p50") < 1.9 * l);
    CHECK(both.at("verified") == blocking.at("verified"));
    // Every collective, two in flight at once on one communicator (each its
    // own tag and scratch), on a number of ranks that is not a power of two,
    // eager and rendezvous: every byte of both results verified.
    Settings two = nonblocking;
    two.push_back({"collective.outstanding", "2"});
    for (const auto& [op, alg] : kSpecs) {
        if (std::string(alg) == "recursive-doubling" && std::string(op) == "allgather") continue;
        for (const char* size : {"8B", "24KiB"}) {
            INFO(op << " " << alg << ", two in flight, " << size);
            const Figures f = run(3, op, alg, size, 2, two);
            clean(f);
            CHECK(f.at("transfers") == 2.0 * 3);   // (clean: both calls' results verified, every byte)
        }
    }
    // Threads of one process a quantum apart met its page faults and
    // registrations out of time order (whole pages of results wrong) until
    // they ran without temporal decoupling (README "One clock at a time").
    Settings faults = nonblocking;
    faults.insert(faults.end(), {{"collective.outstanding", "5"}, {"workload.populate", "false"}});
    clean(run(3, "alltoall", "pairwise", "24KiB", 3, faults));
    Settings cache = nonblocking;
    cache.insert(cache.end(), {{"collective.outstanding", "2"},
                               {"collective.overlap-compute", "20us"},
                               {"rdma.strategy", "pin-cache"},
                               {"node.processes", "2"}});
    clean(run(3, "gatherv", "linear", "40KiB", 3, cache));
}

TEST_CASE("collectives: non-blocking, in-call progress (libnbc) against asynchronous, the figures quoted",
          "[collective]") {
    // library/collectives/README.md "Progress": allreduce of 64 KiB on 8
    // ranks (Rabenseifner), 1 ms of compute between its start and its wait.
    const Settings nonblocking{{"collective.call", "nonblocking"}};
    Settings in_call = nonblocking;
    in_call.push_back({"collective.progress", "in-call"});
    const Figures blocking = run(8, "allreduce", "rabenseifner", "64KiB");
    const Figures alone = run(8, "allreduce", "rabenseifner", "64KiB", 2, in_call);
    clean(blocking);
    clean(alone);
    const double l = blocking.at("p50");
    CHECK(l == Approx(255.5).epsilon(0.005));
    // Waited for at once: the program is inside the library throughout, so
    // in-call takes the blocking call's time, steps and sums.
    CHECK(alone.at("p50") == Approx(l).epsilon(0.02));
    CHECK(alone.at("messages") == blocking.at("messages"));
    CHECK(alone.at("reduced") == blocking.at("reduced"));
    Settings async_overlap = nonblocking, in_call_overlap = in_call;
    async_overlap.push_back({"collective.overlap-compute", "1ms"});
    in_call_overlap.push_back({"collective.overlap-compute", "1ms"});
    const Figures hidden = run(8, "allreduce", "rabenseifner", "64KiB", 2, async_overlap);
    const Figures waited = run(8, "allreduce", "rabenseifner", "64KiB", 2, in_call_overlap);
    clean(hidden);
    clean(waited);
    INFO("blocking " << l << " us; with 1 ms of compute: async " << hidden.at("p50") << " us, in-call "
                     << waited.at("p50") << " us");
    // Async: the whole collective under the compute.
    CHECK(hidden.at("p50") == Approx(1000).epsilon(0.001));
    // In-call: the first round during the compute, the rest after it; so
    // later than async, by less than the blocking call (the first round
    // was hidden) and by more than half of it (five of its six steps).
    CHECK(waited.at("p50") == Approx(1195.26).epsilon(0.005));
    CHECK(waited.at("p50") > hidden.at("p50") + l / 2);
    CHECK(waited.at("p50") < hidden.at("p50") + l);
    CHECK(waited.at("messages") == hidden.at("messages"));
    CHECK(waited.at("verified") == hidden.at("verified"));
}

TEST_CASE("collectives: with every registration strategy and two processes a node", "[collective]") {
    for (const char* strategy : {"pin", "pin-cache", "netvm", "pin-static"}) {
        INFO(strategy);
        clean(run(4, "allreduce", "auto", "24KiB", 2,
                  {{"rdma.strategy", strategy}, {"node.processes", "2"}, {"workload.populate", "false"}}));
    }
    clean(run(4, "alltoall", "bruck", "64B", 2, {{"rdma.buffer-guard", "mprotect"}, {"rdma.completion", "poll"}}));
}

TEST_CASE("collectives on one-sided RDMA: every algorithm, writes and reads, every byte verified", "[collective]") {
    for (const char* operation : {"write", "read"})
        for (unsigned n : {8u, 3u})
            for (const auto& [op, alg] : kSpecs)
                for (const char* size : {"8B", "24KiB"}) {
                    if (std::string(alg) == "recursive-doubling" && std::string(op) == "allgather" && n != 8) continue;
                    INFO(operation << ": " << op << " " << alg << ", " << n << " ranks, " << size);
                    const Figures f = run(n, op, alg, size, 2,
                                          {{"collective.transport", "one-sided"}, {"workload.operation", operation}});
                    clean(f);
                    CHECK(f.at("transfers") == 2.0 * n);
                    // No message of the two-sided library; a ready per
                    // message written (an offer and a token per message
                    // read); an empty message (a barrier's) is one token.
                    // (8 B split n ways leaves some ranks' parts empty.)
                    CHECK(f.at("msg_sends") == 0);
                    const bool empty = std::string(op) == "barrier";
                    // (The v-variants' empty blocks are single tokens.)
                    const bool vector = std::string(op).back() == 'v' || std::string(op) == "reduce_scatter";
                    if (empty || (std::string(size) != "8B" && !vector))
                        CHECK(f.at("control") == f.at("messages") * (empty                              ? 1
                                                                     : std::string(operation) == "read" ? 2
                                                                                                        : 1));
                }
}

TEST_CASE("collectives on one-sided RDMA: each algorithm's messages, as two-sided", "[collective]") {
    for (const char* alg : {"recursive-doubling", "ring", "rabenseifner"}) {
        INFO(alg);
        const Figures two = run(12, "allreduce", alg, "64B");
        const Figures one = run(12, "allreduce", alg, "64B", 2, {{"collective.transport", "one-sided"}});
        clean(two);
        clean(one);
        CHECK(one.at("messages") == two.at("messages"));
        CHECK(one.at("reduced") == two.at("reduced"));
    }
}

TEST_CASE("collectives on one-sided RDMA: faults, strategies, completion modes, the guard, two processes",
          "[collective]") {
    // Cold buffers: every page the engine writes or reads faults first.
    for (const char* operation : {"write", "read"})
        for (const char* strategy : {"fault-tolerant", "pin", "pin-cache", "netvm", "prefault", "pin-deferred"}) {
            INFO(operation << " " << strategy);
            clean(run(8, "allreduce", "rabenseifner", "24KiB", 2,
                      {{"collective.transport", "one-sided"},
                       {"workload.operation", operation},
                       {"rdma.strategy", strategy},
                       {"workload.populate", "false"}}));
        }
    // Each way of waiting; a barrier is token writes only (its waits look
    // at polled words between counter increments).
    for (const char* completion : {"poll", "interrupt", "counter", "handler"}) {
        INFO(completion);
        clean(run(8, "barrier", "dissemination", "8B", 4,
                  {{"collective.transport", "one-sided"}, {"rdma.completion", completion}}));
        clean(run(8, "alltoall", "bruck", "64B", 2,
                  {{"collective.transport", "one-sided"},
                   {"rdma.completion", completion},
                   {"rdma.buffer-guard", "mprotect"}}));
    }
    for (const char* operation : {"write", "read"}) {
        INFO(operation);
        clean(run(4, "allgather", "ring", "24KiB", 2,
                  {{"collective.transport", "one-sided"},
                   {"workload.operation", operation},
                   {"rdma.buffer-guard", "mprotect"},
                   {"node.processes", "2"},
                   {"workload.populate", "false"}}));
    }
}

// The fault situations of strategy_test.cpp (tests/fault_situations.hpp)
// on every node while an alltoall of 256 KiB blocks runs on 8 ranks (each
// rank's result 2 MiB, so that THP collapse finds whole blocks; migration:
// kMigrateBlock), in both SMMU fault modes, on both transports: every byte
// of every result verified, and the situation happened.
TEST_CASE(
    "collectives in the fault situations: cold, swap, THP collapse, migration, stall and terminate, "
    "two-sided and one-sided",
    "[collective][strategy]") {
    using situations::Situation;
    for (Situation sit : {Situation::Cold, Situation::Swap, Situation::Thp, Situation::Migrate})
        for (const char* mode : {"stall", "terminate"})
            for (const char* transport : {"two-sided", "one-sided"}) {
                INFO(situations::name(sit) << ", " << mode << ", " << transport);
                const std::string block = sit == Situation::Migrate ? kMigrateBlock : "256KiB";
                Settings set = ranks(8);
                set.insert(set.end(), {{"workload.kind", "collective"},
                                       {"collective.op", "alltoall"},
                                       {"collective.transport", transport},
                                       {"workload.message-size", block},
                                       {"workload.iterations", "2"},
                                       {"smmu-driver.fault-mode", mode},
                                       {"dma.fault-tolerant", std::string(mode) == "terminate" ? "true" : "false"},
                                       {"sim.time-limit", "2s"}});
                const double bytes = 2.0 * 8 * 8 * static_cast<double>(parse_size_bytes(block));
                situations::check_clean_run(
                    situations::run_in(set, sit, {0, 1, 2, 3, 4, 5, 6, 7},
                                       [bytes](const TransferLog& l) { return l.bytes_verified.value() == bytes; }),
                    sit);
            }
}

TEST_CASE("collectives: host memory does not grow with workload.iterations, the barrier still checked",
          "[collective]") {
    // 10^8 barriers of 4 ranks: the per-iteration table of entries and
    // exits took 10 GB before the first event. Built, not run to its end;
    // then a short run's barriers are each checked (collective-barrier).
    const Figures f = in_child_figures([] {
        auto peak_kib = [] {
            rusage u{};
            getrusage(RUSAGE_SELF, &u);
            return static_cast<double>(u.ru_maxrss);
        };
        Settings s = ranks(4);
        s.insert(s.end(),
                 {{"workload.kind", "collective"}, {"collective.op", "barrier"}, {"workload.iterations", "100000000"}});
        const double before = peak_kib();
        SystemSim sim(s);
        std::ostringstream os;
        os << "grown_kib " << peak_kib() - before << "\n";
        return os.str();
    });
    REQUIRE(f.count("grown_kib"));
    CHECK(f.at("grown_kib") < 64 * 1024);
    const Figures b = run(4, "barrier", "dissemination", "8B", 50);
    clean(b);
    CHECK(b.at("transfers") == 200);
}

TEST_CASE("collectives: what the workload refuses", "[collective][config]") {
    auto refusal = [](const Settings& extra) {
        Settings all = {{"workload.kind", "collective"}};
        all.insert(all.end(), extra.begin(), extra.end());
        return config_refusal(all);
    };
    CHECK_THAT(refusal({{"collective.alltoall-algorithm", "bruck"}}),
               Catch::Contains("chooses the algorithm of another collective than collective.op = allreduce"));
    CHECK_THAT(refusal({{"collective.op", "allreduce"}, {"workload.message-size", "12B"}}),
               Catch::Contains("multiple of 8 B"));
    CHECK_THAT(refusal({{"collective.datatype", "double-int"},
                        {"collective.reduce-op", "maxloc"},
                        {"workload.message-size", "24B"}}),
               Catch::Contains("multiple of 16 B"));
    CHECK_THAT(refusal({{"collective.datatype", "double"}, {"collective.reduce-op", "bxor"}}),
               Catch::Contains("collective.reduce-op") &&
                   Catch::Contains("MPI defines bxor on integers and bytes, not on double"));
    CHECK_THAT(refusal({{"collective.op", "bcast"}, {"collective.reduce-op", "max"}}),
               Catch::Contains("collective.op = bcast is not a reduction"));
    CHECK_THAT(refusal({{"collective.root", "2"}}), Catch::Contains("collective.root"));
    CHECK_THAT(refusal({{"collective.transport", "one-sided"}, {"dma.event-counters", "3"}}),
               Catch::Contains("dma.event-counters") && Catch::Contains("4 or more"));
    CHECK_THAT(refusal({{"workload.operation", "read"}}),
               Catch::Contains("has nothing to choose in workload.kind = collective with collective.transport = "
                               "two-sided"));
    CHECK_THAT(refusal({{"topology.kind", "qfdb"},
                        {"topology.nodes", "3"},
                        {"collective.op", "allgather"},
                        {"collective.allgather-algorithm", "recursive-doubling"}}),
               Catch::Contains("power-of-two"));
    CHECK_THAT(refusal({{"collective.overlap-compute", "1us"}}), Catch::Contains("collective.call = nonblocking only"));
    CHECK_THAT(refusal({{"collective.outstanding", "2"}}), Catch::Contains("collective.call = nonblocking only"));
    CHECK_THAT(refusal({{"collective.progress", "in-call"}}), Catch::Contains("collective.call = nonblocking only"));
    CHECK_THAT(refusal({{"collective.call", "nonblocking"}, {"collective.transport", "one-sided"}}),
               Catch::Contains("two-sided transport only"));
}
