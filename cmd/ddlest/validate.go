package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
)

var validateFormats = []string{"table", "json", "csv", "markdown"}

func newValidateCommand() *cobra.Command {
	var (
		measured bool
		f        string
	)
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Compare ddlest's estimates with public measured runs (--measured: nccl-tests logs and published training iterations)",
		Long: `validate --measured prices every public measured run of configs/measured.json on the cluster
that describes its hardware and prints the measurement, ddlest's estimate and the error
(estimate − measured) / measured, then per set the mean absolute percentage error, the largest
error and Spearman's rank correlation. Each row names its source exactly (thread, post, author,
date); no row has a setting fitted to it. --format markdown is README's accuracy table.`,
		Example: `  ddlest validate --measured
  ddlest validate --measured --format markdown`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !measured {
				return errs.Usage("validate needs --measured (the comparison with public measured runs; the papers' reproductions are go test ./internal/repro)")
			}
			if !slices.Contains(validateFormats, f) {
				return errs.Usage("--format %q is not valid; valid: %s", f, joinNames(validateFormats))
			}
			rep, err := job.ValidateMeasured()
			if err != nil {
				return err
			}
			return writeMeasured(cmd.OutOrStdout(), rep, f)
		},
	}
	cmd.Flags().BoolVar(&measured, "measured", false, "compare with the public measured runs (configs/measured.json)")
	cmd.Flags().StringVar(&f, "format", "table", "output format: "+joinNames(validateFormats))
	_ = cmd.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return validateFormats, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

// writeMeasured renders the report; every number is finite (estimates are priced collectives).
func writeMeasured(w io.Writer, rep job.MeasuredReport, f string) error {
	switch f {
	case "json":
		e := json.NewEncoder(w)
		e.SetIndent("", "  ")
		return e.Encode(rep)
	case "csv":
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"set", "id", "case", "metric", "measured", "estimate", "error", "algorithm", "source"})
		for _, r := range rep.Rows {
			_ = cw.Write([]string{r.Set, r.ID, r.Case, r.Metric, g(r.Measured), g(r.Estimate), g(r.Error), r.Algorithm, r.Source})
		}
		cw.Flush()
		return cw.Error()
	case "markdown":
		fmt.Fprintln(w, "| set | source | case | measured | ddlest | error |")
		fmt.Fprintln(w, "|---|---|---|---:|---:|---:|")
		for _, r := range rep.Rows {
			fmt.Fprintf(w, "| %s | %s | %s | %s | %s | %+.1f%% |\n", r.Set, r.ID, r.Case, human(r.Metric, r.Measured), human(r.Metric, r.Estimate), 100*r.Error)
		}
		fmt.Fprintln(w)
		fmt.Fprintln(w, "| set | rows | MAPE | max error | Spearman |")
		fmt.Fprintln(w, "|---|---:|---:|---:|---:|")
		for _, s := range rep.Sets {
			fmt.Fprintf(w, "| %s | %d | %.1f%% | %.1f%% | %.3f |\n", s.Set, s.Rows, 100*s.MAPE, 100*s.MaxError, s.Spearman)
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "set\tsource\tcase\tmeasured\tddlest\terror\talgorithm\t")
	for _, r := range rep.Rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%+.1f%%\t%s\t\n", r.Set, r.ID, r.Case, human(r.Metric, r.Measured), human(r.Metric, r.Estimate), 100*r.Error, r.Algorithm)
	}
	fmt.Fprintln(tw, "\t\t\t\t\t\t\t")
	fmt.Fprintln(tw, "set\trows\tMAPE\tmax error\tSpearman\t\t\t")
	for _, s := range rep.Sets {
		fmt.Fprintf(tw, "%s\t%d\t%.1f%%\t%.1f%%\t%.3f\t\t\t\n", s.Set, s.Rows, 100*s.MAPE, 100*s.MaxError, s.Spearman)
	}
	return tw.Flush()
}

func g(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

// human renders a value of the report's metric with its unit.
func human(metric string, v float64) string {
	switch metric {
	case "time_s":
		return units.Seconds(v).String()
	case "busbw_byte_per_s":
		return units.BytesPerSecond(v).String()
	}
	return g(v)
}
