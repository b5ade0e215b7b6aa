! Reads a line of two integers and prints their sum; "crash" ends with
! exit status 3.
program main
  implicit none
  character(len=256) :: line
  integer(kind=8) :: a, b

  read (*, '(A)') line
  if (trim(line) == 'crash') then
    error stop 3
  end if
  read (line, *) a, b
  print '(I0)', a + b
end program main
