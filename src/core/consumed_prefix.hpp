// A list read from its front and written behind it (a vector and the index
// of its first entry still held): what was read must not stay. Drops the
// read prefix [0, first) when it is all of the list, or once it is most of
// it (and at least kConsumedDropAt entries: an erase moves what is held, so
// not at every read; at most one entry moved a read on average). A list
// that never empties (a busy link's credits on their way, a saturated
// router input's held space, a busy link's queue) would otherwise keep
// every entry it ever had: on the 1,296-MPSoC halo, 28 MiB in one round,
// growing with the run. The vector keeps the space of the most it held,
// so the threshold is also what each busy list keeps beyond what it holds:
// 8, not 64 (2026-11-29: the 1,296-MPSoC halo of docs/clusters.md peaked at
// 326 MiB where it took 350 at 64, and 330 at 16; 0.3 % more
// instructions, the erases more frequent).
#pragma once

#include <cstddef>
#include <vector>

namespace vrdmasim {

// Read entries a list drops at once, at the least.
inline constexpr std::size_t kConsumedDropAt = 8;

// (The erase out of line: the usual case, nothing to drop or all of it, is
// a compare or two inline on every packet's path.)
template <class Vector>
[[gnu::noinline]] void drop_consumed_erase(Vector& v, std::size_t& first) {
    v.erase(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(first));
    first = 0;
}

template <class Vector>
inline void drop_consumed(Vector& v, std::size_t& first) {
    if (first == v.size()) {
        v.clear();
        first = 0;
    } else if (first >= kConsumedDropAt && 2 * first >= v.size()) {
        drop_consumed_erase(v, first);
    }
}

// Such a list as a type: its entries from the first still held, their
// count kept (a vector's size is two loads and a subtraction, for larger
// entries a division, at every look: on the exact links' hop path some 110
// instructions a packet-hop), the read prefix dropped as drop_consumed()
// does. Indexes and iterators are of the held entries.
template <class T>
class ConsumedList {
public:
    using iterator = typename std::vector<T>::iterator;
    using const_iterator = typename std::vector<T>::const_iterator;
    bool empty() const { return n_ == 0; }
    std::size_t size() const { return n_; }
    T& front() { return v_[first_]; }
    const T& front() const { return v_[first_]; }
    T& back() { return v_.back(); }
    const T& back() const { return v_.back(); }
    T& operator[](std::size_t i) { return v_[first_ + i]; }
    const T& operator[](std::size_t i) const { return v_[first_ + i]; }
    void push_back(const T& x) {
        v_.push_back(x);
        ++n_;
    }
    void insert(iterator at, const T& x) {
        v_.insert(at, x);
        ++n_;
    }
    // The first dropped (a reference to it is gone with it).
    void pop_front() {
        ++first_;
        if (--n_ == 0) {
            v_.clear();
            first_ = 0;
        } else if (first_ >= kConsumedDropAt && first_ >= n_) {
            drop_consumed_erase(v_, first_);
        }
    }
    iterator begin() { return v_.begin() + static_cast<std::ptrdiff_t>(first_); }
    iterator end() { return v_.end(); }
    const_iterator begin() const { return v_.begin() + static_cast<std::ptrdiff_t>(first_); }
    const_iterator end() const { return v_.end(); }

private:
    std::vector<T> v_;
    std::size_t first_ = 0, n_ = 0;
};

}   // namespace vrdmasim
