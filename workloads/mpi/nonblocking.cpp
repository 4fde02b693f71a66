// The mpi workload's non-blocking collectives (README "Non-blocking
// collectives"): started by collective() on the library's non-blocking
// form, ended here at MPI_Wait or MPI_Test.
#include <stdexcept>

#include "workloads/mpi/mpi_workload.hpp"

namespace vrdmasim {

bool MpiWorkload::nonblocking_call(RdmaProcess& app, unsigned rank, const mpiwire::Call& c, mpiwire::Reply& r) {
    const mpiwire::Op op = static_cast<mpiwire::Op>(c.op);
    if (mpiwire::is_nonblocking(op)) {
        collective(app, rank, c, r);
        return true;
    }
    if ((op != mpiwire::Op::Wait && op != mpiwire::Op::Test) || !(c.request & mpiwire::kCollectiveRequest))
        return false;
    r.flag = nonblocking_end(app, rank, c.request, op == mpiwire::Op::Wait);
    return true;
}

bool MpiWorkload::nonblocking_end(RdmaProcess& app, unsigned rank, std::uint64_t request, bool wait) {
    auto& started = state_[rank].started;
    const auto it = started.find(request);
    if (it == started.end())
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + " ends request " + std::to_string(request) +
                                 ", which is no non-blocking collective of it in flight");
    CollectiveCall& k = it->second;
    if (wait) {
        k.comm->wait(k.request);
    } else {
        eps_[app.node()]->poll();   // MPI_Test enters the library: it polls the network once
        if (!k.comm->test(k.request)) return false;
    }
    collective_end(app, rank, k);
    started.erase(it);
    return true;
}

bool MpiWorkload::in_flight_reads(unsigned rank, std::uint64_t va, std::uint64_t len) const {
    if (!len) return false;
    for (const auto& [q, k] : state_[rank].started) {
        const std::uint64_t rlen = k.d.receive_bytes();
        if ((k.sbytes && va < k.sbuf + k.sbytes && k.sbuf < va + len) ||
            (rlen && va < k.rbuf + rlen && k.rbuf < va + len))
            return true;
    }
    return false;
}

bool MpiWorkload::request_test(unsigned rank, msg::Endpoint& ep, std::uint64_t q) {
    if (!(q & mpiwire::kCollectiveRequest)) return ep.test(q);
    ep.poll();
    const auto it = state_[rank].started.find(q);
    if (it == state_[rank].started.end())
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + " asks about request " + std::to_string(q) +
                                 ", which is no non-blocking collective of it in flight");
    return it->second.comm->test(it->second.request);
}

}   // namespace vrdmasim
