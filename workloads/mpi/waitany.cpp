// MPI_Waitany, MPI_Testany and MPI_Testall over requests of every kind
// (waitany.hpp).
#include "workloads/mpi/waitany.hpp"

#include <algorithm>

#include "library/rdma/wake.hpp"
#include "src/core/instant_end.hpp"
#include "workloads/mpi/one_sided.hpp"

namespace vrdmasim {

namespace {
using Kind = WaitanyRequest::Kind;

bool any_of_kind(const std::vector<WaitanyRequest>& list, Kind k) {
    return std::any_of(list.begin(), list.end(), [k](const WaitanyRequest& q) { return q.kind == k; });
}

// Whether a collective's or a one-sided request is complete by now, without
// the endpoint's progress (a message's is what progress found: Endpoint's).
bool complete_now(RdmaProcess& app, const WaitanyRequest& q) {
    if (q.kind == Kind::Collective) return q.comm->test(q.collective);
    return q.windows->request_done(app, q.rank, q.rma);
}

// One request tested in turn (MPI_Testany over mixed kinds, MPI_Testall):
// a message by the endpoint's progress; a collective after one poll of the
// network (a test enters the library); a one-sided request by its records,
// the process's clock brought to the simulation's first (at the first one
// tested, and again if a test before it moved the clock) so that every
// record written by now is seen.
bool test_one(RdmaProcess& app, msg::Endpoint& ep, const WaitanyRequest& q, bool& synced) {
    switch (q.kind) {
    case Kind::Message: return ep.test(q.message);
    case Kind::Collective: ep.poll(); return q.comm->test(q.collective);
    case Kind::Rma: break;
    }
    if (!synced || app.now() > sc_core::sc_time_stamp()) app.sync_time();
    synced = true;
    return q.windows->request_done(app, q.rank, q.rma);
}
}   // namespace

std::size_t waitany(RdmaProcess& app, msg::Endpoint& ep, const std::vector<WaitanyRequest>& list) {
    // The point-to-point requests (and where they are listed), and the
    // events the collectives' ends notify.
    std::vector<msg::Endpoint::Request> p2p;
    std::vector<std::size_t> p2p_at;
    std::vector<sc_core::sc_event*> ends;
    for (std::size_t i = 0; i < list.size(); ++i) {
        if (list[i].kind == Kind::Collective) ends.push_back(&list[i].collective->ended.get());
        if (list[i].kind != Kind::Message) continue;
        p2p.push_back(list[i].message);
        p2p_at.push_back(i);
    }
    // Messages only: the endpoint's progress finds them, in list order,
    // and nothing but this thread completes them.
    if (p2p.size() == list.size()) return ep.wait_any(p2p);
    const bool rma = any_of_kind(list, Kind::Rma);
    // Inside the library the whole wait, for in-call progress too (a
    // collective's rounds go on while the program waits).
    const RdmaProcess::InLibrary in(app);
    // One look, at this moment: the first listed request complete (`p`
    // the first point-to-point one, as the endpoint's progress found
    // them), or list.size().
    const auto look = [&](std::size_t p) {
        const std::size_t first = p < p2p.size() ? p2p_at[p] : list.size();
        for (std::size_t i = 0; i < first; ++i)
            if (list[i].kind != Kind::Message && complete_now(app, list[i])) return i;
        return first;
    };
    const auto collective_done = [&] {
        for (const WaitanyRequest& q : list)
            if (q.kind == Kind::Collective && q.collective->done) return true;
        return false;
    };
    for (;;) {
        // Progress, then asleep until each kind's wake-up: a one-sided
        // request's, a record of the rank's channels (as well as every
        // notification the endpoint's progress looks at); else a
        // notification; and a collective's end.
        const Wake wake(collective_done, ends);
        std::size_t got = list.size();
        if (rma) {
            app.wait_event(
                [&] {
                    got = look(p2p.empty() ? 0 : ep.test_any(p2p));
                    return got < list.size();
                },
                "MPI_Waitany");
        } else if (!p2p.empty()) {
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
        // collective's thread, or progress it makes, or the engine's record
        // of a one-sided operation, may still end an earlier one at this
        // time, after this look. So look again once this time has nothing
        // else to do (at what every thread's progress found: no progress
        // of its own, which would cost a poll).
        if (got > 0) {
            InstantEnd::get().settle();
            got = look(p2p.empty() ? 0 : ep.first_done(p2p));
        }
        return got;
    }
}

std::size_t testany(RdmaProcess& app, msg::Endpoint& ep, const std::vector<WaitanyRequest>& list) {
    if (!any_of_kind(list, Kind::Collective) && !any_of_kind(list, Kind::Rma)) {
        std::vector<msg::Endpoint::Request> p2p;
        for (const WaitanyRequest& q : list) p2p.push_back(q.message);
        return ep.test_any(p2p);
    }
    bool synced = false;
    for (std::size_t i = 0; i < list.size(); ++i)
        if (test_one(app, ep, list[i], synced)) return i;
    return list.size();
}

bool testall(RdmaProcess& app, msg::Endpoint& ep, const std::vector<WaitanyRequest>& list) {
    bool all = true, synced = false;
    for (const WaitanyRequest& q : list) all = test_one(app, ep, q, synced) && all;
    return all;
}

}   // namespace vrdmasim
