// What the files of the run report (report.cpp: the page; report_plots.cpp:
// the SVG plots; report_timeline.cpp: the fault timeline) share; not part
// of its API (src/tools/report.hpp).
#pragma once

#include <cmath>
#include <iosfwd>
#include <string>
#include <vector>

#include <systemc>

#include "src/tools/report.hpp"

namespace vrdmasim::report_detail {

std::string lower(std::string s);
// Escaped text in which `code` spans become <code> (the metric and parameter
// descriptions are written for Markdown).
std::string with_code(const std::string& s);
// A unit as a reader writes it.
std::string display_unit(const std::string& unit);
// A number for an axis or caption: up to `digits` significant digits.
std::string num(double v, int digits = 4);
std::string micros(sc_core::sc_time t);

// The time series' section of the page (report_plots.cpp).
void write_timeseries(std::ostream& os, const ReportInputs& in);

}   // namespace vrdmasim::report_detail
