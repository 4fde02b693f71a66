#include "src/core/output_dir.hpp"

#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <sys/types.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstdint>
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

}   // namespace

void write_marker(const fs::path& dir, const char* name, const std::string& what) {
    errno = 0;
    std::ofstream os(dir / name, std::ios::trunc);
    os << what << "\n" << host_line() << "\n";
    os.close();
    if (!os)
        throw std::runtime_error("cannot write " + (dir / name).string() + ": " +
                                 (errno != 0 ? std::strerror(errno) : "the write failed"));
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
    static const std::set<std::string> kOutputs{
        kRunMarker,   "config.ini",    "stats.json", "stats.txt",      "summary.csv",    "error.txt",
        "trace.json", "trace.json.gz", "events.log", "timeseries.csv", "roi-stats.json", "whole-run-summary.csv",
        kReportFile};
    // An MPI program's output: job 0's program.stdout and program.stderr,
    // job j's program-job<j>.stdout and .stderr.
    const auto program_output = [](const std::string& n) {
        const bool out = n.size() > 7 && n.compare(n.size() - 7, 7, ".stdout") == 0,
                   err = n.size() > 7 && n.compare(n.size() - 7, 7, ".stderr") == 0;
        const std::string stem = n.substr(0, n.size() - 7);
        return (out || err) && (stem == "program" || (stem.rfind("program-job", 0) == 0 && stem.size() > 11 &&
                                                      stem.find_first_not_of("0123456789", 11) == std::string::npos));
    };
    std::error_code ec;
    if (!fs::is_regular_file(dir / kRunMarker, ec)) return false;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const std::string name = it->path().filename().string();
        if (!kOutputs.count(name) && !program_output(name)) return false;
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

}   // namespace

int remove_stale_partials(const fs::path& dir) {
    int removed = 0;
    std::error_code ec;
    std::set<fs::path> stale;
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
        const pid_t pid = partial_pid(it->path().filename().string());
        if (pid <= 0) continue;
        std::error_code ec2;
        if (!it->is_directory(ec2) || !fs::is_regular_file(it->path() / kRunMarker, ec2)) continue;
        // An earlier output moved aside holds only a run's files; one that
        // could not be put back after something foreign arrived in it is kept.
        const std::string name = it->path().filename().string();
        if (name.find(".old-") != std::string::npos && !is_run_output(it->path())) continue;
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

int rename_noreplace(const fs::path& from, const fs::path& to) {
    if (renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_NOREPLACE) == 0) return 0;
    if (errno != EINVAL && errno != ENOSYS) return errno;
    // A file system without RENAME_NOREPLACE: a narrow window, not none.
    std::error_code ec;
    if (fs::exists(fs::symlink_status(to, ec))) return EEXIST;
    return std::rename(from.c_str(), to.c_str()) == 0 ? 0 : errno;
}

std::string claim_run_output(const fs::path& target) {
    std::error_code ec;
    const fs::file_status st = fs::symlink_status(target, ec);
    // An absent target stays absent until the outputs are renamed into
    // place whole: a run killed before then (SIGKILL leaves no chance to
    // clean up) leaves no empty directory at the user's path, only its
    // hidden staging directory, which the next run removes.
    if (!fs::exists(st)) return "";
    if (!fs::is_directory(st)) return "exists and is not a directory; refusing to replace it";
    if (!fs::is_empty(target, ec) && !is_run_output(target))
        return std::string("directory exists and is not an earlier vrdmasim run's output (no ") + kRunMarker +
               " marker, or files a run does not write); refusing to replace it";
    if (!fs::is_regular_file(target / kRunMarker, ec))
        write_marker(target, kRunMarker, "vrdmasim run output (claimed; the run has not finished)");
    return "";
}

std::string publish_run_output(const fs::path& tmp, const fs::path& target) {
    // Outputs that cannot go to target are kept beside it under a visible
    // name (a hidden ".partial-" directory would be cleaned up as a killed
    // run's leftover).
    auto keep = [&]() {
        fs::path visible = target.string() + ".run-" + std::to_string(getpid());
        if (rename_noreplace(tmp, visible) != 0) visible = tmp;
        return "; this run's outputs are in " + visible.string();
    };
    std::error_code ec;
    fs::path aside;
    if (fs::exists(fs::symlink_status(target, ec))) {
        aside = target.parent_path() / ("." + target.filename().string() + ".old-" + std::to_string(getpid()));
        if (const int err = rename_noreplace(target, aside))
            return "cannot move the earlier output " + target.string() + " aside: " + std::strerror(err) + keep();
        // Checked once it is out of everybody's way: what was put there while
        // the run simulated is not a run's output, and goes back untouched.
        if (!fs::is_directory(fs::symlink_status(aside, ec)) || !is_run_output(aside)) {
            const int err = rename_noreplace(aside, target);
            return target.string() +
                   " changed while the run simulated and is no longer a vrdmasim run's output "
                   "(something other than a run's files is in it); it is left untouched" +
                   (err ? " in " + aside.string() : std::string()) + keep();
        }
    }
    if (const int err = rename_noreplace(tmp, target)) {
        std::string msg = "cannot move outputs into " + target.string() + ": " + std::strerror(err);
        if (!aside.empty() && rename_noreplace(aside, target) != 0)
            msg += " (the earlier output is in " + aside.string() + ")";
        return msg + keep();
    }
    if (!aside.empty()) fs::remove_all(aside, ec);
    return "";
}

namespace {

const char* const kMergeMarkTag = "vrdmasim merge output";

fs::path merge_mark_path(const fs::path& file) {
    return file.parent_path() / ("." + file.filename().string() + ".vrdmasim-merge");
}

// FNV-1a, 64 bits, of the file's bytes; false if it cannot be read.
bool file_hash(const fs::path& file, std::uint64_t& h) {
    std::ifstream in(file, std::ios::binary);
    if (!in) return false;
    h = 1469598103934665603ull;
    char buf[1 << 16];
    while (in) {
        in.read(buf, sizeof buf);
        for (std::streamsize i = 0; i < in.gcount(); ++i) {
            h ^= static_cast<unsigned char>(buf[i]);
            h *= 1099511628211ull;
        }
    }
    return in.eof();
}

std::string hash_line(std::uint64_t h) {
    char buf[40];
    std::snprintf(buf, sizeof buf, "fnv1a64 %016llx", static_cast<unsigned long long>(h));
    return buf;
}

}   // namespace

bool is_merge_output(const fs::path& file) {
    std::error_code ec;
    if (!fs::is_regular_file(fs::symlink_status(file, ec))) return false;
    std::ifstream mark(merge_mark_path(file));
    std::string tag, line;
    if (!std::getline(mark, tag) || tag != kMergeMarkTag || !std::getline(mark, line)) return false;
    std::uint64_t h = 0;
    return file_hash(file, h) && line == hash_line(h);
}

std::string write_merge_mark(const fs::path& file) {
    std::uint64_t h = 0;
    if (!file_hash(file, h)) return "cannot read " + file.string();
    return write_file_atomically(merge_mark_path(file), std::string(kMergeMarkTag) + "\n" + hash_line(h) + "\n");
}

std::string write_file_atomically(const fs::path& path, const std::string& text) {
    // A fresh name (O_EXCL): a file already there, whoever's, is left alone.
    fs::path tmp;
    int fd = -1;
    for (int k = 0; fd < 0 && k < 100; ++k) {
        tmp = path.parent_path() / ("." + path.filename().string() + ".partial-" + std::to_string(getpid()) +
                                    (k ? "-" + std::to_string(k) : std::string()));
        fd = open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (fd < 0 && errno != EEXIST) break;
    }
    if (fd < 0) return "cannot write " + tmp.string() + ": " + std::strerror(errno);
    const char* p = text.data();
    std::size_t left = text.size();
    int err = 0;
    while (left > 0) {
        const ssize_t n = write(fd, p, left);
        if (n < 0) {
            if (errno == EINTR) continue;
            err = errno;
            break;
        }
        p += n;
        left -= static_cast<std::size_t>(n);
    }
    if (!err && fsync(fd) != 0) err = errno;
    if (close(fd) != 0 && !err) err = errno;
    if (!err && std::rename(tmp.c_str(), path.c_str()) != 0) err = errno;
    if (err) {
        std::error_code ec;
        fs::remove(tmp, ec);
        return "cannot write " + path.string() + ": " + std::strerror(err);
    }
    return "";
}

}   // namespace vrdmasim
