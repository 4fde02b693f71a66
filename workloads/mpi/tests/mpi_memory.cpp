// The program's own memory use between calls (workloads/mpi/README.md
// "The program's memory"): rank 1 receives 1 MiB messages from rank 0 into
// blocks of its heap large enough to be mappings of their own.
//   mpi_memory touch   the block written by the program before the receive
//                      (its pages are the CPU's first touches, not the engine's)
//   mpi_memory reuse   a block received into, freed (unmapped), and a new
//                      one of its size (at its place) received into
//   mpi_memory mmap    the same with the program's own mmap(2) and munmap(2):
//                      a mapping written first, received into, unmapped, and
//                      a new one (at its place) received into unwritten
//   mpi_memory huge    a 2 MiB aligned piece of a mapping of its own advised
//                      for transparent huge pages (MADV_HUGEPAGE, what a
//                      host with THP "always" does to every mapping), one
//                      byte of it written: one page touched, not 512
// Checks every received byte. Prints "memory: ok".
#include <mpi.h>
#include <sys/mman.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

static const int kBytes = 1 << 20;
static int failures = 0;

static void exchange(int rank, long* block, int round) {
    const int n = kBytes / static_cast<int>(sizeof(long));
    if (rank == 0) {
        for (int i = 0; i < n; ++i) block[i] = round * 1000003L + i;
        MPI_Send(block, n, MPI_LONG, 1, round, MPI_COMM_WORLD);
    } else if (rank == 1) {
        MPI_Recv(block, n, MPI_LONG, 0, round, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = 0; i < n; ++i)
            if (block[i] != round * 1000003L + i) {
                std::fprintf(stderr, "rank 1: round %d: element %d wrong\n", round, i);
                ++failures;
                break;
            }
    }
}

// A block of the heap: written first, or freed and allocated again.
static void heap_block(int rank, const std::string& mode) {
    long* a = static_cast<long*>(std::malloc(kBytes));
    if (mode == "touch") {
        std::memset(a, 0, kBytes);   // every page touched by the CPU first
        exchange(rank, a, 1);
    } else {
        exchange(rank, a, 1);
        std::free(a);   // unmapped
        MPI_Barrier(MPI_COMM_WORLD);
        a = static_cast<long*>(std::malloc(kBytes));   // a new mapping, in the old one's place
        exchange(rank, a, 2);
    }
    std::free(a);
}

// The program's own mapping: written first, then unmapped and mapped again.
static void own_mapping(int rank) {
    auto map = [] {
        void* p = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) std::abort();
        return static_cast<long*>(p);
    };
    long* m = map();
    std::memset(m, 0, kBytes);   // the CPU's first touches
    exchange(rank, m, 1);
    munmap(m, kBytes);
    MPI_Barrier(MPI_COMM_WORLD);
    long* again = map();   // new memory, at the old one's place
    if (again != m) {
        std::fprintf(stderr, "rank %d: the new mapping is not at the old one's place\n", rank);
        ++failures;
    }
    exchange(rank, again, 2);
    munmap(again, kBytes);
}

// One byte written in a region the host may back by a huge page: the
// simulation must see one page touched (the launcher turns THP off).
static void huge_page_region() {
    const std::size_t huge = 2u << 20;
    void* p = mmap(nullptr, 2 * huge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) std::abort();
    char* region = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(p) + huge - 1) & ~(huge - 1));
    madvise(region, huge, MADV_HUGEPAGE);   // without effect where THP is off: as wanted
    region[0] = 1;
    MPI_Barrier(MPI_COMM_WORLD);   // the touch reported here
    munmap(p, 2 * huge);
}

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    const std::string mode = argc > 1 ? argv[1] : "touch";
    if (mode == "mmap") own_mapping(rank);
    else if (mode == "huge") huge_page_region();
    else heap_block(rank, mode);
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0 && all == 0) std::printf("memory: ok\n");
    MPI_Finalize();
    return all != 0;
}
