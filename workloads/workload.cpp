#include "workloads/workload.hpp"

#include <algorithm>
#include <cstring>
#include <iostream>
#include <sstream>

#include "workloads/pingpong.hpp"
#include "workloads/stream.hpp"

namespace vrdmasim {

using sc_core::sc_time;

TransferLog::TransferLog(StatRegistry& s)
    : transfers(s.counter("workload.transfers", "", "transfers finished, ok or not")),
      errors(s.counter("workload.transfer_errors", "", "transfers that finished with an error status")),
      bytes_delivered(s.counter("workload.bytes_delivered", "B", "bytes of transfers reported successful")),
      bytes_verified(s.counter("workload.bytes_verified", "B", "bytes found equal to the source at the destination")),
      mismatches(s.counter("workload.data_mismatches", "",
                           "transfers reported successful whose destination differs from the source")),
      latency_us(s.histogram("workload.latency", "us", "per-transfer latency as the workload defines it")) {}

void TransferLog::posted(sc_time at) { first_post = std::min(first_post, at); }

void TransferLog::finished(sc_time at, bool ok, std::uint64_t bytes, const sc_time* latency) {
    transfers.inc();
    if (ok) bytes_delivered.inc(bytes); else errors.inc();
    if (latency) latency_us.add(latency->to_seconds() * 1e6);
    last_done = std::max(last_done, at);
}

void TransferLog::verified(std::uint64_t bytes, bool match) {
    if (match) bytes_verified.inc(bytes); else mismatches.inc();
}

void fill_pattern(unsigned char* buf, std::uint64_t len, std::uint64_t key) {
    // A Weyl sequence through one multiply and xor-shift per 8 bytes: cheap,
    // and every word depends on the key and its position, so misplaced,
    // stale or duplicated data never matches.
    std::uint64_t x = (key + 1) * 0x9E3779B97F4A7C15ull;
    std::uint64_t i = 0;
    for (; i + 8 <= len; i += 8) {
        x += 0x9E3779B97F4A7C15ull;
        std::uint64_t z = x * 0xBF58476D1CE4E5B9ull;
        z ^= z >> 31;
        std::memcpy(buf + i, &z, 8);
    }
    if (i < len) {
        x += 0x9E3779B97F4A7C15ull;
        std::uint64_t z = x * 0xBF58476D1CE4E5B9ull;
        z ^= z >> 31;
        std::memcpy(buf + i, &z, len - i);
    }
}

void Workload::declare_params(ParamRegistry& reg) {
    reg.section("workload", "the application model that drives the run")
        .choice("kind", "stream", {"stream", "pingpong"},
                "stream: one node streams RDMA writes to another; pingpong: two nodes bounce a message")
        .integer("src-node", "0", "node that sends (stream) or starts (pingpong)").range("0", "65535")
        .integer("dst-node", "1", "node that receives (stream) or answers (pingpong)").range("0", "65535")
        .size("message-size", "64KiB", "bytes per RDMA write").range("0B", "1GiB")
        .size("total-bytes", "16MiB", "stream: bytes to move in all").range("0B", "64GiB")
        .integer("window", "4", "stream: transfers outstanding at once (each with its own buffers)")
        .range("1", "4096")
        .integer("iterations", "100", "pingpong: round trips").range("1", "100000000")
        .boolean("populate", "true",
                 "fault the message buffers in when they are mapped (MAP_POPULATE); false: cold buffers, "
                 "whose first touch by the CPU or the engine faults");
}

std::unique_ptr<Workload> Workload::create(const SimContext& ctx, const std::vector<App*>& apps) {
    const Config& c = ctx.config;
    const auto src = static_cast<std::uint64_t>(c.integer("workload.src-node"));
    const auto dst = static_cast<std::uint64_t>(c.integer("workload.dst-node"));
    auto bad = [&](const std::string& key, const std::string& why) {
        return ConfigError("workload." + key + " = " + c.text("workload." + key) + " (from " +
                           c.origin("workload." + key) + "): " + why);
    };
    if (src >= apps.size()) throw bad("src-node", "the system has " + std::to_string(apps.size()) + " nodes");
    if (dst >= apps.size()) throw bad("dst-node", "the system has " + std::to_string(apps.size()) + " nodes");
    if (src == dst) throw bad("dst-node", "must differ from workload.src-node");
    const std::string& kind = c.string("workload.kind");
    if (kind == "stream") return std::make_unique<StreamWorkload>(ctx, *apps[src], *apps[dst]);
    if (kind == "pingpong") return std::make_unique<PingpongWorkload>(ctx, *apps[src], *apps[dst]);
    throw ConfigError("workload.kind = " + kind + ": no such workload");
}

void Workload::ready_and_wait(App& app, unsigned parties) {
    if (++ready_ >= parties) all_ready_.notify(app.now() - sc_core::sc_time_stamp());
    app.wait_until([this, parties] { return ready_ >= parties; }, all_ready_);
}

void Workload::check_fits(const App& app, std::uint64_t bytes) const {
    if (bytes <= app.capacity()) return;
    const Config& c = ctx_.config;
    throw ConfigError("the workload's buffers do not fit on " + app.group() + ": " + std::to_string(bytes) +
                      " B asked, at most " + std::to_string(app.capacity()) + " B can be mapped (workload.message-size = " +
                      c.text("workload.message-size") + ", workload.window = " + c.text("workload.window") +
                      ", dram.size = " + c.text("dram.size") + ")");
}

void Workload::prepare(App& src, std::uint64_t src_addr, App& dst, std::uint64_t dst_addr, std::uint64_t len,
                       std::uint64_t key) {
    scratch_.resize(len);
    fill_pattern(scratch_.data(), len, seed_ ^ key);
    // Page by page: a page the process cannot write (unmapped or read-only,
    // as a test may make it) is left as it is; the transfer will fault there.
    auto write_pages = [](App& app, std::uint64_t addr, const unsigned char* data, std::uint64_t n) {
        if (app.debug_write(addr, data, n)) return;   // the usual case: all of it at once
        const std::uint64_t page = 4096;
        for (std::uint64_t off = 0; off < n;) {
            const std::uint64_t chunk = std::min(n - off, page - (addr + off) % page);
            app.debug_write(addr + off, data + off, chunk);
            off += chunk;
        }
    };
    write_pages(src, src_addr, scratch_.data(), len);
    // Poison the destination so that stale bytes never pass the check. Only
    // its present pages: writing a page the receiver has never touched (cold
    // buffers, workload.populate = false) or that reclaim swapped out would
    // fault it in on the CPU, and the engine would never meet the fault the
    // experiment is about. Such a page reads as zeros or as an earlier
    // message's bytes, never as this transfer's pattern.
    std::memset(scratch_.data(), static_cast<int>((key * 0x9Du) ^ 0xA5u) & 0xff, len);
    if (!dst.is_virtual()) {
        write_pages(dst, dst_addr, scratch_.data(), len);
        return;
    }
    const std::uint64_t page = 4096;
    for (std::uint64_t off = 0; off < len;) {
        const std::uint64_t chunk = std::min(len - off, page - (dst_addr + off) % page);
        if (dst.vm()->present(dst.pid(), dst_addr + off)) dst.debug_write(dst_addr + off, scratch_.data() + off, chunk);
        off += chunk;
    }
}

bool Workload::verify(App& dst, std::uint64_t dst_addr, std::uint64_t len, std::uint64_t key) {
    scratch_.resize(len);
    expect_.resize(len);
    fill_pattern(expect_.data(), len, seed_ ^ key);
    const bool read = dst.debug_read(dst_addr, scratch_.data(), len);
    const bool match = read && std::memcmp(scratch_.data(), expect_.data(), len) == 0;
    log_.verified(len, match);
    if (!match) {
        std::uint64_t off = 0;
        while (read && off < len && scratch_[off] == expect_[off]) ++off;
        std::ostringstream os;
        os << "DATA MISMATCH: transfer " << key << " to " << dst.group() << " 0x" << std::hex << dst_addr
           << std::dec << " (" << len << " B) differs from its source first at byte " << off;
        std::cerr << "vrdmasim: " << os.str() << "\n";
        if (ctx_.tracer.narrating()) ctx_.tracer.narrate(sc_core::sc_time_stamp(), "workload", os.str());
    }
    return match;
}

void Workload::report(App& observer, App& dst, std::uint64_t dst_addr, std::uint64_t len, std::uint64_t key,
                      const CompletionRecord& rec, const sc_time* latency) {
    const bool ok = rec.status == kStatusOk;
    log_.finished(observer.now(), ok, ok ? rec.bytes : 0, latency);
    if (!ok) return;
    if (rec.bytes != len) {
        // Success with the wrong byte count is a loss nobody reported.
        log_.verified(len, false);
        std::cerr << "vrdmasim: DATA MISMATCH: transfer " << key << " reported " << rec.bytes << " of " << len
                  << " B delivered with success status\n";
        return;
    }
    verify(dst, dst_addr, len, key);
}

}  // namespace vrdmasim
