package workspace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// prompter asks init's yes/no questions, one line each. Without a reader it
// takes every default, as -y does.
type prompter struct {
	in  *bufio.Reader
	out io.Writer
}

// maxReasks bounds how often one question is repeated after answers that
// are neither yes nor no.
const maxReasks = 3

// confirm asks question and returns the answer; an empty line, or the end
// of the input, is def.
func (p *prompter) confirm(question string, def bool) (bool, error) {
	if p.in == nil {
		return def, nil
	}
	hint := "[Y/n]"
	if !def {
		hint = "[y/N]"
	}
	for range maxReasks {
		fmt.Fprintf(p.out, "%s %s ", question, hint)
		line, err := p.in.ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return false, fmt.Errorf("reading the answer: %w", err)
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "y", "yes":
			return true, nil
		case "n", "no":
			return false, nil
		case "":
			if errors.Is(err, io.EOF) {
				fmt.Fprintln(p.out)
				p.in = nil // no more answers: the defaults from here on
			}
			return def, nil
		}
		if errors.Is(err, io.EOF) {
			break
		}
		fmt.Fprintln(p.out, "please answer y or n")
	}
	return false, fmt.Errorf("no yes/no answer to %q", question)
}
