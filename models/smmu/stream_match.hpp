// Stream matching of the SMMUv2 architecture (ARM IHI 0062; Linux
// arm-smmu.h): sCR0 and the 48 stream-match register (SMR) / stream-to-
// context register (S2CR) pairs that route a transaction's stream ID to a
// context bank, to bypass or to a fault; and the per-TBU cache of the last
// route, valid until software changes any of those registers.
#pragma once

#include <array>
#include <cstdint>

#include "models/smmu/register_map.hpp"

namespace vrdmasim {

enum class RouteKind : std::uint8_t { Bypass, UnmatchedBypass, Translate, Unmatched, S2crFault, InvalidContext };
struct Route {
    RouteKind kind = RouteKind::Bypass;
    unsigned cb = 0;
    // The transaction's privilege after S2CR.PRIVCFG: the PLDMA's own AXI
    // accesses are unprivileged (AxPROT[0] = 0), so only PRIVCFG =
    // privileged makes them privileged (README.md "Privileged transactions").
    bool privileged = false;
};

// A TBU's stream-match result for the last stream ID it saw (valid while
// gen equals the matcher's generation).
struct RouteCache {
    std::uint32_t sid = 0;
    std::uint64_t gen = ~0ull;
    Route route;
};

class StreamMatcher {
public:
    StreamMatcher();

    // sCR0: CLIENTPD and USFCFG steer matching; the fault unit reads GFRE
    // and GFIE from it.
    std::uint32_t scr0() const { return scr0_; }
    void set_scr0(std::uint32_t v);
    std::uint32_t smr(unsigned i) const { return smr_[i]; }
    void set_smr(unsigned i, std::uint32_t v);
    std::uint32_t s2cr(unsigned i) const { return s2cr_[i]; }
    void set_s2cr(unsigned i, std::uint32_t v);

    // Where stream `sid` goes under the current registers.
    Route match(std::uint32_t sid) const;
    // The same through a TBU's cache.
    bool cached(const RouteCache& c, std::uint32_t sid) const { return c.gen == gen_ && c.sid == sid; }
    const Route& route(RouteCache& c, std::uint32_t sid) const {
        if (!cached(c, sid)) {
            c.route = match(sid);
            c.sid = sid;
            c.gen = gen_;
        }
        return c.route;
    }

private:
    std::uint32_t scr0_ = smmu_reg::sCR0_CLIENTPD;
    std::array<std::uint32_t, smmu_reg::kStreamMatchRegisters> smr_{}, s2cr_{};
    std::uint64_t gen_ = 0;   // stream-configuration generation
};

}   // namespace vrdmasim
