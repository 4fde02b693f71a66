// Fuzz target: the pre-pass of a trace replay (TraceReader: the archive's
// definitions read, then check() walks every event before simulation). An
// OTF2 archive is several files, so an input is several: each begins with a
// line "@@NAME" (NAME relative, of letters, digits, '.', '_', '-' and '/',
// no ".."), its bytes follow up to the next "\n@@" or the input's end. The
// anchor is the first NAME ending in ".otf2". The seeds are the shipped
// traces (configs/traces/) in this form. Property: an archive is either
// refused with ConfigError or checked, and what check() found agrees with
// the archive: a peer set per rank, every peer and the largest message's
// rank among the ranks, a largest message only where messages are.
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "workloads/trace_reader.hpp"
#include "fuzz_target.hpp"

VRDMASIM_FUZZ_SC_MAIN

namespace {

namespace fs = std::filesystem;

bool safe_name(std::string_view n) {
    if (n.empty() || n.size() > 64 || n.front() == '/' || n.find("..") != std::string_view::npos) return false;
    for (char ch : n)
        if (!(std::isalnum(static_cast<unsigned char>(ch)) || ch == '.' || ch == '_' || ch == '-' || ch == '/'))
            return false;
    return true;
}

// The input's files written under a scratch directory of this process
// (emptied first); returns the anchor's path, "" if there is none.
std::string write_archive(std::string_view in) {
    static const fs::path dir = [] {
        const char* t = std::getenv("TMPDIR");
        return fs::path(t && *t ? t : "/tmp") / ("vrdmasim-fuzz-trace-" + std::to_string(getpid()));
    }();
    std::error_code ec;
    fs::remove_all(dir, ec);
    fs::create_directories(dir);
    std::string anchor;
    int files = 0;
    std::size_t at = 0;
    while (at < in.size() && files < 64) {
        if (in.compare(at, 2, "@@") != 0) break;
        const std::size_t eol = in.find('\n', at);
        if (eol == std::string_view::npos) break;
        const std::string_view name = in.substr(at + 2, eol - at - 2);
        std::size_t end = in.find("\n@@", eol + 1);
        const std::size_t next = end == std::string_view::npos ? in.size() : end + 1;
        if (end == std::string_view::npos) end = in.size();
        const std::string_view bytes = in.substr(eol + 1, end - (eol + 1));
        at = next;
        if (!safe_name(name)) continue;
        const fs::path p = dir / std::string(name);
        fs::create_directories(p.parent_path(), ec);
        if (ec || fs::is_directory(p, ec)) continue;
        std::ofstream out(p, std::ios::binary | std::ios::trunc);
        out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
        ++files;
        if (anchor.empty() && name.size() > 5 && name.substr(name.size() - 5) == ".otf2") anchor = p.string();
    }
    return anchor;
}

}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace vrdmasim;
    const std::string anchor = write_archive(std::string_view(reinterpret_cast<const char*>(data), size));
    if (anchor.empty()) return 0;
    static const Config cfg(vrdmasim_fuzz::registry());
    try {
        TraceReader reader(cfg, "trace.file", anchor);
        const TraceSummary s = reader.check();
        const unsigned ranks = reader.ranks();
        if (s.peers.size() != ranks)
            vrdmasim_fuzz::broken("check() found peers of " + std::to_string(s.peers.size()) +
                                  " ranks, the trace has " + std::to_string(ranks));
        for (const auto& peers : s.peers)
            for (std::uint32_t p : peers)
                if (p >= ranks) vrdmasim_fuzz::broken("a peer " + std::to_string(p) + " outside the ranks");
        if (s.largest > 0 && s.largest_rank >= ranks)
            vrdmasim_fuzz::broken("the largest message's rank " + std::to_string(s.largest_rank) +
                                  " is outside the ranks");
        if (reader.ticks_per_second() == 0) vrdmasim_fuzz::broken("a clock of 0 ticks a second accepted");
    } catch (const ConfigError&) {
        return 0;
    }
    return 0;
}
