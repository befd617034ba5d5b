package traces

import (
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// Every trace of ../shared/traces imports, and its whole-trace GPU breakdown (trace show --steps
// all) agrees with one computed here from the JSON alone (encoding/json, not the importer): the
// device events' categories by the rules written out again below (Kineto's kernel, gpu_memcpy,
// gpu_memset and the 2021 format's Kernel, Memcpy, Memset; a kernel is communication when its
// name starts with nccl after a space, a colon or nothing), timestamps rounded to nanoseconds,
// and for each category the measure of the union of its intervals. Kernel counts must match
// exactly; compute, communication, memory and idle within 0.5% of the GPU window.
func TestSharedTraceBreakdowns(t *testing.T) {
	root := "../../shared/traces"
	if _, err := os.Stat(root); err != nil {
		t.Skipf("shared traces absent: %v", err)
	}
	files, _ := filepath.Glob(filepath.Join(root, "*", "*.json.gz"))
	if len(files) < 11 {
		t.Fatalf("%d shared traces, want the 11 of README.md", len(files))
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			raw, _ := jsonEvents(t, path)
			type iv struct{ s, e int64 }
			by := map[string][]iv{}
			kernels := 0
			for _, e := range raw {
				if e["ph"] != "X" {
					continue
				}
				cat, _ := e["cat"].(string)
				name, _ := e["name"].(string)
				var kind string
				switch cat {
				case "kernel", "Kernel":
					kind = "compute"
					kernels++
					if strings.HasPrefix(name, "nccl") || strings.Contains(name, " nccl") || strings.Contains(name, "::nccl") {
						kind = "comm"
					}
				case "gpu_memcpy", "gpu_memset", "Memcpy", "Memset":
					kind = "memory"
				default:
					continue
				}
				ts, _ := e["ts"].(float64)
				dur, _ := e["dur"].(float64)
				s := int64(math.Round(ts * 1e3))
				by[kind] = append(by[kind], iv{s, s + int64(math.Round(dur*1e3))})
				by["busy"] = append(by["busy"], iv{s, s + int64(math.Round(dur*1e3))})
			}
			measure := func(xs []iv) (total, first, last int64) {
				sort.Slice(xs, func(i, j int) bool { return xs[i].s < xs[j].s })
				first, last = math.MaxInt64, math.MinInt64
				var cs, ce int64
				open := false
				for _, x := range xs {
					first, last = min(first, x.s), max(last, x.e)
					switch {
					case !open:
						cs, ce, open = x.s, x.e, true
					case x.s > ce:
						total += ce - cs
						cs, ce = x.s, x.e
					case x.e > ce:
						ce = x.e
					}
				}
				if open {
					total += ce - cs
				}
				return total, first, last
			}
			busy, first, last := measure(by["busy"])
			compute, _, _ := measure(by["compute"])
			comm, _, _ := measure(by["comm"])
			memory, _, _ := measure(by["memory"])
			window := last - first

			rs := importSummaries(t, path)
			if len(rs) != 1 {
				t.Fatalf("%d ranks, want 1", len(rs))
			}
			r := rs[0]
			var got int64
			for _, k := range r.Kernels {
				got += k.Count
			}
			if got != int64(kernels) {
				t.Errorf("%d kernels, encoding/json counts %d", got, kernels)
			}
			tol := 0.005 * float64(window)
			for _, c := range []struct {
				name      string
				got, want int64
			}{{"window", r.WindowNs, window}, {"compute", r.ComputeNs, compute}, {"communication", r.CommNs, comm},
				{"memory", r.MemoryNs, memory}, {"idle", r.IdleNs, window - busy}} {
				if math.Abs(float64(c.got-c.want)) > tol {
					t.Errorf("%s %d ns, independently %d ns (window %d ns)", c.name, c.got, c.want, window)
				}
			}
		})
	}
}
