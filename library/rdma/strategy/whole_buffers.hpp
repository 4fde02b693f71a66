// Whole buffers: every buffer the application allocates is registered as a
// whole, once, and stays pinned until the program's end (release_all).
// pin-static pins each buffer at its allocation; pin-deferred queues it in
// rdma.pipeline-chunk pieces for the library's registration thread, and a
// post pins itself (or waits for) only the pieces of its range not pinned
// yet. A refused pin is remembered: every later acquire in it fails with
// the same error, as `pin` fails per message.
#pragma once

#include <string>
#include <vector>

#include "library/rdma/strategy/strategy.hpp"

namespace vrdmasim {

class WholeBuffers final : public RegistrationStrategy {
public:
    // `chunk` 0: each buffer pinned whole at its allocation (pin-static);
    // otherwise queued in pieces of `chunk` bytes for the registration
    // thread (pin-deferred). `name`: the strategy's, for errors.
    WholeBuffers(const StrategyEnv& env, std::string name, std::uint64_t chunk);
    RegResult acquire(std::uint64_t va, std::uint64_t len, bool write, sc_core::sc_time at) override;
    // Buffers stay pinned until release_all: nothing to do per message.
    RegResult release(std::uint64_t va, std::uint64_t len, sc_core::sc_time at) override;
    RegResult on_alloc(std::uint64_t va, std::uint64_t len, sc_core::sc_time at) override;
    bool background_pending() const override;
    // The registration thread pins the next pending chunk, from `at` (not
    // before its buffer was allocated); returns when done.
    sc_core::sc_time background_step(sc_core::sc_time at) override;
    RegResult release_all(sc_core::sc_time at) override;

private:
    enum class ChunkState { Pending, Pinning, Failed };
    struct Chunk {
        std::uint64_t start = 0, end = 0;   // page-aligned
        ChunkState state = ChunkState::Pending;
        sc_core::sc_time done;   // Pinning: pinned from then on
        VmError error = VmError::Ok;   // Failed
    };
    struct Buffer {
        std::uint64_t start = 0, end = 0;   // page-aligned
        sc_core::sc_time queued;   // allocated at
        std::vector<Chunk> chunks;
    };
    // Pin one chunk at t (foreground or background); false if refused.
    bool pin_chunk(Chunk& c, sc_core::sc_time t);
    // Bytes of the page-aligned [s, e) inside allocated buffers.
    std::uint64_t covered(std::uint64_t s, std::uint64_t e) const;

    StrategyEnv env_;
    std::string name_;
    std::uint64_t chunk_;
    std::vector<Buffer> buffers_;
    std::size_t next_pending_ = 0;   // first buffer that may hold a pending chunk
};

}   // namespace vrdmasim
