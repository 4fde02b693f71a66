#include "models/os/ssd.hpp"

#include "src/core/format.hpp"

#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace vrdmasim {

using sc_core::sc_time;

SsdParams::SsdParams()
    : set("ssd", "the QFDB's M.2 SSD as a node's swap device"),
      read_latency(set.time("read-latency", "50us",
                            "access latency of a 4 KiB read (*estimate*: with the kernel's own costs a major fault "
                            "from SSD is ~60 us, NP-RDMA paper)")
                       .range("0ps", "100ms")),
      write_latency(
          set.time("write-latency", "20us", "access latency of a 4 KiB write (*estimate*)").range("0ps", "100ms")),
      bandwidth(set.rate("bandwidth", "1.5GB/s",
                         "data rate shared by all commands (*estimate* for the QFDB's M.2 SSD; one M.2 SSD per "
                         "QFDB: Chaix et al., H2RC 2019)")
                    .range("1MB/s", "100GB/s")),
      queue_depth(set.integer("queue-depth", "32", "commands served in parallel (*estimate*)").range("1", "65536")),
      swap_size(set.size("swap-size", "4GiB",
                         "swap space of one node, in 4 KiB slots (*estimate*: a share of the QFDB's 512 GB SSD, "
                         "Chaix et al., H2RC 2019)")
                    .range("4KiB", "512GB")) {}

void Ssd::declare_params(ParamRegistry& reg) { reg.add(params_of<SsdParams>().set); }

Ssd::Ssd(const SimContext& ctx, const std::string& prefix, const std::string& group)
    : ctx_(ctx),
      read_latency_(ctx.config[params_of<SsdParams>().read_latency]),
      write_latency_(ctx.config[params_of<SsdParams>().write_latency]),
      ps_per_byte_(8e12 / ctx.config[params_of<SsdParams>().bandwidth]),
      queue_free_(static_cast<std::size_t>(ctx.config[params_of<SsdParams>().queue_depth]), sc_core::SC_ZERO_TIME),
      channel_free_(sc_core::SC_ZERO_TIME),
      slots_(ctx.config[params_of<SsdParams>().swap_size] / kPage),
      track_(ctx.tracer.track(group, "ssd")),
      reads_(&ctx.stats.counter(prefix + ".reads", "", "page reads (swap-ins)")),
      writes_(&ctx.stats.counter(prefix + ".writes", "", "page writes (swap-outs)")),
      transactions_(&ctx.stats.counter(prefix + ".transactions", "", "commands served (reads + writes)")),
      read_latency_us_(
          &ctx.stats.histogram(prefix + ".read_latency", "us", "read completion - issue (queueing included)")),
      write_latency_us_(
          &ctx.stats.histogram(prefix + ".write_latency", "us", "write completion - issue (queueing included)")),
      prefix_(prefix) {
    if (ctx.config[params_of<SsdParams>().swap_size] % kPage != 0)
        throw ctx.config.refuse(params_of<SsdParams>().swap_size, "must be a whole number of 4 KiB pages");
}

std::optional<std::uint64_t> Ssd::alloc_slot() {
    std::uint64_t slot;
    if (!free_list_.empty()) {
        slot = free_list_.back();   // most recently freed first
        free_list_.pop_back();
    } else if (next_fresh_ < slots_) {
        slot = next_fresh_++;
        in_use_.push_back(false);
    } else {
        return std::nullopt;
    }
    in_use_[slot] = true;
    return slot;
}

void Ssd::free_slot(std::uint64_t slot) {
    if (slot >= next_fresh_ || !in_use_[slot])
        throw std::logic_error("Ssd::free_slot: swap slot " + std::to_string(slot) + " is not allocated");
    in_use_[slot] = false;
    data_.erase(slot);   // its contents are gone: reading it again is an error
    free_list_.push_back(slot);
}

std::uint64_t Ssd::free_slots() const { return slots_ - next_fresh_ + free_list_.size(); }

sc_time Ssd::serve(bool write, std::uint64_t bytes, sc_time at, bool file, unsigned file_id,
                   std::uint64_t file_offset) {
    // The queue slot free first (ties: the lowest), then the shared channel.
    std::size_t q = 0;
    for (std::size_t k = 1; k < queue_free_.size(); ++k)
        if (queue_free_[k] < queue_free_[q]) q = k;
    const sc_time start = max_time(at, queue_free_[q]);
    const sc_time xfer_start = max_time(start + (write ? write_latency_ : read_latency_), channel_free_);
    const sc_time xfer =
        sc_time::from_value(static_cast<sc_dt::uint64>(std::llround(static_cast<double>(bytes) * ps_per_byte_)));
    const sc_time done = xfer_start + xfer;
    channel_free_ = done;
    queue_free_[q] = done;

    transactions_->inc();
    if (file) {   // a file read (FileSystem): its own counters, not swap-ins
        file_reads_->inc();
        file_bytes_->inc(bytes);
        file_read_latency_us_->add(to_us(done - at));
    } else if (write) {
        writes_->inc();
        write_latency_us_->add(to_us(done - at));
    } else {
        reads_->inc();
        read_latency_us_->add(to_us(done - at));
    }
    if (ctx_.tracer.enabled()) {
        // Commands overlap (up to queue-depth of them): one async span each,
        // from issue to completion.
        std::vector<std::pair<std::string, std::string>> args{
            {"bytes", Tracer::json_number(bytes)},
            {"queued_us", Tracer::json_number(to_us(start - at))},
            {"transfer_start_us", Tracer::json_number(to_us(xfer_start))}};
        if (file) {
            args.emplace_back("file", Tracer::json_number(file_id));
            args.emplace_back("offset", Tracer::json_number(file_offset));
        }
        ctx_.tracer.async_span(track_,
                               file    ? "file read"
                               : write ? "write"
                                       : "read",
                               transactions_->value(), at, done, args);
    }
    return done;
}

sc_time Ssd::write_page(std::uint64_t slot, const unsigned char* data, sc_time at) {
    if (slot >= next_fresh_ || !in_use_[slot])
        throw std::logic_error("Ssd::write_page: swap slot " + std::to_string(slot) + " is not allocated");
    auto& page = data_[slot];
    if (!page) page = std::make_unique<std::array<unsigned char, kPage>>();
    std::memcpy(page->data(), data, kPage);
    return serve(true, kPage, at);
}

sc_time Ssd::read_page(std::uint64_t slot, unsigned char* data, sc_time at) {
    auto it = data_.find(slot);
    if (it == data_.end())
        throw std::logic_error("Ssd::read_page: swap slot " + std::to_string(slot) +
                               " holds no data (never written since it was allocated)");
    std::memcpy(data, it->second->data(), kPage);
    return serve(false, kPage, at);
}

void Ssd::peek_page(std::uint64_t slot, unsigned char* data) const {
    auto it = data_.find(slot);
    if (it == data_.end())
        throw std::logic_error("Ssd::peek_page: swap slot " + std::to_string(slot) + " holds no data");
    std::memcpy(data, it->second->data(), kPage);
}

void Ssd::enable_files() {
    if (file_reads_) return;
    file_reads_ = &ctx_.stats.counter(prefix_ + ".file_reads", "", "file read commands (page cache fills)");
    file_bytes_ = &ctx_.stats.counter(prefix_ + ".file_bytes", "B", "bytes read from files");
    file_read_latency_us_ =
        &ctx_.stats.histogram(prefix_ + ".file_read_latency", "us", "file read completion - issue (queueing included)");
}

sc_time Ssd::read_blocks(std::uint64_t addr, std::uint64_t bytes, sc_time at, unsigned file, std::uint64_t offset) {
    if (!file_reads_) throw std::logic_error("Ssd::read_blocks: file reads not enabled (no FileSystem)");
    if (addr < swap_bytes() || bytes == 0 || addr % kPage != 0 || bytes % kPage != 0)
        throw std::logic_error("Ssd::read_blocks: [" + hex(addr) + ", +" + std::to_string(bytes) +
                               ") is not whole blocks of the file area (swap area ends at " +
                               std::to_string(swap_bytes()) + ")");
    return serve(false, bytes, at, true, file, offset);
}

}   // namespace vrdmasim
