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
#include <iterator>
#include <memory>
#include <type_traits>
#include <utility>
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

// Such a list as a type, for the lists on the exact links' hop path (a
// link's queues, its credits on their way, its arrivals made ahead, a
// router input's held space), read from the front and written behind:
// a ring of a power of two entries, twice as many once full, from the
// first held on. A read moves nothing (where the vector above moved one
// entry a read on average, and tested three times whether to), nothing is
// allocated while it is empty, and it keeps the space of the most it held
// (rounded up to a power of two). Indexes and iterators are of the held
// entries, in order; an insertion moves those after it.
template <class T>
class ConsumedList {
    template <class List, class Ref, class Ptr>
    class Iter {
    public:
        using iterator_category = std::random_access_iterator_tag;
        using value_type = T;
        using difference_type = std::ptrdiff_t;
        using pointer = Ptr;
        using reference = Ref;
        Iter() = default;
        Iter(List* l, std::size_t i) : l_(l), i_(i) {}
        Ref operator*() const { return (*l_)[i_]; }
        Ptr operator->() const { return &(*l_)[i_]; }
        Iter& operator++() {
            ++i_;
            return *this;
        }
        Iter& operator--() {
            --i_;
            return *this;
        }
        Iter operator++(int) { return Iter(l_, i_++); }
        Iter operator--(int) { return Iter(l_, i_--); }
        Iter& operator+=(difference_type n) {
            i_ = static_cast<std::size_t>(static_cast<difference_type>(i_) + n);
            return *this;
        }
        Iter& operator-=(difference_type n) { return *this += -n; }
        Iter operator+(difference_type n) const { return Iter(*this) += n; }
        Iter operator-(difference_type n) const { return Iter(*this) -= n; }
        difference_type operator-(const Iter& o) const {
            return static_cast<difference_type>(i_) - static_cast<difference_type>(o.i_);
        }
        Ref operator[](difference_type n) const { return *(*this + n); }
        bool operator==(const Iter& o) const { return i_ == o.i_; }
        bool operator!=(const Iter& o) const { return i_ != o.i_; }
        bool operator<(const Iter& o) const { return i_ < o.i_; }
        std::size_t index() const { return i_; }

    private:
        List* l_ = nullptr;
        std::size_t i_ = 0;
    };

public:
    using iterator = Iter<ConsumedList, T&, T*>;
    using const_iterator = Iter<const ConsumedList, const T&, const T*>;
    ConsumedList() = default;
    ConsumedList(ConsumedList&&) noexcept = default;
    ConsumedList& operator=(ConsumedList&&) noexcept = default;
    ConsumedList(const ConsumedList& o) { *this = o; }
    ConsumedList& operator=(const ConsumedList& o) {
        if (this == &o) return *this;
        ring_.reset();
        head_ = n_ = mask_ = size_ = 0;
        for (const T& x : o) push_back(x);
        return *this;
    }
    bool empty() const { return n_ == 0; }
    std::size_t size() const { return n_; }
    T& front() { return ring_[head_]; }
    const T& front() const { return ring_[head_]; }
    T& back() { return ring_[(head_ + n_ - 1) & mask_]; }
    const T& back() const { return ring_[(head_ + n_ - 1) & mask_]; }
    T& operator[](std::size_t i) { return ring_[(head_ + i) & mask_]; }
    const T& operator[](std::size_t i) const { return ring_[(head_ + i) & mask_]; }
    void push_back(const T& x) {
        if (n_ == size_) grow();
        ring_[(head_ + n_) & mask_] = x;
        ++n_;
    }
    void push_back(T&& x) {
        if (n_ == size_) grow();
        ring_[(head_ + n_) & mask_] = std::move(x);
        ++n_;
    }
    void insert(iterator at, const T& x) { insert(at, T(x)); }
    void insert(iterator at, T&& x) {
        if (n_ == size_) grow();
        // Those from `at` on move one place back, the last first.
        for (std::size_t k = n_; k > at.index(); --k) (*this)[k] = std::move((*this)[k - 1]);
        (*this)[at.index()] = std::move(x);
        ++n_;
    }
    // The first dropped (a reference to it is gone with it; what it owns
    // is freed now, not when its place is written again).
    void pop_front() {
        if constexpr (!std::is_trivially_destructible_v<T>) ring_[head_] = T();
        head_ = (head_ + 1) & mask_;
        --n_;
    }
    iterator begin() { return iterator(this, 0); }
    iterator end() { return iterator(this, n_); }
    const_iterator begin() const { return const_iterator(this, 0); }
    const_iterator end() const { return const_iterator(this, n_); }

private:
    // (Out of line: once a size.)
    [[gnu::noinline]] void grow() {
        const std::size_t size = size_ == 0 ? 4 : 2 * size_;
        std::unique_ptr<T[]> bigger(new T[size]);
        for (std::size_t k = 0; k < n_; ++k) bigger[k] = std::move((*this)[k]);
        ring_ = std::move(bigger);
        size_ = size;
        head_ = 0;
        mask_ = size - 1;
    }
    std::unique_ptr<T[]> ring_;   // size_ entries, a power of two (or none)
    std::size_t head_ = 0, n_ = 0, mask_ = 0, size_ = 0;
};

}   // namespace vrdmasim
