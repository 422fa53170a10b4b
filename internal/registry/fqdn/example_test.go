package fqdn_test

import (
	"fmt"

	"github.com/pml-go/pml/internal/registry/fqdn"
)

func ExampleParse() {
	n, err := fqdn.Parse("pml.std.filesystem.read_file.b2c4")
	if err != nil {
		panic(err)
	}
	fmt.Println(n.Namespace, n.Action, n.Hash)
	fmt.Println(n.Base())
	// Output:
	// filesystem read_file b2c4
	// pml.std.filesystem.read_file
}

func ExampleForCode() {
	n, integrity := fqdn.ForCode("pml", "std", "json", "parse", "")
	fmt.Println(n)
	fmt.Println(integrity[:12] + "…")
	// Output:
	// pml.std.json.parse.e3b0
	// sha256-e3b0c…
}
