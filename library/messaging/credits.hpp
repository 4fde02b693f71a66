// Eager-slot flow control of one direction of one pair: the sender may have
// at most `slots` messages in the receiver's slots that the receiver has not
// copied out yet. Credits are cumulative counts, so a stale update can never
// give credits back twice: the receiver tells the sender how many slots it
// has freed in all (piggybacked on every message it sends the other way,
// and by an RDMA write of the count into a word the sender watches once
// half the slots are waiting to be returned); the sender takes the largest
// count it has seen.
#pragma once

#include <cstdint>

namespace vrdmasim {
namespace msg {

class SendCredits {
public:
    explicit SendCredits(std::uint64_t slots) : slots_(slots) {}
    bool available() const { return sent_ - freed_ < slots_; }
    // The next message's sequence number (its slot: seq % slots). A logic
    // error without a credit: the slot may not have been copied out yet.
    std::uint64_t take();
    // The receiver has freed `freed` slots in all (any stale or repeated count is ignored).
    void update(std::uint64_t freed);
    std::uint64_t sent() const { return sent_; }
    std::uint64_t freed() const { return freed_; }
    std::uint64_t slots() const { return slots_; }

private:
    std::uint64_t slots_, sent_ = 0, freed_ = 0;
};

class RecvCredits {
public:
    explicit RecvCredits(std::uint64_t slots) : slots_(slots) {}
    // The slot of sequence number freed() has been copied out.
    void free_one() { ++freed_; }
    std::uint64_t freed() const { return freed_; }
    std::uint64_t returned() const { return returned_; }
    // The count told to the sender (piggybacked or written).
    void returned(std::uint64_t count) {
        if (count > returned_) returned_ = count;
    }
    // An explicit update is due: half the slots (at least one) freed and not returned.
    bool due() const;

private:
    std::uint64_t slots_, freed_ = 0, returned_ = 0;
};

}   // namespace msg
}   // namespace vrdmasim
