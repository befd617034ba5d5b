// Package atomicfile writes output files so that a failure never leaves a partial file: the
// content goes to a temporary file in the destination directory, which is renamed into place only
// when complete.
package atomicfile
