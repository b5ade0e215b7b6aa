# Echoes stdin back unchanged.
STDOUT.write(STDIN.read)
