// Package lines holds what differs between the Volcano releases ("lines")
// this project's managers are built for; see lines/README.md. Its
// subpackages controllers and admissions have one file per line, chosen by
// build tag; lines/<line>.mod and .sum are a non-default line's module file.
package lines
