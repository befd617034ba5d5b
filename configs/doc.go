// Package configs holds ddlest's presets as data files embedded in the binary. Every number in
// them carries its source in the entry's "sources" map: [P] a paper's table or equation, [D]
// derived (the derivation is written out), [X] an assumption or outside datasheet.
//
// Files:
//
//	gpus.json  the roofline GPU table (profile/roofline decodes it strictly)
package configs
