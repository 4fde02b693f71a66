// libsystemc's own definition of a function this program defines too (it
// interposes it: src/sim/event_order.cpp, src/core/software_turns.cpp), by
// its mangled name. Nothing can run without it: a missing symbol aborts,
// naming the file that needs it.
#pragma once

#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>

namespace vrdmasim {

template <class F>
F libsystemc_symbol(const char* symbol, const char* needed_by) {
    void* f = dlsym(RTLD_NEXT, symbol);
    if (!f) {
        std::fprintf(stderr, "vrdmasim: %s not found in libsystemc (%s)\n", symbol, needed_by);
        std::abort();
    }
    return reinterpret_cast<F>(f);
}

}   // namespace vrdmasim
