// JSON for tests: a document parsed by nlohmann::json (Debian's
// nlohmann-json3-dev), strictly, into a small tree. Strict: any syntax error
// throws, and so does an object with a key twice (which JSON allows but no
// output of vrdmasim may write). Object members keep their order, numbers
// their value and the text they were written as.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace vrdmasim_test {

struct JVal {
    enum Type { Null, Bool, Num, Str, Arr, Obj } type = Null;
    bool b = false;
    double num = 0;
    std::string text;   // string value, or the number as text
    std::vector<JVal> arr;
    std::vector<std::pair<std::string, JVal>> obj;
    const JVal* get(const std::string& k) const {
        for (const auto& p : obj)
            if (p.first == k) return &p.second;
        return nullptr;
    }
};

// Builds the tree from nlohmann's SAX events: the library parses (and
// refuses what is not JSON); numbers keep the text they were written as.
class JValBuilder {
public:
    using json = nlohmann::json;
    bool null() { return put(JVal{}); }
    bool boolean(bool b) {
        JVal v;
        v.type = JVal::Bool;
        v.b = b;
        return put(std::move(v));
    }
    bool number_integer(json::number_integer_t n) { return number(static_cast<double>(n), std::to_string(n)); }
    bool number_unsigned(json::number_unsigned_t n) { return number(static_cast<double>(n), std::to_string(n)); }
    bool number_float(json::number_float_t n, const std::string& text) { return number(n, text); }
    bool string(std::string& text) {
        JVal v;
        v.type = JVal::Str;
        v.text = text;
        return put(std::move(v));
    }
    bool binary(json::binary_t&) { throw std::runtime_error("JSON: binary values are not JSON"); }
    bool start_object(std::size_t) { return open(JVal::Obj); }
    bool key(std::string& k) {
        for (const auto& member : stack_.back().obj)
            if (member.first == k) throw std::runtime_error("JSON: duplicate key '" + k + "'");
        key_ = k;
        return true;
    }
    bool end_object() { return close(); }
    bool start_array(std::size_t) { return open(JVal::Arr); }
    bool end_array() { return close(); }
    bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) {
        throw std::runtime_error(std::string("JSON: ") + e.what());
    }
    JVal result() { return std::move(root_); }

private:
    bool number(double n, const std::string& text) {
        JVal v;
        v.type = JVal::Num;
        v.num = n;
        v.text = text;
        return put(std::move(v));
    }
    bool open(JVal::Type t) {
        JVal v;
        v.type = t;
        stack_.push_back(std::move(v));
        keys_.push_back(key_);
        return true;
    }
    bool close() {
        JVal v = std::move(stack_.back());
        stack_.pop_back();
        key_ = keys_.back();
        keys_.pop_back();
        return put(std::move(v));
    }
    bool put(JVal v) {
        if (stack_.empty()) root_ = std::move(v);
        else if (stack_.back().type == JVal::Arr) stack_.back().arr.push_back(std::move(v));
        else stack_.back().obj.emplace_back(key_, std::move(v));
        return true;
    }
    std::vector<JVal> stack_;
    std::vector<std::string> keys_;   // the key each open container is the value of
    std::string key_;
    JVal root_;
};

// Throws std::runtime_error on any syntax error, including duplicate object keys.
inline JVal parse_json(const std::string& s) {
    JValBuilder b;
    if (!nlohmann::json::sax_parse(s, &b)) throw std::runtime_error("JSON: not a JSON document");
    return b.result();
}

}   // namespace vrdmasim_test
