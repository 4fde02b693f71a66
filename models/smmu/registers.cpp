// The register file's MMIO decoding. See registers.hpp and
// models/smmu/README.md ("Registers").
#include "models/smmu/registers.hpp"

#include <cstring>

namespace vrdmasim {

using sc_core::sc_time;
using sc_core::SC_ZERO_TIME;
namespace r = smmu_reg;

namespace {

// Offsets without a name in the header, stored so that drivers can program
// them (they have no effect on translation).
constexpr std::uint64_t kSAcr = 0x010;
constexpr std::uint64_t kSGfsynr1 = 0x054;
constexpr std::uint64_t kSGfsynr2 = 0x058;
constexpr std::uint64_t kCbActlr = 0x04;
constexpr std::uint64_t kCbTcr2 = 0x10;
constexpr std::uint64_t kCbTtbr1 = 0x28;
constexpr std::uint64_t kCbContextIdr = 0x34;
constexpr std::uint64_t kCbMair1 = 0x3c;
constexpr std::uint64_t kCbPar = 0x50;
constexpr std::uint64_t kCbFsynr1 = 0x6c;

// ID registers (field layout as in Linux arm-smmu.h).
constexpr std::uint32_t kIdr0 = (1u << 30)   // S1TS: stage 1 translation
                                | (1u << 27)   // SMS: stream matching
                                | (1u << 26)   // ATOSNS: no address translation operations
                                | (2u << 24)   // PTFS: AArch64 tables only
                                | (16u << 16)   // NUMIRPT: context interrupts
                                | (15u << 9)   // NUMSIDB: 15-bit stream IDs
                                | r::kStreamMatchRegisters;   // NUMSMRG
constexpr std::uint32_t kIdr1 = (0u << 31)   // PAGESIZE: 4 KiB register pages
                                | (3u << 28)   // NUMPAGENDXB: 2^(3+1) = 16 global pages -> CB at 64 KiB
                                | (0u << 16)   // NUMS2CB
                                | r::kContextBanks;   // NUMCB
constexpr std::uint32_t kIdr2 = (1u << 12)   // PTFS_4K
                                | (5u << 8)   // UBS: 49-bit upstream bus
                                | (5u << 4)   // OAS: 48 bits
                                | 5u;   // IAS: 48 bits
constexpr std::uint32_t kIdr7 = (2u << 4) | 0u;   // MAJOR 2, MINOR 0 (*estimate*: MMU-500 r2)

bool is_cb(std::uint64_t off) { return off >= r::kCbBase && off < r::kCbBase + r::kContextBanks * r::kPage; }
unsigned cb_index(std::uint64_t off) { return static_cast<unsigned>((off - r::kCbBase) / r::kPage); }

bool is64(std::uint64_t off) {
    if (off == r::sGFAR) return true;
    if (off < r::kCbBase) return false;
    const std::uint64_t o = off % r::kPage;
    return o == r::TTBR0 || o == kCbTtbr1 || o == kCbPar || o == r::FAR || o == r::TLBIVA || o == r::TLBIVAA;
}

// Index of `off` in the array of 32-bit registers starting at `first` with
// `count` entries; -1 outside.
int array_index(std::uint64_t off, std::uint64_t first, unsigned count) {
    return off >= first && off < first + 4ull * count ? static_cast<int>((off - first) / 4) : -1;
}

}   // namespace

RegisterFile::RegisterFile(const SmmuConfig& p, StatRegistry& s, const std::string& smmu_name, ContextBanks& cbs,
                           StreamMatcher& streams, FaultUnit& faults, Invalidator& tlbi)
    : latency_(p.register_latency),
      tlbi_time_(p.tlbi_time),
      cbs_(cbs),
      streams_(streams),
      faults_(faults),
      tlbi_(tlbi),
      accesses_(s.counter(smmu_name + ".register_accesses", "", "timed register reads and writes")),
      unknown_(s.counter(smmu_name + ".unknown_register_accesses", "",
                         "register accesses to unimplemented offsets (RAZ/WI)")) {}

void RegisterFile::transport(tlm::tlm_generic_payload& gp, sc_time& delay) {
    accesses_.inc();
    delay += latency_;
    sc_time extra = SC_ZERO_TIME;
    access(gp, sc_core::sc_time_stamp() + delay, extra, true);
    delay += extra;
}

unsigned RegisterFile::debug(tlm::tlm_generic_payload& gp) {
    sc_time extra = SC_ZERO_TIME;
    return access(gp, sc_core::sc_time_stamp(), extra, false) ? gp.get_data_length() : 0;
}

// One register access; false: malformed (size, alignment, range).
bool RegisterFile::access(tlm::tlm_generic_payload& gp, sc_time at, sc_time& extra, bool timed) {
    const std::uint64_t off = gp.get_address();
    const unsigned len = gp.get_data_length();
    if ((len != 4 && len != 8) || off % len != 0 || gp.get_byte_enable_ptr() || gp.get_streaming_width() < len) {
        gp.set_response_status(tlm::TLM_BURST_ERROR_RESPONSE);
        return false;
    }
    if (off >= r::kSize) {
        gp.set_response_status(tlm::TLM_ADDRESS_ERROR_RESPONSE);
        return false;
    }
    unsigned char* data = gp.get_data_ptr();
    bool known = true;
    faults_.settle(at);   // the syndrome registers as they are at `at`
    if (gp.is_read()) {
        const std::uint64_t v = read(off, len, known);
        std::memcpy(data, &v, len);
    } else if (gp.is_write()) {
        std::uint64_t v = 0;
        std::memcpy(&v, data, len);
        write(off, len, v, at, extra, known);
    }
    if (!known && timed) unknown_.inc();
    gp.set_response_status(tlm::TLM_OK_RESPONSE);
    return true;
}

// ---------------------------------------------------------------- widths

std::uint64_t RegisterFile::read(std::uint64_t off, unsigned len, bool& known) const {
    const std::uint64_t base = off & ~7ull;
    if (is64(base)) {
        const std::uint64_t v = read64(base);
        if (len == 4) return (off & 4) ? v >> 32 : v & 0xffffffffu;
        return v;
    }
    if (len == 8) return read32(off, known) | (static_cast<std::uint64_t>(read32(off + 4, known)) << 32);
    return read32(off, known);
}

void RegisterFile::write(std::uint64_t off, unsigned len, std::uint64_t v, sc_time at, sc_time& extra, bool& known) {
    const std::uint64_t base = off & ~7ull;
    if (is64(base)) {
        const std::uint64_t o = base % r::kPage;
        const bool action = is_cb(base) && (o == r::TLBIVA || o == r::TLBIVAA);
        if (len == 8) {
            write64(base, v, extra);
        } else if (action) {
            if (!(off & 4)) write64(base, v, extra);   // low half acts; high half alone is ignored
        } else {
            const std::uint64_t cur = read64(base);
            write64(base, (off & 4) ? (cur & 0xffffffffu) | (v << 32) : (cur & ~0xffffffffull) | v, extra);
        }
    } else if (len == 8) {
        write32(off, static_cast<std::uint32_t>(v), at, extra, known);
        write32(off + 4, static_cast<std::uint32_t>(v >> 32), at, extra, known);
    } else {
        write32(off, static_cast<std::uint32_t>(v), at, extra, known);
    }
}

// 64-bit registers (offset 8-aligned, is64).
std::uint64_t RegisterFile::read64(std::uint64_t off) const {
    if (off == r::sGFAR) return faults_.global().sgfar;
    const ContextBank& c = cbs_.peek(cb_index(off));
    switch (off % r::kPage) {
    case r::TTBR0: return c.ttbr0;
    case kCbTtbr1: return c.ttbr1;
    case kCbPar: return c.par;
    case r::FAR: return c.far;
    default: return 0;   // TLBIVA, TLBIVAA: write-only
    }
}

void RegisterFile::write64(std::uint64_t off, std::uint64_t v, sc_time& extra) {
    if (off == r::sGFAR) {
        faults_.global().sgfar = v;
        return;
    }
    const unsigned cbi = cb_index(off);
    ContextBank& c = cbs_[cbi];
    switch (off % r::kPage) {
    case r::TTBR0: c.ttbr0 = v; break;
    case kCbTtbr1: c.ttbr1 = v; break;
    case kCbPar: c.par = v; break;
    case r::FAR: c.far = v; break;
    case r::TLBIVA:
        tlbi_.invalidate(cbi, Tlbi::Va, v);
        extra += tlbi_time_;
        break;
    case r::TLBIVAA:
        tlbi_.invalidate(cbi, Tlbi::Vaa, v);
        extra += tlbi_time_;
        break;
    default: break;
    }
}

// 32-bit registers. `known` is cleared for unimplemented offsets.
std::uint32_t RegisterFile::read32(std::uint64_t off, bool& known) const {
    if (off < r::kGr1) return read_gr0(off, known);
    if (off < r::kGr1 + r::kPage) return read_gr1(off, known);
    if (is_cb(off)) return read_cb(off, known);
    known = false;
    return 0;
}

void RegisterFile::write32(std::uint64_t off, std::uint32_t v, sc_time at, sc_time& extra, bool& known) {
    bool ok = false;
    if (off < r::kGr1) ok = write_gr0(off, v, at, extra);
    else if (off < r::kGr1 + r::kPage) ok = write_gr1(off, v);
    else if (is_cb(off)) ok = write_cb(off, v, at, extra);
    if (!ok) known = false;
}

// ---------------------------------------------------------------- GR0

std::uint32_t RegisterFile::read_gr0(std::uint64_t off, bool& known) const {
    const GlobalFaultRegisters& g = faults_.global();
    switch (off) {
    case r::sCR0: return streams_.scr0();
    case kSAcr: return sacr_;
    case r::sIDR0: return kIdr0;
    case r::sIDR1: return kIdr1;
    case r::sIDR2: return kIdr2;
    case 0x02c:
    case 0x030:
    case 0x034:
    case 0x038: return 0;   // sIDR3..6
    case r::sIDR7: return kIdr7;
    case r::sGFSR: return g.sgfsr;
    case r::sGFSYNR0: return g.sgfsynr0;
    case kSGfsynr1: return g.sgfsynr1;
    case kSGfsynr2: return g.sgfsynr2;
    case r::TLBIALLNSNH:
    case r::sTLBGSYNC:
    case r::sTLBGSTATUS: return 0;
    default: break;
    }
    if (const int i = array_index(off, r::SMR(0), r::kStreamMatchRegisters); i >= 0) return streams_.smr(i);
    if (const int i = array_index(off, r::S2CR(0), r::kStreamMatchRegisters); i >= 0) return streams_.s2cr(i);
    known = false;
    return 0;
}

bool RegisterFile::write_gr0(std::uint64_t off, std::uint32_t v, sc_time at, sc_time& extra) {
    GlobalFaultRegisters& g = faults_.global();
    switch (off) {
    case r::sCR0:
        streams_.set_scr0(v);
        faults_.update_irq(at);
        return true;
    case kSAcr: sacr_ = v; return true;
    case r::sIDR0:
    case r::sIDR1:
    case r::sIDR2:
    case 0x02c:
    case 0x030:
    case 0x034:
    case 0x038:
    case r::sIDR7: return true;   // read-only
    case r::sGFSR:
        g.sgfsr &= ~v;
        faults_.update_irq(at);
        return true;
    case r::sGFSYNR0: g.sgfsynr0 = v; return true;
    case kSGfsynr1: g.sgfsynr1 = v; return true;
    case kSGfsynr2: g.sgfsynr2 = v; return true;
    case r::TLBIALLNSNH:
        tlbi_.invalidate_all_banks();
        extra += tlbi_time_;
        return true;
    case r::sTLBGSYNC:
    case r::sTLBGSTATUS: return true;   // invalidations are complete when written
    default: break;
    }
    if (const int i = array_index(off, r::SMR(0), r::kStreamMatchRegisters); i >= 0) {
        streams_.set_smr(i, v);
        return true;
    }
    if (const int i = array_index(off, r::S2CR(0), r::kStreamMatchRegisters); i >= 0) {
        streams_.set_s2cr(i, v);
        return true;
    }
    return false;
}

// ---------------------------------------------------------------- GR1

std::uint32_t RegisterFile::read_gr1(std::uint64_t off, bool& known) const {
    if (const int i = array_index(off, r::CBAR(0), r::kContextBanks); i >= 0) return cbs_.peek(i).cbar;
    if (const int i = array_index(off, r::CBFRSYNRA(0), r::kContextBanks); i >= 0) return cbs_.peek(i).cbfrsynra;
    if (const int i = array_index(off, r::CBA2R(0), r::kContextBanks); i >= 0) return cbs_.peek(i).cba2r;
    known = false;
    return 0;
}

bool RegisterFile::write_gr1(std::uint64_t off, std::uint32_t v) {
    if (const int i = array_index(off, r::CBAR(0), r::kContextBanks); i >= 0) {
        cbs_[i].cbar = v;
        return true;
    }
    if (const int i = array_index(off, r::CBFRSYNRA(0), r::kContextBanks); i >= 0) {
        cbs_[i].cbfrsynra = v;
        return true;
    }
    if (const int i = array_index(off, r::CBA2R(0), r::kContextBanks); i >= 0) {
        cbs_[i].cba2r = v;
        return true;
    }
    return false;
}

// ---------------------------------------------------------------- context bank pages

std::uint32_t RegisterFile::read_cb(std::uint64_t off, bool& known) const {
    const ContextBank& c = cbs_.peek(cb_index(off));
    switch (off % r::kPage) {
    case r::SCTLR: return c.sctlr;
    case kCbActlr: return c.actlr;
    case r::RESUME: return 0;
    case kCbTcr2: return c.tcr2;
    case r::TCR: return c.tcr;
    case kCbContextIdr: return c.contextidr;
    case r::MAIR0: return c.mair0;
    case kCbMair1: return c.mair1;
    case r::FSR: return c.fsr;
    case r::FSYNR0: return c.fsynr0;
    case kCbFsynr1: return c.fsynr1;
    case r::TLBIASID:
    case r::TLBIALL:
    case r::TLBSYNC:
    case r::TLBSTATUS: return 0;
    default: break;
    }
    known = false;
    return 0;
}

bool RegisterFile::write_cb(std::uint64_t off, std::uint32_t v, sc_time at, sc_time& extra) {
    const unsigned cbi = cb_index(off);
    ContextBank& c = cbs_[cbi];
    switch (off % r::kPage) {
    case r::SCTLR:
        c.sctlr = v;
        if (v & r::SCTLR_CFCFG) cbs_.note_stall_mode();
        faults_.update_irq(at);
        return true;
    case kCbActlr: c.actlr = v; return true;
    case r::RESUME: faults_.resume(c, v, at); return true;
    case kCbTcr2: c.tcr2 = v; return true;
    case r::TCR: c.tcr = v; return true;
    case kCbContextIdr: c.contextidr = v; return true;
    case r::MAIR0: c.mair0 = v; return true;
    case kCbMair1: c.mair1 = v; return true;
    case r::FSR:
        c.fsr &= ~(v & ~r::FSR_SS);   // write 1 to clear; SS is cleared by RESUME
        faults_.update_irq(at);
        return true;
    case r::FSYNR0: c.fsynr0 = v; return true;
    case kCbFsynr1: c.fsynr1 = v; return true;
    case r::TLBIASID:
        tlbi_.invalidate(cbi, Tlbi::Asid, v);
        extra += tlbi_time_;
        return true;
    case r::TLBIALL:
        tlbi_.invalidate(cbi, Tlbi::All, 0);
        extra += tlbi_time_;
        return true;
    case r::TLBSYNC:
    case r::TLBSTATUS: return true;
    default: break;
    }
    return false;
}

}   // namespace vrdmasim
