#include "src/core/child_processes.hpp"

#include <signal.h>
#include <sys/wait.h>
#include <time.h>

#include <atomic>

namespace vrdmasim {
namespace child_processes {

namespace {
constexpr int kSlots = 64;
std::atomic<pid_t> pids[kSlots];   // 0: free
}   // namespace

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
        if (!left || waited >= ms) return;
        ::nanosleep(&tick, nullptr);
    }
}

}   // namespace child_processes
}   // namespace vrdmasim
