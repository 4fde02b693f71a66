// What the benches share (bench.cpp, bench_kernel.cpp): their command lines
// and the child processes they measure in.
#pragma once

#include <map>
#include <string>
#include <vector>

#include <boost/program_options.hpp>

namespace vrdmasim::bench_detail {

// s as one word for /bin/sh: single-quoted, embedded quotes escaped.
std::string shq(const std::string& s);
// A whole number of decimal digits (no sign) between lo and hi; throws
// std::invalid_argument naming `what` otherwise.
long parse_whole(const std::string& what, const std::string& v, long lo, long hi);
// A bench subcommand's options (no abbreviations). Returns -1 when parsed,
// else the exit status (0 after --help, 2 on an error, with the usage).
int parse_options(const std::string& cmd, const std::vector<std::string>& args,
                  const boost::program_options::options_description& opts, const std::string& usage,
                  boost::program_options::variables_map& vm);
// The command's standard output; `status` its exit status (128 + signal
// if killed, -1 if it could not be started).
std::string capture(const std::string& cmd, int& status);
// "key value" lines printed by a child, by key.
std::map<std::string, double> child_figures(const std::string& cmd, int& status);

}   // namespace vrdmasim::bench_detail
