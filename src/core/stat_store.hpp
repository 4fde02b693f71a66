// The values of one kind of statistic (counters, or scalars), in the order
// they were registered, packed: a value is its 8 bytes alone, its name,
// unit and help kept apart by the registry (StatRegistry). A model
// registers its statistics together, so the few a hop of the network
// updates (a link's packets, flits, bytes and transactions) share a cache
// line, where with their names beside them they took two or three; on a large
// torus each line a hop touches is a miss (docs/performance.md).
//
// Part of the simulator core; knows nothing about models.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <stdexcept>
#include <type_traits>
#include <unordered_map>
#include <vector>

namespace vrdmasim {

// Values in chunks of kPerChunk, each aligned to its size, which never
// move (references to them stay valid): so that a value's index is found
// from its address (index_of), through the chunk its address falls in.
template <class T>
class StatStore {
public:
    static constexpr std::size_t kPerChunk = 512;
    static constexpr std::size_t kChunkBytes = kPerChunk * sizeof(T);
    static_assert((kChunkBytes & (kChunkBytes - 1)) == 0, "a chunk's size is a power of two");
    static_assert(std::is_trivially_destructible_v<T>, "chunks are freed without destroying their values");

    StatStore() = default;
    StatStore(const StatStore&) = delete;
    StatStore& operator=(const StatStore&) = delete;
    StatStore(StatStore&&) noexcept = default;
    StatStore& operator=(StatStore&&) noexcept = default;

    std::size_t size() const { return size_; }
    bool empty() const { return size_ == 0; }
    T& operator[](std::size_t i) { return chunks_[i / kPerChunk].get()[i % kPerChunk]; }
    const T& operator[](std::size_t i) const { return chunks_[i / kPerChunk].get()[i % kPerChunk]; }
    // A new value, T's default, at index size() - 1.
    T& push_back() {
        if (size_ % kPerChunk == 0) {
            T* c = static_cast<T*>(::operator new(kChunkBytes, std::align_val_t(kChunkBytes)));
            for (std::size_t i = 0; i < kPerChunk; ++i) new (c + i) T();
            chunks_.emplace_back(c);
            chunk_of_.emplace(reinterpret_cast<std::uintptr_t>(c), static_cast<std::uint32_t>(chunks_.size() - 1));
        }
        return (*this)[size_++];
    }
    // The index of the value at `p`, which must be one of this store's
    // (std::logic_error otherwise).
    std::size_t index_of(const T* p) const {
        const auto a = reinterpret_cast<std::uintptr_t>(p);
        const auto it = chunk_of_.find(a & ~std::uintptr_t{kChunkBytes - 1});
        const std::size_t i = it == chunk_of_.end() ? size_ : it->second * kPerChunk + (a % kChunkBytes) / sizeof(T);
        if (i >= size_ || &(*this)[i] != p) throw std::logic_error("statistics: a value not registered here");
        return i;
    }

private:
    struct Free {
        void operator()(T* c) const { ::operator delete(c, std::align_val_t(kChunkBytes)); }
    };
    std::vector<std::unique_ptr<T, Free>> chunks_;
    std::unordered_map<std::uintptr_t, std::uint32_t> chunk_of_;   // a chunk's address -> its number
    std::size_t size_ = 0;
};

}   // namespace vrdmasim
