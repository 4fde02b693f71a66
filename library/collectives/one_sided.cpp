// coll::OneSided: collectives' steps as RDMA writes with event counters
// (one_sided.hpp, README.md "One-sided").
#include "library/collectives/one_sided.hpp"

#include <stdexcept>
#include <string>

namespace vrdmasim::coll {

OneSided::OneSided(const Config& c, RdmaProcess& app, std::vector<unsigned> nodes, unsigned rank, Mode mode)
    : app_(app),
      nodes_(std::move(nodes)),
      rank_(rank),
      mode_(mode),
      ready_sent_(nodes_.size(), 0),
      ready_seen_(nodes_.size(), 0),
      tokens_sent_(nodes_.size(), 0),
      tokens_seen_(nodes_.size(), 0) {
    if (rank_ >= nodes_.size()) throw std::logic_error("coll::OneSided: rank beyond the ranks");
    if (app_.event_counters() <= kDataCounter)
        throw c.refuse("dma.event-counters",
                       "collective.transport = one-sided counts on event counters " + std::to_string(kMailboxCounter) +
                           " and " + std::to_string(kDataCounter) +
                           " of the receiving channel: " + std::to_string(kDataCounter + 1) + " or more are needed");
}

std::uint64_t OneSided::mapped_bytes(unsigned ranks) {
    const auto pages = [](std::uint64_t b) { return (b + 4095) / 4096 * 4096; };
    std::uint64_t b = pages(ranks * (kReadyBytes + kTokenBytes)) + pages(kReadyBytes + kTokenBytes);
    for (std::uint64_t r : locked_regions()) b += pages(r);
    return b;
}

std::vector<std::uint64_t> OneSided::locked_regions() { return {2 * sizeof(CompletionRecord)}; }

void OneSided::setup() {
    const std::uint64_t n = nodes_.size();
    const std::uint64_t box = n * (kReadyBytes + kTokenBytes);
    // The mailbox is memory the peers write, polled by this rank: mapped
    // populated and registered for the run as a receive area is; the
    // staging words are the sources of this rank's own ready and token
    // writes.
    mailbox_ = app_.alloc(box, true);
    app_.watch_polled(mailbox_, box);
    staging_ = app_.alloc(kReadyBytes + kTokenBytes, true);
    if (!app_.register_receive(mailbox_, box) || !app_.register_buffer(staging_, kReadyBytes + kTokenBytes, false))
        throw std::runtime_error(app_.group() +
                                 ": could not register the one-sided collectives' mailbox (rdma.strategy)");
    records_ = app_.alloc_locked(2 * sizeof(CompletionRecord));
}

void OneSided::connect(const std::vector<OneSided*>& by_rank) {
    remote_.assign(nodes_.size(), 0);
    for (unsigned q = 0; q < nodes_.size(); ++q) {
        if (q == rank_) continue;
        if (q >= by_rank.size() || !by_rank[q] || !by_rank[q]->mailbox_)
            throw std::logic_error(app_.group() + ": no one-sided collectives' mailbox at rank " + std::to_string(q));
        remote_[q] = by_rank[q]->mailbox_;
    }
}

void OneSided::connect(const std::function<std::uint64_t(unsigned rank)>& mailbox_of) {
    remote_.assign(nodes_.size(), 0);
    for (unsigned q = 0; q < nodes_.size(); ++q)
        if (q != rank_) remote_[q] = mailbox_of(q);
}

void OneSided::post_control(unsigned to, std::uint64_t src, std::uint64_t dst, std::uint64_t len,
                            std::uint64_t record) {
    // A full channel queue: wait for one more completion, as RdmaProcess::send does.
    while (!app_.post_write(src, nodes_.at(to), dst, len, 0, record, kFlagCounter, kMailboxCounter))
        app_.wait_tx(app_.tx_completions() + 1);
    ++control_writes_;
}

std::uint64_t OneSided::data_records(std::uint64_t len) {
    const std::uint64_t need = app_.records_for(len) * sizeof(CompletionRecord);
    if (need > data_records_len_) {
        data_records_ = app_.alloc_locked(need);
        data_records_len_ = need;
    }
    return data_records_;
}

void OneSided::register_buffer(std::uint64_t buf, std::uint64_t len, bool write) {
    VmError err = VmError::Ok;
    if (!app_.register_buffer(buf, len, write, &err))
        throw std::runtime_error(app_.group() + ": could not register a collective's " + (write ? "receive" : "send") +
                                 " buffer (rdma.strategy): " + to_string(err));
}

void OneSided::offer_slot(unsigned to, std::uint64_t addr, std::uint64_t len, std::uint64_t record) {
    const std::uint64_t slot[4] = {++ready_sent_[to], addr, len, 0};
    if (!app_.debug_write(staging_, reinterpret_cast<const unsigned char*>(slot), sizeof(slot)))
        throw std::logic_error(app_.group() + ": the one-sided mailbox's staging is unmapped");
    post_control(to, staging_, ready_slot(remote_.at(to), rank_), kReadyBytes, record);
}

std::pair<std::uint64_t, std::uint64_t> OneSided::take_slot(unsigned peer, std::uint64_t length, const char* what) {
    const std::uint64_t want = ++ready_seen_[peer];
    const std::uint64_t slot = ready_slot(mailbox_, peer);
    app_.wait_event([&] { return app_.load_polled(slot) >= want; }, what);
    const std::uint64_t seq = app_.load_polled(slot), addr = app_.load_polled(slot + 8),
                        len = app_.load_polled(slot + 16);
    if (seq != want || len != length)
        throw std::runtime_error(app_.group() + ": one-sided collective: rank " + std::to_string(peer) + " offers " +
                                 std::to_string(len) + " B (step " + std::to_string(seq) + ") where this rank has " +
                                 std::to_string(length) + " B (step " + std::to_string(want) + ")");
    return {addr, len};
}

void OneSided::send_token(unsigned to, std::uint64_t record) {
    const std::uint64_t count = ++tokens_sent_[to];
    if (!app_.debug_write(staging_ + kReadyBytes, reinterpret_cast<const unsigned char*>(&count), 8))
        throw std::logic_error(app_.group() + ": the one-sided mailbox's staging is unmapped");
    post_control(to, staging_ + kReadyBytes, token_word(remote_.at(to), rank_), kTokenBytes, record);
}

void OneSided::await_token(unsigned from) {
    const std::uint64_t want = ++tokens_seen_[from];
    const std::uint64_t word = token_word(mailbox_, from);
    app_.wait_event([&] { return app_.load_polled(word) >= want; }, "coll-token");
}

void OneSided::exchange(int to, std::uint64_t sbuf, std::uint64_t slen, int from, std::uint64_t rbuf,
                        std::uint64_t rlen) {
    if (mode_ == Mode::Read) exchange_read(to, sbuf, slen, from, rbuf, rlen);
    else exchange_write(to, sbuf, slen, from, rbuf, rlen);
}

void OneSided::exchange_write(int to, std::uint64_t sbuf, std::uint64_t slen, int from, std::uint64_t rbuf,
                              std::uint64_t rlen) {
    const std::uint64_t ready_rec = records_, token_rec = records_ + sizeof(CompletionRecord);
    bool ready_posted = false, token_posted = false;
    std::uint64_t guard = 0, data_target = 0;
    const unsigned src = static_cast<unsigned>(from), dst = static_cast<unsigned>(to);
    // 1. The receive: its buffer registered and guarded, the sender told
    // where it is (posted before this rank waits for anything, so that two
    // ranks exchanging both find their partner's ready).
    if (from >= 0 && rlen > 0) {
        register_buffer(rbuf, rlen, true);
        data_target = ++data_in_;
        guard = app_.guard(rbuf, rlen, true, [this, data_target] { app_.wait_counter(kDataCounter, data_target); });
        offer_slot(src, rbuf, rlen, ready_rec);
        ready_posted = true;
    }
    // 2. The send: data into the receiver's buffer once it said where, or
    // an empty message's token.
    RdmaProcess::Message m;
    bool data_sent = false;
    if (to >= 0 && slen > 0) {
        const auto [addr, len] = take_slot(dst, slen, "coll-ready");
        m.src = sbuf;
        m.dst = addr;
        m.len = len;
        m.tag = ready_seen_[dst];
        m.dst_node = nodes_.at(dst);
        m.records = data_records(slen);
        m.flags = kFlagCounter;
        m.counter = kDataCounter;
        if (!app_.send(m))
            throw std::runtime_error(
                app_.group() +
                ": could not register a collective's send buffer (rdma.strategy): " + to_string(m.error));
        ++data_writes_;
        data_sent = true;
    } else if (to >= 0) {
        send_token(dst, token_rec);
        token_posted = true;
    }
    // 3. The receive's end: the data counted in, or the token seen.
    if (from >= 0 && rlen > 0) {
        app_.wait_counter(kDataCounter, data_target);
        app_.unguard(guard);
        app_.deregister(rbuf, rlen);
    } else if (from >= 0) {
        await_token(src);
    }
    // 4. This rank's own writes complete (its staging and send buffer are
    // its own again).
    if (data_sent) {
        const CompletionRecord r = app_.complete(m);
        if (r.status != kStatusOk)
            throw std::runtime_error(app_.group() + ": a one-sided collective's write to rank " + std::to_string(to) +
                                     " failed");
    }
    for (auto [posted, rec] : {std::pair{ready_posted, ready_rec}, std::pair{token_posted, token_rec}})
        if (posted && app_.wait_record(rec).status != kStatusOk)
            throw std::runtime_error(app_.group() + ": a one-sided collective's control write failed");
}

void OneSided::exchange_read(int to, std::uint64_t sbuf, std::uint64_t slen, int from, std::uint64_t rbuf,
                             std::uint64_t rlen) {
    const std::uint64_t offer_rec = records_, token_rec = records_ + sizeof(CompletionRecord);
    bool offer_posted = false, token_posted = false;
    std::uint64_t guard = 0;
    const unsigned src = static_cast<unsigned>(from), dst = static_cast<unsigned>(to);
    // 1. The send: its buffer registered for the engine to read and
    // guarded, the receiver told where it is (before this rank waits for
    // anything); an empty message is a token.
    if (to >= 0 && slen > 0) {
        register_buffer(sbuf, slen, false);
        // The program may read its source while the peer reads it; it may
        // not write it until the peer's token says the read is done.
        // (The peer's tokens to this rank come in its program's order: an
        // empty message it sends back in this exchange comes first.)
        const std::uint64_t done = tokens_seen_[dst] + (from == to && rlen == 0 ? 2 : 1);
        guard = app_.guard(sbuf, slen, false, [this, dst, done] {
            const std::uint64_t word = token_word(mailbox_, dst);
            app_.wait_event([&] { return app_.load_polled(word) >= done; }, "coll-token");
        });
        offer_slot(dst, sbuf, slen, offer_rec);
        offer_posted = true;
        ++data_writes_;
    } else if (to >= 0) {
        send_token(dst, token_rec);
        token_posted = true;
    }
    // 2. The receive: read what the sender offers into the registered
    // buffer, then tell it the read is done.
    if (from >= 0 && rlen > 0) {
        const auto [addr, len] = take_slot(src, rlen, "coll-offer");
        register_buffer(rbuf, rlen, true);
        const std::uint64_t rec = data_records(len);
        app_.get(nodes_.at(src), addr, rbuf, len, ready_seen_[src], rec);
        const CompletionRecord r = app_.wait_record(rec);
        if (r.status != kStatusOk)
            throw std::runtime_error(app_.group() + ": a one-sided collective's read from rank " +
                                     std::to_string(from) + " failed");
        app_.deregister(rbuf, rlen);
        if (token_posted && app_.wait_record(token_rec).status != kStatusOk)
            throw std::runtime_error(app_.group() + ": a one-sided collective's control write failed");
        send_token(src, token_rec);
        token_posted = true;
    } else if (from >= 0) {
        await_token(src);
    }
    // 3. The send's end: the receiver's token (its read is done).
    if (to >= 0 && slen > 0) {
        await_token(dst);
        app_.unguard(guard);
        app_.deregister(sbuf, slen);
    }
    for (auto [posted, rec] : {std::pair{offer_posted, offer_rec}, std::pair{token_posted, token_rec}})
        if (posted && app_.wait_record(rec).status != kStatusOk)
            throw std::runtime_error(app_.group() + ": a one-sided collective's control write failed");
}

}   // namespace vrdmasim::coll
