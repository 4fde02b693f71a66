// Vm (vm.hpp): the public face of the node's virtual memory. Its state is
// mm::Mm (mm.hpp); each concept's code is in the file named after Linux's
// mm/ (README.md "Vm: files"). Here: construction, processes (their
// page-table root and ASID) and translation for inspection.
#include "models/os/vm.hpp"

#include <stdexcept>

#include "models/os/mm.hpp"
#include "models/os/pgtable.hpp"

namespace vrdmasim {

using namespace mm;

const char* to_string(VmError e) {
    switch (e) {
    case VmError::Ok: return "ok";
    case VmError::NoMemory: return "no memory (ENOMEM)";
    case VmError::Fault: return "bad address (EFAULT)";
    case VmError::Access: return "access denied (EACCES)";
    case VmError::Invalid: return "invalid argument (EINVAL)";
    case VmError::MemlockLimit: return "RLIMIT_MEMLOCK exceeded (ENOMEM)";
    case VmError::Exists: return "address range already mapped (EEXIST)";
    }
    return "?";
}

Vm::Vm(const SimContext& ctx, const std::string& prefix, const std::string& group, tlm::tlm_fw_transport_if<>& memory,
       FrameAllocator& frames, CpuCores& cpu)
    : mm_(std::make_shared<Mm>(ctx, prefix, group, memory, frames, cpu)), frames_(frames) {}

int Vm::create_process(const std::string& name) {
    Mm& m = *mm_;
    const int pid = m.procs.empty() ? 1 : m.procs.rbegin()->first + 1;
    if (pid > 0xffff) throw std::runtime_error("Vm: out of ASIDs");
    Process p;
    p.name = name;
    p.pid = pid;
    p.asid = static_cast<std::uint16_t>(pid);
    Mm* mp = mm_.get();
    try {
        // Through rd and wr: every descriptor write is counted (descriptor_writes).
        p.pt = std::make_unique<PageTableWriter>([mp](std::uint64_t pa) { return rd(*mp, pa); },
                                                 [mp](std::uint64_t pa, std::uint64_t v) { wr(*mp, pa, v); },
                                                 [mp] { return alloc_table(*mp); }, 16);
    } catch (const OutOfFrames&) {
        throw std::runtime_error("Vm: no frame for the page-table root of process '" + name + "'");
    }
    m.procs.emplace(pid, std::move(p));
    return pid;
}

std::uint64_t Vm::root(int pid) const {
    auto it = mm_->procs.find(pid);
    if (it == mm_->procs.end()) throw std::invalid_argument("Vm: no process " + std::to_string(pid));
    return it->second.pt->root();
}

std::uint16_t Vm::asid(int pid) const {
    auto it = mm_->procs.find(pid);
    if (it == mm_->procs.end()) throw std::invalid_argument("Vm: no process " + std::to_string(pid));
    return it->second.asid;
}

bool Vm::translate(int pid, std::uint64_t va, std::uint64_t& pa) const {
    auto it = mm_->procs.find(pid);
    return it != mm_->procs.end() && mm::translate(*mm_, it->second, va, pa);
}

bool Vm::present(int pid, std::uint64_t va) const {
    std::uint64_t pa = 0;
    return translate(pid, va, pa);
}

}   // namespace vrdmasim
