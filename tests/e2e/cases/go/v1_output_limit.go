package main

import (
	"bufio"
	"os"
	"strings"
)

func main() {
	w := bufio.NewWriter(os.Stdout)
	line := strings.Repeat("y", 79) + "\n"
	for {
		if _, err := w.WriteString(line); err != nil {
			os.Exit(1)
		}
	}
}
