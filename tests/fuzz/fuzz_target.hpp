// The common part of the fuzz targets (tests/fuzz/README.md): the real
// parameter registry, a scratch file for the parsers that read files, and
// the one rule every target checks, that bad input ends in ConfigError (a
// clear message), never in another exception, a crash or a hang.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "src/core/params.hpp"
#include "src/sim/system.hpp"

namespace vrdmasim_fuzz {

// Every parameter the simulator declares, built once.
inline const vrdmasim::ParamRegistry& registry() {
    static const vrdmasim::ParamRegistry reg = [] {
        vrdmasim::ParamRegistry r;
        vrdmasim::declare_all_params(r);
        return r;
    }();
    return reg;
}

// A file holding `data`, rewritten for each input (the parsers read paths).
inline std::string scratch_file(const std::uint8_t* data, std::size_t size, const char* suffix) {
    static const std::string path = [suffix] {
        const char* dir = std::getenv("TMPDIR");
        return std::string(dir && *dir ? dir : "/tmp") + "/vrdmasim-fuzz-" + std::to_string(getpid()) + suffix;
    }();
    FILE* f = std::fopen(path.c_str(), "wb");
    if (!f) std::abort();
    if (size && std::fwrite(data, 1, size, f) != size) std::abort();
    std::fclose(f);
    return path;
}

// A property the target found broken: say what, and abort (libFuzzer keeps
// the input as a crash).
[[noreturn]] inline void broken(const std::string& what) {
    std::fprintf(stderr, "fuzz: property broken: %s\n", what.c_str());
    std::abort();
}

}   // namespace vrdmasim_fuzz

// SystemC's library defines main() calling sc_main; the fuzzer (or the
// replay driver) brings its own main, but the link still needs sc_main.
#define VRDMASIM_FUZZ_SC_MAIN \
    int sc_main(int, char*[]) { return 0; }
