// The PLDMA engine's parameters, read in one place (see params.hpp).
#include "models/dma/params.hpp"

namespace vrdmasim {

PldmaParams read_pldma_params(const Config& config) {
    PldmaParams p;
    p.block_size = config.size("dma.block-size");
    p.packet_size = static_cast<std::uint32_t>(config.size("dma.packet-size"));
    p.packets_per_block = (p.block_size + p.packet_size - 1) / p.packet_size;
    p.block_buffers = static_cast<unsigned>(config.integer("dma.block-buffers"));
    p.queue_depth = static_cast<unsigned>(config.integer("dma.queue-depth"));
    p.channel_blocks = static_cast<unsigned>(config.integer("dma.channel-blocks"));
    p.setup_time = config.time("dma.setup-time");
    p.mmio_latency = config.time("dma.mmio-latency");
    p.fault_timeout = config.time("dma.fault-timeout");
    p.fault_tolerant = config.boolean("dma.fault-tolerant");
    p.netvm_capacity = config.size("dma.netvm-buffer");
    p.channels = static_cast<unsigned>(config.integer("dma.channels"));
    p.stream_id = static_cast<std::uint32_t>((config.integer("dma.smmu-tbu") << 10) | config.integer("dma.axi-id"));
    return p;
}

std::uint64_t PldmaParams::packets_of(std::uint64_t len) const {
    if (len == 0) return 0;
    const std::uint64_t full = len / block_size, rest = len % block_size;
    return full * packets_per_block + (rest + packet_size - 1) / packet_size;
}

}  // namespace vrdmasim
