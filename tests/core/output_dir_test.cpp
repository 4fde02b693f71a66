// Which directories a run may replace (src/core/output_dir.hpp): the run's
// own files only, an MPI program's output among them.
#include <catch2/catch.hpp>

#include <fstream>
#include <string>

#include "src/core/output_dir.hpp"
#include "temp_dir.hpp"

using namespace vrdmasim;

namespace {
void touch(const std::filesystem::path& p) { std::ofstream(p) << "x\n"; }
}   // namespace

TEST_CASE("output_dir: a run's output holds the marker and a run's files, an MPI program's output among them",
          "[core]") {
    vrdmasim_test::TempDir d("output-dir");
    const std::filesystem::path dir = d.path();
    touch(dir / "stats.json");
    CHECK_FALSE(is_run_output(dir));   // no marker
    touch(dir / kRunMarker);
    CHECK(is_run_output(dir));
    for (const char* name : {"program.stdout", "program.stderr", "program-job1.stdout", "program-job12.stderr"}) {
        touch(dir / name);
        CHECK(is_run_output(dir));
    }
    for (const char* name : {"program-job.stdout", "program-jobx.stderr", "program.out", "notes.stdout"}) {
        INFO(name);
        touch(dir / name);
        CHECK_FALSE(is_run_output(dir));
        std::filesystem::remove(dir / name);
    }
    CHECK(is_run_output(dir));
}
