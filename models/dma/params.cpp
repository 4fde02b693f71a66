// The PLDMA engine's parameters, read in one place (see params.hpp).
#include "models/dma/params.hpp"
#include "models/dma/pldma.hpp"

namespace vrdmasim {

PldmaConfig read_pldma_config(const Config& config) {
    PldmaConfig p;
    p.block_size = config[params_of<PldmaParams>().block_size];
    p.packet_size = static_cast<std::uint32_t>(config[params_of<PldmaParams>().packet_size]);
    p.packets_per_block = (p.block_size + p.packet_size - 1) / p.packet_size;
    p.block_buffers = static_cast<unsigned>(config[params_of<PldmaParams>().block_buffers]);
    p.queue_depth = static_cast<unsigned>(config[params_of<PldmaParams>().queue_depth]);
    p.channel_blocks = static_cast<unsigned>(config[params_of<PldmaParams>().channel_blocks]);
    p.setup_time = config[params_of<PldmaParams>().setup_time];
    p.mmio_latency = config[params_of<PldmaParams>().mmio_latency];
    p.fault_timeout = config[params_of<PldmaParams>().fault_timeout];
    p.fault_tolerant = config[params_of<PldmaParams>().fault_tolerant];
    p.netvm_capacity = config[params_of<PldmaParams>().netvm_buffer];
    p.channels = static_cast<unsigned>(config[params_of<PldmaParams>().channels]);
    p.tbu = static_cast<std::uint32_t>(config[params_of<PldmaParams>().smmu_tbu]);
    p.axi_id = static_cast<std::uint32_t>(config[params_of<PldmaParams>().axi_id]);
    p.stream_id = p.stream_of(p.axi_id);
    p.park_engine = config[params_of<PldmaParams>().park] == "engine";
    p.event_counters = static_cast<unsigned>(config[params_of<PldmaParams>().event_counters]);
    p.notify_window = static_cast<unsigned>(config[params_of<PldmaParams>().notify_window]);
    return p;
}

std::uint64_t PldmaConfig::packets_of(std::uint64_t len) const {
    if (len == 0) return 0;
    const std::uint64_t full = len / block_size, rest = len % block_size;
    return full * packets_per_block + (rest + packet_size - 1) / packet_size;
}

}   // namespace vrdmasim
