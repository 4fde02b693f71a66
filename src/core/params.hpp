// Parameters: declared once next to the model that uses them, filled from
// defaults, INI config files and the command line, in that order of precedence.
//
// This file is part of the simulator core and knows nothing about models.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <systemc>

namespace boost { namespace program_options { class options_description; } }

namespace vrdmasim {

// A bad configuration: unknown key, malformed value, value out of range,
// missing or unreadable file. The runner turns it into exit status 2.
class ConfigError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class ParamType { Time, Rate, Size, Frequency, Bool, Enum, Int, Real, String };

const char* to_string(ParamType t);

// Unit parsing. Each returns the value in the canonical unit, or throws
// std::invalid_argument with a message saying what is wrong (no key named:
// the caller adds the key and where the value came from).
//   time      -> picoseconds (ps, ns, us, ms, s); a bare number is an error
//   rate      -> bits per second (bps, Kbps, Mbps, Gbps, Tbps: powers of 1000;
//                B/s, KB/s, MB/s, GB/s: bytes, powers of 1000;
//                KiB/s, MiB/s, GiB/s: bytes, powers of 1024)
//   size      -> bytes (B, KiB, MiB, GiB, TiB: powers of 1024; KB, MB, GB,
//                TB: powers of 1000; a bare whole number is bytes); must be a
//                whole number of bytes
//   frequency -> hertz (Hz, kHz/KHz, MHz, GHz)
//   bool      -> true/false, yes/no, on/off, 1/0
//   int       -> a whole number (decimal, or 0x hex)
//   real      -> a number
// Units are case-sensitive except for the SI frequency prefix k/K; a space
// between number and unit is allowed; "µs" is accepted for "us".
std::int64_t parse_time_ps(const std::string& text);
double parse_rate_bps(const std::string& text);
std::uint64_t parse_size_bytes(const std::string& text);
double parse_frequency_hz(const std::string& text);
bool parse_bool(const std::string& text);
std::int64_t parse_int(const std::string& text);
double parse_real(const std::string& text);

// Human-readable forms used by `params` and in messages ("80ns", "16Gbps",
// "4KiB", "1.5GHz"): the largest unit in which the value is still >= 1, with
// up to 6 significant digits, and which parses back to the same value.
std::string format_time_ps(std::int64_t ps);
std::string format_rate_bps(double bps);
std::string format_size_bytes(std::uint64_t bytes);
std::string format_frequency_hz(double hz);

// One parameter's declaration.
struct ParamDecl {
    std::string section;        // "dram"
    std::string key;            // "latency"
    ParamType type = ParamType::String;
    std::string default_text;   // "80ns" (validated when declared)
    std::string help;           // one line, with the value's source
    std::vector<std::string> choices;   // Enum only
    bool has_min = false, has_max = false;
    double min = 0, max = 0;    // in the canonical unit (ps, bps, B, Hz, ...)
    std::string min_text, max_text;     // as declared, for messages

    std::string name() const { return section + "." + key; }
    std::string unit() const;   // "time", "rate", "size", ... for `params`
};

class ParamRegistry;

// Fluent declaration of the parameters of one section:
//   reg.section("dram", "DDR4 memory of one node")
//      .size("size", "16GiB", "DRAM per MPSoC (Chaix et al., H2RC 2019)")
//      .time("latency", "80ns", "...").range("1ns", "10us");
// range() applies to the parameter declared last. Declaring the same name
// twice, a default that does not parse or lies outside its range, is a
// programming error: std::logic_error.
class SectionBuilder {
public:
    SectionBuilder& time(const std::string& key, const std::string& dflt, const std::string& help);
    SectionBuilder& rate(const std::string& key, const std::string& dflt, const std::string& help);
    SectionBuilder& size(const std::string& key, const std::string& dflt, const std::string& help);
    SectionBuilder& frequency(const std::string& key, const std::string& dflt, const std::string& help);
    SectionBuilder& boolean(const std::string& key, const std::string& dflt, const std::string& help);
    SectionBuilder& integer(const std::string& key, const std::string& dflt, const std::string& help);
    SectionBuilder& real(const std::string& key, const std::string& dflt, const std::string& help);
    SectionBuilder& string(const std::string& key, const std::string& dflt, const std::string& help);
    SectionBuilder& choice(const std::string& key, const std::string& dflt,
                           std::vector<std::string> choices, const std::string& help);
    // Inclusive bounds, written in the parameter's own unit ("1ns", "4KiB", "1").
    SectionBuilder& range(const std::string& min_text, const std::string& max_text);
    SectionBuilder& min(const std::string& min_text);

private:
    friend class ParamRegistry;
    SectionBuilder(ParamRegistry& reg, std::string section) : reg_(reg), section_(std::move(section)) {}
    SectionBuilder& add(ParamType t, const std::string& key, const std::string& dflt,
                        const std::string& help, std::vector<std::string> choices = {});
    ParamRegistry& reg_;
    std::string section_;
    std::string last_;
};

// All declared parameters, in declaration order.
class ParamRegistry {
public:
    SectionBuilder section(const std::string& name, const std::string& description);
    const ParamDecl* find(const std::string& full_name) const;
    const std::vector<ParamDecl>& all() const { return decls_; }
    // Section descriptions, in declaration order.
    const std::vector<std::pair<std::string, std::string>>& sections() const { return sections_; }
    // The known name closest to `name` (edit distance, same-key-other-section
    // first), or "" if nothing is reasonably close.
    std::string closest(const std::string& name) const;
    // `vrdmasim params`: every parameter grouped by section, with type,
    // default (with unit), range or choices, and help.
    void print(std::ostream& os) const;
    // The same as Markdown tables, one per section (name, type, default,
    // range, help with the value's source), for docs/parameters.md and the
    // generated tables in the models' READMEs. `sections` empty: every
    // section, each under a "## [section]" heading; otherwise one table with
    // the parameters of the listed sections, in declaration order, no
    // heading. An unknown section is a ConfigError.
    void print_markdown(std::ostream& os, const std::vector<std::string>& sections = {}) const;
    // The Boost.Program_options description of every parameter, as
    // --section.key=VALUE, each taking a string that Config then parses.
    void add_options(boost::program_options::options_description& desc) const;

private:
    friend class SectionBuilder;
    std::vector<ParamDecl> decls_;
    std::map<std::string, std::size_t> index_;
    std::vector<std::pair<std::string, std::string>> sections_;
};

// One "key = value" line of an INI file.
struct IniEntry {
    std::string section, key;
    std::string value;      // as read: unquoted and unescaped, trailing comment removed
    bool quoted = false;    // the value was a double-quoted string
    int line = 0;
    std::string origin;     // "path:line"
    std::string name() const { return section + "." + key; }
};

// The one INI grammar of config files and sweep files: "[section]" headers,
// "key = value" lines, '#' or ';' comments (whole-line, or after whitespace),
// blank lines, an optional UTF-8 byte order mark, values either bare (spaces
// around them removed) or double-quoted with \" \\ \n \t \r escapes. Every
// section must be one of `sections`; a key may be set once per file. Throws
// ConfigError naming the file and line; `what` ("config file", "sweep file")
// names the file in open errors.
std::vector<IniEntry> read_ini_file(const std::string& path, const std::vector<std::string>& sections,
                                    const std::string& what);

// s for an error message: at most 120 characters, longer ones cut with their
// length noted.
std::string clip_for_message(const std::string& s);

// The effective value of every parameter, with where it came from.
class Config {
public:
    explicit Config(const ParamRegistry& reg);   // every parameter at its default

    // Apply an INI file: "[section]" headers, "key = value" lines, '#' or ';'
    // comments (whole-line, or after whitespace), blank lines. Errors name the
    // file and line: "configs/x.ini:12: unknown key 'dma.blok-size' (did you
    // mean 'dma.block-size'?)". A missing or unreadable file is an error.
    void apply_file(const std::string& path);
    // Apply one value; `origin` says where it came from ("command line",
    // "file.ini:3", "sweep point"). Throws ConfigError naming key, value, origin.
    void set(const std::string& full_name, const std::string& value, const std::string& origin);
    // Parse "--section.key=value" / "--section.key value" arguments through
    // Boost.Program_options. Arguments that are not parameters are an error.
    void apply_command_line(const std::vector<std::string>& args);

    // Typed access; asking for a name that is not declared, or with the wrong
    // type, is a programming error (std::logic_error).
    sc_core::sc_time time(const std::string& name) const;
    std::int64_t time_ps(const std::string& name) const;
    double rate_bps(const std::string& name) const;
    std::uint64_t size(const std::string& name) const;
    double frequency_hz(const std::string& name) const;
    bool boolean(const std::string& name) const;
    std::int64_t integer(const std::string& name) const;
    double real(const std::string& name) const;
    const std::string& string(const std::string& name) const;   // String and Enum
    const std::string& text(const std::string& name) const;     // as written
    const std::string& origin(const std::string& name) const;   // "default", "x.ini:3", "command line"

    // The effective configuration as INI, every parameter, grouped by section,
    // re-runnable as is; the origin of non-default values as comments.
    void write_ini(std::ostream& os) const;

    const ParamRegistry& registry() const { return reg_; }

private:
    struct Value {
        std::string text;
        std::string origin;
        double number = 0;          // Time (ps), Rate, Size, Frequency, Int, Real
        bool flag = false;          // Bool
    };
    const Value& get(const std::string& name, ParamType t1, ParamType t2) const;
    const ParamRegistry& reg_;
    std::map<std::string, Value> values_;
};

}  // namespace vrdmasim
