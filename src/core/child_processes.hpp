// Processes a run started that must not outlive it (an MPI program's
// mpirun: workloads/mpi/launcher.hpp). A signal that ends vrdmasim (its
// handler, src/cli/run.cpp on_signal) ends them first, with their own
// clean-up, and waits a little for them: from a signal handler, so every
// call here is async-signal-safe and nothing allocates.
#pragma once

#include <sys/types.h>

namespace vrdmasim {
namespace child_processes {

// Remember `pid` (up to 64 at once; more are not remembered).
void add(pid_t pid);
// Forget it (it was waited for).
void remove(pid_t pid);
// Send SIGTERM to each remembered process, and wait up to `ms`
// milliseconds for all of them to exit (reaped); then SIGKILL any left.
void end_all(int ms);

}   // namespace child_processes
}   // namespace vrdmasim
