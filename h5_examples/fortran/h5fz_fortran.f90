! h5fz_fortran.f90 - write and read a float32 field through the h5fz filter
! from Fortran, with the HDF5 Fortran API (h5pset_filter_f).
!
! The cd_values are what `h5fz cd-values "abs=1e-3"` prints under
! "Fortran:": INTEGER is signed, so the word 3539053052 (the low half of
! the double 1e-3) is written as -755914244, the signed number with the
! same 32 bits; HDF5 hands the bits to the filter unchanged.
!
! usage: h5fz_fortran [OUT.h5]     (default h5fz_fortran.h5)
! Build against the shared libhdf5 (CMake's FindHDF5 does; by hand:
! `h5fc -shlib h5fz_fortran.f90`): the plugin cannot bind to a libhdf5
! linked statically into the program (docs/cli.md, cd-values).
! Run with HDF5_PLUGIN_PATH pointing at the plugin folder. Prints the max
! error and the ratio; exits with status 1 if an element is outside the
! bound or the dataset was stored uncompressed.
program h5fz_fortran
  use hdf5
  implicit none

  integer, parameter :: nx = 120, ny = 80, nz = 16
  integer, parameter :: h5fz_filter_id = 32770
  ! Mandatory (HDF5's C H5Z_FLAG_MANDATORY): a write fails rather than
  ! store a chunk uncompressed. HDF5 1.10's Fortran module names only
  ! H5Z_FLAG_OPTIONAL_F, so the 0 is written out.
  integer, parameter :: flag_mandatory = 0
  real, parameter :: bound = 1.0e-3
  ! from `h5fz cd-values "abs=1e-3"` (Fortran line)
  integer :: cd_values(11) = [ &
              1, 0, -755914244, 1062232653, 16384, 5, &
              1, 10, 11, 13, 30]

  character(len=1024) :: path
  integer(hid_t) :: file, space, dcpl, dset
  integer(hsize_t) :: dims(3), chunk(3), stored
  integer :: hdferr, i, j, k, failed
  logical :: have_filter
  real, allocatable :: field(:,:,:), back(:,:,:)
  real :: worst
  double precision :: ratio

  path = "h5fz_fortran.h5"
  if (command_argument_count() >= 1) call get_command_argument(1, path)

  ! Fortran is column-major: dims are given fastest first here, and C
  ! readers (h5dump, h5py) see the shape as nz x ny x nx.
  dims = [integer(hsize_t) :: nx, ny, nz]
  chunk = [integer(hsize_t) :: nx, ny, 4]
  allocate(field(nx, ny, nz), back(nx, ny, nz))
  do k = 1, nz
    do j = 1, ny
      do i = 1, nx
        field(i, j, k) = 15.0 + 3.0 * sin(0.07 * i) * cos(0.05 * j) + 0.2 * k
      end do
    end do
  end do

  call h5open_f(hdferr)
  call check(hdferr, "h5open_f")
  ! Loads the plugin from HDF5_PLUGIN_PATH; false when it is not found.
  call h5zfilter_avail_f(h5fz_filter_id, have_filter, hdferr)
  if (.not. have_filter) then
    write (*, '(a)') "h5fz_fortran: filter 32770 not available: set HDF5_PLUGIN_PATH to the h5fz plugin folder"
    stop 1
  end if

  call h5fcreate_f(trim(path), H5F_ACC_TRUNC_F, file, hdferr)
  call check(hdferr, "h5fcreate_f")
  call h5screate_simple_f(3, dims, space, hdferr)
  call h5pcreate_f(H5P_DATASET_CREATE_F, dcpl, hdferr)
  call h5pset_chunk_f(dcpl, 3, chunk, hdferr)
  call h5pset_filter_f(dcpl, h5fz_filter_id, flag_mandatory, int(11, size_t), cd_values, hdferr)
  call check(hdferr, "h5pset_filter_f")
  call h5dcreate_f(file, "theta", H5T_IEEE_F32LE, space, dset, hdferr, dcpl)
  call check(hdferr, "h5dcreate_f (the filter's set_local refused the dataset?)")
  call h5dwrite_f(dset, H5T_NATIVE_REAL, field, dims, hdferr)
  call check(hdferr, "h5dwrite_f")
  call h5dclose_f(dset, hdferr)
  call h5pclose_f(dcpl, hdferr)
  call h5sclose_f(space, hdferr)
  call h5fclose_f(file, hdferr)

  call h5fopen_f(trim(path), H5F_ACC_RDONLY_F, file, hdferr)
  call check(hdferr, "h5fopen_f")
  call h5dopen_f(file, "theta", dset, hdferr)
  call h5dread_f(dset, H5T_NATIVE_REAL, back, dims, hdferr)
  call check(hdferr, "h5dread_f")
  call h5dget_storage_size_f(dset, stored, hdferr)
  call h5dclose_f(dset, hdferr)
  call h5fclose_f(file, hdferr)
  call h5close_f(hdferr)

  worst = maxval(abs(field - back))
  ratio = dble(nx) * dble(ny) * dble(nz) * 4d0 / dble(max(stored, 1_hsize_t))
  failed = 0
  write (*, '(a, es10.3, a, es9.2, a, f6.2)') "h5fz_fortran: max_err ", worst, "  bound ", bound, &
      "  ratio ", ratio
  if (.not. (worst <= bound)) then
    write (*, '(a)') "h5fz_fortran: FAIL: an element is outside the bound"
    failed = 1
  end if
  if (ratio <= 1d0) then
    write (*, '(a)') "h5fz_fortran: FAIL: the dataset was stored uncompressed"
    failed = 1
  end if
  if (failed /= 0) stop 1
  write (*, '(a)') "h5fz_fortran: OK"

contains

  subroutine check(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    if (status < 0) then
      write (*, '(2a)') "h5fz_fortran: FAIL: ", what
      stop 1
    end if
  end subroutine check

end program h5fz_fortran
