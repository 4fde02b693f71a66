#include "library/collectives/params.hpp"

#include "library/collectives/reduction.hpp"

namespace vrdmasim {

namespace {
const char* const kReduceOpHelp =
    "the operation of the collective workload's reductions (collective.op = reduce, allreduce, scan, exscan, "
    "reduce_scatter, reduce_scatter_block): MPI's predefined MPI_SUM, MPI_PROD, MPI_MIN, MPI_MAX, MPI_LAND, MPI_LOR, "
    "MPI_LXOR, MPI_BAND, MPI_BOR, MPI_BXOR, MPI_MINLOC, MPI_MAXLOC (MPI 4.1 section 6.9.2), each on the datatypes MPI "
    "defines it on; every one is commutative (library/collectives/README.md \"Reductions\")";
const char* const kDatatypeHelp =
    "the element type of the collective workload's reductions: MPI_UINT64_T, MPI_INT8_T, MPI_INT16_T, MPI_INT32_T, "
    "MPI_INT64_T, MPI_UINT8_T, MPI_UINT16_T, MPI_UINT32_T, MPI_FLOAT, MPI_DOUBLE, MPI_BYTE, and the pair types of "
    "minloc and maxloc MPI_2INT, MPI_FLOAT_INT, MPI_DOUBLE_INT, MPI_LONG_INT, MPI_SHORT_INT (MPI 4.1 sections 3.2.2 "
    "and 6.9.4; a pair takes its C struct's size, padding included: 8, 8, 16, 16, 8 B); then MPI_LONG_DOUBLE (16 B), "
    "MPI_C_BOOL (the logical operations' alone), the complex types MPI_C_FLOAT_COMPLEX, MPI_C_DOUBLE_COMPLEX, "
    "MPI_C_LONG_DOUBLE_COMPLEX (sum and prod alone; 8, 16, 32 B), and the pair types MPI_LONG_DOUBLE_INT (32 B) and "
    "Fortran's MPI_2REAL, MPI_2DOUBLE_PRECISION (a REAL or DOUBLE PRECISION index: 8, 16 B)";
const char* const kProgressHelp =
    "how a non-blocking collective (MPI_Iallreduce, ...: collective.call = nonblocking, an MPI program's, a replayed "
    "trace's) progresses (library/collectives/README.md \"Non-blocking collectives\"): async (its rounds run on their "
    "own while the program computes, as with MPICH's progress thread, MPIR_CVAR_ASYNC_PROGRESS, or an offloading "
    "NIC: an upper bound on overlap) or in-call (libnbc, Open MPI's coll/libnbc, its default for non-blocking "
    "collectives: Hoefler, Lumsdaine and Rehm, SC07: the first round starts at the call, each next one only when the "
    "program is inside a call of the library (a test, a wait, any other) after the round before has ended). The "
    "default stays async, the model every figure the docs quote was made with; choose in-call for an Open MPI "
    "program as it runs by default";
}   // namespace

CollParams::CollParams()
    : set("collective",
          "MPI-style collectives on the two-sided library or on one-sided RDMA "
          "(library/collectives; workload.kind = collective, and a replayed trace's collectives)"),
      op(set.choice(
          "op", "allreduce",
          {"barrier", "bcast", "reduce", "allreduce", "allgather", "alltoall", "scan", "exscan", "gather", "scatter",
           "gatherv", "scatterv", "allgatherv", "alltoallv", "reduce_scatter", "reduce_scatter_block"},
          "the collective the collective workload measures (osu_barrier, osu_bcast, osu_reduce, "
          "osu_allreduce, osu_allgather, osu_alltoall, osu_scan, osu_exscan, osu_gather, osu_scatter, "
          "osu_gatherv, osu_scatterv, osu_allgatherv, osu_alltoallv, osu_reduce_scatter, "
          "osu_reduce_scatter_block): each rank contributes workload.message-size bytes (reductions: "
          "collective.reduce-op on collective.datatype elements, so a multiple of the element's size; "
          "reduce-scatter: each rank's block of the result, reduce_scatter's uneven as the v-variants'); the "
          "v-variants' blocks are uneven, rank f's for rank t (f + 2 t) mod 4 halves of it, some empty "
          "(library/collectives/README.md)")),
      transport(set.choice("transport", "two-sided", {"two-sided", "one-sided"},
                           "how a collective's steps move data (library/collectives/README.md): two-sided (messages "
                           "of the two-sided library, msg.*: eager copies or rendezvous, matched by tag) or "
                           "one-sided (the receiver writes where its buffer is into the sender's mailbox, the sender "
                           "RDMA-writes straight into it, counted on the receiver's event counter 3; empty messages "
                           "are counted token writes: no copy, no matching, no eager slot)")),
      allreduce_algorithm(set.choice("allreduce-algorithm", "auto",
                                     {"auto", "recursive-doubling", "ring", "rabenseifner"},
                                     "how allreduce is done (library/collectives/README.md): recursive-doubling "
                                     "(log2 n exchanges of the whole vector), ring (reduce-scatter then allgather "
                                     "around the ring), rabenseifner (recursive halving then doubling); auto as "
                                     "MPICH: recursive-doubling up to 2 KiB, rabenseifner above "
                                     "(MPIR_CVAR_ALLREDUCE_SHORT_MSG_SIZE). Barrier is always dissemination, bcast, "
                                     "reduce, gather and scatter binomial, gatherv and scatterv linear, allgatherv "
                                     "ring, alltoallv pairwise")),
      allgather_algorithm(set.choice("allgather-algorithm", "auto", {"auto", "ring", "recursive-doubling"},
                                     "how allgather is done: ring (n - 1 steps) or recursive-doubling (log2 n "
                                     "steps, a power-of-two number of ranks); auto as MPICH: recursive-doubling on "
                                     "a power of two up to 80 KiB in all (MPIR_CVAR_ALLGATHER_LONG_MSG_SIZE), ring "
                                     "otherwise")),
      alltoall_algorithm(set.choice("alltoall-algorithm", "auto", {"auto", "pairwise", "bruck"},
                                    "how alltoall is done: pairwise (n - 1 exchanges with rank + i) or bruck "
                                    "(ceil(log2 n) rounds of packed blocks); auto as MPICH: bruck up to 256 B per "
                                    "block (MPIR_CVAR_ALLTOALL_SHORT_MSG_SIZE), pairwise above")),
      reduce_scatter_algorithm(
          set.choice("reduce-scatter-algorithm", "auto", {"auto", "recursive-halving", "pairwise"},
                     "how reduce_scatter and reduce_scatter_block are done: recursive-halving (log2 n exchanges, "
                     "each of half the blocks still held) or pairwise (n - 1 exchanges of one block with rank + i); "
                     "auto as MPICH for a commutative operation: recursive-halving below 512 KiB a rank's vector "
                     "(MPIR_CVAR_REDUCE_SCATTER_COMMUTATIVE_LONG_MSG_SIZE), pairwise from there")),
      root(set.integer(
                  "root", "0",
                  "the root rank of bcast, reduce, gather, scatter, gatherv and scatterv (ranks are the job's nodes in "
                  "order)")
               .range("0", "65535")),
      reduce_rate(set.rate("reduce-rate", "10.6Gbps",
                           "rate a core combines a received vector into its own (two arrays read, one written), "
                           "whatever the operation and datatype (the pass is bound by memory, not by the "
                           "arithmetic): *estimate*, two thirds of vm.copy-rate's 2 GB/s memcpy (one read and one "
                           "write a byte)")
                      .range("1Mbps", "1Tbps")),
      reduce_op(set.choice("reduce-op", "sum", coll::reduce_op_names(), kReduceOpHelp)),
      datatype(set.choice("datatype", "uint64", coll::datatype_names(), kDatatypeHelp)),
      call(set.choice("call", "blocking", {"blocking", "nonblocking"},
                      "how the collective workload calls collective.op: blocking (MPI_Allreduce, ...: osu_allreduce) "
                      "or nonblocking (MPI_Iallreduce, ... then MPI_Wait: osu_iallreduce), the library's "
                      "non-blocking form, whose steps run while the rank goes on, as collective.progress says "
                      "(library/collectives/README.md \"Non-blocking collectives\")")),
      overlap_compute(set.time("overlap-compute", "0s",
                               "collective.call = nonblocking: the rank computes this long on its core between "
                               "starting the collectives and waiting for them, as osu_iallreduce's overlap "
                               "measurement does; the latency then counts from the start to the wait's return")
                          .range("0s", "1s")),
      outstanding(set.integer("outstanding", "1",
                              "collective.call = nonblocking: collectives each rank starts back to back (each on "
                              "buffers of its own) before waiting for them, in order: several in flight at once "
                              "on one communicator")
                      .range("1", "64")),
      progress(set.choice("progress", "async", {"async", "in-call"}, kProgressHelp)) {}

void CollParams::declare_params(ParamRegistry& reg) { reg.add(params_of<CollParams>().set); }

}   // namespace vrdmasim
