// Minimal RFC 4180 CSV reading and writing (quotes, doubled quotes, commas and
// newlines inside quoted fields). Part of the simulator core.
#pragma once

#include <iosfwd>
#include <string>
#include <vector>

namespace vrdmasim {

using CsvRow = std::vector<std::string>;

// Quote a field if it holds a comma, quote, CR or LF.
std::string csv_field(const std::string& s);
// Write one row followed by "\n".
void write_csv_row(std::ostream& os, const CsvRow& row);
// Read every row of a CSV document. Throws std::runtime_error on an
// unterminated quoted field.
std::vector<CsvRow> read_csv(std::istream& is);
std::vector<CsvRow> read_csv_file(const std::string& path);   // throws std::runtime_error if unreadable

}   // namespace vrdmasim
