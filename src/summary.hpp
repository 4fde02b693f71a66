// The columns of summary.csv: declared once, here, with unit and meaning.
// run.cpp fills them (and refuses a column it does not fill, or a value for a
// column not declared); `vrdmasim metrics --markdown` prints this table as
// docs/metrics.md, which a test keeps equal to the committed file.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace vrdmasim {

struct SummaryColumn {
    const char* name;          // CSV header
    const char* unit;          // "us", "B", "Gb/s", "" (a count), "text", "fraction"
    const char* description;   // one paragraph: what it is, built from which statistics
};

// Every column, in the order summary.csv has them.
const std::vector<SummaryColumn>& summary_columns();

// The table as Markdown (docs/metrics.md).
void write_metrics_markdown(std::ostream& os);

}  // namespace vrdmasim
