#include "library/messaging/matching.hpp"

#include <stdexcept>

namespace vrdmasim {
namespace msg {

bool MatchQueues::post_receive(unsigned src, std::uint64_t tag, std::uint64_t id, std::uint64_t& matched) {
    const Entry recv{src, tag, id};
    searched_ = 0;
    for (auto it = unexpected_.begin(); it != unexpected_.end(); ++it) {
        ++searched_;
        if (accepts(recv, it->src, it->tag)) {
            matched = it->id;
            unexpected_.erase(it);
            return true;
        }
    }
    posted_.push_back(recv);
    return false;
}

bool MatchQueues::peek(unsigned src, std::uint64_t tag, std::uint64_t& id) {
    const Entry probe{src, tag, 0};
    searched_ = 0;
    for (const Entry& e : unexpected_) {
        ++searched_;
        if (accepts(probe, e.src, e.tag)) {
            id = e.id;
            return true;
        }
    }
    return false;
}

bool MatchQueues::arrive(unsigned src, std::uint64_t tag, std::uint64_t id, std::uint64_t& matched) {
    if (src == kAnySource || is_wildcard_tag(tag)) throw std::logic_error("a message with a wildcard source or tag");
    searched_ = 0;
    for (auto it = posted_.begin(); it != posted_.end(); ++it) {
        ++searched_;
        if (accepts(*it, src, tag)) {
            matched = it->id;
            posted_.erase(it);
            return true;
        }
    }
    unexpected_.push_back({src, tag, id});
    return false;
}

bool MatchQueues::cancel(std::uint64_t id) {
    searched_ = 0;
    for (auto it = posted_.begin(); it != posted_.end(); ++it) {
        ++searched_;
        if (it->id == id) {
            posted_.erase(it);
            return true;
        }
    }
    return false;
}

}   // namespace msg
}   // namespace vrdmasim
