// Generalized active target synchronisation of the library's windows
// (one_sided.hpp; workloads/mpi/README.md "One-sided"): MPI_Win_post,
// MPI_Win_start, MPI_Win_complete, MPI_Win_wait and MPI_Win_test, as Open
// MPI's osc components carry them out (ompi/mca/osc/rdma/
// osc_rdma_active_target.c, osc/pt2pt/osc_pt2pt_active_target.c): post
// notifies each origin of its group ("post"); start waits until every
// target of its group has notified it (not under MPI_MODE_NOCHECK, with
// which post notifies no one either: ompi_osc_rdma_post_atomic,
// ompi_osc_rdma_start_atomic); complete completes the epoch's operations
// at their targets (ompi_osc_rdma_sync_rdma_complete, a flush) and then
// notifies each target ("complete"); wait returns once every origin of
// the post's group has, and test is wait that does not block (progress
// once, as ompi_osc_rdma_test_atomic). The notifications are messages of
// the library's two-sided endpoint (osc/pt2pt's control messages: the
// small-message path a fence's barrier takes), 8 bytes each, so they take
// the network's time, and the simulation orders every rank's epochs,
// whatever order the real processes call in.
//
// A rank in its own group (MPI allows it) notifies itself as osc/rdma
// does, locally and at no cost (open-mpi/ompi, ompi/mca/osc/rdma/
// osc_rdma_active_target.c: ompi_osc_rdma_post_atomic's post to itself
// is ompi_osc_rdma_handle_post, a note in its own state, and
// ompi_osc_rdma_complete_atomic's complete to a peer whose state is local
// an ompi_osc_rdma_counter_add, a CPU atomic): no message, no simulated
// time, counted in neither pscw_notifications nor msg.self_sends. An empty
// group (MPI_GROUP_EMPTY) notifies no one and waits for no one (the same
// functions return at once for it). Erroneous epochs (MPI 4.1 section
// 12.5.2: a post or start while the rank's exposure or access epoch of the
// window is open, a complete without a start, a wait or test without a
// post) stop the run, refused (Erroneous, exit status 2); a start or wait
// that can never return (its own post or complete still to come from the
// rank itself) stops it as the deadlock it is; one waiting for another
// rank that never notifies ends as every deadlock does (at
// sim.time-limit), its error naming the call and whom it waits for
// (waiting(), MpiWorkload::stalled).
//
// MPI_MODE_NOSTORE and MPI_MODE_NOPUT are not read: they let an
// implementation skip making the window's public and private copies agree
// (a cache flush, osc/rdma does nothing for them either); the model keeps
// one copy, so nothing it times depends on them.
#include <algorithm>
#include <stdexcept>

#include "library/messaging/endpoint.hpp"
#include "workloads/mpi/one_sided.hpp"

namespace vrdmasim {

using mpiwire::Call;
using mpiwire::Op;
using mpiwire::Reply;

namespace {
constexpr std::uint64_t kNotification = 8;   // osc/pt2pt's post and complete headers, 8 bytes
// The notifications' tags: bit 47 above the context's program tags (below
// bit 40, where its MPI_ANY_TAG matches) and its collectives' (bit 40 and
// a count), bit 46 a "complete", the window below bit 40.
constexpr std::uint64_t kNotificationTag = std::uint64_t(1) << 47, kCompleteTag = std::uint64_t(1) << 46;

std::string who(unsigned rank, std::uint64_t win) {
    return "mpi: rank " + std::to_string(rank) + ", window " + std::to_string(win) + ": ";
}
}   // namespace

std::uint64_t MpiOneSided::notification_tag(unsigned rank, std::uint64_t win, bool complete) const {
    if (win >= (std::uint64_t(1) << 40)) throw std::logic_error("mpi: a window id above the notifications' tags");
    return coll::Communicator::p2p_tag(windows_.at(rank, win).ctx, 0) | kNotificationTag |
           (complete ? kCompleteTag : 0) | win;
}

std::uint64_t MpiOneSided::notification_word(RdmaProcess& app, unsigned rank, unsigned from) {
    ActiveTarget& me = active_[rank];
    if (!me.words) {
        // The library's words: one a world rank to receive into, then the
        // one sent from (which holds this rank's world rank + 1).
        me.words = app.alloc(kNotification * (apps_.size() + 1), true);
        const std::uint64_t mine = rank + 1;
        if (!app.debug_write(me.words + kNotification * apps_.size(), reinterpret_cast<const unsigned char*>(&mine),
                             kNotification))
            throw std::logic_error("mpi: the library's notification word cannot be written");
    }
    return me.words + kNotification * from;
}

void MpiOneSided::active_target(RdmaProcess& app, unsigned rank, const Call& c, const std::vector<std::uint64_t>& group,
                                Reply& r) {
    const RdmaProcess::InLibrary in(app);   // a call of the library's (in-call progress)
    const Op op = static_cast<Op>(c.op);
    std::vector<unsigned> ranks;   // the group's, as world ranks
    for (const std::uint64_t g : group) ranks.push_back(windows_.world_of(rank, c.win, static_cast<std::int32_t>(g)));
    switch (op) {
    case Op::WinPost: post(app, rank, c, ranks); return;
    case Op::WinStart: start(app, rank, c, ranks); return;
    case Op::WinComplete: complete_access(app, rank, c.win); return;
    case Op::WinWait: end_exposure(app, rank, c.win, false); return;
    case Op::WinTest: r.flag = end_exposure(app, rank, c.win, true); return;
    default: break;
    }
    throw std::logic_error("mpi: a call that is not an active target one served as one");
}

void MpiOneSided::post(RdmaProcess& app, unsigned rank, const Call& c, const std::vector<unsigned>& origins) {
    ActiveTarget& me = active_[rank];
    if (me.exposed.count(c.win))
        throw Erroneous(who(rank, c.win) +
                        "MPI_Win_post in an exposure epoch not ended by MPI_Win_wait or MPI_Win_test (erroneous in "
                        "MPI: MPI 4.1 section 12.5.2)");
    msg::Endpoint& ep = *eps_.at(app.node());
    Exposure& x = me.exposed[c.win];
    // Each other origin's "complete" received into its word when it comes.
    for (const unsigned o : origins) {
        if (o == rank) {
            x.self = true;   // its complete a local note (complete_access())
            continue;
        }
        x.origins.push_back(o);
        x.completes.push_back(ep.irecv(nodes_.at(o), notification_tag(rank, c.win, true),
                                       notification_word(app, rank, o), kNotification));
    }
    if (c.root & mpiwire::kNoCheck) return;   // the starts wait for no post
    if (x.self) ++me.self_posts[c.win];   // ompi_osc_rdma_handle_post of itself: no message
    const std::uint64_t from = notification_word(app, rank, static_cast<unsigned>(apps_.size()));
    for (const unsigned o : x.origins) {
        x.posts.push_back(ep.isend(nodes_.at(o), notification_tag(rank, c.win, false), from, kNotification));
        counter("pscw_notifications", "MPI_Win_post's and MPI_Win_complete's notifications sent, every rank's").inc();
    }
}

void MpiOneSided::start(RdmaProcess& app, unsigned rank, const Call& c, const std::vector<unsigned>& targets) {
    ActiveTarget& me = active_[rank];
    if (me.access.count(c.win))
        throw Erroneous(who(rank, c.win) +
                        "MPI_Win_start in an access epoch not ended by MPI_Win_complete (erroneous in MPI: MPI 4.1 "
                        "section 12.5.2)");
    me.access[c.win] = targets;
    if (c.root & mpiwire::kNoCheck) return;   // every target has posted already (the program says)
    if (std::find(targets.begin(), targets.end(), rank) != targets.end()) {
        unsigned& own = me.self_posts[c.win];
        if (own == 0)
            throw std::runtime_error(who(rank, c.win) +
                                     "deadlock: MPI_Win_start with the rank itself in its group, before its own "
                                     "MPI_Win_post to itself: the start waits for that post (as osc/rdma's does), "
                                     "which only this rank, waiting, could make");
        --own;
    }
    msg::Endpoint& ep = *eps_.at(app.node());
    for (const unsigned t : targets) {
        if (t == rank) continue;
        const std::uint64_t word = notification_word(app, rank, t);
        me.waiting = "the MPI_Win_post of rank " + std::to_string(t) + " on window " + std::to_string(c.win);
        const msg::Status st = ep.recv(nodes_.at(t), notification_tag(rank, c.win, false), word, kNotification);
        std::uint64_t v = 0;
        if (!st.ok || !app.debug_read(word, reinterpret_cast<unsigned char*>(&v), kNotification) || v != t + 1)
            throw std::logic_error(who(rank, c.win) + "rank " + std::to_string(t) + "'s post did not arrive whole");
    }
    me.waiting.clear();
}

void MpiOneSided::complete_access(RdmaProcess& app, unsigned rank, std::uint64_t win) {
    ActiveTarget& me = active_[rank];
    const auto it = me.access.find(win);
    if (it == me.access.end())
        throw Erroneous(who(rank, win) +
                        "MPI_Win_complete without an MPI_Win_start (erroneous in MPI: MPI 4.1 section 12.5.2)");
    const std::vector<unsigned> targets = std::move(it->second);
    me.access.erase(it);
    msg::Endpoint& ep = *eps_.at(app.node());
    // The epoch's operations completed at their targets, then each target
    // told (itself by a local note); the notifications' sends ended
    // (eager: copied out).
    for (const unsigned t : targets) complete(app, rank, win, t);
    const std::uint64_t from = notification_word(app, rank, static_cast<unsigned>(apps_.size()));
    std::vector<msg::Endpoint::Request> sends;
    for (const unsigned t : targets) {
        if (t == rank) {
            ++me.self_completes[win];   // osc/rdma's ompi_osc_rdma_counter_add on its own state
            continue;
        }
        sends.push_back(ep.isend(nodes_.at(t), notification_tag(rank, win, true), from, kNotification));
        counter("pscw_notifications", "MPI_Win_post's and MPI_Win_complete's notifications sent, every rank's").inc();
    }
    for (const msg::Endpoint::Request q : sends)
        if (!ep.wait(q).ok) throw std::runtime_error(who(rank, win) + "a complete notification failed");
}

bool MpiOneSided::end_exposure(RdmaProcess& app, unsigned rank, std::uint64_t win, bool test) {
    ActiveTarget& me = active_[rank];
    const auto it = me.exposed.find(win);
    if (it == me.exposed.end())
        throw Erroneous(who(rank, win) + (test ? "MPI_Win_test" : "MPI_Win_wait") +
                        " without an MPI_Win_post (erroneous in MPI: MPI 4.1 section 12.5.2)");
    Exposure& x = it->second;
    msg::Endpoint& ep = *eps_.at(app.node());
    const bool own = !x.self || me.self_completes[win] > 0;   // its own complete made, if it is an origin
    if (test) {
        // Progress once, then whether every origin's "complete" has come.
        ep.poll();
        if (!own) return false;
        for (const msg::Endpoint::Request q : x.completes)
            if (ep.first_done({q}) != 0) return false;
    } else if (!own) {
        throw std::runtime_error(who(rank, win) +
                                 "deadlock: MPI_Win_wait with the rank itself among its origins, before its own "
                                 "MPI_Win_complete: the wait waits for that complete, which only this rank, "
                                 "waiting, could make");
    }
    for (std::size_t i = 0; i < x.completes.size(); ++i) {
        const unsigned o = x.origins[i];
        me.waiting = "the MPI_Win_complete of rank " + std::to_string(o) + " on window " + std::to_string(win);
        const msg::Status st = ep.wait(x.completes[i]);
        std::uint64_t v = 0;
        if (!st.ok ||
            !app.debug_read(notification_word(app, rank, o), reinterpret_cast<unsigned char*>(&v), kNotification) ||
            v != o + 1)
            throw std::logic_error(who(rank, win) + "rank " + std::to_string(o) + "'s complete did not arrive whole");
    }
    me.waiting.clear();
    for (const msg::Endpoint::Request q : x.posts)
        if (!ep.wait(q).ok) throw std::runtime_error(who(rank, win) + "a post notification failed");
    if (x.self) --me.self_completes[win];
    me.exposed.erase(it);
    return true;
}

std::string MpiOneSided::waiting(unsigned rank) const {
    return rank < active_.size() ? active_[rank].waiting : std::string();
}

}   // namespace vrdmasim
