// Stream matching: SMR/S2CR lookup and the registers that steer it. See
// stream_match.hpp and models/smmu/README.md ("What happens to a transaction").
#include "models/smmu/stream_match.hpp"

namespace vrdmasim {

namespace r = smmu_reg;

namespace {
constexpr std::uint32_t kSmrValid = r::SMR_VALID;
constexpr std::uint32_t kS2crTranslate = 0, kS2crBypass = 1;
constexpr std::uint32_t kS2crResetValue = 2u << 16;   // fault (see README)
}   // namespace

StreamMatcher::StreamMatcher() { s2cr_.fill(kS2crResetValue); }

void StreamMatcher::set_scr0(std::uint32_t v) {
    scr0_ = v;
    ++gen_;
}

void StreamMatcher::set_smr(unsigned i, std::uint32_t v) {
    smr_[i] = v & 0xffff7fffu;
    ++gen_;
}

void StreamMatcher::set_s2cr(unsigned i, std::uint32_t v) {
    s2cr_[i] = v;
    ++gen_;
}

Route StreamMatcher::match(std::uint32_t sid) const {
    Route rt;
    if (scr0_ & r::sCR0_CLIENTPD) return rt;   // bypass everything
    for (unsigned i = 0; i < r::kStreamMatchRegisters; ++i) {
        const std::uint32_t s = smr_[i];
        if (!(s & kSmrValid)) continue;
        const std::uint32_t id = s & 0x7fff, mask = (s >> 16) & 0x7fff;
        if (((sid ^ id) & ~mask & 0x7fff) != 0) continue;
        const std::uint32_t type = (s2cr_[i] >> 16) & 3;
        if (type == kS2crBypass) return rt;
        if (type != kS2crTranslate) {
            rt.kind = RouteKind::S2crFault;
            return rt;
        }
        rt.cb = s2cr_[i] & 0xff;
        rt.privileged = ((s2cr_[i] >> r::S2CR_PRIVCFG_SHIFT) & 3u) == 3u;
        rt.kind = rt.cb < r::kContextBanks ? RouteKind::Translate : RouteKind::InvalidContext;
        return rt;
    }
    rt.kind = (scr0_ & r::sCR0_USFCFG) ? RouteKind::Unmatched : RouteKind::UnmatchedBypass;
    return rt;
}

}   // namespace vrdmasim
