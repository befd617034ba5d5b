package job

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/ddlest/ddlest/internal/errs"
	"github.com/ddlest/ddlest/internal/params"
)

// FuzzJobFile: job files (YAML or JSON) through the strict decoder. No panic; a file that does
// not decode is a one-line usage error (exit 2); one that decodes writes JSON that decodes to
// the same JSON again (the round trip `ddlest run` relies on), and it validates or fails as a
// one-line usage error. The seeds run in CI.
func FuzzJobFile(f *testing.F) {
	for _, s := range []string{
		`{"workload": "megatron", "model": {"preset": "gpt3-13b"}, "execution": {"tp": 8, "dp": 8, "steps": 1}, "cluster": {"preset": "dgx-a100"}}`,
		"workload: megatron\nmodel: {preset: deepseek-v3}\nexecution: {pp: 16, ep: 64, dp: 128}\n",
		"workload: dp\nmodel: {arch: vgg19}\nexecution: {gpus: 8, dp_bucket_bytes: 25MB}\ncluster: {preset: dgx-h100}\n",
		`{"workload": "megatron", "execution": {"tp": 1e400}}`,
		"workload: megatron\nexecution: {steps: .inf}\n",
		"\xef\xbb\xbfworkload: dlrm\n",
		`{"workload": "megatron", "model": {"moe": {"experts": 8, "dense_layers": 99}}}`,
		"- a\n- b\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		oneLine := func(err error) {
			if errs.ExitCode(err) != errs.ExitUsage || bytes.ContainsRune([]byte(err.Error()), '\n') {
				t.Fatalf("not a one-line usage error: %v", err)
			}
		}
		var j Job
		if err := params.Decode(data, "fuzz.yaml", &j); err != nil {
			oneLine(err)
			return
		}
		a, err := json.Marshal(&j)
		if err != nil {
			t.Fatalf("a decoded job does not encode: %v", err)
		}
		var k Job
		if err := params.Decode(a, "again.json", &k); err != nil {
			t.Fatalf("its JSON does not decode: %v\n%s", err, a)
		}
		if b, _ := json.Marshal(&k); !bytes.Equal(a, b) {
			t.Fatalf("round trip differs:\n%s\n%s", a, b)
		}
		if err := j.Validate(); err != nil {
			oneLine(err)
		}
	})
}
