// `vrdmasim bench`: host cost of a simulated packet, as a ratio to the cost
// of a bare SystemC b_transport + wait() round trip measured in the same run.
#pragma once

#include <string>
#include <vector>

namespace vrdmasim {

int bench_command(const std::vector<std::string>& args);
// The bare loop, run in its own process by bench_command (SystemC allows one
// elaboration per process). Prints "bare_ns_per_iteration <x>".
int bench_bare_command(const std::vector<std::string>& args);
// The SMMU's TLB-hit path against a direct call, in its own process.
// Prints "direct_ns_per_call <x>" and "smmu_ns_per_call <y>".
int bench_smmu_command(const std::vector<std::string>& args);
// `bench --kernel` (bench_kernel.cpp): SystemC's cost of a timed wake-up
// among as many processes as tori of 64 to max_nodes nodes keep, each size
// and kind in a child `bench-kernel`. Prints the table; 0, or 1 if a child
// failed.
int bench_kernel(const std::string& exe, unsigned max_nodes);
// One size and kind of it. Prints "ns_per_wakeup <x>".
int bench_kernel_child_command(const std::vector<std::string>& args);

}   // namespace vrdmasim
