// Non-blocking collectives (README.md "Non-blocking collectives"): a
// collective started now and waited for later, run by a thread of the
// library's for the rank's process (sc_spawn) in simulated time of its own
// while the caller goes on.
#define SC_INCLUDE_DYNAMIC_PROCESSES   // sc_spawn
#include <stdexcept>

#include "library/collectives/communicator.hpp"
#include "src/core/software_turns.hpp"

namespace vrdmasim::coll {

const char* Communicator::kOneSidedNonBlocking =
    "non-blocking collectives are built on the two-sided transport only: the one-sided one matches the steps "
    "between two ranks by a sequence each rank counts in the order it makes them (one ready slot per pair), which "
    "two collectives in flight at once would make in different orders at the two ends";

Communicator::Request Communicator::start(const std::function<void(Communicator&)>& call) {
    const RdmaProcess::InLibrary in(app_);
    if (os_) throw std::runtime_error(app_.group() + ": " + kOneSidedNonBlocking);
    // The call's own communicator: this one's ranks and endpoint, the next
    // call number (its tag: every rank starts the same calls in the same
    // order), no scratch but a spare one an ended call gave back, no
    // counts yet.
    auto own = std::make_shared<Communicator>(*this);
    own->started_on_ = this;
    own->tag_taken_ = false;
    own->spare_scratch_.clear();
    own->scratch_ = own->scratch_len_ = 0;
    if (!spare_scratch_.empty()) {
        own->scratch_ = spare_scratch_.back().first;
        own->scratch_len_ = spare_scratch_.back().second;
        spare_scratch_.pop_back();
    }
    own->messages_ = own->sent_bytes_ = own->reduced_bytes_ = 0;
    own->a_.clear();
    own->b_.clear();
    ++call_;   // the call's number taken here, in the caller's order
    // The request's event and the thread under the process's module (which
    // lives as long as the system), not under the caller's thread.
    const UnderModule under(&app_);
    auto pending = std::make_shared<Pending>();
    const sc_core::sc_time at = app_.now();
    const std::string name = "coll_c" + std::to_string(context_ >> 48) + "_" + std::to_string(threads_++);
    sc_core::sc_spawn(
        [this, own, pending, call, at] {
            // The rank's software: its turns as its program's thread takes them.
            software_turns::enter(software_turns::node_of(app_.group()));
            app_.enter_thread(at);
            call(*own);
            if (!own->tag_taken_) throw std::logic_error("coll::Communicator: a non-blocking call made no collective");
            app_.leave_thread();
            messages_ += own->messages_;
            sent_bytes_ += own->sent_bytes_;
            reduced_bytes_ += own->reduced_bytes_;
            if (own->scratch_len_) spare_scratch_.emplace_back(own->scratch_, own->scratch_len_);
            pending->done = true;
            pending->ended.notify(sc_core::SC_ZERO_TIME);
            software_turns::leave();
        },
        name.c_str());
    return pending;
}

bool Communicator::test(const Request& r) {
    const RdmaProcess::InLibrary in(app_);   // in-call progress: a round waiting for this call starts now
    // The caller's clock may run ahead of the simulation's: brought back
    // first, so that a call that ended by the caller's now() is seen.
    if (!r->done) app_.sync_time();
    return r->done;
}

void Communicator::wait(const Request& r) {
    const RdmaProcess::InLibrary in(app_);   // in-call progress: the rounds go on while the program waits
    if (!r->done) app_.wait_until([&r] { return r->done; }, r->ended.get());
}

}   // namespace vrdmasim::coll
