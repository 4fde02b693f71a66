// The end of an instant: what runs once nothing else has anything to do at
// the present simulated time.
//
// SystemC runs what happens at one time in delta cycles, and the processes
// of one delta in an order of its own (src/sim/event_order.hpp): a model
// that reads shared state at a time, while others may still change it at
// that time, sees what the order gives it. Some models must act only once
// the time has nothing else pending: the network's hop queue serves its
// links' events (models/interconnect/hop_queue.hpp), the software of a node
// takes its turns (software_turns.hpp). Each used to find that moment
// alone, waiting a delta while sc_pending_activity_at_current_time(); two
// of them would each see the other's delta and wait forever. This is the
// one process that waits, on behalf of all: a client asks (request()), and
// once nothing is pending at the present the method calls the first asking
// client by priority, one a delta, until none asks.
#pragma once

#include <systemc>

namespace vrdmasim {

class InstantEnd {
public:
    // Lower priority first among clients asking at the same instant
    // (Settled: settle()'s, once the others have nothing to do).
    enum Priority : unsigned { SoftwareTurns = 0, HopQueue = 1, Settled = 2, Clients = 3 };

    class Client {
    public:
        virtual ~Client() = default;
        // Called from the method at the end of the instant: nothing else is
        // pending at the present. A client may make work at the present (it
        // then runs before the next client is called).
        virtual void at_instant_end() = 0;

    private:
        friend class InstantEnd;
        bool asked_ = false;
    };

    // The one of this simulation (made at its first use, its method spawned
    // then: during elaboration or while the simulation runs).
    static InstantEnd& get();

    // `c` is called at the end of this instant (once per request, however
    // many are made before it is called).
    void request(Client& c, Priority p);
    // Whether any client waits for the end of this instant.
    bool asked() const { return asked_ > 0; }
    // The calling thread sleeps until the end of this instant: every other
    // process that acts at this simulated time has acted (the software's
    // turns and the network's hop queue too), so what it looks at then is
    // all this time makes it, whatever order the others ran in (MPI_Waitany
    // over requests several of which end at one time: workloads/mpi
    // README "Non-blocking collectives"). The threads settling at one
    // instant wake together, then take their turns as after any wait.
    void settle();

    // Calls made (deltas in which a client was called) and deltas waited.
    std::uint64_t calls() const { return calls_; }
    std::uint64_t waits() const { return waits_; }

private:
    InstantEnd();
    void run();
    void arm();

    struct Settler final : Client {
        explicit Settler(const char* name) : settled(name) {}
        void at_instant_end() override { settled.notify(); }
        sc_core::sc_event settled;
    };

    sc_core::sc_event ev_;
    Settler settler_;
    bool armed_ = false;
    Client* clients_[Clients] = {nullptr, nullptr, nullptr};
    unsigned asked_ = 0;
    std::uint64_t calls_ = 0, waits_ = 0;
};

}   // namespace vrdmasim
