! h5fz.f90 - the Fortran module of h5fz (ISO_C_BINDING over
! api/h5fz_dataset.h): the library-mode registration and the spec text
! onto a dataset creation property list, in the style of HDF5's Fortran
! API (a last argument hdferr: 0 on success, -1 on failure).
!
!   use hdf5
!   use h5fz
!   call h5open_f(hdferr)
!   call h5fz_register_filter_f(hdferr)            ! no plugin, no HDF5_PLUGIN_PATH
!   call h5pcreate_f(H5P_DATASET_CREATE_F, dcpl, hdferr)
!   call h5pset_chunk_f(dcpl, 3, chunk, hdferr)
!   call h5fz_set_filter_f(dcpl, "abs=1e-3", hdferr)
!   if (hdferr /= 0) write (*, '(a)') h5fz_last_error_f()
!
! Link the program with h5fz_dataset (C, with its libraries: README,
! "Building a program against it") and HDF5's Fortran and C libraries.
! docs/dataset_api.md, "Fortran".
module h5fz
  use, intrinsic :: iso_c_binding, only: c_int, c_int64_t, c_char, c_null_char, c_ptr, c_associated, c_f_pointer, &
                                         c_size_t
  use hdf5, only: hid_t
  implicit none
  private
  public :: h5fz_register_filter_f, h5fz_set_filter_f, h5fz_last_error_f

  ! HDF5 (1.10 and newer) makes hid_t a 64-bit integer in C and Fortran;
  ! the interfaces below pass it by value as C's int64_t.
  integer, parameter :: c_hid_t = c_int64_t

  interface
    function c_register_filter() bind(C, name="h5fz_register_filter") result(rc)
      import :: c_int
      integer(c_int) :: rc
    end function c_register_filter

    function c_set_filter(dcpl, spec) bind(C, name="h5fz_set_filter") result(rc)
      import :: c_int, c_hid_t, c_char
      integer(c_hid_t), value :: dcpl
      character(kind=c_char), dimension(*), intent(in) :: spec
      integer(c_int) :: rc
    end function c_set_filter

    function c_last_error() bind(C, name="h5fz_last_error") result(msg)
      import :: c_ptr
      type(c_ptr) :: msg
    end function c_last_error

    function c_strlen(s) bind(C, name="strlen") result(n)
      import :: c_ptr, c_size_t
      type(c_ptr), value :: s
      integer(c_size_t) :: n
    end function c_strlen
  end interface

contains

  ! Register the h5fz filter linked into the program with its libhdf5
  ! (h5fz_register_filter): after h5open_f, before the first dataset.
  ! hdferr: 0, or -1 with the reason in h5fz_last_error_f().
  subroutine h5fz_register_filter_f(hdferr)
    integer, intent(out) :: hdferr
    hdferr = merge(0, -1, c_register_filter() == 0)
  end subroutine h5fz_register_filter_f

  ! Put the h5fz filter with the spec `spec` ("abs=1e-3", docs/spec.md) on
  ! the dataset creation property list dcpl, mandatory (h5fz_set_filter):
  ! what h5pset_filter_f with the words of `h5fz cd-values` does. Trailing
  ! blanks of spec are ignored. hdferr: 0, or -1 with the reason (one line)
  ! in h5fz_last_error_f().
  subroutine h5fz_set_filter_f(dcpl, spec, hdferr)
    integer(hid_t), intent(in) :: dcpl
    character(len=*), intent(in) :: spec
    integer, intent(out) :: hdferr
    hdferr = merge(0, -1, c_set_filter(int(dcpl, c_hid_t), trim(spec) // c_null_char) == 0)
  end subroutine h5fz_set_filter_f

  ! Why the last h5fz call of this thread failed ("" after a success).
  function h5fz_last_error_f() result(msg)
    character(len=:), allocatable :: msg
    type(c_ptr) :: p
    character(kind=c_char), pointer :: chars(:)
    integer :: i, n
    p = c_last_error()
    if (.not. c_associated(p)) then
      msg = ""
      return
    end if
    n = int(c_strlen(p))
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: msg)
    do i = 1, n
      msg(i:i) = chars(i)
    end do
  end function h5fz_last_error_f

end module h5fz
