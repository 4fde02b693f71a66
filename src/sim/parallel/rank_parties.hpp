// What the ranks of a partitioned run exchange at each window's end besides
// the cut links (windows.hpp, WindowParty): the global rendezvous and
// published values of the workloads (GlobalSync), and the workloads' byte
// checks of another rank's memory (CheckStep). docs/scaling.md, "What the
// workloads share across nodes".
#pragma once

#include <cstdint>
#include <vector>

#include "src/core/global_sync.hpp"
#include "src/sim/parallel/windows.hpp"
#include "workloads/workload.hpp"

namespace vrdmasim {

class System;

// GlobalSync's contributions, every rank's merged on every rank.
class SyncParty : public WindowParty {
public:
    explicit SyncParty(GlobalSync& sync) : sync_(sync) { sync_.set_partitioned(true); }
    Bytes take() override { return GlobalSync::serialize(sync_.take()); }
    void merge(const std::vector<Bytes>& all) override;

private:
    GlobalSync& sync_;
};

// The check steps a program asks of a node on another rank (Workload's
// courier), and the notes a node's side of a workload leaves for another
// node's (Workload::leave_note): carried to that node's rank and performed
// or taken there at the end of the window they were made in, before its
// kernel goes on, in the order they were made (by kernel time, then
// asking node, then the asker's own order: the same for any partition).
// One for a node of this rank is performed or taken at once, as in one
// process.
class CourierParty : public WindowParty {
public:
    CourierParty(System& sys);
    Bytes take() override;
    void merge(const std::vector<Bytes>& all) override;
    std::uint64_t carried() const { return carried_; }

private:
    struct Asked {
        std::uint64_t at_ps;
        std::uint32_t job;
        std::uint64_t seq;
        CheckStep step;
    };
    struct Left {
        std::uint64_t at_ps;
        std::uint32_t job;
        std::uint64_t seq;
        Note note;
    };
    System& sys_;
    std::vector<Asked> out_;
    std::vector<Left> notes_;
    std::uint64_t seq_ = 0, carried_ = 0;
};

}   // namespace vrdmasim
