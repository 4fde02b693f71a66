! A Fortran MPI program (workloads/mpi/README.md "Fortran"): Open MPI's
! Fortran bindings call the C functions' PMPI_ names, and the preloaded
! library takes those calls back to its own. Through the `mpi` module:
! a ping-pong timed with MPI_Wtime, non-blocking sends and receives
! completed by MPI_Waitall, MPI_Sendrecv, MPI_Bcast and MPI_Allreduce
! (MPI_IN_PLACE too; MINLOC on MPI_2REAL, MAXLOC on
! MPI_2DOUBLE_PRECISION, sum on MPI_COMPLEX, prod on MPI_DOUBLE_COMPLEX),
! each result checked. Prints its timings and "fortran: ok".
program mpi_fortran
  use mpi
  implicit none
  integer, parameter :: n = 16384
  integer :: ierr, rank, size, i, left, right, failures, all
  integer :: reqs(2), st(MPI_STATUS_SIZE)
  integer, allocatable :: a(:), b(:)
  double precision :: t0, t1, total
  real :: pr(2, 2), pr_out(2, 2)
  double precision :: pd(2), pd_out(2)
  complex :: c(3), c_out(3)
  double complex :: z(2), z_out(2), w(2)
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, size, ierr)
  allocate(a(n), b(n))
  failures = 0
  left = mod(rank + size - 1, size)
  right = mod(rank + 1, size)
  ! Ping-pong of n integers (64 KiB) between ranks 0 and 1.
  a = rank
  t0 = MPI_Wtime()
  if (rank == 0) then
    call MPI_Send(a, n, MPI_INTEGER, 1, 1, MPI_COMM_WORLD, ierr)
    call MPI_Recv(b, n, MPI_INTEGER, 1, 2, MPI_COMM_WORLD, st, ierr)
    if (b(n) /= 1) failures = failures + 1
  else if (rank == 1) then
    call MPI_Recv(b, n, MPI_INTEGER, 0, 1, MPI_COMM_WORLD, st, ierr)
    if (b(1) /= 0 .or. st(MPI_SOURCE) /= 0) failures = failures + 1
    call MPI_Send(a, n, MPI_INTEGER, 0, 2, MPI_COMM_WORLD, ierr)
  end if
  t1 = MPI_Wtime()
  if (rank == 0) print '(a, f10.2, a)', 'fortran: ping-pong of 64 KiB in ', (t1 - t0) * 1d6, ' us'
  ! A ring: non-blocking, then sendrecv.
  do i = 1, n
    a(i) = rank * n + i
  end do
  call MPI_Irecv(b, n, MPI_INTEGER, left, 3, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(a, n, MPI_INTEGER, right, 3, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  if (b(n) /= left * n + n) failures = failures + 1
  call MPI_Sendrecv(a, n, MPI_INTEGER, right, 4, b, n, MPI_INTEGER, left, 4, MPI_COMM_WORLD, st, ierr)
  if (b(1) /= left * n + 1) failures = failures + 1
  ! Collectives.
  if (rank == 0) a = 7
  call MPI_Bcast(a, n, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
  if (a(n) /= 7) failures = failures + 1
  total = rank + 1
  call MPI_Allreduce(MPI_IN_PLACE, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (total /= size * (size + 1) / 2d0) failures = failures + 1
  ! Fortran's pair types (a REAL or DOUBLE PRECISION index) and complex
  ! types.
  pr(1, 1) = real(mod(rank + 1, size))
  pr(2, 1) = real(rank)
  pr(1, 2) = 0.0
  pr(2, 2) = real(rank)
  call MPI_Allreduce(pr, pr_out, 2, MPI_2REAL, MPI_MINLOC, MPI_COMM_WORLD, ierr)
  if (pr_out(1, 1) /= 0.0 .or. pr_out(2, 1) /= real(size - 1) .or. pr_out(1, 2) /= 0.0 .or. &
      pr_out(2, 2) /= 0.0) failures = failures + 1
  pd(1) = 2d0 * rank
  pd(2) = dble(rank)
  call MPI_Allreduce(pd, pd_out, 1, MPI_2DOUBLE_PRECISION, MPI_MAXLOC, MPI_COMM_WORLD, ierr)
  if (pd_out(1) /= 2d0 * (size - 1) .or. pd_out(2) /= dble(size - 1)) failures = failures + 1
  do i = 1, 3
    c(i) = cmplx(rank + i, -rank)
  end do
  call MPI_Allreduce(c, c_out, 3, MPI_COMPLEX, MPI_SUM, MPI_COMM_WORLD, ierr)
  do i = 1, 3
    if (c_out(i) /= cmplx(size * (size - 1) / 2 + size * i, -size * (size - 1) / 2)) failures = failures + 1
  end do
  z(1) = dcmplx(rank + 1, 1)
  z(2) = dcmplx(0, 1)
  w = dcmplx(1, 0)
  do i = 0, size - 1
    w(1) = w(1) * dcmplx(i + 1, 1)
    w(2) = w(2) * dcmplx(0, 1)
  end do
  call MPI_Allreduce(z, z_out, 2, MPI_DOUBLE_COMPLEX, MPI_PROD, MPI_COMM_WORLD, ierr)
  if (z_out(1) /= w(1) .or. z_out(2) /= w(2)) failures = failures + 1
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(failures, all, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. all == 0) print '(a)', 'fortran: ok'
  call MPI_Finalize(ierr)
  if (all /= 0) stop 1
end program mpi_fortran
