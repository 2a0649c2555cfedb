! h5fz_fortran.f90 - write and read a float32 field through the h5fz filter
! from Fortran, with the h5fz module (api/fortran/h5fz.f90) and the HDF5
! Fortran API.
!
! /theta: the module's way. h5fz_register_filter_f registers the filter
! linked into the program (library mode: no plugin, no HDF5_PLUGIN_PATH)
! and h5fz_set_filter_f(dcpl, "abs=1e-3", hdferr) puts it on the dcpl from
! the spec text.
!
! /theta_words: the way of a program that does not link h5fz (it then
! needs the plugin on HDF5_PLUGIN_PATH, and HDF5's shared library: the
! plugin cannot bind to a libhdf5 linked statically, docs/cli.md): the
! words `h5fz cd-values "abs=1e-3"` prints under "Fortran:", with
! h5pset_filter_f. INTEGER is signed, so the word 3539053052 (the low half
! of the double 1e-3) is written as -755914244, the signed number with the
! same 32 bits; HDF5 hands the bits to the filter unchanged. Both datasets
! store the same bytes.
!
! usage: h5fz_fortran [OUT.h5]     (default h5fz_fortran.h5)
! Prints the max error and the ratio; exits with status 1 if an element is
! outside the bound, a dataset was stored uncompressed, or the two ways
! stored different sizes.
program h5fz_fortran
  use hdf5
  use h5fz
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
  integer(hsize_t) :: dims(3), chunk(3), stored, stored_words
  integer :: hdferr, i, j, k, failed
  real, allocatable :: field(:,:,:), back(:,:,:), back_words(:,:,:)
  real :: worst
  double precision :: ratio

  path = "h5fz_fortran.h5"
  if (command_argument_count() >= 1) call get_command_argument(1, path)

  ! Fortran is column-major: dims are given fastest first here, and C
  ! readers (h5dump, h5py) see the shape as nz x ny x nx.
  dims = [integer(hsize_t) :: nx, ny, nz]
  chunk = [integer(hsize_t) :: nx, ny, 4]
  allocate(field(nx, ny, nz), back(nx, ny, nz), back_words(nx, ny, nz))
  do k = 1, nz
    do j = 1, ny
      do i = 1, nx
        field(i, j, k) = 15.0 + 3.0 * sin(0.07 * i) * cos(0.05 * j) + 0.2 * k
      end do
    end do
  end do

  call h5open_f(hdferr)
  call check(hdferr, "h5open_f")
  call h5fz_register_filter_f(hdferr)
  call check_h5fz(hdferr, "h5fz_register_filter_f")

  call h5fcreate_f(trim(path), H5F_ACC_TRUNC_F, file, hdferr)
  call check(hdferr, "h5fcreate_f")
  call h5screate_simple_f(3, dims, space, hdferr)

  call h5pcreate_f(H5P_DATASET_CREATE_F, dcpl, hdferr)
  call h5pset_chunk_f(dcpl, 3, chunk, hdferr)
  call h5fz_set_filter_f(dcpl, "abs=1e-3", hdferr)
  call check_h5fz(hdferr, "h5fz_set_filter_f")
  call write_field("theta")
  call h5pclose_f(dcpl, hdferr)

  call h5pcreate_f(H5P_DATASET_CREATE_F, dcpl, hdferr)
  call h5pset_chunk_f(dcpl, 3, chunk, hdferr)
  call h5pset_filter_f(dcpl, h5fz_filter_id, flag_mandatory, int(11, size_t), cd_values, hdferr)
  call check(hdferr, "h5pset_filter_f")
  call write_field("theta_words")
  call h5pclose_f(dcpl, hdferr)

  call h5sclose_f(space, hdferr)
  call h5fclose_f(file, hdferr)

  call h5fopen_f(trim(path), H5F_ACC_RDONLY_F, file, hdferr)
  call check(hdferr, "h5fopen_f")
  call read_field("theta", back, stored)
  call read_field("theta_words", back_words, stored_words)
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
  if (stored_words /= stored .or. maxval(abs(back_words - back)) > 0.0) then
    write (*, '(a)') "h5fz_fortran: FAIL: the spec text and the cd_values words stored different data"
    failed = 1
  end if
  if (failed /= 0) stop 1
  write (*, '(a)') "h5fz_fortran: OK"

contains

  ! /name in file (the dataset space and dcpl above) from field
  subroutine write_field(name)
    character(len=*), intent(in) :: name
    call h5dcreate_f(file, name, H5T_IEEE_F32LE, space, dset, hdferr, dcpl)
    call check(hdferr, "h5dcreate_f " // name // " (the filter's set_local refused the dataset?)")
    call h5dwrite_f(dset, H5T_NATIVE_REAL, field, dims, hdferr)
    call check(hdferr, "h5dwrite_f " // name)
    call h5dclose_f(dset, hdferr)
  end subroutine write_field

  ! /name of the open file into values, with its stored size
  subroutine read_field(name, values, size)
    character(len=*), intent(in) :: name
    real, intent(out) :: values(:,:,:)
    integer(hsize_t), intent(out) :: size
    call h5dopen_f(file, name, dset, hdferr)
    call check(hdferr, "h5dopen_f " // name)
    call h5dread_f(dset, H5T_NATIVE_REAL, values, dims, hdferr)
    call check(hdferr, "h5dread_f " // name)
    call h5dget_storage_size_f(dset, size, hdferr)
    call h5dclose_f(dset, hdferr)
  end subroutine read_field

  ! an h5fz call's status: its one-line reason on failure
  subroutine check_h5fz(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    if (status /= 0) then
      write (*, '(4a)') "h5fz_fortran: FAIL: ", what, ": ", h5fz_last_error_f()
      stop 1
    end if
  end subroutine check_h5fz

  subroutine check(status, what)
    integer, intent(in) :: status
    character(len=*), intent(in) :: what
    if (status < 0) then
      write (*, '(2a)') "h5fz_fortran: FAIL: ", what
      stop 1
    end if
  end subroutine check

end program h5fz_fortran
