// Package atomicfile writes output files so that a failure never leaves a partial file: the
// content goes to a temporary file in the destination directory, which is renamed into place only
// when complete. Every temporary file of the process (outputs in progress, spill files) is
// tracked: the command's signal handler, installed before the first of them (BeforeFirstTemp),
// removes them all (RemoveTemporaries), and a temporary
// left by a process that was killed outright is removed by the next one that writes beside it
// (its name carries its PID). An output may not be one of the command's inputs (NotAnInput).
package atomicfile
