#include "src/sim/link_settings.hpp"

#include "models/interconnect/router.hpp"

namespace vrdmasim {

bool adaptive_routing(const Config& c) { return c[params_of<RouterParams>().routing] == "adaptive"; }

bool time_ordered_links(const Config& c) { return c[params_of<RouterParams>().link_order] == "time-approximate"; }

bool exact_links(const Config& c) { return c[params_of<RouterParams>().link_order] == "exact"; }

LinkParams link_params(const Config& c, const LinkSection& section) {
    LinkParams p = Link::params_from(c, section);
    p.time_order = time_ordered_links(c);
    p.exact = exact_links(c);
    // With cut links a call may wait for a credit further on: every link
    // keeps its later callers in line meanwhile (not in exact time order,
    // where no call waits for a credit).
    p.may_wait = c[params_of<LinkSections>().handoff] == "message" && !p.exact;
    return p;
}

}   // namespace vrdmasim
