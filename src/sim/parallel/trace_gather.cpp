#include "src/sim/parallel/trace_gather.hpp"

#include <string>
#include <vector>

namespace vrdmasim {

void gather_trace(Tracer& tracer, Comm& comm, std::size_t chunk_bytes) {
    const unsigned me = comm.rank();
    // Every rank's tracks, before any record: rank 0 makes them its own.
    const std::vector<Bytes> tables = comm.allgather(me == 0 ? Bytes{} : tracer.export_tables());
    if (me == 0)
        for (unsigned r = 1; r < comm.size(); ++r) tracer.import_tables(r, tables[r]);
    // Rounds: each rank still sending sends a chunk to rank 0; the loop
    // ends when every rank has sent its last.
    Bytes chunk;
    auto round = [&](bool done) {
        std::vector<Bytes> out(comm.size());
        if (me != 0) out[0].swap(chunk);
        const std::vector<Bytes> in = comm.exchange(out);
        chunk.clear();
        if (me == 0)
            for (unsigned r = 1; r < in.size(); ++r) {
                ByteReader rd(in[r]);
                std::string text;
                while (!rd.done()) {
                    const auto stream = rd.get<std::uint8_t>();
                    const auto ts = rd.get<std::uint64_t>();
                    TimeSortedSpool::Tie tie;
                    tie.a = rd.get<std::uint64_t>();
                    tie.b = rd.get<std::uint64_t>();
                    tie.c = rd.get<std::uint64_t>();
                    rd.get_bytes(text);
                    tracer.import_record(r, stream, ts, tie, std::move(text));
                }
            }
        return comm.min(done ? 1 : 0) == 1;
    };
    if (me != 0) {
        tracer.export_records(
            [&](std::uint8_t stream, std::uint64_t ts, const TimeSortedSpool::Tie& tie, const std::string& text) {
                ByteWriter w(chunk);
                w.put(stream);
                w.put(ts);
                w.put(tie.a);
                w.put(tie.b);
                w.put(tie.c);
                w.put_bytes(reinterpret_cast<const unsigned char*>(text.data()), text.size());
                if (chunk.size() >= chunk_bytes) round(false);
            });
    }
    while (!round(true)) {
    }
}

}   // namespace vrdmasim
