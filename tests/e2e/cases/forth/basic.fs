\ Reads lines of two integers and prints their sums; the line "crash"
\ ends the program with exit status 3.
create buf 256 allot

: crash? ( addr u -- f ) s" crash" compare 0= ;

: main ( -- )
  begin buf 256 stdin read-line throw while
    buf swap 2dup crash? if 2drop 3 (bye) then
    evaluate + 0 .r cr
  repeat drop ;

main
