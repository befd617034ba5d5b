package job

import (
	"fmt"
	"testing"

	"github.com/ddlest/ddlest/partition/megatron"
	"github.com/ddlest/ddlest/scaling"
)

// TestResolveAutoCached: a cached auto-mode resolution is the uncached one (scaling.Resolve then
// megatron.Auto on the same inputs), on the first call and on a hit; a request that fails
// fails every time with the same error and is not kept.
func TestResolveAutoCached(t *testing.T) {
	ac := megatron.AutoConfig{MaxGPUs: megatron.DefaultMaxGPUs, ParamsPerGPU: megatron.DefaultParamsPerGPU,
		Capacity: 80e9, Vocab: megatron.DefaultVocab}
	for _, loss := range []float64{1.8, 2.1} {
		req := scaling.DefaultRequest(loss)
		wantTG, err := scaling.Resolve(req)
		if err != nil {
			t.Fatal(err)
		}
		direct := ac
		direct.Target = wantTG
		want, err := megatron.Auto(direct)
		if err != nil {
			t.Fatal(err)
		}
		for call := range 2 {
			tg, auto, err := resolveAuto(req, ac)
			if err != nil {
				t.Fatal(err)
			}
			if tg != wantTG || auto != want {
				t.Errorf("loss %g call %d: got %+v %+v, want %+v %+v", loss, call, tg, auto, wantTG, want)
			}
		}
	}
	bad := ac
	bad.MaxGPUs = 0 // Auto: "--max-gpus 0 must be ≥ 1"
	req := scaling.DefaultRequest(1.8)
	_, _, err1 := resolveAuto(req, bad)
	_, _, err2 := resolveAuto(req, bad)
	if err1 == nil || err2 == nil || err1.Error() != err2.Error() {
		t.Errorf("max GPUs 0: errors %v and %v, want the same error twice", err1, err2)
	}
	if _, kept := autoCache.get(autoKey{req, bad}); kept {
		t.Error("a failed resolution was cached")
	}
}

// TestBoundedCache: a hit returns what was put; the cache holds at most its size (put number
// size+1 clears it first, leaving that one entry); clear empties it.
func TestBoundedCache(t *testing.T) {
	var c boundedCache[int, string]
	const size = 4
	for k := range size {
		c.put(k, fmt.Sprint("v", k), size)
	}
	for k := range size {
		if v, ok := c.get(k); !ok || v != fmt.Sprint("v", k) {
			t.Errorf("get(%d) = %q, %v; want v%d", k, v, ok, k)
		}
	}
	c.put(size, "last", size)
	for k := range size {
		if _, ok := c.get(k); ok {
			t.Errorf("entry %d kept past the size", k)
		}
	}
	if v, ok := c.get(size); !ok || v != "last" {
		t.Errorf("the entry that cleared the cache: %q, %v", v, ok)
	}
	c.clear()
	if _, ok := c.get(size); ok {
		t.Error("clear kept an entry")
	}
}
