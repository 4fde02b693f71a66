// Time-sorted records in bounded memory: sorted runs spilled and merged.
#include "src/core/time_sorted_spool.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <queue>
#include <stdexcept>

namespace vrdmasim {

namespace {

template <typename R>
bool earlier(const R& a, const R& b) {
    if (a.ts != b.ts) return a.ts < b.ts;
    if (a.tie.a != b.tie.a) return a.tie.a < b.tie.a;
    if (a.tie.b != b.tie.b) return a.tie.b < b.tie.b;
    if (a.tie.c != b.tie.c) return a.tie.c < b.tie.c;
    return a.seq < b.seq;
}

}   // namespace

void TimeSortedSpool::add(std::uint64_t ts, const Tie& tie, std::string text) {
    pending_bytes_ += text.size() + sizeof(Record);
    pending_.push_back(Record{ts, tie, seq_++, std::move(text)});
    if (pending_bytes_ >= spill_bytes_) spill();
}

void TimeSortedSpool::spill() {
    std::sort(pending_.begin(), pending_.end(), earlier<Record>);
    const std::string path = prefix_ + ".run" + std::to_string(runs_.size());
    std::ofstream run(path, std::ios::binary | std::ios::trunc);
    for (const Record& r : pending_) {
        const std::uint64_t len = r.text.size();
        run.write(reinterpret_cast<const char*>(&r.ts), sizeof r.ts);
        run.write(reinterpret_cast<const char*>(&r.tie), sizeof r.tie);
        run.write(reinterpret_cast<const char*>(&r.seq), sizeof r.seq);
        run.write(reinterpret_cast<const char*>(&len), sizeof len);
        run.write(r.text.data(), static_cast<std::streamsize>(len));
    }
    if (!run) throw std::runtime_error("cannot write run file '" + path + "': " + std::strerror(errno));
    runs_.push_back(path);
    pending_.clear();
    pending_bytes_ = 0;
}

void TimeSortedSpool::drain(const std::function<void(const std::string&)>& emit) {
    if (runs_.empty()) {
        std::sort(pending_.begin(), pending_.end(), earlier<Record>);
        for (const Record& r : pending_) emit(r.text);
        pending_.clear();
        pending_bytes_ = 0;
        return;
    }
    if (!pending_.empty()) spill();
    // k-way merge of the sorted runs.
    std::vector<std::ifstream> in;
    for (const auto& r : runs_) in.emplace_back(r, std::ios::binary);
    auto next = [&](std::size_t i, Record& r) {
        std::uint64_t len = 0;
        if (!in[i].read(reinterpret_cast<char*>(&r.ts), sizeof r.ts)) return false;
        in[i].read(reinterpret_cast<char*>(&r.tie), sizeof r.tie);
        in[i].read(reinterpret_cast<char*>(&r.seq), sizeof r.seq);
        in[i].read(reinterpret_cast<char*>(&len), sizeof len);
        r.text.resize(len);
        in[i].read(r.text.data(), static_cast<std::streamsize>(len));
        if (!in[i]) throw std::runtime_error("run file '" + runs_[i] + "' is truncated");
        return true;
    };
    using Head = std::pair<Record, std::size_t>;
    auto later = [](const Head& a, const Head& b) { return earlier(b.first, a.first); };
    std::priority_queue<Head, std::vector<Head>, decltype(later)> heap(later);
    for (std::size_t i = 0; i < in.size(); ++i) {
        Record r;
        if (next(i, r)) heap.push({std::move(r), i});
    }
    while (!heap.empty()) {
        Head h = heap.top();
        heap.pop();
        emit(h.first.text);
        Record r;
        if (next(h.second, r)) heap.push({std::move(r), h.second});
    }
    in.clear();
    discard();
}

void TimeSortedSpool::take_all(
    const std::function<void(std::uint64_t ts, const Tie& tie, const std::string& text)>& emit) {
    for (const Record& r : pending_) emit(r.ts, r.tie, r.text);
    pending_.clear();
    pending_bytes_ = 0;
    for (const auto& path : runs_) {
        std::ifstream in(path, std::ios::binary);
        Record r;
        std::uint64_t len = 0;
        while (in.read(reinterpret_cast<char*>(&r.ts), sizeof r.ts)) {
            in.read(reinterpret_cast<char*>(&r.tie), sizeof r.tie);
            in.read(reinterpret_cast<char*>(&r.seq), sizeof r.seq);
            in.read(reinterpret_cast<char*>(&len), sizeof len);
            r.text.resize(len);
            in.read(r.text.data(), static_cast<std::streamsize>(len));
            if (!in) throw std::runtime_error("run file '" + path + "' is truncated");
            emit(r.ts, r.tie, r.text);
        }
    }
    discard();
}

void TimeSortedSpool::discard() {
    for (const auto& r : runs_) std::remove(r.c_str());
    runs_.clear();
    pending_.clear();
    pending_bytes_ = 0;
}

}   // namespace vrdmasim
