// Config: a run's values of every declared parameter, from the defaults,
// config files and the command line, with where each came from.
#include "src/core/params.hpp"

#include "src/core/params_detail.hpp"

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <ostream>
#include <sstream>

#include <boost/program_options.hpp>

namespace vrdmasim {

namespace po = boost::program_options;

using namespace params_detail;

// ---------------------------------------------------------------------------
// Config

Config::Config(const ParamRegistry& reg) : reg_(reg) {
    for (const auto& d : reg_.all()) {
        const Parsed p = parse_value(d, d.default_text);
        Value v;
        v.text = d.default_text;
        v.origin = "default";
        v.number = p.number;
        v.flag = p.flag;
        values_[d.name()] = v;
    }
}

void Config::set(const std::string& full_name, const std::string& value, const std::string& origin) {
    const ParamDecl* d = reg_.find(full_name);
    if (d == nullptr)
        throw ConfigError(origin + ": unknown key " + squote(full_name) + did_you_mean(reg_.closest(full_name)));
    const std::string text = d->type == ParamType::String ? value : trim(value);
    Parsed p;
    try {
        p = parse_value(*d, text);
    } catch (const std::invalid_argument& e) {
        throw ConfigError(origin + ": invalid value " + squote(value) + " for " + squote(full_name) + ": " + e.what());
    }
    const std::string violation = range_violation(*d, p.number);
    if (!violation.empty())
        throw ConfigError(origin + ": value " + squote(text) + " for " + squote(full_name) +
                          " is out of range: " + violation);
    const std::string source = origin_source(origin);
    if (layers_ == 0 || source != layer_source_) {
        ++layers_;
        layer_source_ = source;
    }
    Value& v = values_[full_name];
    v.text = text;
    v.origin = origin;
    v.number = p.number;
    v.flag = p.flag;
    v.layer = layers_;
}

std::string Config::origin_source(const std::string& origin) {
    std::string out;
    for (std::size_t i = 0; i < origin.size(); ++i) {
        std::size_t end = i + 1;
        while (origin[i] == ':' && end < origin.size() && std::isdigit(static_cast<unsigned char>(origin[end]))) ++end;
        if (end > i + 1 && (end == origin.size() || origin[end] == ',')) i = end - 1;   // ":<digits>" dropped
        else out += origin[i];
    }
    return out;
}

void Config::apply_file(const std::string& path) {
    std::vector<std::string> sections;
    for (const auto& s : reg_.sections()) sections.push_back(s.first);
    for (const auto& e : read_ini_file(path, sections, "config file")) {
        const ParamDecl* d = reg_.find(e.name());
        set(e.name(), d != nullptr && d->path ? resolve_from_file(path, e.value) : e.value, e.origin);
    }
}

namespace {

// Every token a `--NAME=VALUE` of a declared parameter (the usual command
// line, and every run of a sweep, a batch or the composition matrix): its
// assignments, in order, into `out`, as Boost.Program_options would parse
// them (a long option, its value after the first '=' and not empty; a name
// never guessed). False for anything else, which the parser then reads.
// (The parser's description of every parameter, with its help text, and
// its search of them cost 3.7 million instructions a run, a third of a
// small run's own: a composition matrix's run in `vrdmasim run-batch`.)
bool simple_assignments(const ParamRegistry& reg, const std::vector<std::string>& args,
                        std::vector<std::pair<std::string, std::string>>& out) {
    for (const auto& a : args) {
        const std::size_t eq = a.find('=');
        if (a.size() < 4 || a.compare(0, 2, "--") != 0 || eq == std::string::npos || eq < 3 || eq + 1 == a.size() ||
            a[2] == '-' || !reg.find(a.substr(2, eq - 2))) {
            out.clear();
            return false;
        }
        out.emplace_back(a.substr(2, eq - 2), a.substr(eq + 1));
    }
    return true;
}

// The rest through Boost.Program_options, whose errors become ConfigErrors.
void parse_assignments(const ParamRegistry& reg, const std::vector<std::string>& args,
                       std::vector<std::pair<std::string, std::string>>& assignments) {
    po::options_description desc;
    reg.add_options(desc);
    // No guessing of abbreviated names: "--dma.block" must not silently mean
    // "--dma.block-size".
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    try {
        const po::parsed_options parsed = po::command_line_parser(args).options(desc).style(style).run();
        for (const auto& o : parsed.options) {
            if (o.position_key >= 0 || o.unregistered || o.value.size() != 1) {
                std::string token = o.original_tokens.empty() ? o.string_key : o.original_tokens.front();
                throw ConfigError("command line: unexpected argument " + squote(token) +
                                  " (parameters are given as --section.key=value)");
            }
            assignments.emplace_back(o.string_key, o.value.front());
        }
    } catch (const po::unknown_option& e) {
        std::string opt = e.get_option_name();   // "--dma.blok-size=4KiB" as written
        opt = opt.substr(0, opt.find('='));
        const std::string bare = opt.substr(std::min(opt.find_first_not_of('-'), opt.size()));
        throw ConfigError("command line: unknown parameter " + squote(opt) + did_you_mean(reg.closest(bare)));
    } catch (const po::too_many_positional_options_error&) {
        std::string token;
        for (const auto& a : args)
            if (token.empty() && (a.empty() || a[0] != '-')) token = a;
        throw ConfigError("command line: unexpected argument " + squote(token) +
                          " (parameters are given as --section.key=value)");
    } catch (const po::error& e) {
        throw ConfigError(std::string("command line: ") + e.what());
    }
}

}   // namespace

void Config::apply_command_line(const std::vector<std::string>& args,
                                const std::map<std::string, std::string>& origins) {
    std::vector<std::pair<std::string, std::string>> assignments;
    if (!simple_assignments(reg_, args, assignments)) parse_assignments(reg_, args, assignments);
    for (const auto& a : assignments) {
        const auto o = origins.find(a.first);
        set(a.first, a.second, o == origins.end() ? "command line" : o->second);
    }
}

const Config::Value& Config::get(const std::string& name, ParamType t1, ParamType t2) const {
    const ParamDecl* d = reg_.find(name);
    if (d == nullptr) throw std::logic_error("Config: no parameter " + squote(name) + " is declared");
    if (d->type != t1 && d->type != t2)
        throw std::logic_error("Config: parameter " + squote(name) + " is a " + to_string(d->type) + ", not a " +
                               to_string(t1));
    const Value& v = values_.at(name);
    v.read = true;
    return v;
}

sc_core::sc_time Config::time(const std::string& name) const {
    return sc_core::sc_time(static_cast<double>(time_ps(name)), sc_core::SC_PS);
}
std::int64_t Config::time_ps(const std::string& name) const {
    return parse_time_ps(get(name, ParamType::Time, ParamType::Time).text);   // exact beyond 2^53
}
double Config::rate_bps(const std::string& name) const { return get(name, ParamType::Rate, ParamType::Rate).number; }
std::uint64_t Config::size(const std::string& name) const {
    return parse_size_bytes(get(name, ParamType::Size, ParamType::Size).text);   // exact beyond 2^53
}
double Config::frequency_hz(const std::string& name) const {
    return get(name, ParamType::Frequency, ParamType::Frequency).number;
}
bool Config::boolean(const std::string& name) const { return get(name, ParamType::Bool, ParamType::Bool).flag; }
std::int64_t Config::integer(const std::string& name) const {
    return parse_int(get(name, ParamType::Int, ParamType::Int).text);   // exact beyond 2^53
}
double Config::real(const std::string& name) const { return get(name, ParamType::Real, ParamType::Real).number; }
const std::string& Config::string(const std::string& name) const {
    return get(name, ParamType::String, ParamType::Enum).text;
}
const std::string& Config::text(const std::string& name) const {
    if (reg_.find(name) == nullptr) throw std::logic_error("Config: no parameter " + squote(name) + " is declared");
    return values_.at(name).text;
}
const std::string& Config::origin(const std::string& name) const {
    if (reg_.find(name) == nullptr) throw std::logic_error("Config: no parameter " + squote(name) + " is declared");
    return values_.at(name).origin;
}

unsigned Config::layer(const std::string& name) const {
    if (reg_.find(name) == nullptr) throw std::logic_error("Config: no parameter " + squote(name) + " is declared");
    return values_.at(name).layer;
}

bool Config::was_read(const std::string& name) const {
    if (reg_.find(name) == nullptr) throw std::logic_error("Config: no parameter " + squote(name) + " is declared");
    return values_.at(name).read;
}

std::string Config::describe(const std::string& name) const {
    return name + " = " + text(name) + " (from " + origin(name) + ")";
}

ConfigError Config::refuse(const std::string& name, const std::string& why) const {
    return ConfigError(describe(name) + ": " + why);
}

bool Config::is_default(const std::string& name) const {
    const ParamDecl* d = reg_.find(name);
    if (d == nullptr) throw std::logic_error("Config::is_default: undeclared parameter " + squote(name));
    const Value& v = values_.at(name);
    if (v.origin == "default") return true;
    switch (d->type) {
    case ParamType::String:
    case ParamType::Enum: return v.text == d->default_text;
    case ParamType::Bool: return v.flag == parse_value(*d, d->default_text).flag;
    default: return v.number == parse_value(*d, d->default_text).number;
    }
}

std::vector<const ParamDecl*> Config::non_defaults() const {
    std::vector<const ParamDecl*> out;
    for (const auto& d : reg_.all())
        if (!is_default(d.name())) out.push_back(&d);
    return out;
}

void Config::write_ini(std::ostream& os, const std::map<std::string, std::string>& unused) const {
    os << "# vrdmasim configuration: every parameter; a value that is not the default\n"
          "# says where it came from.\n";
    for (const auto& s : reg_.sections()) {
        os << "\n[" << s.first << "]\n";
        if (!s.second.empty()) write_comment(os, s.second);
        for (const auto& d : reg_.all()) {
            if (d.section != s.first) continue;
            const Value& v = values_.at(d.name());
            os << "\n";
            if (!d.help.empty()) write_comment(os, d.help);
            const auto u = unused.find(d.name());
            if (u != unused.end()) {
                os << "# set to " << comment_text(v.text) << " (from " << comment_text(v.origin)
                   << "), not used: " << comment_text(u->second) << "\n";
                os << d.key << " = " << ini_value(d.default_text) << "\n";
                continue;
            }
            // A default value names no origin, wherever it came from: a
            // run's config.ini lists every key, and running it again must
            // not make all of them look set.
            if (!is_default(d.name())) os << "# from " << comment_text(v.origin) << "\n";
            std::string text = v.text;
            if (d.path && !text.empty() && std::filesystem::path(text).is_relative())
                text = std::filesystem::absolute(text).lexically_normal().string();
            os << d.key << " = " << ini_value(text) << "\n";
        }
    }
}

}   // namespace vrdmasim
