// The locks' blocking layer (see remote_memory.hpp).
#include "library/locks/remote_memory.hpp"

#include <sstream>
#include <stdexcept>

namespace vrdmasim {

void RemoteMemory::setup() {
    record_ = app_.alloc_locked(sizeof(CompletionRecord) + 8);
    bounce_ = record_ + sizeof(CompletionRecord);
    app_.setup_rx_ring(kRing);
}

CompletionRecord RemoteMemory::finish(const char* what, unsigned node, std::uint64_t addr) {
    const CompletionRecord r = app_.wait_record(record_);
    if (r.status != kStatusOk) {
        std::ostringstream os;
        os << app_.group() << ": lock " << what << " of node" << node << " 0x" << std::hex << addr
           << " completed with an error status";
        throw std::runtime_error(os.str());
    }
    return r;
}

std::uint64_t RemoteMemory::atomic(AtomicOp op, unsigned node, std::uint64_t addr, std::uint64_t operand,
                                   std::uint64_t compare) {
    ++ops_;
    if (!app_.post_atomic(op, node, addr, operand, compare, ops_, record_))
        throw std::runtime_error(app_.group() + ": the engine refused a lock atomic");
    return finish("atomic", node, addr).addr;
}

std::uint64_t RemoteMemory::get(unsigned node, std::uint64_t addr) {
    if (node == app_.node()) {
        ++local_;
        return app_.load(addr);   // this process's own memory: a load (the engine reads no node's own memory)
    }
    ++ops_;
    if (!app_.post_read(node, addr, bounce_, 8, ops_, record_))
        throw std::runtime_error(app_.group() + ": the engine refused a lock read");
    finish("read", node, addr);
    return app_.load(bounce_);
}

void RemoteMemory::put(unsigned node, std::uint64_t addr, std::uint64_t value, bool notify) {
    if (node == app_.node() && !notify) {
        ++local_;
        app_.store(addr, value);   // this process's own memory: a store, as for get
        return;
    }
    ++ops_;
    app_.store(bounce_, value);
    if (!app_.post_write(bounce_, node, addr, 8, ops_, record_, notify ? kFlagNotify : 0u))
        throw std::runtime_error(app_.group() + ": the engine refused a lock write");
    finish("write", node, addr);
}

RemoteMemory::Note RemoteMemory::next_note() {
    app_.wait_rx(notes_ + 1);
    const CompletionRecord r = app_.read_rx_record(notes_);
    ++notes_;
    if (r.status != kStatusOk) throw std::runtime_error(app_.group() + ": a lock notification reported an error");
    Note n;
    n.addr = r.addr;
    n.from = r.node;
    return n;
}

}   // namespace vrdmasim
