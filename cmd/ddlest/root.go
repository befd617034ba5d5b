package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"
	"sync"

	"github.com/spf13/cobra"

	"github.com/ddlest/ddlest/internal/errs"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

// subcommands are the constructors of ddlest's commands, by name: a process builds only the
// one its command line names (each builds flag sets, help text and completions; all of them
// cost more start-up than an estimate), and all of them for help, completion and a name that
// is none of them (whose error lists and suggests the valid ones).
var subcommands = []struct {
	name  string
	build func() *cobra.Command
}{
	{"megatron", newMegatronCommand}, {"resnet", newResNetCommand}, {"cosmoflow", newCosmoFlowCommand},
	{"dlrm", newDLRMCommand}, {"gpt3", newGPT3Command}, {"moe", newMoECommand}, {"dp", newDPCommand},
	{"trace", newTraceCommand}, {"collective", newCollectiveCommand}, {"cost", newCostCommand},
	{"gpus", newGPUsCommand}, {"nets", newNetsCommand}, {"run", newRunCommand}, {"clusters", newClustersCommand},
	{"models", newModelsCommand}, {"software", newSoftwareCommand}, {"search", newSearchCommand},
	{"sweep", newSweepCommand}, {"compare", newCompareCommand}, {"validate", newValidateCommand},
	{"figures", newFiguresCommand}, {"version", newVersionCommand},
}

// named is which subcommands a command line needs: all of them for help (no arguments, -h or
// --help anywhere: `ddlest --help megatron` shows the root's help, which lists them) and when its
// first word that is not a flag names no command (help, completion, a misspelt command: their
// messages list the commands); else the one that word names, or none for the root's own flags
// alone (--version).
func named(args []string) (name string, all bool) {
	for _, a := range args {
		if a == "-h" || a == "--help" || strings.HasPrefix(a, "--help=") {
			return "", true
		}
	}
	for _, a := range args {
		if strings.HasPrefix(a, "-") {
			continue
		}
		for _, c := range subcommands {
			if c.name == a {
				return a, false
			}
		}
		return "", true
	}
	return "", len(args) == 0
}

// newRootCommand builds the command tree a command line needs (named): every command, the one
// it names, or none.
func newRootCommand(stdout, stderr io.Writer, args []string) *cobra.Command {
	root := &cobra.Command{
		Use:   "ddlest",
		Short: "Estimate deep-learning training time on a cluster and network, and where the time goes",
		Long: `ddlest estimates the iteration time and time-to-accuracy of distributed training jobs:
a scaling law or an explicit configuration gives the model, a partitioner splits it onto GPUs
(tensor, sequence, pipeline and data parallelism), a roofline profile prices the compute and a
network model prices the collectives.`,
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(flagError)
	only, all := named(args)
	for _, c := range subcommands {
		if all || c.name == only {
			root.AddCommand(c.build())
		}
	}
	root.InitDefaultCompletionCmd()
	for _, c := range root.Commands() {
		if c.Name() == "completion" { // cobra's prints its help and exits 0 on an unknown shell
			c.Args, c.RunE = cobra.ArbitraryArgs, needs("shell")
		}
	}
	return root
}

// parseFloatErr is pflag's text for a number or boolean it cannot parse (compiled when a flag
// fails, not at every start-up).
var parseFloatErr = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`strconv\.Parse(Float|Int|Bool): parsing "[^"]*": (invalid syntax|value out of range)`)
})

// flagError turns pflag's parse errors into one-line usage errors that name the bad value and
// what would be valid.
func flagError(_ *cobra.Command, err error) error {
	msg := err.Error()
	re := parseFloatErr()
	switch m := re.FindStringSubmatch(msg); {
	case m == nil:
	case m[1] == "Float":
		msg = re.ReplaceAllString(msg, "want a number")
	case m[1] == "Int":
		msg = re.ReplaceAllString(msg, "want an integer")
	default:
		msg = re.ReplaceAllString(msg, "want true or false")
	}
	return errs.Usage("%s", msg)
}

// format is the --format flag: table (for people), json (for scripts, stable keys), csv.
type format string

const (
	formatTable format = "table"
	formatJSON  format = "json"
	formatCSV   format = "csv"
)

var formats = []format{formatTable, formatJSON, formatCSV}

func (f *format) String() string { return string(*f) }
func (f *format) Type() string   { return "format" }
func (f *format) Set(s string) error {
	for _, v := range formats {
		if s == string(v) {
			*f = v
			return nil
		}
	}
	return fmt.Errorf("want one of %s", joinNames(formatNames()))
}

func formatNames() []string {
	ns := make([]string, len(formats))
	for i, v := range formats {
		ns[i] = string(v)
	}
	return ns
}

// addFormatFlag adds --format (default table) and its shell completion to cmd.
func addFormatFlag(cmd *cobra.Command, f *format) {
	*f = formatTable
	cmd.Flags().Var(f, "format", "output format: "+joinNames(formatNames()))
	_ = cmd.RegisterFlagCompletionFunc("format", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return formatNames(), cobra.ShellCompDirectiveNoFileComp
	})
}

// noArgs rejects positional arguments with a usage error.
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return errs.Usage("%s takes no arguments, got %q; options are flags (see --help)", cmd.CommandPath(), strings.Join(args, " "))
	}
	return nil
}

// positional accepts between lo and hi arguments (hi < 0: any number from lo); otherwise a
// one-line usage error that names what the command takes (the words after its name in Use).
func positional(lo, hi int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) >= lo && (hi < 0 || len(args) <= hi) {
			return nil
		}
		_, want, _ := strings.Cut(cmd.Use, " ")
		return errs.Usage("%s takes %s, got %d argument(s)%s", cmd.CommandPath(), strings.TrimSpace(want), len(args), quoted(args))
	}
}

func quoted(args []string) string {
	if len(args) == 0 {
		return ""
	}
	return fmt.Sprintf(": %q", strings.Join(args, " "))
}

func usagef(format string, a ...any) error { return errs.Usage(format, a...) }

func joinNames(ns []string) string { return strings.Join(ns, ", ") }

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version (as --version)",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(cmd.OutOrStdout(), "ddlest version %s\n", version)
			return err
		},
	}
}
