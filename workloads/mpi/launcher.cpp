#include "workloads/mpi/launcher.hpp"

#include "src/core/child_processes.hpp"

#include <poll.h>
#include <signal.h>
#include <dirent.h>
#include <sys/file.h>
#include <sys/personality.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fcntl.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstdio>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <thread>

namespace vrdmasim {

namespace {

bool read_exact(int fd, void* p, std::size_t n) {
    char* b = static_cast<char*>(p);
    while (n) {
        const ssize_t r = ::read(fd, b, n);
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return false;
        b += r;
        n -= static_cast<std::size_t>(r);
    }
    return true;
}

bool write_exact(int fd, const void* p, std::size_t n) {
    const char* b = static_cast<const char*>(p);
    while (n) {
        const ssize_t w = ::send(fd, b, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return false;
        b += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}

double since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// The launchers whose processes may still run. vrdmasim keeps its System
// (and so the workload and its launcher) to the exit without destroying
// it: at the exit, however the run ended, each is stopped (mpirun ended
// and waited for, so that nothing is left running or unreaped).
std::vector<MpiLauncher*>& live() {
    static std::vector<MpiLauncher*> v;
    return v;
}

void stop_live() {
    for (MpiLauncher* l : live()) l->end();
}

// In the child, before mpirun: what makes the program's memory the same
// in every run, inherited by mpirun and the ranks. The program's addresses
// are its buffers' simulated addresses (no address-space randomisation).
// Its pages are resident one by one as it touches them (no transparent
// huge pages): under THP one touch makes up to 512 pages resident, and
// khugepaged collapses more in host time, so mincore's answer (the
// program's first touches, README "The program's memory") would follow
// the host's /sys/kernel/mm/transparent_hugepage settings and timing.
void same_memory_every_run() {
    ::personality(ADDR_NO_RANDOMIZE);
    ::prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0);
}

// The Open MPI settings the launcher depends on, given on mpirun's command
// line (which Open MPI reads before the environment), each value for the
// directory `shm` (README "The processes"): the ranks talk through shared
// memory only (vader; osc/rdma's windows need it, and no transport
// changes what the simulation sees), and their backing files are made in
// the run's own directory.
std::vector<std::pair<std::string, std::string>> mca_settings(const std::string& shm) {
    return {{"btl", "self,vader"},
            {"btl_vader_backing_directory", shm},
            {"osc_rdma_backing_directory", shm},
            {"osc_sm_backing_directory", shm}};
}

// mca_settings(shm) added to mpirun's arguments; a user's OMPI_MCA_
// variable for one of them overridden, said so.
void add_mca_settings(std::vector<std::string>& args, const std::string& shm) {
    for (const auto& [name, value] : mca_settings(shm)) {
        const char* user = std::getenv(("OMPI_MCA_" + name).c_str());
        if (user && value != user)
            std::cerr << "vrdmasim: note: mpi: OMPI_MCA_" << name << "=" << user
                      << " in the environment is overridden: "
                      << "the launcher runs the ranks with " << name << " = " << value
                      << " (workloads/mpi/README.md \"The processes\")\n";
        args.insert(args.end(), {"--mca", name, value});
    }
}

// In the child, before mpirun: Open MPI's pml, unless the user's
// OMPI_MCA_pml names one: ob1, the one that carries point-to-point
// messages over the BTLs mca_settings sets (cm would bypass them) and the
// one Open MPI 4.1.4 chooses here anyway, named so that each rank does not
// load and probe cm's MTLs (psm, psm2): a 4-rank ring's run took about 50
// ms less CPU time, 300 against 354 ms (README "Open MPI's settings").
void default_pml() { ::setenv("OMPI_MCA_pml", "ob1", 0); }

// The lock file of a run's own directory (own_directory): held (flock)
// from its making to the run's end, and let go by the kernel however
// vrdmasim ends, SIGKILL too.
constexpr const char* kOwnerLock = "/owner.lock";

// The directories `in`/`prefix`<pid>-XXXXXX that a vrdmasim killed with
// SIGKILL left behind, removed: each a directory of this user's whose
// name is own_directory()'s, whose pid is no process, and whose lock file
// is there and not held (its owner is dead: no live run's directory, in
// this or another pid namespace, is ever taken). Anything else is left
// as it is.
void remove_orphans(const std::string& in, const std::string& prefix) {
    DIR* d = ::opendir(in.c_str());
    if (!d) return;
    while (const dirent* e = ::readdir(d)) {
        const std::string name = e->d_name;
        const std::size_t digits = name.find_first_not_of("0123456789", prefix.size());
        if (name.compare(0, prefix.size(), prefix) != 0 || digits == prefix.size() || digits > prefix.size() + 9 ||
            digits == std::string::npos || name[digits] != '-' || name.size() != digits + 7)
            continue;
        const pid_t pid = static_cast<pid_t>(std::stol(name.substr(prefix.size(), digits - prefix.size())));
        const std::string path = in + "/" + name;
        struct stat st {};
        if (::lstat(path.c_str(), &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != ::geteuid() || pid == ::getpid() ||
            ::kill(pid, 0) == 0 || errno != ESRCH)
            continue;
        const int lock = ::open((path + kOwnerLock).c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
        if (lock < 0) continue;   // not a run's own, or one being made
        if (::flock(lock, LOCK_EX | LOCK_NB) == 0) {
            std::error_code ec;
            std::filesystem::remove_all(path, ec);
        }
        ::close(lock);
    }
    ::closedir(d);
}

// A directory of the run's own, `in`/`prefix`<vrdmasim's pid>-XXXXXX,
// with its lock file held (`lock`, closed at the run's end): those a
// vrdmasim killed with SIGKILL left in `in` removed first (remove_orphans).
std::string own_directory(const std::string& in, const std::string& prefix, int& lock) {
    remove_orphans(in, prefix);
    std::string dir = in + "/" + prefix + std::to_string(::getpid()) + "-XXXXXX";
    if (!::mkdtemp(dir.data())) throw std::runtime_error("mpi: mkdtemp in " + in + ": " + std::strerror(errno));
    // Held before it has its name: a lock file found is a held one or an
    // orphan's.
    const std::string taking = dir + kOwnerLock + ".new";
    lock = ::open(taking.c_str(), O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0600);
    if (lock < 0 || ::flock(lock, LOCK_EX) != 0 || ::rename(taking.c_str(), (dir + kOwnerLock).c_str()) != 0) {
        const int e = errno;
        if (lock >= 0) ::close(lock), lock = -1;
        ::unlink(taking.c_str());
        ::rmdir(dir.c_str());
        throw std::runtime_error("mpi: cannot make the lock file in " + dir + ": " + std::strerror(e));
    }
    return dir;
}

// An own_directory() that holds nothing but its lock file (and what was
// unlinked) removed, its lock let go; `dir` cleared.
void remove_own(std::string& dir, int& lock) {
    if (dir.empty()) return;
    ::unlink((dir + kOwnerLock).c_str());
    ::rmdir(dir.c_str());
    if (lock >= 0) ::close(lock), lock = -1;
    dir.clear();
}

// The ranks' shared-memory files' directory, of the run's own: in `base`
// (TMPDIR) if not "", else in /dev/shm (tmpfs) if there is one, else in
// /tmp; removed with what is in it when the run ends, however its ranks
// ended (MpiLauncher::end, child_processes::end_all).
std::string shm_directory(const std::string& base, int& lock) {
    const std::string in = !base.empty() ? base : ::access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    return own_directory(in, "vrdmasim-mpi-shm-", lock);
}

}   // namespace

MpiLauncher::MpiLauncher(Settings s) : s_(std::move(s)) {
    // The list first, then the handler: it runs before the list is destroyed.
    static const bool registered = (live(), std::atexit(stop_live) == 0);
    (void)registered;
    live().push_back(this);
}

MpiLauncher::~MpiLauncher() {
    end();
    auto& v = live();
    v.erase(std::remove(v.begin(), v.end(), this), v.end());
}

std::string MpiLauncher::preload_library() {
    char exe[4096];
    const ssize_t n = ::readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n <= 0) throw std::runtime_error("mpi: cannot find the running executable (/proc/self/exe)");
    exe[n] = 0;
    std::string dir(exe);
    dir = dir.substr(0, dir.rfind('/'));
    const std::string lib = dir + "/libvrdmasim_mpi.so";
    if (::access(lib.c_str(), R_OK) != 0)
        throw std::runtime_error("mpi: the preloaded library " + lib +
                                 " is missing: it is built beside vrdmasim (cmake --build)");
    return lib;
}

void MpiLauncher::start() {
    const std::string lib = preload_library();
    // In TMPDIR when its path leaves room for the socket's name (a Unix
    // socket's path has 108 bytes), else in /tmp.
    const char* tmpdir = std::getenv("TMPDIR");
    std::string base = tmpdir && *tmpdir && std::strlen(tmpdir) < 64 ? tmpdir : "/tmp";
    dir_ = own_directory(base, "vrdmasim-mpi-", dir_lock_);
    shm_dir_ = shm_directory(tmpdir && *tmpdir ? base : "", shm_lock_);
    child_processes::add_directory(shm_dir_.c_str());
    socket_ = dir_ + "/calls";
    listen_fd_ = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_un addr{};
    addr.sun_family = AF_UNIX;
    std::strcpy(addr.sun_path, socket_.c_str());
    if (listen_fd_ < 0 || ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::listen(listen_fd_, static_cast<int>(s_.ranks)) != 0)
        throw std::runtime_error("mpi: cannot listen on " + socket_ + ": " + std::strerror(errno));
    std::vector<std::string> args = {s_.launcher,
                                     "-np",
                                     std::to_string(s_.ranks),
                                     "--oversubscribe",
                                     "--bind-to",
                                     "none",
                                     "-x",
                                     std::string(mpiwire::kSocketEnv),
                                     "-x",
                                     std::string(mpiwire::kComputeEnv),
                                     "-x",
                                     std::string(mpiwire::kUntimedEnv),
                                     "-x",
                                     std::string(mpiwire::kMemoryEnv),
                                     "-x",
                                     "LD_PRELOAD=" + lib};
    add_mca_settings(args, shm_dir_);
    args.insert(args.end(), s_.program.begin(), s_.program.end());
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    int child_ends[2] = {-1, -1};
    start_copies(child_ends);
    child_ = ::fork();
    if (child_ < 0) {
        const int e = errno;
        for (int fd : child_ends)
            if (fd >= 0) ::close(fd);
        end_copies();
        throw std::runtime_error(std::string("mpi: fork: ") + std::strerror(e));
    }
    if (child_ == 0) {
        for (int i = 0; i < 2; ++i)
            if (child_ends[i] >= 0) ::dup2(child_ends[i], i + 1);   // stdout, stderr into the copies
        ::setenv(mpiwire::kSocketEnv, socket_.c_str(), 1);
        ::setenv(mpiwire::kComputeEnv, s_.compute.c_str(), 1);
        ::setenv(mpiwire::kUntimedEnv, s_.untimed.c_str(), 1);
        ::setenv(mpiwire::kMemoryEnv, s_.memory.c_str(), 1);
        default_pml();
        // Root in a container: Open MPI asks for both (its mpirun(1)).
        if (::geteuid() == 0) {
            ::setenv("OMPI_ALLOW_RUN_AS_ROOT", "1", 1);
            ::setenv("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1", 1);
        }
        same_memory_every_run();
        // vrdmasim gone (killed, crashed): mpirun is ended with it.
        ::prctl(PR_SET_PDEATHSIG, SIGTERM);
        ::execvp(argv[0], argv.data());
        std::fprintf(stderr, "vrdmasim: mpi: cannot run %s: %s\n", argv[0], std::strerror(errno));
        std::_Exit(127);
    }
    for (int fd : child_ends)
        if (fd >= 0) ::close(fd);
    child_processes::add(child_);
    try {
        accept_ranks();
    } catch (...) {
        end();   // nothing of this start left behind
        throw;
    }
}

void MpiLauncher::reaped() {
    child_processes::remove(child_);
    child_ = -1;
}

std::string MpiLauncher::exited_how(int status) const {
    if (WIFEXITED(status)) {
        if (WEXITSTATUS(status) == 127) return s_.launcher + " could not be run (exit 127)";
        return s_.launcher + " exited with status " + std::to_string(WEXITSTATUS(status));
    }
    if (WIFSIGNALED(status)) return s_.launcher + " was killed by signal " + std::to_string(WTERMSIG(status));
    return s_.launcher + " stopped";
}

void MpiLauncher::accept_ranks() {
    fds_.assign(s_.ranks, -1);
    const auto t0 = std::chrono::steady_clock::now();
    for (unsigned got = 0; got < s_.ranks;) {
        pollfd pf{listen_fd_, POLLIN, 0};
        const int ready = ::poll(&pf, 1, 100);
        int status = 0;
        if (child_ > 0 && ::waitpid(child_, &status, WNOHANG) == child_) {
            reaped();
            throw std::runtime_error("mpi: " + exited_how(status) + " before every rank reached MPI_Init (" +
                                     std::to_string(got) + " of " + std::to_string(s_.ranks) + " did)");
        }
        if (since(t0) > s_.connect_timeout_s)
            throw std::runtime_error("mpi: " + std::to_string(got) + " of " + std::to_string(s_.ranks) +
                                     " ranks reached MPI_Init in " + std::to_string(int(s_.connect_timeout_s)) +
                                     " s (is the program an MPI program, linked dynamically with Open MPI?)");
        if (ready <= 0) continue;
        const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (fd < 0) continue;
        mpiwire::Call hello;
        if (!read_exact(fd, &hello, sizeof hello) || hello.op != static_cast<std::uint32_t>(mpiwire::Op::Hello) ||
            hello.request != mpiwire::kVersion) {
            ::close(fd);
            throw std::runtime_error(
                "mpi: a process connected with something other than this vrdmasim's hello "
                "(a preloaded library of another version?)");
        }
        if (hello.peer < 0 || static_cast<unsigned>(hello.peer) >= s_.ranks || fds_[hello.peer] >= 0 ||
            static_cast<unsigned>(hello.tag) != s_.ranks) {
            ::close(fd);
            throw std::runtime_error("mpi: a process says it is rank " + std::to_string(hello.peer) + " of " +
                                     std::to_string(hello.tag) + "; mpi.ranks = " + std::to_string(s_.ranks));
        }
        fds_[hello.peer] = fd;
        ++got;
    }
    // Connected: nothing more comes through the socket's name, so it goes
    // now (the run's end may not run destructors: vrdmasim keeps its
    // System to the exit).
    ::close(listen_fd_);
    listen_fd_ = -1;
    ::unlink(socket_.c_str());
    remove_own(dir_, dir_lock_);
    socket_.clear();
}

mpiwire::Call MpiLauncher::receive(unsigned rank) {
    mpiwire::Call c;
    if (!read_exact(fds_.at(rank), &c, sizeof c)) {
        std::string how = "its connection closed";
        // mpirun notices a rank's end within moments: say how it ended.
        for (int i = 0; i < 50 && child_ > 0; ++i) {
            int status = 0;
            if (::waitpid(child_, &status, WNOHANG) == child_) {
                reaped();
                how = exited_how(status);
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + "'s process ended without MPI_Finalize (" + how +
                                 "; its own message, if any, is on the program's stderr)");
    }
    return c;
}

std::vector<std::uint64_t> MpiLauncher::receive_words(unsigned rank, std::uint64_t count, const char* what) {
    if (count > (1u << 26))
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + " sends " + std::to_string(count) + " " + what +
                                 " with one call (a preloaded library of another version?)");
    std::vector<std::uint64_t> ids(count);
    if (count && !read_exact(fds_.at(rank), ids.data(), count * sizeof(std::uint64_t)))
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + "'s process ended in the middle of a call");
    return ids;
}

bool MpiLauncher::ready(unsigned rank, int wait_ms) {
    pollfd pf{fds_.at(rank), POLLIN, 0};
    return ::poll(&pf, 1, wait_ms) > 0;   // data, or the end of the connection (receive() says which)
}

void MpiLauncher::reply(unsigned rank, const mpiwire::Reply& r) {
    if (!write_exact(fds_.at(rank), &r, sizeof r))
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + "'s process ended while waiting for a reply");
}

std::string MpiLauncher::wait_for_exit(double timeout_s) {
    const auto t0 = std::chrono::steady_clock::now();
    while (child_ > 0) {
        int status = 0;
        if (::waitpid(child_, &status, WNOHANG) == child_) {
            reaped();
            end_copies();   // every rank gone with mpirun: the copies read to the end
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return "";
            return exited_how(status);
        }
        if (since(t0) > timeout_s)
            return s_.launcher + " did not exit within " + std::to_string(int(timeout_s)) +
                   " s of the last MPI_Finalize";
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return "";
}

void MpiLauncher::Copy::run() {
    char buf[65536];
    for (;;) {
        pollfd p{from, POLLIN, 0};
        const int ready = ::poll(&p, 1, 100);
        if (ready < 0 && errno == EINTR) continue;
        if (ready == 0) {
            if (stop) return;
            continue;
        }
        const ssize_t n = ::read(from, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return;   // every writer closed its end
        for (const int fd : {file, to}) {
            const char* b = buf;
            for (ssize_t left = n; left > 0;) {
                const ssize_t w = ::write(fd, b, static_cast<std::size_t>(left));
                if (w < 0 && errno == EINTR) continue;
                if (w <= 0) break;   // a full disk: the copy to the terminal goes on
                b += w;
                left -= w;
            }
        }
    }
}

void MpiLauncher::start_copies(int child_ends[2]) {
    if (s_.output_dir.empty()) return;
    const char* names[2] = {".stdout", ".stderr"};
    for (int i = 0; i < 2; ++i) {
        int fds[2];
        if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error(std::string("mpi: pipe: ") + std::strerror(errno));
        const std::string path = s_.output_dir + "/" + s_.output_name + names[i];
        const int file = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
        if (file < 0) {
            ::close(fds[0]);
            ::close(fds[1]);
            throw std::runtime_error("mpi: cannot write " + path + ": " + std::strerror(errno));
        }
        auto c = std::make_unique<Copy>();
        c->from = fds[0];
        c->file = file;
        c->to = i + 1;
        child_ends[i] = fds[1];
        Copy* raw = c.get();
        c->thread = std::thread([raw] { raw->run(); });
        copies_.push_back(std::move(c));
    }
}

void MpiLauncher::end_copies() {
    for (auto& c : copies_) {
        c->stop = true;
        if (c->thread.joinable()) c->thread.join();
        ::close(c->from);
        ::close(c->file);
    }
    copies_.clear();
}

void MpiLauncher::end() {
    for (int& fd : fds_)
        if (fd >= 0) ::close(fd), fd = -1;   // a rank waiting for a reply sees the end
    if (listen_fd_ >= 0) ::close(listen_fd_), listen_fd_ = -1;
    if (child_ > 0) {
        ::kill(child_, SIGTERM);   // mpirun ends its ranks
        bool gone = false;
        for (int i = 0; i < 250 && !gone; ++i) {
            int status = 0;
            gone = ::waitpid(child_, &status, WNOHANG) == child_;
            if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
        if (!gone) {
            ::kill(child_, SIGKILL);
            ::waitpid(child_, nullptr, 0);
        }
        reaped();
    }
    end_copies();
    if (!socket_.empty()) ::unlink(socket_.c_str());
    remove_own(dir_, dir_lock_);
    if (!shm_dir_.empty()) {   // mpirun and its ranks gone: their files in it go too
        child_processes::remove_directory(shm_dir_.c_str());
        shm_dir_.clear();
    }
    if (shm_lock_ >= 0) ::close(shm_lock_), shm_lock_ = -1;
}

}   // namespace vrdmasim
