// JSON for tests: a document parsed by nlohmann::json (Debian's
// nlohmann-json3-dev), strictly, then looked at as a small tree. Strict:
// any syntax error throws, and so does an object with a key twice (which
// JSON allows but no output of vrdmasim may write). Object members keep
// their order, numbers their value and the text nlohmann writes them as.
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

inline JVal to_jval(const nlohmann::ordered_json& j) {
    JVal v;
    switch (j.type()) {
    case nlohmann::ordered_json::value_t::null: v.type = JVal::Null; break;
    case nlohmann::ordered_json::value_t::boolean:
        v.type = JVal::Bool;
        v.b = j.get<bool>();
        break;
    case nlohmann::ordered_json::value_t::number_integer:
    case nlohmann::ordered_json::value_t::number_unsigned:
    case nlohmann::ordered_json::value_t::number_float:
        v.type = JVal::Num;
        v.num = j.get<double>();
        v.text = j.dump();
        break;
    case nlohmann::ordered_json::value_t::string:
        v.type = JVal::Str;
        v.text = j.get<std::string>();
        break;
    case nlohmann::ordered_json::value_t::array:
        v.type = JVal::Arr;
        for (const auto& e : j) v.arr.push_back(to_jval(e));
        break;
    case nlohmann::ordered_json::value_t::object:
        v.type = JVal::Obj;
        for (const auto& [k, e] : j.items()) v.obj.emplace_back(k, to_jval(e));
        break;
    default: throw std::runtime_error("JSON: a value of a kind JSON does not have");
    }
    return v;
}

// Throws std::runtime_error on any syntax error, including duplicate object keys.
inline JVal parse_json(const std::string& s) {
    using json = nlohmann::ordered_json;
    std::vector<std::vector<std::string>> keys;   // the keys of each object being read
    const json::parser_callback_t strict = [&keys](int, json::parse_event_t event, json& parsed) {
        if (event == json::parse_event_t::object_start) keys.emplace_back();
        if (event == json::parse_event_t::object_end) keys.pop_back();
        if (event == json::parse_event_t::key) {
            const std::string k = parsed.get<std::string>();
            for (const auto& seen : keys.back())
                if (seen == k) throw std::runtime_error("JSON: duplicate key '" + k + "'");
            keys.back().push_back(k);
        }
        return true;
    };
    try {
        return to_jval(json::parse(s, strict));
    } catch (const json::exception& e) {
        throw std::runtime_error(std::string("JSON: ") + e.what());
    }
}

}   // namespace vrdmasim_test
