// Fuzz target: the CSV reader behind `merge` and sweep resume
// (read_csv_file, RFC 4180). Property: it reads any bytes without crashing,
// and what it read writes out (write_csv_row) and reads back the same.
#include <sstream>
#include <stdexcept>

#include "src/core/csv.hpp"
#include "fuzz_target.hpp"

VRDMASIM_FUZZ_SC_MAIN

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace vrdmasim;
    std::vector<CsvRow> rows;
    try {
        rows = read_csv_file(vrdmasim_fuzz::scratch_file(data, size, ".csv"));
    } catch (const std::runtime_error&) {
        return 0;
    }
    std::ostringstream os;
    for (const auto& r : rows) write_csv_row(os, r);
    const std::string text = os.str();
    std::vector<CsvRow> back;
    try {
        back = read_csv_file(
            vrdmasim_fuzz::scratch_file(reinterpret_cast<const std::uint8_t*>(text.data()), text.size(), ".csv"));
    } catch (const std::runtime_error& e) {
        vrdmasim_fuzz::broken(std::string("written CSV does not read back: ") + e.what());
    }
    if (back != rows) vrdmasim_fuzz::broken("CSV rows changed on a write and read");
    return 0;
}
