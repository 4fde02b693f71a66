// RdmaProcess: posting descriptors: the channel's registers (MMIO),
// writes, reads and network atomics.
#include "library/rdma/process.hpp"

#include "src/core/sim_params.hpp"
#include "models/common/noise.hpp"

#include "src/core/format.hpp"

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>
#include <unordered_map>

namespace vrdmasim {

using sc_core::sc_time;

namespace {
// A descriptor is a run of register writes ending at the doorbell, and a
// write may let another thread run (the writer's clock synchronised): the
// process's threads (its program's, a library thread's: enter_thread) post
// one at a time, as a driver's lock around a channel's registers keeps
// another thread's fields from landing between them. By process; its event
// made at the first wait.
struct PostLock {
    const sc_core::sc_process_b* holder = nullptr;
    unsigned waiters = 0;
    std::unique_ptr<LazyEvent> free;
};
std::unordered_map<const RdmaProcess*, PostLock>& post_locks() {
    static auto* m = new std::unordered_map<const RdmaProcess*, PostLock>();
    return *m;
}
struct PostTurn {
    PostLock& lock;
    PostTurn(RdmaProcess& app, PostLock& l) : lock(l) {
        const sc_core::sc_process_b* me = sc_core::sc_get_current_process_b();
        while (lock.holder && lock.holder != me) {
            if (!lock.free) {
                const UnderModule under(&app);
                lock.free = std::make_unique<LazyEvent>();
            }
            ++lock.waiters;
            app.wait_until([this] { return !lock.holder; }, lock.free->get());
            --lock.waiters;
        }
        lock.holder = me;
    }
    ~PostTurn() {
        lock.holder = nullptr;
        if (lock.waiters) lock.free->notify(sc_core::SC_ZERO_TIME);
    }
    PostTurn(const PostTurn&) = delete;
    PostTurn& operator=(const PostTurn&) = delete;
};
}   // namespace

unsigned RdmaProcess::record_channel(std::uint64_t addr) const {
    auto it = record_channel_.find(addr);
    return it == record_channel_.end() ? channel_ : it->second;
}

std::uint64_t RdmaProcess::mmio_read_on(unsigned c, std::uint64_t off, unsigned len) {
    std::uint64_t v = 0;
    const std::uint64_t base = mmio_base_ + c * pldma_reg::kChannelStride;
    if (!access(tlm::TLM_READ_COMMAND, base + off, reinterpret_cast<unsigned char*>(&v), len))
        throw std::runtime_error(group_ + ": PLDMA register read failed at offset " + std::to_string(off));
    return v;
}

void RdmaProcess::mmio_write_on(unsigned c, std::uint64_t off, std::uint64_t v, unsigned len) {
    const std::uint64_t base = mmio_base_ + c * pldma_reg::kChannelStride;
    if (!access(tlm::TLM_WRITE_COMMAND, base + off, reinterpret_cast<unsigned char*>(&v), len, true))
        throw std::runtime_error(group_ + ": PLDMA register write failed at offset " + std::to_string(off));
    // Whoever stages DESC_OP, the shadow follows it (stage_op skips the
    // store only when the register really holds the operation).
    if (off == pldma_reg::kDescOp && c >= channel_ && c - channel_ < staged_ops_.size())
        staged_ops_[c - channel_] = static_cast<DescOp>(static_cast<std::uint32_t>(v));
}

bool RdmaProcess::post_write(std::uint64_t src, unsigned dst_node, std::uint64_t dst, std::uint64_t len,
                             std::uint64_t tag, std::uint64_t compl_addr, std::uint32_t flags, std::uint32_t counter) {
    using namespace pldma_reg;
    // rdma.notify = counter: every notifying write (whichever part of the
    // library posts it) also counts on the receiver's counter 0.
    if (notify_counter_ && (flags & (kFlagNotify | kFlagNotifyPacket)) && !(flags & kFlagCounter)) {
        flags |= kFlagCounter;
        counter = 0;
    }
    compute(post_overhead_);
    if (compl_addr) {
        // Status 0 = not written yet: wait_record tells the new record from an old one.
        CompletionRecord blank;
        if (!access(tlm::TLM_WRITE_COMMAND, physical(compl_addr, true), reinterpret_cast<unsigned char*>(&blank),
                    sizeof blank, true))
            throw std::runtime_error(group_ + ": completion record not writable");
    }
    return post_descriptor(DescOp::Write, src, dst_node, dst, len, flags, nullptr, compl_addr, tag, counter);
}

bool RdmaProcess::post_descriptor(DescOp op, std::uint64_t src, unsigned node, std::uint64_t dst, std::uint64_t len,
                                  std::uint32_t flags, const std::uint64_t* compare, std::uint64_t compl_addr,
                                  std::uint64_t tag, std::uint32_t counter) {
    using namespace pldma_reg;
    const PostTurn turn(*this, post_locks()[this]);
    // Round robin over the process's channels: the next one, kept until it
    // takes the descriptor. DESC_OP is a register of each channel, so each
    // has its own shadow.
    const unsigned c = channel_ + next_post_;
    last_post_ = c;
    stage_op(c, op);
    mmio_write_on(c, kDescSrc, src, 8);
    mmio_write_on(c, kDescDst, dst, 8);
    mmio_write_on(c, kDescLen, len, 8);
    mmio_write_on(c, kDescDstNode, node, 4);
    mmio_write_on(c, kDescFlags, flags, 4);
    if (flags & kFlagCounter) mmio_write_on(c, kDescCounter, counter, 4);
    if (compare) mmio_write_on(c, kDescCmp, *compare, 8);
    mmio_write_on(c, kDescCompl, physical_ && compl_addr ? locked_frame(compl_addr) : compl_addr, 8);
    mmio_write_on(c, kDescTag, tag, 8);
    mmio_write_on(c, kDoorbell, 1, 4);
    const bool refused = (mmio_read_on(c, kStatus, 4) & 0x80000000u) != 0;
    if (refused) return false;
    ++posted_on_[next_post_];
    if (compl_addr) record_channel_[compl_addr] = c;
    next_post_ = (next_post_ + 1) % channel_count_;
    return true;
}

void RdmaProcess::stage_op(unsigned c, DescOp op) {
    if (staged_ops_.at(c - channel_) == op) return;
    mmio_write_on(c, pldma_reg::kDescOp, static_cast<std::uint32_t>(op), 4);   // updates the shadow
}

bool RdmaProcess::post_read(unsigned src_node, std::uint64_t remote_src, std::uint64_t local_dst, std::uint64_t len,
                            std::uint64_t tag, std::uint64_t compl_addr, std::uint32_t flags) {
    using namespace pldma_reg;
    if (physical_)
        throw std::logic_error(group_ +
                               ": RDMA reads and atomics are not built in physical-address mode "
                               "(System::check_physical refuses such configurations)");
    if (flags != 0)
        throw std::invalid_argument(group_ + ": post_read: no flag is defined for RDMA reads (flags " +
                                    std::to_string(flags) + ")");
    if (src_node == node_)
        throw std::invalid_argument(group_ + ": post_read: a read of this node's own memory (node " +
                                    std::to_string(src_node) + ") is not supported");
    compute(post_overhead_);
    if (compl_addr) {
        // Status 0 = not written yet: wait_record tells the new record from an old one.
        CompletionRecord blank;
        if (!access(tlm::TLM_WRITE_COMMAND, physical(compl_addr, true), reinterpret_cast<unsigned char*>(&blank),
                    sizeof blank, true))
            throw std::runtime_error(group_ + ": completion record not writable");
    }
    return post_descriptor(DescOp::Read, remote_src, src_node, local_dst, len, 0, nullptr, compl_addr, tag);
}

bool RdmaProcess::post_atomic(AtomicOp op, unsigned node, std::uint64_t addr, std::uint64_t operand,
                              std::uint64_t compare, std::uint64_t tag, std::uint64_t compl_addr) {
    using namespace pldma_reg;
    if (physical_)
        throw std::logic_error(group_ +
                               ": RDMA reads and atomics are not built in physical-address mode "
                               "(System::check_physical refuses such configurations)");
    compute(post_overhead_);
    if (compl_addr) {
        CompletionRecord blank;   // status 0 = not written yet
        if (!access(tlm::TLM_WRITE_COMMAND, physical(compl_addr, true), reinterpret_cast<unsigned char*>(&blank),
                    sizeof blank, true))
            throw std::runtime_error(group_ + ": completion record not writable");
    }
    const DescOp d = op == AtomicOp::FetchAdd ? DescOp::FetchAdd
                     : op == AtomicOp::Swap   ? DescOp::Swap
                                              : DescOp::CompareSwap;
    return post_descriptor(d, operand, node, addr, 8, 0, op == AtomicOp::CompareSwap ? &compare : nullptr, compl_addr,
                           tag);
}

}   // namespace vrdmasim
