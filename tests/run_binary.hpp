// Running the built vrdmasim binary through the shell and reading its
// summary.csv: the helper of the tests that check quoted figures against
// the real executable (tests/cli/why_pinning_test.cpp, headline_test.cpp).
#pragma once

#include <sys/wait.h>

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "temp_dir.hpp"

namespace vrdmasim_test {

struct BinaryRun {
    int status = -1;
    std::string err;
    std::map<std::string, std::string> summary;   // summary.csv's columns
    std::map<std::string, std::string> whole;   // whole-run-summary.csv's (a region of interest only)
    std::string roi_stats;   // roi-stats.json (a region of interest only)
};

inline std::string slurp_file(const std::string& p) {
    std::ifstream in(p);
    std::ostringstream os;
    os << in.rdbuf();
    return os.str();
}

// One CSV line's fields (a quoted field with commas kept whole).
inline std::vector<std::string> csv_fields(const std::string& line) {
    std::vector<std::string> out{""};
    bool quoted = false;
    for (const char c : line) {
        if (c == '"') quoted = !quoted;
        else if (c == ',' && !quoted) out.emplace_back();
        else out.back() += c;
    }
    return out;
}

// `exe run ARGS -o TMP/out` (ARGS as the shell splits them), its exit
// status, stderr and summary row.
inline BinaryRun run_binary(const std::string& exe, const std::string& args, const std::string& tmp_name) {
    TempDir dir(tmp_name);
    const std::string cmd =
        exe + " run " + args + " -o " + (dir / "out") + " >" + (dir / "stdout") + " 2>" + (dir / "stderr");
    BinaryRun r;
    const int s = std::system(cmd.c_str());
    r.status = WIFEXITED(s) ? WEXITSTATUS(s) : -1;
    r.err = slurp_file(dir / "stderr");
    auto read_row = [&](const std::string& file, std::map<std::string, std::string>& into) {
        std::istringstream csv(slurp_file(dir / ("out/" + file)));
        std::string head, row;
        std::getline(csv, head);
        std::getline(csv, row);
        const auto h = csv_fields(head), v = csv_fields(row);
        for (std::size_t i = 0; i < h.size() && i < v.size(); ++i) into[h[i]] = v[i];
    };
    read_row("summary.csv", r.summary);
    read_row("whole-run-summary.csv", r.whole);
    r.roi_stats = slurp_file(dir / "out/roi-stats.json");
    return r;
}

}   // namespace vrdmasim_test
