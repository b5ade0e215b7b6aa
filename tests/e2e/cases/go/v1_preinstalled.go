package main

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"golang.org/x/text/cases"
	"golang.org/x/text/language"
)

func main() {
	data, err := os.ReadFile("words.txt")
	if err != nil {
		panic(err)
	}
	words := strings.Fields(string(data))
	slices.Sort(words)
	fmt.Println(cases.Title(language.English).String(strings.Join(words, " ")))
}
