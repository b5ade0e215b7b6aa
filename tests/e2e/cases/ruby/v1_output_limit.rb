loop do
  puts "y" * 79
end
