// A fresh directory from mkdtemp for a test, removed with everything in it at
// the end (kept when VRDMASIM_KEEP_TEST_DIRS is set, for inspection).
#pragma once

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include <stdlib.h>

namespace vrdmasim_test {

class TempDir {
public:
    // `prefix` names the directory: /tmp/<prefix>-XXXXXX (or under $TMPDIR).
    explicit TempDir(const std::string& prefix = "vrdmasim-test") {
        const char* base = std::getenv("TMPDIR");
        std::string tmpl = std::string(base && *base ? base : "/tmp") + "/" + prefix + "-XXXXXX";
        std::vector<char> buf(tmpl.begin(), tmpl.end());
        buf.push_back('\0');
        if (mkdtemp(buf.data()) == nullptr) throw std::runtime_error("mkdtemp " + tmpl + ": " + std::strerror(errno));
        path_ = std::filesystem::path(buf.data());
    }
    ~TempDir() {
        const char* keep = std::getenv("VRDMASIM_KEEP_TEST_DIRS");
        if (keep && *keep) return;
        std::error_code ec;
        std::filesystem::remove_all(path_, ec);
    }
    TempDir(const TempDir&) = delete;
    TempDir& operator=(const TempDir&) = delete;
    const std::filesystem::path& path() const { return path_; }
    std::string operator/(const std::string& rel) const { return (path_ / rel).string(); }

private:
    std::filesystem::path path_;
};

}   // namespace vrdmasim_test
