// Parameters: declarations (ParamSet, the Param handles), the registry and
// its listings (`vrdmasim params`: text, Markdown, JSON), the checks of a
// value against its declaration. Units are in units.cpp, the INI grammar in
// ini.cpp, a run's values in config.cpp.
#include "src/core/params.hpp"

#include "src/core/json.hpp"
#include "src/core/params_detail.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <iomanip>
#include <limits>
#include <ostream>
#include <sstream>

#include <boost/program_options.hpp>

namespace vrdmasim {

namespace po = boost::program_options;

namespace params_detail {

// ---------------------------------------------------------------------------
// Small string helpers

extern const char* const kSpaces;
const char* const kSpaces = " \t\r\n\f\v";

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(kSpaces);
    if (b == std::string::npos) return "";
    const auto e = s.find_last_not_of(kSpaces);
    return s.substr(b, e - b + 1);
}

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// Quoted for a message, clipped: a megabyte-long key or value is not echoed whole.
std::string squote(const std::string& s) { return "'" + clip_for_message(s) + "'"; }

// ---------------------------------------------------------------------------
// Parameter values

// Parse text as a value of d (type and, for enums, choices; not the range).
// Throws std::invalid_argument.
Parsed parse_value(const ParamDecl& d, const std::string& text) {
    Parsed p;
    switch (d.type) {
    case ParamType::Time: p.number = static_cast<double>(parse_time_ps(text)); break;
    case ParamType::Rate: p.number = parse_rate_bps(text); break;
    case ParamType::Size: p.number = static_cast<double>(parse_size_bytes(text)); break;
    case ParamType::Frequency: p.number = parse_frequency_hz(text); break;
    case ParamType::Bool:
        p.flag = parse_bool(text);
        p.number = p.flag ? 1 : 0;
        break;
    case ParamType::Int: p.number = static_cast<double>(parse_int(text)); break;
    case ParamType::Real: p.number = parse_real(text); break;
    case ParamType::String: break;
    case ParamType::Enum: {
        const std::string t = trim(text);
        if (std::find(d.choices.begin(), d.choices.end(), t) == d.choices.end()) {
            std::string list;
            for (const auto& c : d.choices) list += (list.empty() ? "" : ", ") + c;
            throw std::invalid_argument("expected one of: " + list);
        }
        break;
    }
    }
    return p;
}

bool has_range(ParamType t) { return t != ParamType::Bool && t != ParamType::Enum && t != ParamType::String; }

// "" if number is within d's range, otherwise what the range is.
std::string range_violation(const ParamDecl& d, double number) {
    const bool low = d.has_min && number < d.min;
    const bool high = d.has_max && number > d.max;
    if (!low && !high) return "";
    if (d.has_min && d.has_max) return "must be between " + d.min_text + " and " + d.max_text;
    if (d.has_min) return "must be at least " + d.min_text;
    return "must be at most " + d.max_text;
}

// A range bound of d in its canonical unit; a bad bound is a programming error.
double parse_bound(const ParamDecl& d, const std::string& text, const char* which) {
    if (!has_range(d.type))
        throw std::logic_error("parameter " + squote(d.name()) + ": a " + to_string(d.type) + " has no range");
    try {
        return parse_value(d, text).number;
    } catch (const std::invalid_argument& e) {
        throw std::logic_error("parameter " + squote(d.name()) + ": bad " + which + " " + squote(text) + ": " +
                               e.what());
    }
}

void check_default_in_range(const ParamDecl& d) {
    const std::string v = range_violation(d, parse_value(d, d.default_text).number);
    if (!v.empty())
        throw std::logic_error("parameter " + squote(d.name()) + ": default " + squote(d.default_text) +
                               " is out of range: " + v);
}

// The default as shown by `params`: as declared ("19.2GB/s" stays so), but
// a size given as a bare number of bytes gets its unit ("65536" -> "64KiB").
std::string display_default(const ParamDecl& d) {
    if (d.type == ParamType::String) return d.default_text.empty() ? "\"\"" : d.default_text;
    const std::string t = trim(d.default_text);
    if (d.type == ParamType::Size && !t.empty() && is_digit(t.back())) return format_size_bytes(parse_size_bytes(t));
    return t;
}

std::string display_range(const ParamDecl& d) {
    if (d.type == ParamType::Enum) {
        std::string s;
        for (const auto& c : d.choices) s += (s.empty() ? "" : ", ") + c;
        return "{" + s + "}";
    }
    if (d.has_min && d.has_max) return "[" + d.min_text + ", " + d.max_text + "]";
    if (d.has_min) return ">= " + d.min_text;
    if (d.has_max) return "<= " + d.max_text;
    return "";
}

// Optimal string alignment distance (Levenshtein plus adjacent transpositions).
std::size_t edit_distance(const std::string& a, const std::string& b) {
    const std::size_t n = a.size(), m = b.size();
    std::vector<std::vector<std::size_t>> dp(n + 1, std::vector<std::size_t>(m + 1));
    for (std::size_t i = 0; i <= n; ++i) dp[i][0] = i;
    for (std::size_t j = 0; j <= m; ++j) dp[0][j] = j;
    for (std::size_t i = 1; i <= n; ++i) {
        for (std::size_t j = 1; j <= m; ++j) {
            const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
            dp[i][j] = std::min({dp[i - 1][j] + 1, dp[i][j - 1] + 1, dp[i - 1][j - 1] + cost});
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
                dp[i][j] = std::min(dp[i][j], dp[i - 2][j - 2] + 1);
        }
    }
    return dp[n][m];
}

// Names longer than this get no suggestion (no parameter name is near it):
// the edit distance costs time in the product of the lengths.
constexpr std::size_t kMaxSuggestLength = 256;

// How far a name may be from a known one to be suggested.
std::size_t close_enough(const std::string& name) { return std::max<std::size_t>(2, name.size() / 3); }

// The candidate closest to name (case-insensitive edit distance), or "".
std::string closest_of(const std::string& name, const std::vector<std::string>& candidates) {
    std::string best;
    if (name.size() > kMaxSuggestLength) return best;
    std::size_t best_d = std::numeric_limits<std::size_t>::max();
    const std::string lname = lower(name);
    for (const auto& c : candidates) {
        // The distance is at least the difference in length: skip hopeless ones.
        const std::size_t diff = c.size() > name.size() ? c.size() - name.size() : name.size() - c.size();
        if (diff > close_enough(name) || diff >= best_d) continue;
        const std::size_t dist = edit_distance(lname, lower(c));
        if (dist < best_d) {
            best_d = dist;
            best = c;
        }
    }
    if (best_d <= close_enough(name)) return best;
    // An abbreviation: the shortest candidate that starts with name.
    best.clear();
    if (lname.size() < 3) return best;
    for (const auto& c : candidates)
        if (lower(c).compare(0, lname.size(), lname) == 0 && (best.empty() || c.size() < best.size())) best = c;
    return best;
}

std::string did_you_mean(const std::string& suggestion) {
    return suggestion.empty() ? "" : " (did you mean " + squote(suggestion) + "?)";
}

bool valid_name(const std::string& s, bool allow_dot) {
    if (s.empty()) return false;
    for (char c : s) {
        if (is_space(c) || std::strchr("=[]#;\"'", c) != nullptr || c == '\0') return false;
        if (c == '.' && !allow_dot) return false;
    }
    return true;
}

}   // namespace params_detail

using namespace params_detail;

std::string printable(const std::string& s) {
    std::string out;
    out.reserve(s.size());
    for (const char ch : s) {
        const auto c = static_cast<unsigned char>(ch);
        if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", c);
            out += buf;
        } else {
            out += ch;
        }
    }
    return out;
}

std::string clip_for_message(const std::string& s) {
    constexpr std::size_t kMax = 120;
    const std::string clipped = s.size() <= kMax ? s : s.substr(0, kMax);
    // What the terminal would not show, shown: control bytes and bytes that
    // are not UTF-8 (a UTF-16 file's zeros) as \xNN, and the invisible
    // characters copied in from documents by name.
    std::string out;
    for (std::size_t i = 0; i < clipped.size();) {
        const auto b = static_cast<unsigned char>(clipped[i]);
        auto named = [&](const char* seq, const char* name) {
            const std::size_t n = std::char_traits<char>::length(seq);
            if (clipped.compare(i, n, seq) != 0) return false;
            out += name;
            i += n;
            return true;
        };
        if (named("\xEF\xBB\xBF", "<U+FEFF byte-order mark>") || named("\xC2\xA0", "<U+00A0 no-break space>") ||
            named("\xE2\x80\xAF", "<U+202F narrow no-break space>") ||
            named("\xE2\x80\x8B", "<U+200B zero-width space>"))
            continue;
        std::size_t len = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
        for (std::size_t k = 1; len > 1 && k < len; ++k)
            if (i + k >= clipped.size() || (static_cast<unsigned char>(clipped[i + k]) >> 6) != 2) len = 0;
        if (len == 0 || (len == 1 && (b < 0x20 || b == 0x7F) && b != '\t')) {
            static const char* const kHex = "0123456789abcdef";
            out += "\\x";
            out += kHex[b >> 4];
            out += kHex[b & 15];
            ++i;
            continue;
        }
        out.append(clipped, i, len);
        i += len;
    }
    return s.size() <= kMax ? out : out + "...(" + std::to_string(s.size()) + " bytes)";
}

// ---------------------------------------------------------------------------
// Declarations

std::string ParamDecl::unit() const { return to_string(type); }

ParamSet::ParamSet(std::string section, std::string description)
    : section_(std::move(section)), description_(std::move(description)) {
    if (!valid_name(section_, false)) throw std::logic_error("invalid section name " + squote(section_));
}

TimeParam ParamSet::time(const std::string& key, const std::string& dflt, const std::string& help) {
    const std::size_t i = add(ParamType::Time, key, dflt, help);
    return TimeParam(*this, i, decls_[i].name());
}
RateParam ParamSet::rate(const std::string& key, const std::string& dflt, const std::string& help) {
    const std::size_t i = add(ParamType::Rate, key, dflt, help);
    return RateParam(*this, i, decls_[i].name());
}
SizeParam ParamSet::size(const std::string& key, const std::string& dflt, const std::string& help) {
    const std::size_t i = add(ParamType::Size, key, dflt, help);
    return SizeParam(*this, i, decls_[i].name());
}
FrequencyParam ParamSet::frequency(const std::string& key, const std::string& dflt, const std::string& help) {
    const std::size_t i = add(ParamType::Frequency, key, dflt, help);
    return FrequencyParam(*this, i, decls_[i].name());
}
BoolParam ParamSet::boolean(const std::string& key, const std::string& dflt, const std::string& help) {
    const std::size_t i = add(ParamType::Bool, key, dflt, help);
    return BoolParam(*this, i, decls_[i].name());
}
IntParam ParamSet::integer(const std::string& key, const std::string& dflt, const std::string& help) {
    const std::size_t i = add(ParamType::Int, key, dflt, help);
    return IntParam(*this, i, decls_[i].name());
}
RealParam ParamSet::real(const std::string& key, const std::string& dflt, const std::string& help) {
    const std::size_t i = add(ParamType::Real, key, dflt, help);
    return RealParam(*this, i, decls_[i].name());
}
StringParam ParamSet::string(const std::string& key, const std::string& dflt, const std::string& help) {
    const std::size_t i = add(ParamType::String, key, dflt, help);
    return StringParam(*this, i, decls_[i].name());
}
StringParam ParamSet::path(const std::string& key, const std::string& dflt, const std::string& help) {
    const std::size_t i = add(ParamType::String, key, dflt, help);
    decls_[i].path = true;
    return StringParam(*this, i, decls_[i].name());
}
EnumParam ParamSet::choice(const std::string& key, const std::string& dflt, std::vector<std::string> choices,
                           const std::string& help) {
    const std::size_t i = add(ParamType::Enum, key, dflt, help, std::move(choices));
    return EnumParam(*this, i, decls_[i].name());
}

std::size_t ParamSet::add(ParamType t, const std::string& key, const std::string& dflt, const std::string& help,
                          std::vector<std::string> choices) {
    ParamDecl d;
    d.section = section_;
    d.key = key;
    d.type = t;
    d.default_text = t == ParamType::String ? dflt : trim(dflt);
    d.help = help;
    d.choices = std::move(choices);
    const std::string name = d.name();
    if (!valid_name(key, true))
        throw std::logic_error("parameter " + squote(name) + ": invalid key name " + squote(key));
    for (const auto& other : decls_)
        if (other.key == key) throw std::logic_error("parameter " + squote(name) + " declared twice");
    if (t == ParamType::Enum) {
        if (d.choices.empty()) throw std::logic_error("parameter " + squote(name) + ": no choices");
        for (std::size_t i = 0; i < d.choices.size(); ++i) {
            if (!valid_name(d.choices[i], true))
                throw std::logic_error("parameter " + squote(name) + ": invalid choice " + squote(d.choices[i]));
            if (std::find(d.choices.begin(), d.choices.begin() + static_cast<long>(i), d.choices[i]) !=
                d.choices.begin() + static_cast<long>(i))
                throw std::logic_error("parameter " + squote(name) + ": choice " + squote(d.choices[i]) +
                                       " listed twice");
        }
    }
    try {
        parse_value(d, d.default_text);
    } catch (const std::invalid_argument& e) {
        throw std::logic_error("parameter " + squote(name) + ": bad default " + squote(dflt) + ": " + e.what());
    }
    decls_.push_back(std::move(d));
    return decls_.size() - 1;
}

void ParamSet::set_range(std::size_t index, const std::string& min_text, const std::string& max_text) {
    ParamDecl d = decls_.at(index);
    d.min = parse_bound(d, min_text, "minimum");
    d.max = parse_bound(d, max_text, "maximum");
    if (d.max < d.min)
        throw std::logic_error("parameter " + squote(d.name()) + ": maximum " + squote(max_text) +
                               " is below the minimum " + squote(min_text));
    d.has_min = d.has_max = true;
    d.min_text = trim(min_text);
    d.max_text = trim(max_text);
    check_default_in_range(d);
    decls_[index] = std::move(d);
}

void ParamSet::set_min(std::size_t index, const std::string& min_text) {
    ParamDecl d = decls_.at(index);
    d.min = parse_bound(d, min_text, "minimum");
    d.has_min = true;
    d.has_max = false;
    d.min_text = trim(min_text);
    d.max_text.clear();
    check_default_in_range(d);
    decls_[index] = std::move(d);
}

void ParamRegistry::add(const ParamSet& set) {
    auto it = std::find_if(sections_.begin(), sections_.end(), [&](const auto& s) { return s.first == set.section(); });
    if (it == sections_.end()) {
        sections_.emplace_back(set.section(), set.description());
    } else if (it->second.empty()) {
        it->second = set.description();
    }
    for (const auto& d : set.decls())
        if (index_.count(d.name()) != 0) throw std::logic_error("parameter " + squote(d.name()) + " declared twice");
    for (const auto& d : set.decls()) {
        index_[d.name()] = decls_.size();
        decls_.push_back(d);
    }
}

const ParamDecl* ParamRegistry::find(const std::string& full_name) const {
    const auto it = index_.find(full_name);
    return it == index_.end() ? nullptr : &decls_[it->second];
}

std::string ParamRegistry::closest(const std::string& name) const {
    if (name.size() > kMaxSuggestLength) return "";
    const auto dot = name.find('.');
    const std::string sec = dot == std::string::npos ? "" : name.substr(0, dot);
    const std::string key = dot == std::string::npos ? name : name.substr(dot + 1);
    // The same key in another section: the one whose section is closest.
    std::string best;
    std::size_t best_d = std::numeric_limits<std::size_t>::max();
    for (const auto& d : decls_) {
        if (d.key != key || d.section == sec) continue;
        const std::size_t dist = edit_distance(lower(sec), lower(d.section));
        if (dist < best_d) {
            best_d = dist;
            best = d.name();
        }
    }
    if (!best.empty()) return best;
    std::vector<std::string> names;
    for (const auto& d : decls_) names.push_back(d.name());
    return closest_of(name, names);
}

void ParamRegistry::check_sections(const std::vector<std::string>& names) const {
    for (const auto& name : names) {
        if (std::any_of(sections_.begin(), sections_.end(), [&](const auto& s) { return s.first == name; })) continue;
        std::vector<std::string> known;
        std::string list;
        for (const auto& s : sections_) {
            known.push_back(s.first);
            list += (list.empty() ? "" : ", ") + s.first;
        }
        const std::string near = closest_of(name, known);
        throw ConfigError("no parameter section " + squote(name) +
                          (near.empty() ? "" : " (did you mean " + squote(near) + "?)") + "; the sections are " + list);
    }
}

namespace {

// `text`'s words (split at spaces and line breaks), as lines of at most
// `width` columns, the first after `first` columns already used, every
// line after it indented by `indent` columns. A word longer than a line
// has one to itself. Appended to `out`, ending in a newline.
void append_wrapped(std::string& out, const std::string& text, std::size_t first, std::size_t indent,
                    std::size_t width) {
    std::istringstream words(text);
    std::size_t col = first;
    bool line_empty = true;
    for (std::string w; words >> w;) {
        if (!line_empty && col + 1 + w.size() > width) {
            out += "\n" + std::string(indent, ' ');
            col = indent;
            line_empty = true;
        }
        if (!line_empty) {
            out += ' ';
            ++col;
        }
        out += w;
        col += w.size();
        line_empty = false;
    }
    out += '\n';
}

// A range or a list of choices ("{stream, pingpong, ...}") at column
// `first`, broken after its commas into lines of at most `width` columns,
// each continued at column `indent`.
void append_list(std::string& out, const std::string& text, std::size_t first, std::size_t indent, std::size_t width) {
    std::size_t col = first, at = 0;
    bool line_empty = true;
    while (at < text.size()) {
        std::size_t end = text.find(", ", at);
        end = end == std::string::npos ? text.size() : end + 1;   // a piece keeps its comma
        const std::string piece = text.substr(at, end - at);
        at = end < text.size() && text[end] == ' ' ? end + 1 : end;
        if (!line_empty && col + 1 + piece.size() > width) {
            out += "\n" + std::string(indent, ' ');
            col = indent;
            line_empty = true;
        }
        if (!line_empty) {
            out += ' ';
            ++col;
        }
        out += piece;
        col += piece.size();
        line_empty = false;
    }
    out += '\n';
}

}   // namespace

void ParamRegistry::print(std::ostream& os, std::size_t width, const std::vector<std::string>& sections) const {
    check_sections(sections);
    // Narrower than this, the columns would not fit: wrapped as if this wide.
    width = std::max<std::size_t>(width, 40);
    constexpr std::size_t kHelpIndent = 6, kSectionIndent = 4;
    std::string out;
    bool first = true;
    for (const auto& s : sections_) {
        if (!sections.empty() && std::find(sections.begin(), sections.end(), s.first) == sections.end()) continue;
        if (!first) out += '\n';
        first = false;
        out += "[" + s.first + "]";
        if (!s.second.empty()) {
            out += "  ";
            append_wrapped(out, s.second, s.first.size() + 4, kSectionIndent, width);
        } else {
            out += '\n';
        }
        // Name, type and default in columns as wide as the section needs.
        std::size_t wn = 0, wt = 0, wd = 0;
        for (const auto& d : decls_) {
            if (d.section != s.first) continue;
            wn = std::max(wn, d.name().size());
            wt = std::max(wt, d.unit().size());
            wd = std::max(wd, display_default(d).size());
        }
        for (const auto& d : decls_) {
            if (d.section != s.first) continue;
            const std::string dflt = display_default(d), range = display_range(d);
            std::string line = "  " + d.name() + std::string(wn - d.name().size() + 2, ' ') + d.unit();
            if (!dflt.empty() || !range.empty()) line += std::string(wt - d.unit().size() + 2, ' ') + dflt;
            if (!range.empty()) {
                line += std::string(wd - dflt.size() + 2, ' ');
                // Continued under its start, or under the help when that
                // leaves too little room.
                const std::size_t at = line.size();
                out += line;
                append_list(out, range, at, at + 20 <= width ? at : kHelpIndent + 2, width);
            } else {
                out += line + '\n';
            }
            if (!d.help.empty()) {
                out += std::string(kHelpIndent, ' ');
                append_wrapped(out, d.help, kHelpIndent, kHelpIndent, width);
            }
        }
    }
    os << out;
}

namespace {
// The unit a type's values are held in (ParamValue), for --json.
const char* canonical_unit(ParamType t) {
    switch (t) {
    case ParamType::Time: return "ps";
    case ParamType::Rate: return "bit/s";
    case ParamType::Size: return "B";
    case ParamType::Frequency: return "Hz";
    default: return "";
    }
}
}   // namespace

void ParamRegistry::print_json(std::ostream& os, const std::string& more) const {
    os << "{\n  \"sections\": [";
    bool first_section = true;
    for (const auto& s : sections_) {
        os << (first_section ? "\n" : ",\n") << "    {\"name\": " << json_string(s.first)
           << ", \"description\": " << json_string(s.second) << ", \"parameters\": [";
        first_section = false;
        bool first = true;
        for (const auto& d : decls_) {
            if (d.section != s.first) continue;
            os << (first ? "\n" : ",\n") << "      {\"name\": " << json_string(d.name())
               << ", \"section\": " << json_string(d.section) << ", \"key\": " << json_string(d.key)
               << ", \"type\": " << json_string(d.unit()) << ", \"default\": " << json_string(d.default_text);
            first = false;
            // Values in the canonical unit; integers exactly (a double
            // would round the largest).
            auto value = [&d](const std::string& text, double number) {
                return d.type == ParamType::Int ? json_number(parse_int(text)) : json_number(number);
            };
            if (*canonical_unit(d.type)) os << ", \"canonical_unit\": " << json_string(canonical_unit(d.type));
            if (d.type == ParamType::Bool)
                os << ", \"default_value\": " << (parse_value(d, d.default_text).flag ? "true" : "false");
            else if (d.type != ParamType::String && d.type != ParamType::Enum)
                os << ", \"default_value\": " << value(d.default_text, parse_value(d, d.default_text).number);
            if (d.has_min)
                os << ", \"min\": " << value(d.min_text, d.min) << ", \"min_text\": " << json_string(d.min_text);
            if (d.has_max)
                os << ", \"max\": " << value(d.max_text, d.max) << ", \"max_text\": " << json_string(d.max_text);
            if (d.type == ParamType::Enum) {
                os << ", \"choices\": [";
                for (std::size_t i = 0; i < d.choices.size(); ++i) os << (i ? ", " : "") << json_string(d.choices[i]);
                os << "]";
            }
            os << ", \"help\": " << json_string(d.help)
               << ", \"estimate\": " << (d.help.find("*estimate*") != std::string::npos ? "true" : "false") << "}";
        }
        os << (first ? "]}" : "\n    ]}");
    }
    os << "\n  ]" << (more.empty() ? "" : ",\n  " + more) << "\n}\n";
}

namespace {
std::string md_cell(const std::string& text) {
    std::string out;
    for (char c : text) {
        if (c == '|') out += "\\|";
        else if (c == '\n') out += ' ';
        else out += c;
    }
    return out;
}
}   // namespace

void ParamRegistry::print_markdown(std::ostream& os, const std::vector<std::string>& sections) const {
    auto table = [&](const std::vector<std::string>& names) {
        os << "| name | type | default | range | meaning and source |\n|---|---|---|---|---|\n";
        for (const auto& d : decls_) {
            if (std::find(names.begin(), names.end(), d.section) == names.end()) continue;
            const std::string range = display_range(d);
            os << "| `" << d.name() << "` | " << d.unit() << " | " << md_cell(display_default(d)) << " | "
               << md_cell(range) << " | " << md_cell(d.help) << " |\n";
        }
    };
    if (sections.empty()) {
        bool first = true;
        for (const auto& s : sections_) {
            if (!first) os << "\n";
            first = false;
            os << "## [" << s.first << "]\n\n";
            if (!s.second.empty()) os << md_cell(s.second) << ".\n\n";
            table({s.first});
        }
        return;
    }
    check_sections(sections);
    table(sections);
}

void ParamRegistry::add_options(po::options_description& desc) const {
    for (const auto& d : decls_) {
        std::string help = d.help + " (" + d.unit() + ", default " + display_default(d);
        const std::string range = display_range(d);
        if (!range.empty()) help += ", " + range;
        help += ")";
        desc.add_options()(d.name().c_str(), po::value<std::string>()->value_name(d.unit()), help.c_str());
    }
}

}   // namespace vrdmasim
