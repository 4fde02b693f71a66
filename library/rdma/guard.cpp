// The RdmaProcess's side of rdma.buffer-guard = mprotect (library/rdma/buffer_guard.hpp):
// installing a guard when a transfer is posted, lifting it when its records
// are seen, and the guard fault of a CPU access to a guarded page.
#include <sstream>

#include "src/core/format.hpp"
#include <stdexcept>

#include "library/rdma/process.hpp"

namespace vrdmasim {

using sc_core::sc_time;

std::uint64_t RdmaProcess::guard(std::uint64_t va, std::uint64_t len, bool engine_writes, std::function<void()> wait) {
    if (!guard_ || len == 0) return 0;
    return guard_install(va, len, engine_writes, {}, std::move(wait));
}

std::uint64_t RdmaProcess::guard_install(std::uint64_t va, std::uint64_t len, bool engine_writes,
                                         std::vector<std::uint64_t> records, std::function<void()> wait) {
    const sc_time start = now();
    sc_time done;
    const std::uint64_t id = guard_->install(va, len, engine_writes, std::move(records), start, done, std::move(wait));
    if (done > now()) qk().set(done - sc_core::sc_time_stamp());
    if (tracer_.enabled())
        tracer_.span(track_, engine_writes ? "mprotect guard dst" : "mprotect guard src", start, now());
    if (tracer_.noting()) {
        std::ostringstream os;
        os << "guards " << (engine_writes ? "destination" : "source") << " 0x" << std::hex << va << std::dec << " ("
           << len << " B): no CPU access until the transfer completes";
        tracer_.note(Tracer::Track{}, "guard", start, sc_core::SC_ZERO_TIME, group_, os.str());
    }
    return id;
}

void RdmaProcess::guard_lift(std::uint64_t id) {
    if (!guard_ || !guard_->find(id)) return;   // lifted already (its records were seen)
    const sc_time start = now();
    const sc_time done = guard_->lift(id, start);
    if (done > now()) qk().set(done - sc_core::sc_time_stamp());
    if (tracer_.enabled()) tracer_.span(track_, "mprotect unguard", start, now());
    if (tracer_.noting())
        tracer_.note(Tracer::Track{}, "unguard", start, sc_core::SC_ZERO_TIME, group_,
                     "lifts guard " + std::to_string(id) + ": transfer complete");
}

void RdmaProcess::guard_record_seen(std::uint64_t record) {
    if (!guard_) return;
    if (const std::uint64_t id = guard_->record_seen(record)) guard_lift(id);
}

void RdmaProcess::guard_fault(std::uint64_t addr, bool write) {
    std::uint64_t id = 0;
    const BufferGuard::Guard* g = guard_ ? guard_->covering(addr, &id) : nullptr;
    if (!g)
        throw std::runtime_error(group_ + ": user " + (write ? "store to" : "load from") + " " + hex(addr) +
                                 " took a permission fault no buffer guard explains");
    const sc_time start = now();
    guard_->fault_taken(start);
    Tracer::Cause fault;
    if (tracer_.noting()) {
        std::ostringstream os;
        os << "guard fault: " << (write ? "store to" : "load from") << " 0x" << std::hex << addr << std::dec
           << " waits for the transfer in flight";
        fault = tracer_.note(Tracer::Track{}, "guard fault", start, sc_core::SC_ZERO_TIME, group_, os.str());
    }
    const Tracer::Scope waiting(tracer_, fault);   // what the wait does (a lift, a library's progress) follows it
    run_on_core("guard-fault", guard_->fault_cost());
    // The handler waits for the transfers in flight on the page (buffers
    // may share one): each guard's records (each seen lifts the guard once
    // all are), then retries the access.
    for (; g; g = guard_->covering(addr, &id)) {
        if (g->wait) {
            // A library's request: its progress until the request completes
            // (which lifts the guard).
            const std::function<void()> wait = g->wait;
            wait();
            if (guard_->find(id))
                throw std::logic_error(group_ + ": a guarded request completed without lifting its guard");
            continue;
        }
        const std::vector<std::uint64_t> records = g->records;
        for (std::uint64_t r : records)
            if (guard_->find(id)) wait_record(r);
        guard_lift(id);   // a transfer none of whose parts was posted
    }
    guard_->fault_done(start, now());
    if (tracer_.enabled()) tracer_.span(track_, "guard fault wait", start, now());
}

sc_time RdmaProcess::store_at(std::uint64_t addr, std::uint64_t value) {
    const std::uint64_t pa = physical(addr, true);
    const sc_time at = now();
    if (!access(tlm::TLM_WRITE_COMMAND, pa, reinterpret_cast<unsigned char*>(&value), 8, true))
        throw std::runtime_error(group_ + ": user store failed");
    return at;
}

bool RdmaProcess::record_written(std::uint64_t addr, sc_time& at) const {
    return dma_.record_done_at(dma_.channel_stream_id(record_channel(addr)), physical_ ? locked_frame(addr) : addr, at);
}

}   // namespace vrdmasim
