word = ['O', 'K'].join
puts word
