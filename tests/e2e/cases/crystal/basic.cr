# Reads lines of two integers and prints their sums; the line "crash"
# ends the program with exit status 3.
STDIN.each_line do |line|
  exit 3 if line == "crash"
  a, b = line.split.map(&.to_i)
  puts a + b
end
