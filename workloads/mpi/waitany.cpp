// MPI_Waitany over point-to-point and non-blocking collective requests
// (waitany.hpp).
#include "workloads/mpi/waitany.hpp"

#include "library/rdma/wake.hpp"
#include "src/core/instant_end.hpp"

namespace vrdmasim {

std::size_t waitany(RdmaProcess& app, msg::Endpoint& ep, const std::vector<WaitanyRequest>& list) {
    // Inside the library the whole wait, for in-call progress too (a
    // collective's rounds go on while the program waits).
    const RdmaProcess::InLibrary in(app);
    // The point-to-point requests (and where they are listed), and the
    // events the collectives' ends notify.
    std::vector<msg::Endpoint::Request> p2p;
    std::vector<std::size_t> p2p_at;
    std::vector<sc_core::sc_event*> ends;
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (list[i].comm) {
            ends.push_back(&list[i].collective->ended.get());
        } else {
            p2p.push_back(list[i].message);
            p2p_at.push_back(i);
        }
    }
    // One look, at this moment: the first listed request complete (`p`
    // the first point-to-point one, as the endpoint's progress found
    // them), or list.size().
    const auto look = [&](std::size_t p) {
        const std::size_t first = p < p2p.size() ? p2p_at[p] : list.size();
        for (std::size_t i = 0; i < first; ++i)
            if (list[i].comm && list[i].comm->test(list[i].collective)) return i;
        return first;
    };
    const auto collective_done = [&] {
        for (const WaitanyRequest& q : list)
            if (q.comm && q.collective->done) return true;
        return false;
    };
    for (;;) {
        // Progress, then asleep until a notification or a collective's end.
        const Wake wake(collective_done, ends);
        std::size_t got = 0;
        if (!p2p.empty()) {
            got = look(ep.wait_any(p2p));
        } else {
            app.sync_time();
            if (!collective_done()) {
                sc_core::sc_event_or_list none;
                wake.sleep(none);
            }
            got = look(0);
        }
        if (got >= list.size()) continue;
        // Of several complete at this time, the first listed: a
        // collective's thread, or progress it makes, may still end an
        // earlier one at this time, after this look. So, with a collective
        // listed and an earlier request open, look again once this time
        // has nothing else to do (at what every thread's progress found: no
        // progress of its own, which would cost a poll).
        if (got > 0 && !ends.empty()) {
            InstantEnd::get().settle();
            got = look(p2p.empty() ? 0 : ep.first_done(p2p));
        }
        return got;
    }
}

}   // namespace vrdmasim
