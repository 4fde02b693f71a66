// App: a user process on one node together with the RDMA user library it
// calls (post a write, wait for completions). Its CPU reaches the node's bus
// through `cpu`: descriptors are posted with MMIO register writes and
// completion records are read from memory, each a timed transaction.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <systemc>
#include <tlm>
#include <tlm_utils/simple_initiator_socket.h>
#include <tlm_utils/tlm_quantumkeeper.h>

#include "core/context.hpp"
#include "models/dma/pldma.hpp"
#include "models/os/vm.hpp"

namespace vrdmasim {

// Thrown by App::alloc when the buffers asked for do not fit.
class OutOfMemory : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

class App : public sc_core::sc_module {
public:
    tlm_utils::simple_initiator_socket<App> cpu;

    static void declare_params(ParamRegistry& reg);
    App(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group, unsigned node,
        Pldma& dma, std::uint64_t mmio_base, std::uint64_t heap_base, std::uint64_t heap_size);

    // The program this process runs; set before simulation starts.
    std::function<void(App&)> program;

    unsigned node() const { return node_; }
    const std::string& group() const { return group_; }
    // This process's current time (simulation time plus its local offset).
    sc_core::sc_time now() const { return sc_core::sc_time_stamp() + qk_.get_local_time(); }
    // Spend `t` of CPU time.
    void compute(sc_core::sc_time t);

    // Run as process `pid` of `vm`: buffers are mmap()ed virtual memory and
    // the engine reaches them through the SMMU. Without it (smmu.enabled =
    // false) buffers are physically contiguous DMA memory from a reserved
    // region, as dma_alloc_coherent gives a driver.
    void attach_process(Vm& vm, int pid);
    // The program starts once start() has been called (after the node's
    // kernel has set the process up); before that it waits.
    void start();
    // Bytes the process could map at most (checked before simulation).
    void set_capacity(std::uint64_t bytes) { capacity_ = bytes; }
    std::uint64_t capacity() const { return capacity_; }
    // Synchronise this process's local time, then wait on `ev` until
    // `done()` holds (checked first: a notification while this process was
    // still catching up with its local time is not lost).
    void wait_until(const std::function<bool()>& done, sc_core::sc_event& ev);
    bool is_virtual() const { return vm_ != nullptr; }
    int pid() const { return pid_; }
    Vm* vm() const { return vm_; }

    // Memory for buffers and records (page aligned). `populate`: fault every
    // page in now (MAP_POPULATE); otherwise the first touch, by the CPU or the
    // engine, faults. Throws OutOfMemory when it does not fit.
    std::uint64_t alloc(std::uint64_t bytes, bool populate = true);
    // Every region alloc() returned, in order: (address, bytes).
    const std::vector<std::pair<std::uint64_t, std::uint64_t>>& allocations() const { return allocations_; }

    // --- RDMA user library
    // Set up the receive notification ring (once, before transfers arrive).
    void setup_rx_ring(std::uint32_t entries);
    // Post an RDMA write; false if the engine refused the descriptor.
    bool post_write(std::uint64_t src, unsigned dst_node, std::uint64_t dst, std::uint64_t len,
                    std::uint64_t tag, std::uint64_t compl_addr, bool notify);
    // Block (on the completion interrupt) until `n` completions / `n`
    // notifications have been written in total; return the record.
    void wait_tx(std::uint64_t n);
    void wait_rx(std::uint64_t n);
    CompletionRecord read_record(std::uint64_t addr);
    CompletionRecord read_rx_record(std::uint64_t index);

    // Untimed access to this process's memory (test harness: fill sources,
    // check destinations), by virtual address when attached to a process,
    // else physical. Writing faults pages in (untimed: the program filling
    // its buffer); reading changes nothing (swapped pages are read from swap).
    // Returns false on an unmapped address.
    bool debug_write(std::uint64_t addr, const unsigned char* data, std::uint64_t len);
    bool debug_read(std::uint64_t addr, unsigned char* data, std::uint64_t len);

private:
    void run();
    void wait_signal(CompletionSignal& sig, std::uint64_t reg, std::uint64_t n);
    std::uint64_t mmio_read(std::uint64_t off, unsigned len);
    void mmio_write(std::uint64_t off, std::uint64_t v, unsigned len);
    bool access(tlm::tlm_command cmd, std::uint64_t addr, unsigned char* data, unsigned len);

    const unsigned node_;
    const std::string group_;
    Vm* vm_ = nullptr;
    int pid_ = 0;
    bool started_ = false;
    sc_core::sc_event start_ev_;
    std::uint64_t capacity_ = 0;
    std::vector<std::pair<std::uint64_t, std::uint64_t>> allocations_;
    Pldma& dma_;
    const std::uint64_t mmio_base_;
    std::uint64_t heap_next_, heap_end_;
    std::uint64_t rx_ring_ = 0;
    std::uint32_t rx_entries_ = 0;
    const sc_core::sc_time post_overhead_, completion_overhead_;
    tlm_utils::tlm_quantumkeeper qk_;
    tlm::tlm_generic_payload gp_;
    Tracer& tracer_;
    Tracer::Track track_;
};

}  // namespace vrdmasim
