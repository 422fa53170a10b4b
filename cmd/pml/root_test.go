package main

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"

	"github.com/spf13/cobra"
)

// `pml --help` lists every command with a lowercase description, cobra's
// own help and completion included (issue 30, item 9).
func TestHelpDescriptionsLowercase(t *testing.T) {
	var out bytes.Buffer
	root := newRootCmd()
	root.SetArgs([]string{"--help"})
	root.SetOut(&out)
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		for _, sub := range c.Commands() {
			if r := []rune(sub.Short); len(r) > 0 && unicode.IsUpper(r[0]) {
				t.Errorf("%s: %q starts uppercase", sub.CommandPath(), sub.Short)
			}
			walk(sub)
		}
	}
	walk(root)
	for _, name := range []string{"help", "completion", "exec", "version"} {
		if !strings.Contains(out.String(), "\n  "+name) {
			t.Errorf("pml --help does not list %s:\n%s", name, out.String())
		}
	}
}

// docs/architecture.md names every command of cmd/pml (issue 30, item 9).
func TestArchitectureListsEveryCommand(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "architecture.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range newRootCmd().Commands() {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			continue
		}
		if !bytes.Contains(doc, []byte("`"+c.Name()+"`")) {
			t.Errorf("docs/architecture.md does not list `%s`", c.Name())
		}
	}
}

// A --file that cannot be read is a usage error: nothing ran, exit 4
// (issue 30, item 4).
func TestExecMissingFileIsUsage(t *testing.T) {
	root := newRootCmd()
	root.SetArgs([]string{"exec", "--file", filepath.Join(t.TempDir(), "nope.ts")})
	root.SetOut(io.Discard)
	root.SetErr(io.Discard)
	err := root.Execute()
	code, show := exitCode(err)
	if code != exitUsage || !show || !strings.Contains(err.Error(), "nope.ts") || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("exit %d (show %v): %v", code, show, err)
	}
}
