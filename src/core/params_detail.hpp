// What the files of the parameters (params.cpp, units.cpp, ini.cpp,
// config.cpp) share; not part of the core's API (params.hpp).
#pragma once

#include <cstring>
#include <iosfwd>
#include <string>
#include <vector>

#include "src/core/params.hpp"

namespace vrdmasim::params_detail {

extern const char* const kSpaces;
inline bool is_space(char c) { return c != '\0' && std::strchr(kSpaces, c) != nullptr; }
inline bool is_digit(char c) { return c >= '0' && c <= '9'; }
std::string trim(const std::string& s);
std::string lower(std::string s);
// Quoted for a message, clipped: a megabyte-long key or value is not echoed whole.
std::string squote(const std::string& s);

// A value parsed against its declaration.
struct Parsed {
    double number = 0;
    bool flag = false;
};
// Parse text as a value of d (type and, for enums, choices; not the range).
// Throws std::invalid_argument.
Parsed parse_value(const ParamDecl& d, const std::string& text);
bool has_range(ParamType t);
// Why `number` is outside d's range, "" if it is within.
std::string range_violation(const ParamDecl& d, double number);
// A range bound of d in its canonical unit; a bad bound is a programming error.
double parse_bound(const ParamDecl& d, const std::string& text, const char* which);
void check_default_in_range(const ParamDecl& d);
// The default and the range as `params` shows them.
std::string display_default(const ParamDecl& d);
std::string display_range(const ParamDecl& d);

// The candidate closest to name (case-insensitive edit distance), or "".
std::string closest_of(const std::string& name, const std::vector<std::string>& candidates);
// " (did you mean 'x'?)", or "" for no suggestion.
std::string did_you_mean(const std::string& suggestion);
bool valid_name(const std::string& s, bool allow_dot);

// An INI value as it must be written so that the INI reader gives back s.
std::string ini_value(const std::string& s);
// The value part of an INI "key = value" line (everything after '=').
std::string ini_read_value(const std::string& raw, const std::string& origin);
// Text for one comment line, and a comment of several lines.
std::string comment_text(const std::string& s);
void write_comment(std::ostream& os, const std::string& text);

}   // namespace vrdmasim::params_detail
