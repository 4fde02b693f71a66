// A stand-in for `vrdmasim run`, used only by the sweep tests:
//
//     fake_run run [CONFIG...] [--section.key=value...] --out DIR --quiet
//
// Writes DIR/summary.csv (atomically: DIR.tmp, then rename) with a header and
// one row: every --key=value echoed (column named by key), "configs" (the
// config files' names, ';'-separated) and "metric" (the length of all values
// concatenated); exits 0. A value "fail": prints "error: asked to fail" on
// stderr and exits 3 without writing. "mismatch": writes the summary, exits 1.
// "crash": abort(). "warn" and "warn-other": prints warnings of two kinds
// ("vrdmasim: warning: ...") and runs on. Every invocation with --out
// appends one line to DIR/../../runs.log so tests can count runs.
//
//     fake_run run [CONFIG...] [--section.key=value...] [--origin=KEY=WHERE...] --check
//
// checks instead (what a sweep does before running any point): a value
// "badconfig" is refused (a run refuses it too, exit 2) ("vrdmasim: error: KEY = badconfig (from WHERE):
// refused", exit 2, WHERE "command line" without --origin); otherwise it
// prints "planned: T transfers, B bytes of payload" (T the value of
// workload.window, 1 without; B the value of workload.total-bytes as a
// number of bytes, 0 without) and exits 0. --origin is not echoed.
#include "src/core/csv.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

namespace fs = std::filesystem;

int main(int argc, char* argv[]) {
    if (argc < 2 || std::string(argv[1]) != "run") {
        std::cerr << "usage: fake_run run [CONFIG...] [--k=v...] --out DIR --quiet\n";
        return 2;
    }
    std::vector<std::pair<std::string, std::string>> kvs;
    std::vector<std::string> configs;
    std::vector<std::pair<std::string, std::string>> origins;
    std::string out;
    bool check = false;
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        if (a == "--out") {
            if (i + 1 >= argc) {
                std::cerr << "error: --out needs a directory\n";
                return 2;
            }
            out = argv[++i];
        } else if (a == "--quiet") {
        } else if (a == "--check") {
            check = true;
        } else if (a.rfind("--origin=", 0) == 0) {
            const std::string kv = a.substr(9);
            const auto eq = kv.find('=');
            origins.emplace_back(kv.substr(0, eq), eq == std::string::npos ? "" : kv.substr(eq + 1));
        } else if (a.rfind("--", 0) == 0) {
            auto eq = a.find('=');
            if (eq == std::string::npos) {
                std::cerr << "error: expected --key=value, got " << a << "\n";
                return 2;
            }
            kvs.emplace_back(a.substr(2, eq - 2), a.substr(eq + 1));
        } else {
            if (!fs::exists(a)) {
                std::cerr << "error: cannot open config " << a << "\n";
                return 2;
            }
            configs.push_back(fs::path(a).filename().string());
        }
    }
    if (check) {
        unsigned long long transfers = 1, bytes = 0;
        for (const auto& kv : kvs) {
            if (kv.second == "badconfig") {
                std::string where = "command line";
                for (const auto& o : origins)
                    if (o.first == kv.first) where = o.second;
                std::cerr << "vrdmasim: error: " << kv.first << " = badconfig (from " << where << "): refused\n";
                return 2;
            }
            try {
                if (kv.first == "workload.window") transfers = std::stoull(kv.second);
                if (kv.first == "workload.total-bytes") bytes = std::stoull(kv.second);
            } catch (const std::exception&) {
            }
        }
        std::cout << "vrdmasim: configuration ok, nothing simulated; planned: " << transfers << " transfers, " << bytes
                  << " bytes of payload\n";
        return 0;
    }
    if (out.empty()) {
        std::cerr << "error: no --out\n";
        return 2;
    }

    // Count the run: OUT/points/ID -> OUT/runs.log. One write() with O_APPEND,
    // so lines from parallel runs do not mix.
    {
        std::string line = fs::path(out).filename().string() + "\n";
        std::string log = (fs::path(out).parent_path().parent_path() / "runs.log").string();
        int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            ssize_t n = write(fd, line.data(), line.size());
            (void)n;
            close(fd);
        }
    }

    std::cout << "fake_run: running " << out << std::endl;

    bool mismatch = false;
    std::string all;
    for (const auto& kv : kvs) {
        if (kv.second == "fail") {
            std::cerr << "error: asked to fail\n\n";
            return 3;
        }
        if (kv.second == "crash") std::abort();
        if (kv.second == "badconfig") {   // as a real run refuses a configuration, when it is given one
            std::cerr << "vrdmasim: error: " << kv.first << " = badconfig: refused\n";
            return 2;
        }
        if (kv.second == "mismatch") mismatch = true;
        if (kv.second == "warn")
            std::cerr << "vrdmasim: warning: link order inverted: 3 packet-hop(s) waited for a link (" << kv.first
                      << ")\n";
        if (kv.second == "warn-other") std::cerr << "vrdmasim: warning: hog mmap failed: hog1: mmap of 10 bytes\n";
        all += kv.second;
    }

    vrdmasim::CsvRow header, row;
    for (const auto& kv : kvs) {
        header.push_back(kv.first);
        row.push_back(kv.second);
    }
    std::string joined;
    for (const auto& c : configs) joined += (joined.empty() ? "" : ";") + c;
    header.push_back("configs");
    row.push_back(joined);
    header.push_back("metric");
    row.push_back(std::to_string(all.size()));

    const fs::path tmp = out + ".tmp";
    std::error_code ec;
    fs::remove_all(tmp, ec);
    fs::create_directories(tmp, ec);
    if (ec) {
        std::cerr << "error: cannot create " << tmp.string() << ": " << ec.message() << "\n";
        return 4;
    }
    {
        std::ofstream os(tmp / "summary.csv");
        vrdmasim::write_csv_row(os, header);
        vrdmasim::write_csv_row(os, row);
        if (!os) {
            std::cerr << "error: cannot write summary\n";
            return 4;
        }
    }
    fs::rename(tmp, out, ec);
    if (ec) {
        std::cerr << "error: cannot rename " << tmp.string() << " to " << out << ": " << ec.message() << "\n";
        return 4;
    }
    if (mismatch) {
        std::cerr << "error: data mismatch\n";
        return 1;
    }
    return 0;
}
