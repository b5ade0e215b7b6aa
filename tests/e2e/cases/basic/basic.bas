rem Reads lines of two integers and prints their sums; the line "crash"
rem ends the program with exit status 3.
dim w$(2)
while true
  line input "" a$
  if a$ = "" break
  if a$ = "crash" exit 3
  n = split(a$, w$(), " ")
  print val(w$(1)) + val(w$(2))
wend
