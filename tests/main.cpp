// Catch2 runner for every test binary. sc_main, so SystemC types and (one)
// elaboration per process are available; ctest runs each case in its own
// process.
#define CATCH_CONFIG_RUNNER
#include <catch2/catch.hpp>

#include <cstdlib>
#include <systemc>

namespace {
struct QuietBanner {
    QuietBanner() { setenv("SYSTEMC_DISABLE_COPYRIGHT_MESSAGE", "1", 0); }
} quiet_banner;
}   // namespace

int sc_main(int argc, char* argv[]) { return Catch::Session().run(argc, argv); }
