// The program's stack at the same addresses in every run (README "The
// buffers"): with no address-space randomisation the kernel still lays
// out a new process's stack below its arguments and environment, so a
// longer environment (another user's, or mpirun's variables whose values
// hold process ids and ports) moves every buffer on the stack, and with it
// the pages its messages touch. Before main, a rank's process therefore
// starts itself again with its environment padded to a fixed size and a
// fixed number of strings; the copy that finds itself padded goes on.
#include <sys/auxv.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "workloads/mpi/preload/channel.hpp"
#include "workloads/mpi/protocol.hpp"

namespace {

constexpr std::size_t kStrings = 96 * 1024;   // bytes of the strings: the file name, arguments, environment
constexpr std::size_t kPointers = 512;   // arguments and environment variables
constexpr const char* kPadded = "VRDMASIM_STACK=padded";
constexpr const char* kPad = "VRDMASIM_STACK_PAD=";

struct Layout {
    std::size_t strings = 0, pointers = 0;
};

Layout layout_of(const char* file, char** argv, char** envp) {
    Layout l;
    l.strings = std::strlen(file) + 1;
    for (char** a = argv; *a; ++a, ++l.pointers) l.strings += std::strlen(*a) + 1;
    for (char** e = envp; *e; ++e, ++l.pointers) l.strings += std::strlen(*e) + 1;
    return l;
}

[[noreturn]] void too_large(const Layout& l) {
    char what[256];
    std::snprintf(what, sizeof what,
                  "the program's arguments and environment (%zu strings, %zu bytes) exceed the %zu strings and %zu "
                  "bytes vrdmasim lays out the same in every run: shorten the environment",
                  l.pointers, l.strings, kPointers - 2, kStrings - 1024);
    vrdmasim::mpipreload::fail(what);
}

void same_stack(int, char** argv, char** envp) {
    if (!std::getenv(vrdmasim::mpiwire::kSocketEnv)) return;   // not a rank vrdmasim started
    const char* file = reinterpret_cast<const char*>(getauxval(AT_EXECFN));
    if (!file) return;
    const Layout l = layout_of(file, argv, envp);
    if (std::getenv("VRDMASIM_STACK")) {
        if (l.strings != kStrings || l.pointers != kPointers)
            vrdmasim::mpipreload::fail("the program's stack is not laid out as vrdmasim padded it");
        return;
    }
    // Fillers up to kPointers strings, then one whose length makes kStrings.
    std::vector<std::string> added;
    if (l.pointers + 2 > kPointers) too_large(l);
    char name[32];
    for (std::size_t i = l.pointers + 2; i < kPointers; ++i) {
        std::snprintf(name, sizeof name, "VRDMASIM_STACK_%03zu=", i);
        added.emplace_back(name);
    }
    added.emplace_back(kPadded);
    std::size_t used = l.strings + std::strlen(kPad) + 1;
    for (const std::string& a : added) used += a.size() + 1;
    if (used > kStrings) too_large(l);
    added.emplace_back(std::string(kPad) + std::string(kStrings - used, 'x'));
    std::vector<char*> env;
    for (char** e = envp; *e; ++e) env.push_back(*e);
    for (std::string& a : added) env.push_back(a.data());
    env.push_back(nullptr);
    ::execve(file, argv, env.data());
    vrdmasim::mpipreload::fail("the program could not be started again with its stack laid out (execve failed)");
}

}   // namespace

// Run before main (glibc hands .init_array functions argc, argv, envp).
__attribute__((section(".init_array"), used)) static void (*const vrdmasim_same_stack)(int, char**,
                                                                                       char**) = same_stack;
