package main

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/repro"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
)

var validateFormats = []string{"table", "json", "csv", "markdown"}

func newValidateCommand() *cobra.Command {
	var (
		measured bool
		seeds    []string
		f        string
	)
	cmd := &cobra.Command{
		Use:   "validate",
		Short: "Check ddlest against the seed papers' published numbers (--seed) or public measured runs (--measured)",
		Long: `validate recomputes every published number of the seed papers that ddlest reproduces (the
reproduction table, internal/repro) and prints, per row, its source (table, figure or section),
what it is, the paper's value, ddlest's, the error, the tolerance and the status: pass, deviation
(a number that cannot be met, with its documented reason; ddlest's value must stay in the
documented range) or fail. --seed picks papers (default all); the exit status is 1 when any row
fails. --format markdown is README's accuracy table.

validate --measured prices every public measured run of configs/measured.json on the cluster
that describes its hardware and prints the measurement, ddlest's estimate and the error
(estimate − measured) / measured, then per set the mean absolute percentage error, the largest
error and Spearman's rank correlation. Each row names its source exactly (thread, post, author,
date); no row has a setting fitted to it.`,
		Example: `  ddlest validate
  ddlest validate --seed ramp --format markdown
  ddlest validate --measured`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !slices.Contains(validateFormats, f) {
				return errs.Usage("--format %q is not valid; valid: %s", f, joinNames(validateFormats))
			}
			if measured {
				if len(seeds) > 0 {
					return errs.Usage("give --seed or --measured, not both")
				}
				rep, err := job.ValidateMeasured()
				if err != nil {
					return err
				}
				return writeMeasured(cmd.OutOrStdout(), rep, f)
			}
			for _, s := range seeds {
				if !slices.Contains(repro.Seeds, s) {
					return errs.Usage("--seed %q is not a seed paper; valid: %s", s, joinNames(repro.Seeds))
				}
			}
			rows, err := repro.Rows(seeds...)
			if err != nil {
				return errs.Usage("--seed: %v", err)
			}
			res := repro.Check(rows)
			if err := writeRepro(cmd.OutOrStdout(), res, f); err != nil {
				return err
			}
			if n := countFails(res); n > 0 {
				return fmt.Errorf("validate: %d of %d rows fail", n, len(res))
			}
			return nil
		},
	}
	cmd.Flags().StringSliceVar(&seeds, "seed", nil, "seed papers to check, comma-separated: "+joinNames(repro.Seeds)+" (default all)")
	cmd.Flags().BoolVar(&measured, "measured", false, "compare with the public measured runs (configs/measured.json) instead")
	cmd.Flags().StringVar(&f, "format", "table", "output format: "+joinNames(validateFormats))
	_ = cmd.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return validateFormats, cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("seed", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return repro.Seeds, cobra.ShellCompDirectiveNoFileComp
	})
	return cmd
}

func countFails(res []repro.Result) int {
	n := 0
	for _, r := range res {
		if r.Status == repro.Fail {
			n++
		}
	}
	return n
}

// tolText is a row's tolerance as a reader reads it: ±25%, ≤ +30%, ≥ −0%.
func tolText(r repro.Row) string {
	switch r.Bound {
	case repro.AtMost:
		return fmt.Sprintf("≤ paper +%.3g%%", 100*r.Tol)
	case repro.AtLeast:
		return fmt.Sprintf("≥ paper −%.3g%%", 100*r.Tol)
	}
	if r.Tol == 0 {
		return "exact"
	}
	return fmt.Sprintf("±%.3g%%", 100*r.Tol)
}

// statusText is a result's status with the deviation's documented range or the failure's cause.
func statusText(r repro.Result) string {
	switch r.Status {
	case repro.Deviation:
		return fmt.Sprintf("deviation (documented %.4g–%.4g %s): %s", r.Known[0], r.Known[1], r.Unit, r.Deviation)
	case repro.Fail:
		return "FAIL: " + r.Why
	}
	return "pass"
}

type reproDoc struct {
	ID        string      `json:"id"`
	Seed      string      `json:"seed"`
	Source    string      `json:"source"`
	What      string      `json:"what"`
	Unit      string      `json:"unit"`
	Paper     float64     `json:"paper"`
	DDLest    *float64    `json:"ddlest"`
	Error     *float64    `json:"error"`
	Tolerance string      `json:"tolerance"`
	Status    string      `json:"status"`
	Reason    string      `json:"reason,omitempty"`
	Known     *[2]float64 `json:"documented_range,omitempty"`
}

// writeRepro renders the reproduction table; a row without a value prints none (never NaN).
func writeRepro(w io.Writer, res []repro.Result, f string) error {
	val := func(r repro.Result) string {
		if r.Err != nil {
			return "—"
		}
		return fmt.Sprintf("%.4g", r.Got)
	}
	errText := func(r repro.Result) string {
		if r.Err != nil || r.Paper == 0 {
			return "—"
		}
		return fmt.Sprintf("%+.1f%%", 100*r.Error)
	}
	switch f {
	case "json":
		docs := make([]reproDoc, len(res))
		for i, r := range res {
			d := reproDoc{ID: r.ID, Seed: r.Seed, Source: r.Cite, What: r.What, Unit: r.Unit, Paper: r.Paper,
				Tolerance: tolText(r.Row), Status: r.Status.String()}
			if r.Err == nil {
				got, e := r.Got, r.Error
				d.DDLest, d.Error = &got, &e
			}
			switch r.Status {
			case repro.Deviation:
				d.Reason, d.Known = r.Deviation, &r.Known
			case repro.Fail:
				d.Reason = r.Why
			}
			docs[i] = d
		}
		return writeJSON(w, docs)
	case "csv":
		cw := csv.NewWriter(w)
		_ = cw.Write([]string{"id", "seed", "source", "what", "unit", "paper", "ddlest", "error", "tolerance", "status", "reason"})
		for _, r := range res {
			got, e := "", ""
			if r.Err == nil {
				got, e = g(r.Got), g(r.Error)
			}
			reason := r.Why
			if r.Status == repro.Deviation {
				reason = r.Deviation
			}
			_ = cw.Write([]string{r.ID, r.Seed, r.Cite, r.What, r.Unit, g(r.Paper), got, e, tolText(r.Row), r.Status.String(), reason})
		}
		cw.Flush()
		return cw.Error()
	case "markdown":
		fmt.Fprintln(w, "| paper | source | what | paper's value | ddlest | error | tolerance | status |")
		fmt.Fprintln(w, "|---|---|---|---:|---:|---:|---|---|")
		for _, r := range res {
			fmt.Fprintf(w, "| %s | %s | %s | %.4g %s | %s | %s | %s | %s |\n", r.Seed, r.Cite, r.What, r.Paper, r.Unit, val(r), errText(r),
				tolText(r.Row), strings.ReplaceAll(statusText(r), "|", "/"))
		}
		return nil
	}
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "id\tsource\tpaper\tddlest\terror\ttolerance\tstatus")
	for _, r := range res {
		fmt.Fprintf(tw, "%s\t%s\t%.4g %s\t%s\t%s\t%s\t%s\n", r.ID, r.Cite, r.Paper, r.Unit, val(r), errText(r), tolText(r.Row), statusText(r))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	count := map[repro.Status]int{}
	for _, r := range res {
		count[r.Status]++
	}
	_, err := fmt.Fprintf(w, "\n%d rows: %d pass, %d documented deviations, %d fail\n", len(res), count[repro.Pass], count[repro.Deviation], count[repro.Fail])
	return err
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
