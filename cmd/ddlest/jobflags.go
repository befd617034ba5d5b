package main

import (
	"encoding"
	"fmt"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/job"
	"github.com/ddlest/ddlest/network/all"
	"github.com/ddlest/ddlest/profile/roofline"
)

// jobFlags are a workload command's flags, generated from the job's config structs: one flag per
// settable key of the model, the execution and the cluster (named by its `flag` tag, else the
// key with dashes), --cluster and --model for the presets, --set for any key, and the network
// flags. A flag only applies when given, in the order: cluster (or the GPU's cluster), model,
// the generated flags, --set, the network flags.
type jobFlags struct {
	workload, model string
	keys            []keyFlag
	byPath          map[string]string // key path → flag name, for error messages
	sets            []string
	network         netFlags
	fs              *pflag.FlagSet
	// shorthands are a command's own flags that set several keys at once, applied after the
	// generated flags and before --set.
	shorthands []func(j *job.Job) error
	// netEntry, when set, is the network of a compare entry (netFlags.applyEntry), in place of
	// --net and --net-preset.
	netEntry string
	// hfConfig is --hf-config (megatron workloads): a Hugging Face config.json as the model.
	hfConfig string
	// described: --model's help lists the workload's presets (describe).
	described bool
}

// keyFlag is one generated flag.
type keyFlag struct {
	name, path string
	value      *textValue
	excludes   []string // the paths of its alternatives (steps or tokens): one per command line
}

// textValue keeps a flag's text; the job parses it with the key's type.
type textValue struct {
	text, typ string
	set       bool
}

func (v *textValue) String() string { return v.text }
func (v *textValue) Type() string   { return v.typ }
func (v *textValue) Set(s string) error {
	v.text, v.set = s, true
	return nil
}

// skipped are keys with their own flags (the presets, the network's).
// cluster.auto_layout is a property of cluster presets (set it with --set or --layout).
var skipped = map[string]bool{"cluster.preset": true, "model.preset": true, "cluster.network.model": true, "cluster.network.preset": true,
	"cluster.auto_layout": true}

// addJobFlags registers the flags of workload, showing the defaults of model (a preset, or ""),
// when the command runs or shows its help (deferFlags): generating them for every command at
// start-up would cost more than the estimate.
func addJobFlags(cmd *cobra.Command, workload, model string) *jobFlags {
	f := &jobFlags{workload: workload, model: model, fs: cmd.Flags()}
	var once sync.Once
	deferFlags(cmd, func(named map[string]bool) {
		once.Do(func() { f.register(cmd, named) })
		if named == nil {
			f.describe()
		}
	})
	return f
}

// modelUsage is --model's help; describe adds the workload's presets, which only help and
// completion show (listing them reads every model preset).
const modelUsage = "model preset `NAME` (ddlest models lists them with sources)"

// describe completes the help text of the flags for help and shell completion: the workload's
// presets, and the default cluster's values as the cluster flags' defaults (register generates
// the flags on a bare cluster: a command sets its cluster before any flag applies).
func (f *jobFlags) describe() {
	if f.described {
		return
	}
	f.described = true
	f.fs.Lookup("model").Usage = modelUsage + ": " + strings.Join(job.ModelNames(f.workload), ", ")
	for _, k := range jobKeys(f.mustTemplate(job.DefaultCluster)) {
		i := slices.IndexFunc(f.keys, func(kf keyFlag) bool { return kf.path == k.path })
		if i < 0 {
			continue // not registered: the command line named other flags (setupFlags)
		}
		def := formatLeaf(k.leaf.Value)
		f.fs.Lookup(f.keys[i].name).DefValue = def
		if v := f.keys[i].value; !v.set {
			v.text = def
		}
	}
}

// register generates the flags: those named (a command line's: namedFlags), or every one for
// nil. A flag the command line does not name would only be parsed from it, and ≈ 80 of them
// cost ≈ 0.1 ms of a 5 ms process (pflag's maps, their help text from the struct tags); every
// key still gets its flag's name for error messages (byPath).
func (f *jobFlags) register(cmd *cobra.Command, named map[string]bool) {
	workload, model := f.workload, f.model
	tmpl := f.mustTemplate("")
	fs := cmd.Flags()
	fs.String("cluster", job.DefaultCluster, "cluster preset `NAME` (ddlest clusters lists them): GPU, nodes and network; --gpu alone picks the GPU's own cluster")
	fs.String("model", model, modelUsage)
	help := cmd.HelpFunc() // the root's: cobra's
	cmd.SetHelpFunc(func(c *cobra.Command, args []string) {
		f.describe()
		help(c, args)
	})
	keys := jobKeys(tmpl)
	seen := make(map[string]bool, len(keys)+2)
	seen["cluster"], seen["model"] = true, true
	f.keys = slices.Grow(f.keys, len(keys))
	f.byPath = make(map[string]string, len(keys))
	for _, k := range keys {
		l, path, name := k.leaf, k.path, k.flag
		if seen[name] {
			panic(fmt.Sprintf("ddlest: flag --%s generated twice (%s)", name, path))
		}
		seen[name] = true
		f.byPath[path] = "--" + name
		if named != nil && !named[name] {
			continue
		}
		v := &textValue{typ: typeName(l.Value)} // its default's text only help shows (describe)
		fl := fs.VarPF(v, name, "", l.Field.Tag.Get("help"))
		if l.Value.Kind() == reflect.Bool {
			fl.NoOptDefVal = "true"
		}
		kf := keyFlag{name: name, path: path, value: v}
		if ex := l.Field.Tag.Get("excludes"); ex != "" {
			for _, e := range strings.Split(ex, ",") {
				kf.excludes = append(kf.excludes, strings.TrimSuffix(path, lastKey(path))+e)
			}
		}
		f.keys = append(f.keys, kf)
	}
	if workload == "megatron" {
		fs.StringVar(&f.hfConfig, "hf-config", "", "model from a Hugging Face `config.json` ("+job.HFArchitectures()+"), in place of --model; later flags change it")
	}
	fs.StringArrayVar(&f.sets, "set", nil, "set any key of the job, key=value (repeatable), e.g. execution.tp=8 or tp=8; keys as in --format json")
	addNetFlags(cmd, &f.network, "")
	_ = cmd.RegisterFlagCompletionFunc("cluster", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		r, err := job.Clusters()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		return r.Names(), cobra.ShellCompDirectiveNoFileComp
	})
	_ = cmd.RegisterFlagCompletionFunc("gpu", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		t, err := roofline.GPUs()
		if err != nil {
			return nil, cobra.ShellCompDirectiveError
		}
		return t.Names(), cobra.ShellCompDirectiveNoFileComp
	})
	if fs.Lookup("profile") != nil {
		_ = cmd.RegisterFlagCompletionFunc("profile", completeProfiles)
	}
	_ = cmd.RegisterFlagCompletionFunc("model", func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
		return job.ModelNames(workload), cobra.ShellCompDirectiveNoFileComp
	})
}

// deferred holds the flag set-ups of commands that have not run yet.
var deferred sync.Map // *cobra.Command → func(named map[string]bool)

// deferFlags registers a command's flags when setupFlags reaches it: setup(named) registers the
// flags a command line names (once), or for nil every flag, with its complete help text (help
// and completion).
func deferFlags(cmd *cobra.Command, setup func(named map[string]bool)) { deferred.Store(cmd, setup) }

// setupFlags registers the deferred flags of the command args name (every flag of every command
// for help and shell completion, which read them all) before cobra parses them.
func setupFlags(root *cobra.Command, args []string) {
	all := len(args) == 0 || args[0] == "help" || args[0] == "completion" || strings.HasPrefix(args[0], "__complete")
	if !all {
		if c, _, err := root.Find(args); err == nil {
			if f, ok := deferred.Load(c); ok {
				f.(func(map[string]bool))(namedFlags(args))
			}
		}
		return
	}
	walkCommands(root, func(c *cobra.Command) {
		if f, ok := deferred.Load(c); ok {
			f.(func(map[string]bool))(nil)
		}
	})
}

// namedFlags is the long flags a command line names (--name, --name=value; up to --), or nil
// when it asks for help (-h, --help), which shows every flag. A value that looks like a flag
// only registers one more.
func namedFlags(args []string) map[string]bool {
	named := make(map[string]bool, len(args))
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "--help" || strings.HasPrefix(a, "--help=") {
			return nil
		}
		if name, ok := strings.CutPrefix(a, "--"); ok {
			name, _, _ = strings.Cut(name, "=")
			named[name] = true
		}
	}
	return named
}

// forgetFlags drops the set-ups of a command tree that has run.
func forgetFlags(root *cobra.Command) {
	walkCommands(root, func(c *cobra.Command) { deferred.Delete(c) })
}

func walkCommands(c *cobra.Command, fn func(*cobra.Command)) {
	fn(c)
	for _, s := range c.Commands() {
		walkCommands(s, fn)
	}
}

func lastKey(path string) string { return path[strings.LastIndexByte(path, '.')+1:] }

// jobKey is a settable key of a job and the flag generated for it.
type jobKey struct {
	leaf       params.Leaf
	path, flag string
}

// jobKeys lists a job's keys that have generated flags: the flag tag, else the last key with
// dashes (the preset keys and the network's parameters have their own flags).
func jobKeys(j *job.Job) []jobKey {
	out := make([]jobKey, 0, 128) // ≈ 80 for megatron
	for _, sec := range []struct {
		prefix string
		cfg    any
	}{{"model", j.Model}, {"execution", j.Execution}, {"cluster", &j.Cluster}} {
		for _, l := range params.Leaves(sec.cfg) {
			path := sec.prefix + "." + l.Path
			if skipped[path] || strings.HasPrefix(path, "cluster.network.") {
				continue
			}
			name := l.Field.Tag.Get("flag")
			if name == "" {
				name = strings.ReplaceAll(lastKey(l.Path), "_", "-")
			}
			out = append(out, jobKey{leaf: l, path: path, flag: name})
		}
	}
	return out
}

// keyNames rewrites the flag names in an error from running a job file into the file's keys
// (the library names a few values by their flags: "--tp 5 does not divide the 96 heads").
func keyNames(j *job.Job, err error) error { return newKeyNamer(j).rewrite(err) }

// keyNamer holds the rewrite of every flag of a job's shape into its key, compiled once (a sweep
// rewrites the reason of every point that did not run).
type keyNamer []struct {
	flag string // "--tp": a message without it needs no regular expression
	re   *regexp.Regexp
	path string
}

func newKeyNamer(j *job.Job) keyNamer {
	var k keyNamer
	for _, key := range jobKeys(j) {
		k = append(k, struct {
			flag string
			re   *regexp.Regexp
			path string
		}{"--" + key.flag, regexp.MustCompile(`--` + regexp.QuoteMeta(key.flag) + `([^\w-]|$)`), key.path + "$1"})
	}
	return k
}

func (k keyNamer) rewrite(err error) error {
	orig := err.Error()
	if msg := k.text(orig); msg != orig {
		return &translated{msg: msg, err: err}
	}
	return err
}

// text is rewrite of a message.
func (k keyNamer) text(msg string) string {
	if !strings.Contains(msg, "--") {
		return msg
	}
	for _, r := range k {
		if strings.Contains(msg, r.flag) {
			msg = r.re.ReplaceAllString(msg, r.path)
		}
	}
	return msg
}

func formatLeaf(v reflect.Value) string {
	if v.Kind() == reflect.Float64 {
		return ftoa(v.Float())
	}
	if m, ok := v.Interface().(encoding.TextMarshaler); ok {
		if b, err := m.MarshalText(); err == nil {
			return string(b) // the text the flag takes back (a list's 512-256-128)
		}
	}
	return fmt.Sprint(v.Interface())
}

func typeName(v reflect.Value) string {
	switch {
	case v.Type() == reflect.TypeFor[units.Bytes]():
		return "bytes"
	case v.Kind() == reflect.Slice:
		return "list"
	case reflect.PointerTo(v.Type()).Implements(reflect.TypeFor[encoding.TextUnmarshaler]()):
		return "string" // a name (an enum's), whatever its representation
	}
	switch v.Kind() {
	case reflect.Float64:
		return "number"
	case reflect.Int:
		return "int"
	case reflect.Bool:
		return "bool"
	}
	return "string"
}

// template is the command's job before any flag: the workload's defaults on a cluster preset
// (job.NewOn: "" a bare one) with the command's model preset.
func (f *jobFlags) template(cluster string) (*job.Job, error) {
	j, err := job.NewOn(f.workload, cluster)
	if err != nil {
		return nil, err
	}
	if f.model != "" {
		if err := j.UseModel(f.model); err != nil {
			return nil, err
		}
	}
	return j, nil
}

// mustTemplate is template for the flags' help: the built-in workloads, models and clusters
// are tested, so an error is a bug.
func (f *jobFlags) mustTemplate(cluster string) *job.Job {
	j, err := f.template(cluster)
	if err != nil {
		panic(fmt.Sprintf("ddlest: built-in %s job: %v", f.workload, err))
	}
	return j
}

// build applies the flags that were given to the template, in order, and validates the cluster.
// Errors name flags, not keys.
func (f *jobFlags) build() (*job.Job, error) {
	j, err := f.template("") // apply sets the cluster first
	if err != nil {
		return nil, err
	}
	if err := f.apply(j); err != nil {
		return nil, f.flagNames(err)
	}
	if err := j.Validate(); err != nil {
		return nil, f.flagNames(err)
	}
	return j, nil
}

func (f *jobFlags) apply(j *job.Job) error {
	name := pickCluster(f.fs, f.fs.Lookup("cluster").Value.String())
	if name == "" {
		name = job.DefaultCluster // --cluster ""
	}
	if err := j.Set("cluster", name); err != nil {
		return errs.Usage("--cluster: %v", err)
	}
	if f.fs.Changed("model") {
		if err := j.Set("model", f.fs.Lookup("model").Value.String()); err != nil {
			return errs.Usage("--model: %v", err)
		}
	}
	if f.hfConfig != "" {
		if f.fs.Changed("model") {
			return errs.Usage("--hf-config and --model both name the model: give one of them")
		}
		m, err := readHF(f.hfConfig)
		if err != nil {
			return err
		}
		if err := j.UseHF(m); err != nil {
			return errs.Usage("--hf-config %s: %v", f.hfConfig, err)
		}
	}
	for _, k := range f.keys {
		if k.value.set {
			for _, e := range k.excludes {
				if slices.ContainsFunc(f.keys, func(o keyFlag) bool { return o.path == e && o.value.set }) {
					return errs.Usage("--%s and %s exclude each other: give one of them", k.name, f.byPath[e])
				}
			}
			if err := j.Set(k.path, k.value.text); err != nil {
				return err
			}
		}
	}
	for _, h := range f.shorthands {
		if err := h(j); err != nil {
			return err
		}
	}
	for _, s := range f.sets {
		k, v, ok := strings.Cut(s, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return errs.Usage("--set %q is not key=value", s)
		}
		if err := j.Set(strings.TrimSpace(k), v); err != nil {
			return errs.Usage("--set: %v", err)
		}
	}
	if f.netEntry != "" {
		return f.network.applyEntry(&j.Cluster.Network, f.netEntry)
	}
	return f.network.applyTo(&j.Cluster.Network)
}

// flagNames rewrites the job's key paths in an error into this command's flag names.
func (f *jobFlags) flagNames(err error) error {
	msg := err.Error()
	for path, flag := range f.byPath {
		if strings.Contains(msg, path) { // most messages name no key: compile no expression
			msg = regexp.MustCompile(`\b`+regexp.QuoteMeta(path)+`\b`).ReplaceAllString(msg, flag)
		}
	}
	if msg == err.Error() {
		return err
	}
	return &translated{msg: msg, err: err}
}

// translated keeps the error's kind (exit code) under a new message.
type translated struct {
	msg string
	err error
}

func (t *translated) Error() string { return t.msg }
func (t *translated) Unwrap() error { return t.err }

// applyTo sets the network flags on a cluster's network: --net, --net-preset, --net-config,
// --net-param, then the shorthands (which win).
func (f *netFlags) applyTo(n *job.Network) error {
	if f.flags.Changed("net-preset") {
		if err := n.SetPreset(f.preset); err != nil {
			return errs.Usage("--net-preset: %v", err)
		}
		if f.flags.Changed("net") && f.net != n.Model {
			return errs.Usage("--net-preset %s configures network %s, not --net %s; give one of them, or matching ones", f.preset, n.Model, f.net)
		}
	} else if f.flags.Changed("net") {
		n.SetModel(f.net)
	}
	if err := n.Resolve(); err != nil {
		return errs.Usage("--net: %v", err)
	}
	return f.applyParams(n, nil)
}

// applyEntry sets the network of a compare entry, NAME[:KEY=VALUE…] with NAME a network model
// (its defaults) or a network preset (ddlest nets); the shared network flags (--net-config,
// --net-param, --strategy, …) apply to every entry, then the entry's own KEY=VALUE pairs.
func (f *netFlags) applyEntry(n *job.Network, entry string) error {
	if f.flags.Changed("net") || f.flags.Changed("net-preset") {
		return errs.Usage("compare: --nets names each entry's network; leave out --net and --net-preset")
	}
	name, rest, _ := strings.Cut(entry, ":")
	var pairs []string
	if rest != "" {
		pairs = strings.Split(rest, ":")
	}
	if _, err := all.Registry().Lookup(name); err == nil {
		n.SetModel(name)
		if err := n.Resolve(); err != nil {
			return errs.Usage("--nets %s: %v", entry, err)
		}
	} else if presets, err := all.Presets(); err != nil {
		return err
	} else if _, err := presets.Lookup(name); err == nil {
		if err := n.SetPreset(name); err != nil {
			return errs.Usage("--nets %s: %v", entry, err)
		}
	} else {
		return errs.Usage("--nets %q is neither a network model (%s) nor a network preset (%s); an entry is NAME[:KEY=VALUE…]",
			name, strings.Join(all.Registry().Names(), ", "), strings.Join(presets.Names(), ", "))
	}
	if err := f.applyParams(n, pairs); err != nil {
		return errs.Usage("--nets %s: %v", entry, err)
	}
	return nil
}

// applyParams sets the network parameter flags (--net-config, then --net-param and the
// shorthands), then extra KEY=VALUE pairs, on a resolved network.
func (f *netFlags) applyParams(n *job.Network, extra []string) error {
	if f.config != "" {
		r, err := os.Open(f.config)
		if err != nil {
			return errs.Usage("--net-config: %v", err)
		}
		defer r.Close()
		if err := params.DecodeJSON(n.Params, r, f.config); err != nil {
			return err
		}
	}
	c, err := f.choice()
	if err != nil {
		return err
	}
	if err := params.SetPairs(n.Params, c.Params); err != nil {
		return errs.Usage("--net-param for network %s: %v", n.Model, err)
	}
	if err := params.SetPairs(n.Params, extra); err != nil {
		return errs.Usage("network %s: %v", n.Model, err)
	}
	return nil
}

// readHF reads and imports a Hugging Face config.json (a file that cannot be read is an I/O
// error, exit 1; one that is not a config ddlest reads, a usage error).
func readHF(path string) (job.HFModel, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return job.HFModel{}, fmt.Errorf("--hf-config: %w", err)
	}
	return job.ImportHF(data, path)
}
