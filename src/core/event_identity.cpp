#include "src/core/event_identity.hpp"

namespace vrdmasim::event_identity {

namespace {
bool g_enabled = false;
std::uint64_t g_next = 0;
}   // namespace

void enable(bool on) { g_enabled = on; }
bool enabled() { return g_enabled; }
void set_next(std::uint64_t identity) { g_next = identity; }
std::uint64_t take_next() {
    const std::uint64_t id = g_next;
    g_next = 0;
    return id;
}

}   // namespace vrdmasim::event_identity
