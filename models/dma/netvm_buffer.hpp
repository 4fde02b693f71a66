// The NetVM receive buffer (rdma.strategy = netvm): a payload write that
// faults (terminate mode) is kept in a kernel buffer of dma.netvm-buffer
// bytes instead of being NACKed, and the kernel's copy puts it in place once
// the fault is resolved. A full buffer holds the next packet back (the
// link's credits back up). README.md "Fault tolerance".
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <vector>

#include <systemc>

#include "src/core/lazy_event.hpp"
#include "models/dma/credits.hpp"
#include "models/dma/memory_port.hpp"
#include "models/dma/params.hpp"
#include "models/dma/receive.hpp"
#include "models/dma/stats.hpp"
#include "src/core/lazy_deque.hpp"

namespace vrdmasim {

// The kernel's copy for NetVM-style receives: copy `len` bytes into user
// memory at `va` of the process whose stream is `sid` (the receiving
// channel's) from time `at` (CPU work); returns when done.
using NetvmCopyFn = std::function<sc_core::sc_time(std::uint32_t sid, std::uint64_t va, const unsigned char* data,
                                                   std::uint64_t len, sc_core::sc_time at)>;

class NetvmBuffer {
public:
    NetvmBuffer(MemoryPort& memory, Receiver& receiver, const PldmaConfig& params, PldmaStats& stats);
    NetvmBuffer(const NetvmBuffer&) = delete;
    NetvmBuffer& operator=(const NetvmBuffer&) = delete;

    void enable(NetvmCopyFn copy) { copy_ = std::move(copy); }
    // NetVM's sender credits: a buffered packet's come back when it leaves the buffer.
    void set_credits(SenderCredits* credits) { credits_ = credits; }
    // Packets put in the buffer so far.
    std::uint64_t puts() const { return puts_; }
    bool enabled() const { return static_cast<bool>(copy_); }

    // A payload of `len` bytes at `va` of stream `sid` touches a page whose
    // fault is pending (false when NetVM is off).
    bool pending(std::uint32_t sid, std::uint64_t va, std::uint64_t len) const;
    // `page` of stream `sid` faulted: buffer its packets until its outcome or `deadline`.
    void hold(std::uint32_t sid, std::uint64_t page, sc_core::sc_time deadline) { pages_[{sid, page}] = deadline; }
    bool fits(std::uint64_t len) const { return used_ + len <= params_.netvm_capacity; }
    // Notified when buffer space is freed.
    sc_core::sc_event& space() { return space_ev_.get(); }
    // Keep a payload of transfer `key` for `va`.
    void put(const InboundKey& key, std::uint32_t sid, std::uint64_t va, const unsigned char* data, std::uint64_t len);

    // The fault library's outcome for a write fault on `page` of stream
    // `sid`: true if packets waited on it (they are then copied in, or dropped).
    bool fault_resolved(std::uint32_t sid, std::uint64_t page, bool resolved, sc_core::sc_time at);
    // Earliest deadline of a pending page (sc_max_time: none).
    sc_core::sc_time deadline() const;
    // The pages whose outcome never came by `now`: probed and written.
    void expire(sc_core::sc_time now);

private:
    struct Buffered {   // a payload in the kernel buffer
        InboundKey key;
        std::uint32_t sid = 0;
        std::uint64_t va = 0;
        std::vector<unsigned char> data;
    };
    // Put (or drop) the buffered packets of `page`; returns when done.
    using SidPage = std::pair<std::uint32_t, std::uint64_t>;   // (stream, page)
    sc_core::sc_time flush(const SidPage& page, bool resolved, bool by_engine, sc_core::sc_time at);

    MemoryPort& memory_;
    Receiver& receiver_;
    const PldmaConfig& params_;
    PldmaStats& stats_;
    NetvmCopyFn copy_;
    SenderCredits* credits_ = nullptr;
    std::uint64_t puts_ = 0;
    std::uint64_t used_ = 0;
    LazyDeque<Buffered> buf_;
    std::map<SidPage, sc_core::sc_time> pages_;   // pending (stream, page) -> deadline
    LazyEvent space_ev_;   // made when first waited for or notified (NetVM only)
};

}   // namespace vrdmasim
