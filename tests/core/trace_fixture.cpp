// Writes a small trace with every kind of event the Tracer makes, flow arrows
// included, for the trace checks (tests/scripts/trace_check_test.py and
// trace_viewer_test.py): the models of today note few stories, so the arrows
// are exercised here through the real writer.
//
//   trace_fixture OUT.json [SPILL_BYTES]
//
// Events are emitted out of time order, as models do under temporal
// decoupling; SPILL_BYTES forces sorted runs to disk and their merge.
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include <systemc>

#include "src/core/trace.hpp"

using sc_core::SC_NS;
using sc_core::sc_time;
using sc_core::SC_US;
using vrdmasim::Tracer;

int sc_main(int argc, char* argv[]) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: trace_fixture OUT.json [SPILL_BYTES]\n");
        return 2;
    }
    try {
        Tracer tr;
        const auto faults = tr.track("node1", "smmu faults");   // before open(): metadata at open
        tr.open(argv[1]);
        if (argc > 2) tr.set_spill_bytes(static_cast<std::size_t>(std::atoll(argv[2])));
        const auto cpu = tr.track("node1", "cpu0");
        const auto vm = tr.track("node1", "vm");
        const auto dma0 = tr.track("node0", "dma");
        const auto dram = tr.track("node0", "dram");
        const auto link = tr.track("node0", "link->node1");

        // Plain slices, nested on one thread, and back to back.
        tr.span(cpu, "activity", sc_time(0, SC_US), sc_time(20, SC_US), {{"activity", Tracer::json_string("run")}});
        tr.span(dram, "read", sc_time(3, SC_US), sc_time(3200, SC_NS));
        tr.span(dram, "write", sc_time(3200, SC_NS), sc_time(3300, SC_NS), {{"addr", Tracer::json_hex(0x1000)}});
        tr.span(link, "data", sc_time(1, SC_US), sc_time(1, SC_US));   // zero length
        // Overlapping transfers: async pairs.
        tr.async_span(dma0, "write", 1, sc_time(1, SC_US), sc_time(9, SC_US), {{"bytes", Tracer::json_number(4096)}});
        tr.async_span(dma0, "write", 2, sc_time(2, SC_US), sc_time(5, SC_US));
        tr.instant(dma0, "NACK", sc_time(4, SC_US), {{"transfer", Tracer::json_number(2)}});

        // A story, noted out of time order: a fault, its handler inside the
        // CPU's activity, the VM's work and two effects of it (one of zero
        // length), then a step under a Scope.
        const auto fault = tr.note(faults, "fault", sc_time(2, SC_US), sc_time(0, SC_US), "node1.smmu",
                                   "translation fault", Tracer::Cause{}, {{"va", Tracer::json_hex(0x7000)}});
        const auto handler = tr.note(cpu, "smmu irq handler", sc_time(3, SC_US), sc_time(2, SC_US), "node1.smmu_driver",
                                     "reads the fault", fault);
        const auto page =
            tr.note(vm, "page in", sc_time(6, SC_US), sc_time(3, SC_US), "node1.vm", "maps the page", handler);
        tr.note(faults, "resume", sc_time(10, SC_US), sc_time(0, SC_US), "node1.smmu", "resumes", page);
        const auto retry =
            tr.note(dma0, "retry", sc_time(11, SC_US), sc_time(1, SC_US), "node0.dma", "sends again", page);
        {
            Tracer::Scope scope(tr, retry);
            tr.note(dram, "write", sc_time(12, SC_US), sc_time(500, SC_NS), "node0.dram", "lands");
        }
        tr.span(cpu, "activity", sc_time(21, SC_US), sc_time(22, SC_US));
        tr.close();
    } catch (const std::exception& e) {
        std::fprintf(stderr, "trace_fixture: %s\n", e.what());
        return 1;
    }
    return 0;
}
