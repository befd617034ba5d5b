// Package dtype names the numeric formats tensors and collectives carry, with their sizes.
package dtype
