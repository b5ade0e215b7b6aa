# Reverses each word read from stdin; the word "crash" raises.
STDIN.each_line do |line|
  w = line.strip
  raise ArgumentError, "crash requested" if w == "crash"
  puts w.reverse
end
