#include "core/output_dir.hpp"

#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <set>
#include <stdexcept>

namespace vrdmasim {

namespace fs = std::filesystem;

const char* const kRunMarker = ".vrdmasim-run";
const char* const kSweepMarker = ".vrdmasim-sweep";
const char* const kReportFile = "report.html";
const char* const kReportMark = "<meta name=\"generator\" content=\"vrdmasim run --report\">";

namespace {

// "host NAME": pids are only meaningful on the host that wrote the marker
// (an output directory may be on a file system shared by several machines).
std::string host_line() {
    char buf[256] = {};
    if (gethostname(buf, sizeof buf - 1) != 0) return "host ?";
    return std::string("host ") + buf;
}

}  // namespace

void write_marker(const fs::path& dir, const char* name, const std::string& what) {
    std::ofstream os(dir / name, std::ios::trunc);
    os << what << "\n" << host_line() << "\n";
    os.close();
    if (!os) throw std::runtime_error("cannot write " + (dir / name).string());
}

bool is_our_report(const fs::path& file) {
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(file, ec))) return false;
    std::ifstream in(file, std::ios::binary);
    std::string head(1024, '\0');
    in.read(&head[0], static_cast<std::streamsize>(head.size()));
    head.resize(static_cast<std::size_t>(in.gcount()));
    return head.find(kReportMark) != std::string::npos;
}

bool is_run_output(const fs::path& dir) {
    static const std::set<std::string> kOutputs{kRunMarker,   "config.ini", "stats.json", "stats.txt",
                                                "summary.csv", "error.txt",  "trace.json", "events.log",
                                                kReportFile};
    std::error_code ec;
    if (!fs::is_regular_file(dir / kRunMarker, ec)) return false;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!kOutputs.count(name)) return false;
        if (!it->is_regular_file(ec)) return false;
        // A report.html of the user's own (not written by --report) is not ours to replace.
        if (name == kReportFile && !is_our_report(it->path())) return false;
    }
    return !ec;
}

namespace {

// The pid of ".<name>.partial-<pid>" or ".<name>.old-<pid>", or 0.
pid_t partial_pid(const std::string& f) {
    if (f.size() < 2 || f[0] != '.') return 0;
    for (const char* tag : {".partial-", ".old-"}) {
        const auto pos = f.rfind(tag);
        if (pos == std::string::npos || pos == 0) continue;
        const std::string digits = f.substr(pos + std::char_traits<char>::length(tag));
        if (digits.empty() || digits.size() > 9 || digits.find_first_not_of("0123456789") != std::string::npos)
            continue;
        return static_cast<pid_t>(std::atol(digits.c_str()));
    }
    return 0;
}

}  // namespace

int remove_stale_partials(const fs::path& dir) {
    int removed = 0;
    std::error_code ec;
    std::set<fs::path> stale;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const pid_t pid = partial_pid(it->path().filename().string());
        if (pid <= 0) continue;
        std::error_code ec2;
        if (!it->is_directory(ec2) || !fs::is_regular_file(it->path() / kRunMarker, ec2)) continue;
        // Written on this host (else its pid says nothing here).
        std::ifstream marker(it->path() / kRunMarker);
        std::string line;
        bool here = false;
        while (std::getline(marker, line))
            if (line == host_line()) here = true;
        if (!here) continue;
        if (kill(pid, 0) == 0 || errno != ESRCH) continue;   // alive (or not ours to ask): keep
        stale.insert(it->path());
    }
    for (const auto& p : stale) {
        std::error_code ec2;
        if (fs::remove_all(p, ec2) != static_cast<std::uintmax_t>(-1) && !ec2) ++removed;
    }
    return removed;
}

}  // namespace vrdmasim
