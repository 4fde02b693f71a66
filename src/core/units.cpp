// Units: the values of time, rate, size and frequency parameters parsed
// exactly (as decimal numbers, then scaled) and formatted in the largest
// unit that reads back the same (params.hpp: parse_time_ps and the others).
#include "src/core/params.hpp"

#include "src/core/params_detail.hpp"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <sstream>

namespace vrdmasim {

using namespace params_detail;

namespace {

// ---------------------------------------------------------------------------
// What each kind of value looks like, for error messages.

const char* const kTimeExpected = "expected a time such as 80ns (units: ps, ns, us, ms, s)";
const char* const kRateExpected =
    "expected a rate such as 16Gbps or 2GB/s (units: bps, Kbps, Mbps, Gbps, Tbps, "
    "b/s, Kb/s, Mb/s, Gb/s, Tb/s, B/s, KB/s, MB/s, GB/s, TB/s, KiB/s, MiB/s, GiB/s, TiB/s)";
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
    // A no-break space between the number and its unit ("1 MiB" copied
    // from a document) separates them as a space does.
    std::string unit = trim(t.substr(pos));
    for (const char* nbsp : {"\xC2\xA0", "\xE2\x80\xAF"})
        while (unit.compare(0, std::char_traits<char>::length(nbsp), nbsp) == 0)
            unit = trim(unit.substr(std::char_traits<char>::length(nbsp)));
    return unit;
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
    // Bits per second as every output writes them (Gb/s).
    {"b/s", 0, 1},
    {"Kb/s", 3, 1},
    {"Mb/s", 6, 1},
    {"Gb/s", 9, 1},
    {"Tb/s", 12, 1},
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

}   // namespace

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

}   // namespace vrdmasim
