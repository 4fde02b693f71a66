// A strict little JSON parser for tests: enough to prove an output is valid
// JSON and to look at its structure.
#pragma once

#include <cstdlib>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace vrdmasim_test {

// A strict little JSON parser: enough to prove the output is valid JSON and to
// look at its structure. Throws std::runtime_error on any syntax error,
// including duplicate object keys.
struct JVal {
    enum Type { Null, Bool, Num, Str, Arr, Obj } type = Null;
    bool b = false;
    double num = 0;
    std::string text;   // string value, or the number's literal text
    std::vector<JVal> arr;
    std::vector<std::pair<std::string, JVal>> obj;
    const JVal* get(const std::string& k) const {
        for (const auto& p : obj)
            if (p.first == k) return &p.second;
        return nullptr;
    }
};

class JParser {
public:
    explicit JParser(const std::string& s) : s_(s) {}
    JVal document() {
        JVal v = value();
        ws();
        if (i_ != s_.size()) fail("trailing characters");
        return v;
    }

private:
    [[noreturn]] void fail(const std::string& what) {
        throw std::runtime_error("JSON: " + what + " at offset " + std::to_string(i_));
    }
    void ws() {
        while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\n' || s_[i_] == '\r' || s_[i_] == '\t')) ++i_;
    }
    bool eat(char c) {
        ws();
        if (i_ < s_.size() && s_[i_] == c) {
            ++i_;
            return true;
        }
        return false;
    }
    void expect(char c) {
        if (!eat(c)) fail(std::string("expected '") + c + "'");
    }
    bool digit() const { return i_ < s_.size() && s_[i_] >= '0' && s_[i_] <= '9'; }
    JVal value() {
        ws();
        if (i_ >= s_.size()) fail("unexpected end");
        JVal v;
        const char c = s_[i_];
        if (c == '{') {
            ++i_;
            v.type = JVal::Obj;
            if (eat('}')) return v;
            do {
                ws();
                std::string k = string_lit();
                if (v.get(k)) fail("duplicate key " + k);
                expect(':');
                v.obj.emplace_back(k, value());
            } while (eat(','));
            expect('}');
        } else if (c == '[') {
            ++i_;
            v.type = JVal::Arr;
            if (eat(']')) return v;
            do v.arr.push_back(value());
            while (eat(','));
            expect(']');
        } else if (c == '"') {
            v.type = JVal::Str;
            v.text = string_lit();
        } else if (s_.compare(i_, 4, "true") == 0) {
            v.type = JVal::Bool, v.b = true, i_ += 4;
        } else if (s_.compare(i_, 5, "false") == 0) {
            v.type = JVal::Bool, i_ += 5;
        } else if (s_.compare(i_, 4, "null") == 0) {
            i_ += 4;
        } else {
            const std::size_t start = i_;
            if (s_[i_] == '-') ++i_;
            if (!digit()) fail("bad number");
            if (s_[i_] == '0') ++i_;
            else
                while (digit()) ++i_;
            if (i_ < s_.size() && s_[i_] == '.') {
                ++i_;
                if (!digit()) fail("bad fraction");
                while (digit()) ++i_;
            }
            if (i_ < s_.size() && (s_[i_] == 'e' || s_[i_] == 'E')) {
                ++i_;
                if (i_ < s_.size() && (s_[i_] == '+' || s_[i_] == '-')) ++i_;
                if (!digit()) fail("bad exponent");
                while (digit()) ++i_;
            }
            v.type = JVal::Num;
            v.text = s_.substr(start, i_ - start);
            v.num = std::strtod(v.text.c_str(), nullptr);
        }
        return v;
    }
    std::string string_lit() {
        if (i_ >= s_.size() || s_[i_] != '"') fail("expected string");
        ++i_;
        std::string out;
        while (true) {
            if (i_ >= s_.size()) fail("unterminated string");
            const char c = s_[i_++];
            if (c == '"') return out;
            if (static_cast<unsigned char>(c) < 0x20) fail("raw control character in string");
            if (c != '\\') {
                out += c;
                continue;
            }
            if (i_ >= s_.size()) fail("bad escape");
            const char e = s_[i_++];
            switch (e) {
            case '"': out += '"'; break;
            case '\\': out += '\\'; break;
            case '/': out += '/'; break;
            case 'b': out += '\b'; break;
            case 'f': out += '\f'; break;
            case 'n': out += '\n'; break;
            case 'r': out += '\r'; break;
            case 't': out += '\t'; break;
            case 'u': {
                if (i_ + 4 > s_.size()) fail("bad \\u escape");
                const std::string hex = s_.substr(i_, 4);
                if (hex.find_first_not_of("0123456789abcdefABCDEF") != std::string::npos) fail("bad \\u escape");
                const long cp = std::strtol(hex.c_str(), nullptr, 16);
                i_ += 4;
                if (cp >= 0x80) fail("test parser handles only ASCII \\u escapes");
                out += static_cast<char>(cp);
                break;
            }
            default: fail("bad escape");
            }
        }
    }
    const std::string& s_;
    std::size_t i_ = 0;
};

inline JVal parse_json(const std::string& s) { return JParser(s).document(); }

}   // namespace vrdmasim_test
