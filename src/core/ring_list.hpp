// RingList: a FIFO on a ring, with insertion anywhere (see below).
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <type_traits>
#include <utility>

namespace vrdmasim {

// A list read from its front and written behind (the exact links' queues,
// credits on their way and arrivals made ahead, a router input's held
// space, the DRAM's writes waiting for their time): a ring of a power of
// two entries, twice as many once full, from the first held on. A read
// moves nothing (a vector and the index of its first held entry,
// consumed_prefix.hpp, moved one entry a read on average and tested three
// times whether to), nothing is allocated while it is empty, and it keeps
// the space of the most it held (rounded up to a power of two). Indexes
// and iterators are of the held entries, in order; an insertion moves
// those after it.
template <class T>
class RingList {
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
    using iterator = Iter<RingList, T&, T*>;
    using const_iterator = Iter<const RingList, const T&, const T*>;
    RingList() = default;
    RingList(RingList&&) noexcept = default;
    RingList& operator=(RingList&&) noexcept = default;
    RingList(const RingList& o) { *this = o; }
    RingList& operator=(const RingList& o) {
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
