// The MPI program's real processes (workloads/mpi/README.md "The
// processes"): mpirun started with the preloaded library, one socket
// connection a rank, and everything it started ended when the run ends,
// however it ends.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "workloads/mpi/protocol.hpp"

namespace vrdmasim {

class MpiLauncher {
public:
    struct Settings {
        std::string launcher = "mpirun";   // the MPI launcher (Open MPI's mpirun)
        std::vector<std::string> program;   // the program and its arguments
        unsigned ranks = 0;
        std::string compute;   // VRDMASIM_MPI_COMPUTE
        std::string untimed;   // VRDMASIM_MPI_UNTIMED
        std::string memory = "buffers-only";   // VRDMASIM_MPI_MEMORY
        double connect_timeout_s = 120;   // host seconds for every rank to reach MPI_Init
        // Where the program's stdout and stderr are copied, as
        // <output_name>.stdout and .stderr (the run's output directory
        // while it is written); "" for none. They reach vrdmasim's own too.
        std::string output_dir, output_name = "program";
    };
    explicit MpiLauncher(Settings s);
    ~MpiLauncher();   // anything still running is ended (SIGTERM, then SIGKILL)
    MpiLauncher(const MpiLauncher&) = delete;
    MpiLauncher& operator=(const MpiLauncher&) = delete;

    // Start mpirun and wait until every rank has connected (its MPI_Init);
    // std::runtime_error naming what went wrong (no such program, a rank
    // that exited first, the timeout).
    void start();
    // Rank r's next call; std::runtime_error when its process has gone.
    mpiwire::Call receive(unsigned rank);
    // The `count` 64-bit words that follow a call (the request ids it
    // lists, the runs of its program's memory), `what` they are.
    std::vector<std::uint64_t> receive_words(unsigned rank, std::uint64_t count, const char* what);
    // Whether rank r's next call has arrived, waiting at most `wait_ms` of
    // host time for it (then receive() returns it at once).
    bool ready(unsigned rank, int wait_ms);
    void reply(unsigned rank, const mpiwire::Reply& r);
    // After every rank's MPI_Finalize: mpirun's exit, waited for; "" if it
    // exited 0, else what it says (its status).
    std::string wait_for_exit(double timeout_s);

    // End everything still running (mpirun, then its ranks), waited for;
    // the sockets closed, the ranks' shared-memory directory removed. The destructor does it, and so does the
    // process's exit, for a launcher never destroyed.
    void end();

    // The preloaded library beside the running vrdmasim executable.
    static std::string preload_library();

private:
    void accept_ranks();
    std::string exited_how(int status) const;
    void reaped();   // mpirun waited for: forgotten (src/core/child_processes.hpp)

    // A stream of the program's (mpirun's stdout or stderr) copied, as it
    // comes, to a file and to vrdmasim's own stream.
    struct Copy {
        int from = -1, file = -1, to = -1;
        std::atomic<bool> stop{false};
        std::thread thread;
        void run();
    };
    // The pipes mpirun writes into, and their copies started (the write
    // ends into `child_ends`, for the child).
    void start_copies(int child_ends[2]);
    // Every copy finished (`stop`: the program may not have closed its
    // ends, whatever is left is read first) and its file closed.
    void end_copies();

    Settings s_;
    std::vector<std::unique_ptr<Copy>> copies_;
    std::string dir_, socket_;
    std::string shm_dir_;   // the ranks' shared-memory files (mca_settings), removed at end()
    int dir_lock_ = -1, shm_lock_ = -1;   // the two directories' lock files, held to end() (own_directory)
    int listen_fd_ = -1;
    pid_t child_ = -1;
    std::vector<int> fds_;
};

}   // namespace vrdmasim
