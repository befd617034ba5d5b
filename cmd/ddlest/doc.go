// Command ddlest estimates how long a deep-learning training job takes on a cluster and network,
// and where the time goes. See README.md and `ddlest --help`.
package main
