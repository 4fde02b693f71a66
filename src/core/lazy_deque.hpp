// A double-ended queue that costs one pointer until its first element.
//
// std::deque allocates its map and a first 512-byte block when it is
// constructed, empty or not: some 600 bytes. A simulated node holds dozens
// of queues that most runs never fill (a channel's work, each completion
// signal's pending records, each VC buffer of each link...), and on a torus
// of thousands of nodes those empty queues were a large share of the host
// memory an idle node costs. LazyDeque allocates its std::deque on the first
// insertion and keeps it from then on (a queue that was used once is likely
// to be used again: freeing it when it empties would allocate per packet).
//
// The interface is the part of std::deque the models use, with the same
// meaning; iterators are std::deque's. An empty LazyDeque that never held an
// element hands out value-initialised iterators (begin() == end()), which
// the standard allows comparing; inserting at such an iterator inserts into
// the (then allocated) empty deque.
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <utility>

namespace vrdmasim {

template <class T>
class LazyDeque {
public:
    using container = std::deque<T>;
    using value_type = T;
    using size_type = typename container::size_type;
    using iterator = typename container::iterator;
    using const_iterator = typename container::const_iterator;
    using reference = T&;
    using const_reference = const T&;

    LazyDeque() = default;
    LazyDeque(const LazyDeque& o) : d_(o.d_ ? std::make_unique<container>(*o.d_) : nullptr) {}
    LazyDeque& operator=(const LazyDeque& o) {
        if (this != &o) d_ = o.d_ ? std::make_unique<container>(*o.d_) : nullptr;
        return *this;
    }
    LazyDeque(LazyDeque&&) noexcept = default;
    LazyDeque& operator=(LazyDeque&&) noexcept = default;

    bool empty() const { return !d_ || d_->empty(); }
    size_type size() const { return d_ ? d_->size() : 0; }
    // Whether the queue's storage exists (it held an element once).
    bool allocated() const { return d_ != nullptr; }

    // Preconditions as std::deque's (not empty).
    reference front() { return d_->front(); }
    const_reference front() const { return d_->front(); }
    reference back() { return d_->back(); }
    const_reference back() const { return d_->back(); }
    reference operator[](size_type i) { return (*d_)[i]; }
    const_reference operator[](size_type i) const { return (*d_)[i]; }
    void pop_front() { d_->pop_front(); }
    void pop_back() { d_->pop_back(); }

    void push_back(const T& v) { get().push_back(v); }
    void push_back(T&& v) { get().push_back(std::move(v)); }
    void push_front(const T& v) { get().push_front(v); }
    void push_front(T&& v) { get().push_front(std::move(v)); }
    template <class... A>
    reference emplace_back(A&&... a) {
        return get().emplace_back(std::forward<A>(a)...);
    }
    template <class... A>
    reference emplace_front(A&&... a) {
        return get().emplace_front(std::forward<A>(a)...);
    }
    iterator insert(const_iterator pos, const T& v) {
        if (d_) return d_->insert(pos, v);
        container& c = get();   // pos: the value-initialised end()
        return c.insert(c.cend(), v);
    }
    iterator insert(const_iterator pos, T&& v) {
        if (d_) return d_->insert(pos, std::move(v));
        container& c = get();
        return c.insert(c.cend(), std::move(v));
    }
    // `pos` must be an element's iterator (the queue is not empty).
    iterator erase(const_iterator pos) { return d_->erase(pos); }
    iterator erase(const_iterator first, const_iterator last) { return d_ ? d_->erase(first, last) : iterator(); }
    void clear() {
        if (d_) d_->clear();
    }

    iterator begin() { return d_ ? d_->begin() : iterator(); }
    iterator end() { return d_ ? d_->end() : iterator(); }
    const_iterator begin() const { return d_ ? d_->cbegin() : const_iterator(); }
    const_iterator end() const { return d_ ? d_->cend() : const_iterator(); }
    const_iterator cbegin() const { return begin(); }
    const_iterator cend() const { return end(); }

private:
    container& get() {
        if (!d_) d_ = std::make_unique<container>();
        return *d_;
    }
    std::unique_ptr<container> d_;
};

}   // namespace vrdmasim
