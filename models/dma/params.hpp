// The PLDMA engine's parameters (section `dma`, declared in
// Pldma::declare_params), read from the configuration in one place:
// read_pldma_config. The derived figures (packets per block, stream ID) are
// computed here too.
#pragma once

#include <cstdint>

#include <systemc>

#include "src/core/params.hpp"

namespace vrdmasim {

struct PldmaConfig {
    std::uint64_t block_size = 0;   // dma.block-size
    std::uint32_t packet_size = 0;   // dma.packet-size
    std::uint64_t packets_per_block = 0;   // ceil(block_size / packet_size)
    unsigned block_buffers = 0;   // dma.block-buffers
    unsigned queue_depth = 0;   // dma.queue-depth
    unsigned channels = 0;   // dma.channels
    unsigned channel_blocks = 0;   // dma.channel-blocks
    sc_core::sc_time setup_time;   // dma.setup-time
    sc_core::sc_time mmio_latency;   // dma.mmio-latency
    sc_core::sc_time fault_timeout;   // dma.fault-timeout
    bool fault_tolerant = false;   // dma.fault-tolerant
    std::uint64_t netvm_capacity = 0;   // dma.netvm-buffer
    std::uint32_t stream_id = 0;   // dma.smmu-tbu << 10 | dma.axi-id (Xilinx AR#69447): a channel's at reset
    std::uint32_t tbu = 0;   // dma.smmu-tbu: bits [14:10] of every channel's stream ID
    std::uint32_t axi_id = 0;   // dma.axi-id: a channel's AXI ID at reset
    bool park_engine = false;   // dma.park = engine: a parked channel stops the whole engine
    unsigned event_counters = 0;   // dma.event-counters: EVENT_COUNTER registers per channel
    unsigned notify_window = 0;   // dma.notify-window: ordered notifications (0: unordered)

    // The stream ID of a channel whose control word holds AXI ID `axi`.
    std::uint32_t stream_of(std::uint32_t axi) const { return (tbu << 10) | (axi & 0x3f); }

    // Data packets of a transfer of `len` bytes: each block is cut on its own.
    std::uint64_t packets_of(std::uint64_t len) const;
};

PldmaConfig read_pldma_config(const Config& config);

}   // namespace vrdmasim
