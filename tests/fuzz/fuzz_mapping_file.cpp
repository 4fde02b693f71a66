// Fuzz target: a trace replay's mapping file (trace.mapping = file,
// read_mapping in workloads/trace.cpp), read for a trace of 8 ranks on 16
// nodes. Property: a file is either refused with ConfigError or read to one
// node index per rank, each among the nodes, and those indexes written one
// a line read back the same.
#include <sstream>
#include <string>

#include "workloads/trace.hpp"
#include "fuzz_target.hpp"

VRDMASIM_FUZZ_SC_MAIN

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace vrdmasim;
    constexpr unsigned kNodes = 16, kRanks = 8;
    static const Config cfg(vrdmasim_fuzz::registry());
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    std::vector<unsigned> where;
    try {
        where = read_mapping(cfg, in, "fuzz.map", kNodes, kRanks);
    } catch (const ConfigError&) {
        return 0;
    }
    if (where.size() != kRanks) vrdmasim_fuzz::broken("a mapping of " + std::to_string(where.size()) + " ranks read");
    std::ostringstream os;
    for (unsigned n : where) {
        if (n >= kNodes) vrdmasim_fuzz::broken("node " + std::to_string(n) + " of " + std::to_string(kNodes) + " read");
        os << n << "\n";
    }
    std::istringstream again(os.str());
    std::vector<unsigned> back;
    try {
        back = read_mapping(cfg, again, "written.map", kNodes, kRanks);
    } catch (const ConfigError& e) {
        vrdmasim_fuzz::broken(std::string("a mapping written one index a line does not read back: ") + e.what());
    }
    if (back != where) vrdmasim_fuzz::broken("a mapping changed on a write and read");
    return 0;
}
