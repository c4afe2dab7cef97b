// Package config reads kube-scheduler's configuration file format,
// KubeSchedulerConfiguration (kubescheduler.config.k8s.io/v1, the one
// version kube-scheduler v1.37 reads), into the effective configuration of
// a yardmaster process.
//
// The model has three layers, applied in this order by Decode and Load:
//
//  1. Decode: the YAML (or JSON) is parsed into a node tree and walked
//     against the versioned file types of this package (v1.go). The walk is
//     strict — an unknown or repeated field, a value of the wrong type, a
//     number out of range is an error — and it remembers the line and
//     column of every field, so that every later error can name both the
//     field path and where it is in the file.
//  2. Default: every field left out takes kube-scheduler's default (see
//     docs/configuration.md for the table), and each profile's plugin sets
//     are merged with the default plugin set and expanded from multiPoint
//     to the individual extension points exactly as kube-scheduler does
//     (plugins.go).
//  3. Validate: the defaulted values are checked as kube-scheduler checks
//     them, plus what yardmaster needs that kube-scheduler does not
//     (fields it does not implement, plugins it does not have).
//
// All problems of a file are reported together, in file order, as an
// *Error. Nothing is started on a bad file.
//
// Plugins are looked up in a framework.Registry: a plugin whose
// Registration has NewArgs gets its pluginConfig args strictly decoded into
// the type NewArgs returns (whose values are the defaults: a field the file
// writes replaces its default) and checked with ValidateArgs; an args type
// may also have a SetDefaults method for defaults that depend on what the
// file wrote. Adding a Registration is all it takes for a new plugin's
// name, extension points and arguments to be accepted.
package config
