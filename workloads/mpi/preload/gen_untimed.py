#!/usr/bin/env python3
"""Writes the preloaded library's wrappers of every MPI function it does
not time (workloads/mpi/README.md "What is timed"): each reports the call
to the simulation, which refuses it (the run stops with exit 2 naming it)
or counts it, as mpi.untimed says, and then passes it to the real MPI.

The functions are read from the installed mpi.h, through the C
preprocessor, so that the list is the MPI the program links against and
none is missed. Excluded: the calls preload/calls.cpp, windows.cpp and the others time
(and the few windows.cpp refuses itself), and the calls
that are local by the MPI standard (a rank's own queries, datatypes,
groups, attributes, errors, info objects: nothing to time on the network;
their CPU time counts as the program's compute).

It also writes, for every MPI function this library defines (timed or
not), an interposer of its PMPI_ name: Open MPI's Fortran bindings call
the C functions' PMPI_ names, so a Fortran program's calls would pass this
library by. A PMPI_ call from those bindings or from the program's own
code goes to this library's MPI_ function instead; one from Open MPI's C
library or this library goes to the real PMPI_ function
(libraries.hpp, wrapped_caller).

usage: gen_untimed.py CPP_COMMAND_WITH_FLAGS... --out FILE
"""
import re
import subprocess
import sys

TIMED = {
    'Init', 'Init_thread', 'Finalize', 'Abort', 'Wtime', 'Wtick', 'Send', 'Recv', 'Isend', 'Irecv', 'Wait',
    'Waitall', 'Test', 'Sendrecv', 'Waitany', 'Testany', 'Testall', 'Waitsome', 'Testsome', 'Probe', 'Iprobe', 'Barrier', 'Bcast', 'Reduce', 'Allreduce', 'Allgather', 'Alltoall',
    'Comm_split', 'Comm_dup', 'Comm_create', 'Cart_create', 'Comm_free', 'Scan', 'Exscan', 'Cancel', 'Gather', 'Scatter', 'Request_free',
    # One-sided (windows.cpp).
    'Win_create', 'Win_allocate', 'Win_free', 'Put', 'Get', 'Accumulate', 'Fetch_and_op', 'Compare_and_swap',
    'Get_accumulate', 'Rput', 'Rget', 'Raccumulate', 'Rget_accumulate',
    'Win_fence', 'Win_lock', 'Win_unlock', 'Win_lock_all', 'Win_unlock_all', 'Win_flush', 'Win_flush_all',
    'Win_flush_local', 'Win_flush_local_all', 'Win_post', 'Win_start', 'Win_complete', 'Win_wait', 'Win_test',
    # The v-variants and reduce-scatter (vector_calls.cpp, reduce_scatter_calls.cpp).
    'Gatherv', 'Scatterv', 'Allgatherv', 'Alltoallv', 'Reduce_scatter', 'Reduce_scatter_block',
    # The non-blocking collectives (nonblocking_calls.cpp).
    'Ibarrier', 'Ibcast', 'Ireduce', 'Iallreduce', 'Iscan', 'Iexscan', 'Igather', 'Iscatter', 'Iallgather',
    'Ialltoall', 'Igatherv', 'Iscatterv', 'Iallgatherv', 'Ialltoallv', 'Ireduce_scatter', 'Ireduce_scatter_block',
}
LOCAL_PREFIXES = (
    'Type_', 'Group_', 'Info_', 'Errhandler_', 'Error_', 'Add_error_', 'Op_', 'Keyval_', 'Attr_', 'Pack',
    'Unpack', 'Status_', 'Aint_', 'Win_get_attr', 'Win_set_attr', 'Win_get_name', 'Win_set_name',
    'Comm_get_attr', 'Comm_set_attr', 'Comm_delete_attr', 'Comm_create_keyval', 'Comm_free_keyval',
    'Comm_get_name', 'Comm_set_name', 'Comm_get_errhandler', 'Comm_set_errhandler', 'Comm_call_errhandler',
    'Comm_create_errhandler', 'Comm_get_info', 'Comm_set_info', 'Cart_coords', 'Cart_rank', 'Cart_get',
    'Win_get_group', 'Win_get_info', 'Win_set_info', 'Win_get_errhandler', 'Win_set_errhandler',
    'Win_call_errhandler', 'Win_create_errhandler', 'Win_create_keyval', 'Win_free_keyval', 'Win_delete_attr',
    'Win_sync', 'Win_shared_query',
    'Cart_shift', 'Cartdim_get', 'Graph_get', 'Graphdims_get', 'Graph_neighbors',
    'T_',
)
LOCAL_SUFFIXES = ('_c2f', '_f2c')
LOCAL = {
    'Comm_rank', 'Comm_size', 'Comm_compare', 'Comm_test_inter', 'Comm_remote_size', 'Comm_group',
    'Comm_remote_group', 'Get_count', 'Get_elements', 'Get_elements_x', 'Get_processor_name', 'Get_version',
    'Get_library_version', 'Test_cancelled', 'Initialized', 'Finalized', 'Query_thread', 'Is_thread_main', 'Get_address',
    'Address', 'Pcontrol', 'Alloc_mem', 'Free_mem', 'Buffer_attach', 'Buffer_detach', 'Dims_create',
    'Topo_test', 'Graph_neighbors_count', 'Dist_graph_neighbors', 'Dist_graph_neighbors_count',
}


def local(name):
    return name in LOCAL or name.startswith(LOCAL_PREFIXES) or name.endswith(LOCAL_SUFFIXES)


def arg_names(params):
    params = params.strip()
    if params in ('', 'void'):
        return []
    names = []
    for p in params.split(','):
        p = re.sub(r'\[[^\]]*\]', '', p).strip()
        m = re.search(r'(\w+)\s*$', p)
        if not m:
            return None
        names.append(m.group(1))
    return names


def interposer(result, full, params, names):
    args = ", ".join(names)
    return (f'{result} P{full}({params}) {{\n'
            f'    static const auto real = reinterpret_cast<decltype(&P{full})>(dlsym(RTLD_NEXT, "P{full}"));\n'
            f'    if (vrdmasim::mpipreload::wrapped_caller(__builtin_return_address(0))) return {full}({args});\n'
            f'    return real({args});\n}}\n')


def main():
    args = sys.argv[1:]
    out = args[args.index('--out') + 1]
    cpp = args[:args.index('--out')]
    text = subprocess.run(cpp, input='#include <mpi.h>\n', capture_output=True, text=True, check=True).stdout
    text = ' '.join(text.split())
    decl = re.compile(r'^(?:extern )?(?:__attribute__ ?\(\(.*?\)\) )*int (MPI_(\w+)) ?\(([^()]*)\)( __attribute__.*)?$')
    wrappers = []
    interposers = []
    seen = set()
    for statement in text.replace('}', ';').split(';'):
        m = decl.match(statement.strip())
        if not m:
            continue
        full, name, params, attrs = m.group(1), m.group(2), m.group(3), m.group(4) or ''
        if full in seen or local(name) or 'removed' in attrs or '...' in params:
            continue
        names = arg_names(params)
        if names is None:
            sys.exit(f'gen_untimed.py: cannot read the parameters of {full}({params})')
        seen.add(full)
        if name not in TIMED:
            wrappers.append(f'int {full}({params}) {{\n'
                            f'    vrdmasim::mpipreload::untimed("{full}");\n'
                            f'    return P{full}({", ".join(names)});\n}}\n')
        interposers.append(interposer('int', full, params, names))
    for name in ('Wtime', 'Wtick'):   # the two that return a double
        interposers.append(interposer('double', 'MPI_' + name, 'void', []))
    missing = sorted(n for n in TIMED if 'MPI_' + n not in seen and n not in ('Wtime', 'Wtick'))
    if missing:
        sys.exit(f'gen_untimed.py: timed functions not found in mpi.h: {missing}')
    wrappers += interposers
    if len(wrappers) < 100:
        sys.exit(f'gen_untimed.py: only {len(wrappers)} MPI functions found in mpi.h: is it the MPI header?')
    with open(out + '.tmp', 'w') as f:
        f.write('// Generated by workloads/mpi/preload/gen_untimed.py from mpi.h: do not edit.\n'
                '#include <dlfcn.h>\n#include <mpi.h>\n\n#include "workloads/mpi/preload/channel.hpp"\n'
                '#include "workloads/mpi/preload/libraries.hpp"\n\nextern "C" {\n\n')
        f.write('\n'.join(wrappers))
        f.write('\n}   // extern "C"\n')
    import os
    os.replace(out + '.tmp', out)


if __name__ == '__main__':
    main()
