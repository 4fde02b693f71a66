// The library's one-sided windows (one_sided.hpp; workloads/mpi/README.md
// "One-sided"). The locks are words of the library taken with network
// atomics, as Open MPI's osc/rdma component takes them (osc_rdma_lock.h:
// an exclusive lock compare-and-swaps 0 to its exclusive bit, a shared one
// adds 1 and takes it back while the exclusive bit is set, each retried at
// once).
#include <algorithm>
#include <cstring>
#include <iostream>
#include <stdexcept>
#include <utility>

#include "library/messaging/endpoint.hpp"
#include "workloads/mpi/one_sided.hpp"
#include "workloads/program_buffers.hpp"

namespace vrdmasim {

using mpiwire::Call;
using mpiwire::Op;
using mpiwire::Reply;
using sc_core::sc_time;

namespace {
// The library's locked page of each rank: kRecords completion records of
// the operations in flight, then kLockWords lock words, one a window.
constexpr unsigned kRecords = 64;
constexpr unsigned kLockWords = 256;
constexpr std::uint64_t kRecordBytes = sizeof(CompletionRecord);
static_assert(kRecords * kRecordBytes + kLockWords * 8 <= 4096, "the library's page");
constexpr std::uint64_t kExclusiveBit = 1ull << 32;   // osc/rdma's OMPI_OSC_RDMA_LOCK_EXCLUSIVE, above any count
constexpr std::int32_t kNoLock = -1;   // MPI_MODE_NOCHECK: no lock taken
// The meetings of window creation and free (Host::meet), apart from splits'.
constexpr std::uint64_t kCreated = 1ull << 63, kFreed = 1ull << 62;

std::string who(unsigned rank) { return "mpi: rank " + std::to_string(rank); }
// The rank of world rank `rank` among `members`.
unsigned rank_in(const std::vector<unsigned>& members, unsigned rank) {
    return static_cast<unsigned>(std::find(members.begin(), members.end(), rank) - members.begin());
}
}   // namespace

MpiOneSided::MpiOneSided(Host& host, Workload& owner, StatRegistry& stats, std::string prefix,
                         const std::vector<RdmaProcess*>& apps, const std::vector<unsigned>& nodes,
                         const std::vector<msg::Endpoint*>& eps)
    : host_(host),
      owner_(owner),
      log_(owner.log()),
      stats_(stats),
      prefix_(std::move(prefix)),
      apps_(apps),
      nodes_(nodes),
      eps_(eps),
      ranks_(apps.size()),
      active_(apps.size()) {}

std::uint64_t MpiOneSided::put_piece(const RdmaProcess& app, std::uint64_t len) {
    std::uint64_t piece = len;
    while (app.records_for(piece) > kRecords / 2) piece = (piece / 2 + kPage - 1) / kPage * kPage;
    return piece;
}

std::uint64_t MpiOneSided::put_transfers(const RdmaProcess& app, std::uint64_t len) {
    const std::uint64_t piece = put_piece(app, len);
    return piece ? (len + piece - 1) / piece : 0;
}

Counter& MpiOneSided::counter(const char* name, const char* help) {
    Counter*& k = counters_[name];
    if (!k) k = &stats_.counter(prefix_ + name, "", help);
    return *k;
}

std::uint64_t MpiOneSided::lock_word(unsigned rank, std::uint64_t win, unsigned target) const {
    const MpiWindows::Window& w = windows_.at(rank, win);
    return w.memory.at(rank_in(w.members, target)).lock;
}

void MpiOneSided::serve(RdmaProcess& app, unsigned rank, const Call& c, Reply& r) {
    // A call of the library's (collective.progress = in-call: a non-blocking
    // collective's round waiting for one starts now, as Open MPI's osc
    // progresses libnbc in its waits).
    const RdmaProcess::InLibrary in(app);
    const Op op = static_cast<Op>(c.op);
    if (mpiwire::operation_of(op) == op) return operate(app, rank, c, r);
    // Request-based: its operation, each piece in flight named by the
    // request the program gets.
    Rank& me = ranks_[rank];
    Call base = c;
    base.op = static_cast<std::uint32_t>(mpiwire::operation_of(op));
    me.request = mpiwire::kRmaRequest | ++me.requests;
    operate(app, rank, base, r);
    r.request = me.request;
    me.request = 0;
}

void MpiOneSided::operate(RdmaProcess& app, unsigned rank, const Call& c, Reply& r) {
    const Op op = static_cast<Op>(c.op);
    if (op == Op::WinCreate) return create(app, rank, c, r);
    const MpiWindows::Window& w = windows_.at(rank, c.win);
    switch (op) {
    case Op::WinFree: free(app, rank, c, r); return;
    case Op::Put:
    case Op::Get: put_or_get(app, rank, c); return;
    case Op::Accumulate:
    case Op::GetAccumulate:
    case Op::FetchOp:
    case Op::CompareSwap: atomics(app, rank, c); return;
    case Op::Fence:
        // Every operation of the epoch complete, then a barrier (as Open
        // MPI's osc/rdma fence).
        complete(app, rank, c.win, kAllTargets);
        host_.collectives(app, rank, w.ctx)
            .barrier(host_.algorithm(rank, coll::Op::Barrier, static_cast<unsigned>(w.members.size()), 8));
        return;
    case Op::Lock:
        lock(app, rank, c.win, windows_.world_of(rank, c.win, c.peer), c.tag, c.root != mpiwire::kNoCheck);
        return;
    case Op::Unlock: unlock(app, rank, c.win, windows_.world_of(rank, c.win, c.peer)); return;
    case Op::LockAll:
        for (const unsigned t : w.members) lock(app, rank, c.win, t, mpiwire::kShared, c.root != mpiwire::kNoCheck);
        return;
    case Op::UnlockAll:
        for (const unsigned t : std::vector<unsigned>(w.members)) unlock(app, rank, c.win, t);
        return;
    case Op::Flush: complete(app, rank, c.win, windows_.world_of(rank, c.win, c.peer)); return;
    case Op::FlushAll: complete(app, rank, c.win, kAllTargets); return;
    default: break;
    }
    throw std::logic_error("mpi: a call that is not one-sided served as one");
}

void MpiOneSided::create(RdmaProcess& app, unsigned rank, const Call& c, Reply& r) {
    Rank& me = ranks_[rank];
    if (!me.page) {
        me.page = app.alloc_locked(kPage);
        me.records_taken.assign(kRecords, false);
        me.locks_taken.assign(kLockWords, false);
    }
    const auto free_word = std::find(me.locks_taken.begin(), me.locks_taken.end(), false);
    if (free_word == me.locks_taken.end())
        throw std::runtime_error(who(rank) + " has more than " + std::to_string(kLockWords) +
                                 " windows at once (the library's lock words: not built)");
    *free_word = true;
    MpiWindows::Memory m;
    m.base = c.va;
    m.size = c.bytes;
    m.disp_unit = c.tag > 0 ? static_cast<std::uint64_t>(c.tag) : 1;
    m.lock = me.page + kRecords * kRecordBytes + 8 * static_cast<std::uint64_t>(free_word - me.locks_taken.begin());
    // The window's memory: the program's, at its address, registered for
    // the engine's writes and reads as rdma.strategy says (for the window's
    // life, as MPI_Win_create registers it), before the members tell each
    // other their base, size, disp_unit and key (an allgather of 24 B).
    if (m.size) {
        host_.map(app, rank, m.base, m.size);
        VmError error = VmError::Ok;
        if (!app.register_buffer(m.base, m.size, true, &error))
            throw std::runtime_error(who(rank) + ": its window of " + std::to_string(m.size) + " B at " +
                                     std::to_string(m.base) + " cannot be registered under rdma.strategy (" +
                                     to_string(error) + ")");
    }
    const std::vector<unsigned>& members = host_.members(rank, c.comm);
    const unsigned n = static_cast<unsigned>(members.size());
    r.request = windows_.create(rank, c.comm, members, rank_in(members, rank), m);
    counter("windows", "one-sided windows created, every member's").inc();
    const std::uint64_t buf = host_.scratch(app, rank, 24 * (n + 1));
    host_.collectives(app, rank, c.comm)
        .allgather(buf, buf + 24, 24, host_.algorithm(rank, coll::Op::Allgather, n, 24));
    host_.meet(app, rank, c.comm, kCreated | r.request, n, r);
}

void MpiOneSided::free(RdmaProcess& app, unsigned rank, const Call& c, const Reply& r) {
    Rank& me = ranks_[rank];
    const MpiWindows::Window& w = windows_.at(rank, c.win);
    const std::uint32_t ctx = w.ctx;
    const unsigned n = static_cast<unsigned>(w.members.size());
    const MpiWindows::Memory m = w.memory[rank_in(w.members, rank)];
    // What the program left open is completed (MPI wants none), then every
    // member is done with the window (a barrier, as osc/rdma's free), and
    // its memory deregistered.
    complete(app, rank, c.win, kAllTargets);
    for (auto it = me.locks.lower_bound({c.win, 0}); it != me.locks.end() && it->first.first == c.win;)
        it = me.locks.erase(it);
    host_.collectives(app, rank, ctx).barrier(host_.algorithm(rank, coll::Op::Barrier, n, 8));
    if (m.size) app.deregister(m.base, m.size);
    app.store(m.lock, 0);   // the lock word free for the next window (a lock the program left held, forgotten)
    me.locks_taken.at((m.lock - me.page - kRecords * kRecordBytes) / 8) = false;
    windows_.free(rank, c.win);
    host_.meet(app, rank, ctx, kFreed | c.win, n, r);
}

void MpiOneSided::put_or_get(RdmaProcess& app, unsigned rank, const Call& c) {
    const bool is_put = static_cast<Op>(c.op) == Op::Put;
    const unsigned target = windows_.world_of(rank, c.win, c.peer);
    const std::uint64_t tva =
        windows_.address(rank, c.win, c.peer, c.disp, c.offset, c.bytes, is_put ? "MPI_Put" : "MPI_Get");
    if (!c.bytes) return;
    host_.map(app, rank, c.va, c.bytes);
    Rank& me = ranks_[rank];
    RdmaProcess& remote = *apps_[target];
    counter("rma_operations", "one-sided operations (puts, gets, atomics) posted, every rank's").inc();
    log_.posted(app.now());
    if (target == rank) {
        // The rank's own window: a CPU copy, as Open MPI's.
        std::vector<unsigned char> data(c.bytes);
        const std::uint64_t from = is_put ? c.va : tva, to = is_put ? tva : c.va;
        if (!app.debug_read(from, data.data(), c.bytes) || !app.debug_write(to, data.data(), c.bytes))
            throw std::logic_error("mpi: a window the simulation mapped cannot be copied");
        eps_.at(app.node())->charge_copy(c.bytes);
        log_.verified(c.bytes, ProgramBuffers::holds(app, to, data));
        log_.finished(app.now(), true, c.bytes, nullptr);
        return;
    }
    Rma op;
    op.kind = is_put ? Rma::Kind::Put : Rma::Kind::Get;
    op.win = c.win;
    op.target = target;
    op.va = c.va;
    op.len = c.bytes;
    op.target_va = tva;
    op.posted = app.now();
    op.request = me.request;
    op.data.resize(c.bytes);
    if (is_put) return put(app, rank, c, op);
    // The target's bytes now, which the read must bring; the origin
    // poisoned, so that a read that did not land shows.
    if (!remote.debug_read(tva, op.data.data(), c.bytes))
        throw std::logic_error("mpi: a window the simulation mapped cannot be read");
    owner_.poison(app, c.va, c.bytes, host_.fills(rank)++);
    op.slots = 1;
    op.slot = slots(app, rank, 1);
    VmError error = VmError::Ok;
    if (!app.register_buffer(c.va, c.bytes, true, &error)) {
        me.records_taken[op.slot] = false;
        log_.finished(app.now(), false, 0, nullptr);
        return;
    }
    app.get(nodes_.at(target), tva, c.va, c.bytes, host_.fills(rank), me.page + op.slot * kRecordBytes);
    in_flight(me, std::move(op));
}

void MpiOneSided::put(RdmaProcess& app, unsigned rank, const Call& c, Rma& op) {
    Rank& me = ranks_[rank];
    // The origin filled as the program fills it (unless a put in flight
    // reads it still), its bytes kept for the check at completion.
    bool shared = false;
    for (const Rma& q : me.rma)
        shared = shared || (q.kind == Rma::Kind::Put && q.va < c.va + c.bytes && c.va < q.va + q.len);
    if (!shared) owner_.fill_source(app, c.va, c.bytes, (std::uint64_t(rank) << 48) ^ host_.fills(rank)++);
    if (!app.debug_read(c.va, op.data.data(), c.bytes))
        throw std::logic_error("mpi: an origin buffer the simulation mapped cannot be read");
    // In pieces of at most half the records (more than that only under
    // pipeline with many chunks: each piece its chunks still).
    const std::uint64_t piece = put_piece(app, c.bytes);
    for (std::uint64_t off = 0; off < c.bytes; off += piece) {
        if (off) log_.posted(app.now());   // each piece a transfer
        Rma part = op;
        part.va = c.va + off;
        part.len = std::min(piece, c.bytes - off);
        part.target_va = op.target_va + off;
        part.data.assign(op.data.begin() + off, op.data.begin() + off + part.len);
        part.slots = static_cast<unsigned>(app.records_for(part.len));
        part.slot = slots(app, rank, part.slots);
        part.put.src = part.va;
        part.put.dst = part.target_va;
        part.put.len = part.len;
        part.put.tag = host_.fills(rank);
        part.put.records = me.page + part.slot * kRecordBytes;
        part.put.dst_node = nodes_.at(op.target);
        app.send(part.put);
        in_flight(me, std::move(part));
    }
}

void MpiOneSided::atomics(RdmaProcess& app, unsigned rank, const Call& c) {
    const Op op = static_cast<Op>(c.op);
    const char* name = op == Op::Accumulate      ? "MPI_Accumulate"
                       : op == Op::GetAccumulate ? "MPI_Get_accumulate"
                       : op == Op::FetchOp       ? "MPI_Fetch_and_op"
                                                 : "MPI_Compare_and_swap";
    // Accumulate's and Get_accumulate's elements, else one.
    const bool elements = op == Op::Accumulate || op == Op::GetAccumulate;
    const std::uint64_t len = elements ? c.bytes : 8;
    const std::uint64_t tva = windows_.address(rank, c.win, c.peer, c.disp, c.offset, len, name);
    if (tva % 8 || len % 8)
        throw std::runtime_error(who(rank) + ": " + name + " at byte " + std::to_string(tva % 8) +
                                 " of a word, or of a length not a multiple of 8: the engine's network atomics work on "
                                 "aligned 8-byte words");
    const unsigned target = windows_.world_of(rank, c.win, c.peer);
    const auto amo = static_cast<mpiwire::Amo>(c.amo);
    const AtomicOp a = op == Op::CompareSwap          ? AtomicOp::CompareSwap
                       : amo == mpiwire::Amo::Replace ? AtomicOp::Swap
                                                      : AtomicOp::FetchAdd;
    // The operands: the simulation's own data at the program's origin
    // (and compare) buffers, word by word.
    auto word = [&](std::uint64_t va) {
        std::uint64_t v = 0;
        if (!va) return v;
        host_.map(app, rank, va, 8);
        if (!app.debug_read(va, reinterpret_cast<unsigned char*>(&v), 8))
            throw std::logic_error("mpi: an origin buffer the simulation mapped cannot be read");
        return v;
    };
    if (c.va3 && len) host_.map(app, rank, c.va3, len);
    if (elements && c.va && c.bytes) host_.map(app, rank, c.va, c.bytes);
    for (std::uint64_t k = 0; k < len / 8; ++k) {
        const std::uint64_t operand = amo == mpiwire::Amo::NoOp ? 0 : word(c.va + 8 * k);
        atomic(app, rank, c.win, target, tva + 8 * k, a, operand, op == Op::CompareSwap ? word(c.va2) : 0,
               op == Op::Accumulate ? 0 : c.va3 + 8 * k);
    }
}

void MpiOneSided::atomic(RdmaProcess& app, unsigned rank, std::uint64_t win, unsigned target, std::uint64_t target_va,
                         AtomicOp a, std::uint64_t operand, std::uint64_t compare, std::uint64_t result) {
    Rank& me = ranks_[rank];
    counter("rma_operations", "one-sided operations (puts, gets, atomics) posted, every rank's").inc();
    log_.posted(app.now());
    Rma op;
    op.kind = Rma::Kind::Atomic;
    op.win = win;
    op.target = target;
    op.len = 8;
    op.target_va = target_va;
    op.result = result;
    op.request = me.request;
    op.posted = app.now();
    op.slots = 1;
    op.slot = slots(app, rank, 1);
    // A queue that is full takes the atomic after the oldest in flight completes.
    while (!app.post_atomic(a, nodes_.at(target), target_va, operand, compare, ++host_.fills(rank),
                            me.page + op.slot * kRecordBytes)) {
        if (!finish_oldest(app, rank))
            throw std::runtime_error(who(rank) + ": the engine refused a network atomic with none in flight");
    }
    in_flight(me, std::move(op));
}

unsigned MpiOneSided::slots(RdmaProcess& app, unsigned rank, unsigned n) {
    Rank& me = ranks_[rank];
    for (;;) {
        for (unsigned s = 0; s + n <= kRecords; ++s)
            if (std::none_of(me.records_taken.begin() + s, me.records_taken.begin() + s + n,
                             [](bool t) { return t; })) {
                std::fill(me.records_taken.begin() + s, me.records_taken.begin() + s + n, true);
                return s;
            }
        if (!finish_oldest(app, rank))
            throw std::logic_error("mpi: no completion record free with no operation in flight");
    }
}

void MpiOneSided::complete(RdmaProcess& app, unsigned rank, std::uint64_t win, unsigned target) {
    Rank& me = ranks_[rank];
    for (auto it = me.rma.begin(); it != me.rma.end();) {
        if (it->win != win || (target != kAllTargets && it->target != target)) {
            ++it;
            continue;
        }
        Rma op = std::move(*it);
        it = me.rma.erase(it);
        finish(app, rank, op);
    }
}

void MpiOneSided::finish(RdmaProcess& app, unsigned rank, Rma& op) {
    Rank& me = ranks_[rank];
    const std::uint64_t record = me.page + op.slot * kRecordBytes;
    bool ok = true, checked = false, match = true;
    switch (op.kind) {
    case Rma::Kind::Put:
        // Landed: the target's window holds what the origin held.
        ok = app.complete(op.put).status == kStatusOk;
        checked = true;
        match = ProgramBuffers::holds(*apps_[op.target], op.target_va, op.data);
        break;
    case Rma::Kind::Get:
        // The origin holds what the target's window held.
        ok = app.wait_record(record).status == kStatusOk;
        app.deregister(op.va, op.len);
        checked = true;
        match = ProgramBuffers::holds(app, op.va, op.data);
        break;
    case Rma::Kind::Atomic: {
        const CompletionRecord rec = app.wait_record(record);
        ok = rec.status == kStatusOk;
        if (ok && op.result) app.store(op.result, rec.addr);   // the old value into the program's result buffer
        break;
    }
    }
    std::fill(me.records_taken.begin() + op.slot, me.records_taken.begin() + op.slot + op.slots, false);
    if (op.request) {   // no longer in its request's pieces (slots are a piece's own while it is in flight)
        auto& pieces = me.pieces.at(op.request);
        pieces.erase(std::find_if(pieces.begin(), pieces.end(), [&](const auto& p) { return p.first == op.slot; }));
        if (pieces.empty()) me.pieces.erase(op.request);
    }
    if (checked) {
        log_.verified(op.len, ok && match);
        if (ok && !match)
            std::cerr << "vrdmasim: DATA MISMATCH: mpi rank " << rank << ": a one-sided "
                      << (op.kind == Rma::Kind::Put ? "put to" : "get from") << " rank " << op.target << " of "
                      << op.len << " B\n";
    }
    // An atomic's 8 bytes are no data delivered (nor verified): the
    // simulation's own operands.
    const sc_time latency = app.now() - op.posted;
    log_.finished(app.now(), ok, ok && checked ? op.len : 0, &latency);
}

void MpiOneSided::end_request(RdmaProcess& app, unsigned rank, const Call& c, Reply& r) {
    Rank& me = ranks_[rank];
    const RdmaProcess::InLibrary in(app);   // a call of the library's (in-call progress)
    if (static_cast<Op>(c.op) == Op::Test) {
        app.sync_time();
        if (!request_done(app, rank, c.request)) return;
    }
    // Its pieces still in flight completed (none if a fence, flush or a
    // full queue completed them before), in the order posted: the
    // request's pieces (Rank::pieces) say how many, so the scan of the
    // rank's operations is skipped when there are none and ends at the last.
    const auto p = me.pieces.find(c.request);
    std::size_t left = p == me.pieces.end() ? 0 : p->second.size();
    for (auto it = me.rma.begin(); left && it != me.rma.end();) {
        if (it->request != c.request) {
            ++it;
            continue;
        }
        Rma q = std::move(*it);
        it = me.rma.erase(it);
        finish(app, rank, q);
        --left;
    }
    r.flag = 1;
}

bool MpiOneSided::request_done(RdmaProcess& app, unsigned rank, std::uint64_t request) const {
    // Complete by now: every record of every piece written (a put's
    // records: one a part posted).
    const Rank& me = ranks_[rank];
    const auto it = me.pieces.find(request);
    if (it == me.pieces.end()) return true;
    for (const auto& [slot, records] : it->second)
        for (unsigned k = 0; k < records; ++k) {
            sc_time at;
            if (!app.record_written(me.page + (slot + k) * kRecordBytes, at) || at > app.now()) return false;
        }
    return true;
}

void MpiOneSided::in_flight(Rank& me, Rma&& op) {
    if (op.request) me.pieces[op.request].emplace_back(op.slot, op.kind == Rma::Kind::Put ? op.put.parts : 1u);
    me.rma.push_back(std::move(op));
}

bool MpiOneSided::finish_oldest(RdmaProcess& app, unsigned rank) {
    Rank& me = ranks_[rank];
    if (me.rma.empty()) return false;
    Rma oldest = std::move(me.rma.front());
    me.rma.erase(me.rma.begin());
    finish(app, rank, oldest);
    return true;
}

std::uint64_t MpiOneSided::atomic_now(RdmaProcess& app, unsigned rank, unsigned node, std::uint64_t addr, AtomicOp a,
                                      std::uint64_t operand, std::uint64_t compare) {
    Rank& me = ranks_[rank];
    const unsigned slot = slots(app, rank, 1);
    const std::uint64_t record = me.page + slot * kRecordBytes;
    while (!app.post_atomic(a, node, addr, operand, compare, ++host_.fills(rank), record)) {
        if (!finish_oldest(app, rank))
            throw std::runtime_error(who(rank) + ": the engine refused a lock's network atomic with none in flight");
    }
    const CompletionRecord rec = app.wait_record(record);
    me.records_taken[slot] = false;
    if (rec.status != kStatusOk) throw std::runtime_error(who(rank) + ": a window lock's network atomic failed");
    counter("lock_atomics", "network atomics of the windows' locks, every rank's").inc();
    return rec.addr;
}

void MpiOneSided::lock(RdmaProcess& app, unsigned rank, std::uint64_t win, unsigned target, std::int32_t type,
                       bool check) {
    Rank& me = ranks_[rank];
    if (me.locks.count({win, target}))
        throw std::runtime_error(who(rank) + " locks window " + std::to_string(win) + " of rank " +
                                 std::to_string(target) + " twice");
    me.locks[{win, target}] = check ? type : kNoLock;
    if (!check) return;
    const std::uint64_t word = lock_word(rank, win, target);
    const unsigned node = nodes_.at(target);
    if (type == mpiwire::kExclusive) {
        while (atomic_now(app, rank, node, word, AtomicOp::CompareSwap, kExclusiveBit, 0) != 0) {
        }
        return;
    }
    while (atomic_now(app, rank, node, word, AtomicOp::FetchAdd, 1, 0) >= kExclusiveBit)
        atomic_now(app, rank, node, word, AtomicOp::FetchAdd, ~std::uint64_t(0), 0);   // back out, try again
}

void MpiOneSided::unlock(RdmaProcess& app, unsigned rank, std::uint64_t win, unsigned target) {
    Rank& me = ranks_[rank];
    const auto held = me.locks.find({win, target});
    if (held == me.locks.end())
        throw std::runtime_error(who(rank) + " unlocks window " + std::to_string(win) + " of rank " +
                                 std::to_string(target) + ", which it has not locked");
    // The rank's operations to the target complete first.
    complete(app, rank, win, target);
    const std::int32_t type = held->second;
    me.locks.erase(held);
    if (type == kNoLock) return;
    const std::uint64_t word = lock_word(rank, win, target);
    atomic_now(app, rank, nodes_.at(target), word, AtomicOp::FetchAdd,
               type == mpiwire::kExclusive ? ~kExclusiveBit + 1 : ~std::uint64_t(0), 0);
}

}   // namespace vrdmasim
