// Dram: the DDR4 memory of one node. A sparse backing store of real bytes
// (host memory grows with the pages touched, not the configured size) behind a
// TLM-2.0 target socket, with an access latency and a data bandwidth shared by
// every master (one channel: accesses are served one after another).
// See models/memory/README.md.
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/passthrough_target_socket.h>

#include "src/core/context.hpp"
#include "src/core/ring_list.hpp"
#include "models/common/data_pattern.hpp"
#include "models/common/debug_access.hpp"

namespace vrdmasim {

// The parameters of section [dram], declared in dram.cpp; read through
// params_of<DramParams>().
struct DramParams {
    ParamSet set;
    SizeParam size;
    TimeParam latency;
    RateParam bandwidth;
    SizeParam burst;
    DramParams();
};

class Dram : public sc_core::sc_module, public DebugAccess {
public:
    tlm_utils::passthrough_target_socket<Dram> socket;

    static void declare_params(ParamRegistry& reg);

    // Reads dram.* from ctx.config; `group` names the trace group ("node1").
    Dram(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group);

    std::uint64_t size() const { return size_; }
    std::size_t touched_pages() const { return pages_.size(); }
    // Of those, the pages the store keeps as bytes (the others are kept as
    // stretches of the data pattern, or zeros; README, "The store").
    std::size_t byte_pages() const;
    // Timed writes whose data phase has not ended by the current simulated
    // time: not yet visible to timed reads (see README, "Visibility").
    std::size_t pending_writes() const { return pending_.size(); }

    static constexpr std::uint64_t kPageSize = 4096;

    // [addr, addr + len) is being filled by a device outside this model
    // until `until` (an SSD read into a frame, told by the OS: Vm::
    // set_io_guard). A timed access to it whose data phase starts before
    // then reads (or writes) bytes that have not arrived: it is counted in
    // `<name>.early_accesses`, registered at the first hold (the run's
    // invariants require 0: a page made visible before its data).
    void hold(std::uint64_t addr, std::uint64_t len, sc_core::sc_time until);
    std::uint64_t early_accesses() const { return early_ ? early_->value() : 0; }

    // The debug transport without a payload (models/common/debug_access.hpp):
    // what transport_dbg does for a read or write of [addr, addr + len).
    bool debug_access(bool write, std::uint64_t addr, unsigned char* data, std::uint64_t len) override;
    // The data pattern without its bytes where the store keeps it by its
    // places (DebugAccess::debug_pattern): written as stretches, checked
    // against them; the same contents and answers as debug_access with the
    // bytes (through it where a write is pending on the range).
    bool debug_pattern(PatternOp op, std::uint64_t addr, std::uint64_t len, PatternPlace at,
                       std::uint64_t& first) override;

private:
    void b_transport(tlm::tlm_generic_payload& gp, sc_core::sc_time& delay);
    unsigned int transport_dbg(tlm::tlm_generic_payload& gp);
    // Copy between the store and `data`; untouched pages read as zeros and are
    // not allocated by reads.
    void copy(std::uint64_t addr, unsigned char* data, std::uint64_t len, bool write);

    // Visibility. A timed write becomes visible when its data phase ends
    // (`at`); until then it waits here, in order of `at`. Timed reads see
    // the store plus the pending writes visible by their own data phase;
    // debug reads see the latest state (every pending write), debug writes
    // act after every pending write.
    struct Page;
    struct PendingWrite {
        sc_core::sc_time at;
        std::uint64_t addr = 0, len = 0;
        std::vector<unsigned char> data;   // its bytes, unless they are the pattern's from `place`
        PatternPlace place;
        bool patterned = false;
        Page* page = nullptr;   // the page it lies in, if only one (as a packet's payload)
    };
    RingList<PendingWrite> pending_;   // sorted by `at`, ties in call order
    std::vector<std::vector<unsigned char>> spare_;   // recycled data buffers, kSpareBuffers once none is pending
    static constexpr std::size_t kSpareBuffers = 4;
    std::uint64_t pending_lo_ = 0, pending_hi_ = 0;   // bounds of pending_'s bytes
    // Writes every pending write visible by `upto` into the store (inline:
    // every access asks, and most find nothing due).
    void commit(sc_core::sc_time upto) {
        if (!pending_.empty() && pending_.front().at <= upto) commit_due(upto);
    }
    void commit_due(sc_core::sc_time upto);
    void defer_write(sc_core::sc_time at, std::uint64_t addr, const unsigned char* data, std::uint64_t len);
    // Overlays on `data` (read from the store at `addr`) the pending writes
    // visible by `upto`; with `patch`, writes `data` into them instead
    // (a debug write: it lands after each of them).
    // Inline, the test of the bounds of every pending write's bytes: most
    // accesses (a page-table read, a packet's source) are outside them.
    void overlay(std::uint64_t addr, unsigned char* data, std::uint64_t len, sc_core::sc_time upto, bool patch) {
        if (len == 0 || pending_.empty() || addr >= pending_hi_ || addr + len <= pending_lo_) return;
        overlay_pending(addr, data, len, upto, patch);
    }
    void overlay_pending(std::uint64_t addr, unsigned char* data, std::uint64_t len, sc_core::sc_time upto, bool patch);
    bool check(tlm::tlm_generic_payload& gp);
    // A timed access's span on the DRAM's track (tracing on), out of
    // b_transport's frame.
    void trace_span(bool write, std::uint64_t addr, std::uint64_t len, sc_core::sc_time arrive, sc_core::sc_time start,
                    sc_core::sc_time end);
    // A debug read or write of a range inside the DRAM (transport_dbg and
    // debug_access).
    void debug_copy(bool write, std::uint64_t addr, unsigned char* data, std::uint64_t len);
    // debug_pattern's parts, within page `index`: the n bytes at `off`
    // written as the pattern's from `at`, as copy() would write them; or
    // the first of them that differs from those (n: none).
    void write_pattern_at(std::uint64_t index, std::uint64_t off, std::uint64_t n, PatternPlace at);
    std::uint64_t pattern_mismatch_at(std::uint64_t index, std::uint64_t off, std::uint64_t n, PatternPlace at);

    std::uint64_t size_;
    sc_core::sc_time latency_;
    double ps_per_byte_;
    std::uint64_t burst_;
    // The channel's data phases still to come or under way (start -> end,
    // disjoint). Masters run ahead of each other by up to a quantum
    // (temporal decoupling) and an engine books reads ahead, so requests
    // come out of time order: one that arrives earlier than a data phase
    // already booked takes the gap before it if it fits, instead of queueing
    // behind the latest booking.
    std::vector<std::pair<sc_core::sc_time, sc_core::sc_time>> booked_;   // sorted, disjoint
    std::size_t first_ = 0;   // phases before it are over
    // Book `occupy` of the channel at or after `arrive`: its bursts fill
    // the free gaps in order. Returns the first burst's start; `end` is
    // when the last one is over.
    // `now`: the current time (phases over by then are dropped).
    sc_core::sc_time book(sc_core::sc_time now, sc_core::sc_time arrive, sc_core::sc_time occupy,
                          sc_core::sc_time& end);
    sc_core::sc_time burst_time_;   // one burst on the channel
    // The data phase of the last access's length (accesses come in runs of
    // one size: packets, descriptors), not recomputed in floating point.
    std::uint64_t occupy_len_ = ~std::uint64_t{0};
    sc_core::sc_time occupy_time_;
    // The store: one entry per page ever written. A page holds its bytes,
    // or, while every byte written into it is a stretch of the data pattern
    // (models/common/data_pattern.hpp: a transfer's source and, once the
    // engine has written them, its destination), up to kStretches
    // stretches, each [lo, hi) from a place in the pattern, and zeros
    // elsewhere: 16 bytes instead of a page (README, "The store"). `pending`
    // counts the pending writes (pending_) that touch the page, so that an
    // access to a page with none skips the overlay's scan of every pending
    // write.
    struct Stretch {   // 16 bytes: the place of byte lo, unpacked
        std::uint64_t z = 0;
        std::uint16_t lo = 0, hi = 0;
        std::uint8_t phase = 0;
        Stretch() = default;
        Stretch(std::uint64_t l, std::uint64_t h, PatternPlace p)
            : z(p.z), lo(static_cast<std::uint16_t>(l)), hi(static_cast<std::uint16_t>(h)), phase(p.phase) {}
        PatternPlace at() const { return PatternPlace{z, phase}; }
    };
    static_assert(sizeof(Stretch) == 16, "a stretch is two words");
    static constexpr std::size_t kStretches = 3;
    struct Page {
        std::unique_ptr<unsigned char[]> bytes;   // null: stretches[0, count), zeros elsewhere
        std::array<Stretch, kStretches> stretches{};
        std::uint8_t count = 0;
        std::uint32_t pending = 0;
    };
    // Writes n bytes at offset off of page p: as a stretch when they are the
    // pattern's (looked for unless `maybe_pattern` is false: known not to
    // be), else as bytes. write_pattern: the pattern's bytes from `at`.
    void write_page(Page& p, std::uint64_t off, const unsigned char* data, std::uint64_t n, bool maybe_pattern = true);
    static void write_pattern(Page& p, std::uint64_t off, std::uint64_t n, PatternPlace at);
    // Reads n bytes at offset off of page p into data.
    static void read_page(const Page& p, std::uint64_t off, unsigned char* data, std::uint64_t n);
    // [off, off + n) from `at` into p's stretches; false (p unchanged) if
    // they would be more than kStretches.
    static bool put_stretch(Page& p, std::uint64_t off, std::uint64_t n, PatternPlace at);
    static void to_bytes(Page& p);   // its stretches rendered into bytes
    std::unordered_map<std::uint64_t, Page> pages_;
    // The pages found last, direct-mapped by their index's low bits (nodes
    // of an unordered_map never move, and pages are never dropped):
    // accesses come in runs on a few pages at once (a packet's destination,
    // the page-table pages a walk reads, a completion record), and a hash
    // lookup costs several times a compare.
    struct CachedPage {
        std::uint64_t index = ~std::uint64_t{0};
        Page* page = nullptr;
    };
    static constexpr std::size_t kCachedPages = 8;
    std::array<CachedPage, kCachedPages> cached_{};
    Page* find_page(std::uint64_t index) {
        CachedPage& c = cached_[index % kCachedPages];
        if (c.index == index) return c.page;
        auto it = pages_.find(index);
        if (it == pages_.end()) return nullptr;
        c.index = index;
        c.page = &it->second;
        return c.page;
    }
    Page& page(std::uint64_t index);   // added (all zeros) if new
    // Whether any pending write touches [addr, addr + len).
    bool any_pending(std::uint64_t addr, std::uint64_t len);

    // hold(): pages (addr / kPageSize) under a device's write, until when.
    std::unordered_map<std::uint64_t, sc_core::sc_time> holds_;
    Counter* early_ = nullptr;
    void check_holds(std::uint64_t addr, std::uint64_t len, sc_core::sc_time start, sc_core::sc_time now);

    const SimContext& ctx_;
    Tracer& tracer_;
    Tracer::Track track_;
    Counter& reads_;
    Counter& writes_;
    Counter& read_bytes_;
    Counter& write_bytes_;
    Counter& transactions_;
    Counter& errors_;
    Scalar& busy_us_;
    Histogram& queue_ns_;
};

}   // namespace vrdmasim
