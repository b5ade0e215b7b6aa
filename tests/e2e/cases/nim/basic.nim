# Reads lines of two integers and prints their sums; the line "crash"
# ends the program with exit status 3.
import strutils

for line in stdin.lines:
  if line == "crash":
    quit(3)
  let parts = line.splitWhitespace()
  echo parseInt(parts[0]) + parseInt(parts[1])
