#include "library/locks/mcs_lock.hpp"

#include <stdexcept>

namespace vrdmasim {

bool McsLock::note(RemoteMemory& rm, unsigned me) {
    const RemoteMemory::Note n = rm.next_note();
    if (n.addr == site_.local.at(me)) {   // our `next`: a successor linked itself in
        if (successor_ != 0) throw std::runtime_error(rm.app().group() + ": MCS lock: two successors");
        successor_ = n.from + 1;
        return false;
    }
    if (n.addr == site_.local.at(me) + 8) return true;   // our `locked`: the hand-over
    throw std::runtime_error(rm.app().group() + ": MCS lock: a notification for no word of its queue node");
}

void McsLock::acquire(RemoteMemory& rm, unsigned me) {
    const std::uint64_t pred = rm.atomic(AtomicOp::Swap, site_.home, site_.word(0), me + 1);
    if (pred == 0) return;   // the queue was empty
    const unsigned p = static_cast<unsigned>(pred - 1);
    rm.put(p, site_.local.at(p), me + 1, true);   // link: predecessor.next = me
    while (!note(rm, me)) {
    }
}

void McsLock::release(RemoteMemory& rm, unsigned me) {
    if (successor_ == 0) {
        const std::uint64_t old = rm.atomic(AtomicOp::CompareSwap, site_.home, site_.word(0), 0, me + 1);
        if (old == me + 1) return;   // no one behind: the lock is free
        while (successor_ == 0)   // someone swapped in behind us: wait for its link
            if (note(rm, me)) throw std::runtime_error(rm.app().group() + ": MCS lock: handed over while holding");
    }
    const unsigned s = successor_ - 1;
    successor_ = 0;
    rm.put(s, site_.local.at(s) + 8, 0, true);   // hand over: successor.locked = 0
}

std::string McsLock::check_idle(const std::vector<std::uint64_t>& w) const {
    return w.at(0) == 0 ? std::string() : "MCS tail is " + std::to_string(w[0]) + ", not 0";
}

}   // namespace vrdmasim
