#include "src/core/child_processes.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstring>

namespace vrdmasim {
namespace child_processes {

namespace {
constexpr int kSlots = 64;
std::atomic<pid_t> pids[kSlots];   // 0: free
// The directories: a path each, taken while `taken` is set.
constexpr int kDirectories = 8;
char directories[kDirectories][256];
std::atomic<bool> taken[kDirectories];
}   // namespace

void add_directory(const char* path) {
    if (std::strlen(path) >= sizeof directories[0]) return;
    for (int i = 0; i < kDirectories; ++i) {
        if (taken[i].load()) continue;
        std::strcpy(directories[i], path);
        taken[i].store(true);
        return;
    }
}

void remove_directory(const char* path) {
    for (int i = 0; i < kDirectories; ++i)
        if (taken[i].load() && std::strcmp(directories[i], path) == 0) taken[i].store(false);
    remove_entries(path, "");
    ::rmdir(path);
}

void remove_entries(const char* dir, const char* prefix) {
    const int fd = ::open(dir, O_RDONLY | O_DIRECTORY);
    if (fd < 0) return;
    alignas(8) static char buf[8192];
    const std::size_t plen = std::strlen(prefix);
    for (;;) {
        const long n = ::syscall(SYS_getdents64, fd, buf, sizeof buf);
        if (n <= 0) break;
        bool removed = false;
        for (long at = 0; at < n;) {
            // struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name.
            unsigned short reclen = 0;
            std::memcpy(&reclen, buf + at + 16, sizeof reclen);
            const char* name = buf + at + 19;
            if (std::strcmp(name, ".") != 0 && std::strcmp(name, "..") != 0 && std::strncmp(name, prefix, plen) == 0 &&
                ::unlinkat(fd, name, 0) == 0)
                removed = true;
            at += reclen;
        }
        // Entries removed: read again from the start (the offsets moved).
        if (!removed) break;
        ::lseek(fd, 0, SEEK_SET);
    }
    ::close(fd);
}

void add(pid_t pid) {
    for (auto& p : pids) {
        pid_t free = 0;
        if (p.compare_exchange_strong(free, pid)) return;
    }
}

void remove(pid_t pid) {
    for (auto& p : pids) {
        pid_t mine = pid;
        if (p.compare_exchange_strong(mine, 0)) return;
    }
}

void end_all(int ms) {
    for (auto& p : pids)
        if (const pid_t pid = p.load(); pid > 0) ::kill(pid, SIGTERM);
    const timespec tick{0, 10 * 1000 * 1000};
    for (int waited = 0;; waited += 10) {
        bool left = false;
        for (auto& p : pids) {
            const pid_t pid = p.load();
            if (pid <= 0) continue;
            if (::waitpid(pid, nullptr, WNOHANG) == pid) {
                p.store(0);
            } else {
                left = true;
                if (waited >= ms) ::kill(pid, SIGKILL);
            }
        }
        if (!left || waited >= ms) break;
        ::nanosleep(&tick, nullptr);
    }
    for (int i = 0; i < kDirectories; ++i)
        if (taken[i].load()) remove_directory(directories[i]);
}

}   // namespace child_processes
}   // namespace vrdmasim
