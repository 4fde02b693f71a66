// Ssd: the QFDB's M.2 SSD as the swap device of a node: a queue of `queue-depth`
// commands served in parallel, each costing an access latency plus its bytes
// at the device's bandwidth (bandwidth shared: the data transfers of
// concurrent commands are serialised on one channel). Holds the real bytes of
// swapped-out pages in swap slots, so data survives swap-out and swap-in.
// Loosely timed: callers give the issue time and get the completion time.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include <systemc>

#include "src/core/context.hpp"

namespace vrdmasim {

// The parameters of section [ssd], declared in ssd.cpp; read
// through params_of<SsdParams>().
struct SsdParams {
    SsdParams();
    ParamSet set;
    TimeParam read_latency;
    TimeParam write_latency;
    RateParam bandwidth;
    IntParam queue_depth;
    SizeParam swap_size;
};

class Ssd {
public:
    static constexpr std::uint64_t kPage = 4096;
    // Section "ssd": read-latency (*estimate* from docs/references.md's ~60 us major
    // fault), write-latency, bandwidth, queue-depth, swap-size.
    static void declare_params(ParamRegistry& reg);
    // Statistics under `<prefix>.` ("node0.ssd"); trace track "ssd" in `group`.
    Ssd(const SimContext& ctx, const std::string& prefix, const std::string& group);

    // A free swap slot, or empty when swap is full.
    std::optional<std::uint64_t> alloc_slot();
    void free_slot(std::uint64_t slot);
    std::uint64_t free_slots() const;

    // Write one page's bytes to `slot`, issued at absolute time `at`; returns
    // the completion time.
    sc_core::sc_time write_page(std::uint64_t slot, const unsigned char* data, sc_core::sc_time at);
    // Read `slot` into `data`; returns the completion time. Reading a slot
    // never written is std::logic_error.
    sc_core::sc_time read_page(std::uint64_t slot, unsigned char* data, sc_core::sc_time at);
    // Copy `slot`'s bytes into `data` with no I/O, no time and no statistics
    // (inspection). A slot never written is std::logic_error.
    void peek_page(std::uint64_t slot, unsigned char* data) const;

    // ---- files (filesystem.hpp): blocks past the swap area
    // Bytes of the device the swap area takes (swap-size): file extents
    // start at or after it.
    std::uint64_t swap_bytes() const { return slots_ * kPage; }
    // Turn on the file statistics (`file_reads`, `file_bytes`,
    // `file_read_latency`): the FileSystem does it when it is built, so a
    // run without files keeps the swap device's statistics as they were.
    void enable_files();
    // One read command of `bytes` at device address `addr` (inside the
    // file area, after the swap area; std::logic_error otherwise), issued
    // at `at`, served by the same queue and channel as swap I/O; returns
    // its completion. The data are the caller's (FileSystem knows them).
    // `file` and `offset` label the trace span.
    sc_core::sc_time read_blocks(std::uint64_t addr, std::uint64_t bytes, sc_core::sc_time at, unsigned file,
                                 std::uint64_t offset);

private:
    sc_core::sc_time serve(bool write, std::uint64_t bytes, sc_core::sc_time at, bool file = false,
                           unsigned file_id = 0, std::uint64_t file_offset = 0);
    const SimContext& ctx_;
    sc_core::sc_time read_latency_, write_latency_;
    double ps_per_byte_;
    std::vector<sc_core::sc_time> queue_free_;   // one entry per queue slot
    sc_core::sc_time channel_free_;
    std::uint64_t slots_;
    std::vector<std::uint64_t> free_list_;   // LIFO of free slots
    std::uint64_t next_fresh_ = 0;
    std::vector<bool> in_use_;   // per slot below next_fresh_: allocated now
    std::unordered_map<std::uint64_t, std::unique_ptr<std::array<unsigned char, kPage>>> data_;
    Tracer::Track track_;
    Counter *reads_, *writes_, *transactions_;
    Histogram *read_latency_us_, *write_latency_us_;
    std::string prefix_;
    Counter *file_reads_ = nullptr, *file_bytes_ = nullptr;
    Histogram* file_read_latency_us_ = nullptr;
};

}   // namespace vrdmasim
