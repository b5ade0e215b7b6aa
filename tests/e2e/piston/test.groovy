def word = ['O', 'K'].join('')
println word
