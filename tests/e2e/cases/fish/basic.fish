# Reads lines of two integers and prints their sums; the line "crash"
# ends the program with exit status 3.
while read -l a b
    if test "$a" = crash
        exit 3
    end
    math $a + $b
end
