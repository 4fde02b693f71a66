// Parameters: declaration, unit parsing and formatting, INI files, command line.
#include "src/core/params.hpp"

#include "src/core/json.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iomanip>
#include <iterator>
#include <limits>
#include <ostream>
#include <sstream>

#include <boost/program_options.hpp>

namespace vrdmasim {

namespace po = boost::program_options;

namespace {

// ---------------------------------------------------------------------------
// Small string helpers

const char* const kSpaces = " \t\r\n\f\v";

std::string trim(const std::string& s) {
    const auto b = s.find_first_not_of(kSpaces);
    if (b == std::string::npos) return "";
    const auto e = s.find_last_not_of(kSpaces);
    return s.substr(b, e - b + 1);
}

bool is_space(char c) { return std::strchr(kSpaces, c) != nullptr && c != '\0'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string lower(std::string s) {
    for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// Quoted for a message, clipped: a megabyte-long key or value is not echoed whole.
std::string squote(const std::string& s) { return "'" + clip_for_message(s) + "'"; }

// ---------------------------------------------------------------------------
// What each kind of value looks like, for error messages.

const char* const kTimeExpected = "expected a time such as 80ns (units: ps, ns, us, ms, s)";
const char* const kRateExpected =
    "expected a rate such as 16Gbps or 2GB/s (units: bps, Kbps, Mbps, Gbps, Tbps, "
    "B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s)";
const char* const kSizeExpected =
    "expected a size such as 4KiB (units: B, KiB, MiB, GiB, TiB, KB, MB, GB, TB; "
    "a bare whole number is bytes)";
const char* const kFrequencyExpected = "expected a frequency such as 1.5GHz (units: Hz, kHz, MHz, GHz)";
const char* const kBoolExpected = "expected a boolean (true/false, yes/no, on/off, 1/0)";
const char* const kIntExpected = "expected a whole number such as 42, -3 or 0x2a";
const char* const kRealExpected = "expected a number such as 0.25 or 1e-3";

// Throw std::invalid_argument: "<problem>; <expected>" (or just <expected>).
[[noreturn]] void bad(const std::string& problem, const char* expected) {
    throw std::invalid_argument(problem.empty() ? std::string(expected) : problem + "; " + expected);
}

// ---------------------------------------------------------------------------
// Decimal numbers as written: value = (negative ? -1 : 1) * digits * 10^exp10,
// exactly, so that unit conversions can be exact.

struct Decimal {
    bool negative = false;
    bool has_sign = false;
    std::string digits;   // no leading or trailing zeros; empty means zero
    long exp10 = 0;
};

constexpr long kExpLimit = 100000;   // exponents beyond this saturate

// Scan "[+-]digits[.digits][e[+-]digits]" (or ".digits") at the start of s.
// Returns the position just after the number, or npos if s does not start
// with a number.
std::size_t scan_decimal(const std::string& s, Decimal& out) {
    std::size_t i = 0;
    const std::size_t n = s.size();
    if (i < n && (s[i] == '+' || s[i] == '-')) {
        out.has_sign = true;
        out.negative = s[i] == '-';
        ++i;
    }
    std::string mant;
    long exp10 = 0;
    bool any = false;
    while (i < n && is_digit(s[i])) {
        mant += s[i++];
        any = true;
    }
    if (i + 1 < n && s[i] == '.' && is_digit(s[i + 1])) {
        ++i;
        while (i < n && is_digit(s[i])) {
            mant += s[i++];
            --exp10;
            any = true;
        }
    }
    if (!any) return std::string::npos;
    if (i < n && (s[i] == 'e' || s[i] == 'E')) {
        std::size_t j = i + 1;
        bool eneg = false;
        if (j < n && (s[j] == '+' || s[j] == '-')) eneg = s[j++] == '-';
        if (j < n && is_digit(s[j])) {
            long e = 0;
            while (j < n && is_digit(s[j])) {
                e = std::min(kExpLimit, e * 10 + (s[j++] - '0'));
            }
            exp10 += eneg ? -e : e;
            i = j;
        }
    }
    // Normalise: no leading zeros, no trailing zeros.
    const auto first = mant.find_first_not_of('0');
    if (first == std::string::npos) {
        mant.clear();
        exp10 = 0;
    } else {
        mant.erase(0, first);
        while (mant.back() == '0') {
            mant.pop_back();
            ++exp10;
        }
    }
    out.digits = mant;
    out.exp10 = exp10;
    return i;
}

// Split "<number><spaces><unit>" into the number and the unit. Throws for an
// empty value or one that does not start with a number.
std::string split_number(const std::string& text, Decimal& d, const char* expected) {
    const std::string t = trim(text);
    if (t.empty()) bad("empty value", expected);
    const std::size_t pos = scan_decimal(t, d);
    if (pos == std::string::npos) bad("no number", expected);
    return trim(t.substr(pos));
}

using u128 = unsigned __int128;
enum class Whole { Ok, NotWhole, TooLarge, TooManyDigits };

// d * factor as a whole number no larger than limit.
Whole to_whole(const Decimal& d, std::uint64_t factor, std::uint64_t limit, std::uint64_t& out) {
    out = 0;
    if (d.digits.empty()) return Whole::Ok;
    if (d.digits.size() > 24) return Whole::TooManyDigits;
    u128 v = 0;
    for (char c : d.digits) v = v * 10 + static_cast<unsigned>(c - '0');
    v *= factor;   // < 1e24 * 2^43: fits in 128 bits
    long e = d.exp10;
    for (; e > 0; --e) {
        if (v > limit) return Whole::TooLarge;
        v *= 10;
    }
    for (; e < 0; ++e) {
        if (v % 10 != 0) return Whole::NotWhole;
        v /= 10;
    }
    if (v > limit) return Whole::TooLarge;
    out = static_cast<std::uint64_t>(v);
    return Whole::Ok;
}

// d * 10^dec_exp * pow2, correctly rounded (strtod on the shifted decimal,
// then an exact multiplication by a power of two).
double to_double(const Decimal& d, long dec_exp, double pow2) {
    if (d.digits.empty()) return d.negative ? -0.0 : 0.0;
    const std::string s = (d.negative ? "-" : "") + d.digits + "e" + std::to_string(d.exp10 + dec_exp);
    return std::strtod(s.c_str(), nullptr) * pow2;
}

struct DecUnit {
    const char* name;
    long dec_exp;   // power of ten
    double pow2;   // times this power of two
};

const DecUnit* find_unit(const DecUnit* units, std::size_t count, const std::string& name) {
    for (std::size_t i = 0; i < count; ++i)
        if (name == units[i].name) return &units[i];
    return nullptr;
}

const DecUnit kRateUnits[] = {
    {"bps", 0, 1},
    {"Kbps", 3, 1},
    {"Mbps", 6, 1},
    {"Gbps", 9, 1},
    {"Tbps", 12, 1},
    {"B/s", 0, 8},
    {"KB/s", 3, 8},
    {"MB/s", 6, 8},
    {"GB/s", 9, 8},
    {"TB/s", 12, 8},
    {"KiB/s", 0, 8.0 * 1024},
    {"MiB/s", 0, 8.0 * 1024 * 1024},
    {"GiB/s", 0, 8.0 * 1024 * 1024 * 1024},
    {"TiB/s", 0, 8.0 * 1024 * 1024 * 1024 * 1024},
};
const DecUnit kFrequencyUnits[] = {
    {"Hz", 0, 1}, {"kHz", 3, 1}, {"KHz", 3, 1}, {"MHz", 6, 1}, {"GHz", 9, 1},
};
// Output units of format_rate_bps / format_frequency_hz, largest first.
const DecUnit kRateOut[] = {{"Tbps", 12, 1}, {"Gbps", 9, 1}, {"Mbps", 6, 1}, {"Kbps", 3, 1}, {"bps", 0, 1}};
const DecUnit kFrequencyOut[] = {{"GHz", 9, 1}, {"MHz", 6, 1}, {"kHz", 3, 1}, {"Hz", 0, 1}};

struct IntUnit {
    const char* name;
    std::uint64_t factor;
};

const IntUnit kTimeUnits[] = {
    {"ps", 1},
    {"ns", 1000},
    {"us", 1000000},
    {"\xC2\xB5s", 1000000},   // MICRO SIGN
    {"\xCE\xBCs", 1000000},   // GREEK SMALL LETTER MU
    {"ms", 1000000000},
    {"s", 1000000000000},
};

constexpr std::uint64_t KiB = 1024;
const IntUnit kSizeUnits[] = {
    {"", 1},
    {"B", 1},
    {"KiB", KiB},
    {"MiB", KiB* KiB},
    {"GiB", KiB* KiB* KiB},
    {"TiB", KiB* KiB* KiB* KiB},
    {"KB", 1000},
    {"MB", 1000000},
    {"GB", 1000000000},
    {"TB", 1000000000000},
};

// Shortest decimal (at most 17 significant digits) that reads back as v,
// as digits (no trailing zeros) and the exponent of the first digit.
void shortest_decimal(double v, std::string& digits, int& exp10) {
    char buf[64];
    for (int p = 1; p <= 17; ++p) {
        std::snprintf(buf, sizeof buf, "%.*e", p - 1, v);
        if (std::strtod(buf, nullptr) == v) break;
    }
    // buf is "d[.ddd]e[+-]xx"
    const std::string s(buf);
    const auto epos = s.find('e');
    digits.clear();
    for (std::size_t i = 0; i < epos; ++i)
        if (is_digit(s[i])) digits += s[i];
    exp10 = std::atoi(s.c_str() + epos + 1);
    while (digits.size() > 1 && digits.back() == '0') digits.pop_back();
}

// Render digits * 10^(exp10 - digits.size() + 1) / 10^shift in plain notation
// (or scientific notation for extreme magnitudes).
std::string place_point(const std::string& digits, int exp10, long shift) {
    const long point = static_cast<long>(exp10) + 1 - shift;   // digits before the point
    const long n = static_cast<long>(digits.size());
    if (point > 21 || point < -5) {
        std::string s = digits.substr(0, 1);
        if (n > 1) s += "." + digits.substr(1);
        return s + "e" + std::to_string(point - 1);
    }
    if (point <= 0) return "0." + std::string(static_cast<std::size_t>(-point), '0') + digits;
    if (point >= n) return digits + std::string(static_cast<std::size_t>(point - n), '0');
    return digits.substr(0, static_cast<std::size_t>(point)) + "." + digits.substr(static_cast<std::size_t>(point));
}

// Format a non-negative power-of-ten-unit quantity in the largest unit in
// which it is >= 1.
std::string format_decimal_units(double v, const DecUnit* units, std::size_t count) {
    if (std::isnan(v)) return "nan";
    if (std::isinf(v)) return v < 0 ? "-inf" : "inf";
    const std::string sign = std::signbit(v) && v != 0 ? "-" : "";
    v = std::fabs(v);
    const DecUnit& smallest = units[count - 1];
    if (v == 0) return "0" + std::string(smallest.name);
    std::string digits;
    int exp10 = 0;
    shortest_decimal(v, digits, exp10);
    const DecUnit* unit = &smallest;
    for (std::size_t i = 0; i < count; ++i) {
        if (exp10 >= units[i].dec_exp) {
            unit = &units[i];
            break;
        }
    }
    return sign + place_point(digits, exp10, unit->dec_exp) + unit->name;
}

// value / divisor as an exact decimal string, if it has at most max_sig
// significant digits ("" otherwise). divisor is a power of 2 or of 10.
std::string exact_quotient(std::uint64_t value, std::uint64_t divisor, std::size_t max_sig) {
    const std::uint64_t q = value / divisor;
    std::uint64_t r = value % divisor;
    std::string s = std::to_string(q);
    std::string frac;
    while (r != 0) {
        if (s.size() + frac.size() >= max_sig) return "";
        const u128 t = static_cast<u128>(r) * 10;
        frac += static_cast<char>('0' + static_cast<int>(t / divisor));
        r = static_cast<std::uint64_t>(t % divisor);
    }
    if (s.size() > max_sig) return "";
    return frac.empty() ? s : s + "." + frac;
}

// ---------------------------------------------------------------------------
// Parameter values

struct Parsed {
    double number = 0;
    bool flag = false;
};

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

// An INI value as it must be written so that the INI reader gives back s.
std::string ini_value(const std::string& s) {
    bool quote = s.empty() || s != trim(s) || s[0] == '"';
    for (char c : s)
        if (c == '#' || c == ';' || c == '\n' || c == '\r' || c == '\t' || c == '\\') quote = true;
    if (!quote) return s;
    std::string out = "\"";
    for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        if (c == '\n') {
            out += "\\n";
        } else if (c == '\t') {
            out += "\\t";
        } else if (c == '\r') {
            out += "\\r";
        } else {
            out += c;
        }
    }
    return out + "\"";
}

// The value part of an INI "key = value" line (everything after '='):
// surrounding spaces removed, a trailing comment ('#' or ';' at the start or
// after whitespace) removed; or a double-quoted string with \" \\ \n \t \r.
std::string ini_read_value(const std::string& raw, const std::string& origin) {
    std::string v = trim(raw);
    if (!v.empty() && v[0] == '"') {
        std::string out;
        std::size_t i = 1;
        bool closed = false;
        for (; i < v.size(); ++i) {
            const char c = v[i];
            if (c == '\\' && i + 1 < v.size()) {
                const char e = v[++i];
                out += e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e;
            } else if (c == '"') {
                closed = true;
                ++i;
                break;
            } else {
                out += c;
            }
        }
        if (!closed) throw ConfigError(origin + ": missing closing '\"' in value " + v);
        const std::string rest = trim(v.substr(i));
        if (!rest.empty() && rest[0] != '#' && rest[0] != ';')
            throw ConfigError(origin + ": unexpected " + squote(rest) + " after the quoted value " + v.substr(0, i));
        return out;
    }
    for (std::size_t i = 0; i < v.size(); ++i) {
        if ((v[i] == '#' || v[i] == ';') && (i == 0 || is_space(v[i - 1]))) {
            v.erase(i);
            break;
        }
    }
    return trim(v);
}

// Text for one comment line: backslash, control characters (a newline in a
// file name) escaped, so that the comment cannot end early.
std::string comment_text(const std::string& s) {
    std::string out;
    for (const char c : s) {
        const auto u = static_cast<unsigned char>(c);
        if (c == '\\') out += "\\\\";
        else if (c == '\n') out += "\\n";
        else if (c == '\r') out += "\\r";
        else if (c == '\t') out += "\\t";
        else if (u < 0x20 || u == 0x7f) {
            char buf[8];
            std::snprintf(buf, sizeof buf, "\\x%02x", u);
            out += buf;
        } else {
            out += c;
        }
    }
    return out;
}

void write_comment(std::ostream& os, const std::string& text) {
    std::istringstream in(text);
    std::string line;
    while (std::getline(in, line)) os << "# " << line << "\n";
}

}   // namespace

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
    if (s.size() <= kMax) return s;
    return s.substr(0, kMax) + "...(" + std::to_string(s.size()) + " bytes)";
}

// ---------------------------------------------------------------------------
// Unit parsing and formatting

const char* to_string(ParamType t) {
    switch (t) {
    case ParamType::Time: return "time";
    case ParamType::Rate: return "rate";
    case ParamType::Size: return "size";
    case ParamType::Frequency: return "frequency";
    case ParamType::Bool: return "bool";
    case ParamType::Enum: return "enum";
    case ParamType::Int: return "int";
    case ParamType::Real: return "real";
    case ParamType::String: return "string";
    }
    return "?";
}

std::int64_t parse_time_ps(const std::string& text) {
    Decimal d;
    const std::string unit = split_number(text, d, kTimeExpected);
    if (d.negative) bad("a time cannot be negative", kTimeExpected);
    if (unit.empty()) bad("missing unit", kTimeExpected);
    const IntUnit* u = nullptr;
    for (const auto& c : kTimeUnits)
        if (unit == c.name) u = &c;
    if (u == nullptr) bad("unknown unit " + squote(unit), kTimeExpected);
    std::uint64_t ps = 0;
    switch (to_whole(d, u->factor, std::numeric_limits<std::int64_t>::max(), ps)) {
    case Whole::Ok: break;
    case Whole::NotWhole: bad("not a whole number of picoseconds", kTimeExpected);
    case Whole::TooLarge: bad("too large (at most about 106 days)", kTimeExpected);
    case Whole::TooManyDigits: bad("too many digits", kTimeExpected);
    }
    return static_cast<std::int64_t>(ps);
}

double parse_rate_bps(const std::string& text) {
    Decimal d;
    const std::string unit = split_number(text, d, kRateExpected);
    if (d.negative) bad("a rate cannot be negative", kRateExpected);
    if (unit.empty()) bad("missing unit", kRateExpected);
    const DecUnit* u = find_unit(kRateUnits, std::size(kRateUnits), unit);
    if (u == nullptr) bad("unknown unit " + squote(unit), kRateExpected);
    const double v = to_double(d, u->dec_exp, u->pow2);
    if (!std::isfinite(v)) bad("too large", kRateExpected);
    return v;
}

std::uint64_t parse_size_bytes(const std::string& text) {
    Decimal d;
    const std::string unit = split_number(text, d, kSizeExpected);
    if (d.negative) bad("a size cannot be negative", kSizeExpected);
    const IntUnit* u = nullptr;
    for (const auto& c : kSizeUnits)
        if (unit == c.name) u = &c;
    if (u == nullptr) bad("unknown unit " + squote(unit), kSizeExpected);
    std::uint64_t bytes = 0;
    switch (to_whole(d, u->factor, std::numeric_limits<std::uint64_t>::max(), bytes)) {
    case Whole::Ok: break;
    case Whole::NotWhole: bad("not a whole number of bytes", kSizeExpected);
    case Whole::TooLarge: bad("too large (at most 2^64-1 bytes)", kSizeExpected);
    case Whole::TooManyDigits: bad("too many digits", kSizeExpected);
    }
    return bytes;
}

double parse_frequency_hz(const std::string& text) {
    Decimal d;
    const std::string unit = split_number(text, d, kFrequencyExpected);
    if (d.negative) bad("a frequency cannot be negative", kFrequencyExpected);
    if (unit.empty()) bad("missing unit", kFrequencyExpected);
    const DecUnit* u = find_unit(kFrequencyUnits, std::size(kFrequencyUnits), unit);
    if (u == nullptr) bad("unknown unit " + squote(unit), kFrequencyExpected);
    const double v = to_double(d, u->dec_exp, u->pow2);
    if (!std::isfinite(v)) bad("too large", kFrequencyExpected);
    return v;
}

bool parse_bool(const std::string& text) {
    const std::string t = lower(trim(text));
    if (t.empty()) bad("empty value", kBoolExpected);
    if (t == "true" || t == "yes" || t == "on" || t == "1") return true;
    if (t == "false" || t == "no" || t == "off" || t == "0") return false;
    bad("", kBoolExpected);
}

std::int64_t parse_int(const std::string& text) {
    const std::string t = trim(text);
    if (t.empty()) bad("empty value", kIntExpected);
    std::size_t i = 0;
    bool negative = false;
    if (t[i] == '+' || t[i] == '-') negative = t[i++] == '-';
    unsigned base = 10;
    if (i + 1 < t.size() && t[i] == '0' && (t[i + 1] == 'x' || t[i + 1] == 'X')) {
        base = 16;
        i += 2;
    }
    if (i == t.size()) bad("", kIntExpected);
    const std::uint64_t limit = negative ? static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + 1
                                         : static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
    std::uint64_t v = 0;
    bool too_large = false;
    for (; i < t.size(); ++i) {
        const char c = t[i];
        unsigned digit;
        if (is_digit(c)) {
            digit = static_cast<unsigned>(c - '0');
        } else if (base == 16 && std::isxdigit(static_cast<unsigned char>(c))) {
            digit = static_cast<unsigned>(std::tolower(static_cast<unsigned char>(c)) - 'a' + 10);
        } else {
            bad("", kIntExpected);
        }
        if (v > (limit - digit) / base) too_large = true;
        else v = v * base + digit;
    }
    if (too_large) bad("out of the 64-bit integer range", kIntExpected);
    if (negative) return v == limit ? std::numeric_limits<std::int64_t>::min() : -static_cast<std::int64_t>(v);
    return static_cast<std::int64_t>(v);
}

double parse_real(const std::string& text) {
    Decimal d;
    const std::string rest = split_number(text, d, kRealExpected);
    if (!rest.empty()) bad("unexpected " + squote(rest) + " after the number", kRealExpected);
    const double v = to_double(d, 0, 1);
    if (!std::isfinite(v)) bad("too large", kRealExpected);
    return v;
}

std::string format_time_ps(std::int64_t ps) {
    static const IntUnit units[] = {{"s", 1000000000000}, {"ms", 1000000000}, {"us", 1000000}, {"ns", 1000}, {"ps", 1}};
    const std::uint64_t mag = ps < 0 ? static_cast<std::uint64_t>(-(ps + 1)) + 1 : static_cast<std::uint64_t>(ps);
    const IntUnit* u = &units[4];
    for (const auto& c : units) {
        if (mag >= c.factor) {
            u = &c;
            break;
        }
    }
    return (ps < 0 ? "-" : "") + exact_quotient(mag, u->factor, 40) + u->name;
}

std::string format_rate_bps(double bps) { return format_decimal_units(bps, kRateOut, std::size(kRateOut)); }

std::string format_frequency_hz(double hz) { return format_decimal_units(hz, kFrequencyOut, std::size(kFrequencyOut)); }

std::string format_size_bytes(std::uint64_t bytes) {
    static const IntUnit binary[] = {
        {"TiB", KiB * KiB * KiB * KiB}, {"GiB", KiB * KiB * KiB}, {"MiB", KiB * KiB}, {"KiB", KiB}};
    static const IntUnit decimal[] = {{"TB", 1000000000000}, {"GB", 1000000000}, {"MB", 1000000}, {"KB", 1000}};
    for (const auto* family : {binary, decimal}) {
        for (std::size_t i = 0; i < 4; ++i) {
            if (bytes < family[i].factor) continue;
            const std::string s = exact_quotient(bytes, family[i].factor, 6);
            if (!s.empty()) return s + family[i].name;
        }
    }
    return std::to_string(bytes) + "B";
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

void ParamRegistry::print(std::ostream& os) const {
    struct Row {
        std::string name, type, dflt, range, help;
    };
    std::vector<std::pair<std::string, std::vector<Row>>> groups;
    std::size_t wn = 0, wt = 0, wd = 0, wr = 0;
    for (const auto& s : sections_) {
        std::vector<Row> rows;
        for (const auto& d : decls_) {
            if (d.section != s.first) continue;
            Row r{d.name(), d.unit(), display_default(d), display_range(d), d.help};
            wn = std::max(wn, r.name.size());
            wt = std::max(wt, r.type.size());
            wd = std::max(wd, r.dflt.size());
            wr = std::max(wr, r.range.size());
            rows.push_back(std::move(r));
        }
        groups.emplace_back(s.first, std::move(rows));
    }
    bool first = true;
    for (std::size_t g = 0; g < groups.size(); ++g) {
        if (!first) os << "\n";
        first = false;
        const std::string& desc = sections_[g].second;
        os << "[" << groups[g].first << "]" << (desc.empty() ? "" : "  " + desc) << "\n";
        for (const auto& r : groups[g].second) {
            std::ostringstream line;
            line << "  " << std::left << std::setw(static_cast<int>(wn)) << r.name << "  "
                 << std::setw(static_cast<int>(wt)) << r.type << "  " << std::setw(static_cast<int>(wd)) << r.dflt
                 << "  ";
            if (wr > 0) line << std::setw(static_cast<int>(wr)) << r.range << "  ";
            line << r.help;
            std::string text = line.str();
            text.erase(text.find_last_not_of(' ') + 1);
            os << text << "\n";
        }
    }
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

void ParamRegistry::print_json(std::ostream& os) const {
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
    os << "\n  ]\n}\n";
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
    for (const auto& name : sections) {
        if (std::none_of(sections_.begin(), sections_.end(), [&](const auto& s) { return s.first == name; }))
            throw ConfigError("no parameter section " + squote(name));
    }
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
    Value& v = values_[full_name];
    v.text = text;
    v.origin = origin;
    v.number = p.number;
    v.flag = p.flag;
}

std::vector<IniEntry> read_ini_file(const std::string& path, const std::vector<std::string>& sections,
                                    const std::string& what) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw ConfigError("cannot open " + what + " " + squote(path) + ": " + std::strerror(EISDIR));
    errno = 0;
    std::ifstream in(path);
    if (!in) {
        const int err = errno;
        throw ConfigError("cannot open " + what + " " + squote(path) + ": " +
                          (err != 0 ? std::strerror(err) : "cannot be read"));
    }
    std::vector<IniEntry> entries;
    std::map<std::string, int> seen;   // section.key -> line
    std::string section;
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
        ++lineno;
        if (lineno == 1 && line.compare(0, 3, "\xEF\xBB\xBF") == 0) line.erase(0, 3);   // UTF-8 BOM
        const std::string origin = path + ":" + std::to_string(lineno);
        const std::string t = trim(line);
        if (t.empty() || t[0] == '#' || t[0] == ';') continue;
        if (t[0] == '[') {
            const auto close = t.find(']');
            if (close == std::string::npos)
                throw ConfigError(origin + ": malformed section header " + squote(t) + ": missing ']'");
            const std::string name = trim(t.substr(1, close - 1));
            const std::string rest = trim(t.substr(close + 1));
            if (!rest.empty() && rest[0] != '#' && rest[0] != ';')
                throw ConfigError(origin + ": unexpected " + squote(rest) + " after section header [" +
                                  clip_for_message(name) + "]");
            if (name.empty()) throw ConfigError(origin + ": empty section name []");
            if (std::find(sections.begin(), sections.end(), name) == sections.end()) {
                if (name == "sweep")
                    throw ConfigError(origin +
                                      ": [sweep] makes this a sweep file: run it with `vrdmasim sweep`, "
                                      "or a single point of it with `vrdmasim run` on a copy without "
                                      "[sweep] and with one value per key");
                const std::string guess = closest_of(name, sections);
                throw ConfigError(origin + ": unknown section [" + clip_for_message(name) + "]" +
                                  (guess.empty() ? "" : " (did you mean [" + guess + "]?)"));
            }
            section = name;
            continue;
        }
        const auto eq = t.find('=');
        const std::string key = eq == std::string::npos ? "" : trim(t.substr(0, eq));
        if (key.empty())
            throw ConfigError(origin + ": expected '[section]', 'key = value', a comment or a blank line, got " +
                              squote(t));
        if (section.empty()) throw ConfigError(origin + ": " + squote(t) + " comes before any [section] header");
        IniEntry e;
        e.section = section;
        e.key = key;
        e.line = lineno;
        e.origin = origin;
        const std::string raw = trim(t.substr(eq + 1));
        e.quoted = !raw.empty() && raw[0] == '"';
        e.value = ini_read_value(raw, origin);
        const auto s = seen.find(e.name());
        if (s != seen.end())
            throw ConfigError(origin + ": " + squote(e.name()) + " is already set on line " +
                              std::to_string(s->second) + " of this file");
        seen.emplace(e.name(), lineno);
        entries.push_back(std::move(e));
    }
    if (in.bad()) throw ConfigError("cannot read " + what + " " + squote(path) + ": " + std::strerror(errno));
    return entries;
}

void Config::apply_file(const std::string& path) {
    std::vector<std::string> sections;
    for (const auto& s : reg_.sections()) sections.push_back(s.first);
    for (const auto& e : read_ini_file(path, sections, "config file")) set(e.name(), e.value, e.origin);
}

void Config::apply_command_line(const std::vector<std::string>& args) {
    po::options_description desc;
    reg_.add_options(desc);
    // No guessing of abbreviated names: "--dma.block" must not silently mean
    // "--dma.block-size".
    const int style = po::command_line_style::default_style & ~po::command_line_style::allow_guessing;
    std::vector<std::pair<std::string, std::string>> assignments;
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
        throw ConfigError("command line: unknown parameter " + squote(opt) + did_you_mean(reg_.closest(bare)));
    } catch (const po::too_many_positional_options_error&) {
        std::string token;
        for (const auto& a : args)
            if (token.empty() && (a.empty() || a[0] != '-')) token = a;
        throw ConfigError("command line: unexpected argument " + squote(token) +
                          " (parameters are given as --section.key=value)");
    } catch (const po::error& e) {
        throw ConfigError(std::string("command line: ") + e.what());
    }
    for (const auto& a : assignments) set(a.first, a.second, "command line");
}

const Config::Value& Config::get(const std::string& name, ParamType t1, ParamType t2) const {
    const ParamDecl* d = reg_.find(name);
    if (d == nullptr) throw std::logic_error("Config: no parameter " + squote(name) + " is declared");
    if (d->type != t1 && d->type != t2)
        throw std::logic_error("Config: parameter " + squote(name) + " is a " + to_string(d->type) + ", not a " +
                               to_string(t1));
    return values_.at(name);
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

void Config::write_ini(std::ostream& os) const {
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
            // A default value names no origin, wherever it came from: a
            // run's config.ini lists every key, and running it again must
            // not make all of them look set.
            if (!is_default(d.name())) os << "# from " << comment_text(v.origin) << "\n";
            os << d.key << " = " << ini_value(v.text) << "\n";
        }
    }
}

}   // namespace vrdmasim
