# Reads lines of two integers and prints their sums; the line "crash"
# ends the program with exit status 3.
con <- file("stdin")
lines <- readLines(con)
close(con)
for (line in lines) {
  if (line == "crash") quit(status = 3)
  v <- as.integer(strsplit(line, " ", fixed = TRUE)[[1]])
  cat(sum(v), "\n", sep = "")
}
