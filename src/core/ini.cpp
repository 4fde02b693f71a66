// The one INI grammar of config files and sweep files (params.hpp,
// read_ini_file), and how a value and a comment are written so that it
// reads them back.
#include "src/core/params.hpp"

#include "src/core/params_detail.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <ostream>
#include <sstream>

namespace vrdmasim {

namespace params_detail {

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

// The values of a sweep file's list: items separated by commas outside
// double quotes, each bare (spaces around it removed; a comment, '#' or ';'
// at its start or after whitespace, ends the line) or double-quoted (as
// ini_read_value: escapes, commas kept). One item when there is no comma
// outside quotes.
std::vector<std::string> ini_read_list(const std::string& raw, const std::string& origin) {
    const std::string v = trim(raw);
    std::vector<std::string> items;
    std::size_t i = 0;
    auto skip_spaces = [&] {
        while (i < v.size() && is_space(v[i])) ++i;
    };
    auto comment_at = [&](std::size_t k) { return (v[k] == '#' || v[k] == ';') && (k == 0 || is_space(v[k - 1])); };
    while (true) {
        skip_spaces();
        if (i < v.size() && v[i] == '"') {
            const std::size_t start = i;
            std::string out;
            bool closed = false;
            for (++i; i < v.size(); ++i) {
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
            if (!closed) throw ConfigError(origin + ": missing closing '\"' in value " + v.substr(start));
            items.push_back(out);
            skip_spaces();
            if (i >= v.size() || comment_at(i)) return items;
            if (v[i] != ',')
                throw ConfigError(origin + ": unexpected " + squote(v.substr(i)) + " after the quoted value " +
                                  v.substr(start, i - start) +
                                  " (the values of a list are separated by commas; quote a value that holds one)");
            ++i;
            continue;
        }
        const std::size_t start = i;
        while (i < v.size() && v[i] != ',' && !comment_at(i)) ++i;
        items.push_back(trim(v.substr(start, i - start)));
        if (i >= v.size() || v[i] != ',') return items;
        ++i;
    }
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

}   // namespace params_detail

using namespace params_detail;

std::string resolve_from_file(const std::string& file, const std::string& value) {
    const std::filesystem::path p(value);
    if (value.empty() || p.is_absolute()) return value;
    return (std::filesystem::path(file).parent_path() / p).lexically_normal().string();
}

namespace {

// The file open at its start, or a ConfigError saying why not (a
// directory, unreadable, UTF-16).
void open_ini(std::ifstream& in, const std::string& path, const std::string& what) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        throw ConfigError("cannot open " + what + " " + squote(path) + ": " + std::strerror(EISDIR));
    errno = 0;
    in.open(path);
    if (!in) {
        const int err = errno;
        throw ConfigError("cannot open " + what + " " + squote(path) + ": " +
                          (err != 0 ? std::strerror(err) : "cannot be read"));
    }
    // UTF-16 (a byte-order mark FF FE or FE FF, as some editors save):
    // said plainly, not echoed as the raw bytes of its first line.
    char head[2] = {0, 0};
    in.read(head, 2);
    if (in.gcount() == 2 && ((head[0] == '\xFF' && head[1] == '\xFE') || (head[0] == '\xFE' && head[1] == '\xFF')))
        throw ConfigError(what + " " + squote(path) +
                          " is UTF-16 (it begins with a UTF-16 byte-order mark); save it as UTF-8 (or ASCII)");
    in.clear();
    in.seekg(0);
}

// The name of the section a header line `t` (trimmed, starting with '[')
// opens, one of `sections`.
std::string section_of(const std::string& t, const std::string& origin, const std::vector<std::string>& sections) {
    const auto close = t.find(']');
    if (close == std::string::npos)
        throw ConfigError(origin + ": malformed section header " + squote(t) + ": missing ']'");
    const std::string name = trim(t.substr(1, close - 1));
    const std::string rest = trim(t.substr(close + 1));
    if (!rest.empty() && rest[0] != '#' && rest[0] != ';')
        throw ConfigError(origin + ": unexpected " + squote(rest) + " after section header [" + clip_for_message(name) +
                          "]");
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
    return name;
}

// The entry a line `t` (trimmed: `key = value`) of `section` sets.
IniEntry entry_of(const std::string& t, const std::string& section, int lineno, const std::string& origin, bool lists) {
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
    if (lists) {
        e.items = ini_read_list(raw, origin);
        if (e.items.size() == 1) {
            e.value = e.items[0];
        } else {
            for (const auto& item : e.items) e.value += (e.value.empty() ? "" : ", ") + item;
            e.quoted = false;
        }
    } else {
        e.value = ini_read_value(raw, origin);
    }
    return e;
}

}   // namespace

std::vector<IniEntry> read_ini_file(const std::string& path, const std::vector<std::string>& sections,
                                    const std::string& what, bool lists) {
    std::ifstream in;
    open_ini(in, path, what);
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
            section = section_of(t, origin, sections);
            continue;
        }
        IniEntry e = entry_of(t, section, lineno, origin, lists);
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

}   // namespace vrdmasim
