#include "models/memory/dram.hpp"
#include "src/core/force_inline.hpp"
#include "src/core/sim_now.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace vrdmasim {

using sc_core::sc_time;

DramParams::DramParams()
    : set("dram", "DDR4 memory of one MPSoC (one controller channel shared by all masters)"),
      size(set.size("size", "16GiB", "DRAM per MPSoC: 16 GiB DDR4 (Chaix et al., H2RC 2019, QFDB paper)")
               .range("8MiB", "1TiB")),
      latency(set.time("latency", "100ns",
                       "access latency from a PL master to PS DDR4, added after the data phase "
                       "(*estimate*: no published ZynqMP figure)")
                  .range("0ps", "10us")),
      bandwidth(set.rate("bandwidth", "19.2GB/s",
                         "peak data rate of the channel: DDR4-2400 x 64 bit (ZU9EG PS DDR controller, Xilinx DS925)")
                    .range("1MB/s", "1TB/s")),
      burst(set.size("burst", "64B",
                     "smallest unit of data-phase occupancy: accesses are rounded up to whole bursts "
                     "(DDR4 BL8 x 64 bit)")
                .range("1B", "4KiB")) {}

void Dram::declare_params(ParamRegistry& reg) { reg.add(params_of<DramParams>().set); }

Dram::Dram(sc_core::sc_module_name name, const SimContext& ctx, const std::string& group)
    : sc_module(name),
      socket("socket"),
      size_(ctx.config[params_of<DramParams>().size]),
      latency_(ctx.config[params_of<DramParams>().latency]),
      ps_per_byte_(8e12 / ctx.config[params_of<DramParams>().bandwidth]),
      burst_(ctx.config[params_of<DramParams>().burst]),
      ctx_(ctx),
      tracer_(ctx.tracer),
      track_(ctx.tracer.track(group, "dram")),
      reads_(ctx.stats.counter(std::string(this->name()) + ".reads", "", "read transactions")),
      writes_(ctx.stats.counter(std::string(this->name()) + ".writes", "", "write transactions")),
      read_bytes_(ctx.stats.counter(std::string(this->name()) + ".read_bytes", "B", "bytes read")),
      write_bytes_(ctx.stats.counter(std::string(this->name()) + ".write_bytes", "B", "bytes written")),
      transactions_(ctx.stats.counter(std::string(this->name()) + ".transactions", "",
                                      "timed transactions served (reads + writes + errors)")),
      errors_(
          ctx.stats.counter(std::string(this->name()) + ".errors", "", "transactions answered with an error response")),
      busy_us_(ctx.stats.scalar(std::string(this->name()) + ".busy_time", "us", "time the data channel was occupied",
                                Scalar::Kind::Sum)),
      queue_ns_(ctx.stats.histogram(std::string(this->name()) + ".queue_delay", "ns",
                                    "time an access waited for the channel")) {
    socket.register_b_transport(this, &Dram::b_transport);
    socket.register_transport_dbg(this, &Dram::transport_dbg);
    burst_time_ = sc_time::from_value(static_cast<sc_dt::uint64>(static_cast<double>(burst_) * ps_per_byte_ + 0.5));
}

bool Dram::check(tlm::tlm_generic_payload& gp) {
    const std::uint64_t addr = gp.get_address();
    const std::uint64_t len = gp.get_data_length();
    if (gp.get_byte_enable_ptr()) {
        gp.set_response_status(tlm::TLM_BYTE_ENABLE_ERROR_RESPONSE);
        return false;
    }
    if (addr >= size_ || len > size_ - addr) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return false;
    }
    if (gp.get_command() == tlm::TLM_IGNORE_COMMAND) {
        gp.set_response_status(tlm::TLM_OK_RESPONSE);
        return false;
    }
    return true;
}

Dram::Page& Dram::page(std::uint64_t index) {
    if (Page* p = find_page(index)) return *p;
    Page& p = pages_[index];   // no bytes and no stretch: zeros
    cached_[index % kCachedPages] = CachedPage{index, &p};
    return p;
}

namespace {

// The store's copies call the C library's memcpy. Inlined into copy(),
// where the compiler knows a copy is at most a page, they became `rep
// movsq`, one counted instruction per 8 bytes and a slow start for the
// short copies of packets; the library copies 32 bytes per instruction.
// noipa: otherwise GCC propagates the page bound into this function and
// inlines the same loop again.
#if defined(__GNUC__) && !defined(__clang__)
__attribute__((noipa))
#else
__attribute__((noinline))
#endif
void copy_bytes(unsigned char* to, const unsigned char* from, std::uint64_t n) {
    std::memcpy(to, from, n);
}

// A word (a descriptor the OS or the SMMU's table writer reads or writes)
// is one move inline; the rest goes to the library.
inline void copy_n(unsigned char* to, const unsigned char* from, std::uint64_t n) {
    if (n == 8) std::memcpy(to, from, 8);
    else copy_bytes(to, from, n);
}

// Whether the n bytes at p (n at most a page) are all zero: compared with a
// page of zeros by the C library's memcmp, which stops at the first
// difference and otherwise reads 32 bytes per instruction (the OS zeroes
// every frame it allocates, a page of zeros into a page never touched).
bool all_zero(const unsigned char* p, std::uint64_t n) {
    static const std::vector<unsigned char> zeros(Dram::kPageSize, 0);
    return std::memcmp(p, zeros.data(), n) == 0;
}

}   // namespace

void Dram::copy(std::uint64_t addr, unsigned char* data, std::uint64_t len, bool write) {
    while (len > 0) {
        const std::uint64_t off = addr % kPageSize;
        const std::uint64_t n = std::min(len, kPageSize - off);
        if (write) {
            if (Page* p = find_page(addr / kPageSize)) write_page(*p, off, data, n);
            else if (!all_zero(data, n))   // zeros into an untouched page: it reads as zeros already
                write_page(page(addr / kPageSize), off, data, n);
        } else if (const Page* p = find_page(addr / kPageSize)) {
            read_page(*p, off, data, n);
        } else {
            std::memset(data, 0, n);
        }
        addr += n;
        data += n;
        len -= n;
    }
}

std::size_t Dram::byte_pages() const {
    std::size_t n = 0;
    for (const auto& kv : pages_) n += kv.second.bytes != nullptr;
    return n;
}

void Dram::write_page(Page& p, std::uint64_t off, const unsigned char* data, std::uint64_t n, bool maybe_pattern) {
    // A page of bytes stays so, unless all of it is written with the pattern
    // (a source buffer filled again for its next transfer).
    PatternPlace at;
    if (maybe_pattern && (!p.bytes || n == kPageSize) && pattern_find(data, n, at)) {
        write_pattern(p, off, n, at);
        return;
    }
    if (!p.bytes) to_bytes(p);
    copy_n(p.bytes.get() + off, data, n);
}

void Dram::write_pattern(Page& p, std::uint64_t off, std::uint64_t n, PatternPlace at) {
    if (n == kPageSize) {
        p.bytes.reset();
        p.stretches[0] = Stretch(0, kPageSize, at);
        p.count = 1;
        return;
    }
    if (!p.bytes && put_stretch(p, off, n, at)) return;
    if (!p.bytes) to_bytes(p);
    pattern_bytes(p.bytes.get() + off, n, at);
}

void Dram::read_page(const Page& p, std::uint64_t off, unsigned char* data, std::uint64_t n) {
    if (p.bytes) {
        copy_n(data, p.bytes.get() + off, n);
        return;
    }
    const Stretch& first = p.stretches[0];
    if (p.count == 1 && first.lo <= off && off + n <= first.hi) {   // the usual case: within one stretch
        pattern_bytes(data, n, pattern_advance(first.at(), off - first.lo));
        return;
    }
    std::memset(data, 0, n);
    for (std::size_t i = 0; i < p.count; ++i) {
        const Stretch& s = p.stretches[i];
        const std::uint64_t lo = std::max<std::uint64_t>(off, s.lo), hi = std::min<std::uint64_t>(off + n, s.hi);
        if (lo < hi) pattern_bytes(data + (lo - off), hi - lo, pattern_advance(s.at(), lo - s.lo));
    }
}

bool Dram::put_stretch(Page& p, std::uint64_t off, std::uint64_t n, PatternPlace at) {
    // The page's stretches with [off, off + n) cut out of them and the new
    // one put in its place, in order; a stretch that continues the one
    // before it (the next bytes of the same pattern) joins it, as a
    // transfer's packets arrive one after another.
    // The usual cases first: the first bytes written into a page, and the
    // next packet of the transfer that wrote the page's last stretch.
    if (p.count == 0) {
        p.stretches[0] = Stretch(off, off + n, at);
        p.count = 1;
        return true;
    }
    const std::uint64_t end = off + n;
    for (std::size_t i = 0; i < p.count; ++i) {
        Stretch& s = p.stretches[i];
        if (s.hi != off || pattern_advance(s.at(), s.hi - s.lo) != at) continue;
        // It continues stretch i: over zeros, or over the start of the
        // stretch after it (an older transfer's bytes, overwritten in order).
        Stretch* t = i + 1 < p.count ? &p.stretches[i + 1] : nullptr;
        if (t && t->lo < end && t->hi > end) {
            *t = Stretch(end, t->hi, pattern_advance(t->at(), end - t->lo));
        } else if (t && t->lo < end && t->hi == end) {
            for (std::size_t j = i + 1; j + 1 < p.count; ++j) p.stretches[j] = p.stretches[j + 1];
            --p.count;
        } else if (t && t->lo < end) {
            break;   // past the stretch after it: the general case
        }
        s.hi = static_cast<std::uint16_t>(end);
        return true;
    }
    std::array<Stretch, kStretches> out{};
    std::size_t k = 0;
    auto push = [&](std::uint64_t lo, std::uint64_t hi, PatternPlace from) {
        if (k > 0 && out[k - 1].hi == lo && pattern_advance(out[k - 1].at(), out[k - 1].hi - out[k - 1].lo) == from) {
            out[k - 1].hi = static_cast<std::uint16_t>(hi);
            return true;
        }
        if (k == kStretches) return false;
        out[k++] = Stretch(lo, hi, from);
        return true;
    };
    const std::uint64_t lo = off, hi = off + n;
    bool placed = false;
    for (std::size_t i = 0; i < p.count; ++i) {
        const Stretch s = p.stretches[i];
        if (s.hi <= lo) {
            if (!push(s.lo, s.hi, s.at())) return false;
            continue;
        }
        if (s.lo < lo && !push(s.lo, lo, s.at())) return false;
        if (!placed) {
            if (!push(lo, hi, at)) return false;
            placed = true;
        }
        if (s.hi > hi && !push(std::max<std::uint64_t>(s.lo, hi), s.hi,
                               pattern_advance(s.at(), std::max<std::uint64_t>(s.lo, hi) - s.lo)))
            return false;
    }
    if (!placed && !push(lo, hi, at)) return false;
    p.stretches = out;
    p.count = static_cast<std::uint8_t>(k);
    return true;
}

void Dram::to_bytes(Page& p) {
    p.bytes = std::make_unique<unsigned char[]>(kPageSize);   // zeroed
    for (std::size_t i = 0; i < p.count; ++i) {
        const Stretch& s = p.stretches[i];
        pattern_bytes(p.bytes.get() + s.lo, s.hi - s.lo, s.at());
    }
    p.count = 0;
}

bool Dram::any_pending(std::uint64_t addr, std::uint64_t len) {
    if (len == 0 || pending_.empty() || addr >= pending_hi_ || addr + len <= pending_lo_) return false;
    for (std::uint64_t p = addr / kPageSize; p <= (addr + len - 1) / kPageSize; ++p) {
        const Page* page = find_page(p);
        if (page && page->pending) return true;
    }
    return false;
}

void Dram::commit_due(sc_time upto) {
    while (!pending_.empty() && pending_.front().at <= upto) {
        PendingWrite& w = pending_.front();
        if (w.page) {   // within one page, added by defer_write
            if (w.patterned) write_pattern(*w.page, w.addr % kPageSize, w.len, w.place);
            else write_page(*w.page, w.addr % kPageSize, w.data.data(), w.len, false);
            --w.page->pending;
        } else {
            for (std::uint64_t done = 0; done < w.len;) {
                const std::uint64_t a = w.addr + done, off = a % kPageSize;
                const std::uint64_t n = std::min(w.len - done, kPageSize - off);
                Page& p = page(a / kPageSize);
                if (w.patterned) write_pattern(p, off, n, pattern_advance(w.place, done));
                else write_page(p, off, w.data.data() + done, n);   // a page of it may be the pattern
                --p.pending;
                done += n;
            }
        }
        if (!w.patterned) spare_.push_back(std::move(w.data));
        pending_.pop_front();
    }
    // Once nothing is pending, a few buffers are kept for the next writes
    // and the rest go back to the allocator. Keeping every one kept each
    // DRAM's largest number of writes ever in flight, though the nodes
    // reach theirs at different times: on the 4 x 4 x 4-QFDB halo 5.6 MB
    // at the end, where at most 1.5 MB are pending at a time (massif;
    // docs/clusters.md, "Host memory at 16,384 MPSoCs"). Trimmed only
    // then, a write in a burst still reuses a buffer instead of allocating.
    if (pending_.empty() && spare_.size() > kSpareBuffers) spare_.resize(kSpareBuffers);
}

void Dram::defer_write(sc_time at, std::uint64_t addr, const unsigned char* data, std::uint64_t len) {
    PendingWrite w;
    w.at = at;
    w.addr = addr;
    w.len = len;
    // A write of the pattern (a transfer's packet) waits as its place in
    // it, not as its bytes.
    w.patterned = pattern_find(data, len, w.place);
    if (!w.patterned) {
        if (!spare_.empty()) {
            w.data = std::move(spare_.back());
            spare_.pop_back();
        }
        w.data.assign(data, data + len);
    }
    // The pages are entered now (they count the write pending on them),
    // their contents written at `at`.
    const std::uint64_t first = addr / kPageSize, last = (addr + len - 1) / kPageSize;
    if (first == last) {
        w.page = &page(first);
        ++w.page->pending;
    } else {
        for (std::uint64_t p = first; p <= last; ++p) ++page(p).pending;
    }
    if (pending_.empty()) {
        pending_lo_ = addr;
        pending_hi_ = addr + len;
    } else {
        pending_lo_ = std::min(pending_lo_, addr);
        pending_hi_ = std::max(pending_hi_, addr + len);
    }
    // Usually the latest; a master behind another within its quantum inserts.
    if (pending_.empty() || pending_.back().at <= at) {
        pending_.push_back(std::move(w));
    } else {
        auto it = std::upper_bound(pending_.begin(), pending_.end(), at,
                                   [](const sc_time& t, const PendingWrite& p) { return t < p.at; });
        pending_.insert(it, std::move(w));
    }
}

void Dram::overlay_pending(std::uint64_t addr, unsigned char* data, std::uint64_t len, sc_time upto, bool patch) {
    if (!any_pending(addr, len)) return;
    for (PendingWrite& w : pending_) {
        if (w.at > upto) break;
        const std::uint64_t lo = std::max(addr, w.addr);
        const std::uint64_t hi = std::min(addr + len, w.addr + w.len);
        if (lo >= hi) continue;
        if (w.patterned && patch) {   // a debug write into it: it becomes bytes
            w.data.resize(w.len);
            pattern_bytes(w.data.data(), w.len, w.place);
            w.patterned = false;
        }
        if (w.patterned) pattern_bytes(data + (lo - addr), hi - lo, pattern_advance(w.place, lo - w.addr));
        else if (patch) std::memcpy(w.data.data() + (lo - w.addr), data + (lo - addr), hi - lo);
        else std::memcpy(data + (lo - addr), w.data.data() + (lo - w.addr), hi - lo);
    }
}

void Dram::hold(std::uint64_t addr, std::uint64_t len, sc_time until) {
    if (!early_)
        early_ = &ctx_.stats.counter(std::string(name()) + ".early_accesses", "",
                                     "timed accesses to a page before a device's write into it completed "
                                     "(an SSD read: the page was visible before its data)");
    for (std::uint64_t p = addr / kPageSize; p * kPageSize < addr + len; ++p) holds_[p] = until;
}

void Dram::check_holds(std::uint64_t addr, std::uint64_t len, sc_time start, sc_time now) {
    for (std::uint64_t p = addr / kPageSize; len > 0 && p * kPageSize < addr + len; ++p) {
        auto it = holds_.find(p);
        if (it == holds_.end()) continue;
        if (start < it->second) {
            early_->inc();
            // A step of whatever story the access belongs to (a transfer's, in its Scope).
            if (tracer_.noting())
                tracer_.note(Tracer::Track{}, "early access", start, sc_core::SC_ZERO_TIME, name(),
                             "access to page " + Tracer::hex(p * kPageSize) + " before its device write completes at " +
                                 std::to_string(to_us(it->second)) + " us");
        } else if (it->second <= now) {
            holds_.erase(it);   // over for every access from now on
        }
    }
}

void Dram::b_transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    transactions_.inc();
    if (!check(gp)) {
        if (gp.get_response_status() != tlm::TLM_OK_RESPONSE) errors_.inc();
        return;
    }
    const bool write = gp.get_command() == tlm::TLM_WRITE_COMMAND;
    const std::uint64_t len = gp.get_data_length();

    // One channel: the data phase starts when the request has arrived and the
    // channel is free; the response is back `latency` after the data phase.
    const sc_time now = sim_now();
    commit(now);   // no access can arrive before now
    const sc_time arrive = now + delay;
    if (len != occupy_len_) {
        const std::uint64_t bursts = (len + burst_ - 1) / burst_;
        occupy_time_ =
            time_from_value(static_cast<sc_dt::uint64>(static_cast<double>(bursts * burst_) * ps_per_byte_ + 0.5));
        occupy_len_ = len;
    }
    const sc_time occupy = occupy_time_;
    sc_time end;
    const sc_time start = book(now, arrive, occupy, end);
    const sc_time done = end + latency_;
    delay = done - now;

    if (!holds_.empty()) check_holds(gp.get_address(), len, start, now);
    // The bytes: a write is seen from the end of its data phase on, a read
    // sees what has been written by the start of its own.
    if (write) {
        if (end > now && len > 0) defer_write(end, gp.get_address(), gp.get_data_ptr(), len);
        else copy(gp.get_address(), gp.get_data_ptr(), len, true);
    } else {
        copy(gp.get_address(), gp.get_data_ptr(), len, false);
        overlay(gp.get_address(), gp.get_data_ptr(), len, start, false);
    }

    busy_us_.add(to_us(occupy));
    queue_ns_.add(to_ns(end - arrive - occupy));   // time lost to other accesses' bursts
    if (write) {
        writes_.inc();
        write_bytes_.inc(len);
    } else {
        reads_.inc();
        read_bytes_.inc(len);
    }
    if (tracer_.enabled()) trace_span(write, gp.get_address(), len, arrive, start, end);
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
}

void Dram::trace_span(bool write, std::uint64_t addr, std::uint64_t len, sc_time arrive, sc_time start, sc_time end) {
    // The data phase, first burst to last (an access interleaved with
    // others' bursts may overlap their spans).
    tracer_.span(track_, write ? "write" : "read", start, end,
                 {{"addr", Tracer::json_hex(addr)},
                  {"bytes", Tracer::json_number(len)},
                  {"queued_ns", Tracer::json_number(to_ns(start - arrive))}});
}

// Inlined into b_transport, its one caller (core/force_inline.hpp).
VRDMASIM_FORCE_INLINE sc_time Dram::book(sc_time now, sc_time arrive, sc_time occupy, sc_time& end) {
    // booked_: disjoint phases [start, end), sorted, from first_ on; a few
    // dozen at most (what lies within a quantum). Phases over before now can
    // no longer meet a request (none arrives before now).
    while (first_ < booked_.size() && booked_[first_].second <= now) ++first_;
    if (first_ > 64 && first_ * 2 > booked_.size()) {
        booked_.erase(booked_.begin(), booked_.begin() + static_cast<std::ptrdiff_t>(first_));
        first_ = 0;
    }
    using Phase = std::pair<sc_time, sc_time>;
    // Usual case: after every booked phase.
    if (first_ == booked_.size() || arrive >= booked_.back().second) {
        end = arrive + occupy;
        if (occupy > sc_core::SC_ZERO_TIME) {
            if (first_ < booked_.size() && booked_.back().second == arrive) booked_.back().second = end;
            else booked_.emplace_back(arrive, end);
        }
        return arrive;
    }
    // Otherwise the access's bursts go into the free gaps from `arrive` on,
    // as the controller interleaves them with the bursts already scheduled
    // (a gap shorter than one burst is skipped); the data phase ends with
    // its last burst.
    std::size_t i = static_cast<std::size_t>(
        std::upper_bound(booked_.begin() + static_cast<std::ptrdiff_t>(first_), booked_.end(), arrive,
                         [](const sc_time& t, const Phase& p) { return t < p.first; }) -
        booked_.begin());
    sc_time t = arrive;
    if (i > first_ && booked_[i - 1].second > t) t = booked_[i - 1].second;   // inside a phase: after it
    sc_time left = occupy, start = max_sim_time();
    while (left > sc_core::SC_ZERO_TIME) {
        const sc_time gap_end = i < booked_.size() ? booked_[i].first : max_sim_time();
        const sc_time gap = gap_end > t ? gap_end - t : sc_core::SC_ZERO_TIME;
        if (gap >= burst_time_ || gap >= left) {
            const sc_time take = gap < left ? gap : left;
            if (start == max_sim_time()) start = t;
            // Book [t, t + take), merged with the phase before and after it.
            const sc_time e = t + take;
            const bool joins_prev = i > first_ && booked_[i - 1].second == t;
            const bool joins_next = i < booked_.size() && booked_[i].first == e;
            if (joins_prev && joins_next) {
                booked_[i - 1].second = booked_[i].second;
                booked_.erase(booked_.begin() + static_cast<std::ptrdiff_t>(i));
                t = booked_[i - 1].second;
            } else if (joins_prev) {
                booked_[i - 1].second = e;
                t = e;
            } else if (joins_next) {
                booked_[i].first = t;
                t = booked_[i].second;
                ++i;
            } else {
                booked_.insert(booked_.begin() + static_cast<std::ptrdiff_t>(i), Phase{t, e});
                ++i;
                t = e;
            }
            left -= take;
            if (left == sc_core::SC_ZERO_TIME) {
                end = e;
                return start;
            }
            continue;
        }
        // Too short: past the next phase.
        if (i < booked_.size()) {
            t = max_time(t, booked_[i].second);
            ++i;
        }
    }
    end = start;   // occupy == 0
    return arrive;
}

unsigned int Dram::transport_dbg(tlm::tlm_generic_payload& gp) {
    if (!check(gp)) return 0;
    debug_copy(gp.get_command() == tlm::TLM_WRITE_COMMAND, gp.get_address(), gp.get_data_ptr(), gp.get_data_length());
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    return gp.get_data_length();
}

bool Dram::debug_access(bool write, std::uint64_t addr, unsigned char* data, std::uint64_t len) {
    if (addr >= size_ || len > size_ - addr) return false;   // as check(): an address error
    debug_copy(write, addr, data, len);
    return true;
}

void Dram::debug_copy(bool write, std::uint64_t addr, unsigned char* data, std::uint64_t len) {
    // Debug accesses see and change the latest state: a read sees every
    // pending write, a write lands after them (it patches their bytes).
    commit(sim_now());
    copy(addr, data, len, write);
    overlay(addr, data, len, max_sim_time(), write);
}

bool Dram::debug_pattern(PatternOp op, std::uint64_t addr, std::uint64_t len, PatternPlace at, std::uint64_t& first) {
    if (addr >= size_ || len > size_ - addr) return false;   // as check(): an address error
    commit(sim_now());
    // A write pending on the range: through the bytes, which debug_copy
    // overlays on it or patches into it.
    if (any_pending(addr, len)) return DebugAccess::debug_pattern(op, addr, len, at, first);
    for (std::uint64_t done = 0; done < len;) {
        const std::uint64_t a = addr + done, off = a % kPageSize, n = std::min(len - done, kPageSize - off);
        const PatternPlace here = pattern_advance(at, done);
        if (op == PatternOp::Write) {
            write_pattern_at(a / kPageSize, off, n, here);
        } else if (const std::uint64_t f = pattern_mismatch_at(a / kPageSize, off, n, here); f < n) {
            first = done + f;
            return true;
        }
        done += n;
    }
    if (op == PatternOp::Check) first = len;
    return true;
}

void Dram::write_pattern_at(std::uint64_t index, std::uint64_t off, std::uint64_t n, PatternPlace at) {
    if (n >= kPatternFindMin) {
        // What copy() makes of these bytes: write_page finds them (and
        // they are not all zeros: two whole words, one of them not zero).
        write_pattern(page(index), off, n, at);
        return;
    }
    unsigned char bytes[kPatternFindMin];   // too few to be found: bytes, as copy() keeps them
    pattern_bytes(bytes, n, at);
    if (Page* p = find_page(index)) write_page(*p, off, bytes, n);
    else if (!all_zero(bytes, n)) write_page(page(index), off, bytes, n);
}

std::uint64_t Dram::pattern_mismatch_at(std::uint64_t index, std::uint64_t off, std::uint64_t n, PatternPlace at) {
    const Page* p = find_page(index);
    if (p && p->bytes) return pattern_bytes_mismatch(p->bytes.get() + off, n, at);
    if (p) {
        // The usual case: within one stretch, from the same place.
        for (std::size_t i = 0; i < p->count; ++i) {
            const Stretch& s = p->stretches[i];
            if (s.lo <= off && off + n <= s.hi) {
                if (pattern_advance(s.at(), off - s.lo) == at) return n;
                break;
            }
        }
    }
    unsigned char bytes[kPageSize];   // else its bytes, as a read would make them
    if (p) read_page(*p, off, bytes, n);
    else std::memset(bytes, 0, n);
    return pattern_bytes_mismatch(bytes, n, at);
}

}   // namespace vrdmasim
