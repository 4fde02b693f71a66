// Endpoint: one process's two-sided messaging library (isend/irecv/wait/
// test by source and tag, with wildcards) built on the one-sided engine, as
// RDMA messaging libraries (MPI over RDMA, UCX, libfabric's rxm) build it:
//
//   eager       len <= msg.eager-threshold: the sender copies header and
//               payload into a bounce slot and RDMA-writes it, with a
//               notification, into the slot the receiver keeps for it; the
//               receiver copies it out (matched: into the user buffer;
//               else into the unexpected queue). Credits (credits.hpp) keep
//               a slot from being written before it was copied out.
//   rendezvous  a ready-to-send {tag, len, buffer} goes through a slot;
//               when it matches, the receiver registers its buffer and
//               answers with a clear-to-send holding the buffer's address,
//               and the sender RDMA-writes the data there, each part with a
//               notification: the receive completes when the notifications
//               cover the length (msg.rendezvous = write). Or (read) the
//               receiver pulls the data from the sender's registered buffer
//               with RDMA reads and sends a FIN, which completes the send.
//
// Progress happens inside the library's calls (test, wait): the
// notification ring is read in order, arrivals from each peer are handled
// in that peer's sequence order (non-overtaking), control messages and
// credit returns are sent. See README.md.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "src/core/context.hpp"
#include "src/core/lazy_event.hpp"
#include "library/rdma/process.hpp"
#include "library/messaging/credits.hpp"
#include "library/messaging/matching.hpp"
#include "library/messaging/stats.hpp"
#include "library/messaging/wire.hpp"
#include "src/core/lazy_deque.hpp"

namespace vrdmasim {
namespace msg {

struct Status {
    bool ok = false;
    unsigned source = 0;
    std::uint64_t tag = 0, len = 0;
    // When the library completed the request (its process's time): a send's
    // buffer is the program's again from then, a receive's data is there.
    sc_core::sc_time completed;
    // Its completion's step in the narrated story (empty when nothing is
    // noted): what the program does with the message may follow it.
    Tracer::Cause story{};
    bool cancelled = false;   // a receive withdrawn before it matched (cancel())
};

class Endpoint {
public:
    // `peers`: the nodes this process exchanges messages with (slots,
    // bounce buffers and credits are set up for these only).
    Endpoint(const SimContext& ctx, RdmaProcess& app, std::vector<unsigned> peers);
    ~Endpoint();
    Endpoint(const Endpoint&) = delete;
    Endpoint& operator=(const Endpoint&) = delete;

    // Memory the endpoint maps (for the workloads' fit checks): slots and
    // bounce buffers, and the locked records and ring.
    static std::uint64_t mapped_bytes(const Config& c, std::size_t peers);
    static std::vector<std::uint64_t> locked_regions(const Config& c, std::size_t peers);

    // Map and register the slots, bounce buffers and credit words, and set
    // up the notification ring (before the workload's start barrier).
    void setup();
    // Learn the peers' slot and credit-word addresses (the out-of-band
    // wire-up, after every endpoint's setup).
    void connect(const std::vector<Endpoint*>& by_node);
    // The same wire-up as values a node publishes (a partitioned run's
    // start barrier carries them, workloads/workload.hpp): what this
    // endpoint keeps for each peer (after setup()), and connecting from
    // what each peer keeps for this one: `theirs(peer)` = {its slots for
    // me, its credit word for me}, the peer's offer to this node.
    struct Offer {
        unsigned peer;
        std::uint64_t rx, credit_word;
    };
    std::vector<Offer> offers() const;
    void connect(const std::function<std::pair<std::uint64_t, std::uint64_t>(unsigned peer)>& theirs);

    using Request = std::uint64_t;
    Request isend(unsigned dst, std::uint64_t tag, std::uint64_t buf, std::uint64_t len);
    // `src` may be kAnySource, `tag` kAnyTag or a context's wildcard (matching.hpp).
    Request irecv(unsigned src, std::uint64_t tag, std::uint64_t buf, std::uint64_t len);
    // Progress once; true if the request is complete (then wait() returns at once).
    bool test(Request r);
    // Progress once (an MPI_Test of a request of another library's, as
    // Open MPI's opal_progress polls the network first).
    void poll() {
        const RdmaProcess::InLibrary in(app_);
        progress();
    }
    // Progress until the request completes; its status (the request is freed).
    Status wait(Request r);
    // Progress until one of `rs` completes; its index (wait() on it then
    // returns at once). MPI_Waitany. Under a Wake (library/rdma/wake.hpp)
    // also until its done() holds: then rs.size() if none has.
    std::size_t wait_any(const std::vector<Request>& rs);
    // Progress once; the index of one of `rs` that is complete (wait() on
    // it then returns at once), or rs.size() if none is. MPI_Testany.
    std::size_t test_any(const std::vector<Request>& rs);
    // The index of the first of `rs` complete so far (no progress: what the
    // library's calls, any thread's, found), or rs.size() if none is.
    std::size_t first_done(const std::vector<Request>& rs) const;
    // Progress once; whether a message a receive of (`src`, `tag`) would
    // take has arrived, and its source, tag and length (MPI_Iprobe). The
    // message stays for the receive.
    bool iprobe(unsigned src, std::uint64_t tag, Status& out);
    // Progress until such a message has arrived (MPI_Probe).
    Status probe(unsigned src, std::uint64_t tag);
    // Whether receive `r` has matched a message, and the message's source,
    // tag and length (no progress: what the library's calls so far found).
    bool matched(Request r, Status& out) const;
    // MPI_Cancel of receive `r`: withdrawn if it has not matched (true: the
    // request is complete, its status cancelled), else left to complete as
    // it would (false). No progress, as Open MPI's cancel.
    bool cancel(Request r);
    Status send(unsigned dst, std::uint64_t tag, std::uint64_t buf, std::uint64_t len) {
        return wait(isend(dst, tag, buf, len));
    }
    Status recv(unsigned src, std::uint64_t tag, std::uint64_t buf, std::uint64_t len) {
        return wait(irecv(src, tag, buf, len));
    }
    // End of the program: wait for every outstanding write, check that
    // nothing is left (unmatched messages, open requests, unreturned slots
    // are errors), release registrations.
    void finalize();

    // A CPU copy of `bytes` by this process at the library's copy rate
    // (vm.copy-rate): the library's own copies, and a caller's packing of
    // non-contiguous data into the library's buffer (Open MPI's convertor).
    void charge_copy(std::uint64_t bytes);

    RdmaProcess& app() { return app_; }
    std::uint64_t threshold() const { return threshold_; }
    MsgStats& stats() { return stats_; }

private:
    enum class Proto { Eager, Rendezvous };
    struct Part {
        RdmaProcess::Message m;
        bool done = false;
    };
    struct Req {
        bool send = true;
        Proto proto = Proto::Eager;
        unsigned peer = 0;   // send: destination; recv: source asked for (may be kAnySource)
        std::uint64_t tag = 0, buf = 0, len = 0;
        bool done = false, ok = true;
        Status status;
        sc_core::sc_time start;
        // rendezvous
        std::uint64_t bytes_in = 0;   // receiver, write mode: bytes notified so far
        std::vector<Part>
            parts;   // the data transfers: writes at the sender (write mode), reads at the receiver (read mode)
        std::uint64_t peer_req = 0;   // receiver, read mode: the sender's request (its FIN)
        bool registered = false;   // the user buffer registered by this request
        std::uint64_t guard = 0;   // rdma.buffer-guard = mprotect: the user buffer's guard until completion
    };
    struct Outgoing {
        Header h;
        std::uint64_t payload = 0;   // eager: the user buffer to copy from
        Request req = 0;   // eager: completes once copied
        bool stalled = false;   // counted as a credit stall
    };
    struct Unexpected {
        Header h;
        std::vector<unsigned char> data;   // eager payload
    };
    struct Peer {
        unsigned node = 0;
        std::uint64_t rx = 0, bounce = 0;   // my slots for it; my bounce slots to it
        std::uint64_t credit_word = 0;   // where it writes the slots it freed of mine
        std::uint64_t credit_src = 0;   // the word I write to it
        std::uint64_t remote_rx = 0, remote_credit = 0;   // its slots for me, its word for me
        SendCredits out;
        RecvCredits in;
        std::vector<bool> arrived;   // my slots for it: written, not yet handled
        std::vector<bool> bounce_busy;   // my bounce slots: write not yet reaped
        std::uint64_t next_seq = 0;   // the next of its messages to handle
        LazyDeque<Outgoing> queue;   // waiting for a credit, in order
        bool credit_busy = false;   // a credit write in flight
        std::vector<Request> rndv_in;   // write-mode receives from it, data coming
        Peer(std::uint64_t slots) : out(slots), in(slots) {}
    };

    Peer& peer(unsigned node);
    std::uint64_t slot_size() const { return threshold_ + sizeof(Header); }
    std::uint64_t record(unsigned peer_index, std::uint64_t k) const;   // bounce / credit records
    std::uint64_t take_record();
    void give_record(std::uint64_t r);

    void progress();
    void block();
    // One thread at a time in the endpoint's state (progress(), block()'s
    // reaping of rendezvous transfers, posting, cancelling): a non-blocking
    // collective's thread shares the endpoint with the program's
    // (library/collectives). In progress, a thread that finds another in
    // waits until it is idle and returns, to look at its request again (as
    // Open MPI's opal_progress lets one thread in at a time); a post waits
    // its turn. The thread in may enter again (a post's own progress).
    // enter_engine: true if the caller is in (it leaves with leave_engine()).
    bool enter_engine();
    void leave_engine();
    struct InEngine {
        Endpoint& ep;
        const bool in;
        explicit InEngine(Endpoint& e) : ep(e), in(e.enter_engine()) {}
        ~InEngine() {
            if (in) ep.leave_engine();
        }
    };
    struct HoldEngine {
        Endpoint& ep;
        explicit HoldEngine(Endpoint& e) : ep(e) {
            while (!e.enter_engine()) {
            }
        }
        ~HoldEngine() { ep.leave_engine(); }
    };
    void handle_notification(const CompletionRecord& r);
    void handle_slots(Peer& p);
    void send_queued(Peer& p);
    void launch(Peer& p, Outgoing& o);
    void post(std::uint64_t src, unsigned node, std::uint64_t dst, std::uint64_t len, std::uint64_t record);
    void return_credits(Peer& p);
    void reap_bounce(Peer& p, std::uint64_t slot);
    void copy(std::uint64_t from, std::uint64_t to, std::uint64_t len);   // CPU copy in this process
    void complete(Request id, Req& r);
    // rdma.buffer-guard = mprotect: the user buffer of `r` is the program's
    // no more from the post (isend, irecv) until the request completes: a
    // touch waits for the request (the library progresses until it is).
    void guard(Request id, Req& r);
    // A numbered step of the narrated story (a line of the log), following
    // what this process is telling, if anything.
    Tracer::Cause step(const char* name, const std::string& text);

    // eager.cpp
    void eager_send(Req& r, Request id);
    void eager_arrived(Peer& p, const Header& h, std::uint64_t slot_addr);
    void deliver_unexpected_eager(Req& r, Request id, Unexpected& u);
    // self.cpp: messages to this process itself
    void self_send(Req& r, Request id);
    // Send `sid` taken by receive `rid`: one copy completes both.
    void self_deliver(Request sid, Req& s, Request rid, Req& q);
    // A message longer than the receive that matched it (MPI_ERR_TRUNCATE).
    [[noreturn]] void truncated(std::uint64_t len, std::uint64_t room, unsigned src, std::uint64_t tag) const;
    // rendezvous.cpp
    void rndv_send(Req& r, Request id);
    void rts_matched(Peer& p, const Header& h, Request id, Req& r);
    void cts_arrived(Peer& p, const Header& h);
    void data_notified(Peer& p, const CompletionRecord& rec);
    void fin_arrived(Peer& p, const Header& h);
    // The rendezvous data transfers of `r` (writes at the sender, reads at
    // the receiver): reap those complete (all, waiting, if `wait`), and
    // once all are, finish the request. True when it is finished.
    bool finish_parts(Request id, Req& r, bool wait);

    const SimContext& ctx_;
    RdmaProcess& app_;
    std::vector<unsigned> peer_nodes_;
    std::vector<Peer> peers_;
    std::map<unsigned, std::size_t> index_;
    const std::uint64_t threshold_, slots_;
    const bool write_mode_;
    const sc_core::sc_time match_cost_;
    const double copy_rate_;   // bytes per second
    std::uint32_t ring_ = 0;
    std::uint64_t consumed_ = 0;   // ring entries handled
    std::uint64_t events_seen_ = 0;   // EVENT_COUNT at the last look
    std::uint64_t tx_seen_ = ~std::uint64_t(0);   // TX_COMPLETED at the last look for rendezvous writes
    std::uint64_t fixed_records_ = 0;   // per peer: slots bounce records + 1 credit record
    std::vector<std::uint64_t> free_records_;   // for rendezvous writes
    std::map<Request, Req> reqs_;
    const sc_core::sc_process_b* engine_owner_ = nullptr;   // the thread in the engine (depth 0: none)
    unsigned engine_depth_ = 0, engine_waiters_ = 0;
    std::unique_ptr<LazyEvent> engine_idle_;   // made at the first wait, under the process's module
    Request next_req_ = 1;
    MatchQueues match_;
    std::map<std::uint64_t, Unexpected> unexpected_;
    std::uint64_t next_unexpected_ = 1;
    MsgStats stats_;
    Tracer::Track track_;
    std::vector<unsigned char> buf_;
};

}   // namespace msg
}   // namespace vrdmasim
