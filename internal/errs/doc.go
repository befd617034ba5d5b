// Package errs classifies the errors ddlest reports so that the command line can map them to exit
// codes: 2 for bad usage or input (flags, configs, files), 3 for a configuration that is valid but
// cannot run (it does not fit the GPU or the network), 1 for anything else.
//
// Library packages return these wrapped errors instead of exiting or panicking; only cmd/ddlest
// turns them into exit codes.
package errs
