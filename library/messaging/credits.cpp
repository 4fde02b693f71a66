#include "library/messaging/credits.hpp"

#include <stdexcept>
#include <string>

namespace vrdmasim {
namespace msg {

std::uint64_t SendCredits::take() {
    if (!available())
        throw std::logic_error("two-sided library: eager slot " + std::to_string(sent_ % slots_) +
                               " taken without a credit (" + std::to_string(sent_) + " sent, " +
                               std::to_string(freed_) + " freed, " + std::to_string(slots_) + " slots)");
    return sent_++;
}

void SendCredits::update(std::uint64_t freed) {
    if (freed > sent_)
        throw std::logic_error("two-sided library: the receiver freed " + std::to_string(freed) + " slots but only " +
                               std::to_string(sent_) + " were sent");
    if (freed > freed_) freed_ = freed;
}

bool RecvCredits::due() const {
    const std::uint64_t half = slots_ / 2 > 0 ? slots_ / 2 : 1;
    return freed_ - returned_ >= half;
}

}   // namespace msg
}   // namespace vrdmasim
