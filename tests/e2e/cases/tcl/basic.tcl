# Reads lines of two integers and prints their sums; the line "crash"
# ends the program with exit status 3.
while {[gets stdin line] >= 0} {
    if {$line eq "crash"} {
        exit 3
    }
    lassign $line a b
    puts [expr {$a + $b}]
}
