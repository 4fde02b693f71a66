#include "src/sim/parallel/rank_parties.hpp"

#include <algorithm>
#include <stdexcept>
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
        wl->set_note_courier([this, wl, job](const Note& n) {
            if (sys_.present(n.node)) {
                wl->take_note(n);
                return;
            }
            notes_.push_back({sc_core::sc_time_stamp().value(), job, seq_++, n});
        });
    }
}

Bytes CourierParty::take() {
    Bytes out;
    ByteWriter w(out);
    w.put(static_cast<std::uint64_t>(out_.size()));
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
    // Then the notes, after their count.
    w.put(static_cast<std::uint64_t>(notes_.size()));
    for (const Left& l : notes_) {
        w.put(l.at_ps);
        w.put(l.job);
        w.put(l.seq);
        w.put(static_cast<std::uint32_t>(l.note.from));
        w.put(static_cast<std::uint32_t>(l.note.node));
        for (std::uint64_t word : l.note.words) w.put(word);
    }
    notes_.clear();
    return out;
}

void CourierParty::merge(const std::vector<Bytes>& all) {
    std::vector<Asked> here;
    std::vector<Left> notes;
    for (const Bytes& b : all) {
        ByteReader r(b);
        for (auto n = r.get<std::uint64_t>(); n > 0; --n) {
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
        for (auto n = r.get<std::uint64_t>(); n > 0; --n) {
            Left l{};
            l.at_ps = r.get<std::uint64_t>();
            l.job = r.get<std::uint32_t>();
            l.seq = r.get<std::uint64_t>();
            l.note.from = r.get<std::uint32_t>();
            l.note.node = r.get<std::uint32_t>();
            for (std::uint64_t& word : l.note.words) word = r.get<std::uint64_t>();
            if (sys_.present(l.note.node)) notes.push_back(l);
        }
        if (!r.done()) throw std::logic_error("courier: bytes left over in a rank's check steps and notes");
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
    std::stable_sort(notes.begin(), notes.end(), [](const Left& x, const Left& y) {
        return std::tie(x.at_ps, x.note.from, x.seq) < std::tie(y.at_ps, y.note.from, y.seq);
    });
    for (const Left& l : notes) {
        sys_.workloads().at(l.job)->take_note(l.note);
        ++carried_;
    }
}

}   // namespace vrdmasim
