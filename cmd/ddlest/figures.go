package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/figures"
)

func newFiguresCommand() *cobra.Command {
	var out string
	var only []string
	var list strings.Builder
	width := 0
	for _, f := range figures.All() {
		width = max(width, len(f.Name))
	}
	for _, f := range figures.All() {
		fmt.Fprintf(&list, "  %-*s  %s\n", width, f.Name, f.Title)
	}
	cmd := &cobra.Command{
		Use:   "figures --out DIR",
		Short: "Draw the seed papers' figures that ddlest reproduces: NAME.png and NAME.csv (the plotted numbers) each",
		Long: `figures writes, for each figure, DIR/NAME.png and DIR/NAME.csv holding exactly the points the PNG
shows (panel, series, x, y), each file written atomically. The numbers are the reproduction
library's (the same computations ddlest validate checks). --only picks figures.

Figures:
` + list.String(),
		Example: `  ddlest figures --out figs
  ddlest figures --out figs --only ramp-fig18`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if out == "" {
				return errs.Usage("figures needs --out DIR (the directory the PNGs and CSVs go to)")
			}
			var picked []figures.Figure
			for _, name := range only {
				f, ok := figures.Lookup(name)
				if !ok {
					return errs.Usage("--only %q is not a figure; valid: %s", name, joinNames(figures.Names()))
				}
				picked = append(picked, f)
			}
			if len(only) == 0 {
				picked = figures.All()
			}
			if err := writableDir(out); err != nil {
				return err
			}
			return figures.WriteAll(picked, out, func(f figures.Figure) {
				fmt.Fprintf(cmd.OutOrStdout(), "%s/%s.png, %s.csv: %s\n", strings.TrimRight(out, "/"), f.Name, f.Name, f.Title)
			})
		},
	}
	cmd.Flags().StringVar(&out, "out", "", "directory to write the figures to (created if missing)")
	cmd.Flags().StringSliceVar(&only, "only", nil, "figures to draw, comma-separated (default all): "+joinNames(figures.Names()))
	_ = cmd.RegisterFlagCompletionFunc("only", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return figures.Names(), cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// writableDir makes sure dir exists (creating it) and a file can be written in it, before any
// figure is computed: an unwritable --out is a usage error that leaves nothing behind.
func writableDir(dir string) error {
	if st, err := os.Stat(dir); err == nil && !st.IsDir() {
		return errs.Usage("--out %q is a file, not a directory", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return errs.Usage("--out %q cannot be created: %v", dir, err)
	}
	f, err := os.CreateTemp(dir, ".ddlest-probe-*")
	if err != nil {
		return errs.Usage("--out %q is not writable: %v", dir, err)
	}
	name := f.Name()
	f.Close()
	return os.Remove(name)
}
