// RLIMIT_MEMLOCK (mm/mlock.c): the bytes a process holds locked (VM_LOCKED
// VMAs) and pinned count against one limit, vm.memlock-limit.
#pragma once

#include <cstdint>

#include "models/os/mm.hpp"

namespace vrdmasim {
namespace mm {

std::uint64_t locked_bytes(const Process& p);
// Whether `more` bytes may be locked or pinned by p; counts a refusal when not.
bool memlock_allows(Mm& m, const Process& p, std::uint64_t more);

}   // namespace mm
}   // namespace vrdmasim
