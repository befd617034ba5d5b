// Package all lists every network model in one function: the explicit registry (no init side
// effects). Adding a network is one more line here.
package all
