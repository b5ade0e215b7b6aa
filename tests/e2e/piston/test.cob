*> free format, lower case, no sequence area
identification division.
program-id. says-ok.
data division.
working-storage section.
01 greeting pic x(2) value "OK".
procedure division.
    display greeting
    stop run.
