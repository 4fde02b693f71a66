// Processes a run started that must not outlive it (an MPI program's
// mpirun: workloads/mpi/launcher.hpp), and the directories they write in
// (its ranks' shared-memory files). A signal that ends vrdmasim (its
// handler, src/cli/run.cpp on_signal) ends them first, with their own
// clean-up, waits a little for them, then removes the directories: from a
// signal handler, so every call here is async-signal-safe and nothing
// allocates.
#pragma once

#include <sys/types.h>

namespace vrdmasim {
namespace child_processes {

// Remember `pid` (up to 64 at once; more are not remembered).
void add(pid_t pid);
// Forget it (it was waited for).
void remove(pid_t pid);
// Send SIGTERM to each remembered process, and wait up to `ms`
// milliseconds for all of them to exit (reaped); then SIGKILL any left;
// then remove each remembered directory.
void end_all(int ms);
// Remember directory `path` (a run's own, which its processes write in: up
// to 8 at once, at most 255 bytes each; added from one thread at a time),
// emptied and removed by end_all.
void add_directory(const char* path);
// Empty and remove directory `path` now (its entries: files, no
// subdirectories), and forget it.
void remove_directory(const char* path);
// Remove the entries of directory `dir` whose names start with `prefix`
// (all: ""), without allocating.
void remove_entries(const char* dir, const char* prefix);

}   // namespace child_processes
}   // namespace vrdmasim
