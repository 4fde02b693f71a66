// The OS side of the NetVM NI's shadow page table (see shadow_pager.hpp).
#include "models/os/shadow_pager.hpp"

#include "src/core/format.hpp"

#include "models/os/smmu_driver.hpp"
#include "src/core/software_turns.hpp"

namespace vrdmasim {

using sc_core::sc_time;

namespace {
constexpr std::uint64_t kPage = ShadowTable::kPage;
double us(sc_time t) { return t.to_seconds() * 1e6; }
}   // namespace

ShadowPagerParams::ShadowPagerParams()
    : set("ni", ""),
      update(set.time("shadow-update", "250ns",
                      "ni.translation = shadow: host CPU time to write or clear one entry of the NI's shadow page "
                      "table (*estimate*: the kernel's bookkeeping and an uncached PIO write of a 16 B entry "
                      "through the PS-PL port; NetVM's host wrote the LANai's SRAM over PCI)")
                 .range("0ps", "100us")),
      miss_handler(set.time("miss-handler", "2us",
                            "ni.translation = shadow: the kernel's handler of an NI miss interrupt besides the "
                            "exception entry (smmu-driver.irq-entry) and the fault itself: reading the miss record "
                            "from the NI and finding the process and VMA (*estimate*, as smmu-driver.handler)")
                       .range("0ps", "1ms")) {}

void ShadowPager::declare_params(ParamRegistry& reg) { reg.add(params_of<ShadowPagerParams>().set); }

void ShadowPager::declare_metrics(MetricRegistry& reg) {
    const auto shadow = [](const Config& c) { return c.string("ni.translation") == "shadow"; };
    reg.sum_counters("shadow_updates",
                     "Entries of the NI's shadow page table the host OS wrote or cleared (`ni.shadow_updates`; "
                     "ni.translation = shadow), each ni.shadow-update of CPU time.",
                     {"ni.shadow_updates"}, shadow);
    reg.sum_scalars("shadow_update_us", "us",
                    "Host CPU time spent writing and clearing shadow-table entries (`ni.shadow_update_time`).",
                    "ni.shadow_update_time", 6, shadow);
}

ShadowPager::ShadowPager(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group, Vm& vm,
                         CpuCores& cpu, ShadowTable& table)
    : sc_module(name),
      ctx_(ctx),
      group_(group),
      vm_(vm),
      cpu_(cpu),
      table_(table),
      update_(ctx.config[params_of<ShadowPagerParams>().update]),
      handler_(ctx.config[params_of<SmmuDriverParams>().irq_entry] +
               ctx.config[params_of<ShadowPagerParams>().miss_handler]),
      ahead_(ctx.config[params_of<FaultLibParams>().policy] == "touch-ahead"),
      ahead_pages_(static_cast<std::uint64_t>(ctx.config[params_of<FaultLibParams>().ahead_pages])),
      updates_(ctx.stats.counter(group + ".ni.shadow_updates", "",
                                 "shadow-table entries the OS wrote or cleared (each a PIO write, CPU time)")),
      installs_(ctx.stats.counter(group + ".ni.shadow_installs", "",
                                  "shadow-table entries written for leaves made present (map, swap-in, migration)")),
      removals_(ctx.stats.counter(group + ".ni.shadow_removals", "",
                                  "shadow-table entries cleared (unmap, swap-out, migration, protection change)")),
      handled_(ctx.stats.counter(group + ".ni.misses_handled", "", "NI miss interrupts the kernel served")),
      unresolved_(ctx.stats.counter(group + ".ni.misses_unresolved", "",
                                    "NI misses whose pages could not be made present (the access fails)")),
      coalesced_(ctx.stats.counter(group + ".ni.misses_coalesced", "",
                                   "NI misses on a page whose miss was still waiting for service (not queued again)")),
      refills_(ctx.stats.counter(group + ".ni.shadow_refills", "",
                                 "entries a miss wrote again for a page still mapped (its entry cleared by an "
                                 "invalidation that kept the mapping, e.g. reclaim's second chance)")),
      update_us_(ctx.stats.scalar(group + ".ni.shadow_update_time", "us",
                                  "host CPU time spent writing and clearing shadow-table entries", Scalar::Kind::Sum)),
      service_us_(ctx.stats.histogram(group + ".ni.miss_service", "us",
                                      "NI miss: interrupt to the outcome sent to the engine")) {
    vm_.set_map_notifier([this](const std::vector<VmLeaf>& leaves, sc_time at) { return mapped(leaves, at); });
    vm_.set_invalidate([this](int pid, std::uint16_t, std::uint64_t va, std::uint64_t len, sc_time at) {
        return unmapped(pid, va, len, at);
    });
    vm_.set_page_lock([this](int pid, std::uint64_t va, sc_time at) { return table_.locked(pid, va, at); });
    // Spawned at the first miss (core/lazy_thread.hpp).
    miss_thread_ = std::make_unique<LazyThread>("miss_thread", miss_ev_, [this] { miss_thread(); });
}

sc_time ShadowPager::charge(std::uint64_t n, sc_time at, const char* what) {
    if (n == 0) return at;
    updates_.inc(n);
    const sc_time cost = update_ * static_cast<double>(n);
    update_us_.add(us(cost));
    return cpu_.run("ni-shadow-update", at, cost, group_ + " " + what + " " + std::to_string(n)).end;
}

sc_time ShadowPager::mapped(const std::vector<VmLeaf>& leaves, sc_time at) {
    // The entries are valid once the writes are done.
    const sc_time done = charge(leaves.size(), at, "shadow install");
    for (const VmLeaf& l : leaves) table_.set(l.pid, l.va, l.size, l.pa, l.writable, done);
    installs_.inc(leaves.size());
    return done;
}

sc_time ShadowPager::unmapped(int pid, std::uint64_t va, std::uint64_t len, sc_time at) {
    // Cleared at once (the NI misses from now on: conservative for an NI
    // running behind), the PIO writes charged from `at`.
    const std::uint64_t n = table_.clear(pid, va, len);
    removals_.inc(n);
    return charge(n, at, "shadow clear");
}

void ShadowPager::miss(std::uint32_t sid, int pid, std::uint64_t va, bool write, sc_time at) {
    // A page already waiting for service is not queued again: its one
    // outcome releases everything the engine holds on that page (the engine
    // matches outcomes by stream and page). A retry after dma.fault-timeout
    // would otherwise queue the same page behind itself.
    if (!queued_.insert({pid, va / kPage * kPage}).second) {
        coalesced_.inc();
        return;
    }
    misses_.push_back({sid, pid, va, write, at, ctx_.tracer.current()});
    miss_ev_.notify(sc_core::SC_ZERO_TIME);
}

sc_time ShadowPager::resolve(int pid, std::uint64_t va, bool write, sc_time t, bool& ok) {
    const std::uint64_t page = va / kPage * kPage;
    std::uint64_t n = ahead_ ? ahead_pages_ : 1;
    VmResult r = vm_.fault_in(pid, page, n * kPage, write, t);
    if (!r.ok() && n > 1) {   // only the page matters
        r = vm_.fault_in(pid, page, kPage, write, r.done);
        n = 1;
    }
    ok = r.ok();
    sc_time done = max_time(r.done, t);
    if (!ok) return done;
    // Pages of the range may have been present all along, their entries
    // cleared by an invalidation that left them mapped (reclaim's second
    // chance clears the access flag and invalidates: the NI's next access
    // is how the OS sees the page used again). fault_in set their access
    // flags (an access-flag fault makes nothing present, so no entry is
    // written for it); write their entries again, every page the handler
    // touched, not only the missed one: else the NI misses again on each
    // of the others, one interrupt per page.
    std::vector<VmLeaf> again;
    for (std::uint64_t a = page; a < page + n * kPage;) {
        VmLeaf l;
        if (!vm_.present_leaf(pid, a, l)) {
            a += kPage;
            continue;
        }
        if (!table_.lookup(pid, a, done)) again.push_back(l);
        a = l.va + l.size;
    }
    if (!again.empty()) {
        refills_.inc(again.size());
        done = mapped(again, done);
    }
    return done;
}

void ShadowPager::miss_thread() {
    software_turns::enter(software_turns::node_of(group_));   // the node's driver: software
    for (;;) {
        if (misses_.empty()) sc_core::wait(miss_ev_.get());
        if (misses_.empty()) continue;
        const Miss m = misses_.front();
        misses_.pop_front();
        // The interrupt is taken at its time, not before.
        if (m.at > sc_core::sc_time_stamp()) sc_core::wait(m.at - sc_core::sc_time_stamp());
        handled_.inc();
        const sc_time t = cpu_.run("ni-miss", m.at, handler_, group_ + " NI miss").end;
        bool ok = false;
        const sc_time done = resolve(m.pid, m.va, m.write, t, ok);
        if (!ok) unresolved_.inc();
        const std::uint64_t page = m.va / kPage * kPage;
        service_us_.add(us(done - m.at));
        if (done > sc_core::sc_time_stamp()) sc_core::wait(done - sc_core::sc_time_stamp());
        if (ctx_.tracer.noting())
            ctx_.tracer.note(Tracer::Track{}, "shadow miss", done, sc_core::SC_ZERO_TIME, group_ + ".ni",
                             "shadow miss at va " + hex(m.va) + (ok ? " paged in, entry written" : " not resolved"),
                             m.story);
        queued_.erase({m.pid, page});   // a miss from now on is served again
        if (outcome_) outcome_(m.sid, m.va, m.write, ok, done);
    }
}

}   // namespace vrdmasim
