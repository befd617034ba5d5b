// Package registry is the explicit, init-free registry used for networks, GPUs and workloads:
// one function lists every entry, keyed by the owning package's Name constant, and an unknown
// name yields a usage error that lists the valid ones.
package registry
