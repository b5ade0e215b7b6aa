program says_ok
  implicit none
  character(len=2) :: word
  word = 'O' // 'K'
  write (*, '(a)') word
end program says_ok
