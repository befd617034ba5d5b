// Package job runs ddlest's pipeline end to end for one workload — scaling law → partition
// → compute profile → network → estimator — so that commands stay thin and benchmarks measure the
// same path users run.
package job
