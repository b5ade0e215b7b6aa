package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
)

func main() {
	name, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	fmt.Println(greet(strings.TrimSpace(name)))
}
