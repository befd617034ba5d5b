// Package arch holds no code: its test enforces the dependency direction of DESIGN.md
// (scaling, network ← partition ← profile ← estimator ← plots, cmd).
package arch
