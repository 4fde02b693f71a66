// Comm: what the ranks of a partitioned run say to each other, whatever
// carries it (docs/scaling.md "Keeping time"). The window loop
// (windows.hpp) needs only these collective calls; src/mpi/ carries them
// over MPI, and SelfComm is the one-rank case (every message to itself),
// which runs the same loop in one process.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace vrdmasim {

using Bytes = std::vector<unsigned char>;

class Comm {
public:
    virtual ~Comm() = default;
    virtual unsigned size() const = 0;
    virtual unsigned rank() const = 0;
    // Collective: out[r] goes to rank r (out.size() == size()); returns
    // what every rank sent this one, by rank.
    virtual std::vector<Bytes> exchange(const std::vector<Bytes>& out) = 0;
    // Collective: every rank's bytes, by rank, on every rank.
    virtual std::vector<Bytes> allgather(const Bytes& mine) = 0;
    // Collective: the smallest of every rank's `v`.
    virtual std::uint64_t min(std::uint64_t v) = 0;
};

// One rank: what it sends, it receives.
class SelfComm : public Comm {
public:
    unsigned size() const override { return 1; }
    unsigned rank() const override { return 0; }
    std::vector<Bytes> exchange(const std::vector<Bytes>& out) override { return out; }
    std::vector<Bytes> allgather(const Bytes& mine) override { return {mine}; }
    std::uint64_t min(std::uint64_t v) override { return v; }
};

// Plain data in and out of Bytes (the ranks run one executable: the same
// layout everywhere).
class ByteWriter {
public:
    explicit ByteWriter(Bytes& out) : out_(out) {}
    template <class T>
    void put(const T& v) {
        const auto* p = reinterpret_cast<const unsigned char*>(&v);
        out_.insert(out_.end(), p, p + sizeof(T));
    }
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
    template <class Out>
    void get_bytes(Out& out) {
        const auto n = static_cast<std::size_t>(get<std::uint64_t>());
        need(n);
        out.assign(in_.begin() + static_cast<std::ptrdiff_t>(at_), in_.begin() + static_cast<std::ptrdiff_t>(at_ + n));
        at_ += n;
    }

private:
    void need(std::size_t n) const {
        if (at_ + n > in_.size()) throw std::logic_error("a message between ranks is cut short");
    }
    const Bytes& in_;
    std::size_t at_ = 0;
};

}   // namespace vrdmasim
