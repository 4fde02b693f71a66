// Matching of two-sided messages: the posted-receive queue and the
// unexpected-message queue, as MPI defines them. A message (source, tag)
// matches the first posted receive, in the order they were posted, whose
// source and tag are equal or wildcards; a receive matches the first
// unexpected message, in the order they arrived, that it accepts. With
// arrivals from one sender handed in in that sender's order, messages
// between a pair never overtake one another (MPI 3.1, section 3.5).
#pragma once

#include <cstdint>
#include <deque>
#include <limits>
#include "src/core/lazy_deque.hpp"

namespace vrdmasim {
namespace msg {

constexpr unsigned kAnySource = std::numeric_limits<unsigned>::max();
constexpr std::uint64_t kAnyTag = std::numeric_limits<std::uint64_t>::max();
// Tags may carry a context above bit 40 (an MPI communicator's:
// coll::Communicator::p2p_tag): a receive's tag whose low 40 bits are all
// ones (`context | kContextAnyTag`) accepts every tag below bit 40 of that
// context, MPI_ANY_TAG of one communicator. A message's tag never has them
// all set.
constexpr std::uint64_t kContextAnyTag = (std::uint64_t(1) << 40) - 1;
constexpr bool is_wildcard_tag(std::uint64_t tag) { return (tag & kContextAnyTag) == kContextAnyTag; }

class MatchQueues {
public:
    // A receive (`src`, `tag` may be wildcards) with the caller's id: the
    // id of the first unexpected message it matches (taken off that queue)
    // and true, else it joins the posted queue and false.
    bool post_receive(unsigned src, std::uint64_t tag, std::uint64_t id, std::uint64_t& matched);
    // A message arrived (concrete `src`, `tag`): the id of the first posted
    // receive it matches (taken off that queue) and true, else it joins the
    // unexpected queue under `id` and false.
    bool arrive(unsigned src, std::uint64_t tag, std::uint64_t id, std::uint64_t& matched);
    // A probe (`src`, `tag` may be wildcards): the id of the first
    // unexpected message a receive posted now would take, left where it is
    // (MPI_Probe, MPI_Iprobe), and true; false if there is none.
    bool peek(unsigned src, std::uint64_t tag, std::uint64_t& id);
    // A posted receive's withdrawal (MPI_Cancel): true if receive `id` was
    // still posted (it is taken off the queue), false if it had matched.
    bool cancel(std::uint64_t id);
    std::size_t posted() const { return posted_.size(); }
    std::size_t unexpected() const { return unexpected_.size(); }
    // Entries looked at by the last call (the CPU cost of the search).
    std::size_t searched() const { return searched_; }

private:
    struct Entry {
        unsigned src;
        std::uint64_t tag, id;
    };
    static bool accepts(const Entry& recv, unsigned src, std::uint64_t tag) {
        return (recv.src == kAnySource || recv.src == src) &&
               (recv.tag == tag || recv.tag == kAnyTag ||
                (is_wildcard_tag(recv.tag) && (tag | kContextAnyTag) == recv.tag));
    }
    LazyDeque<Entry> posted_, unexpected_;
    std::size_t searched_ = 0;
};

}   // namespace msg
}   // namespace vrdmasim
