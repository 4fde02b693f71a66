#include "src/sim/rank_parties.hpp"

#include <algorithm>
#include <tuple>

#include "src/sim/system.hpp"

namespace vrdmasim {

void SyncParty::merge(const std::vector<Bytes>& all) {
    std::vector<GlobalSync::Contribution> every;
    for (const Bytes& b : all)
        for (auto& c : GlobalSync::deserialize(b)) every.push_back(std::move(c));
    sync_.merge(every);
}

CourierParty::CourierParty(System& sys) : sys_(sys) {
    for (const auto& w : sys_.workloads()) {
        Workload* wl = w.get();
        const auto job = static_cast<std::uint32_t>(wl->job());
        wl->set_courier([this, wl, job](const CheckStep& s) {
            if (sys_.present(s.node)) {
                wl->perform(s);
                return;
            }
            out_.push_back({sc_core::sc_time_stamp().value(), job, seq_++, s});
        });
    }
}

Bytes CourierParty::take() {
    Bytes out;
    ByteWriter w(out);
    for (const Asked& a : out_) {
        w.put(a.at_ps);
        w.put(a.job);
        w.put(a.seq);
        w.put(a.step.kind);
        w.put(static_cast<std::uint32_t>(a.step.from));
        w.put(static_cast<std::uint32_t>(a.step.node));
        w.put(a.step.addr);
        w.put(a.step.len);
        w.put(a.step.key);
    }
    out_.clear();
    return out;
}

void CourierParty::merge(const std::vector<Bytes>& all) {
    std::vector<Asked> here;
    for (const Bytes& b : all) {
        ByteReader r(b);
        while (!r.done()) {
            Asked a{};
            a.at_ps = r.get<std::uint64_t>();
            a.job = r.get<std::uint32_t>();
            a.seq = r.get<std::uint64_t>();
            a.step.kind = r.get<CheckStep::Kind>();
            a.step.from = r.get<std::uint32_t>();
            a.step.node = r.get<std::uint32_t>();
            a.step.addr = r.get<std::uint64_t>();
            a.step.len = r.get<std::uint64_t>();
            a.step.key = r.get<std::uint64_t>();
            if (sys_.present(a.step.node)) here.push_back(a);
        }
    }
    // Asked order, whatever the partition: a node's steps are made on its
    // rank in its program's order (seq), ties between nodes by node.
    std::stable_sort(here.begin(), here.end(), [](const Asked& x, const Asked& y) {
        return std::tie(x.at_ps, x.step.from, x.seq) < std::tie(y.at_ps, y.step.from, y.seq);
    });
    for (const Asked& a : here) {
        sys_.workloads().at(a.job)->perform(a.step);
        ++carried_;
    }
}

}   // namespace vrdmasim
