// The run report's fault timeline (report.hpp, render_timeline): the
// stories the models noted, from the faults that started them.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "src/core/output_dir.hpp"
#include "src/sim/summary.hpp"
#include "src/sim/timeseries.hpp"

#include "src/tools/report_detail.hpp"

namespace vrdmasim {

using namespace report_detail;

namespace {

using Step = Tracer::StoryStep;

// The kept steps of the models' stories, linked: each step's cause and the
// steps that follow from it.
class Stories {
public:
    explicit Stories(const std::vector<Step>& steps) {
        for (const auto& st : steps) by_id_[st.id] = &st;
        for (const auto& st : steps)
            if (st.after && by_id_.count(st.after)) children_[st.after].push_back(&st);
        for (const auto& st : steps) ordered_.push_back(&st);
        std::stable_sort(ordered_.begin(), ordered_.end(), earlier);
    }
    static bool earlier(const Step* a, const Step* b) { return a->at != b->at ? a->at < b->at : a->id < b->id; }
    const Step* parent(const Step* st) const {
        auto it = st->after ? by_id_.find(st->after) : by_id_.end();
        return it == by_id_.end() ? nullptr : it->second;
    }
    bool kept(std::uint64_t id) const { return by_id_.count(id) > 0; }
    const std::vector<const Step*>& ordered() const { return ordered_; }
    const std::vector<const Step*>* children(std::uint64_t id) const {
        auto it = children_.find(id);
        return it == children_.end() ? nullptr : &it->second;
    }

private:
    std::map<std::uint64_t, const Step*> by_id_;
    std::map<std::uint64_t, std::vector<const Step*>> children_;
    std::vector<const Step*> ordered_;
};

bool says_fault(const Step* st) {
    return lower(st->name).find("fault") != std::string::npos || lower(st->text).find("fault") != std::string::npos;
}

// Where the shown stories start: faults that no earlier fault caused, or
// (with no fault at all, `faults` false) the first step of every story.
// The engine's faults (those the SMMU reports) first, then the CPU's (a
// program populating its buffers, a guard): the engine's are what a reader
// of this simulator looks for, and a run's first faults are often its setup's.
std::vector<const Step*> story_starts(const Stories& g, bool& faults) {
    std::vector<const Step*> starts;
    for (const auto* st : g.ordered()) {
        if (!says_fault(st)) continue;
        bool caused_by_fault = false;
        std::set<std::uint64_t> seen;
        for (const auto* p = g.parent(st); p && seen.insert(p->id).second; p = g.parent(p))
            caused_by_fault = caused_by_fault || says_fault(p);
        if (!caused_by_fault) starts.push_back(st);
    }
    auto engine = [](const Step* st) {
        const std::string who = "." + st->who + ".";
        return who.find(".smmu.") != std::string::npos;
    };
    std::stable_partition(starts.begin(), starts.end(), engine);
    faults = !starts.empty();
    if (!faults)
        for (const auto* st : g.ordered())
            if (!g.parent(st)) starts.push_back(st);
    return starts;
}

void write_intro(std::ostringstream& s, std::size_t steps, std::uint64_t dropped, std::size_t starts, bool faults,
                 std::size_t max_chains) {
    s << "<p>" << steps << " step" << (steps == 1 ? "" : "s") << " noted";
    if (dropped) s << " (and " << dropped << " later step" << (dropped == 1 ? "" : "s") << " not kept)";
    if (faults)
        s << "; " << starts << " " << (starts == 1 ? "story starts" : "stories start") << " at a fault; "
          << (starts == 1 ? std::string("it is shown")
                          : (starts > max_chains ? "the first " + std::to_string(max_chains) : std::string("all")) +
                                " are shown, each")
          << " with the steps that caused it (shaded) and those that followed from it (the SMMU's faults first, "
             "then the CPU's).";
    else
        s << "; no step mentions a fault. The first " << std::min(max_chains, starts) << " of " << starts
          << " stories are shown.";
    s << " <em>after #N</em> links to the step that caused a row.</p>\n";
}

// A shown story's rows: the causes, up to the story's first step, then
// everything that follows from it, in time order (at most kMaxRows).
constexpr std::size_t kMaxRows = 40;
struct Chain {
    const Step* start;
    std::vector<std::pair<const Step*, int>> rows;   // step, depth (-1: a cause)
    std::size_t total = 0, after = 0;
    sc_core::sc_time end;
};

Chain chain_of(const Stories& g, const Step* start) {
    Chain ch{start, {}, 0, 0, start->at};
    std::set<std::uint64_t> seen{start->id};
    for (const auto* p = g.parent(start); p && seen.insert(p->id).second; p = g.parent(p)) ch.rows.push_back({p, -1});
    std::vector<std::pair<const Step*, int>> todo{{start, 0}};
    while (!todo.empty()) {
        auto [st, depth] = todo.back();
        todo.pop_back();
        ch.rows.push_back({st, depth});
        if (const auto* next = g.children(st->id))
            for (const auto* n : *next)
                if (seen.insert(n->id).second) todo.push_back({n, depth + 1});
    }
    std::stable_sort(ch.rows.begin(), ch.rows.end(),
                     [](const auto& x, const auto& y) { return Stories::earlier(x.first, y.first); });
    for (const auto& r : ch.rows) {
        ch.end = std::max(ch.end, r.first->at + r.first->dur);
        ch.after += r.second >= 0;
    }
    ch.total = ch.rows.size();
    if (ch.rows.size() > kMaxRows) ch.rows.resize(kMaxRows);
    return ch;
}

// The page being written: a colour per who (so that a lane reads at a
// glance), the steps that are on it (a link is drawn only to a row that is)
// and those already given an anchor.
struct TimelinePage {
    std::ostringstream& s;
    const Stories& g;
    bool faults;
    std::map<std::string, int> lane;
    std::set<std::uint64_t> on_page, anchored;

    void row(const Chain& ch, const Step* st, int depth) {
        s << "<tr class=\"" << (depth < 0 ? "cause" : st == ch.start ? "start" : "step") << "\"";
        if (anchored.insert(st->id).second) s << " id=\"step-" << st->id << "\"";
        s << "><td class=\"id\">#" << st->id << "</td><td class=\"num\">" << micros(st->at) << "</td><td class=\"num\">"
          << (st->dur > sc_core::SC_ZERO_TIME ? "+" + micros(st->dur) : std::string())
          << "</td><td><span class=\"lane l" << lane[st->who] << "\">" << html_escape(st->who)
          << "</span></td><td class=\"text\" style=\"padding-left:" << 0.4 + 1.1 * std::max(depth, 0) << "em\">"
          << (depth > 0 ? "\xE2\x86\xB3 " : "") << html_escape(st->text);
        if (!st->name.empty() && lower(st->name) != lower(st->text))
            s << " <span class=\"name\">" << html_escape(st->name) << "</span>";
        s << "</td><td>";
        if (st->after) {
            if (on_page.count(st->after)) s << "<a href=\"#step-" << st->after << "\">after #" << st->after << "</a>";
            else
                s << "<span title=\"" << (g.kept(st->after) ? "not shown on this page" : "this step was not kept")
                  << "\">after #" << st->after << "</span>";
        }
        s << "</td></tr>\n";
    }

    void chain(const Chain& ch, std::size_t c) {
        s << "<div class=\"chain\" id=\"story-" << c + 1 << "\">\n<h3>" << (faults ? "Fault " : "Story ") << c + 1
          << " <span class=\"at\">at " << micros(ch.start->at) << " \xC2\xB5s</span> <span class=\"who\">"
          << html_escape(ch.start->who) << "</span></h3>\n<p class=\"chainsum\">" << html_escape(ch.start->text)
          << " \xE2\x80\x94 " << ch.after << " step" << (ch.after == 1 ? "" : "s") << " over "
          << micros(ch.end - ch.start->at) << " \xC2\xB5s</p>\n";
        s << "<table class=\"story\"><thead><tr><th>#</th><th>time (\xC2\xB5s)</th><th>took</th><th>who</th>"
             "<th>what happened</th><th>cause</th></tr></thead><tbody>\n";
        for (const auto& [st, depth] : ch.rows) row(ch, st, depth);
        s << "</tbody></table>\n";
        if (ch.total > ch.rows.size())
            s << "<p class=\"more\">\xE2\x80\xA6 and " << ch.total - ch.rows.size()
              << " more steps of this story (all of them: run with --log, events.log).</p>\n";
        s << "</div>\n";
    }
};

}   // namespace

std::string render_timeline(const std::vector<Tracer::StoryStep>& steps, std::uint64_t dropped,
                            std::size_t max_chains) {
    std::ostringstream s;
    if (steps.empty()) {
        s << "<p class=\"empty\">No noted steps (this run noted none): the models noted no step of a story";
        if (dropped) s << ", and " << dropped << " were noted past the kept ones";
        s << ". Nothing to draw.</p>\n";
        return s.str();
    }
    const Stories g(steps);
    bool faults = false;
    const std::vector<const Step*> starts = story_starts(g, faults);
    write_intro(s, steps.size(), dropped, starts.size(), faults, max_chains);
    TimelinePage page{s, g, faults, {}, {}, {}};
    for (const auto* st : g.ordered())
        if (!page.lane.count(st->who)) page.lane.emplace(st->who, static_cast<int>(page.lane.size() % 8));
    std::vector<Chain> chains;
    for (std::size_t c = 0; c < starts.size() && c < max_chains; ++c) {
        chains.push_back(chain_of(g, starts[c]));
        for (const auto& r : chains.back().rows) page.on_page.insert(r.first->id);
    }
    for (std::size_t c = 0; c < chains.size(); ++c) page.chain(chains[c], c);
    return s.str();
}

}   // namespace vrdmasim
