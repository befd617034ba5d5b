package network

import (
	"testing"

	"github.com/ddlest/ddlest/internal/errs"
)

func TestParseOp(t *testing.T) {
	for _, op := range Ops() {
		got, err := ParseOp(op.String())
		if err != nil || got != op {
			t.Errorf("ParseOp(%q) = %v, %v", op, got, err)
		}
	}
	if _, err := ParseOp("allreduce"); errs.ExitCode(err) != errs.ExitUsage {
		t.Errorf("ParseOp(allreduce) err = %v", err)
	}
}

func TestBusFactor(t *testing.T) {
	// nccl-tests PERFORMANCE.md: all-reduce 2(n−1)/n, all-gather (n−1)/n, broadcast 1.
	if f := AllReduce.BusFactor(8); f != 1.75 {
		t.Errorf("all-reduce n=8: %g, want 1.75", f)
	}
	if f := AllGather.BusFactor(4); f != 0.75 {
		t.Errorf("all-gather n=4: %g, want 0.75", f)
	}
	if f := Broadcast.BusFactor(4); f != 1 {
		t.Errorf("broadcast: %g", f)
	}
	if f := AllReduce.BusFactor(1); f != 0 {
		t.Errorf("n=1: %g", f)
	}
}

func TestCheckGroup(t *testing.T) {
	env := Env{GPUs: 16}
	ok := []Collective{
		{Op: AllReduce, Bytes: 1, Group: Group{Size: 16, Stride: 1}},
		{Op: AllReduce, Bytes: 1, Group: Group{Size: 4, Stride: 4}},
		{Op: SendRecv, Bytes: 1, Group: Group{Size: 2, Stride: 8}},
	}
	for _, c := range ok {
		if err := CheckGroup(c, env); err != nil {
			t.Errorf("%+v: %v", c, err)
		}
	}
	bad := []Collective{
		{Op: AllReduce, Bytes: 1, Group: Group{Size: 0, Stride: 1}},
		{Op: AllReduce, Bytes: 1, Group: Group{Size: 2, Stride: 0}},
		{Op: AllReduce, Bytes: 1, Group: Group{Size: 17, Stride: 1}},
		{Op: AllReduce, Bytes: 1, Group: Group{Size: 4, Stride: 8}},
		{Op: AllReduce, Bytes: -1, Group: Group{Size: 2, Stride: 1}},
		{Op: SendRecv, Bytes: 1, Group: Group{Size: 3, Stride: 1}},
	}
	for _, c := range bad {
		if err := CheckGroup(c, env); errs.ExitCode(err) != errs.ExitUsage {
			t.Errorf("%+v: err = %v, want usage error", c, err)
		}
	}
}
