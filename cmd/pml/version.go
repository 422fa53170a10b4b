package main

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/pml-go/pml/internal/buildinfo"
)

// newVersionCmd prints which build this is (README "Commands").
func newVersionCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version",
		Short: "print the version, commit, build date, Go version and JS engine of this pml",
		Args: func(cmd *cobra.Command, args []string) error {
			if err := cobra.NoArgs(cmd, args); err != nil {
				return usageError(err)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			in := buildinfo.Read()
			if asJSON {
				return json.NewEncoder(cmd.OutOrStdout()).Encode(in)
			}
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "pml %s\ncommit:  %s\nbuilt:   %s\ngo:      %s\nengine:  %s\n",
				in.Version, in.Commit, in.BuildDate, in.GoVersion, in.Engine)
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "one JSON object")
	return cmd
}
