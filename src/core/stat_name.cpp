// Statistics' names (StatName) and their interned texts (stats.hpp).
#include "src/core/stats.hpp"

#include "src/core/json.hpp"
#include "src/core/stats_detail.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <limits>
#include <mutex>
#include <stdexcept>
#include <system_error>
#include <unordered_map>
#include <unordered_set>

namespace vrdmasim {

// --------------------------------------------------------------- SharedText

namespace {

// The pools of interned texts (the pieces of statistics' names) and of
// (unit, help) pairs: never freed (statistics may be read until exit, and a
// pool destroyed before a static registry would leave it dangling). A
// lookup copies its text into a probe kept for the purpose, so that finding
// a text already kept allocates nothing (every node registers the same
// pieces: most registrations find them), and a text is kept once, in the
// set itself (a big torus interns a prefix per model of every node).
struct TextPools {
    std::mutex lock;   // sweeps may build registries in several threads
    std::unordered_set<std::string> texts;
    struct PairHash {
        std::size_t operator()(const StatInfo::Texts& t) const {
            return std::hash<std::string>()(t.unit) * 31 + std::hash<std::string>()(t.help);
        }
    };
    struct PairEqual {
        bool operator()(const StatInfo::Texts& a, const StatInfo::Texts& b) const {
            return a.unit == b.unit && a.help == b.help;
        }
    };
    std::unordered_set<StatInfo::Texts, PairHash, PairEqual> pairs;
    std::string probe;
    StatInfo::Texts probe_pair;

    // Callers hold `lock`.
    const std::string& intern(std::string_view s) {
        probe.assign(s.data(), s.size());
        const auto it = texts.find(probe);
        if (it != texts.end()) return *it;
        return *texts.insert(probe).first;
    }
    const StatInfo::Texts& intern_pair(std::string_view unit, std::string_view help) {
        probe_pair.unit.assign(unit.data(), unit.size());
        probe_pair.help.assign(help.data(), help.size());
        const auto it = pairs.find(probe_pair);
        if (it != pairs.end()) return *it;
        return *pairs.insert(probe_pair).first;
    }
};

TextPools& pools() {
    static auto* p = new TextPools;
    return *p;
}

const StatInfo::Texts& intern_texts(std::string_view unit, std::string_view help) {
    TextPools& p = pools();
    const std::lock_guard<std::mutex> g(p.lock);
    return p.intern_pair(unit, help);
}

// The empty texts every statistic starts with (before its registry names
// it), interned once.
const StatInfo::Texts& no_texts() {
    static const StatInfo::Texts& t = intern_texts({}, {});
    return t;
}

const std::string& no_text() {
    static const std::string* t = [] {
        TextPools& p = pools();
        const std::lock_guard<std::mutex> g(p.lock);
        return &p.intern({});
    }();
    return *t;
}

}   // namespace

StatInfo::StatInfo() : texts_(&no_texts()) {}
StatInfo::StatInfo(const StatName& n, const std::string& unit, const std::string& help)
    : name(n), texts_(&intern_texts(unit, help)) {}
void StatInfo::set_unit(const std::string& unit) { texts_ = &intern_texts(unit, texts_->help); }
void StatInfo::set_help(const std::string& help) { texts_ = &intern_texts(texts_->unit, help); }

// ----------------------------------------------------------------- StatName

StatName::StatName() : prefix_(nullptr), leaf_(&no_text()) {}

StatName::StatName(const std::string& full) {
    const std::string_view s(full);
    const std::size_t dot = s.rfind('.');
    TextPools& p = pools();
    const std::lock_guard<std::mutex> g(p.lock);
    if (dot == std::string_view::npos) {
        prefix_ = nullptr;
        leaf_ = &p.intern(s);
    } else {
        prefix_ = &p.intern(s.substr(0, dot));
        leaf_ = &p.intern(s.substr(dot + 1));
    }
}

StatName::StatName(const char* full) : StatName(std::string(full)) {}

std::string StatName::str() const {
    if (!prefix_) return *leaf_;
    std::string s;
    s.reserve(prefix_->size() + 1 + leaf_->size());
    s += *prefix_;
    s += '.';
    s += *leaf_;
    return s;
}

std::size_t StatName::size() const { return prefix_ ? prefix_->size() + 1 + leaf_->size() : leaf_->size(); }

bool StatName::ends_with(std::string_view tail) const {
    const std::string_view l = *leaf_;
    if (tail.size() <= l.size()) return l.substr(l.size() - tail.size()) == tail;
    if (!prefix_) return false;
    std::size_t rest = tail.size() - l.size();
    if (tail.substr(rest) != l) return false;
    if (tail[--rest] != '.') return false;
    const std::string_view p = *prefix_;
    return rest <= p.size() && p.substr(p.size() - rest) == tail.substr(0, rest);
}

bool StatName::equals(std::string_view full) const { return full.size() == size() && ends_with(full); }

int StatName::compare(const StatName& a, const StatName& b) {
    if (a.prefix_ == b.prefix_) return a.leaf_->compare(*b.leaf_);
    // Different prefixes: the names' strings compared as std::string
    // compares them (bytes as unsigned char), without assembling them: each
    // name is up to three pieces (prefix, ".", leaf), compared a common run
    // at a time with memcmp. Sorting the outputs of a big torus makes
    // millions of these.
    struct Pieces {
        std::string_view p[3];
        int n = 0;
        explicit Pieces(const StatName& x) {
            if (x.prefix_) {
                p[n++] = *x.prefix_;
                p[n++] = std::string_view(".", 1);
            }
            p[n++] = *x.leaf_;
        }
    };
    const Pieces pa(a), pb(b);
    int ia = 0, ib = 0;
    std::size_t oa = 0, ob = 0;   // offsets into the current pieces
    while (ia < pa.n && ib < pb.n) {
        const std::string_view& sa = pa.p[ia];
        const std::string_view& sb = pb.p[ib];
        const std::size_t k = std::min(sa.size() - oa, sb.size() - ob);
        if (k) {
            if (const int c = std::memcmp(sa.data() + oa, sb.data() + ob, k)) return c;
        }
        oa += k;
        ob += k;
        if (oa == sa.size()) ++ia, oa = 0;
        if (ob == sb.size()) ++ib, ob = 0;
    }
    // Every byte of the shorter equal: the shorter sorts first.
    const bool a_left = ia < pa.n, b_left = ib < pb.n;
    return a_left == b_left ? 0 : (a_left ? 1 : -1);
}

std::ostream& operator<<(std::ostream& os, const StatName& n) {
    if (n.prefix_) os << *n.prefix_ << '.';
    return os << *n.leaf_;
}

}   // namespace vrdmasim
