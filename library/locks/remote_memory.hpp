// The blocking layer the locks are built on: one process's view of the
// cluster's memory through its RDMA engine. Each call posts one engine
// operation (a network atomic, an 8-byte RDMA read or write) and waits for
// its completion record; an error status throws (a lock cannot go on after a
// lost update). It counts the operations it posts, so a workload can say how
// many network transactions a lock costs and check that figure against the
// engines' own counters. Notifications (an RDMA write with kFlagNotify into
// this process's memory) are read from the receive ring in order: the
// address written and the writing node, so a lock can tell which of its
// words a peer wrote. README.md.
#pragma once

#include <cstdint>

#include "library/rdma/process.hpp"

namespace vrdmasim {

class RemoteMemory {
public:
    static constexpr std::uint32_t kRing = 16;   // notification ring entries
    explicit RemoteMemory(RdmaProcess& app) : app_(app) {}

    // Map the library's own memory: completion record, the 8-byte bounce
    // buffer of get/put (both mlock()ed, as libraries keep them) and the
    // notification ring. Call once from the process's program.
    void setup();
    RdmaProcess& app() { return app_; }

    // Network atomic on the 8 bytes at `addr` of node `node`; the old value.
    std::uint64_t atomic(AtomicOp op, unsigned node, std::uint64_t addr, std::uint64_t operand,
                         std::uint64_t compare = 0);
    // RDMA read of the 8 bytes at `addr` of node `node` (this node: a load,
    // the engine reads no node's own memory).
    std::uint64_t get(unsigned node, std::uint64_t addr);
    // RDMA write of `value` to the 8 bytes at `addr` of node `node`;
    // `notify`: the receiving process is notified once it has landed (this
    // node without `notify`: a store, as for get).
    void put(unsigned node, std::uint64_t addr, std::uint64_t value, bool notify = false);

    // The next notification delivered to this process (waits for it).
    struct Note {
        std::uint64_t addr = 0;   // the address written here
        unsigned from = 0;   // the writing node
    };
    Note next_note();

    // Engine operations this process has posted, and gets and puts it did
    // with loads and stores of its own memory instead.
    std::uint64_t operations() const { return ops_; }
    std::uint64_t local_accesses() const { return local_; }

private:
    // Wait for the record and throw unless it is ok.
    CompletionRecord finish(const char* what, unsigned node, std::uint64_t addr);

    RdmaProcess& app_;
    std::uint64_t record_ = 0, bounce_ = 0;
    std::uint64_t ops_ = 0, local_ = 0, notes_ = 0;
};

}   // namespace vrdmasim
