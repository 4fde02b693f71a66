// The two-sided library's wire format: the header at the start of every
// eager slot (an eager message's payload follows it; control messages are
// the header alone). Written by the sender's CPU into its bounce slot and
// carried by one RDMA write into the slot the receiver keeps for it.
#pragma once

#include <cstdint>

namespace vrdmasim {
namespace msg {

enum class Kind : std::uint32_t {
    Eager = 0x45414752,   // header + payload
    Rts = 0x52545320,   // ready to send: {tag, len, sender's buffer, sender's request}
    Cts = 0x43545320,   // clear to send (rendezvous write): {receiver's buffer, both requests}
    Fin = 0x46494e20,   // rendezvous read: the receiver has pulled the data
};
const char* to_string(Kind k);

struct Header {
    Kind kind = Kind::Eager;
    std::uint32_t src = 0;   // sending node
    std::uint64_t seq = 0;   // per (sender, receiver) pair: slot seq % slots, order of matching
    std::uint64_t tag = 0;
    std::uint64_t len = 0;   // message length
    std::uint64_t addr = 0;   // RTS: sender's buffer; CTS: receiver's buffer
    std::uint64_t sreq = 0;   // sender's request id (RTS, CTS, FIN)
    std::uint64_t rreq = 0;   // receiver's request id (CTS)
    std::uint64_t credits = 0;   // piggybacked: slots of the receiver's area freed so far (cumulative)
};
static_assert(sizeof(Header) == 64, "one cache line");

}   // namespace msg
}   // namespace vrdmasim
