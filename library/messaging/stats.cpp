#include "library/messaging/stats.hpp"

namespace vrdmasim {

MsgStats::MsgStats(StatRegistry& s, const std::string& p)
    : eager_sends(
          s.counter(p + "eager_sends", "", "messages sent by the eager protocol (copied through a bounce slot)")),
      eager_bytes(s.counter(p + "eager_bytes", "B", "payload bytes of eager messages")),
      rendezvous_sends(
          s.counter(p + "rendezvous_sends", "", "messages sent by the rendezvous protocol (msg.rendezvous)")),
      rendezvous_bytes(s.counter(p + "rendezvous_bytes", "B", "payload bytes of rendezvous messages (zero copy)")),
      self_sends(s.counter(p + "self_sends", "",
                           "messages the process sent to itself: copied by its CPU (into a matching receive, else "
                           "into library memory and out again), no RDMA; not counted as eager or rendezvous")),
      receives(s.counter(p + "receives", "", "receives completed")),
      unexpected(s.counter(p + "unexpected", "",
                           "messages (eager or ready-to-send) that arrived before a receive matched them: "
                           "queued as unexpected (an eager payload copied into library memory)")),
      unexpected_hits(s.counter(p + "unexpected_hits", "", "receives matched from the unexpected queue when posted")),
      copy_bytes(s.counter(p + "copy_bytes", "B",
                           "payload bytes the CPU copied (into a bounce slot, out of a slot, out of the unexpected "
                           "queue), each at vm.copy-rate as activity msg-copy")),
      control(
          s.counter(p + "control_messages", "", "protocol control messages sent: ready-to-send, clear-to-send, FIN")),
      credit_updates(s.counter(p + "credit_updates", "",
                               "explicit credit returns: RDMA writes of the count of freed eager slots")),
      credit_stalls(s.counter(p + "credit_stalls", "", "messages that had to wait for an eager-slot credit")),
      match_searched(s.counter(p + "match_searched", "", "queue entries looked at while matching")),
      ring_gaps(s.counter(p + "ring_gaps", "",
                          "times the notification count was ahead of the ring: an entry not written yet (its "
                          "record's page faulted; the engine writes it later), so the walk stopped there")) {}

void MsgStats::declare_metrics(MetricRegistry& reg, const std::function<bool(const Config&)>& used_in) {
    reg.sum_counters("msg_eager", "Two-sided messages sent eagerly (sum of `*.msg.eager_sends`).", {"msg.eager_sends"},
                     used_in);
    reg.sum_counters("msg_rendezvous", "Two-sided messages sent by rendezvous (sum of `*.msg.rendezvous_sends`).",
                     {"msg.rendezvous_sends"}, used_in);
    reg.sum_counters("msg_unexpected", "Two-sided messages that arrived before their receive was posted.",
                     {"msg.unexpected"}, used_in);
    reg.sum_counters("msg_copy_bytes", "Payload bytes copied by the CPUs of the two-sided library (eager path).",
                     {"msg.copy_bytes"}, used_in);
    reg.sum_counters("msg_control", "Rendezvous control messages sent (ready-to-send, clear-to-send, FIN).",
                     {"msg.control_messages"}, used_in);
    reg.sum_counters("msg_credit_stalls", "Two-sided messages that waited for an eager-slot credit.",
                     {"msg.credit_stalls"}, used_in);
}

}   // namespace vrdmasim
