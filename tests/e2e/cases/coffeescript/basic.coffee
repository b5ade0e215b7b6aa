# Reverses each line of stdin; "crash" throws.
input = require('fs').readFileSync(0, 'utf8')
for line in input.split('\n') when line.trim() isnt ''
  w = line.trim()
  throw new Error('crash requested') if w is 'crash'
  console.log w.split('').reverse().join('')
