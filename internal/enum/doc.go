// Package enum parses the names of the small integer enums ddlest uses for options (scaling law,
// recomputation policy, precision, collective op, dtype …): the enum's values are the indices of
// its name list.
package enum
