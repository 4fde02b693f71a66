// What the router and link settings make of every link the system builds
// (router.link-order, router.routing, board-link.handoff): read in one
// place for the nodes' NI links (node.cpp) and the links between routers
// (system.cpp).
#pragma once

#include "models/interconnect/link.hpp"

namespace vrdmasim {

// router.routing = adaptive.
bool adaptive_routing(const Config& c);
// router.link-order = time-approximate (the topology's checks refuse it, and
// call-approximate, with adaptive routing: in call order the links where
// paths meet would put every sender's packets back in send order).
bool time_ordered_links(const Config& c);
// router.link-order = exact: every hop an event of one HopQueue (Link::use_hops).
bool exact_links(const Config& c);
// The parameters of the links of a class: with adaptive routing every link
// reserves its wire in time order, so that packets of one transfer that
// took different paths can overtake each other where the paths meet (up to
// the receiving NI).
LinkParams link_params(const Config& c, const LinkSection& section);

}   // namespace vrdmasim
