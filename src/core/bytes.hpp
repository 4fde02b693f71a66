// Plain data in and out of bytes: what a partitioned run's ranks send each
// other (src/sim/parallel/comm.hpp) and the statistics they merge (stats.hpp). The
// ranks run one executable, so a value's bytes mean the same everywhere.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <vector>

namespace vrdmasim {

using Bytes = std::vector<unsigned char>;

class ByteWriter {
public:
    explicit ByteWriter(Bytes& out) : out_(out) {}
    // (Grown, then copied into: GCC 12's -Wstringop-overflow took the
    // insert of a value's bytes into an empty vector, inlined in
    // run.cpp's rank_columns, for a write past its end.)
    template <class T>
    void put(const T& v) {
        const std::size_t at = out_.size();
        out_.resize(at + sizeof(T));
        std::memcpy(out_.data() + at, &v, sizeof(T));
    }
    // `n` bytes, after their count.
    void put_bytes(const unsigned char* p, std::size_t n) {
        put(static_cast<std::uint64_t>(n));
        out_.insert(out_.end(), p, p + n);
    }

private:
    Bytes& out_;
};

class ByteReader {
public:
    explicit ByteReader(const Bytes& in) : in_(in) {}
    bool done() const { return at_ >= in_.size(); }
    template <class T>
    T get() {
        T v;
        need(sizeof(T));
        std::copy(in_.begin() + static_cast<std::ptrdiff_t>(at_),
                  in_.begin() + static_cast<std::ptrdiff_t>(at_ + sizeof(T)), reinterpret_cast<unsigned char*>(&v));
        at_ += sizeof(T);
        return v;
    }
    // What put_bytes() wrote, into `out` (assign()ed).
    template <class Out>
    void get_bytes(Out& out) {
        const auto n = static_cast<std::size_t>(get<std::uint64_t>());
        need(n);
        out.assign(in_.begin() + static_cast<std::ptrdiff_t>(at_), in_.begin() + static_cast<std::ptrdiff_t>(at_ + n));
        at_ += n;
    }

private:
    void need(std::size_t n) const {
        if (at_ + n > in_.size())
            throw std::logic_error("bytes cut short: a message between ranks, or packed statistics");
    }
    const Bytes& in_;
    std::size_t at_ = 0;
};

}   // namespace vrdmasim
