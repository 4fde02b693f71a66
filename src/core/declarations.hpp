// Declarations made at static initialisation, each in its own file, and
// read by their `order` (a workload kind: workloads/registry.hpp; a
// registration strategy: library/rdma/strategy/strategy.hpp). `Kind` has a
// `name`, an `order` and a factory `create`. A declaration made once the
// list was read, a name or order declared twice, or one without a factory is
// a programming error (std::logic_error).
#pragma once

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace vrdmasim {

template <class Kind>
class Declarations {
public:
    // `what` names a declaration in errors ("workload kind").
    explicit Declarations(std::string what) : what_(std::move(what)) {}

    void add(Kind k) {
        if (read_) throw std::logic_error(what_ + " '" + k.name + "' declared after the declarations were read");
        for (const Kind& o : v_)
            if (o.name == k.name || o.order == k.order)
                throw std::logic_error(what_ + " '" + k.name + "' declared twice, or at the order of '" + o.name + "'");
        if (!k.create) throw std::logic_error(what_ + " '" + k.name + "' declared without a factory");
        v_.push_back(std::move(k));
        std::sort(v_.begin(), v_.end(), [](const Kind& a, const Kind& b) { return a.order < b.order; });
    }
    // Every declaration, by order; none may come after.
    const std::vector<Kind>& all() {
        read_ = true;
        return v_;
    }
    // The one named `name`, or nullptr.
    const Kind* find(const std::string& name) {
        for (const Kind& k : all())
            if (k.name == name) return &k;
        return nullptr;
    }

private:
    std::string what_;
    std::vector<Kind> v_;
    bool read_ = false;
};

}   // namespace vrdmasim
