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

}  // namespace vrdmasim
