// coll::OneSided: the collectives' steps on one-sided RDMA
// (collective.transport = one-sided; README.md "One-sided"). Where the
// two-sided library sends a message that the receiver matches, here the
// receiver says where its buffer is and the sender writes straight into it:
//
//   ready   the receiver registers its buffer (rdma.strategy) and writes
//           {sequence, address, length} into the sender's ready slot for
//           it (a counted write: event counter kMailboxCounter);
//   data    the sender, once that slot holds the step's sequence, RDMA-
//           writes its data there (registered, guarded and posted by the
//           RDMA library) counting on the receiver's kDataCounter, which
//           the receiver waits for;
//   token   an empty message (a barrier's) is a counted write of the
//           number of tokens sent so far into the receiver's token word
//           for this sender; the receiver waits until it reaches its own
//           count.
//
// Or the receiver reads (Mode::Read, workload.operation = read): the
// sender registers its buffer and writes {sequence, address, length} into
// the receiver's slot for it (an offer); the receiver, once it is there,
// RDMA-reads the data into its registered buffer and hands a token back,
// after which the sender's buffer is its own again.
//
// Every wait is the RDMA library's (rdma.completion): a spin, an
// interrupt's wake-up or the handler. No copies, no matching, no eager
// slots: a rank's memory is 40 B of mailbox per rank of the communicator.
#pragma once

#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "src/core/context.hpp"
#include "library/rdma/process.hpp"

namespace vrdmasim::coll {

class OneSided {
public:
    // The receiving channel's event counters the transport uses (the
    // two-sided library's notify = counter takes counter 0; a run needs
    // dma.event-counters above kDataCounter).
    static constexpr unsigned kMailboxCounter = 2, kDataCounter = 3;
    enum class Mode { Write, Read };
    // `nodes[i]`: the node of rank i; this process is rank `rank`.
    // A ConfigError (naming dma.event-counters) when the channels have
    // too few event counters for it.
    OneSided(const Config& c, RdmaProcess& app, std::vector<unsigned> nodes, unsigned rank, Mode mode = Mode::Write);

    // Memory it maps (fit checks) and locks (records), for `ranks` ranks.
    static std::uint64_t mapped_bytes(unsigned ranks);
    static std::vector<std::uint64_t> locked_regions();

    // Map and register the mailbox (before the workload's start barrier);
    // then learn the peers' (the out-of-band wire-up, after every rank's
    // setup).
    void setup();
    void connect(const std::vector<OneSided*>& by_rank);
    // The same as values a node publishes (a partitioned run's start
    // barrier carries them): this rank's mailbox (after setup()), and
    // connecting from every other rank's, `mailbox_of(rank)`.
    std::uint64_t mailbox() const { return mailbox_; }
    void connect(const std::function<std::uint64_t(unsigned rank)>& mailbox_of);

    // One step (MPI_Sendrecv's shape): [sbuf, +slen) to rank `to`,
    // [rbuf, +rlen) from rank `from`; either side absent (-1). The two
    // ranks of a transfer agree on its length (a collective's definition).
    void exchange(int to, std::uint64_t sbuf, std::uint64_t slen, int from, std::uint64_t rbuf, std::uint64_t rlen);

    // Data writes and ready and token writes this rank posted.
    std::uint64_t data_writes() const { return data_writes_; }
    std::uint64_t control_writes() const { return control_writes_; }

private:
    static constexpr std::uint64_t kReadyBytes = 32, kTokenBytes = 8;
    std::uint64_t ready_slot(std::uint64_t base, unsigned rank) const { return base + rank * kReadyBytes; }
    std::uint64_t token_word(std::uint64_t base, unsigned rank) const {
        return base + nodes_.size() * kReadyBytes + rank * kTokenBytes;
    }
    // A small counted write of `len` bytes staged at `src` to `dst` of
    // rank `to`'s mailbox; its completion record at `record`.
    void post_control(unsigned to, std::uint64_t src, std::uint64_t dst, std::uint64_t len, std::uint64_t record);
    std::uint64_t data_records(std::uint64_t len);
    // The two forms of exchange().
    void exchange_write(int to, std::uint64_t sbuf, std::uint64_t slen, int from, std::uint64_t rbuf,
                        std::uint64_t rlen);
    void exchange_read(int to, std::uint64_t sbuf, std::uint64_t slen, int from, std::uint64_t rbuf,
                       std::uint64_t rlen);
    // Wait until the slot of rank `peer` in this rank's mailbox holds the
    // next sequence; its {address, length}.
    std::pair<std::uint64_t, std::uint64_t> take_slot(unsigned peer, std::uint64_t slen, const char* what);
    // A token to rank `to`; wait for the next token of rank `from`.
    void send_token(unsigned to, std::uint64_t record);
    void await_token(unsigned from);
    // Register a buffer the engine writes (`write`) or reads for one
    // transfer, as rdma.strategy says; an error if it cannot be.
    void register_buffer(std::uint64_t buf, std::uint64_t len, bool write);
    // Write {sequence, address, length} into this rank's slot at rank `to`.
    void offer_slot(unsigned to, std::uint64_t addr, std::uint64_t len, std::uint64_t record);

    RdmaProcess& app_;
    const std::vector<unsigned> nodes_;
    const unsigned rank_;
    const Mode mode_;
    std::uint64_t mailbox_ = 0;   // ready slots, then token words, one each per rank
    std::uint64_t staging_ = 0;   // the ready record and the token count sent
    std::uint64_t records_ = 0;   // the ready's and the token's completion records
    std::uint64_t data_records_ = 0, data_records_len_ = 0;
    std::vector<std::uint64_t> remote_;   // by rank: its mailbox
    std::vector<std::uint64_t> ready_sent_, ready_seen_;   // by peer: slots written at it, taken from it
    std::vector<std::uint64_t> tokens_sent_, tokens_seen_;   // by peer
    std::uint64_t data_in_ = 0;   // data writes this rank waited for
    std::uint64_t data_writes_ = 0, control_writes_ = 0;
};

}   // namespace vrdmasim::coll
