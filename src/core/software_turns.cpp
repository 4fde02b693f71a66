#include "src/core/software_turns.hpp"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include <systemc>

#include "src/core/instant_end.hpp"
#include "src/core/libsystemc_symbol.hpp"

namespace vrdmasim::software_turns {
namespace {

using RealWaitEvent = void (*)(const sc_core::sc_event&, sc_core::sc_simcontext*);

template <class F>
F real(const char* symbol) {
    return libsystemc_symbol<F>(symbol, "src/core/software_turns.cpp");
}

std::uint64_t mix(std::uint64_t x) {
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

std::uint64_t fnv1a(const char* s) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; ++s) h = (h ^ static_cast<unsigned char>(*s)) * 0x100000001b3ull;
    return h;
}

struct Group;

struct Entry {
    Group* group = nullptr;
    std::uint64_t name_hash = 0;
    sc_core::sc_event go;
    sc_core::sc_time at;   // the instant of its last turn
    std::uint64_t round = 0;   // its turns at that instant before this one
    std::uint64_t key = 0;
};

struct Group {
    const std::string* name = nullptr;   // its key in Turns::groups
    std::vector<Entry*> waiting;
};

struct Turns final : InstantEnd::Client {
    sc_core::sc_simcontext* sim = nullptr;
    std::unordered_map<const sc_core::sc_process_b*, std::unique_ptr<Entry>> entries;
    std::map<std::string, Group> groups;   // by name: released in that order
    // Those with a thread waiting: the instant's end visits these, not every
    // node's (thousands at scale, a handful waiting), in the same order.
    std::vector<Group*> busy;
    const sc_core::sc_process_b* last = nullptr;   // the last thread looked up, and its entry
    Entry* last_entry = nullptr;
    std::uint64_t turns = 0, ties = 0, at_once = 0;
    unsigned waiting = 0;

    void at_instant_end() override {
        std::sort(busy.begin(), busy.end(), [](const Group* a, const Group* b) { return *a->name < *b->name; });
        std::size_t kept = 0;
        for (Group* g : busy) {
            auto first = g->waiting.begin();
            for (auto it = g->waiting.begin(); it != g->waiting.end(); ++it)
                if ((*it)->round < (*first)->round || ((*it)->round == (*first)->round && (*it)->key < (*first)->key))
                    first = it;
            if (g->waiting.size() > 1) ++ties;
            Entry* e = *first;
            g->waiting.erase(first);
            --waiting;
            e->go.notify();   // runs in this evaluation phase
            if (!g->waiting.empty()) busy[kept++] = g;
        }
        busy.resize(kept);
        if (waiting) InstantEnd::get().request(*this, InstantEnd::SoftwareTurns);
    }
};

Turns* g_turns = nullptr;   // null until a thread enters: waits cost a test

Turns& turns_of_this_simulation() {
    if (!g_turns || g_turns->sim != sc_core::sc_get_curr_simcontext()) {
        g_turns = new Turns();   // lives as long as its simulation's threads
        g_turns->sim = sc_core::sc_get_curr_simcontext();
    }
    return *g_turns;
}

void take_turn(Turns& t, Entry& e) {
    static const auto wait_event = real<RealWaitEvent>("_ZN7sc_core4waitERKNS_8sc_eventEPNS_13sc_simcontextE");
    const sc_core::sc_time now = sc_core::sc_time_stamp();
    if (e.at != now || t.turns == 0) {
        e.at = now;
        e.round = 0;
    } else {
        ++e.round;
    }
    e.key = mix(e.name_hash ^ now.value());   // order_key()
    ++t.turns;
    // Nothing else pending at the present (no process runnable, no delta
    // notification: so no thread waiting for its turn either, whose
    // request keeps InstantEnd's notification pending): the instant ends
    // with this thread, which would be let go alone. It goes on at once.
    if (!sc_core::sc_pending_activity_at_current_time()) {
        ++t.at_once;
        return;
    }
    if (e.group->waiting.empty()) t.busy.push_back(e.group);
    e.group->waiting.push_back(&e);
    ++t.waiting;
    InstantEnd::get().request(t, InstantEnd::SoftwareTurns);
    wait_event(e.go, t.sim);
}

}   // namespace

void enter(const std::string& group) {
    Turns& t = turns_of_this_simulation();
    sc_core::sc_process_b* p = sc_core::sc_get_current_process_b();
    if (!p || p->proc_kind() == sc_core::SC_METHOD_PROC_)
        throw std::logic_error("software_turns::enter: called outside a thread (" + group + ")");
    auto& slot = t.entries[p];
    if (slot) throw std::logic_error(std::string("software_turns::enter: ") + p->name() + " entered twice");
    slot = std::make_unique<Entry>();
    const auto g = t.groups.try_emplace(group).first;
    g->second.name = &g->first;
    slot->group = &g->second;
    slot->name_hash = fnv1a(p->name());
    t.last = nullptr;
    take_turn(t, *slot);
}

void leave() {
    if (!g_turns) return;
    const sc_core::sc_process_b* p = sc_core::sc_get_current_process_b();
    g_turns->entries.erase(p);
    g_turns->last = nullptr;
    g_turns->last_entry = nullptr;
}

std::uint64_t order_key(const char* name, std::uint64_t at_ps) { return mix(fnv1a(name) ^ at_ps); }

std::uint64_t turns() { return g_turns ? g_turns->turns : 0; }
std::uint64_t ties() { return g_turns ? g_turns->ties : 0; }

// After any wait of this program's threads: a marked thread takes its turn.
void after_wait() {
    Turns* t = g_turns;
    if (!t || t->entries.empty()) return;
    const sc_core::sc_process_b* p = sc_core::sc_get_current_process_b();
    Entry* e;
    if (p == t->last) {
        e = t->last_entry;
    } else {
        auto it = t->entries.find(p);
        e = it == t->entries.end() ? nullptr : it->second.get();
        t->last = p;
        t->last_entry = e;
    }
    if (e) take_turn(*t, *e);
}

}   // namespace vrdmasim::software_turns

// ---- libsystemc's wait functions, defined here: calls of this program
// reach these (the linker takes a definition of an object before a shared
// library's), which call the library's own and then take a turn.
namespace sc_core {

#define VRDMASIM_REAL(type, symbol) static const auto f = vrdmasim::software_turns::real<type>(symbol)

void wait(sc_simcontext* s) {
    VRDMASIM_REAL(void (*)(sc_simcontext*), "_ZN7sc_core4waitEPNS_13sc_simcontextE");
    f(s);
    vrdmasim::software_turns::after_wait();
}
void wait(const sc_event& e, sc_simcontext* s) {
    VRDMASIM_REAL(void (*)(const sc_event&, sc_simcontext*), "_ZN7sc_core4waitERKNS_8sc_eventEPNS_13sc_simcontextE");
    f(e, s);
    vrdmasim::software_turns::after_wait();
}
void wait(const sc_event_or_list& e, sc_simcontext* s) {
    VRDMASIM_REAL(void (*)(const sc_event_or_list&, sc_simcontext*),
                  "_ZN7sc_core4waitERKNS_16sc_event_or_listEPNS_13sc_simcontextE");
    f(e, s);
    vrdmasim::software_turns::after_wait();
}
void wait(const sc_event_and_list& e, sc_simcontext* s) {
    VRDMASIM_REAL(void (*)(const sc_event_and_list&, sc_simcontext*),
                  "_ZN7sc_core4waitERKNS_17sc_event_and_listEPNS_13sc_simcontextE");
    f(e, s);
    vrdmasim::software_turns::after_wait();
}
void wait(const sc_time& t, sc_simcontext* s) {
    VRDMASIM_REAL(void (*)(const sc_time&, sc_simcontext*), "_ZN7sc_core4waitERKNS_7sc_timeEPNS_13sc_simcontextE");
    f(t, s);
    vrdmasim::software_turns::after_wait();
}
void wait(const sc_time& t, const sc_event& e, sc_simcontext* s) {
    VRDMASIM_REAL(void (*)(const sc_time&, const sc_event&, sc_simcontext*),
                  "_ZN7sc_core4waitERKNS_7sc_timeERKNS_8sc_eventEPNS_13sc_simcontextE");
    f(t, e, s);
    vrdmasim::software_turns::after_wait();
}
void wait(const sc_time& t, const sc_event_or_list& e, sc_simcontext* s) {
    VRDMASIM_REAL(void (*)(const sc_time&, const sc_event_or_list&, sc_simcontext*),
                  "_ZN7sc_core4waitERKNS_7sc_timeERKNS_16sc_event_or_listEPNS_13sc_simcontextE");
    f(t, e, s);
    vrdmasim::software_turns::after_wait();
}
void wait(const sc_time& t, const sc_event_and_list& e, sc_simcontext* s) {
    VRDMASIM_REAL(void (*)(const sc_time&, const sc_event_and_list&, sc_simcontext*),
                  "_ZN7sc_core4waitERKNS_7sc_timeERKNS_17sc_event_and_listEPNS_13sc_simcontextE");
    f(t, e, s);
    vrdmasim::software_turns::after_wait();
}
void wait(int n, sc_simcontext* s) {
    VRDMASIM_REAL(void (*)(int, sc_simcontext*), "_ZN7sc_core4waitEiPNS_13sc_simcontextE");
    f(n, s);
    vrdmasim::software_turns::after_wait();
}

#undef VRDMASIM_REAL

}   // namespace sc_core
