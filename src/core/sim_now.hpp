// The current simulated time, read inline. sc_core::sc_time_stamp() is a
// call into the SystemC library (through the PLT) that returns the current
// context's time; this is the same read, inlined from SystemC's own header
// (sc_get_curr_simcontext() and sc_simcontext::time_stamp() are inline
// there). For the paths every packet takes, where sc_time_stamp() was
// about 4 % of the instructions of a run.
#pragma once

#include <systemc>

namespace vrdmasim {

inline const sc_core::sc_time& sim_now() { return sc_core::sc_get_curr_simcontext()->time_stamp(); }

// sc_core::sc_max_time(), read once: it too is a call into the library, and
// the end of time is a bound the models compare against on every access.
inline const sc_core::sc_time& max_sim_time() {
    static const sc_core::sc_time t = sc_core::sc_max_time();
    return t;
}

// Whether `t` is the end of time: sc_max_time() is all ones
// (sc_simcontext::max_time()), compared here without max_sim_time()'s
// guard of its static (a load and a branch at every packet's several
// compares).
inline bool is_max_sim_time(const sc_core::sc_time& t) { return t.value() == ~sc_dt::uint64(0); }

// sc_core::sc_time::from_value(v), inline (from_value is a library call): the
// time of `v` resolution units, exact for v < 2^52 (52 days at 1 ps), as
// sc_time's own multiply by a double rounds an integral product exactly.
inline sc_core::sc_time time_from_value(sc_dt::uint64 v) {
    static const sc_core::sc_time unit = sc_core::sc_time::from_value(1);
    return unit * static_cast<double>(v);
}

}   // namespace vrdmasim
