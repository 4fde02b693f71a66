// The SystemC threads' stacks in one arena: a few of the host's memory
// mappings for any number of threads, and a check that no stack overflowed.
//
// SystemC 2.3.4 with QuickThreads (Debian's libsystemc) makes each thread's
// stack with its own mmap() (sc_cor_qt.cpp, stack_alloc: anonymous, private,
// read-write, the requested size rounded up to pages; 256 KiB by default on
// x86-64, SC_DEFAULT_STACK_SIZE), protects the stack's lowest page as a red
// zone (sc_cor_qt::stack_protect: mprotect(stack, pagesize - 1, PROT_NONE),
// called by sc_thread_process::prepare_for_simulation) and unmaps it when
// the thread is destroyed (~sc_cor_qt: munmap(stack, size), after
// stack_protect(false)). Those three calls are the only mmap, mprotect and
// munmap calls in the library. Each thread thus costs two kernel VMAs, and
// Linux allows a process vm.max_map_count of them (65,530 by default, only
// root raises it): about 30,000 threads, where a 16 x 16 x 16 torus of QFDBs
// may have 114,688.
//
// This file's mmap, mprotect and munmap, defined in the executable, come
// before the C library's for every shared library (ELF symbol
// interposition, as tcmalloc's own mmap does). A call to mmap made from
// libsystemc's code (the caller's return address in the library's
// executable segment) with SystemC's arguments (no address, read-write,
// MAP_PRIVATE | MAP_ANONYMOUS, no file) gets a slot of the arena; every
// other call goes on to the next definition (dlsym RTLD_NEXT: tcmalloc's,
// AddressSanitizer's or the C library's). mprotect and munmap of an arena
// address are the red zone's protection (ignored) and the stack's release
// (its memory given back with MADV_DONTNEED, as munmap would, and its slot
// put on a free list: the next stack there is zeros, as a new mapping).
//
// The arena is anonymous MAP_NORESERVE memory mapped in chunks (64 MiB,
// doubling to 1 GiB; each placed below the previous one, where the kernel
// merges adjacent chunks into one VMA; MADV_NOHUGEPAGE, so that a stack's
// few touched pages are not made a 2 MiB page): 114,688 stacks of 256 KiB
// are 30 GiB of address space in at most 34 mappings, and only the pages
// the threads touch are memory, as before.
//
// Instead of the red zone, each slot has a zone below the stack that a
// thread must never write: the lowest page of SystemC's stack (its red zone,
// so that a thread has exactly the stack it has under SystemC) and
// kExtraZonePages more below it, 16 KiB in all. Nothing writes it: it stays
// the kernel's zero page, costing no memory, and any non-zero byte in it is
// a stack overflow. check() reads the zones of the live stacks (only the
// pages /proc/self/pagemap says were ever touched, or all of them when it
// cannot be read), and a stack's zone is read when its thread is
// destroyed. An overflow is reported, naming the thread, its stack size and
// how to give it more, and the run fails: its results cannot be trusted
// (an overflow beyond the zone writes the top of the stack below it, another
// thread's). Unlike the red zone, which stops the thread at the first byte
// beyond its stack with a segmentation fault and no message (SystemC
// installs no handler), the zone finds an overflow after the fact; it is
// four times as deep.
//
// The arena is used whenever it can be: in every vrdmasim run and test
// program that links this file (the sanitizer builds too: a slot's shadow
// memory is cleared when its stack is released, as AddressSanitizer's own
// munmap does). SystemC's own stacks, guard pages and all, are used when
// the environment sets VRDMASIM_STACK_GUARD_PAGES=1 (to stop a debugger at
// the overflowing function), when libsystemc is not a shared library of
// the process (its calls cannot be told apart) and when its threads are not
// QuickThreads coroutines (no sc_cor_pkg_qt: a pthreads build), and under
// valgrind (its address-space manager refuses the arena's chunks). check_thread_budget
// (thread_budget.hpp) counts what the mode in use maps: need_for().
#pragma once

#include <cstddef>
#include <string>

namespace vrdmasim::thread_stacks {

enum class Mode {
    Arena,   // this file's arena, a zone below each stack
    SystemC,   // SystemC's own mapping and guard page per stack
};

// The mode of this process, fixed at its first stack.
Mode mode();
// Why the mode is SystemC's ("" in the arena).
std::string why_systemc();

// What `threads` stacks of `stack_bytes` each (as requested of SystemC)
// take at most in this process's mode: memory mappings, address space, and
// whether the arena can hold them (at most kCapacity of slots; always in
// SystemC's mode).
struct Need {
    std::size_t mappings = 0;
    std::size_t bytes = 0;
    bool fits = true;
};
Need need_for(std::size_t threads, std::size_t stack_bytes);
// The arena's address space at most: 1 TiB, 4 million stacks of 256 KiB
// (a 16 x 16 x 16 torus of QFDBs needs 30 GiB).
std::size_t capacity_bytes();

// The SystemC default stack size (SC_DEFAULT_STACK_SIZE), in bytes.
std::size_t default_stack_bytes();

// "" if no stack has overflowed so far; else why the run cannot be trusted:
// the threads whose stacks overflowed (live ones now, and ended ones when
// they were destroyed), their stack sizes and how to give them more. Reads
// every live stack's zone: about 0.05 s per 100,000 stacks.
std::string check();

// check(), but not more often than every 10 s of host time nor for more
// than about 1 % of it ("" between checks): for a long run, between slices
// of its simulation.
std::string check_now_and_then();

// The arena's state, for tests and the docs' figures.
struct Usage {
    std::size_t live = 0;   // stacks in use
    std::size_t slots = 0;   // slots ever made (live and free)
    std::size_t chunks = 0;   // chunks mapped
    std::size_t bytes = 0;   // address space of the chunks
};
Usage usage();

// The thread whose stack holds `address` ("" if none known): how check()
// names a thread, for the tests.
std::string thread_of(const void* address);

}   // namespace vrdmasim::thread_stacks
