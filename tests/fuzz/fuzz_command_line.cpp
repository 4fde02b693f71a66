// Fuzz target: parameters on the command line (Config::apply_command_line,
// --section.key=value through Boost.Program_options). The input is split
// into arguments at newlines. Property: refused with ConfigError or taken,
// and every value taken parses again as itself.
#include <vector>

#include "fuzz_target.hpp"

VRDMASIM_FUZZ_SC_MAIN

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    using namespace vrdmasim;
    std::vector<std::string> args{""};
    for (std::size_t i = 0; i < size; ++i) {
        if (data[i] == '\n') args.emplace_back();
        else args.back() += static_cast<char>(data[i]);
    }
    if (args.size() > 64) return 0;   // a command line, not a file
    const ParamRegistry& reg = vrdmasim_fuzz::registry();
    Config cfg(reg);
    try {
        cfg.apply_command_line(args);
    } catch (const ConfigError&) {
        return 0;
    }
    for (const auto* d : cfg.non_defaults()) {
        Config again(reg);
        try {
            again.set(d->name(), cfg.text(d->name()), "fuzz");
        } catch (const ConfigError& e) {
            vrdmasim_fuzz::broken(d->name() + " = '" + cfg.text(d->name()) +
                                  "' taken once, refused again: " + e.what());
        }
    }
    return 0;
}
