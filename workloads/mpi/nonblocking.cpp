// The mpi workload's non-blocking collectives (README "Non-blocking
// collectives"): started by collective() on the library's non-blocking
// form, ended here at MPI_Wait, MPI_Test, MPI_Waitany (with point-to-point
// requests, in simulated time: of several ended at one time, the first
// listed) or, freed, at MPI_Finalize.
#include <stdexcept>

#include "workloads/mpi/mpi_workload.hpp"

namespace vrdmasim {

bool MpiWorkload::nonblocking_call(RdmaProcess& app, unsigned rank, const mpiwire::Call& c, mpiwire::Reply& r) {
    const mpiwire::Op op = static_cast<mpiwire::Op>(c.op);
    if (mpiwire::is_nonblocking(op)) {
        collective(app, rank, c, r);
        return true;
    }
    if (!(c.request & mpiwire::kCollectiveRequest)) return false;
    if (op == mpiwire::Op::RequestFree) {   // it completes on its own, ended at MPI_Finalize at the latest
        in_flight(rank, c.request).freed = true;
        return true;
    }
    if (op != mpiwire::Op::Wait && op != mpiwire::Op::Test) return false;
    r.flag = nonblocking_end(app, rank, c.request, op == mpiwire::Op::Wait);
    return true;
}

MpiWorkload::CollectiveCall& MpiWorkload::in_flight(unsigned rank, std::uint64_t request) {
    auto& started = state_[rank].started;
    const auto it = started.find(request);
    if (it == started.end() || it->second.freed)
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + " names request " + std::to_string(request) +
                                 ", which is no non-blocking collective of it in flight (or its request was freed)");
    return it->second;
}

bool MpiWorkload::nonblocking_end(RdmaProcess& app, unsigned rank, std::uint64_t request, bool wait) {
    CollectiveCall& k = in_flight(rank, request);
    if (wait) {
        k.comm->wait(k.request);
    } else {
        eps_[app.node()]->poll();   // MPI_Test enters the library: it polls the network once
        if (!k.comm->test(k.request)) return false;
    }
    collective_end(app, rank, k);
    state_[rank].started.erase(request);
    return true;
}

void MpiWorkload::nonblocking_finalize(RdmaProcess& app, unsigned rank) {
    auto& started = state_[rank].started;
    std::vector<std::uint64_t> freed;
    for (auto& [q, k] : started)
        if (k.freed) {
            k.freed = false;   // waited for as an MPI_Wait would
            freed.push_back(q);
        }
    for (const std::uint64_t q : freed) nonblocking_end(app, rank, q, true);
    if (!started.empty())
        throw std::runtime_error("mpi: rank " + std::to_string(rank) + " called MPI_Finalize with " +
                                 std::to_string(started.size()) +
                                 " non-blocking collective(s) not completed (MPI_Wait, MPI_Test)");
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

std::vector<WaitanyRequest> MpiWorkload::waitany_list(unsigned rank) {
    const std::vector<std::uint64_t>& ids = state_[rank].ids;
    if (ids.empty()) throw std::runtime_error("mpi: rank " + std::to_string(rank) + " asks about none of its requests");
    std::vector<WaitanyRequest> list(ids.size());
    for (std::size_t i = 0; i < ids.size(); ++i) {
        if (ids[i] & mpiwire::kRmaRequest) {
            list[i].kind = WaitanyRequest::Kind::Rma;
            list[i].windows = &one_sided();
            list[i].rank = rank;
            list[i].rma = ids[i];
        } else if (ids[i] & mpiwire::kCollectiveRequest) {
            const CollectiveCall& k = in_flight(rank, ids[i]);
            list[i].kind = WaitanyRequest::Kind::Collective;
            list[i].comm = k.comm;
            list[i].collective = k.request;
        } else {
            list[i].message = ids[i];
        }
    }
    return list;
}

}   // namespace vrdmasim
