package job

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/ddlest/ddlest/configs"
	"github.com/ddlest/ddlest/internal/dtype"
	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
	"github.com/ddlest/ddlest/internal/units"
	"github.com/ddlest/ddlest/network"
)

// measuredFile is configs/measured.json: public measured runs, each with its exact source, the
// hardware as posted and the cluster that describes it.
type measuredFile struct {
	Description string               `json:"description"`
	Collectives []measuredCollective `json:"collectives"`
	Trainings   []measuredTraining   `json:"trainings"`
}

// measuredTraining is a series of measured training runs on one cluster with one software: a
// job and, per run, the job keys that differ from it.
type measuredTraining struct {
	Set      string            `json:"set"`
	ID       string            `json:"id"`
	Source   string            `json:"source"`
	Hardware string            `json:"hardware"`
	Job      Job               `json:"job"`
	Sources  map[string]string `json:"sources"`
	// Metric is iteration_s: seconds per training iteration as the run logged them.
	Metric string        `json:"metric"`
	Runs   []measuredRun `json:"runs"`
}

// measuredRun is one logged run.
type measuredRun struct {
	// Case is the run as its source labels it.
	Case string `json:"case"`
	// Model is a model preset (configs/models.json) whose architecture replaces the series'
	// model, so a shape is written once; the series' execution stays (Set changes it).
	Model string `json:"model"`
	// Set are job keys (as --set takes them) that differ from the series' job.
	Set map[string]string `json:"set"`
	// Value is the measured seconds per iteration.
	Value float64 `json:"value"`
	// TFLOPs is the per-GPU throughput the same log line printed; TestMeasuredTraining checks
	// that the configuration written here is the one that was measured.
	TFLOPs float64 `json:"tflops"`
}

// measuredCollective is one nccl-tests log (or a statement of one): points of one op on one
// communicator of GPUs ranks.
type measuredCollective struct {
	Set      string            `json:"set"`
	ID       string            `json:"id"`
	Source   string            `json:"source"`
	Hardware string            `json:"hardware"`
	Cluster  Cluster           `json:"cluster"`
	Sources  map[string]string `json:"sources"`
	GPUs     int               `json:"gpus"`
	Op       string            `json:"op"`
	DType    string            `json:"dtype"`
	// Metric is time_us (nccl-tests' out-of-place time) or busbw_gbyte_per_s.
	Metric string          `json:"metric"`
	Points []measuredPoint `json:"points"`
}

type measuredPoint struct {
	Bytes float64 `json:"bytes"`
	Value float64 `json:"value"`
}

const measuredName = "configs/measured.json"

// trainingRow is the Algorithm of a training run's row: the whole iteration was priced.
const trainingRow = "iteration"

// MeasuredRow compares one measured value with ddlest's estimate; Error is
// (estimate − measured) / measured. Values are SI: seconds for time_s, B/s for busbw_byte_per_s.
type MeasuredRow struct {
	Set      string  `json:"set"`
	ID       string  `json:"id"`
	Source   string  `json:"source"`
	Metric   string  `json:"metric"`
	Case     string  `json:"case"`
	Measured float64 `json:"measured"`
	Estimate float64 `json:"estimate"`
	Error    float64 `json:"error"`
	// Algorithm is what ddlest priced (NCCL's algorithm and protocol).
	Algorithm string `json:"algorithm"`
}

// MeasuredSet summarises a set's rows: mean absolute percentage error, the largest absolute
// error, and Spearman's rank correlation of estimates with measurements (rows of one metric).
type MeasuredSet struct {
	Set      string  `json:"set"`
	Rows     int     `json:"rows"`
	MAPE     float64 `json:"mape"`
	MaxError float64 `json:"max_abs_error"`
	Spearman float64 `json:"spearman"`
}

// MeasuredReport is ddlest validate --measured.
type MeasuredReport struct {
	Rows []MeasuredRow `json:"rows"`
	Sets []MeasuredSet `json:"sets"`
}

// ValidateMeasured prices every measured run of configs/measured.json on its cluster.
func ValidateMeasured() (MeasuredReport, error) {
	var f measuredFile
	if err := params.Decode(configs.Measured, measuredName, &f); err != nil {
		return MeasuredReport{}, err
	}
	var rep MeasuredReport
	for _, m := range f.Collectives {
		rows, err := m.compare()
		if err != nil {
			return MeasuredReport{}, fmt.Errorf("%s: %s: %w", measuredName, m.ID, err)
		}
		rep.Rows = append(rep.Rows, rows...)
	}
	for _, m := range f.Trainings {
		rows, err := m.compare()
		if err != nil {
			return MeasuredReport{}, fmt.Errorf("%s: %s: %w", measuredName, m.ID, err)
		}
		rep.Rows = append(rep.Rows, rows...)
	}
	rep.Sets = summarise(rep.Rows)
	return rep, nil
}

// job is the series' job with the run's model preset and then its keys set (in key order).
func (m measuredTraining) job(r measuredRun) (*Job, error) {
	j := m.Job.Clone()
	if r.Model != "" {
		e := j.Execution
		if err := j.UseModel(r.Model); err != nil {
			return nil, err
		}
		j.Execution = e // the preset's shape only: its own training run is not this row's
	}
	keys := make([]string, 0, len(r.Set))
	for k := range r.Set {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if err := j.Set(k, r.Set[k]); err != nil {
			return nil, err
		}
	}
	return j, nil
}

func (m measuredTraining) compare() ([]MeasuredRow, error) {
	if m.Metric != "iteration_s" {
		return nil, errs.Usage("metric %q is not valid; valid: iteration_s", m.Metric)
	}
	if m.Job.Workload != "megatron" {
		return nil, errs.Usage("workload %q: measured training runs are megatron jobs", m.Job.Workload)
	}
	out := make([]MeasuredRow, len(m.Runs))
	for i, r := range m.Runs {
		if !(r.Value > 0) {
			return nil, errs.Usage("run %q: value %g must be > 0", r.Case, r.Value)
		}
		j, err := m.job(r)
		if err != nil {
			return nil, fmt.Errorf("run %q: %w", r.Case, err)
		}
		rep, err := Run(j)
		if err != nil {
			return nil, fmt.Errorf("run %q: %w", r.Case, err)
		}
		est := float64(rep.Result.Iteration.Total)
		out[i] = MeasuredRow{Set: m.Set, ID: m.ID, Source: m.Source, Metric: "time_s", Case: r.Case,
			Measured: r.Value, Estimate: est, Error: (est - r.Value) / r.Value, Algorithm: trainingRow}
	}
	return out, nil
}

func (m measuredCollective) compare() ([]MeasuredRow, error) {
	op, err := network.ParseOp(m.Op)
	if err != nil {
		return nil, err
	}
	dt, err := dtype.Parse(m.DType)
	if err != nil {
		return nil, err
	}
	if m.Metric != "time_us" && m.Metric != "busbw_gbyte_per_s" {
		return nil, errs.Usage("metric %q is not valid; valid: time_us, busbw_gbyte_per_s", m.Metric)
	}
	if err := m.Cluster.Validate(); err != nil {
		return nil, err
	}
	sizes := make([]units.Bytes, len(m.Points))
	for i, p := range m.Points {
		if !(p.Bytes > 0 && p.Value > 0) {
			return nil, errs.Usage("point %d: bytes %g and value %g must be > 0", i, p.Bytes, p.Value)
		}
		sizes[i] = units.Bytes(p.Bytes)
	}
	cl := m.Cluster
	priced, err := Collectives(CollectiveOptions{Ops: []network.Op{op}, Sizes: sizes, GPUs: []int{m.GPUs}, Cluster: &cl, GPU: cl.GPU, DType: dt})
	if err != nil {
		return nil, err
	}
	out := make([]MeasuredRow, len(priced))
	for i, r := range priced {
		row := MeasuredRow{Set: m.Set, ID: m.ID, Source: m.Source, Case: fmt.Sprintf("%s, %d GPUs, %.0f B", m.Op, m.GPUs, m.Points[i].Bytes), Algorithm: r.Cost.Algorithm}
		if m.Metric == "time_us" {
			row.Metric, row.Measured, row.Estimate = "time_s", m.Points[i].Value*1e-6, float64(r.Cost.Total)
		} else {
			row.Metric, row.Measured, row.Estimate = "busbw_byte_per_s", m.Points[i].Value*1e9, float64(r.BusBW)
		}
		row.Error = (row.Estimate - row.Measured) / row.Measured
		out[i] = row
	}
	return out, nil
}

// summarise gives each set, in order of first appearance, its MAPE, largest error and Spearman
// correlation (over the rows of the set's most common metric; 0 with fewer than 3 rows).
func summarise(rows []MeasuredRow) []MeasuredSet {
	var sets []MeasuredSet
	for _, r := range rows {
		if !slices.ContainsFunc(sets, func(s MeasuredSet) bool { return s.Set == r.Set }) {
			sets = append(sets, MeasuredSet{Set: r.Set})
		}
	}
	for i := range sets {
		s := &sets[i]
		var meas, est []float64
		metric := map[string]int{}
		for _, r := range rows {
			if r.Set != s.Set {
				continue
			}
			s.Rows++
			s.MAPE += math.Abs(r.Error)
			s.MaxError = max(s.MaxError, math.Abs(r.Error))
			metric[r.Metric]++
		}
		s.MAPE /= float64(s.Rows)
		top := ""
		for k, n := range metric {
			if top == "" || n > metric[top] || n == metric[top] && k < top {
				top = k
			}
		}
		for _, r := range rows {
			if r.Set == s.Set && r.Metric == top {
				meas, est = append(meas, r.Measured), append(est, r.Estimate)
			}
		}
		s.Spearman = Spearman(meas, est)
	}
	return sets
}

// Spearman is the rank correlation of x and y (average ranks for ties); 0 when fewer than 3 pairs
// or a constant series.
func Spearman(x, y []float64) float64 {
	if len(x) < 3 || len(x) != len(y) {
		return 0
	}
	rx, ry := ranks(x), ranks(y)
	var mx, my float64
	for i := range rx {
		mx += rx[i]
		my += ry[i]
	}
	mx /= float64(len(rx))
	my /= float64(len(ry))
	var sxy, sxx, syy float64
	for i := range rx {
		dx, dy := rx[i]-mx, ry[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return 0
	}
	return sxy / math.Sqrt(sxx*syy)
}

// ranks are 1-based ranks, ties sharing their average rank.
func ranks(v []float64) []float64 {
	idx := make([]int, len(v))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return v[idx[a]] < v[idx[b]] })
	r := make([]float64, len(v))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && v[idx[j+1]] == v[idx[i]] {
			j++
		}
		for k := i; k <= j; k++ {
			r[idx[k]] = float64(i+j)/2 + 1
		}
		i = j + 1
	}
	return r
}
