// The one-sided calls the simulation times (workloads/mpi/README.md
// "One-sided"). The program's data move through real MPI's one-sided
// operations, in an epoch of the library's own: every window the
// simulation knows is opened with MPI_Win_lock_all(MPI_MODE_NOCHECK) as
// soon as it is made, and the program's synchronisation is carried out
// under it with calls that never wait for a rank the simulation has not
// let go: a fence is a flush of the rank's operations and a barrier
// posted non-blocking before the simulation is asked (waited for once it
// has answered: every member has posted its own by then); an unlock or a
// flush is a flush; a lock takes nothing in real MPI: the simulation
// orders the holders of an exclusive lock (each one's operations flushed
// before the simulation hears of its unlock), so that real MPI sees them
// in that order too; generalized active target (post, start, complete,
// wait, test) likewise, the simulation ordering the epochs (active_target()).
#include <mpi.h>

#include <map>
#include <string>
#include <vector>

#include "workloads/mpi/preload/calls.hpp"
#include "workloads/mpi/preload/libraries.hpp"
#include "workloads/mpi/preload/residency.hpp"

using namespace vrdmasim;
using namespace vrdmasim::mpipreload;
using mpiwire::Call;
using mpiwire::Op;
using mpiwire::Reply;

namespace {

struct Window {
    std::uint64_t sim = 0;   // the simulation's id
    MPI_Comm comm = MPI_COMM_NULL;   // a duplicate of the window's communicator: the fences' barriers
    void* allocated = nullptr;   // MPI_Win_allocate: the memory this library took from the program's heap
    std::uint64_t va = 0, bytes = 0;   // the window's memory
};
std::map<MPI_Win, Window>& windows() {
    static std::map<MPI_Win, Window> w;
    return w;
}

// The window the simulation knows as `win`; null (the call `name`
// reported untimed) for one an untimed call made.
Window* timed(MPI_Win win, const char* name) {
    const auto it = windows().find(win);
    if (it != windows().end()) return &it->second;
    untimed((std::string(name) + " on a window made by an untimed call").c_str());
    return nullptr;
}

// A window made: the simulation times its creation (every member meets
// there), then real MPI makes it, and the library's epoch opens.
int create(std::uint32_t ctx, void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win,
           void* allocated) {
    Call c = call(Op::WinCreate, ctx);
    c.va = reinterpret_cast<std::uint64_t>(base);
    c.bytes = size > 0 ? static_cast<std::uint64_t>(size) : 0;
    c.tag = disp_unit;
    const Reply r = exchange(c);
    const int rc = PMPI_Win_create(base, size, disp_unit, info, comm, win);
    Window w;
    w.sim = r.request;
    w.allocated = allocated;
    w.va = c.va;
    w.bytes = c.bytes;
    // Other ranks' real puts write it from now on, in host time: not the
    // program's touches (residency.hpp).
    receiving(w.va, w.bytes);
    PMPI_Comm_dup(comm, &w.comm);
    PMPI_Win_lock_all(MPI_MODE_NOCHECK, *win);
    windows()[*win] = w;
    mark();
    return rc;
}

// A put's, get's or accumulate's buffers into `c`; false (the call
// reported untimed) if a datatype is not contiguous.
bool buffers(Call& c, const char* name, const void* origin, int origin_count, MPI_Datatype origin_type,
             int target_count, MPI_Datatype target_type) {
    buffer(c, origin, origin_count, origin_type);
    std::uint64_t lb = 0, len = 0;
    span(nullptr, target_count, target_type, lb, len);
    if ((c.bytes && !c.va) || len != data_bytes(target_count, target_type)) {
        untimed((std::string(name) + " of a non-contiguous datatype").c_str());
        return false;
    }
    c.offset = lb;
    return true;
}

// The 8-byte integers, whose elements the engine's network atomics take.
bool eight_byte_integer(MPI_Datatype t) {
    int size = 0;
    PMPI_Type_size(t, &size);
    for (MPI_Datatype k : {MPI_INT64_T, MPI_UINT64_T, MPI_LONG, MPI_UNSIGNED_LONG, MPI_LONG_LONG_INT,
                           MPI_UNSIGNED_LONG_LONG, MPI_AINT, MPI_OFFSET, MPI_COUNT})
        if (t == k) return size == 8;
    return false;
}

// The network atomic of `op` on `type` into c.amo; false (the call
// reported untimed) if the engine has none: it adds, swaps and
// compare-and-swaps 8-byte words.
bool atomic_of(Call& c, const char* name, MPI_Op op, MPI_Datatype type, MPI_Datatype target_type) {
    const mpiwire::Amo amo = op == MPI_SUM       ? mpiwire::Amo::Add
                             : op == MPI_REPLACE ? mpiwire::Amo::Replace
                             : op == MPI_NO_OP   ? mpiwire::Amo::NoOp
                                                 : mpiwire::Amo{};
    if (amo == mpiwire::Amo{} || !eight_byte_integer(type) || type != target_type) {
        untimed((std::string(name) + " of an op or type no network atomic does").c_str());
        return false;
    }
    c.amo = static_cast<std::uint32_t>(amo);
    return true;
}

Call rma_call(Op op, const Window& w, int target_rank, MPI_Aint target_disp) {
    Call c = call(op);
    c.win = w.sim;
    c.peer = target_rank;
    c.disp = static_cast<std::uint64_t>(target_disp);
    return c;
}

// Real MPI's operation (`real`: it never waits for another rank), then the
// simulation's. A request-based one's (`request`: real MPI's request of
// it, which `real` wrote there) becomes the program's generalized request.
template <class Real>
int carried(Call c, Real real, MPI_Request* request = nullptr) {
    const int rc = real();
    if (request) c.op = static_cast<std::uint32_t>(mpiwire::request_based(static_cast<Op>(c.op)));
    const Reply r = exchange(c);
    if (request) rma_started(request, r.request);
    mark();
    return rc;
}

// MPI_Put, MPI_Get: real MPI's operation (`real`), and the simulation's.
// (MPI_Rput, MPI_Rget: `request` as carried() takes it.)
template <class Real>
int put_or_get(Op op, const char* name, const void* origin, int origin_count, MPI_Datatype origin_type, int target_rank,
               MPI_Aint target_disp, int target_count, MPI_Datatype target_type, MPI_Win win, Real real,
               MPI_Request* request = nullptr) {
    const Window* w = timed(win, name);
    if (!w || target_rank == MPI_PROC_NULL) return real();
    Call c = rma_call(op, *w, target_rank, target_disp);
    if (!buffers(c, name, origin, origin_count, origin_type, target_count, target_type)) return real();
    return carried(c, real, request);
}

// MPI_Accumulate, MPI_Raccumulate (`request` as carried() takes it).
template <class Real>
int accumulate(const char* name, const void* origin, int origin_count, MPI_Datatype origin_type, int target_rank,
               MPI_Aint target_disp, int target_count, MPI_Datatype target_type, MPI_Op op, MPI_Win win, Real real,
               MPI_Request* request = nullptr) {
    const Window* w = timed(win, name);
    if (!w || target_rank == MPI_PROC_NULL) return real();
    Call c = rma_call(Op::Accumulate, *w, target_rank, target_disp);
    if (op == MPI_NO_OP || !atomic_of(c, name, op, origin_type, target_type) ||
        !buffers(c, name, origin, origin_count, origin_type, target_count, target_type)) {
        if (op == MPI_NO_OP) untimed((std::string(name) + " of MPI_NO_OP").c_str());
        return real();
    }
    return carried(c, real, request);
}

// MPI_Get_accumulate, MPI_Rget_accumulate: MPI_Accumulate's network
// atomics, each fetching the element's old value into the result buffer
// (MPI_NO_OP: a fetch alone; `request` as carried() takes it).
template <class Real>
int get_accumulate(const char* name, const void* origin, int origin_count, MPI_Datatype origin_type, void* result,
                   int result_count, MPI_Datatype result_type, int target_rank, MPI_Aint target_disp, int target_count,
                   MPI_Datatype target_type, MPI_Op op, MPI_Win win, Real real, MPI_Request* request = nullptr) {
    const Window* w = timed(win, name);
    if (!w || target_rank == MPI_PROC_NULL) return real();
    Call c = rma_call(Op::GetAccumulate, *w, target_rank, target_disp);
    Call res = c;
    buffer(res, result, result_count, result_type);
    const bool fetch = op == MPI_NO_OP;   // the origin is not used
    if (!atomic_of(c, name, op, fetch ? result_type : origin_type, target_type) ||
        (!fetch && !atomic_of(c, name, op, result_type, target_type)))
        return real();
    const bool contiguous = fetch ? buffers(c, name, result, result_count, result_type, target_count, target_type)
                                  : buffers(c, name, origin, origin_count, origin_type, target_count, target_type);
    if (!contiguous) return real();
    if ((res.bytes && !res.va) || res.bytes != c.bytes) {
        untimed((std::string(name) + " of a non-contiguous datatype").c_str());
        return real();
    }
    if (fetch) c.va = 0;
    c.va3 = res.va;
    return carried(c, real, request);
}

// A synchronisation call on a timed window: real MPI's part (`real`, which
// never waits for another rank), then the simulation's.
template <class Real>
int synchronise(Op op, const Window& w, int peer, std::int32_t tag, std::int32_t assert_, Real real) {
    const int rc = real();
    Call c = call(op);
    c.win = w.sim;
    c.peer = peer;
    c.tag = tag;
    c.root = assert_;
    exchange(c);
    mark();
    return rc;
}

// The ranks of `group` in the window's communicator (MPI_Group_translate_ranks);
// a rank not in it is erroneous in MPI: the run stops naming the call.
std::vector<std::uint64_t> group_ranks(const Window& w, MPI_Group group, const char* name) {
    int n = 0;
    PMPI_Group_size(group, &n);
    MPI_Group members;
    PMPI_Comm_group(w.comm, &members);
    std::vector<int> in(static_cast<std::size_t>(n)), out(static_cast<std::size_t>(n));
    for (int i = 0; i < n; ++i) in[static_cast<std::size_t>(i)] = i;
    PMPI_Group_translate_ranks(group, n, in.data(), members, out.data());
    PMPI_Group_free(&members);
    std::vector<std::uint64_t> ranks;
    for (const int r : out) {
        if (r == MPI_UNDEFINED)
            cannot_run((std::string(name) + " of a group with a rank not in the window's communicator").c_str(),
                       mpiwire::kErroneous);
        ranks.push_back(static_cast<std::uint64_t>(r));
    }
    return ranks;
}

// Generalized active target synchronisation on a timed window, carried out
// under the library's own epoch as the other synchronisation is (above):
// real MPI's post, start, complete, wait and test are not called (real MPI
// allows no active target epoch inside the library's lock_all one); the
// simulation decides when each call returns, so real MPI sees the epochs
// in its order: a start returns once every target's post has reached the
// simulation (the target's stores before it made public by MPI_Win_sync),
// a wait or a test that ends the epoch once every origin's complete has
// (the origin's operations flushed in real MPI before it), and the
// target's window then synchronised with what they wrote.
// (On a window an untimed call made: real MPI's call, `real`, reported untimed.)
template <class Real>
int active_target(Op op, MPI_Win win, MPI_Group group, int assert_, const char* name, Real real, int* flag = nullptr) {
    const auto it = windows().find(win);
    if (it == windows().end()) {
        untimed((std::string(name) + " on a window made by an untimed call").c_str());
        return real();
    }
    Call c = call(op);
    c.win = it->second.sim;
    c.root = (assert_ & MPI_MODE_NOCHECK) ? mpiwire::kNoCheck : 0;
    std::vector<std::uint64_t> ranks;
    if (op == Op::WinPost || op == Op::WinStart) ranks = group_ranks(it->second, group, name);
    c.count = ranks.size();
    if (op == Op::WinPost) PMPI_Win_sync(win);   // the window's local stores public before the origins may access it
    if (op == Op::WinComplete) PMPI_Win_flush_all(win);   // the epoch's operations done at their targets
    const Reply r = exchange(c, ranks.data());
    if (flag) *flag = r.flag;
    if (op == Op::WinWait || (op == Op::WinTest && r.flag)) PMPI_Win_sync(win);   // what the origins wrote, seen
    mark();
    return MPI_SUCCESS;
}

}   // namespace

extern "C" {

int MPI_Win_create(void* base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, MPI_Win* win) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    if (!known(comm, "MPI_Win_create", ctx)) return PMPI_Win_create(base, size, disp_unit, info, comm, win);
    return create(ctx, base, size, disp_unit, info, comm, win, nullptr);
}

// The memory from the program's heap (at the same address in every run),
// and the window created on it: MPI_Win_create's window, which only its
// MPI_WIN_CREATE_FLAVOR attribute tells apart.
int MPI_Win_allocate(MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm, void* baseptr, MPI_Win* win) {
    const InLibrary lib;
    std::uint32_t ctx = 0;
    if (!known(comm, "MPI_Win_allocate", ctx)) return PMPI_Win_allocate(size, disp_unit, info, comm, baseptr, win);
    void* memory = program_alloc(size > 0 ? static_cast<std::size_t>(size) : 0);
    if (!memory) fail("out of memory for MPI_Win_allocate's window");
    *static_cast<void**>(baseptr) = memory;
    return create(ctx, memory, size, disp_unit, info, comm, win, memory);
}

int MPI_Win_free(MPI_Win* win) {
    const InLibrary lib;
    const auto it = windows().find(*win);
    if (it == windows().end()) {
        untimed("MPI_Win_free on a window made by an untimed call");
        return PMPI_Win_free(win);
    }
    Window w = it->second;
    windows().erase(it);
    PMPI_Win_unlock_all(*win);
    Call c = call(Op::WinFree);
    c.win = w.sim;
    exchange(c);   // every member meets there: each has let the window go
    const int rc = PMPI_Win_free(win);
    received(w.va, w.bytes);
    PMPI_Comm_free(&w.comm);
    program_free(w.allocated);
    mark();
    return rc;
}

int MPI_Put(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
            MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win) {
    const InLibrary lib;
    return put_or_get(Op::Put, "MPI_Put", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                      target_count, target_datatype, win, [&] {
                          return PMPI_Put(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                          target_count, target_datatype, win);
                      });
}

int MPI_Get(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
            int target_count, MPI_Datatype target_datatype, MPI_Win win) {
    const InLibrary lib;
    return put_or_get(Op::Get, "MPI_Get", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                      target_count, target_datatype, win, [&] {
                          return PMPI_Get(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                          target_count, target_datatype, win);
                      });
}

int MPI_Accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                   MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
    const InLibrary lib;
    return accumulate("MPI_Accumulate", origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                      target_count, target_datatype, op, win, [&] {
                          return PMPI_Accumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp,
                                                 target_count, target_datatype, op, win);
                      });
}

int MPI_Fetch_and_op(const void* origin_addr, void* result_addr, MPI_Datatype datatype, int target_rank,
                     MPI_Aint target_disp, MPI_Op op, MPI_Win win) {
    const InLibrary lib;
    auto real = [&] {
        return PMPI_Fetch_and_op(origin_addr, result_addr, datatype, target_rank, target_disp, op, win);
    };
    const Window* w = timed(win, "MPI_Fetch_and_op");
    if (!w || target_rank == MPI_PROC_NULL) return real();
    Call c = rma_call(Op::FetchOp, *w, target_rank, target_disp);
    if (!atomic_of(c, "MPI_Fetch_and_op", op, datatype, datatype)) return real();
    c.va = op == MPI_NO_OP ? 0 : reinterpret_cast<std::uint64_t>(origin_addr);
    c.va3 = reinterpret_cast<std::uint64_t>(result_addr);
    c.bytes = 8;
    return carried(c, real);
}

int MPI_Get_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
                       int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                       int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win) {
    const InLibrary lib;
    return get_accumulate("MPI_Get_accumulate", origin_addr, origin_count, origin_datatype, result_addr, result_count,
                          result_datatype, target_rank, target_disp, target_count, target_datatype, op, win, [&] {
                              return PMPI_Get_accumulate(origin_addr, origin_count, origin_datatype, result_addr,
                                                         result_count, result_datatype, target_rank, target_disp,
                                                         target_count, target_datatype, op, win);
                          });
}

// The request-based operations: as their operations, the program's
// request ended at MPI_Wait or MPI_Test once the simulation's operation
// has completed (and real MPI's).
int MPI_Rput(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
    const InLibrary lib;
    return put_or_get(
        Op::Put, "MPI_Rput", origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
        target_datatype, win,
        [&] {
            return PMPI_Rput(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                             target_datatype, win, request);
        },
        request);
}

int MPI_Rget(void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
             int target_count, MPI_Datatype target_datatype, MPI_Win win, MPI_Request* request) {
    const InLibrary lib;
    return put_or_get(
        Op::Get, "MPI_Rget", origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
        target_datatype, win,
        [&] {
            return PMPI_Rget(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                             target_datatype, win, request);
        },
        request);
}

int MPI_Raccumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
                    MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                    MPI_Request* request) {
    const InLibrary lib;
    return accumulate(
        "MPI_Raccumulate", origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
        target_datatype, op, win,
        [&] {
            return PMPI_Raccumulate(origin_addr, origin_count, origin_datatype, target_rank, target_disp, target_count,
                                    target_datatype, op, win, request);
        },
        request);
}

int MPI_Rget_accumulate(const void* origin_addr, int origin_count, MPI_Datatype origin_datatype, void* result_addr,
                        int result_count, MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                        int target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request* request) {
    const InLibrary lib;
    return get_accumulate(
        "MPI_Rget_accumulate", origin_addr, origin_count, origin_datatype, result_addr, result_count, result_datatype,
        target_rank, target_disp, target_count, target_datatype, op, win,
        [&] {
            return PMPI_Rget_accumulate(origin_addr, origin_count, origin_datatype, result_addr, result_count,
                                        result_datatype, target_rank, target_disp, target_count, target_datatype, op,
                                        win, request);
        },
        request);
}

int MPI_Compare_and_swap(const void* origin_addr, const void* compare_addr, void* result_addr, MPI_Datatype datatype,
                         int target_rank, MPI_Aint target_disp, MPI_Win win) {
    const InLibrary lib;
    auto real = [&] {
        return PMPI_Compare_and_swap(origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp, win);
    };
    const Window* w = timed(win, "MPI_Compare_and_swap");
    if (!w || target_rank == MPI_PROC_NULL) return real();
    if (!eight_byte_integer(datatype)) {
        untimed("MPI_Compare_and_swap of a type no network atomic does");
        return real();
    }
    Call c = rma_call(Op::CompareSwap, *w, target_rank, target_disp);
    c.va = reinterpret_cast<std::uint64_t>(origin_addr);
    c.va2 = reinterpret_cast<std::uint64_t>(compare_addr);
    c.va3 = reinterpret_cast<std::uint64_t>(result_addr);
    c.bytes = 8;
    return carried(c, real);
}

// The rank's operations complete in real MPI, and a barrier of every
// member is posted; the simulation times the fence (its operations, then
// a barrier); then the barrier is waited for (every member has posted
// its own: the simulation let none out before all came).
int MPI_Win_fence(int assert_, MPI_Win win) {
    const InLibrary lib;
    const Window* w = timed(win, "MPI_Win_fence");
    if (!w) return PMPI_Win_fence(assert_, win);
    MPI_Request barrier;
    const int rc = synchronise(Op::Fence, *w, 0, 0, 0, [&] {
        const int e = PMPI_Win_flush_all(win);
        PMPI_Ibarrier(w->comm, &barrier);
        return e;
    });
    PMPI_Wait(&barrier, MPI_STATUS_IGNORE);
    PMPI_Win_sync(win);
    mark();
    return rc;
}

int MPI_Win_lock(int lock_type, int rank, int assert_, MPI_Win win) {
    const InLibrary lib;
    const Window* w = timed(win, "MPI_Win_lock");
    if (!w) return PMPI_Win_lock(lock_type, rank, assert_, win);
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    const int rc =
        synchronise(Op::Lock, *w, rank, lock_type == MPI_LOCK_EXCLUSIVE ? mpiwire::kExclusive : mpiwire::kShared,
                    (assert_ & MPI_MODE_NOCHECK) ? mpiwire::kNoCheck : 0, [] { return MPI_SUCCESS; });
    PMPI_Win_sync(win);   // what the lock's previous holders wrote, seen
    return rc;
}

int MPI_Win_unlock(int rank, MPI_Win win) {
    const InLibrary lib;
    const Window* w = timed(win, "MPI_Win_unlock");
    if (!w) return PMPI_Win_unlock(rank, win);
    if (rank == MPI_PROC_NULL) return MPI_SUCCESS;
    return synchronise(Op::Unlock, *w, rank, 0, 0, [&] {
        const int rc = PMPI_Win_flush(rank, win);
        PMPI_Win_sync(win);
        return rc;
    });
}

int MPI_Win_lock_all(int assert_, MPI_Win win) {
    const InLibrary lib;
    const Window* w = timed(win, "MPI_Win_lock_all");
    if (!w) return PMPI_Win_lock_all(assert_, win);
    const int rc = synchronise(Op::LockAll, *w, 0, mpiwire::kShared,
                               (assert_ & MPI_MODE_NOCHECK) ? mpiwire::kNoCheck : 0, [] { return MPI_SUCCESS; });
    PMPI_Win_sync(win);
    return rc;
}

int MPI_Win_unlock_all(MPI_Win win) {
    const InLibrary lib;
    const Window* w = timed(win, "MPI_Win_unlock_all");
    if (!w) return PMPI_Win_unlock_all(win);
    return synchronise(Op::UnlockAll, *w, 0, 0, 0, [&] {
        const int rc = PMPI_Win_flush_all(win);
        PMPI_Win_sync(win);
        return rc;
    });
}

// The engine reports one completion, when the data have landed at the
// target (or come back): local completion is remote completion, so the
// flush_local calls are flushes.
int MPI_Win_flush(int rank, MPI_Win win) {
    const InLibrary lib;
    const Window* w = timed(win, "MPI_Win_flush");
    if (!w || rank == MPI_PROC_NULL) return PMPI_Win_flush(rank, win);
    return synchronise(Op::Flush, *w, rank, 0, 0, [&] { return PMPI_Win_flush(rank, win); });
}

int MPI_Win_flush_local(int rank, MPI_Win win) {
    const InLibrary lib;
    const Window* w = timed(win, "MPI_Win_flush_local");
    if (!w || rank == MPI_PROC_NULL) return PMPI_Win_flush_local(rank, win);
    return synchronise(Op::Flush, *w, rank, 0, 0, [&] { return PMPI_Win_flush_local(rank, win); });
}

int MPI_Win_flush_all(MPI_Win win) {
    const InLibrary lib;
    const Window* w = timed(win, "MPI_Win_flush_all");
    if (!w) return PMPI_Win_flush_all(win);
    return synchronise(Op::FlushAll, *w, 0, 0, 0, [&] { return PMPI_Win_flush_all(win); });
}

int MPI_Win_flush_local_all(MPI_Win win) {
    const InLibrary lib;
    const Window* w = timed(win, "MPI_Win_flush_local_all");
    if (!w) return PMPI_Win_flush_local_all(win);
    return synchronise(Op::FlushAll, *w, 0, 0, 0, [&] { return PMPI_Win_flush_local_all(win); });
}

int MPI_Win_post(MPI_Group group, int assert_, MPI_Win win) {
    const InLibrary lib;
    return active_target(Op::WinPost, win, group, assert_, "MPI_Win_post",
                         [&] { return PMPI_Win_post(group, assert_, win); });
}

int MPI_Win_start(MPI_Group group, int assert_, MPI_Win win) {
    const InLibrary lib;
    return active_target(Op::WinStart, win, group, assert_, "MPI_Win_start",
                         [&] { return PMPI_Win_start(group, assert_, win); });
}

int MPI_Win_complete(MPI_Win win) {
    const InLibrary lib;
    return active_target(Op::WinComplete, win, MPI_GROUP_NULL, 0, "MPI_Win_complete",
                         [&] { return PMPI_Win_complete(win); });
}

int MPI_Win_wait(MPI_Win win) {
    const InLibrary lib;
    return active_target(Op::WinWait, win, MPI_GROUP_NULL, 0, "MPI_Win_wait", [&] { return PMPI_Win_wait(win); });
}

int MPI_Win_test(MPI_Win win, int* flag) {
    const InLibrary lib;
    return active_target(
        Op::WinTest, win, MPI_GROUP_NULL, 0, "MPI_Win_test", [&] { return PMPI_Win_test(win, flag); }, flag);
}

}   // extern "C"
