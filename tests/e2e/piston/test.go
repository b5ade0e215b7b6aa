package main

import (
	"fmt"
	"strings"
)

func main() {
	fmt.Println(strings.Join([]string{"O", "K"}, ""))
}
