#include "src/sim/thread_budget.hpp"

#include <fstream>
#include <string>

#include "src/core/lazy_thread.hpp"
#include "src/core/params.hpp"
#include "src/sim/thread_stacks.hpp"

namespace vrdmasim {

namespace {

// Mappings a run makes besides the threads' stacks: glibc serves every
// allocation above its mmap threshold (128 KiB and up) with a mapping of its
// own, and the trace, the outputs and libraries map some more.
constexpr std::size_t kMargin = 4096;

std::size_t read_limit() {
    std::ifstream f("/proc/sys/vm/max_map_count");
    std::size_t v = 0;
    return f >> v ? v : 0;
}

std::size_t mappings_now() {
    std::ifstream f("/proc/self/maps");
    std::size_t n = 0;
    for (std::string line; std::getline(f, line);) ++n;
    return n;
}

}   // namespace

std::size_t thread_processes_under(const sc_core::sc_object& root) {
    const std::string kind = root.kind();
    std::size_t n = kind == "sc_thread_process" || kind == "sc_cthread_process" ? 1 : 0;
    // The LazyThreads the object owns that have not spawned their thread yet
    // (a spawned one is its thread, counted as such).
    // (num_attributes first: attr_cltn() allocates a collection for an
    // object that has none.)
    if (root.num_attributes() > 0) {
        const std::string lazy = LazyThread::kAttribute;
        for (const sc_core::sc_attr_base* a : root.attr_cltn())
            if (a->name().compare(0, lazy.size(), lazy) == 0) ++n;
    }
    for (const sc_core::sc_object* child : root.get_child_objects()) n += thread_processes_under(*child);
    return n;
}

void check_thread_budget(std::size_t threads_per_node, std::size_t nodes, const std::string& what) {
    const std::size_t threads = threads_per_node * nodes;
    const thread_stacks::Need stack_need = thread_stacks::need_for(threads, thread_stacks::default_stack_bytes());
    if (!stack_need.fits)
        throw ConfigError(what + " has up to " + std::to_string(threads) + " SystemC threads (" +
                          std::to_string(threads_per_node) + " per node), whose stacks need more than the " +
                          std::to_string(thread_stacks::capacity_bytes() >> 30) +
                          " GiB of address space of the stack arena (src/sim/thread_stacks.hpp); simulate fewer "
                          "nodes");
    const std::size_t limit = read_limit();
    if (limit == 0) return;   // no /proc: nothing known to check against
    const std::size_t stacks = stack_need.mappings;
    const std::size_t need = mappings_now() + stacks + kMargin;
    if (need <= limit) return;
    const bool arena = thread_stacks::mode() == thread_stacks::Mode::Arena;
    // Rounded up to a multiple of 65,536 (and at least the need) for the advice.
    const std::size_t advise = (need + 65535) / 65536 * 65536;
    const std::string how = arena ? " SystemC threads per node, whose stacks take " + std::to_string(stacks) +
                                        " mappings of the stack arena (src/sim/thread_stacks.hpp)"
                                  : " SystemC threads per node, each a stack and a guard page (" +
                                        std::to_string(stacks) + " mappings: SystemC's own stacks, as " +
                                        thread_stacks::why_systemc() + ")";
    throw ConfigError(what + " needs about " + std::to_string(need) +
                      " memory mappings: " + std::to_string(threads_per_node) + how +
                      ", more than the host allows one process (vm.max_map_count = " + std::to_string(limit) +
                      "); raise the limit, e.g. `sudo sysctl vm.max_map_count=" + std::to_string(advise) +
                      "`, or simulate fewer nodes" +
                      (arena ? "" : std::string(", or run with the stack arena (unset VRDMASIM_STACK_GUARD_PAGES)")));
}

}   // namespace vrdmasim
