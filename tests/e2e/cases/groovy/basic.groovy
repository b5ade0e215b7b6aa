// Reads a line of two integers and prints their sum; "crash" ends with
// exit status 3.
def line = System.in.newReader().readLine().trim()
if (line == 'crash')
    System.exit(3)
def (a, b) = line.split(/\s+/).collect { it as long }
println(a + b)
