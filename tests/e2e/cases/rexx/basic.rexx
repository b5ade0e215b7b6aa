/* Reads lines of two integers and prints their sums; the line "crash"
   ends the program with exit status 3. */
do while lines() > 0
  line = linein()
  if line = '' then leave
  parse var line a b
  if a = 'crash' then exit 3
  say a + b
end
