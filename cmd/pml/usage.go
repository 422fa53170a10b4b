package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/pml-go/pml/internal/editdist"
)

// flagError is a bad flag as a usage error (exit 4, README "Commands"), with
// the closest flag of the command when the flag is unknown, the way cobra
// already suggests commands.
func flagError(cmd *cobra.Command, err error) error {
	name, ok := unknownFlag(err)
	if !ok {
		return usageError(err)
	}
	if near := nearestFlag(cmd, name); near != "" {
		return usageError(fmt.Errorf("%w (did you mean --%s?)", err, near))
	}
	return usageError(fmt.Errorf("%w (pml %s --help lists the flags)", err, strings.TrimPrefix(cmd.CommandPath(), "pml ")))
}

// unknownFlag is the long flag name pflag's "unknown flag: --name" error
// is about. pflag has no error type for it, so its message is read.
func unknownFlag(err error) (string, bool) {
	name, ok := strings.CutPrefix(err.Error(), "unknown flag: --")
	if !ok || name == "" || strings.ContainsAny(name, " \n") {
		return "", false
	}
	return name, true
}

// nearestFlag is cmd's flag (its own or inherited) closest to name, if it
// is close enough to be a likely typo: at most a third of the name's length,
// and at least 2 edits allowed (as internal/jsonkeys suggests config keys).
func nearestFlag(cmd *cobra.Command, name string) string {
	best, bestD := "", max(2, len(name)/3)+1
	visit := func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		if d := editdist.Levenshtein(strings.ToLower(name), f.Name); d < bestD {
			best, bestD = f.Name, d
		}
	}
	cmd.Flags().VisitAll(visit)
	cmd.InheritedFlags().VisitAll(visit)
	return best
}

// unknownCommand is the usage error of `pml NAME` for a NAME that is no
// command, with cobra's suggestions.
func unknownCommand(root *cobra.Command, name string) error {
	msg := fmt.Sprintf("unknown command %q for %q", name, root.CommandPath())
	if root.SuggestionsMinimumDistance <= 0 {
		root.SuggestionsMinimumDistance = 2 // what cobra's own message uses
	}
	if s := root.SuggestionsFor(name); len(s) > 0 {
		msg += fmt.Sprintf(" (did you mean %s?)", strings.Join(s, " or "))
	} else {
		msg += " (pml --help lists the commands)"
	}
	return usageError(errors.New(msg))
}
