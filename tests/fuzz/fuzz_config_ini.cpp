// Fuzz target: a configuration file (Config::apply_file, the INI reader).
// Property: a file is either refused with ConfigError or read, and what was
// read writes out (write_ini) and reads back to the same values.
#include <sstream>

#include "fuzz_target.hpp"

VRDMASIM_FUZZ_SC_MAIN

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace vrdmasim;
    const ParamRegistry& reg = vrdmasim_fuzz::registry();
    Config cfg(reg);
    try {
        cfg.apply_file(vrdmasim_fuzz::scratch_file(data, size, ".ini"));
    } catch (const ConfigError&) {
        return 0;
    }
    std::ostringstream ini;
    cfg.write_ini(ini);
    const std::string text = ini.str();
    Config back(reg);
    try {
        back.apply_file(
            vrdmasim_fuzz::scratch_file(reinterpret_cast<const std::uint8_t*>(text.data()), text.size(), ".ini"));
    } catch (const ConfigError& e) {
        vrdmasim_fuzz::broken(std::string("write_ini wrote a file that does not read back: ") + e.what());
    }
    for (const auto& d : reg.all())
        if (back.text(d.name()) != cfg.text(d.name()))
            vrdmasim_fuzz::broken(d.name() + " read back as '" + back.text(d.name()) + "', was '" + cfg.text(d.name()) +
                                  "'");
    return 0;
}
