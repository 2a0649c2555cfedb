! test_fortran_module.f90 - the h5fz Fortran module (api/fortran/h5fz.f90):
! with no plugin on the plugin path the filter is unknown until
! h5fz_register_filter_f (library mode), then known; h5fz_set_filter_f puts
! h5fz alone on a dcpl (a spec in a blank-padded variable too), and a bad
! spec, a spec that sets the dtype, or a handle that is not a dcpl give
! hdferr -1 with h5fz_last_error_f's one-line reason, leaving no filter.
! Exit status 1 on any failure; prints "test_fortran_module: OK".
program test_fortran_module
  use hdf5
  use h5fz
  implicit none
  integer, parameter :: h5fz_filter_id = 32770
  integer(hid_t) :: dcpl, fapl
  integer :: hdferr, nfilters, failures
  logical :: avail
  character(len=40) :: padded

  failures = 0
  call h5open_f(hdferr)
  call h5zfilter_avail_f(h5fz_filter_id, avail, hdferr)
  call expect(.not. avail, "the filter is available before registering (is a plugin on HDF5_PLUGIN_PATH?)")
  call h5fz_register_filter_f(hdferr)
  call expect(hdferr == 0, "h5fz_register_filter_f: " // h5fz_last_error_f())
  call h5zfilter_avail_f(h5fz_filter_id, avail, hdferr)
  call expect(avail, "the filter is not available after h5fz_register_filter_f")

  call h5pcreate_f(H5P_DATASET_CREATE_F, dcpl, hdferr)
  padded = "abs=1e-3 delta zigzag bitpack"
  call h5fz_set_filter_f(dcpl, padded, hdferr)
  call expect(hdferr == 0, "h5fz_set_filter_f(padded): " // h5fz_last_error_f())
  call h5pget_nfilters_f(dcpl, nfilters, hdferr)
  call expect(nfilters == 1, "a good spec left other than one filter")
  call h5pclose_f(dcpl, hdferr)

  call refused("abs=1e-3 zigzag nosuchop", "unknown op 'nosuchop'")
  call refused("abs=1e-3 dtype=f64", "may not set dtype")
  call refused("abs=", "not a number")

  call h5pcreate_f(H5P_FILE_ACCESS_F, fapl, hdferr)
  call h5eset_auto_f(0, hdferr)
  call h5fz_set_filter_f(fapl, "abs=1e-3", hdferr)
  call expect(hdferr == -1, "a file access plist was taken for a dcpl")
  call expect(index(h5fz_last_error_f(), "not a dataset creation property list") > 0, &
              "fapl: message '" // h5fz_last_error_f() // "'")
  call h5pclose_f(fapl, hdferr)
  call h5close_f(hdferr)

  if (failures /= 0) then
    write (*, '(a, i0, a)') "test_fortran_module: ", failures, " failures"
    stop 1
  end if
  write (*, '(a)') "test_fortran_module: OK"

contains

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      write (*, '(2a)') "FAIL: ", what
      failures = failures + 1
    end if
  end subroutine expect

  ! spec is refused with hdferr -1, a message holding want, and no filter set
  subroutine refused(spec, want)
    character(len=*), intent(in) :: spec, want
    integer(hid_t) :: p
    integer :: err, n
    call h5pcreate_f(H5P_DATASET_CREATE_F, p, err)
    call h5fz_set_filter_f(p, spec, err)
    call expect(err == -1, "'" // spec // "' was accepted")
    call expect(index(h5fz_last_error_f(), want) > 0, "'" // spec // "': message '" // h5fz_last_error_f() // "'")
    call h5pget_nfilters_f(p, n, err)
    call expect(n == 0, "'" // spec // "' was refused but left a filter")
    write (*, '(4a)') "refused as it should: ", spec, " -> ", h5fz_last_error_f()
    call h5pclose_f(p, err)
  end subroutine refused

end program test_fortran_module
