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

namespace boost {
namespace program_options {
class options_description;
}
}

namespace vrdmasim {

// A bad configuration: unknown key, malformed value, value out of range,
// missing or unreadable file. The runner turns it into exit status 2.
//
// Its message is printable: a control byte from a value (an escape
// sequence in a config file) is shown as \xHH, never sent to the terminal.
std::string printable(const std::string& s);
class ConfigError : public std::runtime_error {
public:
    explicit ConfigError(const std::string& what) : std::runtime_error(printable(what)) {}
    explicit ConfigError(const char* what) : ConfigError(std::string(what)) {}
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
    std::string section;   // "dram"
    std::string key;   // "latency"
    ParamType type = ParamType::String;
    std::string default_text;   // "80ns" (validated when declared)
    std::string help;   // one line, with the value's source
    std::vector<std::string> choices;   // Enum only
    bool has_min = false, has_max = false;
    double min = 0, max = 0;   // in the canonical unit (ps, bps, B, Hz, ...)
    std::string min_text, max_text;   // as declared, for messages
    // A String naming a file (ParamSet::path): a relative value read from a
    // config or sweep file is relative to that file's directory, one given
    // on the command line to the working directory (resolve_from_file).
    bool path = false;

    std::string name() const { return section + "." + key; }
    std::string unit() const;   // "time", "rate", "size", ... for `params`
};

class ParamSet;

// What reading a parameter of each type gives.
template <ParamType T>
struct ParamValue;
template <>
struct ParamValue<ParamType::Time> {
    using type = sc_core::sc_time;
};
template <>
struct ParamValue<ParamType::Rate> {
    using type = double;
};   // bits per second
template <>
struct ParamValue<ParamType::Size> {
    using type = std::uint64_t;
};   // bytes
template <>
struct ParamValue<ParamType::Frequency> {
    using type = double;
};   // hertz
template <>
struct ParamValue<ParamType::Bool> {
    using type = bool;
};
template <>
struct ParamValue<ParamType::Int> {
    using type = std::int64_t;
};
template <>
struct ParamValue<ParamType::Real> {
    using type = double;
};
template <>
struct ParamValue<ParamType::String> {
    using type = std::string;
};
template <>
struct ParamValue<ParamType::Enum> {
    using type = std::string;
};

// A typed handle to one declared parameter. It is made by the declaration
// (ParamSet::time(...) and friends) and is the only way models read the
// value (`cfg[handle]`), so a key is spelled once and a read of the wrong
// type does not compile.
template <ParamType T>
class Param {
public:
    using value_type = typename ParamValue<T>::type;
    // A handle to nothing yet, for a parameter struct whose constructor
    // declares its groups in helpers that assign the handles (a read of it
    // is an unknown parameter).
    Param() = default;
    const std::string& name() const { return name_; }   // "dma.block-size"
    // Inclusive bounds in the parameter's own unit ("1ns", "4KiB", "1"); a
    // default outside them is a programming error (std::logic_error).
    Param& range(const std::string& min_text, const std::string& max_text);
    Param& min(const std::string& min_text);

private:
    friend class ParamSet;
    Param(ParamSet& set, std::size_t index, std::string name) : set_(&set), index_(index), name_(std::move(name)) {}
    ParamSet* set_ = nullptr;
    std::size_t index_ = 0;
    std::string name_;
};

using TimeParam = Param<ParamType::Time>;
using RateParam = Param<ParamType::Rate>;
using SizeParam = Param<ParamType::Size>;
using FrequencyParam = Param<ParamType::Frequency>;
using BoolParam = Param<ParamType::Bool>;
using IntParam = Param<ParamType::Int>;
using RealParam = Param<ParamType::Real>;
using StringParam = Param<ParamType::String>;
using EnumParam = Param<ParamType::Enum>;

// The parameters of one section, declared once next to the model that reads
// them; each declaration returns the handle the model reads it through:
//   ParamSet dram{"dram", "DDR4 memory of one node"};
//   const SizeParam size = dram.size("size", "16GiB", "DRAM per MPSoC (Chaix et al., H2RC 2019)");
//   const TimeParam latency = dram.time("latency", "80ns", "...").range("1ns", "10us");
//   ... reg.add(dram);  ...  cfg[latency]
// A bad key or choice, a key declared twice, a default that does not parse
// or lies outside its range: a programming error (std::logic_error).
// Handles point into their set: a ParamSet is neither copied nor moved.
class ParamSet {
public:
    ParamSet(std::string section, std::string description);
    ParamSet(const ParamSet&) = delete;
    ParamSet& operator=(const ParamSet&) = delete;

    TimeParam time(const std::string& key, const std::string& dflt, const std::string& help);
    RateParam rate(const std::string& key, const std::string& dflt, const std::string& help);
    SizeParam size(const std::string& key, const std::string& dflt, const std::string& help);
    FrequencyParam frequency(const std::string& key, const std::string& dflt, const std::string& help);
    BoolParam boolean(const std::string& key, const std::string& dflt, const std::string& help);
    IntParam integer(const std::string& key, const std::string& dflt, const std::string& help);
    RealParam real(const std::string& key, const std::string& dflt, const std::string& help);
    StringParam string(const std::string& key, const std::string& dflt, const std::string& help);
    // A string that names a file (ParamDecl::path): the one declaration
    // that makes a config file's or a sweep file's relative value relative
    // to that file.
    StringParam path(const std::string& key, const std::string& dflt, const std::string& help);
    EnumParam choice(const std::string& key, const std::string& dflt, std::vector<std::string> choices,
                     const std::string& help);

    const std::string& section() const { return section_; }
    const std::string& description() const { return description_; }
    const std::vector<ParamDecl>& decls() const { return decls_; }

private:
    template <ParamType T>
    friend class Param;
    std::size_t add(ParamType t, const std::string& key, const std::string& dflt, const std::string& help,
                    std::vector<std::string> choices = {});
    void set_range(std::size_t index, const std::string& min_text, const std::string& max_text);
    void set_min(std::size_t index, const std::string& min_text);
    std::string section_, description_;
    std::vector<ParamDecl> decls_;
};

template <ParamType T>
Param<T>& Param<T>::range(const std::string& min_text, const std::string& max_text) {
    set_->set_range(index_, min_text, max_text);
    return *this;
}
template <ParamType T>
Param<T>& Param<T>::min(const std::string& min_text) {
    set_->set_min(index_, min_text);
    return *this;
}

// The one instance of a model's parameter struct P (a struct holding a
// ParamSet and the handles declared in it, built by its constructor): made
// on first use, so the order of static initialisation does not matter.
//   struct DramParams { DramParams(); ParamSet set; TimeParam latency; };
//   reg.add(params_of<DramParams>().set);  ...  cfg[params_of<DramParams>().latency]
template <class P>
const P& params_of() {
    static const P p;
    return p;
}

// All declared parameters, in declaration order.
class ParamRegistry {
public:
    // Register every parameter of `set`, in its order. A section may be
    // added by several sets (its description is the first non-empty one); a
    // name registered twice is a programming error (std::logic_error).
    void add(const ParamSet& set);
    const ParamDecl* find(const std::string& full_name) const;
    const std::vector<ParamDecl>& all() const { return decls_; }
    // Section descriptions, in declaration order.
    const std::vector<std::pair<std::string, std::string>>& sections() const { return sections_; }
    // The known name closest to `name` (edit distance, same-key-other-section
    // first), or "" if nothing is reasonably close.
    std::string closest(const std::string& name) const;
    // `vrdmasim params`: every parameter grouped by section (of the listed
    // `sections`, or of all), its name, type, default (with unit) and range
    // or choices on one line, its help wrapped below it, indented; lines of
    // at most `width` columns (a range broken after its commas, continued
    // under its start; a word longer than a line alone on one). An unknown
    // section is a ConfigError naming the known ones.
    void print(std::ostream& os, std::size_t width = 80, const std::vector<std::string>& sections = {}) const;
    // ConfigError for the first of `names` that is not a section: "no
    // parameter section 'x' (did you mean 'y'?); the sections are ...".
    void check_sections(const std::vector<std::string>& names) const;
    // The whole schema as one JSON object, for tools and scripts (`vrdmasim
    // params --json`): {"sections": [{"name", "description", "parameters":
    // [{"name", "section", "key", "type", "default", "canonical_unit",
    // "default_value", "min", "max", "min_text", "max_text", "choices",
    // "help", "estimate"}, ...]}, ...]}; docs/parameters.md says what each is.
    // `more`: further members of the top object, as JSON text
    // ("name": value, ...; the simulator's declarations of its workloads).
    void print_json(std::ostream& os, const std::string& more = "") const;
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
    std::vector<ParamDecl> decls_;
    std::map<std::string, std::size_t> index_;
    std::vector<std::pair<std::string, std::string>> sections_;
};

// A path-valued setting (ParamDecl::path) read from the INI file `file`:
// a relative `value` joined to the file's directory (lexically normal,
// still relative when the file's name is); an empty or absolute one as is.
std::string resolve_from_file(const std::string& file, const std::string& value);

// One "key = value" line of an INI file.
struct IniEntry {
    std::string section, key;
    std::string value;   // as read: unquoted and unescaped, trailing comment removed
    bool quoted = false;   // the value was a double-quoted string
    // With lists (read_ini_file): the comma-separated values, each bare
    // (spaces around it removed) or double-quoted (commas inside kept):
    // `a, "b, c"` is {"a", "b, c"}; one item for a value without a comma
    // outside quotes. Empty without lists.
    std::vector<std::string> items;
    int line = 0;
    std::string origin;   // "path:line"
    std::string name() const { return section + "." + key; }
};

// The one INI grammar of config files and sweep files: "[section]" headers,
// "key = value" lines, '#' or ';' comments (whole-line, or after whitespace),
// blank lines, an optional UTF-8 byte order mark, values either bare (spaces
// around them removed) or double-quoted with \" \\ \n \t \r escapes. Every
// section must be one of `sections`; a key may be set once per file. Throws
// ConfigError naming the file and line; `what` ("config file", "sweep file")
// names the file in open errors. With `lists` (sweep files) a value may be
// a list of bare and quoted values (IniEntry::items); without, a quoted
// value is the whole value.
std::vector<IniEntry> read_ini_file(const std::string& path, const std::vector<std::string>& sections,
                                    const std::string& what, bool lists = false);

// s for an error message: at most 120 characters, longer ones cut with their
// length noted; what a terminal would not show made visible (control bytes
// and bytes that are not UTF-8 as \xNN, a byte-order mark or a no-break
// space by name).
std::string clip_for_message(const std::string& s);

// The effective value of every parameter, with where it came from.
class Config {
public:
    explicit Config(const ParamRegistry& reg);   // every parameter at its default

    // Apply an INI file: "[section]" headers, "key = value" lines, '#' or ';'
    // comments (whole-line, or after whitespace), blank lines. Errors name the
    // file and line: "configs/x.ini:12: unknown key 'dma.blok-size' (did you
    // mean 'dma.block-size'?)". A missing or unreadable file is an error. A
    // relative path-valued setting (ParamDecl::path) is relative to the file.
    void apply_file(const std::string& path);
    // Apply one value; `origin` says where it came from ("command line",
    // "file.ini:3", "sweep point"). Throws ConfigError naming key, value, origin.
    void set(const std::string& full_name, const std::string& value, const std::string& origin);
    // Parse "--section.key=value" / "--section.key value" arguments through
    // Boost.Program_options. Arguments that are not parameters are an error.
    // Each value's origin is "command line", or what `origins` says for its
    // parameter (the file and line a sweep point's value came from).
    void apply_command_line(const std::vector<std::string>& args,
                            const std::map<std::string, std::string>& origins = {});

    // A parameter's value, through the handle that declared it. A handle
    // whose set was not added to this configuration's registry is a
    // programming error (std::logic_error).
    sc_core::sc_time operator[](const TimeParam& p) const { return time(p.name()); }
    std::int64_t ps(const TimeParam& p) const { return time_ps(p.name()); }
    double operator[](const RateParam& p) const { return rate_bps(p.name()); }
    std::uint64_t operator[](const SizeParam& p) const { return size(p.name()); }
    double operator[](const FrequencyParam& p) const { return frequency_hz(p.name()); }
    bool operator[](const BoolParam& p) const { return boolean(p.name()); }
    std::int64_t operator[](const IntParam& p) const { return integer(p.name()); }
    double operator[](const RealParam& p) const { return real(p.name()); }
    const std::string& operator[](const StringParam& p) const { return string(p.name()); }
    const std::string& operator[](const EnumParam& p) const { return string(p.name()); }
    template <ParamType T>
    const std::string& text(const Param<T>& p) const {
        return text(p.name());
    }
    template <ParamType T>
    const std::string& origin(const Param<T>& p) const {
        return origin(p.name());
    }
    // A parameter as error messages name it: "dma.smmu-tbu = 7 (from x.ini:3)".
    std::string describe(const std::string& name) const;
    template <ParamType T>
    std::string describe(const Param<T>& p) const {
        return describe(p.name());
    }
    // The error for a value the model cannot use: "<describe>: <why>".
    ConfigError refuse(const std::string& name, const std::string& why) const;
    template <ParamType T>
    ConfigError refuse(const Param<T>& p, const std::string& why) const {
        return refuse(p.name(), why);
    }

    // Access by name, for generic code that walks the registry (sweeps,
    // `params`, messages) and the runner's own choices; models read through
    // their handles. Asking for a name that is not declared, or with the
    // wrong type, is a programming error (std::logic_error).
    sc_core::sc_time time(const std::string& name) const;
    std::int64_t time_ps(const std::string& name) const;
    double rate_bps(const std::string& name) const;
    std::uint64_t size(const std::string& name) const;
    double frequency_hz(const std::string& name) const;
    bool boolean(const std::string& name) const;
    std::int64_t integer(const std::string& name) const;
    double real(const std::string& name) const;
    const std::string& string(const std::string& name) const;   // String and Enum
    const std::string& text(const std::string& name) const;   // as written
    const std::string& origin(const std::string& name) const;   // "default", "x.ini:3", "command line"
    // Whether a parameter's value is its declared default: the same value
    // however written ("1us" is "1000ns", "on" is "true"), whether or not a
    // file or the command line set it. An undeclared name is a
    // std::logic_error.
    bool is_default(const std::string& name) const;
    // The parameters whose value is not their default, in declaration order
    // (what a report lists as "the configuration that differs").
    std::vector<const ParamDecl*> non_defaults() const;

    // Settings come in layers, each over the ones before: the defaults are
    // layer 0, and every set() starts a new layer when its source differs
    // from the previous set()'s. A source is an origin without its line
    // number: a config file (each file applied, in order: "x.ini:3" and
    // "x.ini:9" are one layer), the command line, or a sweep point's values
    // ("s.ini:4, sweep point": its listed values, a layer over the sweep
    // file's fixed ones, which are "s.ini:7"). The layer of parameter
    // `name`'s value (an undeclared name is a std::logic_error).
    unsigned layer(const std::string& name) const;
    template <ParamType T>
    unsigned layer(const Param<T>& p) const {
        return layer(p.name());
    }
    // Whether a typed accessor (operator[], time(), size(), string(), ...)
    // has read parameter `name`'s value since this Config was made: what the
    // tests check a declaration of what a model reads against. Naming it
    // (text(), origin(), describe(), is_default()) is no read.
    bool was_read(const std::string& name) const;
    // The source of an origin: `origin` without the line numbers in it
    // ("x.ini:3" -> "x.ini"; "s.ini:4, sweep point" -> "s.ini, sweep point").
    static std::string origin_source(const std::string& origin);

    // The effective configuration as INI, every parameter, grouped by section,
    // re-runnable as is; the origin of non-default values as comments. A
    // relative path-valued setting is written absolute (from the working
    // directory), so that the file means the same wherever it is.
    // `unused`: parameters whose setting the run did not use, with why
    // (a workload kind, set over them, that does not read them: System::
    // settings_not_used): each written at its default, the setting and the
    // reason as a comment, so that the file runs again as the run did (its
    // setting alone would be refused there, in one layer with the kind).
    void write_ini(std::ostream& os, const std::map<std::string, std::string>& unused = {}) const;

    const ParamRegistry& registry() const { return reg_; }

private:
    struct Value {
        std::string text;
        std::string origin;
        double number = 0;   // Time (ps), Rate, Size, Frequency, Int, Real
        bool flag = false;   // Bool
        unsigned layer = 0;   // layer()
        mutable bool read = false;   // was_read()
    };
    const Value& get(const std::string& name, ParamType t1, ParamType t2) const;
    const ParamRegistry& reg_;
    std::map<std::string, Value> values_;
    unsigned layers_ = 0;   // the latest layer
    std::string layer_source_;   // its source
};

}   // namespace vrdmasim
