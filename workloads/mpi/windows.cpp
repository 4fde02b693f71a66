#include "workloads/mpi/windows.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace vrdmasim {

std::uint64_t MpiWindows::create(unsigned rank, std::uint32_t ctx, const std::vector<unsigned>& members, unsigned me,
                                 const Memory& memory) {
    const std::uint64_t k = next_[{rank, ctx}]++;
    std::uint64_t& id = made_[{ctx, k}];
    if (!id) {
        id = next_id_++;
        Window& w = windows_[id];
        w.ctx = ctx;
        w.members = members;
        w.memory.resize(members.size());
        w.joined.assign(members.size(), false);
    }
    Window& w = windows_.at(id);
    w.memory.at(me) = memory;
    w.joined.at(me) = true;
    if (std::count(w.joined.begin(), w.joined.end(), true) == static_cast<long>(w.members.size()))
        made_.erase({ctx, k});   // every member has it: the next creation on ctx is another window
    return id;
}

const MpiWindows::Window& MpiWindows::at(unsigned rank, std::uint64_t id) const {
    const auto it = windows_.find(id);
    if (it == windows_.end())
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + " names window " + std::to_string(id) +
                                 ", which no rank created (or every member freed)");
    const auto& m = it->second.members;
    const auto me = std::find(m.begin(), m.end(), rank);
    if (me == m.end() || !it->second.joined[static_cast<std::size_t>(me - m.begin())])
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + " names window " + std::to_string(id) +
                                 ", which it is not a member of");
    return it->second;
}

unsigned MpiWindows::world_of(unsigned rank, std::uint64_t id, std::int32_t target) const {
    const Window& w = at(rank, id);
    if (target < 0 || static_cast<std::size_t>(target) >= w.members.size())
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + " names rank " + std::to_string(target) +
                                 " of a window of " + std::to_string(w.members.size()) + " ranks");
    return w.members[static_cast<std::size_t>(target)];
}

std::uint64_t MpiWindows::address(unsigned rank, std::uint64_t id, std::int32_t target, std::uint64_t disp,
                                  std::uint64_t offset, std::uint64_t len, const char* what) const {
    world_of(rank, id, target);
    const Memory& m = at(rank, id).memory[static_cast<std::size_t>(target)];
    const std::uint64_t from = disp * m.disp_unit + offset;
    if (from + len > m.size || from + len < from)
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + ": " + what + " of " + std::to_string(len) +
                                 " B at byte " + std::to_string(from) + " of rank " + std::to_string(target) +
                                 "'s window, which has " + std::to_string(m.size) + " B");
    return m.base + from;
}

void MpiWindows::free(unsigned rank, std::uint64_t id) {
    const Window& w = at(rank, id);
    const auto me = static_cast<std::size_t>(std::find(w.members.begin(), w.members.end(), rank) - w.members.begin());
    Window& mine = windows_.at(id);
    mine.joined[me] = false;
    if (std::none_of(mine.joined.begin(), mine.joined.end(), [](bool j) { return j; })) windows_.erase(id);
}

}   // namespace vrdmasim
