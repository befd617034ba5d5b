// Package ideal is the zero-cost network: every collective completes instantly. It bounds what
// any interconnect can achieve and isolates compute in an estimate.
package ideal
