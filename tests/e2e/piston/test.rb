word = %w[O K].join
puts word
