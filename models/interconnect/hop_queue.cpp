#include "models/interconnect/hop_queue.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "src/core/force_inline.hpp"
#include "src/core/sim_now.hpp"
#include "src/core/timed_notifications.hpp"

namespace vrdmasim {

using sc_core::sc_time;

HopPacket::HopPacket() : pkt(&own) { gp.set_extension(pkt); }

// The extension is its own member: not the payload's to delete.
HopPacket::~HopPacket() { gp.clear_extension(pkt); }

void HopPacket::take(const tlm::tlm_generic_payload& from, const ExanetPacket& p) {
    *pkt = p;
    const unsigned n = from.get_data_length();
    data.resize(n);
    if (n) std::copy(from.get_data_ptr(), from.get_data_ptr() + n, data.data());
    gp.set_command(from.get_command());
    gp.set_address(from.get_address());
    gp.set_data_ptr(data.data());
    gp.set_data_length(n);
    gp.set_streaming_width(from.get_streaming_width());
    gp.set_byte_enable_ptr(nullptr);
    gp.set_byte_enable_length(0);
    gp.set_response_status(tlm::TLM_INCOMPLETE_RESPONSE);
    flits = p.flits();
}

HopPacket& HopQueue::take_packet() {
    if (free_.empty()) return pool_.emplace_back();
    HopPacket& p = *free_.back();
    free_.pop_back();
    return p;
}

void HopQueue::give_back(HopPacket& p) {
    p.up = nullptr;
    p.cut = nullptr;
    p.held_due = false;
    free_.push_back(&p);
}

HopQueue::HopQueue(sc_core::sc_module_name name) : sc_module(name), ring_(kBuckets) {
    SC_HAS_PROCESS(HopQueue);
    SC_METHOD(serve);
    sensitive << wake_;
    dont_initialize();
    end_.q = this;
    InstantEnd::get();   // made now, during elaboration
}

void HopQueue::serve_link(std::uint32_t number, HopHandler* h, Link* link) {
    if (number >= handlers_.size()) {
        handlers_.resize(std::size_t(number) + 1, nullptr);
        links_of_.resize(std::size_t(number) + 1, nullptr);
    }
    if (serves(number) && (handlers_[number] != h || links_of_[number] != link))
        throw std::logic_error(std::string(name()) + ": link " + std::to_string(number) + " served twice");
    handlers_[number] = h;
    links_of_[number] = link;
}

void HopQueue::post_outside(const Event& e) {
    const sc_time now = serving_ ? current_ : sc_core::sc_time_stamp();
    if (!serves(link_of(e.key)))
        throw std::logic_error(std::string(name()) + ": an event for link " + std::to_string(link_of(e.key)) +
                               ", which nothing serves (serve_link)");
    if (e.t < now)
        throw std::logic_error(std::string(name()) + ": an event posted for " + e.t.to_string() +
                               ", before the present " + now.to_string());
    push(e);
    if (!serving_) arm(front().t, sc_core::sc_time_stamp());   // (serve() arms once it is done)
}

void HopQueue::find_first_beyond(std::uint64_t from) {
    // The next word of the bitmap that is not 0 (words_, in ring order
    // from the next), within the ring's buckets base_ .. base_ + kBuckets -
    // 1.
    const std::uint64_t slot = from % kBuckets, w = slot >> 6;
    const unsigned r = static_cast<unsigned>((w + 1) % 64);
    const std::uint64_t rotated = r == 0 ? words_ : (words_ >> r) | (words_ << (64 - r));
    if (rotated) {
        const std::uint64_t word = (r + static_cast<unsigned>(__builtin_ctzll(rotated))) % 64;
        const std::uint64_t b = from - slot % 64 + 64 * (1 + (word + 64 - r) % 64) +
                                static_cast<std::uint64_t>(__builtin_ctzll(nonempty_[word]));
        if (b < base_ + kBuckets) {
            first_ = b;
            return;
        }
    }
    throw std::logic_error(std::string(name()) + ": the calendar lost an event");
}

const HopQueue::Event& HopQueue::front() const {
    if (ring_count_ == 0) return far_.front();
    const Event& r = ring_[first_ % kBuckets].first;
    if (!far_.empty() && Later{}(r, far_.front())) return far_.front();
    return r;
}

// The buckets' width for the events of late (hop_queue.hpp), at `now`,
// the kernel's time.
void HopQueue::adapt(sc_time now) {
    // Once serving stops (serve(): no event in hand; every event queued and
    // every one posted later is at or after the kernel's `now`) after
    // kAdaptEvery events served since the last look (the heap's too: few).
    const std::uint64_t steps = steps_, drains = drains_, pops = served_ - looked_;
    steps_ = drains_ = 0;
    looked_ = served_;
    look_at_ = served_ + kAdaptEvery;
    if (steps > pops && shift_ > kNarrowest) rebucket(shift_ - 1, now);
    else if (50 * steps < pops && 10 * drains > 9 * pops && shift_ < kWidest) rebucket(shift_ + 1, now);
}

// The ring's events into buckets of 2^shift ps from the present's (those
// beyond it into the heap): the order served is the same.
void HopQueue::rebucket(unsigned shift, sc_time now) {
    std::vector<Event> held;
    held.reserve(ring_count_);
    for (Bucket& k : ring_) {
        if (k.held > 0) held.push_back(k.first);
        if (k.held > 1) held.insert(held.end(), k.more.begin() + k.head, k.more.end());
        if (k.more.capacity() > kBucketKeeps) std::vector<Event>().swap(k.more);
        else k.more.clear();
        k.head = 0;
        k.held = 0;
    }
    std::fill(nonempty_.begin(), nonempty_.end(), 0);
    words_ = 0;
    count_ -= ring_count_;
    ring_count_ = 0;
    shift_ = shift;
    base_ = bucket_of(now);
    for (const Event& e : held) push(e);
    steps_ = 0;
}

// wake_ at `at` unless it already wakes by then (a timed notification is
// replaced by an earlier one, never by a later: SystemC's rule too).
void HopQueue::arm(sc_time at, sc_time now) {
    if (armed_ && armed_at_ <= at) return;
    armed_ = true;
    armed_at_ = at;
    if (at == now) wake_.notify(sc_core::SC_ZERO_TIME);
    else wake_.notify(at - now);
}

void HopQueue::recheck() {
    if (!serving_) return;
    // Nothing pending at the present and no timed notification made since
    // the kernel's next activity was last read (serve(), or here): it has
    // not come closer, and the horizon stands (without the kernel's search).
    if (timed_notifications::counting() && timed_notifications::made() == timed_seen_ &&
        !sc_core::sc_pending_activity_at_current_time())
        return;
    timed_seen_ = timed_notifications::made();
    // (Zero when a process is runnable now: serving stops at the present.)
    horizon_ = std::min(horizon_, sim_now() + sc_core::sc_time_to_pending_activity());
    plain_ = std::min(plain_, horizon_);
}

void HopQueue::serve() {
    ++wakes_;
    const sc_time now = sim_now();
    armed_ = false;
    if (count_ == 0) {
        resumed_ = false;
        return;
    }
    // Woken early (an earlier event was served meanwhile): at the next
    // event, unless resumed (resume()), from the present on.
    if (front().t > now && !(resumed_ && delivers_ == 0)) {
        resumed_ = false;
        arm(front().t, now);
        return;
    }
    // Another process runnable at this time may still post for it, or a
    // thread of software waits for its turn at it: serve once none does (at
    // the end of the instant, src/core/instant_end.hpp). The time to the
    // next activity is zero exactly when one is pending now (one call
    // where two asked the kernel the same).
    timed_seen_ = timed_notifications::made();
    const sc_time ahead = sc_core::sc_time_to_pending_activity();
    if (ahead == sc_core::SC_ZERO_TIME || InstantEnd::get().asked()) {
        ++deferrals_;
        InstantEnd::get().request(end_, InstantEnd::HopQueue);
        return;
    }
    // Every event before the next time another process has something to do,
    // in order: none can post for those times. A handler may post more
    // (at or after its own time), which take their place in the same order,
    // and may wake a process (woke()), which brings that time closer.
    if (now >= limit_)
        throw std::logic_error(std::string(name()) + ": woken at " + now.to_string() +
                               ", at or past the end of its window, " + limit_.to_string());
    resumed_ = false;
    horizon_ = std::min(now + ahead, limit_);
    if (!(front().t < horizon_)) {   // (resumed: another process acts first)
        arm(front().t, now);
        return;
    }
    serving_ = true;
    await_resume_ = false;
    plain_ = horizon_;
    resuming_ = sc_core::sc_max_time();
    serve_events();
    serving_ = false;
    if (served_ >= look_at_) adapt(now);
    // Stopped for a thread that resumes it (woke_resuming), before anything
    // else: it wakes the queue.
    if (count_ > 0 && resuming_ < plain_ && delivers_ == 0) await_resume_ = true;
    else if (count_ > 0) arm(front().t, now);
    else if (reach_ > now) arm(reach_, now);
}

}   // namespace vrdmasim
