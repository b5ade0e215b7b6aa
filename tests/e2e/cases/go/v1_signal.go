package main

import "runtime/debug"

// A nil pointer write is a real SIGSEGV; with the "crash" traceback level
// the runtime does not exit with status 2 but dies of SIGABRT.
func main() {
	debug.SetTraceback("crash")
	var p *int
	*p = 1
}
