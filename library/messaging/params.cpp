#include "library/messaging/params.hpp"

namespace vrdmasim {

MsgParams::MsgParams()
    : set("msg", "two-sided send/receive library on top of RDMA writes (workload.kind = sendrecv, workload.two-sided)"),
      eager_threshold(set.size("eager-threshold", "2KiB",
                               "largest message sent eagerly (copied into a bounce slot the receiver registered for "
                               "the sender, copied out by the receiver); larger ones go by rendezvous. *estimate*: the "
                               "crossover on the default system (configs/sweeps/sendrecv.ini: eager is faster up to "
                               "2 KiB, the write rendezvous from 4 KiB); MPI libraries on InfiniBand use 8-12 KiB "
                               "(UCX's automatic rendezvous threshold, Open MPI's btl_openib_eager_limit), where "
                               "copies are faster than on a 1.5 GHz A53")
                          .range("0B", "1MiB")),
      rendezvous(
          set.choice("rendezvous", "write", {"read", "write"},
                     "rendezvous protocol for messages above msg.eager-threshold: write (the receiver answers the "
                     "ready-to-send with a clear-to-send holding its buffer's address, and the sender RDMA-writes "
                     "the data there with a notification: MPICH's and UCX's put-based rendezvous), read (the "
                     "receiver pulls the data with an RDMA read and sends a FIN: MVAPICH's RGET, UCX's get_zcopy)")),
      eager_slots(
          set.integer("eager-slots", "16",
                      "eager slots the receiver keeps for each peer (each msg.eager-threshold + 64 B of header), "
                      "and so the credits of each sender: *estimate*, as MVAPICH2's RDMA fast path keeps 16-32 "
                      "buffers per peer (MV2_NUM_RDMA_BUFFER)")
              .range("1", "4096")),
      match_cost(set.time("match-cost", "10ns",
                          "CPU time per queue entry looked at when matching (posted-receive and unexpected queues): "
                          "*estimate*, a compare and a pointer chase on a 1.5 GHz A53")
                     .range("0ps", "1ms")) {}

void MsgParams::declare_params(ParamRegistry& reg) { reg.add(params_of<MsgParams>().set); }

}   // namespace vrdmasim
