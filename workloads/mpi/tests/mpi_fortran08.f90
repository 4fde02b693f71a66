! The same through the `mpi_f08` module (workloads/mpi/README.md
! "Fortran"): its bindings reach the C functions' PMPI_ names through
! Open MPI's mpif.h bindings. A ring of 4 KiB, an allreduce, each result
! checked; prints the ring's simulated time and "fortran08: ok".
program mpi_fortran08
  use mpi_f08
  implicit none
  integer, parameter :: n = 1024
  integer :: rank, size, left, right, failures, all
  integer :: a(n), b(n)
  type(MPI_Request) :: reqs(2)
  double precision :: t0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, size)
  failures = 0
  left = mod(rank + size - 1, size)
  right = mod(rank + 1, size)
  a = rank
  t0 = MPI_Wtime()
  call MPI_Irecv(b, n, MPI_INTEGER, left, 1, MPI_COMM_WORLD, reqs(1))
  call MPI_Isend(a, n, MPI_INTEGER, right, 1, MPI_COMM_WORLD, reqs(2))
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE)
  if (b(n) /= left) failures = failures + 1
  if (rank == 0) print '(a, f10.2, a)', 'fortran08: ring of 4 KiB in ', (MPI_Wtime() - t0) * 1d6, ' us'
  call MPI_Allreduce(failures, all, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0 .and. all == 0) print '(a)', 'fortran08: ok'
  call MPI_Finalize()
  if (all /= 0) stop 1
end program mpi_fortran08
